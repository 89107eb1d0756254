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
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Literal, NamedTuple

__all__ = [
    "CODE_LANGUAGES",
    "CONVENTIONS",
    "GRAMMAR_NAMES",
    "HEADER",
    "ModuleRole",
    "TEXT_LANGUAGES",
    "PathConvention",
    "is_benchmark_path",
    "is_documentation",
    "is_example_path",
    "is_generated_path",
    "is_legacy_path",
    "is_test_code",
    "is_test_path",
    "is_test_support_path",
    "is_vendored_path",
    "header_language",
    "methods_apart",
    "module_role",
    "language_for",
    "language_from_shebang",
    "string_quotes",
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


HEADER = ".h"
"""The extension C and C++ share: `header_language` decides which a project's are."""
_CPP_SOURCES = (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx")


def header_language(paths: Iterable[str]) -> str:
    """What a project's `.h` headers are written in: C++ where its C++ files (sources and
    C++-only headers) outnumber its `.c` files (fmt's and simdjson's headers hold
    classes and templates, which the C grammar misreads), else C (zstd's few C++
    contributions do not make its headers C++)."""
    cpp = c = 0
    for path in paths:
        lowered = path.lower()
        if lowered.endswith(_CPP_SOURCES):
            cpp += 1
        elif lowered.endswith(".c"):
            c += 1
    return "cpp" if cpp > c else "c"


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


# -- what a path is, by each ecosystem's convention ---------------------------------------


class PathConvention(NamedTuple):
    """One ecosystem's way of marking a file's role in its path."""

    ecosystem: str
    role: Literal["test", "benchmark", "example", "generated", "vendored", "legacy"]
    pattern: str
    """A regular expression searched in the POSIX path relative to the root."""


# Tests and fuzzers call the code under test with its own names and words; benchmarks
# likewise; examples show how to use the code; generated and amalgamated files repeat
# their sources. None of them is where a behaviour is decided, so each ranks lower unless
# a question asks for it (`retrieval.query.QueryAnalysis`).
CONVENTIONS: tuple[PathConvention, ...] = (
    PathConvention("any", "test", r"(^|/)(tests?|testing|spec|__tests__)(/|$)"),
    PathConvention("any", "test", r"(^|/)(test_[^/]*|[^/]*_test\.\w+)$"),
    PathConvention("python", "test", r"(^|/)conftest\.py$"),
    PathConvention("go", "test", r"(^|/)testdata/"),  # `_test.go` is `*_test.*` above
    PathConvention(
        "java", "test", r"(^|/)src/(test|androidTest|testFixtures|integration-?[tT]est|it)/"
    ),  # Maven's src/it/ and src/integration-test/, Gradle's src/integrationTest/
    PathConvention("javascript", "test", r"(^|/)[^/]*\.(test|spec)\.\w+$"),
    PathConvention("javascript", "test", r"(^|/)(__mocks__|__fixtures__|cypress|e2e)/"),
    PathConvention("c", "test", r"(^|/)(t|unittests?)/"),  # git's and perl's t/ suites
    PathConvention("c", "test", r"(^|/)(fuzz|fuzzing|fuzzers?|oss-fuzz)/"),
    PathConvention("c", "test", r"(^|/)([^/]*_fuzz(er)?[^/]*|fuzz_[^/]*)$"),
    PathConvention("python", "benchmark", r"(^|/)asv_bench/"),
    PathConvention("any", "benchmark", r"(^|/)(benchmarks?|bench)/"),
    PathConvention("rust", "benchmark", r"(^|/)benches/"),
    PathConvention("any", "example", r"(^|/)(examples?|galler(y|ies)|demos?|tutorials?|samples?)/"),
    PathConvention("c", "generated", r"(^|/)(single_include|singleheader|amalgamation)/"),
    PathConvention("c", "generated", r"\.tab\.[ch](pp)?$|(^|/)lex\.yy\.c$"),  # bison, flex
    PathConvention("go", "generated", r"\.pb(\.gw)?\.go$|(^|/)zz_generated[^/]*\.go$"),
    PathConvention("python", "generated", r"_pb2(_grpc)?\.pyi?$"),
    PathConvention("any", "generated", r"(^|/)[^/]*[._]generated\.\w+$"),
    PathConvention("go", "vendored", r"(^|/)vendor/"),
    PathConvention("c", "vendored", r"(^|/)(third[_-]?party|3rd[_-]?party|dependencies|deps)/"),
    # C and C++ contrib/: ports, bindings and copies kept beside the library (zstd's
    # contrib/linux-kernel/ copy of lib/). Only its C and C++ files: Django's contrib/
    # is the framework itself.
    PathConvention("c", "vendored", r"(^|/)contrib/.*\.(c|h|cc|cpp|cxx|hh|hpp)$"),
    # Older versions kept for compatibility: zstd's lib/legacy/ decoders of the v0.1-v0.7
    # formats repeat every name of lib/decompress/.
    PathConvention("any", "legacy", r"(^|/)legacy/"),
)
"""Each ecosystem's path conventions; a role holds when any of its patterns matches.
Patterns are kept apart by ecosystem for the reader; all of them apply to every path (a
`t/` in a Go repository is no less a test suite)."""


def _role_pattern(role: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{c.pattern})" for c in CONVENTIONS if c.role == role))


_TEST_PATH = _role_pattern("test")
_BENCHMARK_PATH = _role_pattern("benchmark")
_EXAMPLE_PATH = _role_pattern("example")
_GENERATED_PATH = _role_pattern("generated")
_VENDORED_PATH = _role_pattern("vendored")
_LEGACY_PATH = _role_pattern("legacy")


def is_test_path(path: str) -> bool:
    """A test or fuzzer by its ecosystem's convention (`CONVENTIONS`: tests/ dirs,
    test_*.py, *_test.go, Go testdata/, Java src/test/, *.spec.ts, __tests__/, C t/ and
    fuzz/ suites)."""
    return bool(_TEST_PATH.search(path))


_TEST_ATTRIBUTE = re.compile(
    r"""^(?:
    \#\[\s*(?:cfg\s*\(\s*(?:test\s*|all\s*\(\s*test\s*,.*)\)|test|bench|(?:[\w:]+::)?test(?:\s*\(.*\))?|rstest|
        test_case\b.*|quickcheck|proptest)\s*\]     # Rust: #[test], #[tokio::test], #[cfg(test)]
    |@(?:org\.junit\.(?:jupiter\.api\.)?)?(?:Test|ParameterizedTest|RepeatedTest|TestFactory)\b
                                                  # JUnit
    |\[\s*(?:Test|Fact|Theory|TestMethod|TestCase)\b.*\]   # NUnit, xUnit, MSTest
    )""",
    re.X,
)


def is_test_attribute(decorator: str) -> bool:
    """Whether a definition's attribute or annotation makes it test code where tests sit
    beside the code they test: Rust's `#[cfg(test)]` modules and `#[test]`,
    `#[tokio::test]`, `#[bench]` functions, a JUnit `@Test` or an xUnit `[Fact]`."""
    return bool(_TEST_ATTRIBUTE.match(decorator.strip()))


# Test support: code at a test path that the tests use but that is no test itself. Where
# the runner collects tests by file name (pytest's test_*.py, `go test`'s *_test.go,
# JUnit's *Test classes, RSpec's *_spec.rb), a file under a test directory whose name
# says no test is support; elsewhere (mocha's test/*.js, C's t/ suites) only the
# directories below say so.
_SUPPORT_DIR = re.compile(r"(^|/)(testdata|fixtures?|__fixtures__|__mocks__)/")
_BY_NAME = frozenset({"py", "go", "java", "kt", "scala", "groovy", "cs", "rb"})
_TEST_NAME = re.compile(
    r"^(?:test_|tests_|Test[A-Z]|tests?$)|(?:_tests?|Tests?|TestCase|IT|_spec)$", re.ASCII
)
_RUST_TESTS_DIR = re.compile(r"(?:^|/)tests/(.+)$")


def is_test_support_path(path: str) -> bool:
    """Code at a test path that is no test itself but what tests use: Go's testdata/ and
    fixtures/, __fixtures__/, __mocks__/; pytest's conftest.py; a Python, Go, Java,
    Kotlin, Scala, C# or Ruby file under a test directory whose name makes it no test
    (flask's tests/test_apps/cliapp/app.py, a tests/helpers.py, spec_helper.rb); a Rust
    module in a subdirectory of tests/ (tests/common/mod.rs; tests/<dir>/main.rs is a
    test crate). A test file named as one, and any file where the runner collects tests
    by directory (mocha's test/app.js, C's t/ scripts), is no support."""
    if not is_test_path(path):
        return False
    if _SUPPORT_DIR.search(path):
        return True
    name = posixpath.basename(path)
    stem, _, ext = name.rpartition(".")
    if name == "conftest.py":
        return True
    if ext == "rs":
        rest = _RUST_TESTS_DIR.search(path)
        return rest is not None and "/" in rest.group(1) and name != "main.rs"
    return ext in _BY_NAME and not _TEST_NAME.search(stem)


def is_benchmark_path(path: str) -> bool:
    """A benchmark by its directory (asv_bench/, benchmarks/, bench/, Rust's benches/).
    Like a test, a benchmark calls the code it measures with the same names and words,
    and is not where that code's behaviour is decided."""
    return bool(_BENCHMARK_PATH.search(path))


def is_generated_path(path: str) -> bool:
    """Generated or amalgamated code by its path: single-header amalgamations
    (single_include/, simdjson's singleheader/), bison and flex output, protobuf and
    Kubernetes generated Go, *_pb2.py, *.generated.*.
    Such a file repeats what its sources say (and is regenerated by the same fix)."""
    return bool(_GENERATED_PATH.search(path))


def is_vendored_path(path: str) -> bool:
    """A copy of another project kept in the tree: Go's vendor/, C and C++ third_party/,
    3rdparty/, dependencies/ and deps/, C and C++ files under contrib/, and the older
    versions kept under legacy/. Its code is the other project's (or a port or an old
    version of this one's), rarely where a behaviour of today is decided."""
    return bool(_VENDORED_PATH.search(path)) or is_legacy_path(path)


def is_legacy_path(path: str) -> bool:
    """An older version kept for compatibility, under legacy/ (zstd's lib/legacy/
    decoders of the v0.1-v0.7 formats): one of `is_vendored_path`'s copies."""
    return bool(_LEGACY_PATH.search(path))


# A test module inside a source file, by its language's convention: Rust's `#[cfg(test)]
# mod tests` and its `#[test]` functions (tokio's and others' `#[tokio::test]`).
_TEST_CODE: Mapping[str, re.Pattern[str]] = MappingProxyType(
    {"rust": re.compile(r"(?:\s*//[^\n]*\n)*\s*#\[(?:cfg\(test\)|(?:\w+::)*test)\]")}
)
_TEST_MODULES: Mapping[str, re.Pattern[str]] = MappingProxyType(
    {"rust": re.compile(r"^tests?(?:[.:]|$)")}
)


def is_test_code(language: str, symbol: str | None, text: str) -> bool:
    """A chunk of test code inside a source file: in Rust, a chunk of a `mod tests` (its
    symbol's outermost part) or one that opens with `#[cfg(test)]` or a `#[test]`
    attribute (after comments; one that merely holds one further down is mostly other
    code). A test file's chunks are tests by `is_test_path` already."""
    module = _TEST_MODULES.get(language)
    if module is not None and symbol and module.match(symbol):
        return True
    marker = _TEST_CODE.get(language)
    return marker is not None and marker.match(text) is not None


# -- where a type's methods may be defined ------------------------------------------------

_RUST_CRATE_SOURCE = re.compile(r"^(.*?(?:^|/)src)/")


def methods_apart(type_path: str, method_path: str) -> bool:
    """Whether a type defined in `type_path` may have a method defined in `method_path`
    by its language's rule, the two files being one type's, not two types': in Go a
    method is declared in any file of its receiver type's package, a directory (cobra's
    `Command` in command.go, `Command.enforceFlagGroupsForCompletion` in flag_groups.go);
    in Rust an `impl` may be in any module of the type's crate (the files under one
    `src/`). Elsewhere (Python, Java, JavaScript) a class's methods are in its body, so a
    class and a method of its name in two files are two definitions."""
    language = language_for(type_path)
    if language != language_for(method_path):
        return False
    if language == "go":
        return posixpath.dirname(type_path) == posixpath.dirname(method_path)
    if language == "rust":
        a, b = _RUST_CRATE_SOURCE.match(type_path), _RUST_CRATE_SOURCE.match(method_path)
        return a is not None and b is not None and a.group(1) == b.group(1)
    return False


# -- what a module declaration says of the module ----------------------------------------

ModuleRole = Literal["test", "macros"]
_MODULE_ROLES: Mapping[str, tuple[tuple[re.Pattern[str], ModuleRole], ...]] = MappingProxyType(
    {
        "rust": (
            # Compiled for the tests alone: `#[cfg(test)]`, `#[cfg(all(test, unix))]`
            # (`any(test, ...)` is compiled for more than the tests).
            (re.compile(r"^#\[cfg\((?:all\((?:[^()]*,\s*)?)?test\s*[,)]"), "test"),
            # Lends its macros to the modules its parent declares after it.
            (re.compile(r"^#\[macro_use\]$"), "macros"),
        )
    }
)


def module_role(language: str, attributes: Iterable[str]) -> ModuleRole | None:
    """What the attributes of a module declaration in another file (Rust's `mod x;`)
    make of that module by its language's convention: "test" when it is compiled for
    the tests alone (`#[cfg(test)] mod testutil;`: ripgrep's crates/searcher/src/
    testutil.rs is test code under src/), "macros" when it lends its macros to its
    siblings (`#[macro_use] mod macros;`: a test crate's tests/macros.rs is what its
    tests invoke), else None."""
    rules = _MODULE_ROLES.get(language, ())
    for attribute in attributes:
        for pattern, role in rules:
            if pattern.match(attribute.strip()):
                return role
    return None


# -- string literals ---------------------------------------------------------------------

_STRING_QUOTES: Mapping[str, str] = MappingProxyType(
    {
        # A single quote opens a character, not a string, in these.
        "c": '"',
        "cpp": '"',
        "csharp": '"',
        "java": '"',
        "kotlin": '"',
        "scala": '"',
        "rust": '"',
        "swift": '"',
        "go": '"`',  # `raw strings`
        "javascript": "\"'`",  # `template literals`
        "typescript": "\"'`",
        "tsx": "\"'`",
    }
)


def string_quotes(language: str | None) -> str:
    """The characters that open and close a string literal on one line in `language`
    (both quotes for Python, Ruby, PHP, shell and anything unknown)."""
    return _STRING_QUOTES.get(language or "", "\"'")


_DOCS_DIR = re.compile(r"(^|/)(docs?|documentation)/", re.IGNORECASE)


def is_example_path(path: str) -> bool:
    """Under an examples, demos, tutorials, samples or gallery directory, or the docs tree:
    files that show the project rather than make it up (an example's manifest declares the
    example's needs, not the project's)."""
    return bool(_EXAMPLE_PATH.search(path) or _DOCS_DIR.search(path))


def is_documentation(path: str, language: str | None) -> bool:
    """Documentation: text (markdown, rst, ...), the example, demo and tutorial scripts
    that show how to use the code rather than implement it, and code in the docs tree
    (zstd's doc/educational_decoder/, a second decoder written to teach the format)."""
    return language in TEXT_LANGUAGES or is_example_path(path)
