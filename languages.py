"""Which language a file is written in, decided from its name (and, optionally, its shebang).

Invariants:

- Language names are dowse's own, lower-case and stable (they are stored in the index);
  `GRAMMAR_NAMES` maps each code language to its tree-sitter-language-pack grammar.
- `CODE_LANGUAGES` are exactly the languages with a grammar and an
  ``indexer/queries/<language>-tags.scm`` file; they are parsed for symbols.
- `TEXT_LANGUAGES` are indexed as text only (chunked by lines or headings, never parsed
  with tree-sitter here).
- `language_for` returns None for anything else (images, archives, unknown extensions):
  such a file is not indexed unless a caller decides otherwise (e.g. from a shebang).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "CODE_LANGUAGES",
    "GRAMMAR_NAMES",
    "TEXT_LANGUAGES",
    "language_for",
    "is_benchmark_path",
    "is_documentation",
    "is_example_path",
    "is_test_path",
    "language_from_shebang",
]

# dowse language -> grammar name in tree-sitter-language-pack 0.13.0.
GRAMMAR_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "python": "python",
        "javascript": "javascript",
        "typescript": "typescript",
        "tsx": "tsx",
        "go": "go",
        "rust": "rust",
        "java": "java",
        "c": "c",
        "cpp": "cpp",
        "csharp": "csharp",
        "ruby": "ruby",
        "php": "php",
        "kotlin": "kotlin",
        "swift": "swift",
        "scala": "scala",
        "bash": "bash",
    }
)

CODE_LANGUAGES: frozenset[str] = frozenset(GRAMMAR_NAMES)
TEXT_LANGUAGES: frozenset[str] = frozenset({"markdown", "rst", "yaml", "toml", "json", "text"})

_EXTENSIONS: Mapping[str, str] = MappingProxyType(
    {
        # code
        ".py": "python",
        ".pyi": "python",
        ".js": "javascript",
        ".mjs": "javascript",
        ".cjs": "javascript",
        ".jsx": "javascript",
        ".ts": "typescript",
        ".mts": "typescript",
        ".cts": "typescript",
        ".tsx": "tsx",
        ".go": "go",
        ".rs": "rust",
        ".java": "java",
        ".c": "c",
        # .h is shared by C and C++; the C grammar reads most C++ headers' declarations
        # poorly but never fails, and pure C headers are the more common case.
        ".h": "c",
        ".cc": "cpp",
        ".cpp": "cpp",
        ".cxx": "cpp",
        ".c++": "cpp",
        ".hpp": "cpp",
        ".hh": "cpp",
        ".hxx": "cpp",
        ".cs": "csharp",
        ".rb": "ruby",
        ".rake": "ruby",
        ".gemspec": "ruby",
        ".php": "php",
        ".kt": "kotlin",
        ".kts": "kotlin",
        ".swift": "swift",
        ".scala": "scala",
        ".sc": "scala",
        ".sh": "bash",
        ".bash": "bash",
        # text
        ".md": "markdown",
        ".markdown": "markdown",
        ".rst": "rst",
        ".yaml": "yaml",
        ".yml": "yaml",
        ".toml": "toml",
        ".json": "json",
        ".txt": "text",
        ".cfg": "text",
        ".ini": "text",
        ".conf": "text",
        ".mk": "text",
        ".cmake": "text",
        ".gradle": "text",
        ".properties": "text",
        ".sql": "text",
        ".proto": "text",
        ".graphql": "text",
        ".html": "text",
        ".css": "text",
    }
)

# Whole file names (compared exactly) that carry no telling extension.
_FILENAMES: Mapping[str, str] = MappingProxyType(
    {
        "Dockerfile": "text",
        "Containerfile": "text",
        "Makefile": "text",
        "GNUmakefile": "text",
        "makefile": "text",
        "CMakeLists.txt": "text",
        "Procfile": "text",
        "LICENSE": "text",
        "COPYING": "text",
        "NOTICE": "text",
        "AUTHORS": "text",
        "README": "text",
        "CHANGELOG": "text",
        ".gitignore": "text",
        ".dockerignore": "text",
        ".editorconfig": "text",
        "Rakefile": "ruby",
        "Gemfile": "ruby",
        "Vagrantfile": "ruby",
        "BUILD": "text",
        "WORKSPACE": "text",
        ".bashrc": "bash",
        ".bash_profile": "bash",
        ".profile": "bash",
    }
)

_SHEBANG = re.compile(rb"^#!\s*(?:/usr)?(?:/local)?/bin/(?:env\s+(?:-S\s+)?)?([A-Za-z0-9_.+-]+)")
_INTERPRETERS: tuple[tuple[str, str], ...] = (
    ("python", "python"),
    ("pypy", "python"),
    ("bash", "bash"),
    ("sh", "bash"),
    ("dash", "bash"),
    ("ksh", "bash"),
    ("node", "javascript"),
    ("deno", "typescript"),
    ("ts-node", "typescript"),
    ("ruby", "ruby"),
    ("php", "php"),
    ("kotlin", "kotlin"),
    ("scala", "scala"),
    ("swift", "swift"),
)


def language_for(path: str) -> str | None:
    """The language of `path` from its file name, or None when it is not indexable text.

    Both POSIX and Windows separators are accepted. Extensions are matched
    case-insensitively; whole file names (``Dockerfile``, ``Makefile``) exactly.
    """
    name = posixpath.basename(path.replace("\\", "/"))
    if name in _FILENAMES:
        return _FILENAMES[name]
    lowered = name.lower()
    if lowered.startswith("dockerfile") or lowered.endswith(".dockerfile"):
        return "text"
    # Longest suffix first, so a compound extension can win over its last part.
    dot = lowered.find(".", 1)
    while dot != -1:
        language = _EXTENSIONS.get(lowered[dot:])
        if language is not None:
            return language
        dot = lowered.find(".", dot + 1)
    return None


def language_from_shebang(head: bytes) -> str | None:
    """The language named by a ``#!`` line at the start of `head`, or None.

    Meant for extension-less scripts: ``#!/usr/bin/env python3`` gives "python".
    """
    match = _SHEBANG.match(head)
    if match is None:
        return None
    interpreter = match.group(1).decode("ascii", errors="replace")
    for prefix, language in _INTERPRETERS:
        # python3, python3.11, ruby2.7 ...; but "shellcheck" must not read as "sh".
        if interpreter == prefix or (
            interpreter.startswith(prefix) and interpreter[len(prefix)].isdigit()
        ):
            return language
    return None


_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|spec|__tests__)(/|$)|(^|/)(test_[^/]*|[^/]*_test"
    r"\.\w+|[^/]*\.(test|spec)\.\w+|conftest\.py)$"
)


def is_test_path(path: str) -> bool:
    """A test file by the common conventions (tests/ dirs, test_*.py, *_test.go, *.spec.ts)."""
    return bool(_TEST_PATH.search(path))


_BENCHMARK_PATH = re.compile(r"(^|/)(asv_bench|benchmarks?|bench|benches)/")


def is_benchmark_path(path: str) -> bool:
    """A benchmark by its directory (asv_bench/, benchmarks/, bench/, Rust's benches/).
    Like a test, a benchmark calls the code it measures with the same names and words,
    and is not where that code's behaviour is decided."""
    return bool(_BENCHMARK_PATH.search(path))


_EXAMPLE_PATH = re.compile(r"(^|/)(examples?|galler(y|ies)|demos?|tutorials?|samples?)/")


_DOCS_DIR = re.compile(r"(^|/)(docs?|documentation)/", re.IGNORECASE)


def is_example_path(path: str) -> bool:
    """Under an examples, demos, tutorials, samples or gallery directory, or the docs tree:
    files that show the project rather than make it up (an example's manifest declares the
    example's needs, not the project's)."""
    return bool(_EXAMPLE_PATH.search(path) or _DOCS_DIR.search(path))


def is_documentation(path: str, language: str | None) -> bool:
    """Documentation: text (markdown, rst, ...) and the example, demo and tutorial
    scripts that show how to use the code rather than implement it."""
    return language in TEXT_LANGUAGES or bool(_EXAMPLE_PATH.search(path))
