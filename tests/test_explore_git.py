"""The git explorer on a history made here: fixed authors and dates, one bulk commit, and
uncommitted changes of each kind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import git

from dowse.explore.git import git_track
from dowse.explore.tracks import Context, run_track

BULK = [f"gen/f{i:02d}.txt" for i in range(60)]
# (subject, {path: text}); each commit appends its line to the files it touches.
HISTORY = [
    ("initial", ["a.py", "b.py", "c.py", "README.md"]),
    ("a and b", ["a.py", "b.py"]),
    ("a and b again", ["a.py", "b.py"]),
    ("a and c", ["a.py", "c.py"]),
    ("bulk", ["a.py", "b.py", *BULK]),  # more than 50 files: no co-change from it
    ("b alone", ["b.py"]),
]


@pytest.fixture(autouse=True)
def _isolated(isolated_git):
    pass


def _append(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(text + "\n")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for day, (subject, paths) in enumerate(HISTORY, 1):
        for rel in paths:
            _append(root, rel, f"# {subject}")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", subject, day=day)
    _append(root, "c.py", "# edited")  # modified, not staged
    _append(root, "staged.py", "# new")
    git(root, "add", "staged.py")  # added
    _append(root, "new.py", "# untracked")
    return root


def _run(ctx: Context, focus: tuple[str, ...] = ()):
    result, output = run_track(ctx, git_track(ctx, focus))
    assert result.dropped == []
    return result, output.get("git")


def test_history_status_hot_files_and_coupling(repo):
    result, report = _run(Context(root=repo))
    assert [g.passed for g in result.gates] == [True, True, True], result.gates
    assert report.branch == "main"
    assert report.head == git(repo, "rev-parse", "HEAD").strip()
    assert [r.split(" ", 1)[1] for r in report.recent] == [
        f"2024-01-{day:02d} {subject}"
        for day, (subject, _) in reversed(list(enumerate(HISTORY, 1)))
    ]
    assert report.head.startswith(report.recent[0].split()[0])
    assert report.uncommitted == ["M c.py", "A staged.py", "?? new.py"]
    assert report.hot_files == [
        ("a.py", 5),
        ("b.py", 5),
        ("c.py", 2),
        ("README.md", 1),
        *((p, 1) for p in BULK[:6]),
    ]
    assert report.co_change == [("a.py", "b.py", 3), ("a.py", "c.py", 2)]
    hot = [f for f in result.findings if f.topic == "hot"]
    assert hot[0].claim == "a.py changed in 5 of the last 6 commits touching ."
    assert [c.ref for c in hot[0].citations] == ["a.py:1"]
    pair = next(f for f in result.findings if f.topic == "co-change")
    assert [c.ref for c in pair.citations] == ["a.py:1", "b.py:1"]
    assert "on branch main at " + report.head[:12] in result.conclusions
    assert any("1 commit touching more than 50 files" in g for g in result.gaps)


def test_focus_files_get_their_own_partners(repo):
    result, report = _run(Context(root=repo), ("c.py", "./README.md"))
    assert report.co_change == [("c.py", "a.py", 2)]
    assert any("no file changed together with README.md" in g for g in result.gaps)
    assert result.track.focus == ". (focus files: README.md, c.py)"


def test_scope_and_a_root_below_the_work_tree(repo):
    _, report = _run(Context(root=repo, scope="gen"))
    assert [r.split(" ", 2)[2] for r in report.recent] == ["bulk"]
    assert report.hot_files == [(p, 1) for p in BULK[:10]]
    assert report.co_change == [] and report.uncommitted == []

    sub = Context(root=repo / "gen")
    result, report = _run(sub)
    assert [g.passed for g in result.gates] == [True, True, True], result.gates
    assert report.hot_files == [(p.removeprefix("gen/"), 1) for p in BULK[:10]]
    assert [c.path for f in result.findings for c in f.citations][:2] == ["f00.txt", "f01.txt"]


def test_detached_head_and_make(repo):
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    ctx = Context(root=repo)
    track = git_track(ctx, ("a.py",))
    assert track.make is not None
    result, output = run_track(ctx, track.make(ctx))
    report = output["git"]
    assert report.branch is None
    assert report.recent[0].endswith(" bulk")
    assert report.co_change == [("a.py", "b.py", 3), ("a.py", "c.py", 2)]
    assert "detached HEAD at " + report.head[:12] in result.conclusions


def test_not_a_git_repository(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.py").write_text("x = 1\n")
    result, output = run_track(ctx := Context(root=tmp_path / "plain"), git_track(ctx))
    assert [(g.name, g.passed, g.ran, g.detail) for g in result.gates][0] == (
        "understood",
        False,
        True,
        "not a git repository",
    )
    assert [g.ran for g in result.gates] == [True, False, False]
    assert "git" not in output


def test_empty_repository_has_nothing_to_say(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    result, output = run_track(ctx := Context(root=root), git_track(ctx))
    assert result.gates[0].passed is False
    assert result.gates[0].detail == "a git repository with no commits and no changes"
    assert output["git"].branch == "main" and output["git"].head is None


def test_reading_leaves_the_repository_untouched(repo):
    index = repo / ".git" / "index"
    before = (index.stat().st_mtime_ns, index.read_bytes())
    os.utime(repo / "a.py")  # a stat change that `git status` would otherwise record
    _run(Context(root=repo))
    assert (index.stat().st_mtime_ns, index.read_bytes()) == before


def test_the_history_of_an_answer_is_what_changes_with_its_files_cited_by_commit(repo):
    ctx = Context(root=repo)
    result, output = run_track(ctx, git_track(ctx, ("a.py", "c.py"), co_change_only=True))
    report = output["git"]
    assert [g.passed for g in result.gates] == [True, True, True], result.gates
    # No hot files of the whole tree: only what changes together with the answer's files,
    # each pair naming the newest commits that touched both (the bulk commit not counted).
    assert report.hot_files == []
    assert report.co_change == [("a.py", "b.py", 3), ("a.py", "c.py", 2)]
    short = dict(
        reversed(line.split(" ", 1))  # type: ignore[misc]
        for line in git(repo, "log", "--format=%h %s").splitlines()
    )
    assert [(f.claim, [c.ref for c in f.citations]) for f in result.findings] == [
        (
            "a.py and b.py changed together in 3 commits (3 of 4 commits of a.py), as in "
            f"{short['a and b again']} 2024-01-03 a and b again; "
            f"{short['a and b']} 2024-01-02 a and b",
            ["a.py:1", "b.py:1"],
        ),
        (
            "a.py and c.py changed together in 2 commits (2 of 4 commits of a.py), as in "
            f"{short['a and c']} 2024-01-04 a and c; {short['initial']} 2024-01-01 initial",
            ["a.py:1", "c.py:1"],
        ),
        # The answer's own uncommitted change, at its first changed line; not the others'.
        ("c.py has uncommitted changes (M) from line 3", ["c.py:3"]),
    ]
    assert report.recent[0].split(" ", 1)[1] == "2024-01-05 bulk"


def test_an_answer_whose_files_change_alone_has_no_history_to_report(repo):
    ctx = Context(root=repo)
    result, _ = run_track(ctx, git_track(ctx, ("README.md",), co_change_only=True))
    assert result.findings == []
    assert (result.gates[0].passed, result.gates[0].detail) == (
        False,
        "no file changed together with README.md in 2 or more commits",
    )


def test_release_notes_are_no_co_change_partner(tmp_path):
    # flask's CHANGES.rst changes with every fix: as a partner it says nothing.
    root = tmp_path / "notes"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commits = [
        ["a.py", "CHANGES.rst", "changelog/1.bugfix.rst"],
        ["a.py", "CHANGES.rst", "b.py", "history.py"],
        ["a.py", "CHANGES.rst", "b.py", "history.py"],
    ]
    for day, paths in enumerate(commits, 1):
        for rel in paths:
            _append(root, rel, f"# {day}")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"change {day}", day=day)
    ctx = Context(root=root)
    _, output = run_track(ctx, git_track(ctx, ("a.py",), co_change_only=True))
    # Two source files, not the release notes that changed with a.py every time.
    assert output["git"].co_change == [("a.py", "b.py", 2), ("a.py", "history.py", 2)]
