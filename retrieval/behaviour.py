"""How much of a chunk is behaviour: its code lines against its prose (docstrings,
comments) and its import block.

A question about what code does is answered by the lines that do it: the branch that
raises, the loop that dispatches, the call that decides. A module's docstring and import
block, or a class's long docstring, can match the question's words as well as the code
does (they describe it and name it) while holding none of what a change would touch. So
the context shows a chunk whose prose outweighs its code after the chunks that hold code.

`behaviour_share` is 1 for a chunk with at least as many code lines as prose and import
lines (a documented function keeps its place), and otherwise the ratio of the two, each
counted plus one (a 24-line module docstring: 1/25; a class header with a 12-line
docstring and 3 lines of code: 4/13). No constant is fitted: the rule is "code must
outweigh prose", the +1 keeps an all-prose chunk above zero.

Invariants: the lines are read by lexical rules per language (`_SYNTAX`), never parsed;
blank lines count for neither side; a language without rules (text, markdown) is all
code, i.e. share 1 (documentation is ranked by its own rule, `languages.is_documentation`).
Imports count as code when the question is about imports. A chunk that defines a name
the question mentions as a value (`defines_any`: a module's header that sets
`DEFAULT_LOG_FORMAT` among its imports) is not demoted: the value asked about is the
behaviour.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "PROSE_RUN_LINES",
    "LineCounts",
    "behaviour_share",
    "count_lines",
    "defines_any",
    "elide_prose",
    "line_kinds",
]


@dataclass(frozen=True)
class _Syntax:
    comments: tuple[str, ...]  # line comment and block comment prefixes
    imports: re.Pattern[str]  # a line that starts an import (or package) statement
    docstrings: bool = False  # Python: a string statement is documentation


_SLASH = ("//", "/*")  # a block comment's inner lines are read as such until its "*/"
_SYNTAX: dict[str, _Syntax] = {
    "python": _Syntax(("#",), re.compile(r"(?:import|from)\s+[\w.]+"), docstrings=True),
    "javascript": _Syntax(
        _SLASH,
        re.compile(
            r"import\b|export\s+(?:\*|\{[^}]*\}?)\s*(?:from\b|$)"
            r"|(?:const|let|var)\s+[\w{}\s,]+=\s*require\("
        ),
    ),
    "go": _Syntax(_SLASH, re.compile(r"(?:import|package)\b")),
    "rust": _Syntax(
        _SLASH, re.compile(r"(?:pub(?:\([\w:]+\))?\s+)?(?:use\b|mod\s+\w+\s*;)|extern\s+crate\b")
    ),
    "java": _Syntax(_SLASH, re.compile(r"(?:import|package)\b")),
    "c": _Syntax(_SLASH, re.compile(r"#\s*include\b")),
    "csharp": _Syntax(_SLASH, re.compile(r"using\s+[\w.=\s]+;")),
    "php": _Syntax(
        (*_SLASH, "#"),
        re.compile(r"(?:use|namespace|require(?:_once)?|include(?:_once)?)\b"),
    ),
    "ruby": _Syntax(("#",), re.compile(r"require(?:_relative)?\b")),
    "swift": _Syntax(_SLASH, re.compile(r"import\b")),
    "bash": _Syntax(("#",), re.compile(r"(?:source|\.)\s+\S")),
}
for _alias, _base in (
    ("typescript", "javascript"),
    ("tsx", "javascript"),
    ("kotlin", "java"),
    ("scala", "java"),
    ("cpp", "c"),
):
    _SYNTAX[_alias] = _SYNTAX[_base]

PROSE_RUN_LINES = 8
"""The shortest run of prose lines (a docstring, a doc comment, a license header) that the
context cuts to its first paragraph: a function's parameter list in prose, a Rust doc
comment's examples or a Javadoc block can take more lines than the body they describe,
while a comment that explains a branch is a few lines and stays whole."""
PROSE_HEAD_LINES = 3
"""The most lines of a cut run's first paragraph that stay: its summary."""

_DOCSTRING = re.compile(r"[rRbBuU]{0,2}(\"\"\"|''')")
_OPENERS = {"(": ")", "{": "}", "[": "]"}


@dataclass(frozen=True)
class LineCounts:
    code: int
    prose: int  # docstring and comment lines
    imports: int


Kind = Literal["code", "prose", "import", "blank"]


def line_kinds(text: str, language: str | None) -> list[Kind] | None:
    """Each line of `text` by kind: code, prose (a docstring's or comment's line), an
    import's line, or blank (a blank line inside a docstring or block comment is prose);
    None for a language without rules."""
    syntax = _SYNTAX.get(language or "")
    if syntax is None:
        return None
    kinds: list[Kind] = []
    closing: str | None = None  # inside a docstring (its quote) or a block comment ("*/")
    in_import: str | None = None  # inside a bracketed import: the bracket that ends it
    in_value: str | None = None  # inside a string a code line opened (`SQL = """`)
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            kinds.append("prose" if closing is not None else "blank")
            continue
        if in_value is not None:
            kinds.append("code")
            if in_value in line:
                in_value = None
            continue
        if closing is not None:
            kinds.append("prose")
            if closing in line:
                closing = None
            continue
        if in_import is not None:
            kinds.append("import")
            if in_import in line:
                in_import = None
            continue
        if syntax.docstrings and (m := _DOCSTRING.match(line)):
            quote = m.group(1)
            rest = line[m.end() :]
            kinds.append("prose")
            if quote not in rest:
                closing = quote
            continue
        if line.startswith(syntax.comments) and not (
            syntax.comments[0] == "#" and line.startswith("#!")
        ):
            kinds.append("prose")
            if line.startswith("/*") and "*/" not in line[2:]:
                closing = "*/"
            continue
        if syntax.imports.match(line):
            kinds.append("import")
            opened = [c for c in line if c in _OPENERS or c in _OPENERS.values()]
            if opened and opened[-1] in _OPENERS:
                in_import = _OPENERS[opened[-1]]
            continue
        kinds.append("code")
        if syntax.docstrings:
            in_value = next((q for q in ('"""', "'''") if line.count(q) % 2), None)
    return kinds


def count_lines(text: str, language: str | None) -> LineCounts | None:
    """The chunk's non-blank lines by kind; None for a language without rules."""
    kinds = line_kinds(text, language)
    if kinds is None:
        return None
    counted = [k for raw, k in zip(text.split("\n"), kinds, strict=True) if raw.strip()]
    return LineCounts(counted.count("code"), counted.count("prose"), counted.count("import"))


_OPENER = re.compile(r"^(?:[rRbBuU]{0,2}(?:\"\"\"|''')|/\*\*?!?)$")
_CLOSER = re.compile(r"(?:\"\"\"|'''|\*/)\s*$")
_LEADER = re.compile(r"^(?:///?!?|#+|\*(?!/)|[rRbBuU]{0,2}(?:\"\"\"|''')|/\*\*?!?)")


def _words_of(line: str) -> str:
    """A prose line without its comment leader or quotes: empty for a paragraph break."""
    return _LEADER.sub("", line.strip(), count=1).strip().strip("\"'*/").strip()


_DOC_COMMENT = ("///", "//!", "/**", "/*!")


def _documents(first: str, language: str | None) -> bool:
    """Whether a prose run opening with line `first` documents a definition or a module
    rather than explains the code next to it: a docstring, a doc comment by its syntax
    (`///`, `/**`), or a comment at the margin (Go's and C's doc comments, a license
    header). A comment indented inside a body says why the code below it does what it
    does; a fix often changes it with the code."""
    stripped = first.strip()
    if language == "python" and _DOCSTRING.match(stripped):
        return True
    return stripped.startswith(_DOC_COMMENT) or not first[:1].isspace()


def elide_prose(
    text: str, first_line: int, language: str | None
) -> tuple[str, list[tuple[int, int]]]:
    """`text` (lines `first_line`... of a file) with each run of at least
    `PROSE_RUN_LINES` prose lines cut to its first paragraph (at most `PROSE_HEAD_LINES`
    lines) and its closing delimiter, the lines between replaced by one line that says
    how many were left out and which; and the (first, last) file lines left out. Only
    prose that documents (`_documents`) is cut, never a comment inside a body.

    The context is read for what the code does: a 40-line docstring of parameters shown
    whole costs the room of the next definition's body. What is cut is cited, so the
    reader can ask for it; nothing is cut from code, and a language without rules
    (`line_kinds`) is left whole."""
    kinds = line_kinds(text, language)
    if kinds is None:
        return text, []
    lines = text.split("\n")
    out: list[str] = []
    left_out: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if kinds[i] != "prose":
            out.append(lines[i])
            i += 1
            continue
        end = i
        while end + 1 < len(lines) and kinds[end + 1] == "prose":
            end += 1
        run = lines[i : end + 1]
        if len(run) < PROSE_RUN_LINES or not _documents(run[0], language):
            out += run
            i = end + 1
            continue
        head = 1 if _OPENER.match(run[0].strip()) else 0
        said = 0
        while head < len(run) and said < PROSE_HEAD_LINES and _words_of(run[head]):
            head += 1
            said += 1
        tail = len(run) - 1 if _CLOSER.search(run[-1]) and len(run) - 1 >= head else len(run)
        if tail - head < PROSE_HEAD_LINES:
            out += run
            i = end + 1
            continue
        cut = next((ln for ln in run[head:tail] if ln.strip()), run[0])
        indent = cut[: len(cut) - len(cut.lstrip())]
        leader = _LEADER.match(cut.strip())
        mark = leader.group(0) + " " if leader and not _DOCSTRING.match(cut.strip()) else ""
        what = "docstring" if _DOCSTRING.match(run[0].strip()) else "comment"
        lo, hi = first_line + i + head, first_line + i + tail - 1
        out += run[:head]
        out.append(f"{indent}{mark}… {hi - lo + 1} more lines of {what} ({lo}-{hi})")
        out += run[tail:]
        left_out.append((lo, hi))
        i = end + 1
    return "\n".join(out), left_out


def behaviour_share(text: str, language: str | None, *, imports_are_code: bool = False) -> float:
    """1 when the chunk's code lines are at least its prose and import lines, else
    (code + 1) / (prose + imports + 1); see the module doc."""
    counts = count_lines(text, language)
    if counts is None:
        return 1.0
    code = counts.code + (counts.imports if imports_are_code else 0)
    other = counts.prose + (0 if imports_are_code else counts.imports)
    if code >= other:
        return 1.0
    return round((code + 1) / (other + 1), 3)


def defines_any(text: str, names: Iterable[str]) -> bool:
    """Whether a line of `text` defines one of `names` as a module's value: assigns it at
    the start of an unindented line (`NAME = `, `NAME: int = `, `const NAME = `, `static
    int NAME = `) or `#define`s it, in any language; a function's local or keyword
    parameter of that name is not its definition. A value's definition is whole on its
    line; a function or class chunk of mostly docstring is not its body (the context
    widens it to the whole definition instead). Dotted names count by their last part;
    names shorter than four characters are too common to tell."""
    wanted = sorted({n.split(".")[-1] for n in names if len(n.split(".")[-1]) >= 4})
    if not wanted:
        return False
    alternatives = "|".join(re.escape(n) for n in wanted)
    pattern = re.compile(
        rf"^[ \t]*#[ \t]*define[ \t]+(?:{alternatives})\b"
        # at a line's start (a module's value, not a function's local or parameter): an
        # optional type or keywords, the name, an optional annotation, one `=`
        rf"|^(?:[A-Za-z_][\w:<>\[\],*& \t]*[ \t*&])?"
        rf"(?:{alternatives})[ \t]*(?::[^=\n]*)?=(?!=)",
        re.M,
    )
    return pattern.search(text) is not None
