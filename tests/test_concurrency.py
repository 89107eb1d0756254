"""Readers keep working while another process writes the index."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from conftest import written_before

from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.embed import get_embedder
from dowse.indexer.store import Store
from dowse.retrieval.hybrid import HybridSearcher

CLI = [sys.executable, "-m", "dowse"]


def _write_tree(root: Path, n: int, tag: str) -> None:
    for i in range(n):
        (root / f"mod{i}.py").write_text(
            f'"""Module {i}."""\n\n\ndef handler_{tag}_{i}(request):\n'
            f'    """Handle request {i}."""\n    return request.get("{tag}{i}")\n'
        )
    # Not racy: indexes of the tree built at other moments hold the same rows.
    written_before(*(root / f"mod{i}.py" for i in range(n)))


def _index_in_process(repo: Path) -> None:
    """The index `dowse index --no-embed` makes of `repo`, built in this process and without
    the parser pool: the first snapshot the readers see. Only the writer the readers run
    beside is another process (a process and its pool started for this one were some
    1-2 s of CPU)."""
    build_index(repo, config=IndexConfig(embed=False, workers=1), embedder=get_embedder())


def test_readers_see_a_whole_snapshot_while_a_writer_works(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _write_tree(repo, 150, "old")
    _index_in_process(repo)
    _write_tree(repo, 150, "new")
    (repo / "extra.py").write_text("def extra():\n    return 1\n")
    writer = subprocess.Popen(
        [*CLI, "index", str(repo), "--no-embed", "-q"], cwd=Path(__file__).parent.parent
    )
    reads = 0
    seen: set[tuple[int, str]] = set()
    deadline = time.monotonic() + 120
    while writer.poll() is None and time.monotonic() < deadline:
        store = Store.open(repo / ".dowse")
        files = store.count("files")
        names = {r["name"] for r in store.rows("symbols", ["name"])}
        tags = {n.split("_")[1] for n in names if n.startswith("handler_")}
        assert len(tags) == 1, tags  # never a mix of two snapshots
        assert files == (150 if tags == {"old"} else 151)
        hits = HybridSearcher(store).search("handler request")
        assert hits
        seen.add((files, tags.pop()))
        reads += 1
    assert writer.wait(timeout=120) == 0
    assert reads > 0
    final = Store.open(repo / ".dowse")
    assert final.count("files") == 151
    assert seen <= {(150, "old"), (151, "new")}


def test_two_writers_do_not_corrupt_the_index(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _write_tree(repo, 80, "a")
    procs = [
        subprocess.Popen(
            [*CLI, "index", str(repo), "--no-embed", "-q"],
            cwd=Path(__file__).parent.parent,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    codes = [p.wait(timeout=180) for p in procs]
    assert codes == [0, 0]  # the second waits for the first, then finds nothing to do
    store = Store.open(repo / ".dowse")
    assert store.count("files") == 80 and store.count("symbols") == 80
