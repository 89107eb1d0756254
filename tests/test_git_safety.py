"""An untrusted repository's git config, and GIT_* variables in dowse's environment, run
nothing and point nowhere else: one case per vector, each through the dowse code path that
runs the git command the vector rides on (the history reader, `dowse explore --depth deep`,
the eval tree sync, or the runner itself for diff-like subcommands no path uses yet).

Each case first shows the vector is live: plain git on the same repository creates the
marker file. Then dowse runs, the marker must not exist, and the feature's output is the
normal one.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit_files, git, make_tree

from dowse import git as dowse_git
from dowse.errors import EvalError, GitError
from dowse.evaluation.gittree import commit_order, git_dir_of, sync_tree
from dowse.explore.git import git_track
from dowse.explore.tracks import Context, run_track
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.commits import read_commits, source_of
from dowse.indexer.store import Store

pytestmark = pytest.mark.usefixtures("isolated_git")

CODE = "def parse(text):\n    return text\n"


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "marker"


@pytest.fixture
def touch(marker: Path) -> str:
    """A shell command creating the marker (and passing stdin through, for filters)."""
    return f"touch {shlex.quote(str(marker))}; cat"


@pytest.fixture
def script(tmp_path: Path, marker: Path) -> str:
    """An executable creating the marker, for settings that name a program."""
    path = tmp_path / "evil.sh"
    path.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(marker))}\ncat >/dev/null\n")
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Two commits of a Python file that goes through a filter and a diff driver named in
    .gitattributes (configured by each case)."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit_files(root, {"app/parse.py": CODE, ".gitattributes": "*.py filter=x diff=x\n"}, "one")
    commit_files(root, {"app/parse.py": CODE + "# two\n"}, "Parse padded text", day=2)
    return root


def plain_git(root: Path, *args: str, input: bytes | None = None, env: dict | None = None) -> None:
    subprocess.run(
        ["git", "-C", str(root), *args],
        input=input,
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


def fires(marker: Path, action: Callable[[], object]) -> None:
    """The vector is live: `action` (plain git) creates the marker; then it is removed."""
    action()
    assert marker.exists(), "the vector did not fire with plain git: the case proves nothing"
    marker.unlink()


def sign_head(root: Path, kind: str = "PGP") -> str:
    """HEAD rewritten with a (bogus) signature of `kind` (PGP or SSH): `git log
    --show-signature` hands it to gpg.program (gpg.ssh.program)."""
    raw = git(root, "cat-file", "commit", "HEAD")
    headers, _, message = raw.partition("\n\n")
    sig = f" -----BEGIN {kind} SIGNATURE-----\n \n abc\n -----END {kind} SIGNATURE-----"
    signed = f"{headers}\ngpgsig{sig}\n\n{message}"
    sha = subprocess.run(
        ["git", "-C", str(root), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=signed.encode(),
        capture_output=True,
        check=True,
    ).stdout.decode()
    git(root, "update-ref", "HEAD", sha.strip())
    return sha.strip()


def stat_dirty(root: Path) -> None:
    """Same content, new mtime: `git status` must hash the file again, through its clean
    filter."""
    os.utime(root / "app" / "parse.py", (2_000_000_000, 2_000_000_000))


# -- the history reader (`git log`) ----------------------------------------------------------


def _history_rows(root: Path) -> list[list[str]]:
    source = source_of(root)
    assert source is not None
    rows = read_commits(source, source.commit)
    assert rows is not None
    return [r["files"] for r in rows]


def test_history_does_not_run_gpg_program(repo, marker, script):
    head = sign_head(repo)
    git(repo, "config", "log.showSignature", "true")
    git(repo, "config", "gpg.program", script)
    fires(marker, lambda: plain_git(repo, "log", "-1"))
    assert _history_rows(repo) == [["app/parse.py"], ["app/parse.py"]]
    assert source_of(repo).commit == head
    assert not marker.exists()


def test_history_does_not_run_the_ssh_signature_program(repo, marker, script):
    sign_head(repo, "SSH")
    for key, value in [
        ("log.showSignature", "true"),
        ("gpg.format", "ssh"),
        ("gpg.ssh.program", script),
        ("gpg.ssh.allowedSignersFile", os.devnull),
    ]:
        git(repo, "config", key, value)
    fires(marker, lambda: plain_git(repo, "log", "-1"))
    assert _history_rows(repo) == [["app/parse.py"], ["app/parse.py"]]
    assert not marker.exists()


def test_an_index_with_history_runs_nothing(repo, marker, script, fake_embedder):
    sign_head(repo)
    git(repo, "config", "log.showSignature", "true")
    git(repo, "config", "gpg.program", script)
    build_index(repo, config=IndexConfig(embed=False), embedder=fake_embedder)
    rows = Store.open(repo / ".dowse").rows("commits", ["subject"])
    assert sorted(r["subject"] for r in rows) == ["Parse padded text", "one"]
    assert not marker.exists()


def test_history_ignores_git_config_injected_through_the_environment(
    repo, marker, script, monkeypatch
):
    sign_head(repo)
    injected = {
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "log.showSignature",
        "GIT_CONFIG_VALUE_0": "true",
        "GIT_CONFIG_KEY_1": "gpg.program",
        "GIT_CONFIG_VALUE_1": script,
    }
    fires(marker, lambda: plain_git(repo, "log", "-1", env=injected))
    for name, value in injected.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'gpg.program'='{script}'")
    assert _history_rows(repo) == [["app/parse.py"], ["app/parse.py"]]
    assert not marker.exists()


def test_history_reads_the_root_s_repository_whatever_git_dir_says(repo, tmp_path, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    commit_files(other, {"elsewhere.py": CODE}, "elsewhere")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    assert _history_rows(repo) == [["app/parse.py"], ["app/parse.py"]]


# -- the git explorer (`git status`, `git log`, ...) -----------------------------------------


def _explore_git(run, root: Path) -> dict:
    data = json.loads(run("explore", str(root), "--depth", "deep", "--json").output)
    report = data["git"]
    assert report["branch"] == "main" and report["recent"], report
    return report


def test_explore_does_not_run_core_fsmonitor(repo, marker, touch, run):
    git(repo, "config", "core.fsmonitor", touch.replace("; cat", "; echo"))
    (repo / "app" / "parse.py").write_text(CODE + "# wip\n")
    fires(marker, lambda: plain_git(repo, "status"))
    assert _explore_git(run, repo)["uncommitted"] == ["M app/parse.py"]
    assert not marker.exists()


def test_explore_does_not_run_a_clean_filter(repo, marker, touch, run):
    git(repo, "config", "filter.x.clean", touch)
    git(repo, "config", "filter.x.process", touch)
    git(repo, "config", "filter.x.required", "true")
    stat_dirty(repo)
    fires(marker, lambda: plain_git(repo, "status"))
    stat_dirty(repo)
    assert _explore_git(run, repo)["uncommitted"] == []
    assert not marker.exists()


def test_explore_does_not_run_hooks(repo, marker, script, tmp_path, run):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("post-index-change", "reference-transaction"):
        (hooks / name).write_bytes(Path(script).read_bytes())
        (hooks / name).chmod(0o755)
    git(repo, "config", "core.hooksPath", str(hooks))
    (repo / "app" / "parse.py").write_text(CODE + "# wip\n")
    # A tracked file whose stat changed and content did not: `git status` refreshes its
    # entry and so writes the index (the hook's cue) every time, not only when the
    # modified file's mtime happens to be racy against the index's.
    same = repo / ".gitattributes"
    os.utime(same, (2_000_000_000, 2_000_000_000))
    fires(marker, lambda: plain_git(repo, "status"))
    os.utime(same, (2_000_100_000, 2_000_100_000))
    assert _explore_git(run, repo)["uncommitted"] == ["M app/parse.py"]
    assert not marker.exists()


def test_explore_does_not_run_gpg_program(repo, marker, script, run):
    sign_head(repo)
    git(repo, "config", "log.showSignature", "true")
    git(repo, "config", "gpg.program", script)
    fires(marker, lambda: plain_git(repo, "log", "-1"))
    assert _explore_git(run, repo)["recent"][0].endswith("Parse padded text")
    assert not marker.exists()


def test_explore_does_not_run_a_submodule_s_clean_filter(repo, marker, touch, tmp_path, run):
    sub = tmp_path / "sub"
    sub.mkdir()
    git(sub, "init", "-q", "-b", "main")
    commit_files(sub, {"lib.py": CODE, ".gitattributes": "*.py filter=x\n"}, "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(sub), "vendor")
    git(repo, "commit", "-q", "-m", "vendor lib", day=3)
    git(repo / "vendor", "config", "filter.x.clean", touch)
    dirty = repo / "vendor" / "lib.py"
    os.utime(dirty, (2_000_000_000, 2_000_000_000))
    fires(marker, lambda: plain_git(repo, "status"))
    os.utime(dirty, (2_000_100_000, 2_000_100_000))
    assert _explore_git(run, repo)["recent"][0].endswith("vendor lib")
    assert not marker.exists()


def test_explore_ignores_fsmonitor_injected_through_the_environment(
    repo, marker, touch, run, monkeypatch
):
    injected = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": touch.replace("; cat", "; echo"),
    }
    fires(marker, lambda: plain_git(repo, "status", env=injected))
    for name, value in injected.items():
        monkeypatch.setenv(name, value)
    assert _explore_git(run, repo)["uncommitted"] == []
    assert not marker.exists()


def test_explore_reads_the_root_s_repository_whatever_git_dir_says(
    repo, tmp_path, run, monkeypatch
):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "elsewhere")
    commit_files(other, {"elsewhere.py": CODE}, "elsewhere")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    report = _explore_git(run, repo)
    assert report["recent"][0].endswith("Parse padded text") and report["uncommitted"] == []


# -- the eval tree sync (`rev-parse`, `cat-file`, `ls-tree`, `log`) --------------------------


def test_sync_does_not_fetch_from_a_promisor_remote(repo, marker, touch, tmp_path):
    """A partial clone's missing blob: plain git fetches it lazily, running the remote's
    upload-pack command; dowse fails with git's message instead."""
    git(repo, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{repo}", "clone")
    git(clone, "config", "remote.origin.uploadpack", touch.replace("; cat", "; git-upload-pack"))
    git(clone, "config", "protocol.file.allow", "always")  # beats protocol.allow
    head = git(clone, "rev-parse", "HEAD").strip()
    git_dir = git_dir_of(clone)
    with pytest.raises(EvalError, match="cat-file failed in .*could not fetch"):
        sync_tree(git_dir, head, tmp_path / "tree")
    assert not marker.exists()
    blob = git(clone, "rev-parse", "HEAD:app/parse.py").strip()
    fires(marker, lambda: plain_git(clone, "cat-file", "--batch", input=f"{blob}\n".encode()))


def test_sync_does_not_run_gpg_program_and_reads_the_named_clone(
    repo, marker, script, tmp_path, monkeypatch
):
    head = sign_head(repo)
    git(repo, "config", "log.showSignature", "true")
    git(repo, "config", "gpg.program", script)
    fires(marker, lambda: plain_git(repo, "log", "-1"))
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    commit_files(other, {"elsewhere.py": CODE}, "elsewhere")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    git_dir = git_dir_of(repo)
    assert git_dir == repo / ".git"
    assert list(commit_order(git_dir, [head])) == [head]
    kept = sync_tree(git_dir, head, tmp_path / "tree")
    assert sorted(kept) == [".gitattributes", "app/parse.py"]
    assert (tmp_path / "tree" / "app" / "parse.py").read_text() == CODE + "# two\n"
    assert not marker.exists()


def test_commit_order_names_the_commits_a_clone_lacks(repo):
    head = git(repo, "rev-parse", "HEAD").strip()
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    assert list(commit_order(repo / ".git", [head, head])) == [head]
    with pytest.raises(EvalError, match=f"lacks commit\\(s\\) {tree[:12]}, deadbeef$"):
        commit_order(repo / ".git", [head, tree, "deadbeef"])


# -- the runner itself: the diff-like subcommands --------------------------------------------


@pytest.mark.parametrize(
    "key, args, expected",
    [
        ("diff.external", ("diff",), "+# wip"),
        ("diff.x.command", ("diff",), "+# wip"),
        ("diff.x.textconv", ("diff",), "+# wip"),
        ("diff.x.textconv", ("log", "-p", "-1"), "+# two"),
        ("diff.x.textconv", ("show", "HEAD"), "+# two"),
        ("diff.x.textconv", ("blame", "app/parse.py"), ") def parse(text):"),
    ],
)
def test_diff_drivers_do_not_run(repo, marker, script, key, args, expected):
    git(repo, "config", key, script)
    (repo / "app" / "parse.py").write_text(CODE + "# wip\n")
    fires(marker, lambda: plain_git(repo, *args))
    assert expected in dowse_git.text(*args, cwd=repo)
    assert not marker.exists()


def test_git_external_diff_from_the_environment_does_not_run(repo, marker, script, monkeypatch):
    (repo / "app" / "parse.py").write_text(CODE + "# wip\n")
    fires(marker, lambda: plain_git(repo, "diff", env={"GIT_EXTERNAL_DIFF": script}))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", script)
    assert "+# wip" in dowse_git.text("diff", cwd=repo)
    assert not marker.exists()


def test_a_driver_that_cannot_be_switched_off_refuses_to_run(repo):
    git(repo, "config", "filter.a=b.clean", "touch nowhere")
    with pytest.raises(GitError, match="cannot disable"):
        dowse_git.run("status", cwd=repo)


def test_git_failures_carry_git_s_message(tmp_path):
    with pytest.raises(GitError, match="not a git repository") as caught:
        dowse_git.output("rev-parse", "HEAD", cwd=tmp_path)
    assert caught.value.returncode == 128


# -- the config is read once per repository, and again when it changes ------------------------


@pytest.fixture
def reads() -> dowse_git.ConfigReads:
    """The test's own config reads, which keep a read however recently its files changed:
    the fixtures' config files were just written, and would be read again by every call
    otherwise (`dowse.git.RACY_S`)."""
    return dowse_git.ConfigReads(racy_s=0.0)


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """A `git` on PATH that logs its arguments; each call returns the runs since the last."""
    real = shutil.which("git")
    assert real is not None
    log = tmp_path / "git.log"
    log.touch()
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(log))}\nexec {real} "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    seen = [0]

    def runs() -> list[str]:
        lines = log.read_text().splitlines()
        new, seen[0] = lines[seen[0] :], len(lines)
        return new

    return runs


def test_a_call_runs_one_git_process_once_the_config_is_read(repo, counted, reads):
    counted()
    dowse_git.text("rev-parse", "HEAD", cwd=repo, reads=reads)
    first = counted()
    assert len(first) == 2 and "--get-regexp" in first[0]
    for _ in range(3):
        assert len(dowse_git.text("rev-parse", "HEAD", cwd=repo, reads=reads)) == 41
        assert len(counted()) == 1
    # The same repository named by its git directory: the same read.
    dowse_git.text("rev-parse", "HEAD", git_dir=repo / ".git", reads=reads)
    assert len(counted()) == 1
    # Reads kept elsewhere (the process's) are not these.
    dowse_git.text("rev-parse", "HEAD", cwd=repo, reads=dowse_git.ConfigReads(racy_s=0.0))
    assert len(counted()) == 2


def test_the_git_track_reads_the_config_once(repo, counted, reads):
    ctx = Context(root=repo, depth="deep", git_reads=reads)
    counted()
    found, output = run_track(ctx, git_track(ctx))
    assert all(gate.passed for gate in found.gates), found.gates
    assert output["git"].branch == "main" and output["git"].recent
    runs = counted()
    assert len(runs) > 3 and sum("--get-regexp" in r for r in runs) == 1


def test_a_config_changed_just_before_a_read_is_read_again(repo, counted):
    reads = dowse_git.ConfigReads(racy_s=60.0)  # however slow the machine
    git(repo, "config", "core.abbrev", "12")
    counted()
    dowse_git.text("rev-parse", "HEAD", cwd=repo, reads=reads)
    dowse_git.text("rev-parse", "HEAD", cwd=repo, reads=reads)
    assert sum("--get-regexp" in r for r in counted()) == 2


def _git_finds_one(where: Path) -> bool:
    """Whether git itself, run in `where`, finds a repository."""
    done = subprocess.run(["git", "-C", str(where), "rev-parse", "--git-dir"], capture_output=True)
    return done.returncode == 0


def test_outside_any_repository_indexing_starts_no_git(tmp_path, counted, fake_embedder):
    root = make_tree(tmp_path / "plain", {"app.py": CODE})
    if not dowse_git.no_repository_at(tmp_path):
        pytest.skip(f"the temporary directory {tmp_path} lies inside a repository")
    assert dowse_git.no_repository_at(root) and not _git_finds_one(root)  # git agrees
    counted()
    config = IndexConfig(embed=False)
    assert build_index(root, config=config, embedder=fake_embedder).parsed == 1
    (root / "app.py").write_text(CODE + "\n\ndef more():\n    return 2\n")
    assert build_index(root, config=config, embedder=fake_embedder).parsed == 1
    build_index(root, config=config, embedder=fake_embedder)  # nothing to do
    assert source_of(root) is None
    assert counted() == []


@pytest.mark.parametrize(
    "how", ["work tree", "below a work tree", "gitdir file", "bare", "in a bare"]
)
def test_wherever_git_could_find_a_repository_git_is_asked(tmp_path, how):
    top = tmp_path / "top"
    top.mkdir()
    if how == "gitdir file":
        (top / ".git").write_text("gitdir: elsewhere\n")
    else:
        git(top, "init", "-q", *(["--bare"] if "bare" in how else []))
    where = top / "sub" if how in ("below a work tree", "in a bare") else top
    where.mkdir(exist_ok=True)
    assert not dowse_git.no_repository_at(where)
    assert _git_finds_one(where) == (how != "gitdir file")  # a broken one is git's to report


@pytest.mark.parametrize("where", ["repository", "include", "user", "onbranch"])
def test_a_driver_configured_after_a_read_is_switched_off(
    repo, marker, touch, tmp_path, monkeypatch, counted, reads, where
):
    extra = tmp_path / "extra.cfg"
    user = tmp_path / "user.cfg"
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user))
    if where == "include":
        git(repo, "config", "include.path", str(extra))  # not there yet
    if where == "onbranch":
        git(repo, "config", "includeIf.onbranch:other.path", str(extra))
        git(repo, "config", "--file", str(extra), "filter.x.clean", touch)
    counted()
    assert dowse_git.run("status", cwd=repo, reads=reads).returncode == 0  # no driver yet
    assert len(counted()) == 2
    if where == "repository":
        git(repo, "config", "filter.x.clean", touch)
    elif where == "include":
        git(repo, "config", "--file", str(extra), "filter.x.clean", touch)
    elif where == "user":
        git(repo, "config", "--file", str(user), "filter.x.clean", touch)
    else:
        git(repo, "checkout", "-q", "-b", "other")
    stat_dirty(repo)
    fires(marker, lambda: plain_git(repo, "status"))
    stat_dirty(repo)
    counted()
    assert dowse_git.text("status", "--porcelain", cwd=repo, reads=reads) == ""
    assert not marker.exists()
    assert sum("--get-regexp" in r for r in counted()) == 1  # read again


# -- where the work tree and the git directory are --------------------------------------------


@pytest.fixture
def other(tmp_path: Path) -> Path:
    """Another repository on the machine, whose history and files must not show."""
    path = tmp_path / "other"
    path.mkdir()
    git(path, "init", "-q", "-b", "elsewhere")
    commit_files(path, {"secret_plans.py": CODE}, "elsewhere")
    return path


def test_core_worktree_cannot_move_the_work_tree(repo, other, run):
    git(repo, "config", "core.worktree", str(other))
    (other / "outside.py").write_text(CODE)
    shown = git(repo, "status", "--porcelain", "--untracked-files=all")
    assert "outside.py" in shown, "core.worktree did not redirect plain git"
    report = _explore_git(run, repo)
    assert report["uncommitted"] == [] and report["recent"][0].endswith("Parse padded text")
    top = dowse_git.text("rev-parse", "--show-toplevel", cwd=repo).strip()
    assert Path(top) == repo.resolve()


@pytest.mark.parametrize("how", ["file", "symlink", "commondir"])
def test_a_git_redirect_out_of_the_tree_is_refused(tmp_path, other, run, how):
    root = tmp_path / "shipped"
    root.mkdir()
    (root / "app.py").write_text(CODE)
    if how == "file":
        (root / ".git").write_text(f"gitdir: {other / '.git'}\n")
    elif how == "symlink":
        (root / ".git").symlink_to(other / ".git")
    else:  # a linked worktree's git directory whose shared part is another repository
        gd = root / ".git"
        gd.mkdir()
        (gd / "HEAD").write_text("ref: refs/heads/elsewhere\n")
        (gd / "commondir").write_text(str(other / ".git") + "\n")
    shown = subprocess.run(
        ["git", "-C", str(root), "log", "--oneline"], capture_output=True, text=True
    ).stdout
    assert "elsewhere" in shown, "plain git follows the redirect: the case proves nothing"
    with pytest.raises(GitError, match="points outside the repository"):
        dowse_git.text("log", "--oneline", cwd=root)
    assert source_of(root) is None
    data = json.loads(run("explore", str(root), "--depth", "deep", "--json").output)
    assert "elsewhere" not in json.dumps(data) and "secret_plans" not in json.dumps(data)


def test_linked_worktrees_and_submodules_still_read(repo, tmp_path):
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    assert dowse_git.text("log", "-1", "--format=%s", cwd=linked).strip() == "Parse padded text"
    sub = tmp_path / "sub"
    sub.mkdir()
    git(sub, "init", "-q", "-b", "main")
    commit_files(sub, {"lib.py": CODE}, "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(sub), "vendor")
    assert (repo / "vendor" / ".git").is_file()
    assert dowse_git.text("log", "-1", "--format=%s", cwd=repo / "vendor").strip() == "lib"


def test_a_submodule_s_work_tree_is_read_once_and_again_when_it_changes(
    repo, tmp_path, counted, reads
):
    sub = tmp_path / "sub"
    sub.mkdir()
    git(sub, "init", "-q", "-b", "main")
    commit_files(sub, {"lib.py": CODE}, "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(sub), "vendor")
    vendor = repo / "vendor"
    counted()
    dowse_git.text("log", "-1", cwd=vendor, reads=reads)
    assert len(counted()) == 3  # its core.worktree, its drivers, the command
    assert dowse_git.text("log", "-1", "--format=%s", cwd=vendor, reads=reads).strip() == "lib"
    assert len(counted()) == 1
    config = repo / ".git" / "modules" / "vendor" / "config"
    git(repo, "config", "--file", str(config), "core.worktree", str(tmp_path / "elsewhere"))
    with pytest.raises(GitError, match="points outside"):
        dowse_git.text("log", "-1", cwd=vendor, reads=reads)


# -- objects from elsewhere on disk (alternates) ---------------------------------------------


@pytest.fixture
def private(tmp_path: Path) -> tuple[Path, str]:
    """Another repository on this disk, and the id of its one commit."""
    path = tmp_path / "private"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return path, commit_files(path, {"merger_plans.py": CODE}, "Private plans for the merger")


def _borrowing(root: Path, outside: Path, how: str) -> None:
    """Make the repository at `root` read objects from `outside` in the way `how` names."""
    objects = root / ".git" / "objects"
    if how == "absolute":
        (objects / "info" / "alternates").write_text(f"{outside}\n")
    elif how == "relative":
        (objects / "info" / "alternates").write_text(os.path.relpath(outside, objects) + "\n")
    elif how == "quoted":
        (objects / "info" / "alternates").write_text(f'"{outside}"\n')
    elif how == "chained":  # inside the tree first, then out
        inner = root / "vendor" / "objects"
        (inner / "info").mkdir(parents=True)
        (inner / "info" / "alternates").write_text(f"# shared\n{outside}\n")
        (objects / "info" / "alternates").write_text("../../vendor/objects\n")
    else:  # the object directory itself behind a symlink
        shutil.rmtree(objects)
        objects.symlink_to(outside)


@pytest.mark.parametrize("how", ["absolute", "relative", "quoted", "chained", "symlink"])
def test_objects_outside_the_repository_are_not_read(tmp_path, private, run, fake_embedder, how):
    """A shipped repository whose ref names another repository's commit, reachable
    through alternates (or a symlinked objects/): plain git shows that commit; dowse's
    git refuses the repository, so history and explore read none of it."""
    other, sha = private
    root = tmp_path / "shipped"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit_files(root, {"app.py": CODE}, "one")
    _borrowing(root, other / ".git" / "objects", how)
    (root / ".git" / "refs" / "heads" / "main").write_text(sha + "\n")
    shown = subprocess.run(
        ["git", "-C", str(root), "log", "--format=%s"], capture_output=True, text=True
    ).stdout
    assert "Private plans" in shown, "plain git did not borrow: the case proves nothing"
    with pytest.raises(GitError, match="makes git read objects outside the repository"):
        dowse_git.text("log", "--format=%s", cwd=root)
    with pytest.raises(GitError, match="makes git read objects outside the repository"):
        dowse_git.text("log", "--format=%s", git_dir=root / ".git")
    assert source_of(root) is None
    build_index(root, embedder=fake_embedder, config=IndexConfig(embed=False))
    rows = Store.open(root / ".dowse").rows("commits")
    assert not any("Private plans" in json.dumps(r, default=str) for r in rows)
    data = json.dumps(json.loads(run("explore", str(root), "--depth", "deep", "--json").output))
    assert "Private plans" not in data and "merger_plans" not in data


def test_alternates_inside_the_repository_still_read(repo, tmp_path):
    """A repository that keeps objects in a second directory of its own (a vendored
    object store, chained) reads as usual."""
    objects = repo / ".git" / "objects"
    inner = repo / "vendor" / "objects"
    shutil.copytree(objects, inner)
    shutil.rmtree(objects)
    (objects / "info").mkdir(parents=True)
    (objects / "info" / "alternates").write_text("../../vendor/objects\n")
    assert dowse_git.text("log", "-1", "--format=%s", cwd=repo).strip() == "Parse padded text"
    assert source_of(repo) is not None


def test_an_alternates_fifo_is_refused_without_blocking(repo):
    os.mkfifo(repo / ".git" / "objects" / "info" / "alternates")
    with pytest.raises(GitError, match="is not a small regular file"):
        dowse_git.text("log", "-1", cwd=repo)


def test_alternates_from_the_environment_and_http_alternates_are_not_read(
    repo, private, monkeypatch, run
):
    other, sha = private
    outside = str(other / ".git" / "objects")
    env = {**os.environ, "GIT_ALTERNATE_OBJECT_DIRECTORIES": outside}
    found = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", sha], env=env, check=False)
    assert found.returncode == 0, "the variable did not reach plain git: the case proves nothing"
    monkeypatch.setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", outside)
    assert dowse_git.run("cat-file", "-e", sha, cwd=repo).returncode != 0
    # http-alternates is read only by a fetch over HTTP, which dowse never makes: a
    # listener it names hears nothing while history and explore run.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        (repo / ".git" / "objects" / "info" / "http-alternates").write_text(
            f"http://127.0.0.1:{port}/objects\n"
        )
        assert _history_rows(repo)
        _explore_git(run, repo)
        with pytest.raises(BlockingIOError):
            listener.accept()
