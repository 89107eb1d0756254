"""Git clones and work trees for evaluation: read a commit's files straight from a clone
(bare or not) and sync a work tree to it.

Invariants: the clone is only read, never written; `sync_tree` writes only files whose
content differs and deletes only files the commit lacks, so unchanged files keep their
mtimes and an incremental index does little work; blobs absent from the clone (large
files a snapshot left out) are skipped.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from dowse import git as run_git
from dowse.errors import EvalError, GitError

__all__ = ["clone_for", "commit_order", "git", "git_dir_of", "missing_commits", "sync_tree"]


def git(git_dir: Path, *args: str, input: bytes | None = None) -> bytes:
    """git's stdout, through the one runner; EvalError when git is missing or fails."""
    try:
        return run_git.output(*args, git_dir=git_dir, input=input)
    except GitError as exc:
        if exc.returncode is None:
            raise EvalError(str(exc)) from None
        raise EvalError(f"git {args[0]} failed in {git_dir}: {exc}") from None


def git_dir_of(path: Path) -> Path:
    """The git directory of a clone, bare or not."""
    if not path.is_dir():
        raise EvalError(f"no git repository at {path}")
    try:
        out = run_git.text("rev-parse", "--absolute-git-dir", cwd=path)
    except GitError as exc:
        if exc.returncode is None:
            raise EvalError(str(exc)) from None
        raise EvalError(f"not a git repository: {path}") from None
    return Path(out.strip())


def clone_for(repos: Path, repo: str) -> Path:
    """The git directory of `repo`'s clone in `repos`, named `<owner>__<name>`; GitHub
    names are case-insensitive, so is the match when the exact name is absent (a dataset
    spells `fasterxml/jackson-core`, the clone `FasterXML__jackson-core`)."""
    name = repo.replace("/", "__")
    path = repos / name
    if not path.exists() and repos.is_dir():
        same = [p for p in sorted(repos.iterdir()) if p.name.lower() == name.lower()]
        path = same[0] if len(same) == 1 else path
    if not path.exists():
        raise EvalError(f"no clone of {repo} at {path} (expected a clone named {name})")
    return git_dir_of(path)


def missing_commits(git_dir: Path, commits: Sequence[str]) -> list[str]:
    """The commits of `commits` the clone lacks (each once, in order)."""
    unique = list(dict.fromkeys(commits))
    # One process for all of them: each line answers "commit", or "<name> missing".
    asked = "".join(f"{c}^{{commit}}\n" for c in unique).encode()
    found = git(git_dir, "cat-file", "--batch-check=%(objecttype)", input=asked).decode()
    missing = [c for c, kind in zip(unique, found.splitlines(), strict=False) if kind != "commit"]
    return missing + unique[len(found.splitlines()) :]


def commit_order(git_dir: Path, commits: Sequence[str]) -> dict[str, int]:
    """commit -> committer timestamp; every commit must be in the clone."""
    unique = list(dict.fromkeys(commits))
    if missing := missing_commits(git_dir, unique):
        raise EvalError(f"{git_dir} lacks commit(s) {', '.join(c[:12] for c in missing)}")
    out = git(git_dir, "log", "--no-walk=unsorted", "--format=%H %ct", *unique).decode()
    stamps = {}
    for line in out.splitlines():
        sha, ts = line.split()
        stamps[sha] = int(ts)
    return {c: stamps.get(c, 0) for c in unique}


def listing(git_dir: Path, commit: str) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob sha) of every file in the commit's tree (submodules left out)."""
    out: dict[str, tuple[str, str]] = {}
    for entry in git(git_dir, "ls-tree", "-r", "-z", commit).split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.decode().split()
        if kind == "blob":
            out[path.decode("utf-8", "surrogateescape")] = (mode, sha)
    return out


def read_blobs(git_dir: Path, shas: Sequence[str]) -> dict[str, bytes]:
    """Blob contents by sha, one `git cat-file --batch`; blobs absent from the clone are
    left out."""
    if not shas:
        return {}
    data = git(git_dir, "cat-file", "--batch", input="\n".join(shas).encode() + b"\n")
    out: dict[str, bytes] = {}
    pos = 0
    while pos < len(data):
        end = data.index(b"\n", pos)
        header = data[pos:end].decode().split()
        pos = end + 1
        if len(header) < 3 or header[1] != "blob":
            continue  # "<sha> missing"
        size = int(header[2])
        out[header[0]] = data[pos : pos + size]
        pos += size + 1
    return out


STATE_FILE = "tree.json"


def sync_tree(git_dir: Path, commit: str, tree: Path) -> dict[str, str]:
    """Make `tree` hold the files of `commit`, writing only what differs from the commit
    it held before; returns path -> blob sha of the files written or kept.

    The blob shas of the synced tree are kept in a state file next to it. It is removed
    before the tree is touched and written back after, so an interrupted sync leads to a
    full rewrite, never to a tree trusted to hold what it does not.
    """
    state_path = tree.parent / STATE_FILE
    try:
        old: dict[str, str] = json.loads(state_path.read_text())
    except (OSError, ValueError):
        old = {}
        shutil.rmtree(tree, ignore_errors=True)
    state_path.unlink(missing_ok=True)
    tree.mkdir(parents=True, exist_ok=True)
    new = listing(git_dir, commit)
    for path in old.keys() - new.keys():
        (tree / path).unlink(missing_ok=True)
    todo = {p: ms for p, ms in new.items() if old.get(p) != ms[1] or not os.path.lexists(tree / p)}
    blobs = read_blobs(git_dir, sorted({sha for _, sha in todo.values()}))
    kept = {p: sha for p, (_, sha) in new.items() if p not in todo}
    for path, (mode, sha) in todo.items():
        target = tree / path
        content = blobs.get(sha)
        if os.path.lexists(target) or target.is_dir():
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()
        if content is None:
            continue  # absent from the clone
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            os.symlink(content.decode("utf-8", "surrogateescape"), target)
        else:
            target.write_bytes(content)
            if mode == "100755":
                target.chmod(0o755)
        kept[path] = sha
    prune_empty_dirs(tree)
    state_path.write_text(json.dumps(kept))
    return kept


def prune_empty_dirs(tree: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(tree, topdown=False):
        if not dirnames and not filenames and Path(dirpath) != tree:
            try:
                os.rmdir(dirpath)
            except OSError:
                pass


# -- methods ---------------------------------------------------------------------------
