"""Indexing end to end on a real LanceDB on disk, with the fake embedder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import written_before

from dowse.errors import IndexLocked, IndexNotFound, IndexVersionMismatch
from dowse.indexer.build import Batches, IndexConfig, build_index
from dowse.indexer.store import Store, WriteLock
from dowse.indexer.walk import WalkConfig


class Interrupting:
    """Embeds like `inner` until batch `at_batch`, where it is interrupted (Ctrl-C)."""

    def __init__(self, inner, at_batch: int) -> None:
        self.inner, self.at_batch, self.batches = inner, at_batch, 0
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts):
        self.batches += 1
        if self.batches == self.at_batch:
            raise KeyboardInterrupt
        return self.inner.embed(texts)


def _build(repo: Path, embedder, **kw):
    """`build_index` with chunk vectors too (`--embed all`), unless `kw` says otherwise:
    these tests are about the vectors' life cycle."""
    kw.setdefault("embed_chunks", True)
    return build_index(repo, config=IndexConfig(**kw), embedder=embedder)


def _symbols(store: Store) -> set[tuple[str, str, str, int, int]]:
    return {
        (r["path"], r["kind"], r["qualified_name"], r["start_line"], r["end_line"])
        for r in store.rows("symbols")
    }


def test_cold_index_records_files_symbols_chunks_and_vectors(example_repo, fake_embedder):
    stats = _build(example_repo, fake_embedder)
    store = Store.open(example_repo / ".dowse")
    paths = {r["path"] for r in store.rows("files", ["path"])}
    assert "shop/auth/tokens.py" in paths and "web/app.js" in paths
    assert ".env" not in paths
    skipped = {r["path"]: r["reason"] for r in store.rows("skipped")}
    assert skipped[".env"].startswith("secret")
    symbols = _symbols(store)
    assert ("shop/auth/tokens.py", "function", "validate_token", 30, 42) in symbols
    assert ("shop/pricing.py", "method", "BulkDiscount.discount", 35, 37) in symbols
    assert stats.files == len(paths) and stats.symbols == len(symbols)
    assert stats.chunks == store.count("chunks") == store.count("vectors")
    assert stats.vectors_pending == 0 and store.manifest.embedded
    assert store.manifest.model == "fake-hash" and store.manifest.dim == 384
    imports = {(r["path"], r["module"]): r["resolved"] for r in store.rows("imports")}
    assert imports[("shop/api/routes.py", "shop.auth.tokens")] == "shop/auth/tokens.py"
    assert imports[("web/app.js", "./format.js")] == "web/format.js"
    assert imports[("shop/api/routes.py", "decimal")] is None


def test_chunk_lines_match_the_source_exactly(example_repo, fake_embedder):
    _build(example_repo, fake_embedder)
    store = Store.open(example_repo / ".dowse")
    for row in store.rows("chunks"):
        lines = (example_repo / row["path"]).read_text().split("\n")
        assert row["text"] == "\n".join(lines[row["start_line"] - 1 : row["end_line"]])


def test_noop_reindex_parses_and_embeds_nothing(example_repo, fake_embedder):
    _build(example_repo, fake_embedder)
    versions = json.loads((example_repo / ".dowse" / "manifest.json").read_text())["versions"]
    calls = len(fake_embedder.calls)
    stats = _build(example_repo, fake_embedder)
    assert (stats.parsed, stats.embedded, stats.deleted) == (0, 0, 0)
    assert len(fake_embedder.calls) == calls
    after = json.loads((example_repo / ".dowse" / "manifest.json").read_text())["versions"]
    assert after == versions  # nothing was written


def test_touch_without_change_reparses_nothing(example_repo, fake_embedder):
    _build(example_repo, fake_embedder)
    target = example_repo / "shop" / "pricing.py"
    st = target.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    stats = _build(example_repo, fake_embedder)
    assert stats.parsed == 0 and stats.embedded == 0
    assert _build(example_repo, fake_embedder).unchanged == stats.files


def test_edit_reindexes_only_that_file_and_embeds_only_new_text(example_repo, fake_embedder):
    _build(example_repo, fake_embedder)
    store = Store.open(example_repo / ".dowse")
    before = {r["id"]: r["hash"] for r in store.rows("chunks", ["id", "hash"])}
    target = example_repo / "shop" / "payments.py"
    target.write_text(
        target.read_text() + '\n\ndef refund(receipt: str) -> None:\n    """Refund a charge."""\n'
    )
    stats = _build(example_repo, fake_embedder)
    assert stats.parsed == 1
    store = Store.open(example_repo / ".dowse")
    after = {r["id"]: (r["path"], r["hash"]) for r in store.rows("chunks", ["id", "path", "hash"])}
    changed = {i for i, (p, h) in after.items() if before.get(i) != h}
    assert changed and {after[i][0] for i in changed} == {"shop/payments.py"}
    # The new chunk's text, the file's summary (it now names `refund`) and the new
    # definition; the file's other definitions kept their vectors.
    assert stats.embedded == len({after[i][1] for i in changed}) + 2
    assert store.rows("file_vectors", ["id"], where="id LIKE 'shop/payments.py#refund@%'")
    assert any(r["name"] == "refund" for r in store.rows("symbols", ["name"]))
    assert store.count("vectors") == store.count("chunks")
    assert store.table("file_vectors").count_rows("id = path") == store.count("files")
    summary = store.rows("files", ["summary"], where="path = 'shop/payments.py'")[0]["summary"]
    assert summary.startswith("shop/payments.py\n") and "refund" in summary


def test_deleted_file_disappears(example_repo, fake_embedder):
    _build(example_repo, fake_embedder)
    (example_repo / "shop" / "payments.py").unlink()
    stats = _build(example_repo, fake_embedder)
    assert stats.deleted == 1
    store = Store.open(example_repo / ".dowse")
    for table in ("files", "symbols", "chunks", "vectors"):
        assert not store.rows(table, ["path"], where="path = 'shop/payments.py'")


def test_renamed_file_reuses_its_vectors(example_repo, fake_embedder):
    _build(example_repo, fake_embedder)
    seen = len(fake_embedder.texts)
    (example_repo / "shop" / "payments.py").rename(example_repo / "shop" / "billing.py")
    stats = _build(example_repo, fake_embedder)
    # Chunk vectors move along; the file's summary and its four definitions name its
    # path, so only those short texts are embedded anew.
    assert stats.renamed == 1 and stats.deleted == 0 and stats.embedded == 5
    texts = fake_embedder.texts[seen:]
    assert len(texts) == 5 and all(t.startswith("shop/billing.py\n") for t in texts)
    store = Store.open(example_repo / ".dowse")
    assert store.rows("vectors", ["id"], where="path = 'shop/billing.py'")
    assert store.count("vectors") == store.count("chunks")
    assert store.rows("file_vectors", ["id"], where="path = 'shop/billing.py'")


def test_checkout_back_and_forth_embeds_nothing_new(example_repo, fake_embedder):
    target = example_repo / "shop" / "pricing.py"
    original = target.read_text()
    _build(example_repo, fake_embedder)
    target.write_text(original.replace("10% off", "15% off"))
    assert _build(example_repo, fake_embedder).embedded > 0
    target.write_text(original)  # back to the first version: every vector is cached
    stats = _build(example_repo, fake_embedder)
    assert stats.parsed == 1 and stats.embedded == 0 and stats.reused_vectors > 0


def test_no_embed_builds_a_lexical_index_and_embed_completes_it(example_repo, fake_embedder):
    stats = _build(example_repo, fake_embedder, embed=False)
    store = Store.open(example_repo / ".dowse")
    assert stats.embedded == 0 and store.count("vectors") == 0 and store.manifest.no_embed
    assert fake_embedder.calls == []
    stats = _build(example_repo, fake_embedder)
    store = Store.open(example_repo / ".dowse")
    assert stats.parsed == 0 and store.count("vectors") == store.count("chunks")


def test_interrupted_write_leaves_the_previous_snapshot(example_repo, fake_embedder, monkeypatch):
    _build(example_repo, fake_embedder)
    before = _symbols(Store.open(example_repo / ".dowse"))
    (example_repo / "shop" / "payments.py").write_text("def only_this():\n    pass\n")

    def crash(self, **changes):
        raise KeyboardInterrupt

    with monkeypatch.context() as m, pytest.raises(KeyboardInterrupt):
        m.setattr(Store, "commit", crash)
        _build(example_repo, fake_embedder)
    assert _symbols(Store.open(example_repo / ".dowse")) == before  # readers: old snapshot
    stats = _build(example_repo, fake_embedder)
    assert stats.parsed == 1
    names = {r["name"] for r in Store.open(example_repo / ".dowse").rows("symbols", ["name"])}
    assert "only_this" in names and "charge" not in names


def test_interrupted_embedding_keeps_finished_batches(example_repo, fake_embedder):
    with pytest.raises(KeyboardInterrupt):
        build_index(
            example_repo,
            config=IndexConfig(embed_batch=4, embed_chunks=True),
            embedder=Interrupting(fake_embedder, at_batch=2),
        )
    store = Store.open(example_repo / ".dowse")
    assert store.count("chunks") > 0 and not store.manifest.embedded  # lexical snapshot
    stats = build_index(
        example_repo, config=IndexConfig(embed_batch=4, embed_chunks=True), embedder=fake_embedder
    )
    assert stats.parsed == 0
    done = Store.open(example_repo / ".dowse")
    texts = {r["hash"] for r in done.rows("chunks", ["hash"])} | {
        r["hash"] for r in done.rows("file_vectors", ["hash"])
    }
    assert stats.embedded == len(texts) - 4  # the first batch reached the cache
    assert done.manifest.embedded


def test_second_writer_waits_then_fails_clearly(example_repo, fake_embedder):
    lock = WriteLock(example_repo / ".dowse")
    lock.acquire(timeout=1)
    try:
        with pytest.raises(IndexLocked, match="another dowse process"):
            build_index(
                example_repo, config=IndexConfig(lock_timeout_s=0.3), embedder=fake_embedder
            )
    finally:
        lock.release()


def test_opening_an_index_of_another_format_or_model_names_the_fix(example_repo, fake_embedder):
    with pytest.raises(IndexNotFound, match="dowse index"):
        Store.open(example_repo / ".dowse")
    _build(example_repo, fake_embedder)
    manifest = example_repo / ".dowse" / "manifest.json"

    class Other:
        name, dim = "other-model", 128

        def embed(self, texts):
            raise AssertionError("never called")

    with pytest.raises(IndexVersionMismatch, match="--rebuild"):
        build_index(example_repo, embedder=Other())
    data = json.loads(manifest.read_text())
    data["format"] = 999
    manifest.write_text(json.dumps(data))
    with pytest.raises(IndexVersionMismatch, match="--rebuild"):
        Store.open(example_repo / ".dowse")
    stats = build_index(example_repo, config=IndexConfig(rebuild=True), embedder=fake_embedder)
    assert stats.parsed == stats.files


def test_walk_options_apply(example_repo, fake_embedder):
    cfg = IndexConfig(walk=WalkConfig(exclude=("web/",), max_file_bytes=1500))
    build_index(example_repo, config=cfg, embedder=fake_embedder)
    store = Store.open(example_repo / ".dowse")
    paths = {r["path"] for r in store.rows("files", ["path"])}
    assert not any(p.startswith("web/") for p in paths)
    reasons = {r["path"]: r["reason"] for r in store.rows("skipped")}
    assert reasons["shop/api/routes.py"].startswith("too large")


def test_ann_index_is_built_and_kept_current(tmp_path, fake_embedder):
    from dowse.retrieval.hybrid import HybridSearcher

    ann_early = Batches(vector_index_min_rows=200)
    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(300):
        (repo / f"m{i}.py").write_text(f"def f{i}(x):\n    return x + {i}  # value{i}\n")
    _build(repo, fake_embedder, batches=ann_early)
    store = Store.open(repo / ".dowse")
    assert ("vector",) in {tuple(ix.columns) for ix in store.table("vectors").list_indices()}
    (repo / "m7.py").write_text("def renamed_seven(x):\n    return x\n")
    _build(repo, fake_embedder, batches=ann_early)
    store = Store.open(repo / ".dowse")
    searcher = HybridSearcher(store, lambda: fake_embedder)
    ids = [i for i, _ in searcher.lookups.dense(searcher.questions.embed_query("renamed_seven"), 5)]
    assert "m7.py:1-2" in ids


def test_long_embedding_runs_commit_vectors_as_they_go(example_repo, fake_embedder):
    often = Batches(embed_commit_every=4)
    with pytest.raises(KeyboardInterrupt):
        build_index(
            example_repo,
            config=IndexConfig(embed_batch=2, embed_chunks=True, batches=often),
            embedder=Interrupting(fake_embedder, at_batch=4),
        )
    store = Store.open(example_repo / ".dowse")
    assert not store.manifest.embedded
    # File summaries come first (one short text per file), then definitions,
    # then source code before docs and tests; what was embedded before the interruption
    # is committed.
    have = store.rows("file_vectors", ["path"])
    assert len(have) >= 4
    with pytest.raises(KeyboardInterrupt):
        build_index(
            example_repo,
            config=IndexConfig(embed_batch=2, embed_chunks=True, batches=often),
            embedder=Interrupting(fake_embedder, at_batch=25),
        )
    store = Store.open(example_repo / ".dowse")
    assert store.table("file_vectors").count_rows("id = path") == store.count("files")
    have = store.rows("vectors", ["path"])
    assert len(have) >= 4
    assert all(not r["path"].startswith("tests/") and not r["path"].endswith(".md") for r in have)
    stats = build_index(
        example_repo, config=IndexConfig(embed_chunks=True, batches=often), embedder=fake_embedder
    )
    assert stats.vectors_pending == 0


def test_absolute_imports_resolve_below_source_dirs_but_never_inside_packages():
    from dowse.indexer.resolve import resolve_import, suffix_map

    paths = {
        "src/pkg/__init__.py",
        "src/pkg/mod.py",
        "app/__init__.py",
        "app/functions/__init__.py",
        "app/functions/datetime.py",
    }
    suffixes = suffix_map(paths)

    def resolve(module: str) -> str | None:
        return resolve_import(module, "app/views.py", "python", paths, suffixes)

    assert resolve("pkg.mod") == "src/pkg/mod.py"  # src layout
    assert resolve("app.functions.datetime") == "app/functions/datetime.py"
    assert resolve("datetime") is None  # the standard library, not a package's submodule
    assert resolve("functions.datetime") is None


def test_a_file_left_out_for_its_content_is_not_reported_as_new(example_repo, fake_embedder):
    from dowse.indexer.build import changed_since
    from dowse.indexer.walk import WalkConfig

    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEow" * 20 + "\n-----END RSA PRIVATE KEY-----\n"
    (example_repo / "shop" / "deploy_key.py").write_text(f'KEY = """{key}"""\n')
    build_index(example_repo, embedder=fake_embedder)
    store = Store.open(example_repo / ".dowse")
    assert "shop/deploy_key.py" in {r["path"] for r in store.rows("skipped")}
    assert changed_since(store, example_repo, WalkConfig()) == {
        "modified": 0,
        "added": 0,
        "deleted": 0,
    }


def test_lancedb_loads_without_the_rest_client_until_something_uses_it():
    code = (
        "import sys\nfrom dowse.indexer.lance import import_lancedb\nimport_lancedb()\n"
        "print(any(m.startswith('lance_namespace_urllib3_client.api.') for m in sys.modules))\n"
        "import lance_namespace_urllib3_client as c\nprint(c.ApiClient.__name__)"
    )
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    ).stdout
    assert out.split() == ["False", "ApiClient"]


_SNAPSHOT = ("files", "symbols", "chunks", "imports", "refs", "vectors", "file_vectors")


def _contents(index_dir: Path) -> dict[str, list[str]]:
    """Every row of the snapshot's tables, as sorted JSON lines (row order aside)."""
    store = Store.open(index_dir)
    return {
        name: sorted(json.dumps(r, sort_keys=True, default=str) for r in store.rows(name))
        for name in _SNAPSHOT
    }


def _differing(a: dict[str, list[str]], b: dict[str, list[str]]) -> dict[str, list[str]]:
    """The rows only one of two snapshots' contents holds, by table ("-" first, "+" second)."""
    out = {}
    for name in sorted(set(a) | set(b)):
        left, right = set(a.get(name, ())), set(b.get(name, ()))
        if left != right:
            out[name] = sorted("- " + r for r in left - right) + sorted(
                "+ " + r for r in right - left
            )
    return out


EVERY_ROW = Batches(write_every_rows=1)
"""Parsed files written to the tables one file at a time."""


def _counted_writes(monkeypatch) -> list[int]:
    """The chunk rows of each write to the tables, as they come."""
    writes: list[int] = []
    add = Store.add

    def counting(self, name, new):
        if name == "chunks":
            writes.append(len(new))
        add(self, name, new)

    monkeypatch.setattr(Store, "add", counting)
    return writes


def test_parsed_files_are_written_in_batches_into_the_same_index(
    example_repo, fake_embedder, monkeypatch
):
    whole, streamed = example_repo / "whole", example_repo / "streamed"

    def both() -> None:
        _build(example_repo, fake_embedder)  # the default index, for the walk's sake
        build_index(example_repo, index_dir=whole, config=IndexConfig(), embedder=fake_embedder)
        with monkeypatch.context() as m:
            writes = _counted_writes(m)
            build_index(
                example_repo,
                index_dir=streamed,
                config=IndexConfig(batches=EVERY_ROW),
                embedder=fake_embedder,
            )
        assert _differing(_contents(streamed), _contents(whole)) == {}
        return writes

    # (Each index directory lies inside the tree: the walk never indexes an index.)
    writes = both()
    files = Store.open(whole).count("files")
    assert len(writes) > files // 2  # a write per parsed file (those with chunks), not one
    # An edit, a new file, a deletion and a rename, written in batches too.
    pay = example_repo / "shop" / "payments.py"
    pay.write_text(pay.read_text() + "\n\ndef refund():\n    return charge(0)\n")
    (example_repo / "shop" / "fees.py").write_text("from shop.payments import charge\n")
    (example_repo / "shop" / "pricing.py").rename(example_repo / "shop" / "prices.py")
    (example_repo / "web" / "app.js").unlink()
    written_before(pay, example_repo / "shop" / "fees.py")  # racy in one run, not both
    writes = both()
    assert len(writes) == 3  # payments, fees, prices: only what changed is written
    imports = Store.open(streamed).rows("imports", where="path = 'shop/fees.py'")
    assert [r["resolved"] for r in imports] == ["shop/payments.py"]


def test_a_run_interrupted_between_batches_keeps_the_snapshot_and_resumes(
    example_repo, fake_embedder, monkeypatch
):
    from dowse.indexer import build

    _build(example_repo, fake_embedder, embed=False)
    before = _contents(example_repo / ".dowse")
    for name in ("payments", "pricing", "api/routes"):
        path = example_repo / "shop" / f"{name}.py"
        path.write_text(path.read_text() + f"\n\ndef added_to_{name[-5:]}():\n    pass\n")
        # Racy in a run soon after the edit, not in the fresh build later: not both.
        written_before(path)
    write = build._Run._write_parsed
    calls = []

    def stop_at_second(self, batch, walked, read):
        calls.append(len(batch))
        if len(calls) == 2:
            raise KeyboardInterrupt
        write(self, batch, walked, read)

    with monkeypatch.context() as m, pytest.raises(KeyboardInterrupt):
        m.setattr(build._Run, "_write_parsed", stop_at_second)
        _build(example_repo, fake_embedder, embed=False, batches=EVERY_ROW)
    # One batch reached the tables, uncommitted: readers see the last snapshot whole.
    assert calls[0] == 1
    assert _contents(example_repo / ".dowse") == before
    stats = _build(example_repo, fake_embedder, embed=False)
    assert stats.parsed == 3
    build_index(
        example_repo,
        index_dir=example_repo / "fresh",
        config=IndexConfig(embed=False, embed_chunks=True),
        embedder=fake_embedder,
    )
    resumed, fresh = _contents(example_repo / ".dowse"), _contents(example_repo / "fresh")
    assert _differing(resumed, fresh) == {}


def test_a_new_index_keeps_no_version_of_its_batches(example_repo, fake_embedder):
    _build(example_repo, fake_embedder, batches=EVERY_ROW)
    store = Store.open(example_repo / ".dowse")
    store.verify()
    # No reader can have opened a new index's earlier versions: the batches' copies of
    # the rows are gone with them.
    for name in ("files", "symbols", "chunks", "imports", "vectors", "file_vectors"):
        assert [v["version"] for v in store.table(name).list_versions()] == [
            store.manifest.versions[name]
        ], name
    first = store.manifest.versions["chunks"]
    pay = example_repo / "shop" / "payments.py"
    pay.write_text(pay.read_text() + "\n\ndef refund():\n    pass\n")
    _build(example_repo, fake_embedder, batches=EVERY_ROW)
    # A table a reader may be using keeps the version it reads, for `Retention.grace`.
    kept = {
        v["version"] for v in Store.open(example_repo / ".dowse").table("chunks").list_versions()
    }
    assert first in kept and len(kept) > 1


_SCALAR_TABLES = ("files", "symbols", "chunks", "refs", "file_vectors")


def _indexes(index_dir: Path) -> dict[str, set[tuple[str, str]]]:
    store = Store.open(index_dir)
    return {
        name: {(ix.columns[0], ix.index_type) for ix in store.table(name).list_indices()}
        for name in _SCALAR_TABLES
    }


def test_a_small_index_has_full_text_indexes_only_and_answers_as_with_all(
    example_repo, fake_embedder
):
    # Below `Batches.scalar_index_min_rows` a table's look-ups scan it instead of
    # probing a BTree: the same rows, in the same order, with the same scores.
    from dowse.retrieval.ask import ask
    from dowse.retrieval.hybrid import HybridSearcher
    from dowse.retrieval.lookups import IndexLookups

    small, every = example_repo / ".dowse", example_repo / "every"
    build_index(example_repo, config=IndexConfig(embed_chunks=False), embedder=fake_embedder)
    build_index(
        example_repo,
        index_dir=every,
        config=IndexConfig(embed_chunks=False, batches=Batches(scalar_index_min_rows=1)),
        embedder=fake_embedder,
    )
    assert _indexes(small) == {
        "files": set(),
        "symbols": {("tokens", "FTS")},
        "chunks": {("tokens", "FTS")},
        "refs": set(),
        "file_vectors": set(),
    }
    assert {column for column, _ in _indexes(every)["chunks"]} == {"tokens", "path", "id"}
    assert _indexes(every)["file_vectors"] == {("path", "BTree")}

    def answers(index_dir: Path, held: bool) -> list[object]:
        store = Store.open(index_dir)
        lookups = None if held else IndexLookups(store, memory_rows=0)
        searcher = HybridSearcher(store, lambda: fake_embedder, lookups=lookups)
        out: list[object] = []
        for question in ("validate_token signature", "how are discounts applied to a cart?"):
            out.append([h.model_dump() for h in searcher.search(question)])
            result = ask(searcher, question, budget=2000, with_trace=False)
            out.append(result.model_dump(exclude={"timings"}))
        return out

    for held in (True, False):  # the tables held in memory, or queried with filters
        assert answers(small, held) == answers(every, held)


def test_a_table_grown_past_the_threshold_gets_its_scalar_indexes(tmp_path, fake_embedder):
    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(3):
        (repo / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    config = IndexConfig(embed_chunks=False, batches=Batches(scalar_index_min_rows=10))
    build_index(repo, config=config, embedder=fake_embedder)
    assert _indexes(repo / ".dowse")["files"] == set()
    for i in range(3, 12):
        (repo / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    build_index(repo, config=config, embedder=fake_embedder)
    indexes = _indexes(repo / ".dowse")
    assert indexes["files"] == {("path", "BTree")}
    assert indexes["symbols"] == {("tokens", "FTS"), ("path", "BTree"), ("name_lower", "BTree")}


def test_an_empty_table_gets_no_delete_and_an_unindexed_one_is_replaced_in_one_write(
    example_repo, fake_embedder
):
    # LanceDB writes a version for every delete, matched or not, and for each of a
    # delete and an add: versions a run would commit and prune for nothing.
    build_index(example_repo, config=IndexConfig(embed=False), embedder=fake_embedder)
    index_dir = example_repo / ".dowse"
    writer = Store.create(
        index_dir, root=example_repo, model=fake_embedder.name, dim=fake_embedder.dim, rebuild=False
    )
    before = {name: writer.table(name).version for name in ("vectors", "chunks", "imports")}
    writer.delete_paths("vectors", ["shop/payments.py"])  # no row at all
    writer.delete_paths("chunks", ["shop/payments.py"])
    imports = writer.rows("imports")
    writer.overwrite("imports", imports[:2])
    assert writer.table("vectors").version == before["vectors"]
    assert writer.table("chunks").version == before["chunks"] + 1
    assert writer.table("imports").version == before["imports"] + 1
    assert writer.rows("imports") == imports[:2]
    assert not writer.rows("chunks", where="path = 'shop/payments.py'")
