"""The MCP workspace's query seam: it retries a query on the store's own error for a LanceDB
failure when another process moved the snapshot, and catches nothing else."""

from __future__ import annotations

import pytest

from dowse.errors import IndexCorrupt
from dowse.indexer.build import IndexConfig, build_index
from dowse.server.app import ServedRoot, Workspace


@pytest.fixture
def served(tmp_path, fake_embedder, indexed_examples):
    # The example's lexical index (the session's build, copied: conftest).
    example_repo = indexed_examples.copy(tmp_path / "example", IndexConfig(embed=False))
    root = ServedRoot(example_repo)
    return Workspace([root], refresh=False), root, fake_embedder


def test_a_query_whose_snapshot_moved_runs_once_more_on_the_new_one(served):
    workspace, root, fake_embedder = served
    seen = []

    def run(searcher):
        seen.append(searcher)
        if len(seen) == 1:
            # Another writer commits a new snapshot (and cleans up the one being read).
            (root.path / "shop" / "added.py").write_text("def added():\n    return 1\n")
            build_index(root.path, embedder=fake_embedder, config=IndexConfig(embed=False))
            raise IndexCorrupt("the index is damaged (a file of the old snapshot is gone)")
        return "answer"

    answer, searcher, _ = workspace._query(root, run)
    assert answer == "answer"
    assert len(seen) == 2 and seen[1] is searcher and seen[0] is not searcher


def test_a_failure_on_the_same_snapshot_is_reported_not_retried(served):
    workspace, root, _ = served
    calls = []

    def run(searcher):
        calls.append(searcher)
        raise IndexCorrupt("the index is damaged (garbled); run `dowse index --rebuild`")

    with pytest.raises(IndexCorrupt, match="garbled"):
        workspace._query(root, run)
    assert len(calls) == 1


def test_a_bug_inside_a_query_keeps_its_traceback_and_is_not_retried(served):
    workspace, root, _ = served
    calls = []

    def run(searcher):
        calls.append(searcher)
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        workspace._query(root, run)
    assert len(calls) == 1


def test_a_warmed_workspace_holds_more_rows_on_every_snapshot_it_opens(served):
    # A one-shot query's searcher holds every table up to `MEMORY_ROWS` rows; a server's
    # (its workspace warmed) the tables without text up to `NARROW_ROWS`: the searcher a
    # query opened before the warm-up is reopened, and so is a later snapshot's.
    from dowse.retrieval.lookups import MEMORY_ROWS, NARROW_ROWS

    workspace, root, fake_embedder = served
    before = workspace._searcher(root)
    assert before.lookups.narrow_rows == MEMORY_ROWS
    workspace.warm()
    first = workspace._searcher(root)
    assert first is not before and first.lookups.narrow_rows == NARROW_ROWS
    workspace.warm()
    assert workspace._searcher(root) is first
    (root.path / "shop" / "added.py").write_text("def added():\n    return 1\n")
    build_index(root.path, embedder=fake_embedder, config=IndexConfig(embed=False))
    moved = workspace._searcher(root)
    assert moved is not first and moved.lookups.narrow_rows == NARROW_ROWS


@pytest.fixture
def with_vectors(tmp_path, fake_embedder, indexed_examples, monkeypatch):
    """The example with its file vectors (the session's build, copied), and the threads
    each read of them ran on."""
    import threading

    from dowse.retrieval.file_vectors import FileVectors

    example_repo = indexed_examples.copy(tmp_path / "example")
    read, threads = FileVectors.read, []

    def recorded(store, limit):
        threads.append(threading.current_thread().name)
        return read(store, limit)

    monkeypatch.setattr(FileVectors, "read", recorded)
    return ServedRoot(example_repo), threads


def _prefetched() -> None:
    import threading

    for thread in threading.enumerate():
        if thread.name == "dowse-file-vectors":
            thread.join()


def test_a_one_shot_query_reads_the_file_vectors_on_a_thread_of_their_own(with_vectors):
    # Its question needs them once it is embedded: read while the tree is checked and the
    # full-text side reads its rows, not after the question's vector.
    root, threads = with_vectors
    workspace = Workspace([root])
    searcher, _ = workspace._fresh(root)
    _prefetched()
    assert threads == ["dowse-file-vectors"]
    searcher.search("expired session token")
    assert threads == ["dowse-file-vectors"]


@pytest.mark.parametrize(
    "failure",
    [
        IndexCorrupt("the index is damaged (a file of the old snapshot is gone)"),
        OSError("Input/output error"),  # not dowse's own: still no thread's traceback
    ],
)
def test_a_failed_read_ahead_is_left_to_the_query_that_needs_the_file_vectors(
    with_vectors, monkeypatch, failure
):
    import threading

    from dowse.retrieval.file_vectors import FileVectors

    root, threads = with_vectors
    read = FileVectors.read
    escaped: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))

    def fails_once(store, limit):
        if not threads:
            threads.append("failed")
            raise failure
        return read(store, limit)

    monkeypatch.setattr(FileVectors, "read", fails_once)
    searcher, _ = Workspace([root])._fresh(root)
    _prefetched()
    assert threads == ["failed"]
    assert escaped == []
    assert searcher.questions.file_matrix() is not None
    assert threads == ["failed", "MainThread"]


def test_a_warmed_workspace_reads_its_file_vectors_as_it_warms(with_vectors):
    root, threads = with_vectors
    workspace = Workspace([root])
    workspace.warm()
    assert threads == ["MainThread"]
    workspace._fresh(root)
    _prefetched()
    assert threads == ["MainThread"]
