"""A short text per file — its path, what its leading docstring or comment says, and the
names it defines — embedded as one vector per file.

Why: a question names what a file is about far more often than it quotes a chunk of it.
One vector per file over these few lines ranks whole files well ("the writer of
migrations", "the session middleware") at a cost of one short embedding per file, where
chunk vectors cost dozens of long ones.

Beside it, each definition (`DEFINITION_KINDS`; the indexer leaves tests and examples
out) gets a short text of its own (`definition_text`: path, qualified name, signature,
the docstring's opening when it has one): a docstring says in words what the code does,
which is what a question says too, and a name and signature say what it is about even
without one; one file holds many of them. On the SWE-bench dev split, ranking files by
the closer of their summary and their best documented definition put the fixed file in
the top 5 for 61 % of the tasks where the summaries alone did for 39 %
(benchmarks/RESULTS-eval.md section 14); with the undocumented definitions too, 69 %
(section 15).

Invariants: the summary is a pure function of the path, the file's bytes and its symbols,
so its hash identifies its vector in the embedding cache like a chunk's; it stays within
`MAX_CHARS` (the model reads ~256 word pieces, so what comes first counts: path, then
the docstring, then classes, functions, methods).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dowse.indexer.records import Symbol
from dowse.languages import TEXT_LANGUAGES

__all__ = [
    "DEFINITION_DOC_CHARS",
    "DOC_CHARS",
    "DEFINITION_KINDS",
    "MAX_CHARS",
    "definition_text",
    "file_summary",
    "leading_doc",
]

MAX_CHARS = 900
DOC_CHARS = 240
DEFINITION_DOC_CHARS = 400
DEFINITION_KINDS = frozenset(
    {
        "class",
        "interface",
        "struct",
        "enum",
        "trait",
        "type",
        "function",
        "method",
        "constructor",
        "macro",
        "constant",
    }
)
"""The kinds of definition that get a vector of their own."""

_PY_DOC = re.compile(r'\A(?:\s*#[^\n]*\n)*\s*[rRuUbB]{0,2}("""|\'\'\'|"|\')(.*?)\1', re.S)
_LINE_COMMENT = re.compile(r"^\s*(?://+|#+|--|;+|%+)\s?(.*)$")
_BLOCK_COMMENT = re.compile(r"\A\s*/\*+(.*?)\*/", re.S)
_BOILERPLATE = re.compile(
    r"licen[cs]e|copyright|\(c\)|spdx|coding[:=]|^!|all rights reserved", re.I
)
_WORD = re.compile(r"\S+")
_CLASS_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "type", "module"})
_FUNCTION_KINDS = frozenset({"function", "macro"})
_METHOD_KINDS = frozenset({"method", "constructor"})


def leading_doc(text: str, language: str) -> str:
    """The file's own description: a Python module docstring, the first comment block
    that is not a licence or encoding line, or a text file's opening words; "" when it
    has none."""
    if language in TEXT_LANGUAGES:
        return _squeeze(text)
    if language == "python":
        m = _PY_DOC.match(text)
        return _squeeze(m.group(2)) if m else ""
    m = _BLOCK_COMMENT.match(text)
    if m:
        lines = [ln.strip().lstrip("*").strip() for ln in m.group(1).splitlines()]
        return _squeeze(" ".join(ln for ln in lines if ln and not _BOILERPLATE.search(ln)))
    kept: list[str] = []
    for line in text.splitlines()[:40]:
        if not line.strip():
            if kept:
                break
            continue
        m = _LINE_COMMENT.match(line)
        if m is None:
            break
        if not _BOILERPLATE.search(m.group(1)):
            kept.append(m.group(1).strip())
    return _squeeze(" ".join(kept))


def _squeeze(text: str) -> str:
    """The opening words, whitespace collapsed, within DOC_CHARS (read no further)."""
    words: list[str] = []
    size = 0
    for m in _WORD.finditer(text):
        words.append(m.group())
        size += len(words[-1]) + 1
        if size > DOC_CHARS:
            break
    return " ".join(words)[:DOC_CHARS]


def file_summary(path: str, text: str, language: str, symbols: Sequence[Symbol]) -> str:
    """Path, leading doc, then the names defined: classes, functions, methods (each name
    once, in file order)."""
    parts = [path]
    doc = leading_doc(text, language)
    if doc:
        parts.append(doc)
    groups: list[list[str]] = [[], [], [], []]
    for sym in symbols:
        if sym.kind in _CLASS_KINDS:
            groups[0].append(sym.name)
        elif sym.kind in _FUNCTION_KINDS:
            groups[1].append(sym.name)
        elif sym.kind in _METHOD_KINDS:
            groups[2].append(sym.name)
        elif sym.kind == "heading":
            groups[3].append(sym.name)
    labels = ("classes", "functions", "methods", "sections")
    for label, names in zip(labels, groups, strict=True):
        unique = list(dict.fromkeys(names))
        if unique:
            parts.append(f"{label}: {', '.join(unique)}")
    if len(parts) == 1 and text.strip():
        parts.append(_squeeze(text))  # nothing defined, nothing said: its opening words
    return "\n".join(parts)[:MAX_CHARS]


def definition_text(path: str, qualified_name: str, signature: str, docstring: str) -> str:
    """What a definition is embedded as: its path, qualified name and signature, then the
    docstring's opening (DEFINITION_DOC_CHARS, whitespace collapsed) when it has one."""
    head = f"{path}\n{qualified_name}: {signature}"
    doc = " ".join(docstring.split())[:DEFINITION_DOC_CHARS]
    return f"{head}\n{doc}" if doc else head
