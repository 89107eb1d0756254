"""What every manifest parser shares: a manifest's lines with the look-ups that find a
declaration's line in the text (after the line of its table or key, as explore.manifest's
invariants require), and the `Parsed` collector a parser fills.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dowse.explore.records import Dependency
from dowse.explore.tracks import Context

__all__ = ["Parsed", "Src", "as_dict", "as_strs", "quoted_forms", "toml_key", "toml_table"]


# -- locating declarations in the text ------------------------------------------------------


class Src:
    """A manifest's lines, and the look-ups every parser uses to find declaration lines."""

    def __init__(self, path: str, lines: list[str]) -> None:
        self.path = path
        self.lines = lines
        self.text = "\n".join(lines)

    def find(self, pattern: str, start: int | None = 1, stop: str | None = None) -> int | None:
        """The first line from `start` (1-based) where the regex `pattern` matches, before
        the first later line matching `stop`."""
        rx, end = re.compile(pattern), re.compile(stop) if stop else None
        for i in range(max(start or 1, 1) - 1, len(self.lines)):
            if rx.search(self.lines[i]):
                return i + 1
            if end is not None and i + 1 != start and end.search(self.lines[i]):
                return None
        return None

    def find_text(self, needles: Iterable[str], start: int | None = 1) -> int | None:
        """The first line from `start` holding any of `needles`; else the first anywhere."""
        wanted = [n for n in needles if n]
        for begin in (max(start or 1, 1), 1):
            for i in range(begin - 1, len(self.lines)):
                if any(n in self.lines[i] for n in wanted):
                    return i + 1
        return None

    def line_at(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1


def _tq(part: str) -> str:
    """A TOML key part as a regex: bare, "double-quoted" or 'single-quoted'."""
    e = re.escape(part)
    return f"(?:\"{e}\"|'{e}'|{e})"


def toml_key(src: Src, key: str, start: int | None) -> int | None:
    """`key = ...` (or a dotted `key.sub = ...`) in the table whose header is at `start`."""
    return src.find(r"^\s*" + _tq(key) + r"\s*[=.]", start, stop=r"^\s*\[")


def toml_table(src: Src, *parts: str) -> int | None:
    """The line of table `[a.b.c]`, or of key `c` inside `[a.b]` (an inline table)."""
    line = src.find(r"^\s*\[\s*" + r"\s*\.\s*".join(_tq(p) for p in parts) + r"\s*\]")
    if line is None and len(parts) > 1 and (parent := toml_table(src, *parts[:-1])):
        line = toml_key(src, parts[-1], parent)
    return line


def quoted_forms(value: str) -> list[str]:
    return [f'"{value}"', f"'{value}'"]


# -- what a parser returns --------------------------------------------------------------------


@dataclass
class _Named:
    name: str
    value: str
    path: str
    """The file to cite (the manifest, or a file it points to)."""
    line: int | None


@dataclass
class Parsed:
    src: Src
    ctx: Context
    deps: list[Dependency] = field(default_factory=list)
    scripts: list[_Named] = field(default_factory=list)
    entries: list[_Named] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Conclusions about the manifest (Python version, workspaces, included files)."""
    gaps: list[str] = field(default_factory=list)
    ident: tuple[int, int] | None = None
    """The lines that identify the manifest (its name, its compiler options), for a claim."""
    what: str = ""

    def dep(self, name: str, spec: str, group: str, line: int | None) -> None:
        self.deps.append(
            Dependency(name=name, spec=spec.strip(), manifest=self.src.path, line=line, group=group)
        )

    def script(self, name: str, command: str, line: int | None) -> None:
        self.scripts.append(_Named(name, command, self.src.path, line))

    def entry(self, name: str, target: str, line: int | None, path: str = "") -> None:
        self.entries.append(_Named(name, target, path or self.src.path, line))

    def identify(self, what: str, line: int | None, end: int | None = None) -> None:
        self.what = what
        if line is not None:
            self.ident = (line, max(end or line, line))


def as_dict(value: Any) -> dict[str, Any]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def as_strs(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
