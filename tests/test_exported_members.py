"""The public surface of each package is deliberate: changing it must change this test."""

from dowse import evaluation, explore, indexer, retrieval, server


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


def test_server_exports():
    assert sorted(server.__all__) == [
        "RootOptions",
        "ServedRoot",
        "Workspace",
        "ask_for_agent",
        "fresh_searcher",
        "serve",
    ]
    for name in server.__all__:
        assert getattr(server, name) is not None


def test_evaluation_exports():
    assert sorted(evaluation.__all__) == [
        "EvalConfig",
        "EvalReport",
        "HistoryConfig",
        "HistoryReport",
        "Prediction",
        "load_dataset",
        "load_predictions",
        "run_history",
        "run_swebench",
        "score",
    ]
    for name in evaluation.__all__:
        assert getattr(evaluation, name) is not None
