"""Racily clean files: an edit that keeps a file's size and mtime, made within the
timestamp tick in which a run read it (an editor saving twice quickly while `dowse serve`
refreshes), is indexed by the next run, whichever way that run goes (a full run, after a
settled record, after a no-op record), as git does for its "racily clean" entries."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import written_before

from dowse.indexer import noop, settled
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.store import Retention, Store

AT_ONCE = Retention(grace=timedelta(0))
"""No grace period after a commit: a run's settled record is usable at once."""

REQUEST = {"index_dir": "", "exclude": None, "embedder": "fake"}


def _index(repo: Path, embedder):
    config = IndexConfig(retention=AT_ONCE)
    return build_index(repo, config=config, embedder=embedder, request=REQUEST)


def _answer(repo: Path):
    return noop.answer(repo.resolve(), repo.resolve() / ".dowse", REQUEST)


def _names(repo: Path) -> set[str]:
    rows = Store.open(repo / ".dowse").rows("symbols", ["path", "name"])
    return {r["name"] for r in rows if r["path"] == "shop/pricing.py"}


def _write_fresh(repo: Path) -> Path:
    """shop/pricing.py with a new function, written now and dated an hour ahead: within
    `RACY_NS` of every run's walk however slow the machine, as a file just written is to
    a run that reads it at once."""
    target = repo / "shop" / "pricing.py"
    target.write_text(target.read_text() + "\n\ndef alpha_one() -> int:\n    return 1\n")
    ahead = time.time_ns() + 3600 * 10**9
    os.utime(target, ns=(ahead, ahead))
    return target


def _edit_within_the_tick(target: Path) -> None:
    """The same number of bytes, and the mtime set back: what an edit within the tick
    in which the last run read the file looks like to a stat."""
    st = target.stat()
    target.write_text(target.read_text().replace("alpha_one", "omega_two"))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (target.stat().st_size, target.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def _indexes_the_edit(repo: Path, embedder) -> None:
    stats = _index(repo, embedder)
    assert stats.parsed == 1
    names = _names(repo)
    assert "omega_two" in names and "alpha_one" not in names


@pytest.fixture
def racy(example_repo, fake_embedder) -> Path:
    """The example indexed, then shop/pricing.py edited and indexed at once."""
    _index(example_repo, fake_embedder)
    _write_fresh(example_repo)
    assert _index(example_repo, fake_embedder).parsed == 1
    assert "alpha_one" in _names(example_repo)
    return example_repo


def test_a_full_run_reads_a_racy_file_again(racy, fake_embedder):
    _edit_within_the_tick(racy / "shop" / "pricing.py")
    _indexes_the_edit(racy, fake_embedder)


def test_a_racy_file_read_again_unchanged_is_not_parsed(racy, fake_embedder):
    stats = _index(racy, fake_embedder)
    assert (stats.parsed, stats.unchanged, stats.embedded) == (0, stats.files, 0)


def test_no_settled_record_while_a_file_is_racy(racy, fake_embedder):
    # A run that finds nothing to do would leave the settled record, by which the next
    # run answers from stats alone.
    _index(racy, fake_embedder)
    manifest = Store.read_manifest(racy / ".dowse")
    assert settled.load(racy / ".dowse", manifest, {}, now=time.time(), grace=timedelta(0)) is None
    _edit_within_the_tick(racy / "shop" / "pricing.py")
    _indexes_the_edit(racy, fake_embedder)


def test_no_noop_answer_while_a_file_is_racy(racy, fake_embedder):
    _index(racy, fake_embedder)
    _index(racy, fake_embedder)  # where the no-op record would be written
    _edit_within_the_tick(racy / "shop" / "pricing.py")
    assert _answer(racy) is None
    _indexes_the_edit(racy, fake_embedder)


def test_once_the_file_is_safely_old_the_quick_paths_return(racy, fake_embedder):
    written_before(racy / "shop" / "pricing.py")
    assert _index(racy, fake_embedder).parsed == 0  # read again, its row no longer racy
    _index(racy, fake_embedder)  # the settled record
    _index(racy, fake_embedder)  # answered from it: the no-op record
    assert _answer(racy) is not None
