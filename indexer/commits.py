"""The repository's history as evidence: each commit's message and the files it changed.

A bug report reads like the messages of the commits that fixed earlier bugs in the same
code ("Fixed #30227 -- Fixed QuerySet.none() on combined queries" beside "QuerySet.none()
on combined queries returns all results"), so the files of the commits whose messages
match a question best are a ranking of their own, independent of the code's text
(RESULTS-eval.md section 17). `dowse index` keeps one row per non-merge commit of the
indexed commit's history that changed 1 to `MAX_FILES` files of a known language: its
hash, time, subject, the token column of its whole message, and those files, as paths
of the index (relative to the indexed root).

Where the history comes from (`HistorySource`): by default the git repository the root
lies in, at its HEAD; `dowse eval` names a clone and a commit instead, since the trees it
indexes are exports without a `.git`. No repository, no git, or a repository without
commits: no history, and nothing else changes.

A message is redacted (`indexer.secrets`) before its subject and tokens are kept: a
token pasted into a commit message is neither stored nor shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dowse import git
from dowse.errors import GitError
from dowse.indexer.secrets import redact
from dowse.languages import language_for
from dowse.tokens import token_text

__all__ = [
    "MAX_COMMITS",
    "MAX_FILES",
    "HistorySource",
    "is_ancestor",
    "read_commits",
    "resolve",
    "source_of",
    "update",
]

MAX_FILES = 10
"""A commit changing more files is a sweeping change (a rename, a reformatting, a
vendored update): what its message says is about none of them in particular."""
MAX_COMMITS = 100_000
"""The most recent commits a first read goes through (django has 33k, sympy 60k; a
kernel-sized history would take minutes and its oldest messages are about code long
gone). Later runs add what came since, without a limit."""
_MESSAGE_CHARS = 4000


@dataclass(frozen=True)
class HistorySource:
    """A commit of a git repository, and where the indexed root lies inside it."""

    git_dir: Path
    commit: str
    prefix: str = ""
    """The root's path inside the repository, with a trailing slash ("" at the top)."""


def _text(source: HistorySource, *args: str) -> str | None:
    """git's output, or None when git is missing or the command fails."""
    try:
        return git.text(*args, git_dir=source.git_dir)
    except GitError:
        return None


def source_of(root: Path) -> HistorySource | None:
    """The repository `root` lies in, at its HEAD; None outside a repository with commits."""
    if git.no_repository_at(root):
        return None  # no git process started to hear that there is none
    try:
        out = git.text(
            "rev-parse", "--absolute-git-dir", "--show-prefix", "--verify", "-q", "HEAD", cwd=root
        )
    except GitError:
        return None
    lines = out.splitlines()
    if len(lines) != 3:
        return None
    git_dir, prefix, head = lines
    return HistorySource(Path(git_dir), head, prefix)


def resolve(source: HistorySource) -> str | None:
    """The full hash of the source's commit, or None when the repository lacks it."""
    out = _text(source, "rev-parse", "--verify", "-q", f"{source.commit}^{{commit}}")
    return out.strip() if out else None


def is_ancestor(source: HistorySource, older: str, newer: str) -> bool:
    try:
        done = git.run("merge-base", "--is-ancestor", older, newer, git_dir=source.git_dir)
    except GitError:
        return False
    return done.returncode == 0


def read_commits(
    source: HistorySource, head: str, since: str | None = None, *, limit: int = MAX_COMMITS
) -> list[dict[str, Any]] | None:
    """The rows of the non-merge commits reachable from `head` (not from `since`), newest
    first, at most the `limit` most recent when there is no `since`; None when git cannot
    read them."""
    span = [f"{since}..{head}"] if since else [f"--max-count={limit}", head]
    out = _text(
        source,
        "log",
        "--no-merges",
        "--no-renames",
        "--format=%x00%H%x01%ct%x01%B%x01",
        "--name-only",
        *span,
    )
    if out is None:
        return None
    rows = []
    for record in out.split("\x00")[1:]:
        sha, when, message, names = (record.split("\x01") + ["", "", ""])[:4]
        files = [
            n[len(source.prefix) :]
            for n in names.splitlines()
            if n.startswith(source.prefix) and language_for(n)
        ]
        if not files or len(files) > MAX_FILES:
            continue
        # Redacted before anything is kept: the subject is shown (`ask`'s commits) and the
        # tokens are searched.
        message = redact(message.strip()[:_MESSAGE_CHARS])
        rows.append(
            {
                "id": sha,
                "time": int(when or 0),
                "subject": message.split("\n", 1)[0][:200],
                "files": files,
                "tokens": token_text(message),
            }
        )
    return rows


def update(
    have: str, source: HistorySource | None
) -> tuple[str, list[dict[str, Any]], bool] | None:
    """What a commits table read up to `have` ('' none) needs to hold `source`'s history
    (None: no history): (the commit read up to, rows, whether they replace the table
    rather than add to it), or None when it holds what it should. A descendant of the
    commit read last adds only the commits since; any other commit (a checkout of an
    older one, a rewritten branch) reads it all again."""
    head = resolve(source) if source is not None else None
    if source is None or head is None:
        return ("", [], True) if have else None  # no history (any more)
    if head == have:
        return None
    since = have if have and is_ancestor(source, have, head) else None
    rows = read_commits(source, head, since)
    if rows is None:
        return None  # git failed: keep what the table holds
    return head, rows, since is None
