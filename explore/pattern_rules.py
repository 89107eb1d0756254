"""The patterns explorer's rules: what it looks for in each language family, and the record
of what it found there.

`FEATURES` holds, per language family (`FAMILY` maps a language to its family), the
line-anchored regular expressions applied to each sampled file's whole text. The other
tables say which of those features each topic counts and how it names them (error
handling, assertion styles, test frameworks and test definitions), which file names are
test modules, and which naming cases there are. `Scan` is what the regexes, the parser and
the sample found in one family. `explore.patterns` applies the rules and
reports on what they found.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from dowse.indexer.records import Import, Symbol

__all__ = [
    "ASSERTS",
    "CASE",
    "ERRORS",
    "ERROR_CLASSES",
    "ERROR_EXAMPLES",
    "FAMILY",
    "FEATURES",
    "FRAMEWORKS",
    "FUNCTION_KINDS",
    "Hit",
    "LABEL",
    "LAST_IN_DIR",
    "Scan",
    "TEST_DEFS",
    "TEST_DIR",
    "TEST_NAMES",
    "TYPE_KINDS",
]

FAMILY = {
    "python": "python",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
}
LABEL = {
    "python": "Python",
    "js": "JS/TS",
    "go": "Go",
    "rust": "Rust",
    "java": "Java",
    "c": "C",
    "cpp": "C++",
}
LAST_IN_DIR = frozenset({"__init__.py", "__main__.py", "conftest.py", "setup.py"})
TEST_DIR = re.compile(r"(^|/)(tests?|testing|specs?|__tests__)(/|$)")

Hit = tuple[str, int, tuple[str | None, ...]]
"""(path, line, the regex's groups)."""


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


# Per language family: feature name -> regex, applied to each sampled file's whole text.
FEATURES: dict[str, dict[str, re.Pattern[str]]] = {
    "python": {
        k: _rx(v)
        for k, v in {
            "raise": r"^[ \t]*raise\b",
            "raise_from": r"^[ \t]*raise\b[^\n]*\bfrom[ \t]+\w",
            "try": r"^[ \t]*try[ \t]*:",
            "except": r"^[ \t]*except\b",
            "bare_except": r"^[ \t]*except[ \t]*:",
            "broad_except": r"^[ \t]*except[ \t(]+(?:Exception|BaseException)\b",
            "exception_class": r"^[ \t]*class[ \t]+(\w+)[ \t]*\("
            r"([^)\n]*?(?:Error|Exception|Warning)"
            r"\b[^)\n]*)\)",
            "future_annotations": r"^from[ \t]+__future__[ \t]+import[^\n]*\bannotations\b",
            "dataclass": r"^[ \t]*@(?:dataclasses\.)?dataclass\b",
            "attrs": r"^[ \t]*@(?:attr\.s|attrs?\.(?:define|frozen|mutable))\b",
            "pydantic": r"^[ \t]*class[ \t]+\w+[ \t]*\([^)\n]*\b(?:BaseModel|BaseSettings)\b",
            "typeddict": r"^[ \t]*class[ \t]+\w+[ \t]*\([^)\n]*\bTypedDict\b",
            "namedtuple": r"^[ \t]*class[ \t]+\w+[ \t]*\([^)\n]*\bNamedTuple\b",
            "protocol": r"^[ \t]*class[ \t]+\w+[ \t]*\([^)\n]*\bProtocol\b",
            "enum": r"^[ \t]*class[ \t]+\w+[ \t]*\([^)\n]*\b(?:Enum|IntEnum|StrEnum|Flag)\b",
            "optional": r"\bOptional\[",
            "pipe_none": r"\|[ \t]*None\b",
            "dunder_all": r"^__all__\b",
            "module_name": r"^([A-Za-z_]\w*)[ \t]*(?::[^=\n]+)?=(?!=)",
            "bare_assert": r"^[ \t]*assert\b",
            "self_assert": r"\bself\.assert\w+\(",
            "pytest_raises": r"\bpytest\.raises\(",
            "pytest_import": r"^(?:import[ \t]+pytest\b|from[ \t]+pytest\b)",
            "pytest_fixture": r"^[ \t]*@pytest\.fixture\b",
            "unittest_import": r"^(?:import[ \t]+unittest\b|from[ \t]+unittest\b)",
            "testcase_class": r"^[ \t]*class[ \t]+\w+[ \t]*\([^)\n]*TestCase\b",
            "test_function": r"^[ \t]*(?:async[ \t]+)?def[ \t]+test\w*[ \t]*\(",
        }.items()
    },
    "js": {
        k: _rx(v)
        for k, v in {
            "try": r"\btry[ \t]*\{",
            "catch": r"\bcatch[ \t]*(?:\([^)\n]*\))?[ \t]*\{",
            "promise_catch": r"\.catch\(",
            "throw": r"\bthrow[ \t]+\S",
            "error_class": r"\bclass[ \t]+(\w+)[ \t]+extends[ \t]+(\w*Error)\b",
            "esm_import": r"^[ \t]*import[ \t]+(?:type[ \t]+)?(?:[\w$*{]|['\"])",
            "require": r"\brequire\([ \t]*['\"`]",
            "esm_export": r"^[ \t]*export\b",
            "cjs_export": r"\bmodule\.exports\b|^[ \t]*exports\.\w+[ \t]*=",
            "ts_any": r":[ \t]*any\b|\bas[ \t]+any\b|<any>",
            "interface": r"^[ \t]*(?:export[ \t]+)?(?:declare[ \t]+)?interface[ \t]+\w+",
            "type_alias": r"^[ \t]*(?:export[ \t]+)?type[ \t]+\w+[^=\n]*=",
            "ts_ignore": r"@ts-(?:ignore|expect-error)\b",
            "jsdoc_type": r"@(?:param|returns?|type)[ \t]+\{",
            "expect": r"\bexpect\(",
            "node_assert": r"\bassert(?:\.\w+)?\(",
            "js_test": r"^[ \t]*(?:it|test|QUnit\.test)\([ \t]*['\"`]",
            "describe": r"^[ \t]*describe\(",
            "vitest_import": r"['\"]vitest['\"]",
            "node_test": r"['\"]node:test['\"]",
            "chai": r"['\"]chai['\"]",
            "qunit": r"\bQUnit\.(?:test|module)\(",
        }.items()
    },
    "go": {
        k: _rx(v)
        for k, v in {
            "err_check": r"\berr[ \t]*!=[ \t]*nil\b",
            "errors_new": r"\berrors\.New\(",
            "errorf": r"\bfmt\.Errorf\(",
            "errorf_wrap": r"\bfmt\.Errorf\([^\n]*%w",
            "errors_is_as": r"\berrors\.(?:Is|As)\(",
            "panic": r"\bpanic\(",
            "error_type": r"^func[ \t]*\([ \t]*\w*[ \t]*\*?(\w+)[ \t]*\)"
            r"[ \t]*Error\(\)[ \t]*string",
            "import_block": r"^import[ \t]*\(",
            "import_single": r"^import[ \t]+(?:[\w.]+[ \t]+)?\"",
            "import_alias": r"^[ \t]+(?:\w+|\.)[ \t]+\"[^\"\n]+\"[ \t]*$",
            "testing_import": r"\"testing\"",
            "go_test_func": r"^func[ \t]+Test\w*\([ \t]*\w+[ \t]+\*testing\.T\b",
            "t_report": r"\bt\.(?:Errorf|Error|Fatalf|Fatal)\(",
            "testify": r"\b(?:assert|require)\.\w+\([ \t]*t\b",
            "t_run": r"\bt\.Run\(",
        }.items()
    },
    "rust": {
        k: _rx(v)
        for k, v in {
            "result_fn": r"\bfn[ \t]+\w+[^{;\n]*->[ \t]*(?:[\w:]+::)?Result\b",
            "question": r"[\w)\]>]\?(?=[;.),\s])",
            "unwrap": r"\.unwrap\(\)",
            "expect_call": r"\.expect\(",
            "panic": r"\bpanic!\(",
            "error_impl": r"\bimpl\b[^\n{]*\bError[ \t]+for[ \t]+(\w+)",
            "thiserror": r"#\[derive\([^)\n]*\bError\b",
            "anyhow": r"\banyhow::",
            "use_any": r"^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?use[ \t]+\w",
            "use_crate": r"^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?use[ \t]+(?:crate|super|self)::",
            "use_std": r"^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?use[ \t]+(?:std|core|alloc)::",
            "use_group": r"^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?use[ \t]+[\w:]*::\{",
            "cfg_test": r"^[ \t]*#\[cfg\(test\)\]",
            "rust_test": r"^[ \t]*#\[(?:tokio::)?test\]",
            "assert_eq": r"\bassert_(?:eq|ne)!\(",
            "assert_macro": r"\bassert!\(",
        }.items()
    },
    "java": {
        k: _rx(v)
        for k, v in {
            "throws": r"\)[ \t]*throws[ \t]+\w+",
            "throw": r"\bthrow[ \t]+new\b",
            "try": r"\btry[ \t]*[({]",
            "catch": r"\bcatch[ \t]*\(",
            "catch_generic": r"\bcatch[ \t]*\([ \t]*(?:final[ \t]+)?"
            r"(?:Exception|Throwable)[ \t]+\w+",
            "exception_class": r"\bclass[ \t]+(\w+)[ \t]+extends[ \t]+(\w*(?:Exception|Error|"
            r"Throwable))\b",
            "import_any": r"^import[ \t]+[\w.]",
            "import_static": r"^import[ \t]+static\b",
            "import_wildcard": r"^import[ \t]+(?:static[ \t]+)?[\w.]+\.\*[ \t]*;",
            "junit_test": r"^[ \t]*@Test\b",
            "junit5": r"\borg\.junit\.jupiter\b",
            "junit4": r"\borg\.junit\.(?!jupiter)\w",
            "assert_junit": r"\bassert(?:Equals|NotEquals|True|False|Null|NotNull|Same|Throws|"
            r"ArrayEquals)\(",
            "assert_that": r"\bassertThat\(",
        }.items()
    },
}

# C and C++ share the preprocessor's includes and their assertion macros.
_C_COMMON = {
    "include_system": r"^[ \t]*#[ \t]*include[ \t]*<",
    "include_local": r"^[ \t]*#[ \t]*include[ \t]*\"",
    "pragma_once": r"^[ \t]*#[ \t]*pragma[ \t]+once\b",
    "include_guard": r"^[ \t]*#[ \t]*ifndef[ \t]+\w+_(?:H|HPP|HH|INCLUDED)\w*[ \t]*$",
    "assert": r"\bassert[ \t]*\(",
    "static_assert": r"\b(?:static_assert|_Static_assert)[ \t]*\(",
    "error_macro": r"^[ \t]*#[ \t]*define[ \t]+(\w*(?:ERROR|ERR|CHECK|FAIL)\w*)\(",
}
FEATURES["c"] = {
    k: _rx(v)
    for k, v in {
        **_C_COMMON,
        "return_negative": r"\breturn[ \t]+\(?-[ \t]*(?:\d|[A-Z_]{2,})",
        "errno": r"\berrno\b(?!\.h)",
        "goto": r"\bgoto[ \t]+\w+[ \t]*;",
        "abort": r"\b(?:abort|exit)[ \t]*\(",
        # an enum of error codes: `typedef enum { ... } ZSTD_ErrorCode;`, `enum git_error_code {`
        "error_type": r"(?:^(?:typedef[ \t]+)?enum[ \t]+|\}[ \t]*)"
        r"(\w*(?:[Ee]rror|Err|[Ss]tatus)\w*)[ \t]*[;{]",
        "c_test": r"^(?:static[ \t]+)?(?:int|void)[ \t]+(test\w*)[ \t]*\(",
    }.items()
}
FEATURES["cpp"] = {
    k: _rx(v)
    for k, v in {
        **_C_COMMON,
        "throw": r"\bthrow[ \t]+\S",
        "try": r"\btry[ \t]*\{",
        "catch": r"\bcatch[ \t]*\(",
        "noexcept": r"\bnoexcept\b",
        "error_code": r"\bstd::(?:error_code|expected|system_error)\b",
        "exception_class": r"\b(?:class|struct)[ \t]+(\w+)[ \t]*(?:final[ \t]*)?:[ \t]*"
        r"(?:public[ \t]+|virtual[ \t]+)*((?:std::)?\w*(?:exception|error|Exception|Error)\w*)\b",
        "gtest": r"^[ \t]*#[ \t]*include[ \t]*[<\"]gtest/",
        "catch2": r"^[ \t]*#[ \t]*include[ \t]*[<\"]catch2?[/.]",
        "doctest": r"^[ \t]*#[ \t]*include[ \t]*[<\"]doctest[/.]",
        "cpp_test": r"^[ \t]*(?:TEST(?:_F|_P)?|TYPED_TEST|TEST_CASE)[ \t]*\(",
        "gtest_assert": r"\b(?:EXPECT|ASSERT)_[A-Z_]+[ \t]*\(",
        "catch_assert": r"\b(?:REQUIRE|CHECK)(?:_[A-Z]+)?[ \t]*\(",
    }.items()
}

# (feature, label, reported even when zero)
ERRORS: dict[str, list[tuple[str, str, bool]]] = {
    "python": [
        ("raise", "`raise` statements", True),
        ("try", "`try` blocks", True),
        ("except", "`except` clauses", False),
        ("raise_from", "`raise ... from`", True),
        ("broad_except", "`except Exception`", False),
        ("bare_except", "bare `except:`", True),
    ],
    "js": [
        ("throw", "`throw` statements", True),
        ("try", "`try` blocks", True),
        ("catch", "`catch` clauses", False),
        ("promise_catch", "`.catch(...)` calls", True),
    ],
    "go": [
        ("err_check", "`err != nil` checks", True),
        ("errors_new", "`errors.New`", False),
        ("errorf", "`fmt.Errorf`", False),
        ("errorf_wrap", "`fmt.Errorf` wrapping with %w", False),
        ("errors_is_as", "`errors.Is`/`errors.As`", False),
        ("panic", "`panic(...)`", True),
    ],
    "rust": [
        ("result_fn", "functions returning `Result`", True),
        ("question", "`?` propagations", True),
        ("unwrap", "`.unwrap()` calls", True),
        ("expect_call", "`.expect(...)` calls", False),
        ("panic", "`panic!`", False),
        ("thiserror", "`#[derive(Error)]` (thiserror)", False),
        ("anyhow", "`anyhow::` uses", False),
    ],
    "java": [
        ("throws", "`throws` clauses", True),
        ("throw", "`throw new`", True),
        ("try", "`try` blocks", True),
        ("catch", "`catch` clauses", False),
        ("catch_generic", "catch-alls (`catch (Exception e)`)", True),
    ],
    "c": [
        ("return_negative", "negative return codes (`return -1`, `return -EINVAL`)", True),
        ("goto", "`goto` jumps (cleanup paths)", True),
        ("errno", "`errno` uses", False),
        ("error_macro", "error-checking macros defined", False),
        ("assert", "`assert(...)`", True),
        ("abort", "`abort()`/`exit()` calls", False),
    ],
    "cpp": [
        ("throw", "`throw` expressions", True),
        ("try", "`try` blocks", True),
        ("catch", "`catch` clauses", False),
        ("noexcept", "`noexcept`", True),
        ("error_code", "`std::error_code`/`std::expected`", False),
        ("error_macro", "error-checking macros defined", False),
        ("assert", "`assert(...)`", False),
    ],
}
ERROR_CLASSES = {
    "python": "exception_class",
    "js": "error_class",
    "go": "error_type",
    "rust": "error_impl",
    "java": "exception_class",
    "c": "error_type",
    "cpp": "exception_class",
}
ERROR_EXAMPLES = {
    "python": ["bare_except", "raise_from", "raise", "try"],
    "js": ["throw", "try", "promise_catch"],
    "go": ["err_check", "errorf_wrap", "errors_new", "panic"],
    "rust": ["question", "result_fn", "unwrap"],
    "java": ["throws", "throw", "catch"],
    "c": ["return_negative", "goto", "error_macro", "assert"],
    "cpp": ["throw", "try", "noexcept", "error_macro"],
}
# (feature, label) per family: assertion styles and test frameworks.
ASSERTS: dict[str, list[tuple[str, str]]] = {
    "python": [
        ("bare_assert", "bare `assert`"),
        ("self_assert", "`self.assertX(...)`"),
        ("pytest_raises", "`pytest.raises`"),
    ],
    "js": [("expect", "`expect(...)`"), ("node_assert", "`assert(...)`/`assert.x(...)`")],
    "go": [("t_report", "`t.Errorf`/`t.Fatal`"), ("testify", "testify `assert`/`require`")],
    "rust": [("assert_eq", "`assert_eq!`/`assert_ne!`"), ("assert_macro", "`assert!`")],
    "java": [("assert_junit", "JUnit `assertX(...)`"), ("assert_that", "`assertThat(...)`")],
    "c": [("assert", "`assert(...)`")],
    "cpp": [
        ("gtest_assert", "googletest `EXPECT_*`/`ASSERT_*`"),
        ("catch_assert", "`REQUIRE`/`CHECK` (Catch2, doctest)"),
        ("assert", "`assert(...)`"),
    ],
}
FRAMEWORKS: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "python": [
        ("pytest", ("pytest_import", "pytest_fixture", "pytest_raises")),
        ("unittest-style TestCase", ("unittest_import", "testcase_class")),
    ],
    "js": [
        ("vitest", ("vitest_import",)),
        ("node:test", ("node_test",)),
        ("chai", ("chai",)),
        ("QUnit", ("qunit",)),
        ("describe/it", ("describe",)),
    ],
    "go": [("go testing", ("testing_import",)), ("testify", ("testify",))],
    "rust": [("#[test]", ("rust_test",))],
    "java": [("JUnit 5", ("junit5",)), ("JUnit 4", ("junit4",))],
    "c": [],
    "cpp": [("googletest", ("gtest",)), ("Catch2", ("catch2",)), ("doctest", ("doctest",))],
}
TEST_DEFS = {
    "python": "test_function",
    "js": "js_test",
    "go": "go_test_func",
    "rust": "rust_test",
    "java": "junit_test",
    "c": "c_test",
    "cpp": "cpp_test",
}
TEST_NAMES: list[tuple[str, re.Pattern[str]]] = [
    ("test_*.py", re.compile(r"^test_.*\.py$")),
    ("*_test.py", re.compile(r"_test\.py$")),
    ("conftest.py", re.compile(r"^conftest\.py$")),
    ("*_test.go", re.compile(r"_test\.go$")),
    ("*.test.js/ts", re.compile(r"\.test\.[cm]?[jt]sx?$")),
    ("*.spec.js/ts", re.compile(r"\.spec\.[cm]?[jt]sx?$")),
    ("*Test.java", re.compile(r"Tests?\.java$")),
    ("*_test.c/cc/cpp", re.compile(r"_(?:unit)?test\.(?:c|cc|cpp|cxx)$")),
    ("test_*.c/cc/cpp", re.compile(r"^test_.*\.(?:c|cc|cpp|cxx)$")),
]

CASE = [
    ("UPPER_CASE", re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$")),
    ("snake_case", re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")),
    ("lowercase", re.compile(r"^[a-z][a-z0-9]*$")),
    ("camelCase", re.compile(r"^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$")),
    ("PascalCase", re.compile(r"^[A-Z][a-z0-9]*(?:[A-Z0-9][a-z0-9]*)*$|^[A-Z]+[a-z][A-Za-z0-9]*$")),
]
FUNCTION_KINDS = frozenset({"function", "method"})
TYPE_KINDS = frozenset({"class", "struct", "interface", "enum", "trait", "type"})


@dataclass
class Scan:
    """What the regexes, the parser and the sample found in one language family."""

    files: list[str] = field(default_factory=list)
    hits: dict[str, list[Hit]] = field(default_factory=lambda: defaultdict(list))
    symbols: list[Symbol] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)

    def n(self, feature: str) -> int:
        return len(self.hits.get(feature, ()))

    def in_files(self, feature: str) -> int:
        return len({h[0] for h in self.hits.get(feature, ())})

    def get(self, feature: str) -> list[Hit]:
        return self.hits.get(feature, [])
