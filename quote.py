"""Quoting for text dowse did not write, in every plain-text and markdown output.

Invariants:
- Untrusted text cannot forge structure. A file's lines, names and reasons come from the
  repository; `fence` wraps source in a backtick run longer than any inside it (so a
  docstring holding ``` cannot close the block and fake a heading), and `one_line`
  escapes newlines and control characters in anything printed on one line (a filename
  with a newline cannot start a line of its own, an ANSI sequence cannot recolour the
  terminal). JSON output needs neither: its strings are escaped by the encoder.
- Every renderer that prints a path, a name or a reason uses these (search, symbol,
  status, ask, explore); none escapes by hand.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["code_span", "fence", "one_line"]

_BACKTICKS = re.compile(r"`+")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: str, *, keep_tabs: bool = False) -> str:
    """`text` with line breaks and other control characters written as escapes."""
    if text.isprintable():
        # Nothing to escape (every character escaped below is unprintable), and most
        # lines are so: the loop below costs a cold `ask` ~10 ms over its shown lines.
        return text
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
