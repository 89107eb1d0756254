"""The patterns explorer on small repositories with known patterns: exact names, numbers and
cited examples; every claim verifies; sampling is bounded and deterministic."""

from __future__ import annotations

from pathlib import Path

from conftest import make_tree

from dowse.explore.patterns import SAMPLE_SOURCE, SAMPLE_TESTS, patterns_track
from dowse.explore.records import Pattern
from dowse.explore.tracks import Context, run_track
from dowse.indexer.build import IndexConfig, build_index

PYTHON = {
    "src/app/__init__.py": '"""app."""\n',
    "src/app/errors.py": '"""Errors."""\nclass AppError(Exception):\n    """Base."""\n\n\n'
    "class NotFound(AppError):\n    pass\n",
    "src/app/core.py": """\
from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import NotFound

MAX_ITEMS = 10
default_name = "x"


@dataclass
class Item:
    name: str


def find_item(items: list[Item], name: str) -> Item:
    for item in items:
        if item.name == name:
            return item
    raise NotFound(name) from None


def load(path):
    \"\"\"Never raise here: import json is in a docstring.

    import json
    \"\"\"
    try:
        return open(path).read()
    except:
        return None


def _env(key: str):
    return os.environ.get(key)
""",
    "tests/test_core.py": """\
import pytest

from app.core import Item, find_item


def test_find():
    assert find_item([Item("a")], "a").name == "a"


def test_missing():
    with pytest.raises(Exception):
        find_item([], "b")


def test_again():
    assert True
""",
    "tests/test_unit.py": "import unittest\n\n\nclass T(unittest.TestCase):\n"
    "    def test_x(self):\n        self.assertEqual(1, 1)\n",
    "README.md": "# app\n",
}

POLYGLOT = {
    "web/src/api.ts": """\
import { get } from "./http";
import type { User } from "./types";

export interface Options {
  retries: number;
}

export type Id = string;

export const MAX_RETRIES = 3;

export async function fetchUser(id: Id, opts: any): Promise<User> {
  try {
    return await get(`/users/${id}`);
  } catch (err) {
    throw new ApiError(String(err));
  }
}

export function parseId(raw: string) {
  return raw as any;
}

export class ApiError extends Error {}
""",
    "web/src/http.ts": "export function get(url: string): Promise<any> {\n"
    "  return fetch(url).then((r) => r.json()).catch(() => null);\n}\n",
    "web/src/api.test.ts": 'import { describe, it, expect } from "vitest";\n'
    'import { parseId } from "./api";\n\n'
    'describe("parseId", () => {\n  it("keeps the id", () => {\n'
    '    expect(parseId("a")).toBe("a");\n  });\n});\n',
    "web/src/legacy.js": 'const path = require("path");\n\nfunction joinAll(parts) {\n'
    "  return path.join(...parts);\n}\n\nmodule.exports = { joinAll };\n",
    "go/go.mod": "module github.com/acme\n\ngo 1.22\n",
    "go/internal/store/store.go": """\
package store

import (
\t"errors"
\t"fmt"
\t"os"
)

var ErrMissing = errors.New("missing")

type NotFoundError struct{ Key string }

func (e *NotFoundError) Error() string { return "not found: " + e.Key }

func Load(path string) ([]byte, error) {
\tdata, err := os.ReadFile(path)
\tif err != nil {
\t\treturn nil, fmt.Errorf("load %s: %w", path, err)
\t}
\treturn data, nil
}

func mustLoad(path string) []byte {
\tdata, err := Load(path)
\tif err != nil {
\t\tpanic(err)
\t}
\treturn data
}
""",
    "go/internal/store/store_test.go": """\
package store

import "testing"

func TestLoad(t *testing.T) {
\tif _, err := Load("a"); err == nil {
\t\tt.Errorf("want an error")
\t}
}
""",
    "go/cmd/tool/main.go": 'package main\n\nimport "github.com/acme/store"\n\n'
    'func main() {\n\tstore.Load("x")\n}\n',
    "rs/Cargo.toml": '[package]\nname = "store"\n',
    "rs/src/lib.rs": """\
use std::fs;
use std::io::{self, Read};
use crate::util::clean;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("io")]
    Io(#[from] io::Error),
}

pub fn load(path: &str) -> Result<String, StoreError> {
    let text = fs::read_to_string(path)?;
    Ok(clean(&text))
}

pub fn first(path: &str) -> String {
    load(path).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads() {
        assert_eq!(first("a"), "a");
    }
}
""",
    "java/src/main/java/com/acme/Store.java": """\
package com.acme;

import java.io.IOException;
import java.util.*;

public class Store {
    public static final int MAX_SIZE = 10;

    public String load(String path) throws IOException {
        try {
            return read(path);
        } catch (Exception e) {
            throw new StoreException(e.getMessage());
        }
    }
}

class StoreException extends RuntimeException {
    StoreException(String m) { super(m); }
}
""",
    "java/src/test/java/com/acme/StoreTest.java": """\
package com.acme;

import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;

class StoreTest {
    @Test
    void loads() {
        assertEquals(1, 1);
    }
}
""",
}


def _run(root: Path, scope: str = "", deepen: int = 0):
    ctx = Context(root=root, scope=scope, deepen=deepen)
    result, out = run_track(ctx, patterns_track(ctx))
    return result, {p.name: p for p in out.get("patterns", [])}


def _refs(p: Pattern) -> list[str]:
    return [c.ref for c in p.examples]


def _verified(result) -> None:
    assert [g.passed for g in result.gates] == [True, True, True], result.gates
    assert result.dropped == []


def test_python_patterns_are_measured_and_cited(tmp_path):
    result, patterns = _run(make_tree(tmp_path, PYTHON))
    _verified(result)
    assert list(patterns) == [
        "module structure",
        "error handling (Python)",
        "typing (Python)",
        "import style (Python)",
        "naming (Python)",
        "test layout",
        "assertion style",
    ]
    assert patterns["module structure"].description == (
        "5 code files in 2 directories (median 2.5 per directory; largest src/app/ with 3); "
        "1 Python package (with __init__.py); top-level: src/app; src layout; 2 test files, "
        "2 under test directories"
    )
    assert _refs(patterns["module structure"]) == ["src/app/__init__.py:1", "src/app/core.py:1"]

    errors = patterns["error handling (Python)"]
    assert errors.description == (
        "`raise` statements: 1 (in 1 of 3 sampled files); `try` blocks: 1; `except` "
        "clauses: 1; `raise ... from`: 1; bare `except:`: 1; custom error types: 2 "
        "(AppError, NotFound), based on Exception ×1, AppError ×1"
    )
    assert _refs(errors) == ["src/app/errors.py:2", "src/app/core.py:31", "src/app/core.py:21"]
    assert [c.quote for c in errors.examples] == [
        "class AppError(Exception):",
        "except:",
        "raise NotFound(name) from None",
    ]

    assert patterns["typing (Python)"].description == (
        "33% of 3 sampled functions annotate their return type; 75% of their 4 parameters "
        "are annotated; `from __future__ import annotations` in 1 of 3 files; typed "
        "records: 1 @dataclass"
    )
    assert _refs(patterns["typing (Python)"]) == [
        "src/app/core.py:17",
        "src/app/core.py:1",
        "src/app/core.py:12",
    ]

    # The import quoted in load()'s docstring is not an import.
    assert patterns["import style (Python)"].description == (
        "67% of 3 top-level imports are `from x import y`, 1 `import x`; 1 relative (33%); "
        "0 imports inside functions or blocks; origins: 67% stdlib, 33% project"
    )
    assert _refs(patterns["import style (Python)"]) == [
        "src/app/core.py:4",
        "src/app/core.py:3",
        "src/app/core.py:6",
    ]

    assert patterns["naming (Python)"].description == (
        "100% of 3 functions/methods are snake_case (incl. one-word lowercase); 33% private "
        "(`_name`); 100% of 3 classes/types are PascalCase; 1 of 2 module-level names are "
        "UPPER_CASE constants"
    )
    assert [c.quote for c in patterns["naming (Python)"].examples] == [
        "def find_item(items: list[Item], name: str) -> Item:",
        "class AppError(Exception):",
        "MAX_ITEMS = 10",
    ]

    assert patterns["test layout"].description == (
        "2 test files: 100% under test directories (top-level tests/), 0 colocated with the "
        "code; names: test_*.py ×2; frameworks: pytest in 1 of 2 sampled test files (Python), "
        "unittest-style TestCase in 1 of 2 sampled test files (Python)"
    )
    assert _refs(patterns["test layout"]) == [
        "tests/test_core.py:6",
        "tests/test_core.py:1",
        "tests/test_unit.py:1",
    ]
    assert patterns["assertion style"].description == (
        "4 assertions in 2 sampled files: bare `assert` (Python) 50% (2), "
        "`self.assertX(...)` (Python) 25% (1), `pytest.raises` (Python) 25% (1)"
    )
    assert [c.quote for c in patterns["assertion style"].examples] == [
        'assert find_item([Item("a")], "a").name == "a"',
        "self.assertEqual(1, 1)",
        "with pytest.raises(Exception):",
    ]


def test_each_pattern_is_a_claim_citing_its_examples(tmp_path):
    result, patterns = _run(make_tree(tmp_path, PYTHON))
    claims = {f.claim: f for f in result.findings}
    for p in patterns.values():
        finding = claims[f"{p.name}: {p.description}"]
        assert finding.citations == p.examples and 1 <= len(p.examples) <= 3
        assert finding.topic == "patterns"
    assert result.gaps == []  # every file was measured, every topic reported


def test_other_languages(tmp_path):
    result, patterns = _run(make_tree(tmp_path, POLYGLOT))
    _verified(result)
    assert set(patterns) == {
        "module structure",
        "error handling (JS/TS)",
        "typing (JS/TS)",
        "import style (JS/TS)",
        "naming (JS/TS)",
        "error handling (Go)",
        "import style (Go)",
        "naming (Go)",
        "error handling (Java)",
        "import style (Java)",
        "naming (Java)",
        "error handling (Rust)",
        "import style (Rust)",
        "naming (Rust)",
        "test layout",
        "assertion style",
    }
    assert patterns["module structure"].description == (
        "10 code files in 6 directories (median 1 per directory; largest web/src/ with 4); "
        "1 Go module (go.mod); 1 Cargo crate manifest; Maven/Gradle layout (src/main/java): "
        "1 file; Go cmd/ entry points: 1 file; Go internal/ packages: 2 files; 3 test files, "
        "1 under test directories"
    )
    assert [c.quote for c in patterns["module structure"].examples] == [
        "module github.com/acme",
        "[package]",
        "package com.acme;",
    ]
    assert patterns["error handling (Go)"].description == (
        "`err != nil` checks: 2 (in 1 of 2 sampled files); `errors.New`: 1; `fmt.Errorf`: 1; "
        "`fmt.Errorf` wrapping with %w: 1; `panic(...)`: 1; custom error types: 1 "
        "(NotFoundError)"
    )
    assert patterns["error handling (Rust)"].description == (
        "functions returning `Result`: 1 (in 1 of 1 sampled file); `?` propagations: 1; "
        "`.unwrap()` calls: 1; `#[derive(Error)]` (thiserror): 1"
    )
    assert [c.quote for c in patterns["error handling (Rust)"].examples] == [
        "let text = fs::read_to_string(path)?;",
        "pub fn load(path: &str) -> Result<String, StoreError> {",
        "load(path).unwrap()",
    ]
    assert patterns["error handling (Java)"].description.startswith(
        "`throws` clauses: 1 (in 1 of 1 sampled file); `throw new`: 1; `try` blocks: 1; "
        "`catch` clauses: 1; catch-alls (`catch (Exception e)`): 1; custom error types: 1 "
        "(StoreException), based on RuntimeException ×1"
    )
    assert patterns["typing (JS/TS)"].description == (
        "2 of 3 sampled files are TypeScript; 67% of 3 TypeScript functions declare a return "
        "type; `any` 3 times in 2 files; 1 interfaces, 1 type aliases"
    )
    assert patterns["import style (JS/TS)"].description == (
        "2 ES module imports vs 1 `require(...)` calls; 7 `export` statements vs 1 "
        "`module.exports`; 67% of 3 imports are relative paths"
    )
    assert patterns["import style (Go)"].description == (
        "1 grouped `import (...)` blocks, 1 single-line imports; 75% of 4 imports are "
        "standard library, 0 aliased"
    )
    assert patterns["import style (Java)"].description == ("2 imports: 1 wildcard (`.*`), 0 static")
    assert patterns["naming (Go)"].description == (
        "4 functions/methods: 50% exported (capitalized), 0 with underscores; 100% of 1 "
        "types exported (capitalized)"
    )
    assert patterns["naming (Java)"].description.startswith(
        "100% of 1 functions/methods are camelCase"
    )
    assert patterns["test layout"].description == (
        "3 test files: 33% under test directories, 2 colocated with the code; names: "
        "*_test.go ×1, *Test.java ×1, *.test.js/ts ×1; frameworks: go testing in 1 of 1 "
        "sampled test file (Go), JUnit 5 in 1 of 1 sampled test file (Java), vitest in 1 of 1 "
        "sampled test file (JS/TS), describe/it in 1 of 1 sampled test file (JS/TS); Rust "
        "unit tests inline (`#[cfg(test)]`) in 1 sampled source file"
    )
    assert patterns["assertion style"].description == (
        "4 assertions in 4 sampled files: `t.Errorf`/`t.Fatal` (Go) 25% (1), JUnit "
        "`assertX(...)` (Java) 25% (1), `expect(...)` (JS/TS) 25% (1), "
        "`assert_eq!`/`assert_ne!` (Rust) 25% (1)"
    )


def test_the_bundled_example(example_repo):
    result, patterns = _run(example_repo)
    _verified(result)
    assert list(patterns) == [
        "module structure",
        "error handling (Python)",
        "typing (Python)",
        "import style (Python)",
        "naming (Python)",
        "error handling (JS/TS)",
        "import style (JS/TS)",
        "naming (JS/TS)",
        "test layout",
        "assertion style",
    ]
    errors = patterns["error handling (Python)"]
    assert errors.description == (
        "`raise` statements: 8 (in 4 of 9 sampled files); `try` blocks: 3; `except` clauses: "
        "3; `raise ... from`: 2; bare `except:`: 0; custom error types: 3 (TokenError, "
        "PaymentDeclined, GatewayUnavailable), based on Exception ×3"
    )
    assert _refs(errors)[0] == "shop/auth/tokens.py:14"
    assert patterns["typing (Python)"].description.startswith(
        "100% of 16 sampled functions annotate their return type; 100% of their 32 "
        "parameters are annotated; `from __future__ import annotations` in 5 of 9 files"
    )
    assert _refs(patterns["import style (JS/TS)"]) == ["web/app.js:2", "web/format.js:2"]
    assert patterns["test layout"].description.endswith(
        "frameworks: pytest in 1 of 1 sampled test file (Python)"
    )
    # JS has no types to measure: said, not invented.
    assert "typing (JS/TS)" not in patterns


def test_the_scope_narrows_everything(tmp_path):
    root = make_tree(tmp_path, PYTHON)
    result, patterns = _run(root, scope="src/app")
    _verified(result)
    assert patterns["module structure"].description.startswith(
        "3 code files in 1 directory (median 3 per directory; largest src/app/ with 3)"
    )
    assert "test layout" not in patterns
    assert "test layout: no test files in scope" in result.gaps
    assert all(c.path.startswith("src/app/") for p in patterns.values() for c in p.examples)

    result, patterns = _run(root, scope="src/app/errors.py")
    _verified(result)
    assert patterns["module structure"].description.startswith("1 code file in 1 directory")
    assert patterns["error handling (Python)"].description.endswith(
        "custom error types: 2 (AppError, NotFound), based on Exception ×1, AppError ×1"
    )


def test_no_code_fails_the_first_gate(tmp_path):
    result, patterns = _run(make_tree(tmp_path, {"README.md": "# nothing\n"}))
    assert [(g.name, g.passed, g.ran) for g in result.gates] == [
        ("understood", False, True),
        ("evidence", False, False),
        ("complete", False, False),
    ]
    assert patterns == {}
    assert "module structure: no code files in scope" in result.gaps


def _bigmake_tree(root: Path, dirs: int, per_dir: int) -> Path:
    files = {}
    for d in range(dirs):
        for f in range(per_dir):
            files[f"pkg{d % 6}/sub{d}/mod{f}.py"] = (
                f"def helper_{f}(x: int) -> int:\n    if x < 0:\n"
                f"        raise ValueError(x)\n    return x\n"
            )
        files[f"tests/t{d}/test_mod{d}.py"] = "def test_it():\n    assert 1\n"
    return make_tree(root, files)


def test_sampling_is_bounded_spread_and_deterministic(tmp_path):
    root = _bigmake_tree(tmp_path, dirs=60, per_dir=7)
    first, patterns = _run(root)
    _verified(first)
    assert (
        first.gaps[0] == "measured on a sample of 40 of 480 files in 120 directories: "
        "counts are estimates"
    )
    errors = patterns["error handling (Python)"].description
    assert errors.startswith(
        f"`raise` statements: {SAMPLE_SOURCE} (in {SAMPLE_SOURCE} of {SAMPLE_SOURCE} sampled files)"
    )
    assert patterns["assertion style"].description.startswith(
        f"{SAMPLE_TESTS} assertions in {SAMPLE_TESTS} sampled files"
    )
    # One file per directory while directories remain: 30 source files from 30 directories.
    cited = {c.path.rsplit("/", 1)[0] for p in patterns.values() for c in p.examples}
    assert len(cited) == len({c.path for p in patterns.values() for c in p.examples})
    second, again = _run(root)
    assert again == patterns and second.findings == first.findings


def test_a_large_scope_splits_into_subtracks(tmp_path):
    root = _bigmake_tree(tmp_path, dirs=60, per_dir=7)
    result, _ = _run(root, deepen=1)
    # pkg0..pkg5 hold 70 files each, tests/ 60: the four biggest, each its own track.
    assert [s.track.focus for s in result.subtracks] == ["pkg0", "pkg1", "pkg2", "pkg3"]
    for sub in result.subtracks:
        _verified(sub)


def test_the_track_spec(tmp_path):
    ctx = Context(root=make_tree(tmp_path, PYTHON))
    track = patterns_track(ctx)
    assert track.spec.name == "patterns" and track.spec.focus == "."
    assert [g.split(":")[0] for g in track.spec.gates] == ["understood", "evidence", "complete"]
    assert track.make is patterns_track


def test_a_rust_module_declared_for_the_tests_is_a_test_file(tmp_path, fake_embedder):
    # ripgrep's crates/searcher/src/testutil.rs: `#[cfg(test)] mod testutil;` makes it
    # test code under src/, which the index tells (its path does not).
    root = make_tree(
        tmp_path / "repo",
        {
            "Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\n',
            "src/lib.rs": "pub fn search() -> u32 {\n    1\n}\n\n#[cfg(test)]\nmod testutil;\n",
            "src/testutil.rs": "pub fn check() -> u32 {\n    crate::search()\n}\n",
        },
    )
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    ctx = Context(root=root, index_dir=root / ".dowse")
    _, out = run_track(ctx, patterns_track(ctx))
    layout = {p.name: p for p in out.get("patterns", [])}["test layout"]
    assert layout.description.startswith(
        "1 test file: 0% under test directories, 1 colocated with the code"
    )


C_AND_CPP = {
    # A C library: error codes, cleanup by goto, include guards, a shared name prefix.
    "lib/codec.h": (
        "#ifndef CODEC_H\n#define CODEC_H\n\n#include <stddef.h>\n\n"
        "typedef enum { CODEC_ok = 0, CODEC_bad_input } CODEC_ErrorCode;\n\n"
        "int CODEC_encode(const char *src, size_t n);\n#endif\n"
    ),
    "lib/codec.c": """\
#include <errno.h>
#include <stdlib.h>
#include "codec.h"

#define CHECK_F(f) do { if ((f) < 0) return -1; } while (0)

int CODEC_encode(const char *src, size_t n) {
    char *buf = malloc(n);
    if (buf == NULL) return -ENOMEM;
    if (src == NULL) goto fail;
    free(buf);
    return 0;
fail:
    free(buf);
    return -1;
}

int CODEC_decode(const char *src) {
    CHECK_F(CODEC_encode(src, 1));
    return 0;
}
""",
    "tests/codec_test.c": (
        '#include <assert.h>\n#include "../lib/codec.h"\n\n'
        'int test_encode(void) {\n    assert(CODEC_encode("a", 1) == 0);\n    return 0;\n}\n'
    ),
}


def test_c_patterns_are_measured_and_cited(tmp_path):
    """C is measured by its own rules (zstd's patterns were its contrib scripts' Python)."""
    result, patterns = _run(make_tree(tmp_path, C_AND_CPP))
    _verified(result)
    assert set(patterns) == {
        "module structure",
        "error handling (C)",
        "import style (C)",
        "naming (C)",
        "test layout",
        "assertion style",
    }
    assert patterns["error handling (C)"].description == (
        "negative return codes (`return -1`, `return -EINVAL`): 3 (in 1 of 2 sampled files); "
        "`goto` jumps (cleanup paths): 1; error-checking macros defined: 1; "
        "`assert(...)`: 0; custom error types: 1 (CODEC_ErrorCode)"
    )
    assert patterns["import style (C)"].description == (
        '4 `#include`s: 1 project (`"..."`), 3 system (`<...>`); of 1 sampled header, '
        "0 use `#pragma once`, 1 `#ifndef` include guards"
    )
    assert "100% share the prefix `CODEC_`" in patterns["naming (C)"].description
    assert patterns["test layout"].description.startswith(
        "1 test file: 100% under test directories"
    )
    assert patterns["assertion style"].description == (
        "1 assertion in 1 sampled file: `assert(...)` (C) 100% (1)"
    )


def test_cpp_patterns_and_a_projects_headers_as_cpp(tmp_path):
    """Where C++ sources outnumber C's, `.h` headers are C++ (fmt's): exceptions, error
    categories, `#pragma once`, googletest."""
    root = make_tree(
        tmp_path,
        {
            "include/fmt/core.h": (
                "#pragma once\n#include <stdexcept>\n\nnamespace fmt {\n"
                "class format_error : public std::runtime_error {\n public:\n"
                "  using std::runtime_error::runtime_error;\n};\n"
                "inline void check(bool ok) noexcept(false) {\n"
                '  if (!ok) throw format_error("bad");\n}\n}\n'
            ),
            "src/format.cc": (
                '#include "fmt/core.h"\n\nint parse(int x) noexcept {\n  try {\n'
                "    fmt::check(x > 0);\n  } catch (const fmt::format_error&) {\n"
                "    return -1;\n  }\n  return x;\n}\n"
            ),
            "test/format-test.cc": (
                '#include "fmt/core.h"\n#include <gtest/gtest.h>\n\n'
                "TEST(format_test, parse) {\n  EXPECT_EQ(1, 1);\n  ASSERT_TRUE(true);\n}\n"
            ),
        },
    )
    result, patterns = _run(root)
    _verified(result)
    assert "error handling (C)" not in patterns
    assert patterns["error handling (C++)"].description == (
        "`throw` expressions: 1 (in 1 of 2 sampled files); `try` blocks: 1; `catch` clauses: 1; "
        "`noexcept`: 2; custom error types: 1 (format_error), based on std::runtime_error ×1"
    )
    assert patterns["import style (C++)"].description == (
        '2 `#include`s: 1 project (`"..."`), 1 system (`<...>`); of 1 sampled header, '
        "1 use `#pragma once`, 0 `#ifndef` include guards"
    )
    layout = patterns["test layout"].description
    assert "frameworks: googletest in 1 of 1 sampled test file (C++)" in layout
    assert patterns["assertion style"].description == (
        "2 assertions in 1 sampled file: googletest `EXPECT_*`/`ASSERT_*` (C++) 100% (2)"
    )


def test_several_modules_are_counted_in_the_plural(tmp_path):
    root = make_tree(
        tmp_path,
        {
            "go.mod": "module example.com/a\n",
            "tools/go.mod": "module example.com/a/tools\n",
            "a.go": "package a\n\nfunc A() {}\n",
            "tools/t.go": "package tools\n\nfunc T() {}\n",
        },
    )
    _, patterns = _run(root)
    assert patterns["module structure"].description.endswith("; 2 Go modules (go.mod)")


def test_go_names_are_measured_by_their_visibility(tmp_path):
    """Go's case is its visibility: an unexported type or constant is camelCase by the
    convention, not a departure from PascalCase or UPPER_CASE (grpc-go read "43% of 67
    classes/types are PascalCase", "0% of 14 constants are UPPER_CASE")."""
    root = make_tree(
        tmp_path,
        {
            "go.mod": "module example.com/a\n",
            "a.go": (
                'package a\n\nconst MaxSize = 10\n\nconst defaultName = "x"\n\n'
                "type Server struct{}\n\ntype conn struct{}\n\nfunc New() *Server {\n"
                "\treturn &Server{}\n}\n"
            ),
        },
    )
    _, patterns = _run(root)
    assert patterns["naming (Go)"].description == (
        "1 functions/methods: 100% exported (capitalized), 0 with underscores; 50% of 2 "
        "types exported (capitalized); 50% of 2 constants exported (capitalized)"
    )


def test_a_javascript_private_member_is_named_by_its_case(tmp_path):
    # `#retryFromError` is camelCase behind the `#` that makes it private.
    files = {
        "src/client.ts": "export class Client {\n"
        "  #retryCount = 0;\n"
        "  send(url: string) {\n    return this.#retryFromError(url);\n  }\n"
        "  #retryFromError(url: string) {\n    return this.#calculateDelay() + url.length;\n"
        "  }\n"
        "  #calculateDelay(): number {\n    return 300 * this.#retryCount;\n  }\n"
        "}\n",
    }
    result, patterns = _run(make_tree(tmp_path, files))
    assert patterns["naming (JS/TS)"].description.startswith(
        "100% of 3 functions/methods are camelCase (incl. one-word lowercase); "
        "67% private (`#name`); "
    ), patterns["naming (JS/TS)"].description
