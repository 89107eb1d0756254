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
behaviour. Where a file's parts are ranked (`file_parts`), the doc comments of the
definitions a chunk shows whole are theirs, not the chunk's prose (`documented_lines`):
Rust, Java, Go and JavaScript document each item above it, often at more length than its
code (`///` examples), and a chunk of an `impl` block's documented methods is code, not a
header. The loop's own order still counts every prose line: there the same rule moved
changed lines out of tokio's and bat's contexts (benchmarks/RESULTS-multi.md).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dowse.tokens import stem, tokenize

__all__ = [
    "VALUE_KINDS",
    "WHOLE_DEFINITION_LINES",
    "BehaviourWords",
    "LineCounts",
    "behaviour_share",
    "behaviour_words",
    "code_lines",
    "count_lines",
    "defines_any",
    "documented_lines",
    "line_kinds",
    "words_on",
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

WHOLE_DEFINITION_LINES = 120
"""The longest definition the context shows whole when one of its parts is chosen."""
VALUE_KINDS = frozenset({"constant", "variable", "field", "property"})
"""Kinds whose declaration is a value, not a definition with a body."""

_DOCSTRING = re.compile(r"[rRbBuU]{0,2}(\"\"\"|''')")
_OPENERS = {"(": ")", "{": "}", "[": "]"}


@dataclass(frozen=True)
class LineCounts:
    code: int
    prose: int  # docstring and comment lines
    imports: int


def count_lines(
    text: str, language: str | None, *, documented: Collection[int] = (), preceding: str = ""
) -> LineCounts | None:
    """The chunk's non-blank lines by kind; None for a language without rules. Prose on
    the `documented` lines (0-based: `documented_lines`) is a definition's own and is not
    counted; `preceding`: as in `line_kinds`."""
    kinds = line_kinds(text, language, preceding=preceding)
    if kinds is None:
        return None
    code = prose = imports = 0
    for n, kind in kinds:
        code += kind == "code"
        prose += kind == "prose" and n not in documented
        imports += kind == "import"
    return LineCounts(code, prose, imports)


LineKind = Literal["code", "prose", "import"]


def line_kinds(
    text: str, language: str | None, *, preceding: str = ""
) -> list[tuple[int, LineKind]] | None:
    """Each non-blank line of `text` (0-based) with its kind: code, prose (docstrings,
    comments) or import; None for a language without rules. `preceding`: the source
    lines above `text` that it continues (its definition's, from the definition's first
    line): a chunk cut from inside a long definition can begin inside a docstring or a
    block comment opened above it, whose rest would read as code and whose closing
    quote as an opening one."""
    syntax = _SYNTAX.get(language or "")
    if syntax is None:
        return None
    if preceding:
        skip = preceding.count("\n") + 1
        kinds = line_kinds(preceding + "\n" + text, language)
        return [(n - skip, kind) for n, kind in kinds or () if n >= skip]
    out: list[tuple[int, LineKind]] = []
    closing: str | None = None  # inside a docstring (its quote) or a block comment ("*/")
    in_import: str | None = None  # inside a bracketed import: the bracket that ends it
    in_value: str | None = None  # inside a string a code line opened (`SQL = """`)
    for n, raw in enumerate(text.split("\n")):
        line = raw.strip()
        if not line:
            continue
        if in_value is not None:
            out.append((n, "code"))
            if in_value in line:
                in_value = None
            continue
        if closing is not None:
            out.append((n, "prose"))
            if closing in line:
                closing = None
            continue
        if in_import is not None:
            out.append((n, "import"))
            if in_import in line:
                in_import = None
            continue
        if syntax.docstrings and (m := _DOCSTRING.match(line)):
            quote = m.group(1)
            rest = line[m.end() :]
            out.append((n, "prose"))
            if quote not in rest:
                closing = quote
            continue
        if line.startswith(syntax.comments) and not (
            syntax.comments[0] == "#" and line.startswith("#!")
        ):
            out.append((n, "prose"))
            if line.startswith("/*") and "*/" not in line[2:]:
                closing = "*/"
            continue
        if syntax.imports.match(line):
            out.append((n, "import"))
            opened = [c for c in line if c in _OPENERS or c in _OPENERS.values()]
            if opened and opened[-1] in _OPENERS:
                in_import = _OPENERS[opened[-1]]
            continue
        out.append((n, "code"))
        if syntax.docstrings:
            in_value = next((q for q in ('"""', "'''") if line.count(q) % 2), None)
    return out


def behaviour_share(
    text: str,
    language: str | None,
    *,
    imports_are_code: bool = False,
    documented: Collection[int] = (),
    preceding: str = "",
) -> float:
    """1 when the chunk's code lines are at least its prose and import lines, else
    (code + 1) / (prose + imports + 1); see the module doc. `documented`, `preceding`:
    as in `count_lines`."""
    counts = count_lines(text, language, documented=documented, preceding=preceding)
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


def documented_lines(
    first_line: int, last_line: int, definitions: Iterable[Mapping[str, Any]]
) -> set[int]:
    """The lines (0-based in the chunk of lines `first_line`..`last_line`) of the
    definitions that start in it and are short enough to show whole
    (`WHOLE_DEFINITION_LINES`): their doc comments document code the chunk or its
    widening shows. What lies outside them (a module's doc comment and imports, a long
    class's docstring, the `impl` line above a run of methods) is the chunk's own.
    Values (constants, fields) are no definitions here: they are what a header holds."""
    out: set[int] = set()
    for sym in definitions:
        start, end = sym.get("start_line"), sym.get("end_line")
        if start is None or end is None or sym.get("kind") in VALUE_KINDS:
            continue
        if first_line <= start <= last_line and end - start < WHOLE_DEFINITION_LINES:
            out.update(range(start - first_line, min(end, last_line) - first_line + 1))
    return out


_DECIDES = re.compile(
    # a line that opens a branch, a loop over cases or a handler, or that fails
    r"^(?:\}\s*)?(?:raise|throw|panic|bail|abort|unreachable|assert\w*|if|elif|else\s+if"
    r"|unless|while|switch|case|match|when|guard|except|catch)\b"
    # a failure anywhere on the line: raise/throw/panic, an error's constructor or return
    r"|\b(?:raise|throw|panic!?|bail!|errors\.New|Errorf|Err)\b"
    r"|\w(?:Error|Exception|Err)\s*[({]"
    r"|\breturn\s+(?:nil\s*,\s*)?(?:err\b|-\s*\d|-?E[A-Z0-9_]{2,}\b|ERROR)"
)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.){2,}\'|`[^`\n]*`')


@dataclass(frozen=True)
class BehaviourWords:
    """The stemmed words of a definition's own code lines, by where they stand."""

    deciding: tuple[frozenset[str], ...]  # each line that branches, fails or handles one
    literals: tuple[str, ...]  # its string literals (a message, a key, a format)
    code_lines: int  # its own code lines, its signature's included

    @property
    def decides(self) -> frozenset[str]:
        """The words on any of its deciding lines."""
        return frozenset().union(*self.deciding)

    @property
    def strings(self) -> frozenset[str]:
        """The words inside its string literals (stemmed when asked: the ranking does not
        read them)."""
        return frozenset(stem(t) for text in self.literals for t in tokenize(text))


def behaviour_words(
    text: str, language: str | None, *, skip: Collection[int] = ()
) -> BehaviourWords:
    """The words of `text`'s code lines (0-based lines in `skip` left out: a nested
    definition's) that say what it does: those on a line that raises, throws, panics or
    returns an error, or that opens a branch (`if`, `match`, `case`, `except`), and
    those inside string literals (an error message a question quotes or paraphrases).
    Prose (docstrings, comments) and imports say nothing of what it does, nor does the
    first code line (the signature: `class TokenError(Exception):`); a language without
    rules is all code."""
    lines = text.split("\n")
    return words_on(lines, (n for n in code_lines(lines, language) if n not in skip))


def code_lines(lines: Sequence[str], language: str | None) -> list[int]:
    """The 0-based numbers of `lines`' code lines (`line_kinds`; every non-blank line in
    a language without rules)."""
    kinds = line_kinds("\n".join(lines), language)
    if kinds is None:
        return [n for n, line in enumerate(lines) if line.strip()]
    return [n for n, kind in kinds if kind == "code"]


def words_on(lines: Sequence[str], code: Iterable[int]) -> BehaviourWords:
    """`behaviour_words` of the code lines numbered `code` (0-based, in order) of
    `lines`; the first of them is the signature."""
    deciding: list[frozenset[str]] = []
    literals: list[str] = []
    count = 0
    for n in code:
        count += 1
        line = lines[n].strip()
        if count > 1 and _DECIDES.search(line):  # a signature declares; it does not decide
            deciding.append(frozenset(stem(t) for t in tokenize(line)))
        literals.extend(m.group(0) for m in _STRING.finditer(line))
    return BehaviourWords(tuple(deciding), tuple(literals), count)
