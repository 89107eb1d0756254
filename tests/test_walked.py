"""The stat-only check for changes (`indexer.walked`): it says "unchanged" only when a
walk would find the tree as the snapshot has it."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from dowse.indexer import walked
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.options import changed_since, walk_config_of
from dowse.indexer.store import Store

PAST = 1_600_000_000  # 2020: far from any walk, so no stat is racy


def _age(root: Path, when: int = PAST) -> None:
    """Every file and directory under `root` last modified at `when`."""
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            os.utime(os.path.join(dirpath, name), (when, when))
    for dirpath, _, _ in sorted(os.walk(root), key=lambda d: -len(d[0])):
        os.utime(dirpath, (when, when))


def _unchanged(root: Path) -> bool:
    store = Store.open(root / ".dowse")
    config = walk_config_of(store.manifest)
    said = walked.unchanged(store.index_dir, store.manifest, root.resolve(), config)
    if said:  # never "unchanged" where the walk finds a change
        assert sum(changed_since(store, root.resolve(), config).values()) == 0
    return said


@pytest.fixture
def indexed(example_repo, fake_embedder) -> Path:
    _age(example_repo)
    build_index(example_repo, config=IndexConfig(embed=False), embedder=fake_embedder)
    _age(example_repo, PAST + 10)  # the new .dowse too (the root's listing changed)
    os.utime(example_repo, (PAST, PAST))
    build_index(example_repo, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert _unchanged(example_repo)
    return example_repo


def _later(path: Path, when: int = PAST + 100) -> None:
    os.utime(path, (when, when))


def test_an_edit_a_new_file_or_a_deletion_is_seen(indexed):
    target = indexed / "shop" / "pricing.py"
    target.write_text(target.read_text() + "\n# more\n")
    _later(target)
    assert not _unchanged(indexed)
    target.write_text(target.read_text()[:-8])  # the same size as indexed, another mtime
    _later(target, PAST + 200)
    assert not _unchanged(indexed)


@pytest.mark.parametrize("change", ["add", "delete", "gitignore"])
def test_a_listing_or_an_ignore_rule_that_changed_is_seen(indexed, change):
    folder = indexed / "shop" / "auth"
    if change == "add":
        (folder / "new.py").write_text("def new():\n    pass\n")
        _later(folder / "new.py")
    elif change == "delete":
        (folder / "tokens.py").unlink()
    else:
        (folder / ".gitignore").write_text("tokens.py\n")
        _later(folder / ".gitignore")
    _later(folder)
    assert not _unchanged(indexed)


def test_a_rule_from_above_the_root_is_watched(tmp_path, example_repo, fake_embedder):
    top = tmp_path / "work"
    root = top / "sub" / "example"
    root.parent.mkdir(parents=True)
    example_repo.rename(root)
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    _age(top)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    _age(root, PAST + 10)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert _unchanged(root)
    (top / "sub" / ".gitignore").write_text("example/shop/pricing.py\n")
    assert not _unchanged(root)


def _recorded_mtime(root: Path, path: Path) -> int:
    """The mtime the record of `root`'s last walk holds for `path`."""
    data = json.loads((root / ".dowse" / walked.WALKED).read_text())
    return next(key[1] for p, _, key in data["seen"] if p == str(path))


SOON = int(time.time()) + 3600  # ahead of every walk of the test: each such stat is racy


def _written_now(root: Path) -> None:
    """Every file and directory under `root` racy to the test's walks, as in a tree just
    written (a fresh clone, an edit)."""
    _age(root, SOON)


def test_a_tree_indexed_right_after_it_was_written_is_trusted(example_repo, fake_embedder):
    # The first run makes the index directory in the root, so the root's listing is new
    # at the walk; an edited file's mtime is as new. Racy both, and still the tree the
    # walk found: a query does not walk again.
    _written_now(example_repo)
    build_index(example_repo, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert _unchanged(example_repo)
    target = example_repo / "shop" / "pricing.py"
    target.write_text(target.read_text() + "\n# more\n")
    _later(target, SOON + 10)
    assert not _unchanged(example_repo)
    build_index(example_repo, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert _unchanged(example_repo)


def test_a_racy_listing_that_changed_within_its_tick_is_seen(example_repo, fake_embedder):
    folder = example_repo / "shop" / "auth"
    (folder / "notes.log").write_text("gitignored: the walk never stats it\n")
    _written_now(example_repo)
    build_index(example_repo, config=IndexConfig(embed=False), embedder=fake_embedder)
    mtime = _recorded_mtime(example_repo, folder)
    # Only the listing shows this: the directory's size stays, and no path the walk
    # stat'ed changed.
    (folder / "notes.log").rename(folder / "notes.py")
    os.utime(folder, ns=(mtime, mtime))  # a change within the same timestamp tick
    assert not _unchanged(example_repo)
    (folder / "notes.py").rename(folder / "notes.log")
    os.utime(folder, ns=(mtime, mtime))
    assert _unchanged(example_repo)


def test_a_racy_ignore_file_is_not_trusted(example_repo, fake_embedder):
    rules = example_repo / "shop" / "auth" / ".gitignore"
    rules.write_text("tokens.pz\n")
    _written_now(example_repo)
    build_index(example_repo, config=IndexConfig(embed=False), embedder=fake_embedder)
    rules.write_text("tokens.py\n")  # the same size: within its tick, the same stat
    os.utime(rules, (SOON, SOON))
    os.utime(rules.parent, (SOON, SOON))
    assert not _unchanged(example_repo)


def test_another_snapshot_is_not_trusted(indexed):
    store = Store.open(indexed / ".dowse")
    store.commit()  # another snapshot: the record is not its
    assert not walked.unchanged(
        store.index_dir, store.manifest, indexed.resolve(), walk_config_of(store.manifest)
    )


def test_the_refresh_before_a_query_walks_only_without_a_record(
    indexed, fake_embedder, monkeypatch
):
    from dowse.server import workspace

    walks = []

    def counting(*args, **kwargs):
        walks.append(1)
        return changed_since(*args, **kwargs)

    monkeypatch.setattr(workspace, "changed_since", counting)
    monkeypatch.setattr(workspace, "get_embedder", lambda name: fake_embedder)
    searcher, fresh = workspace.fresh_searcher(indexed, indexed / ".dowse")
    assert walks == [] and fresh.reindexed == 0
    (indexed / ".dowse" / walked.WALKED).unlink()
    searcher, fresh = workspace.fresh_searcher(indexed, indexed / ".dowse")
    assert walks == [1] and fresh.reindexed == 0


def test_a_no_op_index_run_walks_only_when_the_tree_moved(indexed, fake_embedder, monkeypatch):
    from datetime import timedelta

    from dowse.indexer import build
    from dowse.indexer.store import Retention

    walks = []
    real = build.walk

    def counting(*args, **kwargs):
        walks.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "walk", counting)
    # No grace period: the `settled` record is usable at once.
    config = IndexConfig(embed=False, retention=Retention(grace=timedelta(0)))
    slow = build_index(indexed, config=config, embedder=fake_embedder)  # records `settled`
    walks.clear()
    fast = build_index(indexed, config=config, embedder=fake_embedder)
    assert walks == [] and fast.model_dump(exclude={"seconds"}) == slow.model_dump(
        exclude={"seconds"}
    )
    target = indexed / "shop" / "pricing.py"
    target.write_text(target.read_text() + "\n# more\n")
    _later(target)
    assert build_index(indexed, config=config, embedder=fake_embedder).parsed == 1
    assert walks


def test_a_run_whose_files_moved_under_it_leaves_no_record(indexed, fake_embedder, monkeypatch):
    from dowse.indexer import extract

    target = indexed / "shop" / "pricing.py"
    target.write_text(target.read_text() + "\n# more\n")
    _later(target)
    real = extract.process_file

    def edited_meanwhile(job, cfg, **kw):
        if job.path == "shop/pricing.py":  # after the walk, before the read
            target.write_text(target.read_text() + "# and more\n")
            _later(target, PAST + 500)
        return real(job, cfg, **kw)

    monkeypatch.setattr(extract, "process_file", edited_meanwhile)
    (indexed / ".dowse" / walked.WALKED).unlink()
    build_index(indexed, config=IndexConfig(embed=False, workers=1), embedder=fake_embedder)
    assert not (indexed / ".dowse" / walked.WALKED).exists()


@pytest.mark.parametrize(
    "text", ["{not json", '{"stamp": 1}', "[]", '{"stamp": [], "options": [], "seen": 5}']
)
def test_a_damaged_record_sends_the_check_to_the_walk(indexed, text):
    path = indexed / ".dowse" / walked.WALKED
    data = path.read_text()
    path.write_text(text)
    assert not _unchanged(indexed)
    seen_bad = data.replace('"seen":[', '"seen":[[1],', 1)  # an entry of the wrong shape
    path.write_text(seen_bad)
    assert not _unchanged(indexed)
