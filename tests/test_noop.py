"""The no-op `dowse index` answered before the writer loads (`indexer.noop`): the same
report as the run, and never where a run would find something to do."""

from __future__ import annotations

import fcntl
import functools
import json
import os
import re
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import commit_files, fresh_python, git

from dowse.indexer import build as build_module
from dowse.indexer import noop
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.store import Retention
from dowse.indexer.walk import WalkConfig

AT_ONCE = Retention(grace=timedelta(0))
"""No grace period after the last commit: a run's records are usable at once."""


REQUEST = {"index_dir": "", "exclude": None, "embedder": "fake"}
"""A caller's request; `noop` compares it, it does not read it."""


def _index(repo: Path, embedder, request=REQUEST, **kw):
    config = IndexConfig(retention=AT_ONCE, **kw)
    return build_index(repo, config=config, embedder=embedder, request=request)


def _answer(repo: Path, request=REQUEST):
    return noop.answer(repo.resolve(), repo.resolve() / ".dowse", request)


def _report(stats) -> dict:
    return stats.model_dump(mode="json", exclude={"seconds"})


@pytest.fixture
def recorded(tmp_path, indexed_examples, fake_embedder):
    """The example after two runs that found nothing to do: the second wrote the record."""
    repo = indexed_examples.copy(tmp_path / "example")
    _index(repo, fake_embedder)  # the settled record
    stats = _index(repo, fake_embedder)  # answered from it: the idle record
    assert (repo / ".dowse" / noop.IDLE).is_file()
    found = _answer(repo)
    assert found is not None
    assert {k: v for k, v in found.items() if k != "seconds"} == _report(stats)
    return repo


def test_the_answer_is_the_runs_report(recorded, fake_embedder):
    found = _answer(recorded)
    stats = _index(recorded, fake_embedder)
    assert found is not None and found["parsed"] == 0 and found["unchanged"] == found["files"] > 0
    assert {k: v for k, v in found.items() if k != "seconds"} == _report(stats)
    assert set(found["seconds"]) == set(stats.seconds)


def _source(repo: Path) -> Path:
    return repo / "shop" / "pricing.py"


def _cut_short(repo: Path) -> None:
    data = next((repo / ".dowse" / "db").glob("symbols*.lance")) / "data"
    target = next(data.glob("*.lance"))
    with open(target, "r+b") as fh:
        fh.truncate(target.stat().st_size - 4)


def _interrupted(repo: Path) -> None:
    # A run that wrote a table's version and data past the manifest, then died.
    table = next((repo / ".dowse" / "db").glob("files*.lance"))
    (table / "_versions" / "99.manifest").write_bytes(b"")
    (table / "data" / "stray.lance").write_bytes(b"LANC")


def _edit_record(repo: Path, **values) -> None:
    path = repo / ".dowse" / noop.IDLE
    path.write_text(json.dumps({**json.loads(path.read_text()), **values}))


CHANGES = {
    # the tree
    "edit": lambda repo: _source(repo).write_text(_source(repo).read_text() + "\n# more\n"),
    "same size": lambda repo: (
        _source(repo).write_text(_source(repo).read_text().replace("def ", "def_", 1)),
        os.utime(_source(repo), ns=(0, _source(repo).stat().st_mtime_ns + 10**9)),
    ),
    "touch": lambda repo: os.utime(_source(repo), ns=(0, _source(repo).stat().st_mtime_ns + 1)),
    "delete": lambda repo: _source(repo).unlink(),
    "add": lambda repo: (repo / "shop" / "later.py").write_text("def later():\n    return 2\n"),
    "ignore rules": lambda repo: (repo / ".dowseignore").write_text("shop/pricing.py\n"),
    # the index
    "interrupted run": _interrupted,
    "file cut short": _cut_short,
    "commit": lambda repo: (repo / ".dowse" / "manifest.json").write_text(
        (repo / ".dowse" / "manifest.json").read_text().replace('"updated": ', '"updated": 1')
    ),
    "walk record": lambda repo: (repo / ".dowse" / "walked.json").write_text("{}"),
    "damaged record": lambda repo: (repo / ".dowse" / noop.IDLE).write_text("{not json"),
    "record of another layout": lambda repo: _edit_record(repo, format=0),
    "settled record": lambda repo: (repo / ".dowse" / "settled.json").write_text("{}"),
    # written by another dowse: of another index format, or other code
    "another index format": lambda repo: _edit_record(repo, index_format=0),
    "another dowse": lambda repo: _edit_record(repo, code=[]),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_any_change_is_no_answer(recorded, change):
    CHANGES[change](recorded)
    assert _answer(recorded) is None


@pytest.mark.parametrize("change", ["edit", "same size", "delete", "add", "ignore rules"])
def test_the_run_no_answer_left_to_it_indexes_the_change(recorded, fake_embedder, change):
    CHANGES[change](recorded)
    assert _answer(recorded) is None
    stats = _index(recorded, fake_embedder)
    assert stats.parsed + stats.deleted + stats.renamed == 1
    assert _answer(recorded) is None  # the run committed: its record is stale


def test_another_request_is_no_answer(recorded):
    assert _answer(recorded, {**REQUEST, "exclude": ["docs/"]}) is None
    assert _answer(recorded, {"index_dir": "", "exclude": None}) is None


def test_another_signing_key_is_no_answer(recorded, monkeypatch, tmp_path):
    # The manifest's signature is checked under this user's key; another key (another
    # DOWSE_CACHE_DIR, or the key made anew) may not vouch for it.
    monkeypatch.setenv("DOWSE_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert _answer(recorded) is None


def test_a_writer_at_work_is_no_answer(recorded):
    fd = os.open(recorded / ".dowse" / "write.lock", os.O_RDWR)
    try:
        # flock locks are per open file: this one stands for another process's.
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert _answer(recorded) is None
    finally:
        os.close(fd)
    assert _answer(recorded) is not None


def test_a_run_of_other_options_records_nothing(recorded, fake_embedder):
    (recorded / ".dowse" / noop.IDLE).unlink()
    _index(recorded, fake_embedder, request=None)
    assert not (recorded / ".dowse" / noop.IDLE).exists()
    # A run under other options is a run that does work, and records nothing either.
    _index(recorded, fake_embedder, walk=WalkConfig(exclude=("docs/",)))
    assert _answer(recorded) is None


def test_no_answer_once_a_writer_has_something_to_drop(example_repo, fake_embedder):
    # Within the grace period after a commit the record answers; from the moment the
    # writer's start would prune what the commit replaced, the run goes the whole way.
    config = IndexConfig(retention=Retention())
    for _ in range(3):  # commits, then finds nothing to do, then is answered: records
        build_index(example_repo, config=config, embedder=fake_embedder, request=REQUEST)
    until = json.loads((example_repo / ".dowse" / noop.IDLE).read_text())["until"]
    assert until is not None
    at = functools.partial(noop.answer, example_repo.resolve(), example_repo.resolve() / ".dowse")
    assert at(REQUEST, clock=lambda: until - 1) is not None
    assert at(REQUEST, clock=lambda: until) is None


@pytest.mark.usefixtures("isolated_git")
def test_a_new_commit_is_no_answer(tmp_path, fake_embedder):
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit_files(repo, {"app.py": "def main():\n    return 1\n"}, "First")
    for _ in range(3):
        _index(repo, fake_embedder)
    assert _answer(repo) is not None
    git(repo, "commit", "-q", "--allow-empty", "-m", "Nothing in the tree", day=2)
    assert _answer(repo) is None
    for _ in range(3):  # reads the commit, then finds nothing to do twice
        _index(repo, fake_embedder)
    assert _answer(repo) is not None


_LINE = re.compile(r" in \d+\.\ds -> ")


def test_the_cli_prints_the_runs_line_and_imports_no_writer(
    tmp_path, indexed_examples, fake_embedder, run, monkeypatch
):
    repo = indexed_examples.copy(tmp_path / "example")
    monkeypatch.setattr(
        build_module, "IndexConfig", functools.partial(IndexConfig, retention=AT_ONCE)
    )
    run("index", str(repo))  # the settled record
    ran = run("index", str(repo)).stdout  # answered from it: the idle record

    def no_run(*args, **kwargs):
        raise AssertionError("the run was not needed")

    monkeypatch.setattr(build_module, "build_index", no_run)
    answered = run("index", str(repo)).stdout
    assert _LINE.sub(" in -> ", answered) == _LINE.sub(" in -> ", ran)

    code = (
        "import contextlib, io, json, sys\n"
        "from dowse.cli import main\n"
        f"sys.argv = ['dowse', 'index', {str(repo)!r}]\n"
        "out = io.StringIO()\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(out):\n"
        "    main()\n"
        "heavy = ('pydantic', 'lancedb', 'pyarrow', 'numpy', 'tree_sitter', 'pathspec',\n"
        "         'rich', 'dowse.indexer.build', 'dowse.indexer.store')\n"
        "print(json.dumps([out.getvalue(), [m for m in heavy if m in sys.modules]]))"
    )
    printed, heavy = fresh_python(code, repo)
    assert heavy == []
    assert _LINE.sub(" in -> ", printed) == _LINE.sub(" in -> ", ran)
