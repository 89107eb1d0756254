"""The git explorer: branch, recent commits, uncommitted changes, the files that change
most, and the files that change together.

Invariants:
- Read-only: every git call goes through `dowse.git` (no optional locks, so `git status`
  does not refresh the index file; nothing the repository's config names is executed;
  the repository is located from the root alone, GIT_DIR and friends from the caller's
  environment dropped; pathspecs literal, a scope named `a[1]` is not a glob) and only
  reads.
- Paths are relative to the explored root, which may be a subdirectory of the work tree;
  changes outside the root are not reported. Hot files and co-change partners are files
  that exist now (a deleted file cannot be cited). Release notes (CHANGES.rst,
  CHANGELOG.md, a changelog/ fragment) are no co-change partner: they change with every
  fix and say nothing about the code that changed with them.
- Counts come from a bounded sample: the last `HISTORY` non-merge commits touching the
  scope, found among at most `SCAN_LIMIT` commits. Commits touching more than
  `HUGE_COMMIT` files (mass renames, reformatting) count for hot files but not for
  co-change: they couple everything with everything.
- Commit subjects are shown redacted (`indexer.secrets`); files are quoted through
  `Context.lines`, which redacts them.
- Not a git work tree, or no git: the understood gate fails with the reason; nothing
  raises.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dowse import git
from dowse.errors import GitError
from dowse.explore.records import Citation, GitReport, TrackSpec
from dowse.explore.tracks import Context, Track, TrackState, cite, plural
from dowse.indexer.secrets import redact

__all__ = ["git_track"]

GIT_TIMEOUT_S = 30.0
RECENT = 10
HISTORY = 300
SCAN_LIMIT = 5000
HUGE_COMMIT = 50
MAX_HOT = 10
MAX_PAIRS = 10
PAIRS_PER_FOCUS = 5
MIN_TOGETHER = 2
MAX_UNCOMMITTED = 100
CLAIMED_UNCOMMITTED = 5


def _git(where: Context | _Repo, *args: str) -> str:
    """A read-only git command in `where`'s root through the one runner, its config reads
    kept in `where.git_reads`; its stdout, or GitError with git's message."""
    return git.text(*args, cwd=where.root, timeout=GIT_TIMEOUT_S, reads=where.git_reads)


def _try(where: Context | _Repo, *args: str) -> str | None:
    try:
        return _git(where, *args)
    except GitError:
        return None


@dataclass
class _History:
    commits: list[list[str]] = field(default_factory=list)
    """Each commit's files (root-relative; files outside the root left out)."""
    sizes: list[int] = field(default_factory=list)
    """Each commit's number of files, the ones outside the root included."""
    heads: list[str] = field(default_factory=list)
    """Each commit's abbreviated hash, date and subject (redacted), newest first."""

    @property
    def huge(self) -> int:
        return sum(1 for n in self.sizes if n > HUGE_COMMIT)

    def coupled(self) -> list[list[str]]:
        return [c for c, n in zip(self.commits, self.sizes, strict=True) if n <= HUGE_COMMIT]

    def together(self, a: str, b: str) -> list[str]:
        """The commits (hash, date, subject; newest first) that co-change counts for the
        pair: those of at most `HUGE_COMMIT` files touching both."""
        return [
            head
            for files, n, head in zip(self.commits, self.sizes, self.heads, strict=True)
            if n <= HUGE_COMMIT and a in files and b in files
        ]


@dataclass
class _Repo:
    root: Path
    prefix: str
    """The root's path inside the work tree ('' or 'sub/dir/')."""
    shallow: bool
    git_reads: git.ConfigReads | None
    """Where its git calls keep their config reads (`Context.git_reads`)."""
    _boundary: str | None = field(default=None, init=False)

    def boundary(self) -> list[str]:
        """`^<commit>` for the commit SCAN_LIMIT commits back, when there is one: a narrow
        pathspec then does not walk the whole history to fill its sample."""
        if self._boundary is None:
            out = _try(self, "rev-list", "-n1", f"--skip={SCAN_LIMIT}", "HEAD")
            self._boundary = (out or "").strip()
        return [f"^{self._boundary}"] if self._boundary else []

    def local(self, path: str) -> str | None:
        """A work-tree path made relative to the root, or None when outside it."""
        return path[len(self.prefix) :] if path.startswith(self.prefix) else None

    def history(self, pathspecs: Sequence[str], *, bounded: bool) -> _History:
        out = _git(
            self,
            "log",
            "--no-merges",
            f"-n{HISTORY}",
            "--format=%x00%h %ad %s",
            "--date=short",
            "--name-only",
            "--full-diff",
            *(self.boundary() if bounded else ()),
            "HEAD",
            "--",
            *pathspecs,
        )
        history = _History()
        for record in out.split("\0")[1:]:
            head, *rest = record.splitlines() or [""]
            names = [ln for ln in rest if ln]
            history.sizes.append(len(names))
            history.commits.append(sorted({p for n in names if (p := self.local(n))}))
            # Subjects are text from the repository: redacted like everything quoted.
            history.heads.append(redact(head))
        return history


def _open(ctx: Context) -> _Repo:
    out = _git(
        ctx, "rev-parse", "--show-toplevel", "--show-prefix", "--is-shallow-repository"
    ).split("\n")
    if len(out) < 3:
        raise GitError("unexpected output from git rev-parse")
    shallow = out[2].strip() == "true"
    return _Repo(root=ctx.root, prefix=out[1], shallow=shallow, git_reads=ctx.git_reads)


def _status(repo: _Repo, pathspec: str, ignore: str | None) -> list[tuple[str, str]]:
    """(status, root-relative path) of each uncommitted change in the pathspec."""
    out = _git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--", pathspec)
    entries: list[tuple[str, str]] = []
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if "R" in code or "C" in code:
            i += 1  # the source path of a rename or copy follows
        local = repo.local(path)
        if local is None or (ignore and (local == ignore or local.startswith(ignore + "/"))):
            continue
        entries.append((code.strip(), local))
    return entries


def _cite_file(ctx: Context, path: str) -> Citation | None:
    """The file's first non-blank line: a citation that the file exists as named."""
    lines = ctx.lines(path) or []
    line = next((i + 1 for i, ln in enumerate(lines) if ln.strip()), None)
    return cite(ctx, path, line) if line else None


_RELEASE_NOTES = re.compile(
    r"(^|/)(changelog|changelog\.d|changes|news|newsfragments|release-?notes)/"
    r"|(^|/)(changes|changelog|history|news|release-?notes|whatsnew)(\.(rst|md|txt|adoc))?$",
    re.IGNORECASE,
)


def _pairs(
    commits: list[list[str]], anchors: Sequence[str], existing: set[str]
) -> dict[tuple[str, str], int]:
    """(anchor, partner) -> commits touching both, partners being existing files and no
    release notes."""
    wanted = set(anchors)
    counts: Counter[tuple[str, str]] = Counter()
    for files in commits:
        touched = wanted.intersection(files)
        if not touched:
            continue
        for anchor in touched:
            for other in files:
                if other != anchor and other in existing and not _RELEASE_NOTES.search(other):
                    counts[(anchor, other)] += 1
    return dict(counts)


def _focus_pairs(
    history: _History, focus: Sequence[str], existing: set[str], state: TrackState
) -> list[tuple[str, str, int]]:
    """Each focus file's most frequent partners; a gap for a focus file without any."""
    counts = _pairs(history.coupled(), focus, existing)
    pairs: list[tuple[str, str, int]] = []
    seen: set[frozenset[str]] = set()  # two focus files coupled to each other: one pair
    for anchor in focus:
        mine = sorted(
            (
                (a, b, n)
                for (a, b), n in counts.items()
                if a == anchor and n >= MIN_TOGETHER and frozenset((a, b)) not in seen
            ),
            key=lambda t: (-t[2], t[1]),
        )
        seen.update(frozenset((a, b)) for a, b, _ in mine[:PAIRS_PER_FOCUS])
        pairs.extend(mine[:PAIRS_PER_FOCUS])
        if anchor not in existing:
            state.gaps.append(f"focus file {anchor} does not exist (or is not indexable)")
        elif not mine:
            state.gaps.append(
                f"no file changed together with {anchor} in {MIN_TOGETHER} or more commits"
            )
    return pairs


def _hot_pairs(
    history: _History, hot: Sequence[str], existing: set[str]
) -> list[tuple[str, str, int]]:
    """The most frequent pairs with a hot file in them, each pair once (in path order)."""
    counts: dict[tuple[str, str], int] = {}
    for (a, b), n in _pairs(history.coupled(), hot, existing).items():
        counts[(min(a, b), max(a, b))] = n  # symmetric: both orders count the same
    return sorted(
        ((a, b, n) for (a, b), n in counts.items() if n >= MIN_TOGETHER),
        key=lambda t: (-t[2], t[0], t[1]),
    )[:MAX_PAIRS]


def git_track(
    ctx: Context, focus_files: Sequence[str] = (), *, co_change_only: bool = False
) -> Track:
    """What git says about `ctx`'s scope: branch, recent commits, uncommitted changes, hot
    files, and co-change coupling for `focus_files` (root-relative) or the hot files.

    `co_change_only` (the history of an answer, `ask`'s history track): only the files
    that change together with `focus_files`, each pair with the commits that touched
    both, and the focus files' uncommitted changes; no hot files of the whole scope."""
    focus = ctx.scope or "."
    focus_list = sorted({f.removeprefix("./").strip("/") for f in focus_files if f.strip()})
    only = co_change_only and bool(focus_list)
    spec = TrackSpec(
        name="git",
        focus=focus + (f" (focus files: {', '.join(focus_list)})" if focus_list else ""),
        approach=(
            f"read-only git: the last {HISTORY} commits touching the focus files, the files "
            f"changed in the same commits (of at most {HUGE_COMMIT} files), with the commits"
            if only
            else f"read-only git: branch and HEAD, the last {RECENT} commits and uncommitted "
            f"changes in scope, file change counts over the last {HISTORY} commits, "
            f"co-change pairs from commits of at most {HUGE_COMMIT} files"
        ),
        gates=[
            "understood: the root is in a git work tree with commits or changes in scope",
            "evidence: every hot file, co-change pair and uncommitted file cites the file",
            "complete: HEAD and the scope's recent commits are known, hot files ranked, and "
            "each focus file's coupling looked up",
        ],
        deliverable="GitReport: branch, head, recent commits, uncommitted changes, hot files, "
        "co-change pairs",
        role="history",
    )

    def understand(state: TrackState) -> tuple[bool, str]:
        try:
            repo = _open(ctx)
        except GitError as exc:
            if "not a git repository" in str(exc) or "work tree" in str(exc):
                return False, "not a git repository"
            return False, f"git cannot read {ctx.root}: {exc}"
        report = _head(ctx, repo, state)
        changes = _uncommitted(ctx, repo, report)
        existing = set(ctx.all_files())
        if only:
            changes = [(code, path) for code, path in changes if path in focus_list]
        if report.head is not None:
            _history(ctx, repo, state, report, focus_list, existing, co_change_only=only)
        _claim_uncommitted(ctx, state, repo, changes, existing)
        where = _conclude(state, report, changes, "the focus files" if only else focus)
        if not report.head and not changes:
            return False, "a git repository with no commits and no changes"
        if only and not state.findings:
            return False, (
                f"no file changed together with {', '.join(focus_list[:3])} in "
                f"{MIN_TOGETHER} or more commits"
            )
        return True, (
            f"{where}: {plural(len(report.recent), 'recent commit')}, "
            f"{plural(len(changes), 'uncommitted entry', 'uncommitted entries')}, "
            f"{plural(len(report.hot_files), 'hot file')}"
        )

    def complete(state: TrackState) -> tuple[bool, str]:
        report = state.output.get("git")
        if not isinstance(report, GitReport):
            return False, "no git report"
        if report.head is None:
            return False, "no commits yet: nothing to say about history"
        if not report.recent:
            return False, f"no commit touches {focus}"
        kept = Counter(f.topic for f in state.findings)
        if report.hot_files and not kept["hot"]:
            return False, "no hot file kept its evidence"
        return True, (
            f"{report.branch or 'detached'} at {report.head[:12]}: "
            f"{plural(len(report.recent), 'recent commit')}, "
            f"{plural(len(report.hot_files), 'hot file')}, "
            f"{plural(len(report.co_change), 'co-change pair')}"
        )

    return Track(
        spec=spec,
        understand=understand,
        complete=complete,
        make=lambda c: git_track(c, focus_list, co_change_only=co_change_only),
    )


# -- the track's phases: head, uncommitted changes, history, conclusions --------------------


def _head(ctx: Context, repo: _Repo, state: TrackState) -> GitReport:
    """The report, started with the branch and HEAD."""
    branch = _try(ctx, "symbolic-ref", "-q", "--short", "HEAD")
    head = _try(ctx, "rev-parse", "-q", "--verify", "HEAD^{commit}")
    report = GitReport(branch=(branch or "").strip() or None, head=(head or "").strip() or None)
    state.output["git"] = report
    if repo.shallow:
        state.gaps.append("a shallow clone: history is truncated, counts are lower bounds")
    return report


def _uncommitted(ctx: Context, repo: _Repo, report: GitReport) -> list[tuple[str, str]]:
    """The scope's uncommitted changes (the index directory left out), into the report."""
    ignore = None
    if ctx.index_dir is not None:
        try:
            ignore = ctx.index_dir.resolve().relative_to(ctx.root.resolve()).as_posix()
        except ValueError:
            ignore = None
    changes = _status(repo, ctx.scope or ".", ignore)
    report.uncommitted = [f"{code} {path}" for code, path in changes[:MAX_UNCOMMITTED]]
    return changes


def _history(
    ctx: Context,
    repo: _Repo,
    state: TrackState,
    report: GitReport,
    focus_list: Sequence[str],
    existing: set[str],
    *,
    co_change_only: bool = False,
) -> None:
    """Recent commits, hot files and co-change pairs, each hot file and pair claimed;
    `co_change_only`: the focus files' recent commits and co-change pairs alone."""
    focus = ctx.scope or "."
    if co_change_only:
        sample = repo.history(focus_list, bounded=True)
        report.recent = sample.heads[:RECENT]
        report.co_change = _focus_pairs(sample, focus_list, existing, state)
        _claim_pairs(ctx, state, sample, report.co_change)
        _sample_gaps(state, sample, sample, " ".join(focus_list[:3]))
        return
    pathspec = ctx.scope or "."
    narrow = bool(ctx.scope or repo.prefix)
    # Subjects are text from the repository: redacted like everything quoted.
    report.recent = [
        redact(ln)
        for ln in _git(
            repo,
            "log",
            f"-n{RECENT}",
            "--format=%h %ad %s",
            "--date=short",
            *(repo.boundary() if narrow else ()),
            "HEAD",
            "--",
            pathspec,
        ).splitlines()
        if ln
    ]
    history = repo.history([pathspec], bounded=narrow)
    commits_of = Counter(p for files in history.commits for p in files)
    ranked = sorted(
        ((p, n) for p, n in commits_of.items() if p in existing and ctx.in_scope(p)),
        key=lambda kv: (-kv[1], kv[0]),
    )
    report.hot_files = ranked[:MAX_HOT]
    for path, n in report.hot_files:
        state.claim(
            f"{path} changed in {n} of the last {len(history.commits)} commits touching {focus}",
            _cite_file(ctx, path),
            topic="hot",
        )
    sample = repo.history(focus_list, bounded=True) if focus_list else history
    report.co_change = (
        _focus_pairs(sample, focus_list, existing, state)
        if focus_list
        else _hot_pairs(sample, [p for p, _ in report.hot_files], existing)
    )
    _claim_pairs(ctx, state, sample, report.co_change)
    _sample_gaps(state, sample, history, focus)


CITED_COMMITS = 2
"""Commits a co-change claim names (the newest that touched both files)."""
_SUBJECT = 60


def _claim_pairs(
    ctx: Context, state: TrackState, sample: _History, pairs: Sequence[tuple[str, str, int]]
) -> None:
    """A claim per co-change pair, citing both files and naming the newest commits that
    touched both (hash and subject: `git show <hash>` shows them together)."""
    of = Counter(p for files in sample.coupled() for p in files)
    for a, b, n in pairs:
        commits = "; ".join(_clip(head, _SUBJECT) for head in sample.together(a, b)[:CITED_COMMITS])
        state.claim(
            f"{a} and {b} changed together in {n} commits ({n} of {of[a]} commits of {a}), "
            f"as in {commits}",
            _cite_file(ctx, a),
            _cite_file(ctx, b),
            topic="co-change",
        )


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _sample_gaps(state: TrackState, sample: _History, history: _History, focus: str) -> None:
    if sample.huge:
        state.gaps.append(
            f"{plural(sample.huge, 'commit')} touching more than "
            f"{HUGE_COMMIT} files left out of co-change counts"
        )
    if len(history.commits) >= HISTORY:
        state.gaps.append(f"counts cover the last {HISTORY} commits touching {focus} only")


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def _first_change(ctx: Context, repo: _Repo, path: str) -> Citation | None:
    """The first line of the file that differs from HEAD (a line a deletion follows when
    only lines were removed there); None when git shows no text change (mode, binary)."""
    out = _try(repo, "diff", "-U0", "--no-color", "HEAD", "--", path)
    m = _HUNK.search(out or "")
    if m is None:
        return None
    start, count = int(m.group(1)), int(m.group(2) or 1)
    first = max(start, 1)
    return cite(ctx, path, first, first + max(count, 1) - 1)


def _claim_uncommitted(
    ctx: Context,
    state: TrackState,
    repo: _Repo,
    changes: list[tuple[str, str]],
    existing: set[str],
) -> None:
    """A claim per changed file at its first changed line (a new file: its first line)."""
    for code, path in changes[:CLAIMED_UNCOMMITTED]:
        if path in existing:
            at = _first_change(ctx, repo, path) if code not in ("??", "A") else None
            state.claim(
                f"{path} has uncommitted changes ({code})"
                + (f" from line {at.start_line}" if at is not None else ""),
                at or _cite_file(ctx, path),
                topic="uncommitted",
            )


def _conclude(
    state: TrackState, report: GitReport, changes: list[tuple[str, str]], focus: str
) -> str:
    """The track's conclusions; returns where HEAD is ("on branch main", "detached HEAD")."""
    where = f"on branch {report.branch}" if report.branch else "detached HEAD"
    state.conclusions.append(
        f"{where} at {report.head[:12]}" if report.head else f"{where}, no commits yet"
    )
    if report.recent:
        state.conclusions.append(
            f"recent commits touching {focus}: " + "; ".join(report.recent[:5])
        )
    elif report.head:
        state.conclusions.append(f"no commit touches {focus}")
    if changes:
        kinds = Counter("untracked" if c == "??" else "changed" for c, _ in changes)
        state.conclusions.append(
            f"{len(changes)} uncommitted entries in {focus} ("
            + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
            + ")"
        )
    else:
        state.conclusions.append(f"no uncommitted changes in {focus}")
    if report.hot_files:
        state.conclusions.append(
            "most changed: " + ", ".join(f"{p} ({n})" for p, n in report.hot_files[:5])
        )
    if report.co_change:
        a, b, n = report.co_change[0]
        state.conclusions.append(f"strongest coupling: {a} ↔ {b} ({n} commits)")
    return where
