"""Reading a question or task: what kind of text it is and what it names.

The analysis is purely lexical and deterministic. It extracts what a developer would
search for by hand (identifiers, quoted strings, file paths, stack-trace frames, plain
terms) and decides how much the query should lean on exact matching versus meaning:
identifier-like, quoted, path-like or traceback text leans lexical; plain language leans
dense. From it come the queries search runs: the full-text tokens (`base_tokens`, the
title's once more for whole-file rankings, `file_query`) and the question's vector
(`question_vector`: paths cut short, the title blended in).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from dowse.languages import (
    is_benchmark_path,
    is_generated_path,
    is_legacy_path,
    is_test_path,
    is_vendored_path,
    language_for,
)
from dowse.tokens import split_identifier, tokenize, variants

if TYPE_CHECKING:
    from dowse.indexer.embed import Embedder

__all__ = [
    "BUILTIN_CALLS",
    "QUERY_NOISE",
    "TITLE_MIN_WORDS",
    "TITLE_WEIGHT",
    "QueryAnalysis",
    "analyze",
    "base_tokens",
    "compact_paths",
    "file_query",
    "literals_of",
    "naming",
    "prepare_question",
    "question_vector",
    "rust_paths",
    "script_modules",
    "title_of",
    "title_tokens",
    "with_rust_paths",
    "without_template",
]


_PATH = re.compile(
    r"(?<![\w/.~-])(~?/?(?:[\w.-]+/)+[\w.-]+\.\w{1,6}|[\w-]+\.(?:py|pyi|js|jsx|"
    r"ts|tsx|go|rs|java|c|h|cc|cpp|hpp|cs|rb|php|kt|swift|scala|sh|md|toml|yaml|"
    r"yml|json))(?![\w/])"
)
_FRAME_PY = re.compile(r'File "([^"]+)", line (\d+)(?:, in (\w+))?')
_SOURCE_LINK = re.compile(
    r"https?://[\w.-]+/[\w.-]+/[\w.-]+/(?:-/)?blob/[^/\s]+/"  # host/owner/name/blob/ref/
    r"([^\s#?)\]>'\"]+)(?:\?[^#\s]*)?#L(\d+)(?:-L?(\d+))?"  # path, ?plain=1, #L10-L12
)
"""A link to lines of a repository's file, as GitHub (`/OWNER/NAME/blob/REF/PATH#L10-L12`)
and GitLab (`/-/blob/REF/PATH#L10-12`) write it."""
# IPython's traceback: "~/venv/.../query_utils.py in _combine(self, other)", then the
# source around the line, which is marked "---> 73".
_FRAME_IPYTHON = re.compile(
    r"^([~\w./\\-]+\.py) in (?:(\w+)|<\w+>)\b[^\n]*\n"
    r"(?:[^\n]*\n){0,12}?[ \t]*-+>[ \t]*(\d+)",
    re.M,
)
# pytest's long traceback: "sympy/core/expr.py:124: in __eq__"
_FRAME_PYTEST = re.compile(
    r"^[ \t>]*((?:[A-Za-z]:)?[\w./\\-]+\.\w+):(\d+): in (?:(\w+)|<\w+>)", re.M
)
_FRAME_GENERIC = re.compile(r"at (?:[\w.$<>]+ \()?([\w./\\-]+\.\w+):(\d+)")
# The frames of other languages' traces, each printed innermost first. Groups: the
# function as printed, the path, the line.
# Java/Kotlin: "at com.foo.Bar$Inner.baz(Bar.java:42)" (the path is the package's).
# Maven prints a space before the parenthesis, Java 9 the module first ("java.base/").
_FRAME_JAVA = re.compile(
    r"\bat (?:[\w.$@-]+/+)?((?:[\w$]+\.)+[\w$<>]+) ?\(([\w$]+\.(?:java|kt|scala|groovy)):(\d+)\)"
)
# Node: "at fn (file.js:1:2)", "at new Foo (/x/file.ts:3:4)", "at /x/file.js:1:2".
_FRAME_JS = re.compile(
    r"^[ \t]*at (?:(?:new |async )?([\w.$<>\[\] ]+?) \()?(?:file://)?"
    r"([^\s():]+\.[cm]?[jt]sx?):(\d+)(?::\d+)?\)?",
    re.M,
)
# Go: a goroutine dump's "pkg.(*T).Method(args)" line, then "\t/path/file.go:123 +0x1f".
_FRAME_GO = re.compile(r"^[ \t]*([\w./*()@-]+)\([^()\n]*\)\n[ \t]+([^\s:]+\.go):(\d+)", re.M)
# Rust: "panicked at src/x.rs:10:5" (or "panicked at 'msg', src/x.rs:10:5"), and a
# backtrace's "  3: crate::module::function\n      at ./src/x.rs:10:5".
_FRAME_RUST_PANIC = re.compile(
    r"panicked at (?:'(?:[^'\\\n]|\\.)*', |\"(?:[^\"\\\n]|\\.)*\", )?()([^\s:,']+\.rs):(\d+)"
)
_FRAME_RUST = re.compile(
    r"^[ \t]*\d+:[ \t]+(?:0x[0-9a-f]+ - )?([^\n]+?)(?:::h[0-9a-f]{16})?[ \t]*\n"
    r"[ \t]+at ([^\s:]+\.rs):(\d+)",
    re.M,
)
# C/C++: gdb "#1  0x55 in fn (a=1) at lib/x.c:12", sanitizers' "#0 0x4f5b3c in fn
# /src/lib/x.c:12:5", valgrind "by 0x4C2DB8F: fn (x.c:12)".
_FRAME_GDB = re.compile(
    r"^[ \t]*#\d+[ \t]+(?:0x[0-9a-f]+ in )?([\w:~<>]+) \([^\n]*\) at ([^\s:]+):(\d+)", re.M
)
_FRAME_SANITIZER = re.compile(
    r"^[ \t]*#\d+ 0x[0-9a-f]+ in ([\w:~<>]+)[^\n/]*? \(?([^\s():]+\.\w+):(\d+)", re.M
)
_FRAME_VALGRIND = re.compile(
    r"\b(?:at|by) 0x[0-9A-Fa-f]+: ([\w:~<>]+)(?:\([^\n)]*\))? \(([^\s():]+\.\w+):(\d+)\)"
)
_INNERMOST_FIRST = (
    _FRAME_JAVA,
    _FRAME_JS,
    _FRAME_GO,
    _FRAME_RUST_PANIC,
    _FRAME_RUST,
    _FRAME_GDB,
    _FRAME_SANITIZER,
    _FRAME_VALGRIND,
)
# A compiler's diagnostic, "src/x.c:12:5: error: ...", or rustc's " --> src/x.rs:4:5":
# where the build fails, printed like Python's frames (the error after the notes).
_DIAGNOSTIC = re.compile(
    r"^[ \t]*(?:--> )?([^\s:]+\.(?:c|h|cc|cpp|cxx|hpp|hh|hxx|ipp|tpp|rs|go|m|mm)):(\d+):\d+"
    r"(?:: (?:fatal )?(?:error|warning|note)\b|$)",
    re.M,
)
# Frames in the language's own runtime or standard library are never the project's.
_RUNTIME_FRAME = re.compile(
    r"^(?:java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala)\.|^(?:runtime|testing|reflect)\."
    r"|^<?(?:std|core|alloc)::|^node:|^internal/|^__libc|^_start$"
)
_CAUSED_BY = re.compile(r"^[ \t]*Caused by:", re.M)
# A single quote next to a letter is an apostrophe ("it's", "doesn't"), not a quote.
_QUOTED = re.compile(
    r"`([^`\n]{2,80})`|\"([^\"\n]{2,80})\"|(?<![A-Za-z0-9])'([^'\n]{2,80})'"
    r"(?![A-Za-z0-9])"
)
# What a bug report quotes that the code holds verbatim: a command-line flag (`--no-ignore`,
# zstd's `--rm`), and a message a program printed, after "error:", "panicked at", an
# exception's name or a bracketed tag that holds the level (bat's "[bat error]:", a
# logger's "[ERROR]" or "[2024-01-02T10:00:00Z WARN app::io]"). The name's and the tag's
# lengths are bounded: a line of "ErrorError..." would otherwise be tried at every position.
_FLAG = re.compile(r"(?<![\w/.-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?![\w-])")
_MESSAGE_LINE = re.compile(
    r"^[ \t>]*(?:[\w.$]{0,120}(?:Exception|Error):"
    r"|(?:\w{1,40}: )?(?:fatal|error|warning)(?:\[\w+\])?:"
    r"|\[[^\]\n]{0,40}?\b(?:fatal|error|warn|warning)\b[^\]\n]{0,40}\]:?"
    r"|thread '[^'\n]*' panicked at)[ \t]+(.+)$",
    re.M | re.I,
)
# A word that stops a quoted message where the program's own text ends: a number, a path,
# a quote or a placeholder's value ("Unrecognized token 'foo': was expecting ...").
_FILLED_IN = re.compile(r"[\d/\\'\"`{}%<>\[\]$]")
LITERAL_MIN_WORDS = 3
"""A quoted message counts as a literal from this many words on, two of them plain words
that are no stop words: "in front of" and "to the right" are prose."""
# A JavaScript or TypeScript module a pasted snippet loads by a path inside a package:
# `require('dayjs/plugin/weekYear')`, `import x from "lodash/fp/map"`.
_MODULE_SPECIFIER = re.compile(
    r"""(?:\brequire\(\s*|\bimport\(\s*|\bfrom\s+|\bimport\s+)['"]"""
    r"""((?:@[\w.-]+/)?[\w.-]+(?:/[\w.-]+)+)['"]"""
)
_SCRIPT_EXTENSIONS = (".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx")
# A Rust path (`tokio::sync::watch::Receiver`, `broadcast::Sender::len`, `crate::select`):
# its modules in snake_case, then the item, a type in CamelCase and its member after it.
_RUST_PATH = re.compile(r"(?<![\w:])[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+")
_RUST_RELATIVE = frozenset({"crate", "self", "super"})
_RUST_LIBRARIES = frozenset(
    """std core alloc bool char str
    u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64""".split()
)
"""The standard library's crates and the primitive types (`usize::MAX`, `str::from_utf8`)."""
# A name written as a call, `decompose()`: code, whatever it looks like.
_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\(")
# Names a pasted snippet imports: `from sympy import Integral, Derivative`.
_IMPORTED = re.compile(r"^[ \t>]*from[ \t]+[\w.]+[ \t]+import[ \t]+\(?([\w \t,]+)", re.M)
# An absolute path (a traceback's, from another machine), and the installation prefix
# inside one: `.../lib/python3.9/site-packages/pylint/config/argument.py`.
_ABSOLUTE = re.compile(r"(?<![\w/.:@~+-])(?:[A-Za-z]:[\\/]|[/~])[\w.@~+\\/-]*[\\/][\w.-]+\.\w+")
_INSTALLED = re.compile(r".*/(?:site|dist)-packages/|.*/lib/python\d[\d.]*/")
BUILTIN_CALLS = frozenset(
    """
print len range str int float list dict set tuple type isinstance issubclass repr super
open sorted reversed min max sum abs any all zip map filter enumerate getattr setattr
hasattr delattr iter next bool object format id hash vars dir eval exec round divmod pow
input callable frozenset bytes bytearray complex chr ord hex oct bin slice property
staticmethod classmethod locals globals
""".split()
)
"""Python builtins: called in a pasted snippet, they say nothing about where the code is;
called in a candidate, they are no missing context."""
_IDENT = re.compile(r"(?<![\w])[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")

# Words that carry no signal for code search.
STOPWORDS = frozenset(
    """
a an and are as at be been but by can could did do does doing done for from had has have
how i if in into is it its it's me my no not of on or our so some such than that the their
them then there these they this those to too under up use used using very was we were what
when where which while who why will with would you your should shall may might must also
just only any all each every both either neither get gets got make makes made want wants
need needs like please thanks thank hi hello issue bug error problem fix fixed works work
working expected actual behavior behaviour happen happens happened see seems way new one
two three here now still even instead rather because about after before again against
between during out over same other more most less least case cases example code line lines
file files function functions method methods class classes return returns value values
true false none null self def import from raise pass
""".split()
)


SHORT_QUESTION_WORDS = 40
_TESTS_SUBJECT = re.compile(
    r"\b(?:tests?|specs?) (?:for|of|covering)\b|\btest (?:suite|coverage|fixtures?|runner)\b"
    r"|\bflaky\b|\bwhere (?:is|are) [^.?!\n]{0,60}\btested\b",
    re.I,
)
_BENCHMARKS_SUBJECT = re.compile(
    r"\bbenchmarks? (?:for|of|covering|suite)\b|\basv\b"
    r"|\b(?:add|update|fix|run|write) (?:a |an |the )?(?:new )?benchmarks?\b",
    re.I,
)
# Generated, amalgamated or vendored code as the subject; a path that merely passes
# through a vendor/ directory (a Go trace from a vendoring project) is not.
_COPIES_SUBJECT = re.compile(
    r"(?<![/\w])(?:amalgamat\w*|single[- ]?header|singleheader|vendor(?:ed|ing)|legacy|"
    r"re-?generat\w*|generated (?:code|files?|sources?|parser)|protoc|code ?gen\w*)(?![/\w])",
    re.I,
)
_TYPINGS_SUBJECT = re.compile(
    r"\b(?:typescript|typings?|type (?:definitions?|declarations?|hints?|stubs?)|stubs?|tsd)\b"
    r"|\.d\.ts\b|\.pyi\b",
    re.I,
)
_QUESTION_WORD = re.compile(
    r"(?:how|where|when|what|which|why|who|does|do|is|are|can|should)\b", re.I
)
_DECLARATION_FILE = re.compile(r"\.d\.[cm]?ts$|\.pyi$")
"""A file of type declarations only: TypeScript's `.d.ts` (`.d.mts`, `.d.cts`) beside
JavaScript code, Python's `.pyi` stubs beside the modules they type."""
_IMPORTS_SUBJECT = re.compile(
    r"\bimport(?:s|ed|ing|able)?\b|\b(?:#include|require\(|use statements?)"
    r"|\bdependenc(?:y|ies) between\b",
    re.I,
)
_DOCS_SUBJECT = re.compile(
    r"\b(?:docs?|documentation) (?:for|of|about|page|section)\b"
    r"|\b(?:update|fix|improve|add to) (?:the )?(?:docs?|documentation|readme|changelog"
    r"|examples?|tutorials?)\b",
    re.I,
)


_DOCS_WORDS = ("doc", "readme", "changelog", "guide", "tutorial", "example", "demo", "gallery")
SUBJECT_CACHE = 256
"""How many (pattern, text) answers `_names_subject` keeps: a few questions' worth (five
patterns each), bounded because a server answers questions for as long as it runs."""


@lru_cache(maxsize=SUBJECT_CACHE)
def _names_subject(pattern: re.Pattern[str], text: str) -> bool:
    """Whether `pattern` occurs in `text`. A question's subject tests run for every path
    a search weighs (`unasked_role`: 16k times in the 20 django tasks' asks), each over the
    whole task text; the answer depends on the text alone, so it is kept. (A cache here,
    not on the record: `QueryAnalysis` is not frozen, and the key is its text as it is
    now.)"""
    return pattern.search(text) is not None


@lru_cache(maxsize=SUBJECT_CACHE)
def _starts_any(terms: tuple[str, ...], prefixes: tuple[str, ...]) -> bool:
    """Whether a term starts with one of `prefixes`: asked with the subject tests, for
    every path a search weighs, of the same few questions' terms."""
    return any(t.startswith(prefixes) for t in terms)


@lru_cache(maxsize=SUBJECT_CACHE)
def _is_short(text: str) -> bool:
    return len(text.split()) <= SHORT_QUESTION_WORDS


class QueryAnalysis(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    identifiers: list[str] = Field(default_factory=list, description="code-like names, as written")
    quoted: list[str] = Field(default_factory=list)
    literals: list[str] = Field(
        default_factory=list,
        description="text the code may hold verbatim: the flags the question names"
        " (`--no-ignore`) and the messages it quotes, each cut where a filled-in value starts",
    )
    paths: list[str] = Field(default_factory=list, description="file paths named in the text")
    frames: list[tuple[str, int, str]] = Field(
        default_factory=list,
        description="stack-trace frames: (path, line, function), the innermost call last",
    )
    links: list[tuple[str, int, int]] = Field(
        default_factory=list,
        description="the lines the text links to in a repository's file"
        " (`github.com/OWNER/NAME/blob/REF/PATH#L10-L12`): (path, first line, last line),"
        " in the text's order",
    )
    modules: list[str] = Field(
        default_factory=list,
        description="the files dotted names could be modules of (`django.db.migrations.writer`"
        " -> django/db/migrations/writer.py), each prefix of two parts or more, and those a"
        " script's `require('dayjs/plugin/utc')` could load (plugin/utc.js, plugin/utc/index.js)",
    )
    scopes: dict[str, list[tuple[str, ...]]] = Field(
        default_factory=dict,
        description="the modules (and type) Rust paths put a name in, by the name in lower"
        " case (`tokio::sync::watch::Receiver`: receiver -> (tokio, sync, watch);"
        " `Ready::READABLE`: readable -> (Ready,)); set for an index whose code is mostly"
        " Rust (`with_rust_paths`)",
    )
    terms: list[str] = Field(default_factory=list, description="plain words, stop words removed")
    project: list[str] = Field(
        default_factory=list,
        description="the names the indexed project goes by (`retrieval.project`): every file"
        " is about them, so they are no evidence for one",
    )
    main_language: str | None = Field(
        default=None,
        description="the language most of the indexed project's code is written in"
        " (`IndexLookups.main_language`); None when not known",
    )
    test_modules: frozenset[str] = Field(
        default=frozenset(),
        description="the indexed files that are test code by their module declaration, not"
        " their path (`IndexLookups.test_modules`: a Rust `#[cfg(test)] mod testutil;`)",
    )
    lexical_weight: float = Field(ge=0, le=1, description="share of lexical vs dense evidence")

    @property
    def mentions_tests(self) -> bool:
        """The tests are what the question is about, not merely mentioned: a short
        question naming them, or tests as the subject ("tests for X", "flaky test").
        A bug report says "test" in passing (how it was found, a test to add), and its
        answer is the code under test."""
        named = _starts_any(tuple(self.terms), ("test", "spec"))
        return named and (self._short or _names_subject(_TESTS_SUBJECT, self.text))

    @property
    def mentions_benchmarks(self) -> bool:
        """Likewise for benchmarks: a short question naming them, or benchmarks as the
        subject ("benchmarks for X", "add a benchmark", asv)."""
        named = _starts_any(tuple(self.terms), ("bench",)) or "asv" in self.terms
        return named and (self._short or _names_subject(_BENCHMARKS_SUBJECT, self.text))

    @property
    def mentions_imports(self) -> bool:
        """The question is about imports or dependencies between modules ("circular
        import", "where is X imported"), so import lines are the answer, not a header."""
        return _names_subject(_IMPORTS_SUBJECT, self.text)

    @property
    def mentions_copies(self) -> bool:
        """Generated, amalgamated or vendored code is the subject ("the amalgamated
        single header", "regenerate the protobuf code")."""
        return _names_subject(_COPIES_SUBJECT, self.text)

    @property
    def mentions_typings(self) -> bool:
        """Type declarations are the subject ("the TypeScript typings of X", "a wrong
        type definition", "the .pyi stub")."""
        return _names_subject(_TYPINGS_SUBJECT, self.text)

    @property
    def is_question(self) -> bool:
        """A question about the code ("how is the difference between two dates computed in
        months?"): one line of at most `SHORT_QUESTION_WORDS` words, asked (a question
        word first or a question mark last), not a report. A question asks how the code
        behaves, which type declarations do not say; a report (an issue's title and
        text) of a feature that adds to an API is fixed in its declarations too (five of
        dayjs's 55 Multi-SWE-bench reports), so only questions rank them lower."""
        text = self.text.strip()
        return (
            "\n" not in text
            and self._short
            and (text.endswith("?") or bool(_QUESTION_WORD.match(text)))
        )

    def unasked_test(self, path: str) -> bool:
        """A test, a benchmark, a support script, a copy (generated, amalgamated or
        vendored code) or a file of type declarations the question is not about: tests
        and benchmarks call the code under test with its own names and words, a script
        its command lines, a copy repeats its source's, type declarations repeat every
        public name with its documentation (dayjs's types/index.d.ts, matplotlib's .pyi
        stubs; for questions, not reports: `is_question`), and none is where the
        behaviour is decided (simdjson's singleheader/simdjson.h holds every word of every
        issue), so all rank lower unless asked for."""
        return self.unasked_role(path) is not None

    def unasked_role(self, path: str) -> str | None:
        """What `unasked_test` found `path` to be, as a reason says it: "a test", "a
        benchmark", "a support script", "type declarations", "generated code", "an older
        version" (legacy/) or "a vendored copy"; None when it is none of them or the
        question is about it."""
        if (is_test_path(path) or path in self.test_modules) and not self.mentions_tests:
            return "a test"
        if is_benchmark_path(path) and not self.mentions_benchmarks:
            return "a benchmark"
        if self._unasked_script(path):
            return "a support script"
        if _DECLARATION_FILE.search(path) and self.is_question and not self.mentions_typings:
            return "type declarations"
        if self.mentions_copies:
            return None
        if is_generated_path(path):
            return "generated code"
        if is_legacy_path(path):
            return "an older version"
        if is_vendored_path(path):
            return "a vendored copy"
        return None

    def _unasked_script(self, path: str) -> bool:
        """A shell script in a project whose code is in another language, the question
        not naming it: such scripts build, release, check or report on the project (bat's
        diagnostics/info.sh, zstd's test and CI scripts, grpc-go's vet.sh) and repeat its
        command lines and words, while its behaviour is decided in its own language. A
        script named by its file name (`amalgamate.sh`) is what the question is about."""
        if self.main_language in (None, "bash") or language_for(path) != "bash":
            return False
        return posixpath.basename(path).lower() not in self.text.lower()

    @property
    def mentions_docs(self) -> bool:
        """Likewise for documentation: a short question naming it, or docs as the
        subject ("the docs for X", "update the README")."""
        named = _starts_any(tuple(self.terms), _DOCS_WORDS)
        return named and (self._short or _names_subject(_DOCS_SUBJECT, self.text))

    @property
    def _short(self) -> bool:
        return _is_short(self.text)


def _is_code_like(word: str) -> bool:
    """An identifier a person would not write as a plain word."""
    if "." in word.strip("."):
        return True
    if "_" in word.strip("_"):
        return True
    if len(split_identifier(word)) > 1 and not word.isupper() and not word.istitle():
        return True  # camelCase or mixedCase
    return False


# An issue template's instructions to the reporter: GitHub hides them, and their words
# ("please run diagnostics/info.sh", "paste the output of `bat --version`") are the same
# in every issue of the project, none of them about its bug. An unclosed one runs to the end.
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)


def without_template(text: str) -> str:
    """`text` without its HTML comments (an issue template's hidden instructions)."""
    return _HTML_COMMENT.sub("", text) if "<!--" in text else text


def compact_paths(text: str) -> str:
    """`text` with each absolute path cut to what says something about the code: after
    an installation prefix (`site-packages/`, `lib/python3.9/`) the package path, else
    the last three components. A traceback's paths through someone's home directory and
    virtualenv otherwise take most of the tokens a question is embedded with (the window
    is 256), pushing out the text after them."""

    def cut(match: re.Match[str]) -> str:
        path = match.group(0).replace("\\", "/")
        if installed := _INSTALLED.match(path):
            return path[installed.end() :]
        parts = path.split("/")
        return "/".join(parts[-3:]) if len(parts) > 3 else path

    return _ABSOLUTE.sub(cut, text)


def _function_of(printed: str) -> str:
    """The function's own name in a frame's printed one: `pkg.(*T).Close` -> Close,
    `<tokio::Sleep as Future>::poll` -> poll, `Bar$Inner.<init>` -> Inner (a
    constructor), `Object.<anonymous>` -> "" (a closure, `func3` or `{{closure}}`,
    names its enclosing function)."""
    printed = re.sub(r"<([^<>]*?) as [^<>]*>", r"\1", printed)
    parts = [p for p in re.split(r"::|[.()*\s/]+", re.sub(r"\[[^\]]*\]", " ", printed)) if p]
    while parts and re.fullmatch(r"func\d+|\d+|\{\{\w+\}\}", parts[-1]):
        parts.pop()
    if parts and parts[-1] in ("<init>", "<clinit>"):
        parts = [parts[-2].rpartition("$")[2]] if len(parts) > 1 else []
    last = re.sub(r"<.*>$", "", parts[-1]) if parts else ""
    return last if re.fullmatch(r"[A-Za-z_]\w*", last) and last == parts[-1].split("<")[0] else ""


def _frame_path(pattern: re.Pattern[str], m: re.Match[str]) -> str:
    path = m.group(2)
    if pattern is _FRAME_JAVA:
        # The class's package is its directory: com.foo.Bar$Inner.baz -> com/foo/Bar.java.
        return "/".join([*m.group(1).split(".")[:-2], path])
    # A Go module's cached copy: .../pkg/mod/google.golang.org/grpc@v1.30.0/clientconn.go.
    return re.sub(r"^.*@v\d[^/]*/", "", path)


def _frames(text: str) -> list[tuple[str, int, str]]:
    """The stack-trace frames and compiler diagnostics of `text`, innermost last, the
    language's runtime and standard library left out. Python, IPython and pytest print
    the innermost call last, and so do compilers their error after its notes; the
    other traces (Java, JavaScript, Go, Rust, gdb, sanitizers, valgrind) print it
    first, each "Caused by:" section its own cause's: those read backwards, section by
    section, the deepest cause's innermost frame last."""
    last: list[tuple[int, tuple[str, int, str]]] = []
    for m in _FRAME_PY.finditer(text):
        last.append((m.start(), (m.group(1), int(m.group(2)), m.group(3) or "")))
    for m in _FRAME_IPYTHON.finditer(text):
        last.append((m.start(), (m.group(1), int(m.group(3)), m.group(2) or "")))
    for m in _FRAME_PYTEST.finditer(text):
        last.append((m.start(), (m.group(1), int(m.group(2)), m.group(3) or "")))
    for m in _DIAGNOSTIC.finditer(text):
        last.append((m.start(), (m.group(1), int(m.group(2)), "")))
    first: dict[tuple[str, int], tuple[int, str]] = {}
    read: set[tuple[str, int]] = set()  # (path as printed, line) of the frames above
    for pattern in _INNERMOST_FIRST:
        for m in pattern.finditer(text):
            printed = (m.group(1) or "").strip()
            key = (_frame_path(pattern, m), int(m.group(3)))
            read.add((m.group(2), key[1]))
            if _RUNTIME_FRAME.search(printed) or _RUNTIME_FRAME.search(m.group(2)):
                continue
            if key not in first or not first[key][1]:
                first[key] = (m.start(), _function_of(printed))
    for m in _FRAME_GENERIC.finditer(text):
        if (m.group(1), int(m.group(2))) not in read:
            first.setdefault((m.group(1), int(m.group(2))), (m.start(), ""))
    causes = [m.start() for m in _CAUSED_BY.finditer(text)]

    def section(pos: int) -> int:
        return sum(1 for c in causes if c < pos)

    backwards = sorted(first.items(), key=lambda kv: (section(kv[1][0]), -kv[1][0]))
    frames = [(path, line, fn) for (path, line), (_, fn) in backwards]
    frames += [f for _, f in sorted(last, key=lambda x: x[0])]
    seen: set[tuple[str, int, str]] = set()
    out = []
    for p, line, fn in frames:
        frame = (p.replace("\\", "/"), line, fn)
        if frame not in seen:
            seen.add(frame)
            out.append(frame)
    return out


def analyze(text: str) -> QueryAnalysis:
    text = without_template(text)
    frames = _frames(text)
    paths: list[str] = []
    for m in _PATH.finditer(text):
        p = m.group(1).lstrip("~").strip("./")
        if p and p not in paths:
            paths.append(p)
    for f in frames:
        if f[0] not in paths:
            paths.append(f[0])
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
    in_quotes = {w for q in quoted for w in _IDENT.findall(q)}
    called = set(_CALLED.findall(text)) - BUILTIN_CALLS
    called.update(
        n
        for m in _IMPORTED.finditer(text)
        for n in re.split(r"[\s,]+", m.group(1))
        if n and n not in ("as", "import")
    )
    identifiers: list[str] = []
    seen: set[str] = set()
    for m in _IDENT.finditer(text):
        word = m.group(0).strip(".")
        if word.lower() in STOPWORDS or len(word) < 3 or word in seen:
            continue
        if any(word in p for p in paths):
            continue  # part of a path named in the text, already a path signal
        if "." in word and min(len(part) for part in word.split(".")) < 2:
            continue  # "e.g", "i.e": prose, not a dotted name
        if _is_code_like(word) or word in in_quotes or word in called:
            seen.add(word)
            identifiers.append(word)
    for f in frames:
        if f[2] and f[2] not in seen:
            seen.add(f[2])
            identifiers.append(f[2])
    modules = list(
        dict.fromkeys(
            [
                *(
                    "/".join(parts[:n]) + ".py"
                    for parts in (i.split(".") for i in identifiers)
                    if parts[0] not in ("self", "cls")
                    for n in range(len(parts), 1, -1)
                ),
                *script_modules(text),
            ]
        )
    )
    terms: list[str] = []
    for m in _WORD.finditer(text):
        w = m.group(0).lower()
        if w not in STOPWORDS and len(w) > 2 and w not in terms:
            terms.append(w)
    words = max(len(_WORD.findall(text)), 1)
    code_share = min(
        1.0, (len(identifiers) * 2 + len(paths) * 3 + len(frames) * 3 + len(quoted)) / words
    )
    lexical_weight = round(0.35 + 0.4 * code_share, 3)
    return QueryAnalysis(
        text=text,
        identifiers=identifiers,
        quoted=quoted,
        literals=literals_of(text, quoted),
        paths=paths,
        frames=frames,
        links=source_links(text),
        modules=modules,
        terms=terms,
        lexical_weight=lexical_weight,
    )


def rust_paths(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The items the Rust paths in `text` name, each with the modules the path puts it
    in: `tokio::sync::watch::Receiver` -> (`Receiver`, (tokio, sync, watch)),
    `broadcast::Sender::len` -> (`Sender.len`, (broadcast,)), `mpsc::channel` ->
    (`channel`, (mpsc,)), `crate::select` -> (`select`, ()). The item is the first part
    written as a type (CamelCase), with the member after it, else the last part. A path
    into the standard library (`std::`, `core::`, `alloc::`, a primitive type's
    `usize::MAX`) names nothing of the project."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for m in _RUST_PATH.finditer(text):
        parts = m.group(0).split("::")
        if parts[0] in _RUST_LIBRARIES:
            continue
        while len(parts) > 1 and parts[0] in _RUST_RELATIVE:
            parts = parts[1:]
        item = next((i for i, p in enumerate(parts) if p[:1].isupper()), len(parts) - 1)
        found = (".".join(parts[item : item + 2]), tuple(parts[:item]))
        if found not in out:
            out.append(found)
    return out


def with_rust_paths(analysis: QueryAnalysis, named: Iterable[tuple[str, tuple[str, ...]]]) -> None:
    """Into `analysis`, the items of its Rust paths that name the index's code (`named`,
    of `rust_paths`: those the index defines in the path's modules), for an index whose
    code is mostly Rust: each is a name written as code, whether or not the text quotes
    it (a bug report writes `Interest::ERROR` or `tokio::io::Interest` in prose), and
    the modules before it say where it is defined (`scopes`): Rust's modules are its
    files and directories, so `watch::Receiver` is the `Receiver` of `sync/watch.rs`,
    not the one of `sync/mpsc/`, and a member is its type's (`Ready::READABLE`, however
    many other `readable`s the text names). Elsewhere `::` is C++'s or PHP's namespace,
    which says nothing of files."""
    for name, modules in named:
        parts = name.split(".")
        for ident in dict.fromkeys((parts[0], name)):
            if len(ident.split(".")[-1]) >= 3 and ident not in analysis.identifiers:
                analysis.identifiers.append(ident)
        # A type's member is in the type (`Ready::READABLE`, not `Interest::READABLE`);
        # the type is in the path's modules.
        where = [(parts[0], modules)]
        if len(parts) > 1:
            where.append((parts[1], (*modules, parts[0])))
        for part, scope in where:
            if scope:
                scoped = analysis.scopes.setdefault(part.lower(), [])
                if scope not in scoped:
                    scoped.append(scope)


def script_modules(text: str) -> list[str]:
    """The files the JavaScript and TypeScript modules `text` loads by a path inside a
    package could be: `require('dayjs/plugin/weekYear')` is `plugin/weekYear.js` or
    `plugin/weekYear/index.js` of the package (any script extension), the package's
    name (`dayjs`, `@scope/name`) left out, as its published layout maps `src/`
    or `esm/` away."""
    out: list[str] = []
    for m in _MODULE_SPECIFIER.finditer(text):
        parts = m.group(1).split("/")
        if parts[0] in (".", ".."):
            continue  # the reporter's own module, beside their script
        rest = "/".join(parts[2:] if parts[0].startswith("@") else parts[1:])
        if not rest:
            continue
        if rest.endswith(_SCRIPT_EXTENSIONS):
            out.append(rest)
            continue
        out.extend(f"{rest}{ext}" for ext in (".js", ".ts"))
        out.extend(f"{rest}/index{ext}" for ext in (".js", ".ts"))
    return list(dict.fromkeys(out))


def source_links(text: str) -> list[tuple[str, int, int]]:
    """The lines `text` links to in a repository's file (`QueryAnalysis.links`): a report
    that points at the code it is about ("the check at .../cover.c#L611") says which part
    of the file it means. The link's revision is often not the one indexed, so the lines
    may have moved a little since."""
    out: list[tuple[str, int, int]] = []
    for m in _SOURCE_LINK.finditer(text):
        first = int(m.group(2))
        last = max(int(m.group(3) or first), first)
        link = (m.group(1), first, last)
        if link not in out:
            out.append(link)
    return out


def literals_of(text: str, quoted: list[str]) -> list[str]:
    """The flags `text` names and the messages it quotes (`QueryAnalysis.literals`): a
    quoted span or a message line ("error: ...", "thread 'main' panicked at ...",
    "FooException: ...") cut at its first filled-in word and its trailing stop words,
    kept from `LITERAL_MIN_WORDS` words on."""
    out = list(dict.fromkeys(_FLAG.findall(text)))
    spans = [*quoted, *(m.group(1) for m in _MESSAGE_LINE.finditer(text))]
    for span in spans:
        kept: list[str] = []
        for word in span.split():
            if _FILLED_IN.search(word):
                break
            kept.append(word)
        # Whatever came before the value ("... in name at [Source: ...]") may join it
        # in the code: a trailing stop word is left out.
        while kept and kept[-1].lower().strip(" .,:;!?") in STOPWORDS:
            kept.pop()
        message = " ".join(kept).strip(" .,:;!?")
        plain = {
            w.lower() for w in _WORD.findall(message) if w.lower() not in STOPWORDS and len(w) > 2
        }
        if len(message.split()) >= LITERAL_MIN_WORDS and len(plain) >= 2 and message not in out:
            out.append(message)
    return out


# -- the queries made of a question ------------------------------------------------------

TITLE_WEIGHT = 0.3
"""The first line's share of a long question's vector (RESULTS-eval.md section 10); its
words are also searched twice in the full-text query."""
TITLE_MIN_WORDS = 3
QUERY_NOISE = frozenset({"the", "a", "an", "of", "to", "in", "is", "and", "or", "for"})
"""Words the full-text query leaves out."""


def title_of(text: str) -> str | None:
    """The first line of a question of several lines, when it says something alone."""
    first, _, rest = text.strip().partition("\n")
    first = first.strip()
    return first if rest.strip() and len(first.split()) >= TITLE_MIN_WORDS else None


def base_tokens(analysis: QueryAnalysis) -> list[str]:
    """The full-text query of a question: its tokens and its plain words' variants."""
    plain = [v for t in analysis.terms for v in variants(t)]
    skip = QUERY_NOISE.union(analysis.project)
    return [t for t in dict.fromkeys([*tokenize(analysis.text), *plain]) if t not in skip]


def title_tokens(analysis: QueryAnalysis) -> list[str]:
    """A long question's first line's tokens, to be searched once more each: BM25 adds up
    repeated query terms, so they weigh twice what the body's do (RESULTS-eval.md
    section 10)."""
    title = title_of(analysis.text)
    if not title:
        return []
    return [t for t in dict.fromkeys(tokenize(title)) if t not in QUERY_NOISE]


def naming(analysis: QueryAnalysis) -> Callable[[str], int]:
    """How much of a definition's qualified name the question names, as a function of
    that name: 0 when not its last part, 1 when only that (in any case), 2 when the
    definition it lies in too, written together (`BoundWidget.id_for_label`) or each on
    its own (`MultiWidget`, `id_for_label`). A method name is often shared by many
    classes of a file (five of django's widgets define `id_for_label`); the class
    beside it says which one the question is about. That class must be written as it is
    spelt: `dayjs.locale` is a call on the package, not `Dayjs.locale`, and a plain
    word (`model`, `field`) is no class name (`Model`, `Field`)."""
    last: set[str] = set()
    named: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for ident in analysis.identifiers:
        parts = ident.split(".")
        last.add(parts[-1].lower())
        named.add(parts[-1])
        if len(parts) > 1:
            pairs.add((parts[-2], parts[-1].lower()))

    def depth(qualified_name: str) -> int:
        parts = qualified_name.split(".")
        name = parts[-1].lower()
        if name not in last:
            return 0
        if len(parts) > 1 and (parts[-2] in named or (parts[-2], name) in pairs):
            return 2
        return 1

    return depth


def file_query(analysis: QueryAnalysis) -> list[str]:
    """The full-text query of the whole-file rankings: the question's tokens, the title's
    once more."""
    return [*base_tokens(analysis), *title_tokens(analysis)]


def _question_texts(text: str, *, compact: bool, title: bool) -> tuple[str, str | None]:
    """What `question_vector` embeds: the question without its template comments, and its
    first line when it has one."""
    text = without_template(text)
    body = compact_paths(text) if compact else text
    return body, title_of(body) if title else None


def prepare_question(embedder: Embedder, text: str) -> None:
    """Have `embedder` start loading, on a thread of its own, what `question_vector` of
    `text` will run on, for a caller that opens an index meanwhile
    (`OnnxEmbedder.prepare_queries`); nothing for an embedder without that method."""
    prepare = getattr(embedder, "prepare_queries", None)
    if prepare is not None and text.strip():
        prepare([t for t in _question_texts(text, compact=True, title=True) if t])


def question_vector(
    embedder: Embedder, text: str, *, compact: bool = True, title: bool = True
) -> np.ndarray:
    """A question's unit vector as search embeds it: with its absolute paths cut short
    (`compact_paths`: a traceback's home and virtualenv prefixes would take much of the
    256-token window), blended with its first line's (`TITLE_WEIGHT`), on the
    embedder's query graph when it has one (`OnnxEmbedder.embed_queries`). `compact`
    and `title` off are for benchmarks/summary_rank.py's comparisons."""
    body, first = _question_texts(text, compact=compact, title=title)
    embed = getattr(embedder, "embed_queries", embedder.embed)
    # One call each: a batch pads the short title to the question's length.
    vectors = np.asarray([embed([t])[0] for t in (body, first) if t], dtype=np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    blended = (
        vectors[0]
        if first is None
        else ((1 - TITLE_WEIGHT) * vectors[0] + TITLE_WEIGHT * vectors[1])
    )
    return blended / max(float(np.linalg.norm(blended)), 1e-12)  # type: ignore[no-any-return]
