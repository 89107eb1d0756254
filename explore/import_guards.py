"""Which third-party imports the project cannot run without, and why the others are not
needed: an import only under ``if TYPE_CHECKING:`` (read by type checkers, never run), only
inside a ``try:`` whose handler catches ``ImportError`` (an optional dependency with a
fallback), only under an ``if`` whose condition names the package (``if
isinstance(x, array_type("cupy")): import cupy``, ``if HAS_CUPY:``: it runs only where
the package is known to be in use or installed), only in tests, or only in examples and
docs. An import inside a function that runs whenever the function does is needed.

`type_only` says the same of an import between the project's own files: one read by type
checkers only (``if TYPE_CHECKING:``, TypeScript's ``import type``) never runs, so a cycle
made only of such imports is no circular import.

Invariants:

- A package is required as soon as one import of it, in one file that is neither a test nor
  an example, runs unguarded: `conditional` never calls a package optional that some
  module needs.
- Guards are read from the indentation of the lines above the statement (the enclosing
  ``if``/``try``/``except`` headers), as Python nests them; nothing is executed. Only
  Python files are read this way; an import from another language's non-test,
  non-example file counts as required.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from dowse.explore.tracks import Context
from dowse.languages import is_example_path, is_test_path

__all__ = ["conditional", "guard", "type_only"]

_TYPE_CHECKING = re.compile(r"^\s*(el)?if\s+(\w+\.)?TYPE_CHECKING\s*:")
_TRY = re.compile(r"^\s*try\s*:")
_EXCEPT = re.compile(r"^\s*except\b(.*):")
_CATCHES_IMPORT = re.compile(r"ImportError|ModuleNotFoundError|\bException\b|^\s*$")
_IF = re.compile(r"^\s*(el)?if\b(.*)")
_TS_TYPE_ONLY = re.compile(r"^\s*(?:import|export)\s+type\s+(?!from\b)[\w{*]")
_TS_BRACES = re.compile(r"^\s*(?:import|export)\s*\{([^}]*)\}\s*from\b")
_STATEMENT_LINES = 40
"""How many lines an import statement between braces may span."""
_HEADER = re.compile(r"^\s*(if|elif|else|try|except|finally|with|for|while|def|async|class)\b")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _handlers_catch_import(lines: list[str], at: int, indent: int) -> bool:
    """Whether the `try:` at index `at` has an `except` (at its indentation) that catches
    an import failure: ImportError, ModuleNotFoundError, Exception or a bare `except:`."""
    for raw in lines[at + 1 :]:
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if _indent(raw) < indent or (_indent(raw) == indent and not _HEADER.match(raw)):
            return False
        if _indent(raw) == indent:
            if m := _EXCEPT.match(raw):
                if _CATCHES_IMPORT.search(m.group(1)):
                    return True
            elif not raw.lstrip().startswith(("except", "else", "finally")):
                return False
    return False


def guard(lines: list[str], line: int, package: str = "") -> str | None:
    """Why the import statement at `line` (1-based) may not run: ``"TYPE_CHECKING"`` inside
    ``if TYPE_CHECKING:``, ``"optional"`` inside a ``try:`` that catches ImportError (or in
    its handler), ``"checked"`` inside an ``if``/``elif`` whose condition names `package`
    (in any case, within a name: ``array_type_cupy``); None when it runs whenever its
    block does."""
    if not 1 <= line <= len(lines):
        return None
    indent = _indent(lines[line - 1])
    for i in range(line - 2, -1, -1):
        raw = lines[i]
        if not raw.strip() or raw.lstrip().startswith("#") or _indent(raw) >= indent:
            continue
        indent = _indent(raw)
        if _TYPE_CHECKING.match(raw):
            return "TYPE_CHECKING"
        if package and (m := _IF.match(raw)) and package.lower() in m.group(2).lower():
            return "checked"
        if _TRY.match(raw) and _handlers_catch_import(lines, i, indent):
            return "optional"
        if (m := _EXCEPT.match(raw)) and re.search(r"ImportError|ModuleNotFoundError", m.group(1)):
            return "optional"  # the fallback of an optional import
        if indent == 0:
            return None
    return None


def type_only(lines: list[str], line: int, language: str) -> bool:
    """Whether the import statement at `line` (1-based) is read by type checkers only and
    never runs: Python's inside ``if TYPE_CHECKING:``; TypeScript's (and Flow's) ``import
    type ...``, ``export type ... from`` and ``import {type A, type B} from`` whose every
    name is marked ``type`` (``import X, {type A}`` still runs for ``X``)."""
    if not 1 <= line <= len(lines):
        return False
    if language == "python":
        return guard(lines, line) == "TYPE_CHECKING"
    if language not in ("typescript", "tsx", "javascript"):
        return False
    text = " ".join(lines[line - 1 : line - 1 + _STATEMENT_LINES])
    if _TS_TYPE_ONLY.match(text):
        return True
    braces = _TS_BRACES.match(text)
    if braces is None:
        return False
    names = [n.strip() for n in braces.group(1).split(",") if n.strip()]
    return bool(names) and all(re.match(r"type\s", n) for n in names)


def _statements(lines: list[str], package: str) -> list[int]:
    """The lines (1-based) of `import package...` and `from package... import`."""
    name = re.escape(package)
    rx = re.compile(
        rf"^\s*(from\s+{name}(\.|\s)|import\s+([\w.]+\s*(as\s+\w+\s*)?,\s*)*{name}(\.|\s|,|$))"
    )
    return [i + 1 for i, raw in enumerate(lines) if rx.match(raw)]


_WHY = {
    "TYPE_CHECKING": "only under TYPE_CHECKING",
    "optional": "only in try/except ImportError",
    "checked": "only where a check names it",
    "tests": "only in tests",
    "examples": "only in examples or docs",
}


def conditional(ctx: Context, external: Mapping[str, Mapping[str, int]]) -> dict[str, str]:
    """The third-party packages of `external` (package → importing file → line) that no
    module needs to run, each with why: "only under TYPE_CHECKING", "only in try/except
    ImportError", "only where a check names it", "only in tests", "only in examples or
    docs" (joined when several)."""
    out: dict[str, str] = {}
    for package, importers in external.items():
        reasons: set[str] = set()
        for path in importers:
            if is_test_path(path):
                reasons.add("tests")
                continue
            if is_example_path(path):
                reasons.add("examples")
                continue
            lines = ctx.lines(path) if path.endswith((".py", ".pyi")) else None
            found = _statements(lines, package) if lines else []
            guards = [guard(lines, n, package) for n in found] if lines else []
            if not guards or None in guards:
                break  # this file needs it
            reasons.update(g for g in guards if g is not None)
        else:
            if reasons:
                out[package] = ", ".join(_WHY[r] for r in sorted(reasons, key=list(_WHY).index))
    return out
