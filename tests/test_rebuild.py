"""`dowse index --rebuild` writes a new snapshot beside the old one: readers keep the old
one until the new manifest is committed, an interrupted rebuild leaves it whole, and the
tables a rebuild replaced are dropped once no reader can need them."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import signal
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import REPO
from test_concurrency import CLI, _index_in_process, _write_tree
from test_reliability import _model_stand_in, rel

from dowse.errors import IndexNotFound
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.store import CACHE_TABLE, SNAPSHOT_TABLES, Retention, Store


def _counts(index_dir: Path) -> dict[str, int]:
    store = Store.open(index_dir)
    return {name: store.count(name) for name in SNAPSHOT_TABLES}


def _lance_tables(index_dir: Path) -> set[str]:
    """The LanceDB tables on disk (one directory each)."""
    return {p.name.removesuffix(".lance") for p in (index_dir / "db").glob("*.lance")}


def _live(index_dir: Path) -> set[str]:
    """The LanceDB tables the committed manifest names."""
    tables = Store.read_manifest(index_dir).tables
    return {tables.get(name, name) for name in SNAPSHOT_TABLES}


def _interrupt(self: Store, **changes: object) -> None:
    raise KeyboardInterrupt  # Ctrl-C just before the new manifest is written


def test_an_interrupted_rebuild_leaves_the_old_index_readable_and_whole(
    example_repo, fake_embedder, monkeypatch
):
    index_dir = example_repo / ".dowse"
    build_index(example_repo, embedder=fake_embedder)
    before = _counts(index_dir)
    manifest = (index_dir / "manifest.json").read_bytes()
    seen: dict[str, int] = {}

    def read_then_interrupt(self: Store, **changes: object) -> None:
        # Every new table is written; only the manifest is left to switch readers over.
        seen.update(_counts(index_dir))
        raise KeyboardInterrupt

    with monkeypatch.context() as m, pytest.raises(KeyboardInterrupt):
        m.setattr(Store, "commit", read_then_interrupt)
        build_index(example_repo, embedder=fake_embedder, config=IndexConfig(rebuild=True))
    assert seen == before  # a reader during the rebuild: the previous snapshot
    assert (index_dir / "manifest.json").read_bytes() == manifest
    Store.open(index_dir).verify()
    assert _counts(index_dir) == before
    leftovers = _lance_tables(index_dir) - _live(index_dir) - {CACHE_TABLE}
    assert len(leftovers) == len(SNAPSHOT_TABLES)  # the unfinished generation

    stats = build_index(example_repo, embedder=fake_embedder, config=IndexConfig(rebuild=True))
    assert stats.parsed == stats.files and stats.embedded == 0  # the cache survived
    assert _counts(index_dir) == before
    # Never committed, so no reader can have opened it: dropped at once. The replaced
    # snapshot stays for the readers that opened the previous manifest.
    assert not leftovers & _lance_tables(index_dir)
    assert set(SNAPSHOT_TABLES) <= _lance_tables(index_dir)


def test_a_plain_run_after_an_interrupted_rebuild_drops_its_tables(
    example_repo, fake_embedder, monkeypatch
):
    index_dir = example_repo / ".dowse"
    build_index(example_repo, embedder=fake_embedder)
    with monkeypatch.context() as m, pytest.raises(KeyboardInterrupt):
        m.setattr(Store, "commit", _interrupt)
        build_index(example_repo, embedder=fake_embedder, config=IndexConfig(rebuild=True))
    assert len(_lance_tables(index_dir)) == 2 * len(SNAPSHOT_TABLES) + 1
    stats = build_index(example_repo, embedder=fake_embedder)
    assert stats.parsed == 0  # nothing to do, yet the unfinished generation is gone
    assert _lance_tables(index_dir) == {*SNAPSHOT_TABLES, CACHE_TABLE}


def test_a_rebuild_equals_a_fresh_build_and_old_generations_go_after_the_grace(
    example_repo, fake_embedder, monkeypatch, tmp_path
):
    index_dir = example_repo / ".dowse"
    build_index(example_repo, embedder=fake_embedder)
    # An index never rebuilt keeps the manifest a dowse from before rebuilds could read.
    assert "tables" not in json.loads((index_dir / "manifest.json").read_text())
    build_index(example_repo, index_dir=tmp_path / "fresh", embedder=fake_embedder)
    reader = Store.open(index_dir)
    for _ in range(3):
        build_index(example_repo, embedder=fake_embedder, config=IndexConfig(rebuild=True))
        assert _counts(index_dir) == _counts(tmp_path / "fresh")
        Store.open(index_dir).verify()
    manifest = Store.read_manifest(index_dir)
    assert manifest.embedded and set(manifest.tables) == set(SNAPSHOT_TABLES)
    # Within the grace period every replaced generation stays for its readers.
    assert len(_lance_tables(index_dir)) == 4 * len(SNAPSHOT_TABLES) + 1
    assert len(manifest.retired) == 3 * len(SNAPSHOT_TABLES)
    reader.verify()  # opened before the first rebuild, still whole
    assert reader.count("chunks") == _counts(tmp_path / "fresh")["chunks"]

    no_grace = IndexConfig(retention=Retention(grace=timedelta(0)))
    stats = build_index(example_repo, embedder=fake_embedder, config=no_grace)
    assert stats.parsed == 0
    assert _lance_tables(index_dir) == _live(index_dir) | {CACHE_TABLE}
    assert _counts(index_dir) == _counts(tmp_path / "fresh")
    # The next commit forgets the dropped tables.
    (example_repo / "shop" / "pricing.py").write_text("def cheaper():\n    return 1\n")
    build_index(example_repo, embedder=fake_embedder, config=no_grace)
    assert Store.read_manifest(index_dir).retired == {}


def test_a_rebuild_embedding_some_files_and_reusing_the_rest_leaves_an_index_that_opens(
    example_repo, fake_embedder, tmp_path
):
    import lancedb

    # The cache holds the vectors of every file but the new one: the rebuild writes and
    # indexes the cached ones, then adds the new file's after the index was made (as a
    # rebuild after a format change, over a cache of an earlier tree, does).
    index_dir = example_repo / ".dowse"
    build_index(example_repo, embedder=fake_embedder)
    (example_repo / "shop" / "refunds.py").write_text(
        'def refund(order):\n    """Give the money of an order back."""\n    return order.total\n'
    )
    stats = build_index(example_repo, embedder=fake_embedder, config=IndexConfig(rebuild=True))
    assert 0 < stats.embedded < stats.files
    manifest = Store.read_manifest(index_dir)
    db = lancedb.connect(str(index_dir / "db"))
    for name in SNAPSHOT_TABLES:
        table = db.open_table(manifest.tables.get(name, name))
        assert manifest.versions[name] in {v["version"] for v in table.list_versions()}, name
    Store.open(index_dir).verify()
    build_index(example_repo, index_dir=tmp_path / "fresh", embedder=fake_embedder)
    assert _counts(index_dir) == _counts(tmp_path / "fresh")


def test_a_rebuild_of_a_damaged_manifest_drops_the_tables_it_named(example_repo, fake_embedder):
    index_dir = example_repo / ".dowse"
    build_index(example_repo, embedder=fake_embedder)
    build_index(example_repo, embedder=fake_embedder, config=IndexConfig(rebuild=True))
    (index_dir / "manifest.json").write_text('{"format": 3, "model": ')
    stats = build_index(example_repo, embedder=fake_embedder, config=IndexConfig(rebuild=True))
    assert stats.parsed == stats.files and stats.embedded == 0
    # No reader could use that snapshot: its tables go at once, the new one is in place.
    assert _lance_tables(index_dir) == {*SNAPSHOT_TABLES, CACHE_TABLE}
    Store.open(index_dir).verify()


def test_readers_keep_an_index_while_another_process_rebuilds_it(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _write_tree(repo, 150, "old")
    _index_in_process(repo)
    _write_tree(repo, 150, "new")
    writer = subprocess.Popen([*CLI, "index", str(repo), "--no-embed", "-q", "--rebuild"], cwd=REPO)
    seen: set[str] = set()
    deadline = time.monotonic() + 120
    while writer.poll() is None and time.monotonic() < deadline:
        try:
            store = Store.open(repo / ".dowse")
        except IndexNotFound:  # what a rebuild used to show its readers
            pytest.fail("the index vanished during the rebuild")
        names = {r["name"] for r in store.rows("symbols", ["name"])}
        tags = {n.split("_")[1] for n in names if n.startswith("handler_")}
        assert len(tags) == 1 and store.count("files") == 150, tags  # one whole snapshot
        seen |= tags
    assert writer.wait(timeout=120) == 0
    assert seen and seen <= {"old", "new"}
    names = {r["name"] for r in Store.open(repo / ".dowse").rows("symbols", ["name"])}
    assert "handler_new_0" in names and "handler_old_0" not in names


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_a_killed_rebuild_leaves_the_old_or_the_new_index(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _write_tree(repo, 150, "t0")
    index_dir = repo / ".dowse"
    no_vectors = IndexConfig(embed=False)  # the model `--no-embed` records, never asked
    build_index(repo, config=no_vectors, embedder=_model_stand_in())
    before = rel.fingerprint(index_dir)
    rng = random.Random(7)
    for n in range(1, 4):
        _write_tree(repo, 150, f"t{n}")
        build_index(
            repo, index_dir=tmp_path / f"ref{n}", config=no_vectors, embedder=_model_stand_in()
        )
        after = rel.fingerprint(tmp_path / f"ref{n}")
        proc = rel.launch("index", str(repo), "--no-embed", "-q", "--rebuild")
        ready = rel.CrashRig._wait_ready(proc, time.monotonic() + 60)
        delay = rng.uniform(0, 0.5)
        while ready and proc.poll() is None and time.monotonic() - ready < delay:
            time.sleep(0.005)
        with contextlib.suppress(ProcessLookupError):  # it may have finished
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        rel.reap_group(proc.pid, 5.0)
        assert rel.fingerprint(index_dir) in (before, after)  # never "no index"
        assert rel.audit(index_dir) == []
        Store.open(index_dir).verify()
        build_index(
            repo, config=dataclasses.replace(no_vectors, rebuild=True), embedder=_model_stand_in()
        )
        assert rel.fingerprint(index_dir) == after
        before = after


def _versions(index_dir: Path, name: str) -> int:
    import lancedb

    table = lancedb.connect(str(index_dir / "db")).open_table(
        Store.read_manifest(index_dir).tables.get(name, name)
    )
    return len(table.list_versions())


def _spy_optimize(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int, bool]]:
    """Every LanceDB `optimize` from here on: (table, version before, version after,
    whether it was asked to prune)."""
    from lancedb.table import LanceTable

    calls: list[tuple[str, int, int, bool]] = []
    optimize = LanceTable.optimize

    def spy(self: LanceTable, **kwargs: object) -> None:
        before = self.version
        optimize(self, **kwargs)  # type: ignore[arg-type]
        calls.append((self.name, before, self.version, "cleanup_older_than" in kwargs))

    monkeypatch.setattr(LanceTable, "optimize", spy)
    return calls


def test_a_run_optimizes_only_the_tables_it_wrote(example_repo, fake_embedder, monkeypatch):
    # (A prune margin no version reaches: the second run's start prunes nothing, so every
    # `optimize` of a snapshot table is the run's own.)
    config = IndexConfig(retention=Retention(prune_margin=timedelta(hours=1)))
    build_index(example_repo, embedder=fake_embedder, config=config)
    committed = Store.read_manifest(example_repo / ".dowse").versions
    calls = _spy_optimize(monkeypatch)
    (example_repo / "shop" / "pricing.py").write_text("def price():\n    return 1\n")
    build_index(example_repo, embedder=fake_embedder, config=config)
    snapshot = [(name, before) for name, before, _, _ in calls if name != CACHE_TABLE]
    optimized = {name for name, _ in snapshot}
    assert {"chunks", "symbols", "files", "refs"} <= optimized  # the edit's rows, indexed
    # Not a git repository: no history, and the commits table is as the first run left it.
    assert "commits" in committed and "commits" not in optimized
    assert all(before != committed[name] for name, before in snapshot)
    assert Store.open(example_repo / ".dowse").rows(
        "symbols", ["name"], where="path = 'shop/pricing.py'"
    ) == [{"name": "price"}]


def test_a_table_an_optimize_left_as_it_was_is_not_optimized_again(
    example_repo, fake_embedder, monkeypatch
):
    calls = _spy_optimize(monkeypatch)
    build_index(example_repo, embedder=fake_embedder)
    settled = [(name, v) for name, v, after, prune in calls if after == v and not prune]
    assert {"chunks", "files"} <= {name for name, _ in settled}
    assert len(settled) == len(set(settled)), settled  # each table settled once per version
    Store.open(example_repo / ".dowse").verify()


def test_old_table_versions_are_pruned_once_no_reader_can_need_them(example_repo, fake_embedder):
    index_dir = example_repo / ".dowse"
    target = example_repo / "shop" / "pricing.py"
    margin = timedelta(seconds=0.3)
    config = IndexConfig(retention=Retention(prune_margin=margin))
    pause = 0.4  # runs further apart than the margin, as they are in use
    build_index(example_repo, embedder=fake_embedder, config=config)
    first = Store.open(index_dir)
    for i in range(3):
        time.sleep(pause)
        target.write_text(f"def price_{i}():\n    return {i}\n")
        build_index(example_repo, embedder=fake_embedder, config=config)
    # Within the grace period every version stays: a reader of an earlier snapshot reads on.
    grown = {name: _versions(index_dir, name) for name in ("chunks", CACHE_TABLE)}
    assert grown["chunks"] > 8 and grown[CACHE_TABLE] > 2
    first.verify()

    config = IndexConfig(retention=Retention(grace=timedelta(0), prune_margin=margin))
    time.sleep(pause)
    target.write_text("def price_final():\n    return 9\n")
    build_index(example_repo, embedder=fake_embedder, config=config)
    after = {name: _versions(index_dir, name) for name in ("chunks", CACHE_TABLE)}
    # (The first build kept only its last version: `Store.forget_drafts`.) The versions
    # of the first two edits' runs went; the last run's own stay until the next run.
    assert after["chunks"] < grown["chunks"] - 3 and after[CACHE_TABLE] <= grown[CACHE_TABLE]
    store = Store.open(index_dir)
    store.verify()
    assert store.rows("symbols", ["name"], where="path = 'shop/pricing.py'") == [
        {"name": "price_final"}
    ]
    # No-op runs later prune what the last run left, and the index stays whole: the
    # first at once, or, when the last run's versions all lie within the margin of its
    # final one (a quick run), the next, once the first has committed those rows anew
    # (`Store._prune_versions`).
    left = []
    for _ in range(2):
        time.sleep(pause)
        build_index(example_repo, embedder=fake_embedder, config=config)
        Store.open(index_dir).verify()
        left.append(_versions(index_dir, "chunks"))
        if left[-1] < after["chunks"]:
            break
    assert left[-1] < after["chunks"], left


class _Clock:
    """The writer's clock for `Retention.grace` (`build_index(clock=...)`), moved on by the
    test instead of waited for. LanceDB dates table versions on the real clock, and
    `Retention.prune_margin` compares those dates: runs stay that far apart in real time."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def test_an_index_written_every_few_moments_stays_bounded(example_repo, fake_embedder):
    # A server re-indexing on every edit never leaves the index alone for the grace period: the
    # versions replaced more than the grace period ago go all the same, and a reader that opened a
    # snapshot within the grace period still reads it.
    index_dir = example_repo / ".dowse"
    target = example_repo / "shop" / "pricing.py"
    retention = Retention(grace=timedelta(seconds=1.5), prune_margin=timedelta(seconds=0.2))
    config = IndexConfig(retention=retention)
    clock = _Clock()
    build_index(example_repo, embedder=fake_embedder, clock=clock, config=config)
    counts, reader = [], None
    for i in range(14):
        clock.now += 0.6  # a run every 0.6 s: the grace period covers the two runs before
        time.sleep(0.3)  # past the prune margin
        target.write_text(f"def price_{i}():\n    return {i}\n")
        build_index(example_repo, embedder=fake_embedder, clock=clock, config=config)
        counts.append(_versions(index_dir, "chunks"))
        if i == 11:
            reader = Store.open(index_dir)
    # Three versions a run: without pruning, 14 runs would add 40 (they did); pruned,
    # the count levels off once runs pass the grace period, well below that. (Not relative to
    # twice the first count: since the first build keeps only its committed version,
    # that count is smaller.)
    assert counts[-1] < counts[0] + 20, counts
    assert reader is not None
    reader.verify()  # opened two runs ago, within the grace period
    assert Store.read_manifest(index_dir).superseded["chunks"]


def test_runs_with_nothing_to_index_settle_on_one_version(example_repo, fake_embedder):
    # A run that finds nothing to index still prunes, and commits what its pruning
    # compacted: the versions past the manifest's and those just before it go as well.
    index_dir = example_repo / ".dowse"
    retention = Retention(grace=timedelta(seconds=0.6), prune_margin=timedelta(seconds=0.2))
    config = IndexConfig(retention=retention)
    clock = _Clock()
    build_index(example_repo, embedder=fake_embedder, clock=clock, config=config)
    (example_repo / "shop" / "pricing.py").write_text("def price():\n    return 1\n")
    build_index(example_repo, embedder=fake_embedder, clock=clock, config=config)
    counts = []
    for _ in range(4):
        clock.now += 0.8  # each run past the grace period
        time.sleep(0.3)  # past the prune margin
        assert (
            build_index(example_repo, embedder=fake_embedder, clock=clock, config=config).parsed
            == 0
        )
        counts.append(_versions(index_dir, "chunks"))
    assert counts[-1] == 1, counts
    store = Store.open(index_dir)
    store.verify()
    assert store.rows("symbols", ["name"], where="path = 'shop/pricing.py'") == [{"name": "price"}]
