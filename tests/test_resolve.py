"""Imports resolved to files, per language, on small multi-file repos: what the indexer's
`imports` table stores (one row per file an import resolves to) and what the resolver
answers from the file set and the project's manifests alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_tree

from dowse.indexer.parse import parse_source
from dowse.indexer.resolve import ImportResolver, read_layout
from dowse.languages import language_for

REPOS: dict[str, dict[str, str]] = {
    "go": {
        "go.mod": "module github.com/acme/shop\n\ngo 1.21\n",
        "cmd/shop/main.go": 'package main\n\nimport (\n\t"fmt"\n\t"github.com/acme/shop/cart"\n'
        '\tpay "github.com/acme/shop/internal/pay"\n\t"github.com/other/lib"\n)\n',
        "cart/cart.go": "package cart\n\ntype Cart struct{}\n",
        "cart/total.go": "package cart\n\nfunc (c *Cart) Total() int { return 0 }\n",
        "cart/cart_test.go": "package cart\n",
        "internal/pay/pay.go": "package pay\n",
        "vendor/github.com/other/lib/lib.go": "package lib\n",
    },
    "rust": {
        "Cargo.toml": '[package]\nname = "shop-core"\nversion = "0.1.0"\n',
        "src/lib.rs": "mod cart;\npub mod pay;\nmod inline { fn f() {} }\n"
        "use crate::cart::Cart;\nuse std::fmt;\n",
        "src/cart.rs": "mod line;\nuse super::pay::{card, Charge};\nuse self::line::Line;\n",
        "src/cart/line.rs": "pub struct Line;\n",
        "src/pay/mod.rs": "pub mod card;\npub struct Charge;\n",
        "src/pay/card.rs": "use crate::Cart;\n",
        "tests/flow.rs": "use shop_core::pay::Charge;\n",
        # An integration test crate: its root declares the helpers beside it and uses them.
        "tests/suite.rs": "mod util;\nmod checkout;\n",
        "tests/util.rs": "pub fn shop() {}\n",
        "tests/checkout.rs": "use crate::util::shop;\n",
    },
    "java": {
        "src/main/java/com/acme/shop/Cart.java": "package com.acme.shop;\n"
        "import com.acme.shop.pay.Card;\nimport com.acme.shop.pay.Card.Brand;\n"
        "import static com.acme.shop.util.Money.round;\nimport com.acme.shop.util.*;\n"
        "import java.util.List;\npublic class Cart {}\n",
        "src/main/java/com/acme/shop/pay/Card.java": "package com.acme.shop.pay;\n"
        "public class Card { enum Brand {} }\n",
        "src/main/java/com/acme/shop/util/Money.java": "package com.acme.shop.util;\n"
        "public class Money {}\n",
        "src/main/java/com/acme/shop/util/Tax.java": "package com.acme.shop.util;\n"
        "public class Tax {}\n",
        "src/main/kotlin/com/acme/shop/Report.kt": "package com.acme.shop\n"
        "import com.acme.shop.pay.Card\n",
    },
    "ts": {
        "tsconfig.json": '{\n  // comments are allowed\n  "compilerOptions": {\n'
        '    "baseUrl": ".",\n'
        '    "paths": {"@app/*": ["src/app/*"], "@lib": ["src/lib/index.ts"],},\n'
        "  },\n}\n",
        "src/main.ts": 'import { cart } from "@app/cart";\nimport { lib } from "@lib";\n'
        'import { ui } from "./ui";\nimport { fmt } from "./fmt.js";\n'
        'import { shared } from "src/shared";\nimport React from "react";\n',
        "src/app/cart.ts": "export const cart = 1;\n",
        "src/lib/index.ts": "export const lib = 1;\n",
        "src/ui/index.tsx": "export const ui = 1;\n",
        "src/fmt.ts": "export const fmt = 1;\n",
        "src/shared.ts": "export const shared = 1;\n",
        "packages/web/tsconfig.json": '{"extends": "../../tsconfig.json"}\n',
        "packages/web/page.ts": 'import { cart } from "@app/cart";\n',
    },
    "c": {
        "include/shop/cart.h": '#include "shop/money.h"\nint cart_total(void);\n',
        "include/shop/money.h": "int round_money(int);\n",
        "src/cart.c": '#include <stdio.h>\n#include "shop/cart.h"\n#include "ring.h"\n'
        "int cart_total(void) { return 0; }\n",
        "src/ring.h": "void ring(void);\n",
        "src/ring.cpp": '#include "ring.h"\nvoid ring(void) {}\n',
        "src/money.c": '#include "shop/money.h"\nint round_money(int x) { return x; }\n',
        "tests/test_cart.c": '#include "../src/ring.h"\n#include <shop/cart.h>\n',
    },
}

EXPECTED: dict[str, dict[str, list[list[str]]]] = {
    "go": {
        "cmd/shop/main.go": [
            [],
            ["cart/cart.go", "cart/total.go"],  # the package: its files, not its tests
            ["internal/pay/pay.go"],
            ["vendor/github.com/other/lib/lib.go"],
        ],
    },
    "rust": {
        "src/lib.rs": [["src/cart.rs"], ["src/pay/mod.rs"], ["src/cart.rs"], []],
        # `use super::pay::{card, Charge}`: card is a module file, Charge lives in pay.
        "src/cart.rs": [
            ["src/cart/line.rs"],
            ["src/pay/mod.rs", "src/pay/card.rs"],
            ["src/cart/line.rs"],
        ],
        "src/pay/mod.rs": [["src/pay/card.rs"]],
        "src/pay/card.rs": [["src/lib.rs"]],
        "tests/flow.rs": [["src/pay/mod.rs"]],  # the workspace crate by its Cargo.toml name
        # A file of tests/ is a crate root: `mod util;` and `crate::util` are tests/util.rs.
        "tests/suite.rs": [["tests/util.rs"], ["tests/checkout.rs"]],
        "tests/checkout.rs": [["tests/util.rs"]],
    },
    "java": {
        "src/main/java/com/acme/shop/Cart.java": [
            ["src/main/java/com/acme/shop/pay/Card.java"],
            ["src/main/java/com/acme/shop/pay/Card.java"],  # a nested class: its outer file
            ["src/main/java/com/acme/shop/util/Money.java"],  # a static member
            [
                "src/main/java/com/acme/shop/util/Money.java",
                "src/main/java/com/acme/shop/util/Tax.java",
            ],
            [],
        ],
        "src/main/kotlin/com/acme/shop/Report.kt": [["src/main/java/com/acme/shop/pay/Card.java"]],
    },
    "ts": {
        "src/main.ts": [
            ["src/app/cart.ts"],
            ["src/lib/index.ts"],
            ["src/ui/index.tsx"],
            ["src/fmt.ts"],
            ["src/shared.ts"],  # baseUrl
            [],
        ],
        "packages/web/page.ts": [["src/app/cart.ts"]],  # through `extends`
    },
    "c": {
        "include/shop/cart.h": [["include/shop/money.h", "src/money.c"]],
        # the header and its implementation (same stem under the src/ beside include/)
        "src/cart.c": [[], ["include/shop/cart.h"], ["src/ring.h", "src/ring.cpp"]],
        "src/ring.cpp": [["src/ring.h"]],  # its own header; never itself
        "src/money.c": [["include/shop/money.h"]],
        "tests/test_cart.c": [
            ["src/ring.h", "src/ring.cpp"],
            ["include/shop/cart.h", "src/cart.c"],
        ],
    },
}


def _resolved(root: Path) -> dict[str, list[list[str]]]:
    paths = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}

    def read(rel: str) -> bytes | None:
        f = root / rel
        return f.read_bytes() if f.is_file() else None

    resolver = ImportResolver(paths, read_layout(paths, read))
    out: dict[str, list[list[str]]] = {}
    for path in sorted(paths):
        language = language_for(path)
        if language is None:
            continue
        parsed = parse_source(path, (root / path).read_bytes(), language)
        out[path] = [resolver.resolve(i.module, path, language, i.names) for i in parsed.imports]
    return out


@pytest.mark.parametrize("repo", sorted(EXPECTED))
def test_imports_resolve_to_files(tmp_path: Path, repo: str) -> None:
    root = make_tree(tmp_path / repo, REPOS[repo])
    resolved = _resolved(root)
    for path, expected in EXPECTED[repo].items():
        assert resolved[path] == expected, path


def test_without_manifests_nothing_is_guessed(tmp_path: Path) -> None:
    files = {k: v for k, v in REPOS["go"].items() if k != "go.mod"}
    files.update({k: v for k, v in REPOS["ts"].items() if not k.endswith("tsconfig.json")})
    root = make_tree(tmp_path / "bare", files)
    resolved = _resolved(root)
    assert resolved["cmd/shop/main.go"] == [[], [], [], []]
    assert resolved["src/main.ts"] == [[], [], ["src/ui/index.tsx"], ["src/fmt.ts"], [], []]


def test_an_include_found_elsewhere_is_taken_unless_ambiguous_or_the_systems(
    tmp_path: Path,
) -> None:
    root = make_tree(
        tmp_path / "amb",
        {
            "a/util.h": "",
            "b/util.h": "",
            "programs/timefn.h": "",
            "compat/stddef.h": "",
            "c/main.c": '#include "util.h"\n#include "timefn.h"\n#include <stddef.h>\n',
        },
    )
    assert _resolved(root)["c/main.c"] == [[], ["programs/timefn.h"], []]


def test_the_index_stores_one_row_per_resolved_file(tmp_path: Path, fake_embedder) -> None:
    from dowse.indexer.build import IndexConfig, build_index
    from dowse.indexer.store import Store

    root = make_tree(tmp_path / "go", REPOS["go"])
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    rows = Store.open(root / ".dowse").rows("imports", ["path", "module", "line", "resolved"])
    cart = sorted(r["resolved"] for r in rows if r["module"] == "github.com/acme/shop/cart")
    assert cart == ["cart/cart.go", "cart/total.go"]
    assert [r["resolved"] for r in rows if r["module"] == "fmt"] == [None]
    # A second run re-resolves the stored rows without multiplying them.
    (root / "cart" / "more.go").write_text("package cart\n")
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    rows = Store.open(root / ".dowse").rows("imports", ["path", "module", "resolved"])
    cart = sorted(r["resolved"] for r in rows if r["module"] == "github.com/acme/shop/cart")
    assert cart == ["cart/cart.go", "cart/more.go", "cart/total.go"]
    assert len([r for r in rows if r["module"] == "fmt"]) == 1


def _imports_report(ctx):
    from dowse.explore.imports import imports_track
    from dowse.explore.tracks import run_track

    result, output = run_track(ctx, imports_track(ctx))
    return result, output.get("imports")


@pytest.mark.parametrize("repo", ["go", "rust", "java", "c"])
def test_the_imports_explorer_graphs_compiled_languages(tmp_path, fake_embedder, repo):
    from dowse.explore.tracks import Context
    from dowse.indexer.build import IndexConfig, build_index

    parsed_result, parsed = _imports_report(
        Context(root=make_tree(tmp_path / "parsed", REPOS[repo]))
    )
    root = make_tree(tmp_path / "indexed", REPOS[repo])
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    result, report = _imports_report(Context(root=root, index_dir=root / ".dowse"))
    assert report is not None and report == parsed
    edges = {
        (importer, target)
        for importer, lists in EXPECTED[repo].items()
        for targets in lists
        for target in targets
        # The walk leaves vendored code out: to the graph it is a third-party package.
        if not target.startswith("vendor/")
    }
    assert report.edges == len(edges)
    assert [g.passed for g in result.gates] == [True, True, True], result.gates
    # Every central module's claim cites the import line that shows it.
    central = [f for f in result.findings if f.topic == "central"]
    assert central and all(f.citations for f in central)
    assert not any("not resolved to files for" in g for g in result.gaps)


def test_compiled_imports_outside_the_project_are_named(tmp_path):
    from dowse.explore.tracks import Context

    result, report = _imports_report(Context(root=make_tree(tmp_path / "go", REPOS["go"])))
    assert report is not None
    assert any("standard library modules used: fmt" in c for c in result.conclusions)
    _, c_report = _imports_report(Context(root=make_tree(tmp_path / "c", REPOS["c"])))
    assert c_report is not None and c_report.external == []
