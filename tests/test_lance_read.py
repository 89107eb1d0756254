"""A reader's queries through LanceDB's native core return what `lancedb`'s own return."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import fresh_python

from dowse.indexer.build import IndexConfig
from dowse.indexer.lance_read import LanceDbTable
from dowse.indexer.store import Store


@pytest.fixture
def store(tmp_path: Path, indexed_examples) -> Store:
    """The example indexed with chunk vectors too (the session's build, copied)."""
    root = indexed_examples.copy(tmp_path / "example", IndexConfig(embed_chunks=True))
    return Store.open(root / ".dowse")


def _both(store: Store, name: str):
    return store._read_table(name), LanceDbTable(store.table(name))


def test_scans_and_counts_are_lancedbs(store):
    assert store.count("vectors") > 0  # the build this compares on has every kind of row
    for name in store.live_tables():
        native, lancedb = _both(store, name)
        whole = native.scan(None)
        assert whole.equals(lancedb.scan(None)) and whole.num_rows == native.count()
        assert native.count() == lancedb.count()
    native, lancedb = _both(store, "symbols")
    for columns, where, limit in [
        (["name", "path"], None, None),
        (["path", "start_line"], "kind = 'function'", None),
        (None, "path LIKE 'shop/%'", 3),
        (["name"], "name = 'no such name'", None),
    ]:
        got = native.scan(columns, where, limit)
        assert got.equals(lancedb.scan(columns, where, limit))
        assert native.count(where) == lancedb.count(where)
    assert native.scan(["name"], "kind = 'function'").num_rows > 0


def test_full_text_queries_are_lancedbs(store):
    for name, columns in [("chunks", ["id", "path", "_score"]), ("symbols", ["id", "_score"])]:
        native, lancedb = _both(store, name)
        for text in ["expired session token", "cart total", "nothing matches zzqx"]:
            for where in [None, "path LIKE 'shop/auth/%'"]:
                got = native.full_text(text, columns, 5, where).to_pylist()
                assert got == lancedb.full_text(text, columns, 5, where).to_pylist()
    assert store.full_text("chunks", "expired session token", ["id", "_score"], 5)


def test_nearest_vectors_are_lancedbs(store):
    rng = random.Random(7)
    for name in ("vectors", "file_vectors"):
        native, lancedb = _both(store, name)
        for _ in range(3):
            vector = [rng.gauss(0, 1) for _ in range(store.manifest.dim)]
            got = native.nearest(vector, ["id", "path", "_distance"], 6)
            assert got.num_rows == 6 and got.equals(
                lancedb.nearest(vector, ["id", "path", "_distance"], 6)
            )


def test_a_reader_reads_the_manifests_versions(store):
    # Rows written past the committed snapshot (an interrupted run) are not read.
    before = store.rows("files", ["path"])
    latest = store.db.open_table(store._physical("files"))
    latest.add(latest.search().limit(1).to_arrow())
    assert latest.count_rows() == len(before) + 1
    again = Store.open(store.index_dir)
    assert again.rows("files", ["path"]) == before
    assert again.count("files") == len(before)


def test_a_reader_imports_lancedbs_core_alone(store):
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from dowse.indexer.store import Store\n"
        f"s = Store.open(Path({str(store.index_dir)!r}))\n"
        "n = s.count('files') + len(s.full_text('chunks', 'token', ['id'], 3))\n"
        "print(json.dumps([n, sorted(m for m in sys.modules if m.startswith('lancedb'))]))"
    )
    count, modules = fresh_python(code)
    assert count > 0 and modules == ["lancedb", "lancedb._lancedb"]


def test_a_writers_reads_are_lancedbs_and_see_its_uncommitted_rows(
    tmp_path: Path, indexed_examples
):
    # A writer reads through the native table under its own `lancedb` handle: what the
    # handle holds, rows written since the last commit included.
    root = indexed_examples.copy(tmp_path / "example", IndexConfig(embed_chunks=False))
    committed = Store.open(root / ".dowse")
    writer = Store.create(
        root / ".dowse",
        root=root,
        model=committed.manifest.model,
        dim=committed.manifest.dim,
        rebuild=False,
    )
    row = {**committed.rows("skipped")[0], "path": "added/since/the/commit.bin"}
    writer.add("skipped", [row])
    assert row in writer.rows("skipped", where="path LIKE 'added/%'")
    assert row not in Store.open(root / ".dowse").rows("skipped")
    for name in writer.live_tables():
        native, lancedb = writer._read_table(name), LanceDbTable(writer.table(name))
        assert native.scan(None).equals(lancedb.scan(None)), name
        assert native.count() == lancedb.count(), name
