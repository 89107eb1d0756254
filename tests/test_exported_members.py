"""The public surface of each package is deliberate: changing it must change this test."""

from dowse import explore, indexer, retrieval


def test_indexer_exports():
    assert sorted(indexer.__all__) == [
        "Chunk",
        "DowseError",
        "File",
        "Import",
        "IndexConfig",
        "IndexStats",
        "SkippedFile",
        "Store",
        "Symbol",
        "build_index",
        "default_index_dir",
    ]
    for name in indexer.__all__:
        assert getattr(indexer, name) is not None


def test_retrieval_exports():
    assert sorted(retrieval.__all__) == [
        "AskResult",
        "Hit",
        "HybridSearcher",
        "LoopConfig",
        "LoopResult",
        "SearchOptions",
        "ask",
        "run_loop",
    ]
    for name in retrieval.__all__:
        assert getattr(retrieval, name) is not None


def test_explore_exports():
    assert sorted(explore.__all__) == [
        "AskReport",
        "Context",
        "ExploreResult",
        "Finding",
        "Track",
        "TrackFindings",
        "explore",
        "fit_budget",
        "investigate",
        "plan",
        "render_markdown",
        "run_track",
    ]
    for name in explore.__all__:
        assert getattr(explore, name) is not None
