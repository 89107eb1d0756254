"""Human-readable rendering of hits (markdown-friendly, optional ANSI colour), and the
quoting every markdown renderer uses for text it did not write.

Invariants:
- Untrusted text cannot forge structure. A file's lines, names and reasons come from the
  repository; `fence` wraps source in a backtick run longer than any inside it (so a
  docstring holding ``` cannot close the block and fake a heading), and `one_line`
  escapes newlines and control characters in anything printed on one line (a filename
  with a newline cannot start a line of its own, an ANSI sequence cannot recolour the
  terminal). JSON output needs neither: its strings are escaped by the encoder.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from dowse.retrieval.records import Hit

__all__ = ["code_span", "fence", "one_line", "render_hits"]

SNIPPET_LINES = 12
_BACKTICKS = re.compile(r"`+")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: str, *, keep_tabs: bool = False) -> str:
    """`text` with line breaks and other control characters written as escapes."""
    out = []
    for ch in text:
        if ch == "\t" and keep_tabs:
            out.append(ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and ch != "\u200d":
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _longest_run(text: str) -> int:
    return max((len(m.group(0)) for m in _BACKTICKS.finditer(text)), default=0)


def code_span(text: str) -> str:
    """`text` as inline code on one line, however many backticks it holds."""
    text = one_line(text)
    ticks = "`" * (_longest_run(text) + 1)
    pad = " " if "`" in text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fence(text: str, info: str = "") -> list[str]:
    """`text` as a fenced code block whose fence no line of it can close."""
    ticks = "`" * max(3, _longest_run(text) + 1)
    return [ticks + info, text, ticks]


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
