"""Focused excerpts: a definition shown by its first lines and the windows of its lines
that carry the question's evidence, the lines between them elided.

A context of a few thousand tokens holds two to four whole blocks of a long file, while
a fix often touches several places of it (benchmarks/RESULTS-context.md). An excerpt
shows a definition the context cannot show whole the way aider's repository map does:
the signature, then the lines that name what the question names (its identifiers, the
messages it quotes, its rarer words), each with a few lines around it, and a marker for
each run of lines left out.

Invariants:
- A window's lines are printed as the file has them, in order; each run of lines left out
  is one marker line, `⋮ (lines A-B)`, so the number of every printed line follows from
  the block's first line and the markers: citations stay true.
- The windows are the only lines an excerpt shows: what an evaluation counts as shown
  (`ContextBlock.windows`), never the elided lines between them.
- The evidence is read from the lines by lexical rules alone (`tokens.tokenize`), and
  every rule counts alike in every language: a name the question mentions or a message it
  quotes counts `STRONG`, each of its words that few of the definition's lines hold counts
  1. No weight is fitted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from dowse.retrieval.query import QueryAnalysis, base_tokens
from dowse.tokens import tokenize

__all__ = [
    "ELISION",
    "RADIUS",
    "Evidence",
    "choose_windows",
    "excerpt_text",
    "is_marker",
    "line_scores",
    "marker",
    "merged",
]

ELISION = "⋮"
"""The first character of a marker line: the lines it names are left out."""
RADIUS = 3
"""The lines shown on each side of a line that carries evidence: the condition above a
statement and the lines it governs below, the usual reach of a fix."""
STRONG = 3.0
"""What a name the question mentions or a message it quotes counts on a line, against 1
for one of its rarer words: three words together are as specific as one name."""
RARE_SHARE = 0.1
"""A question's word is evidence on a line when at most this share of the definition's
lines (and at least two) hold it: `self`, `value` or `ctx` in every other line point
nowhere."""


@dataclass(frozen=True)
class Evidence:
    """What of a question marks a line as relevant: the names it mentions (lower-case
    search tokens, each identifier's last part), the messages it quotes, verbatim, and
    its words (lower-case search tokens)."""

    names: frozenset[str]
    literals: tuple[str, ...]
    words: frozenset[str]

    @classmethod
    def of(cls, analysis: QueryAnalysis) -> Evidence:
        names = frozenset(
            tok for ident in analysis.identifiers for tok in tokenize(ident.rsplit(".", 1)[-1])[:1]
        )
        literals = tuple(lit for lit in analysis.literals if len(lit.strip()) >= 3)
        return cls(names=names, literals=literals, words=frozenset(base_tokens(analysis)))

    def __bool__(self) -> bool:
        return bool(self.names or self.literals or self.words)


def line_scores(lines: Sequence[str], first: int, evidence: Evidence) -> dict[int, float]:
    """The evidence each of `lines` (the first numbered `first`) carries, by line number;
    lines without any are left out (the module docstring gives the rule)."""
    tokens = [set(tokenize(line)) for line in lines]
    held: dict[str, int] = {}
    for toks in tokens:
        for tok in toks & evidence.words:
            held[tok] = held.get(tok, 0) + 1
    most = max(2, int(len(lines) * RARE_SHARE))
    rare = {tok for tok, n in held.items() if n <= most}
    scores: dict[int, float] = {}
    for n, (line, toks) in enumerate(zip(lines, tokens, strict=True)):
        score = STRONG * len(toks & evidence.names)
        score += STRONG * sum(1 for lit in evidence.literals if lit in line)
        score += len((toks & rare) - evidence.names)
        if score:
            scores[first + n] = score
    return scores


def merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` sorted, those that overlap or leave one line between them joined: a
    marker costs a line, so one line left out saves nothing."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1] + 2:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def choose_windows(
    scores: Mapping[int, float],
    lo: int,
    hi: int,
    keep: Sequence[tuple[int, int]],
    fits: Callable[[list[tuple[int, int]]], bool],
    *,
    radius: int = RADIUS,
) -> list[tuple[int, int]]:
    """The windows of lines `lo`..`hi` to show: those in `keep` (a signature, lines shown
    already), then a window of `radius` lines around each line that carries evidence,
    the strongest first (then the earliest), each while `fits` says the windows so far
    still fit. Windows are joined where they overlap or touch."""
    windows = merged((max(a, lo), min(b, hi)) for a, b in keep)
    for line in sorted(scores, key=lambda n: (-scores[n], n)):
        if not lo <= line <= hi or any(a <= line <= b for a, b in windows):
            continue
        wider = merged([*windows, (max(lo, line - radius), min(hi, line + radius))])
        if fits(wider):
            windows = wider
    return windows


def marker(first: int, last: int) -> str:
    """The line that stands for lines `first`..`last` left out."""
    where = f"line {first}" if first == last else f"lines {first}-{last}"
    return f"{ELISION} ({where})"


_MARKER = re.compile(rf"^{ELISION} \(lines? \d+(?:-\d+)?\)$")


def is_marker(line: str) -> bool:
    """Whether `line` is a marker (`marker`) rather than a line of the file."""
    return bool(_MARKER.match(line))


def excerpt_text(lines: Sequence[str], lo: int, hi: int, windows: Sequence[tuple[int, int]]) -> str:
    """Lines `lo`..`hi` (`lines`, the first numbered `lo`) as printed: each window's lines,
    and a marker for each run between, before and after them."""
    out: list[str] = []
    at = lo
    for a, b in windows:
        if a > at:
            out.append(marker(at, a - 1))
        out.extend(lines[a - lo : b - lo + 1])
        at = b + 1
    if at <= hi:
        out.append(marker(at, hi))
    return "\n".join(out)
