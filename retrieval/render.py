"""Human-readable rendering of hits (markdown-friendly, optional ANSI colour).

Invariants:
- Paths, symbols and source lines come from the repository: each goes through
  `quote.one_line` (see dowse/quote.py), so a file name holding a newline cannot start a
  line of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from dowse.quote import one_line
from dowse.retrieval.records import Hit

__all__ = ["render_hits"]

SNIPPET_LINES = 12


def _snippet(hit: Hit, max_lines: int) -> list[str]:
    if not hit.text:
        return []
    lines = hit.text.split("\n")
    width = len(str(hit.start_line + len(lines)))
    out = [
        f"{hit.start_line + i:>{width}} | {one_line(line, keep_tabs=True)}"
        for i, line in enumerate(lines[:max_lines])
    ]
    if len(lines) > max_lines:
        out.append(f"{'':>{width}} | ... ({len(lines) - max_lines} more lines)")
    return out


def render_hits(hits: Sequence[Hit], *, color: bool = False, max_lines: int = SNIPPET_LINES) -> str:
    if not hits:
        return "no results"
    bold, dim, reset = ("\x1b[1m", "\x1b[2m", "\x1b[0m") if color else ("", "", "")
    blocks: list[str] = []
    for rank, h in enumerate(hits, 1):
        where = one_line(f"{h.path}:{h.start_line}-{h.end_line}")
        symbol = one_line(h.symbol or "")
        what = f"  {h.kind} {symbol}" if h.kind else (f"  in {symbol}" if symbol else "")
        signals = " ".join(f"{k}={v:.2f}" for k, v in sorted(h.signals.items()))
        stale = "  [stale: file changed since indexing]" if h.stale else ""
        head = f"{rank}. {bold}{where}{reset}{what}  {dim}score {h.score:.3f} ({signals}){reset}"
        blocks.append("\n".join([head + stale, *_snippet(h, max_lines)]))
    return "\n\n".join(blocks)
