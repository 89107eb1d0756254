"""The commits table: the history's messages and files, read incrementally, searched by
`files_by_history`, and fused into `ask`'s file ranking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import commit_files, git

from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.commits import MAX_FILES, HistorySource, read_commits, source_of
from dowse.indexer.store import MANIFEST, Store
from dowse.retrieval.ask import _files
from dowse.retrieval.file_ranking import files_by_history
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.lookups import IndexLookups
from dowse.retrieval.query import analyze

pytestmark = pytest.mark.usefixtures("isolated_git")

DATES = "def parse_date(text):\n    return text\n"
ZONES = "def to_zone(moment, zone):\n    return moment\n"


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commits = [
        commit_files(
            root,
            {
                "cal/dates.py": DATES,
                "cal/zones.py": ZONES,
                "README.md": "# cal\n",
                ".gitignore": ".dowse/\n",
            },
            "Start the calendar",
            1,
        ),
        commit_files(
            root,
            {
                "cal/dates.py": DATES.replace("text\n", "text.strip()\n"),
                "tests/test_dates.py": "def test_parse():\n    pass\n",
            },
            "Fixed parse_date crash on padded input\n\nLeading spaces broke it.",
            2,
        ),
        commit_files(
            root,
            {"cal/zones.py": ZONES.replace("moment\n", "moment.astimezone(zone)\n")},
            "to_zone: daylight saving offsets honoured",
            3,
        ),
        commit_files(
            root,
            {f"gen/m{i}.py": "x = 1\n" for i in range(MAX_FILES + 1)},
            "Regenerate the padded tables",
            4,
        ),
        commit_files(root, {"notes.bin": "\x00"}, "Padded binary notes", 5),
    ]
    return root, commits


def _rows(index_dir: Path) -> list[dict]:
    return Store.open(index_dir).rows("commits", ["id", "subject", "files"])


def test_read_commits_keeps_small_commits_of_known_files(repo):
    root, commits = repo
    source = source_of(root)
    assert source == HistorySource(source.git_dir, commits[-1], "")
    rows = read_commits(source, commits[-1])
    # Newest first; the sweeping commit and the one without a known file are left out.
    assert [r["id"] for r in rows] == [commits[2], commits[1], commits[0]]
    assert rows[1]["subject"] == "Fixed parse_date crash on padded input"
    assert rows[1]["files"] == ["cal/dates.py", "tests/test_dates.py"]
    assert "leading" in rows[1]["tokens"].split()  # the body is searched too
    assert [r["id"] for r in read_commits(source, commits[-1], since=commits[1])] == [commits[2]]


def test_paths_are_relative_to_an_indexed_subdirectory(repo):
    root, commits = repo
    source = source_of(root / "cal")
    assert source is not None and source.prefix == "cal/"
    rows = read_commits(source, commits[-1])
    assert [r["files"] for r in rows] == [["zones.py"], ["dates.py"], ["dates.py", "zones.py"]]


def test_index_keeps_the_history_incrementally(repo, fake_embedder):
    root, commits = repo
    index_dir = root / ".dowse"
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert Store.read_manifest(index_dir).history == commits[-1]
    assert {r["id"] for r in _rows(index_dir)} == set(commits[:3])

    new = commit_files(root, {"cal/zones.py": ZONES}, "Revert the daylight saving change", 6)
    stats = build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert stats.parsed == 1 and Store.read_manifest(index_dir).history == new
    assert sorted(r["id"] for r in _rows(index_dir)) == sorted([*commits[:3], new])

    # Only the history moved (a commit without a change to the tree): still read.
    git(root, "commit", "-q", "--allow-empty", "-m", "Nothing changed", day=7)
    only = git(root, "rev-parse", "HEAD").strip()
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert Store.read_manifest(index_dir).history == only

    # Back to an older commit: the history is read again, without what came after.
    git(root, "reset", "-q", "--hard", commits[1])
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert sorted(r["id"] for r in _rows(index_dir)) == sorted(commits[:2])

    build_index(root, config=IndexConfig(embed=False, history=False), embedder=fake_embedder)
    assert Store.read_manifest(index_dir).history == "" and _rows(index_dir) == []


def test_no_history_is_recorded_when_nothing_else_changed(tmp_path, fake_embedder):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text(DATES)
    build_index(plain, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert not Store.read_manifest(plain / ".dowse").no_history
    build_index(plain, config=IndexConfig(embed=False, history=False), embedder=fake_embedder)
    assert Store.read_manifest(plain / ".dowse").no_history


def test_a_named_source_and_no_repository(repo, tmp_path, fake_embedder):
    root, commits = repo
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text(DATES)
    assert source_of(plain) is None
    build_index(plain, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert Store.read_manifest(plain / ".dowse").history == ""
    assert files_by_history(IndexLookups(Store.open(plain / ".dowse")), analyze("parse_date")) == []

    # An export of the repository, its history named (as `dowse eval` does).
    source = HistorySource(source_of(root).git_dir, commits[1])
    build_index(
        plain, config=IndexConfig(embed=False, history_source=source), embedder=fake_embedder
    )
    assert {r["id"] for r in _rows(plain / ".dowse")} == set(commits[:2])


def test_an_index_from_before_the_commits_table_reads_and_upgrades(repo, fake_embedder):
    root, commits = repo
    index_dir = root / ".dowse"
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    manifest = json.loads((index_dir / MANIFEST).read_text())
    del manifest["versions"]["commits"], manifest["history"]
    (index_dir / MANIFEST).write_text(json.dumps(manifest))
    store = Store.open(index_dir)
    store.verify()
    assert not store.has_table("commits")
    assert files_by_history(IndexLookups(store), analyze("parse_date padded")) == []

    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert {r["id"] for r in _rows(index_dir)} == set(commits[:3])


def test_files_by_history_ranks_the_files_of_matching_commits(repo, fake_embedder):
    root, commits = repo
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    searcher = HybridSearcher.open(root / ".dowse")
    ranked = files_by_history(searcher.lookups, analyze("parse_date crashes on padded strings"))
    # Tests only when the question is about them; gen/ files are not in a kept commit.
    assert [p for p, _ in ranked] == ["cal/dates.py"]
    assert ranked[0][1][0] == {
        "id": commits[1],
        "subject": "Fixed parse_date crash on padded input",
    }
    about_tests = files_by_history(searcher.lookups, analyze("the tests for parse_date padded"))
    assert "tests/test_dates.py" in [p for p, _ in about_tests]
    # A file the index no longer has is not listed.
    commit_files(root, {"cal/dates.py": None}, "Drop dates", 8)
    build_index(root, config=IndexConfig(embed=False, history=False), embedder=fake_embedder)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    searcher = HybridSearcher.open(root / ".dowse")
    assert files_by_history(searcher.lookups, analyze("parse_date padded")) == []


def test_ask_lifts_listed_files_by_history_and_cites_the_commits():
    by_words = [(p, {"start_line": 1, "end_line": 2}) for p in ("a.py", "b.py")]
    commit = {"id": "0123456789abcdef", "subject": "Fixed b"}
    plain = [f.path for f in _files([], by_words)]
    lifted = _files([], by_words, by_history=[("b.py", [commit]), ("c.py", [commit])])
    assert plain == ["a.py", "b.py"]
    # b.py is lifted above a.py; c.py, which only the history names, is not listed.
    assert [f.path for f in lifted] == ["b.py", "a.py"]
    assert lifted[0].history_rank == 0 and lifted[0].commits == ["0123456789ab Fixed b"]
    assert lifted[1].history_rank is None and lifted[1].commits == []


def test_cli_status_shows_the_history_and_no_history_is_remembered(repo, fake_embedder, run):
    root, commits = repo
    run("index", str(root), "--quiet", "--no-embed")
    assert f"history    3 commits, read at {commits[-1][:12]}" in run("status", str(root)).output
    run("index", str(root), "--quiet", "--no-history")
    run("index", str(root), "--quiet")  # remembered
    status = json.loads(run("status", str(root), "--json").output)
    assert status["commits"] == 0 and status["history"] == ""
    assert "history    none" in run("status", str(root)).output
    run("index", str(root), "--quiet", "--history")
    assert json.loads(run("status", str(root), "--json").output)["commits"] == 3


def test_ask_json_cites_the_commits_of_a_lifted_file(repo, fake_embedder, run):
    root, commits = repo
    run("index", str(root), "--quiet", "--no-embed")
    out = json.loads(
        run("ask", "parse_date crashes on padded input", "--path", str(root), "--json").output
    )
    dates = next(f for f in out["files"] if f["path"] == "cal/dates.py")
    assert dates["history_rank"] == 0
    assert dates["commits"] == [f"{commits[1][:12]} Fixed parse_date crash on padded input"]


def test_ask_markdown_names_the_past_change(repo, fake_embedder, run):
    root, commits = repo
    run("index", str(root), "--quiet", "--no-embed")
    text = run("ask", "parse_date crashes on padded input", "--path", str(root)).output
    line = next(x for x in text.splitlines() if x.startswith("- `cal/dates.py`"))
    assert line.endswith(f"; changed by {commits[1][:12]} Fixed parse_date crash on padded input")


def test_a_history_without_a_qualifying_commit_is_searched_as_none(tmp_path, fake_embedder, run):
    root = tmp_path / "big"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    head = commit_files(
        root,
        {f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(MAX_FILES + 1)},
        "Start with many modules",
        1,
    )
    run("index", str(root), "--quiet", "--no-embed")
    assert Store.read_manifest(root / ".dowse").history == head and _rows(root / ".dowse") == []
    assert files_by_history(IndexLookups(Store.open(root / ".dowse")), analyze("modules f3")) == []
    out = json.loads(run("ask", "where is f3 defined?", "--path", str(root), "--json").output)
    assert out["files"][0]["path"] == "m3.py"


def test_a_first_read_goes_back_at_most_max_commits(repo):
    root, commits = repo
    source = source_of(root)
    # The last three commits, of which one qualifies; a later read since one is unlimited.
    assert [r["id"] for r in read_commits(source, commits[-1], limit=3)] == [commits[2]]
    assert len(read_commits(source, commits[-1], since=commits[0], limit=1)) == 2
