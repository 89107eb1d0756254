"""Tracks: the unit of parallel exploration, its gates, and the citation check.

A `Track` has a spec (name, focus, approach, gates, deliverable) and two steps, each ending
in a gate; a third gate between them is the same for every track:

    understood  the explorer found files or patterns to talk about (its own check)
    evidence    every claim has a citation, and each citation is checked against the file:
                the path exists inside the root, the lines exist, the quote is there;
                claims that fail are dropped and listed
    complete    the explorer answered its question (its own check)

Step N+1 runs only when gate N passed; a gate that did not run is reported as such. An
explorer that raises fails its current gate with the error as the detail: one broken
explorer never takes the others down.

`Context` is what every explorer reads: the root, the explored scope inside it, the walked
files (once, shared), cached file lines, and the index when there is one. It is shared by
threads; its caches are filled under a lock.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dowse.explore.records import (
    Citation,
    Depth,
    Evidence,
    Finding,
    GateResult,
    TrackFindings,
    TrackSpec,
)
from dowse.indexer.reading import read_inside, text_bytes
from dowse.indexer.secrets import safe_text
from dowse.indexer.walk import WalkConfig, walk

if TYPE_CHECKING:
    from dowse.git import ConfigReads

__all__ = [
    "STDLIB",
    "Context",
    "Track",
    "TrackState",
    "cite",
    "find_line",
    "largest_subdirs",
    "plural",
    "run_track",
    "verify_citation",
]

MAX_QUOTE = 80
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"} | {"annotationlib", "compression"}
"""Python's standard library modules: never a project's own, never a dependency. The
running Python's list, plus the modules newer ones added (3.14's `annotationlib` and
`compression`, which sphinx imports on 3.14)."""
_SPACE = re.compile(r"\s+")


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """`1 file`, `2 files`; `nouns` for an irregular plural."""
    return f"{n} {noun}" if n == 1 else f"{n} {nouns or noun + 's'}"


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@dataclass
class Context:
    root: Path
    scope: str = ""
    """POSIX path of the explored directory or file, relative to root ("" = all of it)."""
    focus: str | None = None
    depth: Depth = "standard"
    walk_config: WalkConfig = field(default_factory=WalkConfig)
    index_dir: Path | None = None
    deepen: int = 0
    """How many more levels a too-large track may split into subtracks."""
    git_reads: ConfigReads | None = None
    """Where the git track's calls keep their config reads (`dowse.git.READS`, the
    process's, when None)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _searcher_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    """Opening the index takes a while (lancedb's import): file reads must not wait."""
    _all: list[str] | None = field(default=None, repr=False)
    _lines: dict[str, list[str] | None] = field(default_factory=dict, repr=False)
    _searcher: Any = field(default=None, repr=False)

    def narrowed(self, scope: str, *, deepen: int) -> Context:
        """The same root, files and caches, looking at `scope` only."""
        ctx = Context(
            root=self.root,
            scope=scope,
            focus=self.focus,
            depth=self.depth,
            walk_config=self.walk_config,
            index_dir=self.index_dir,
            deepen=deepen,
            git_reads=self.git_reads,
        )
        ctx._lock, ctx._lines, ctx._searcher = self._lock, self._lines, self._searcher
        ctx._searcher_lock = self._searcher_lock
        ctx._all = self.all_files()
        return ctx

    def all_files(self) -> list[str]:
        """Every indexable file under the root (ignores, secrets and size limits applied)."""
        with self._lock:
            if self._all is None:
                self._all = [
                    f.path
                    for f in walk(self.root, self.walk_config, index_dir=self.index_dir).files
                ]
            return self._all

    def in_scope(self, path: str) -> bool:
        return not self.scope or path == self.scope or path.startswith(self.scope + "/")

    def below(self, path: str) -> str:
        """`path` relative to the explored scope (as it is, outside it): what the path's
        conventions are judged by, so that exploring `examples/app` makes that example the
        project rather than one of its examples."""
        inside = self.scope and path.startswith(self.scope + "/")
        return path[len(self.scope) + 1 :] if inside else path

    def files(self) -> list[str]:
        """The indexable files inside the explored scope, sorted."""
        return [p for p in self.all_files() if self.in_scope(p)]

    def lines(self, path: str) -> list[str] | None:
        """The file's lines (decoded leniently), or None when it cannot be read."""
        with self._lock:
            if path in self._lines:
                return self._lines[path]
        data = read_inside(self.root, path)
        # What explore quotes passes the indexer's secret check: a file that is a secret
        # as a whole reads as unreadable, values in others as [REDACTED].
        text = None if data is None else safe_text(data, path)
        result = None if text is None else _text_lines(text.encode("utf-8"))
        with self._lock:
            self._lines[path] = result
        return result

    def use_searcher(self, searcher: Any) -> None:
        """Share a caller's warm HybridSearcher (same index) instead of opening one."""
        with self._searcher_lock:
            self._searcher = searcher

    def searcher(self) -> Any:
        """A HybridSearcher on the index, or None when there is no index for the root."""
        with self._searcher_lock:
            if self._searcher is not None:
                return self._searcher
        if self.index_dir is None or not (self.index_dir / "manifest.json").is_file():
            return None
        with self._searcher_lock:
            if self._searcher is None:
                from dowse.retrieval.hybrid import HybridSearcher

                self._searcher = HybridSearcher.open(self.index_dir)
            return self._searcher

    def test_modules(self) -> frozenset[str]:
        """The files that are test code by their module declaration, not their path
        (`IndexLookups.test_modules`: a Rust `#[cfg(test)] mod testutil;`); empty
        without an index."""
        searcher = self.searcher()
        lookups = getattr(searcher, "lookups", None)
        return lookups.test_modules() if lookups is not None else frozenset()


def _text_lines(data: bytes) -> list[str]:
    """A file's lines (`text_bytes` form, decoded leniently) numbered as the index numbers
    them: split at LF only (str.splitlines also splits at form feeds and other separators,
    and its line numbers would drift from the index's), a CR before it dropped."""
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def cite(
    ctx: Context, path: str, start: int, end: int | None = None, quote: str | None = None
) -> Citation | None:
    """A citation of `path` lines start..end quoting its first non-blank line (or `quote`).

    None when the file cannot be read or the lines do not exist.
    """
    lines = ctx.lines(path)
    end = start if end is None else end
    if lines is None or start < 1 or end < start or end > len(lines):
        return None
    if quote is None:
        quote = next((ln.strip() for ln in lines[start - 1 : end] if ln.strip()), "")
    return Citation(path=path, start_line=start, end_line=end, quote=quote[:MAX_QUOTE])


def find_line(ctx: Context, path: str, needle: str | re.Pattern[str], start: int = 1) -> int | None:
    """The first line (1-based, from `start`) containing `needle`, or None."""
    lines = ctx.lines(path) or []
    for i in range(max(start, 1) - 1, len(lines)):
        if needle.search(lines[i]) if isinstance(needle, re.Pattern) else needle in lines[i]:
            return i + 1
    return None


def verify_citation(root: Path, citation: Citation) -> str | None:
    """Why `citation` does not hold, or None when it does."""
    rel = citation.path
    if not rel or os.path.isabs(rel) or ".." in Path(rel).parts:
        return f"{rel!r} is not a path inside the root"
    target = root / rel
    try:
        real, root_real = target.resolve(), root.resolve()
    except OSError as exc:
        return f"{rel}: {exc.strerror or exc}"
    if root_real != real and root_real not in real.parents:
        return f"{rel} leads outside the root"
    if not real.is_file():
        return f"{rel} does not exist"
    try:
        text = safe_text(text_bytes(real.read_bytes()), rel)
    except OSError as exc:
        return f"{rel}: {exc.strerror or exc}"
    if text is None:
        return f"{rel} holds a secret"
    lines = _text_lines(text.encode("utf-8"))  # redacted as the quotes are
    if citation.end_line < citation.start_line or citation.end_line > len(lines):
        return f"{citation.ref}: the file has {len(lines)} lines"
    quote = _norm(citation.quote)
    if not quote:
        return f"{citation.ref}: no quoted text to check"
    cited = _norm(" ".join(lines[citation.start_line - 1 : citation.end_line]))
    if quote not in cited:
        return f"{citation.ref}: {citation.quote!r} is not in the cited lines"
    return None


@dataclass
class TrackState:
    """What a track has gathered so far; explorers fill it, the runner checks it."""

    ctx: Context
    findings: list[Finding] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    conclusions: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    output: dict[str, Any] = field(default_factory=dict)
    """The explorer's structured section(s), by ExploreResult field name."""

    def claim(self, text: str, *citations: Citation | None, topic: str = "") -> bool:
        """Record a claim; a claim with no citation is not recorded (returns False)."""
        cites = [c for c in citations if c is not None]
        if not cites:
            return False
        self.findings.append(Finding(claim=text, citations=cites, topic=topic))
        return True


Step = Callable[[TrackState], tuple[bool, str]]


@dataclass
class Track:
    spec: TrackSpec
    understand: Step
    """Gather and claim; the verdict is the `understood` gate."""
    complete: Step
    """Check the deliverable; the verdict is the `complete` gate."""
    split: Callable[[Context], list[str]] | None = None
    """Sub-scopes to explore as subtracks when the scope is too large (`--deepen`)."""
    make: Callable[[Context], Track] | None = None
    """Builds the same track for a narrower context (needed to split)."""


def _evidence_gate(ctx: Context, state: TrackState) -> tuple[bool, str, list[str]]:
    kept, dropped = [], []
    for f in state.findings:
        failures = [why for c in f.citations if (why := verify_citation(ctx.root, c))]
        if failures:
            dropped.append(f"{f.claim} ({'; '.join(failures)})")
        else:
            kept.append(f)
    state.findings = kept
    if not kept:
        return False, "no claim with a verified citation", dropped
    detail = f"{len(kept)} claims verified against the files"
    if dropped:
        detail += f"; {len(dropped)} dropped"
    return True, detail, dropped


def run_track(ctx: Context, track: Track) -> tuple[TrackFindings, dict[str, Any]]:
    """Run a track's gated steps; returns its findings and its structured output."""
    t0 = time.perf_counter()
    state = TrackState(ctx=ctx)
    gates: list[GateResult] = []
    dropped: list[str] = []

    def step(name: str, fn: Callable[[], tuple[bool, str]]) -> bool:
        if gates and not gates[-1].passed:
            gates.append(
                GateResult(
                    name=name,
                    passed=False,
                    ran=False,
                    detail=f"not run: the {gates[-1].name} gate failed",
                )
            )
            return False
        try:
            ok, detail = fn()
        except Exception as exc:  # an explorer bug fails its gate, not the whole explore
            ok, detail = False, f"error: {type(exc).__name__}: {exc}"
            state.gaps.append(f"{track.spec.name} explorer failed: {detail}")
        gates.append(GateResult(name=name, passed=ok, detail=detail))
        return ok

    def evidence() -> tuple[bool, str]:
        ok, detail, lost = _evidence_gate(ctx, state)
        dropped.extend(lost)
        return ok, detail

    step("understood", lambda: track.understand(state))
    step("evidence", evidence)
    step("complete", lambda: track.complete(state))

    subtracks: list[TrackFindings] = []
    if ctx.deepen > 0 and track.split is not None and track.make is not None:
        scopes = track.split(ctx)
        if scopes:
            make = track.make
            subs = [ctx.narrowed(s, deepen=ctx.deepen - 1) for s in scopes]
            with ThreadPoolExecutor(max_workers=min(4, len(subs))) as pool:
                subtracks = [r for r, _ in pool.map(lambda c: run_track(c, make(c)), subs)]
    result = TrackFindings(
        track=track.spec,
        findings=state.findings,
        evidence=state.evidence,
        conclusions=state.conclusions,
        gaps=state.gaps,
        gates=gates,
        dropped=dropped,
        claims=len(state.findings),
        seconds=round(time.perf_counter() - t0, 4),
        subtracks=subtracks,
    )
    return result, state.output


def largest_subdirs(ctx: Context, *, min_files: int, limit: int = 4) -> list[str]:
    """The scope's biggest immediate subdirectories, when the scope is too large for one track."""
    files = ctx.files()
    if len(files) < min_files:
        return []
    base = ctx.scope + "/" if ctx.scope else ""
    counts: dict[str, int] = {}
    for p in files:
        rest = p[len(base) :]
        if "/" in rest:
            d = base + rest.split("/", 1)[0]
            counts[d] = counts.get(d, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [d for d, n in ranked[:limit] if n >= 2]
