"""dowse.explore.tree: the scope's layout three levels deep, and its key files by convention."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import make_tree

from dowse.explore.records import KeyFile, TrackFindings, TreeNode
from dowse.explore.tracks import Context, run_track
from dowse.explore.tree import MAX_CHILDREN, NO_ENTRY_POINT, tree_track

EXAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "example"


def explore(root: Path, scope: str = "") -> tuple[TrackFindings, dict[str, Any]]:
    ctx = Context(root=root, scope=scope)
    return run_track(ctx, tree_track(ctx))


def shape(node: TreeNode) -> Any:
    """(path, files, truncated, children) for directories; the path alone for files."""
    if node.kind == "file":
        return node.path
    return (node.path, node.files, node.truncated, [shape(c) for c in node.children])


def roles(output: dict[str, Any]) -> list[tuple[str, str]]:
    return [(k.path, k.role) for k in output["key_files"]]


def refs(result: TrackFindings) -> dict[str, str]:
    """Claimed path → the cited line and its quote."""
    return {
        f.claim.split(":", 1)[0]: f"{f.citations[0].ref} {f.citations[0].quote}"
        for f in result.findings
    }


def assert_clean(result: TrackFindings) -> None:
    assert [g.passed for g in result.gates] == [True, True, True], result.gates
    assert result.dropped == []


def test_example_repository() -> None:
    result, output = explore(EXAMPLE)
    assert_clean(result)
    assert shape(output["tree"]) == (
        ".",
        15,
        0,
        [
            (
                "shop",
                9,
                0,
                [
                    ("shop/api", 2, 0, ["shop/api/__init__.py", "shop/api/routes.py"]),
                    ("shop/auth", 2, 0, ["shop/auth/__init__.py", "shop/auth/tokens.py"]),
                    ("shop/storage", 2, 0, ["shop/storage/__init__.py", "shop/storage/db.py"]),
                    "shop/__init__.py",
                    "shop/payments.py",
                    "shop/pricing.py",
                ],
            ),
            ("web", 2, 0, ["web/app.js", "web/format.js"]),
            ("tests", 1, 0, ["tests/test_tokens.py"]),
            ".gitignore",
            "README.md",
            "pyproject.toml",  # .env is a secret: never listed
        ],
    )
    assert output["key_files"] == [
        KeyFile(path="README.md", role="readme"),
        KeyFile(path="pyproject.toml", role="Python project config (pyproject)"),
        KeyFile(path="shop/__init__.py", role="package root: shop"),
    ]  # web/app.js, a browser client's module that only exports functions, starts nothing
    assert refs(result) == {
        "README.md": "README.md:1 # shop",
        "pyproject.toml": "pyproject.toml:1 [project]",
        "shop/__init__.py": 'shop/__init__.py:1 """shop: carts, pricing, payments and orders."""',
    }
    assert result.conclusions[0] == ".: 15 files; largest directories: shop (9), web (2), tests (1)"
    # True of the names; the synthesis drops it where a manifest declares an entry point.
    assert result.gaps == [NO_ENTRY_POINT]


def test_depth_limit_width_limit_order_and_ignores(tmp_path: Path) -> None:
    files = {f"wide/f{i:02}.txt": "x\n" for i in range(MAX_CHILDREN + 5)}
    files.update(
        {
            "deep/a/b/c/d.txt": "x\n",
            "deep/a/b/e.txt": "x\n",
            "deep/a/top.txt": "x\n",
            "small/one.txt": "x\n",
            "z.txt": "x\n",
            "a.txt": "x\n",
            ".gitignore": "generated/\n",
            "generated/out.py": "x = 1\n",
        }
    )
    result, output = explore(make_tree(tmp_path, files))
    tree = output["tree"]
    assert tree.path == "." and tree.files == 37 and tree.truncated == 0
    assert [(c.path, c.kind, c.files) for c in tree.children] == [
        ("wide", "dir", 30),
        ("deep", "dir", 3),
        ("small", "dir", 1),
        (".gitignore", "file", 1),
        ("a.txt", "file", 1),
        ("z.txt", "file", 1),
    ]
    wide = tree.children[0]
    assert len(wide.children) == MAX_CHILDREN and wide.truncated == 5
    assert wide.children[0].path == "wide/f00.txt" and wide.children[-1].path == "wide/f24.txt"
    # three levels below the scope: deep/a/b is listed with counts but not opened
    assert shape(tree.children[1]) == (
        "deep",
        3,
        0,
        [
            ("deep/a", 3, 0, [("deep/a/b", 2, 2, []), "deep/a/top.txt"]),
        ],
    )
    assert result.gaps == [
        "no key files by convention in scope",
        "1 directory lists only its first 25 children",
    ]
    # with no key file to cite, the claims are that the first files in tree order exist
    assert [f.claim for f in result.findings] == [
        "wide/f00.txt is one of the 37 files under .",
        "wide/f01.txt is one of the 37 files under .",
        "wide/f02.txt is one of the 37 files under .",
    ]


def test_key_files_by_convention(tmp_path: Path) -> None:
    root = make_tree(
        tmp_path,
        {
            "README.md": "\n# Tool\n\nText.\n",
            "AGENTS.md": "Run the tests first.\n",
            "CONTRIBUTING.md": "# Contributing\n",
            "pyproject.toml": "[build-system]\nrequires = []\n\n[project]\nname = 'tool'\n",
            "Makefile": "VAR := 1\n\ntest:\n\tpytest\n",
            "Dockerfile": "# syntax=docker/dockerfile:1\nFROM python:3.11\n",
            ".github/workflows/ci.yml": "name: ci\non: push\njobs:\n  test: {}\n",
            "tool/__init__.py": "",
            "tool/__main__.py": (
                "from tool.cli import run\n\nif __name__ == '__main__':\n    run()\n"
            ),
            "tool/cli.py": "import argparse\n",
            "tool/sub/__init__.py": "x = 1\n",
            "tool/views/main.py": "def view():\n    pass\n",  # no guard: not an entry point
            "cmd/srv/main.go": "package main\n\nfunc main() {}\n",
            "gen/gen.go": "package main\n\nfunc main() {\n}\n",
            "crate/src/main.rs": "use std::io;\n\nfn main() {}\n",
            "crate/src/lib.rs": "//! The crate.\npub mod a;\n",
            "bin/run": "#!/bin/sh\nexec python -m tool\n",
            "scripts/release.py": 'import sys\n\nif __name__ == "__main__":\n    sys.exit(0)\n',
            "web/index.ts": "export * from './a';\n",
            "docs/README.rst": "=====\nGuide\n=====\n",
            "tests/test_a.py": "if __name__ == '__main__':\n    pass\n",
            "tests/helpers/__init__.py": "x = 1\n",
        },
    )
    result, output = explore(root)
    assert_clean(result)
    assert roles(output) == [
        ("README.md", "readme"),
        ("AGENTS.md", "instructions for coding agents"),
        ("pyproject.toml", "Python project config (pyproject)"),
        ("Dockerfile", "container image build (Docker)"),
        ("Makefile", "build tasks (make)"),
        (".github/workflows/ci.yml", "CI workflow (GitHub Actions)"),  # repository-level
        ("CONTRIBUTING.md", "contributing guide"),
        # below the top, a kind's files in bigger directories first (tool/ holds 5 files)
        ("tool/__main__.py", "entry point: python -m tool"),
        ("tool/cli.py", "command-line interface"),
        ("bin/run", "executable script"),
        ("gen/gen.go", "Go program entry (func main)"),
        ("tool/__init__.py", "package root: tool"),
        ("docs/README.rst", "readme"),
        ("web/index.ts", "module index"),
        ("scripts/release.py", "script (runs under __main__)"),
        ("crate/src/lib.rs", "Rust library crate root"),
        ("crate/src/main.rs", "Rust binary entry (fn main)"),
        ("cmd/srv/main.go", "Go program entry (func main)"),
        ("tests/test_a.py", "script (runs under __main__)"),  # test code sorts last
    ]
    cited = refs(result)
    assert "tool/__init__.py" not in cited  # empty: listed, but nothing to quote
    assert cited == {
        ".github/workflows/ci.yml": ".github/workflows/ci.yml:3 jobs:",
        "README.md": "README.md:2 # Tool",
        "AGENTS.md": "AGENTS.md:1 Run the tests first.",
        "pyproject.toml": "pyproject.toml:1 [build-system]",
        "Dockerfile": "Dockerfile:2 FROM python:3.11",
        "Makefile": "Makefile:3 test:",
        "CONTRIBUTING.md": "CONTRIBUTING.md:1 # Contributing",
        "bin/run": "bin/run:1 #!/bin/sh",
        "tool/__main__.py": "tool/__main__.py:3 if __name__ == '__main__':",
        "tool/cli.py": "tool/cli.py:1 import argparse",
        "docs/README.rst": "docs/README.rst:2 Guide",
        "web/index.ts": "web/index.ts:1 export * from './a';",
        "scripts/release.py": 'scripts/release.py:3 if __name__ == "__main__":',
        "cmd/srv/main.go": "cmd/srv/main.go:3 func main() {}",
        "crate/src/lib.rs": "crate/src/lib.rs:1 //! The crate.",
        "crate/src/main.rs": "crate/src/main.rs:3 fn main() {}",
        "gen/gen.go": "gen/gen.go:3 func main() {",
        "tests/test_a.py": "tests/test_a.py:1 if __name__ == '__main__':",
    }


def test_a_js_app_main_or_server_file_is_an_entry_point_only_where_it_starts_something(
    tmp_path: Path,
) -> None:
    """`app.js`, `main.ts`, `server.js` by name alone are modules like any other: a
    browser client's `app.js` exporting functions is no entry point. One that listens,
    serves, mounts or renders, runs as a script or calls its `main` is, cited at that line."""
    root = make_tree(
        tmp_path,
        {
            "client/app.js": "import { f } from './f.js';\n\nexport function go() {\n  f();\n}\n",
            "api/server.js": (
                "const express = require('express');\nconst app = express();\n\n"
                "app.get('/', (req, res) => res.send('ok'));\napp.listen(3000);\n"
            ),
            "ui/main.tsx": (
                "import { createRoot } from 'react-dom/client';\n\n"
                "createRoot(document.getElementById('root')!).render(<App />);\n"
            ),
            "tool/main.ts": "async function main() {\n  return 0;\n}\n\nawait main();\n",
            "lib/main.js": "class View {\n  render() {\n    return 1;\n  }\n}\n",
        },
    )
    result, output = explore(root)
    assert_clean(result)
    assert sorted(roles(output)) == [
        ("api/server.js", "application entry point"),
        ("tool/main.ts", "application entry point"),
        ("ui/main.tsx", "application entry point"),
    ]
    assert refs(result) == {
        "api/server.js": "api/server.js:2 const app = express();",
        "tool/main.ts": "tool/main.ts:5 await main();",
        "ui/main.tsx": (
            "ui/main.tsx:3 createRoot(document.getElementById('root')!).render(<App />);"
        ),
    }


def test_a_workspaces_biggest_crate_and_the_top_readme_come_first(tmp_path: Path) -> None:
    """tokio: the workspace's own crate (tokio/, the biggest) lists its manifest before its
    benches' and examples', and a readme kept beside the CI's files is no top-level one."""
    files = {
        "README.md": "# Tokio\n",
        "Cargo.toml": "[workspace]\nmembers = []\n",
        ".github/buildomat/README.md": "# Buildomat\n",
        ".github/workflows/ci.yml": "jobs:\n  test: {}\n",
        "benches/Cargo.toml": "[package]\nname = 'benches'\n",
        "benches/b.rs": "fn b() {}\n",
        "examples/Cargo.toml": "[package]\nname = 'examples'\n",
        "tokio/Cargo.toml": "[package]\nname = 'tokio'\n",
        **{f"tokio/src/m{i}.rs": "pub fn f() {}\n" for i in range(5)},
    }
    result, output = explore(make_tree(tmp_path, files))
    assert_clean(result)
    assert roles(output) == [
        ("README.md", "readme"),
        ("Cargo.toml", "Rust crate manifest (Cargo)"),
        (".github/workflows/ci.yml", "CI workflow (GitHub Actions)"),
        ("tokio/Cargo.toml", "Rust crate manifest (Cargo)"),
        ("benches/Cargo.toml", "Rust crate manifest (Cargo)"),
        ("examples/Cargo.toml", "Rust crate manifest (Cargo)"),
        (".github/buildomat/README.md", "readme"),
    ]


def test_directory_scope_names_packages_from_the_root(tmp_path: Path) -> None:
    root = make_tree(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/core/__init__.py": '"""Core."""\n',
            "app/core/models.py": "x = 1\n",
            "app/core/db/__init__.py": "\n",
        },
    )
    result, output = explore(root, "app/core")
    assert_clean(result)
    assert shape(output["tree"]) == (
        "app/core",
        3,
        0,
        [
            ("app/core/db", 1, 0, ["app/core/db/__init__.py"]),
            "app/core/__init__.py",
            "app/core/models.py",
        ],
    )
    assert roles(output) == [("app/core/__init__.py", "package root: app.core")]
    assert result.gaps == [
        "no README in scope",
        "no entry point found by convention (main files, __main__ guards, func main, bin/)",
    ]


def test_single_file_scope(tmp_path: Path) -> None:
    root = make_tree(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/__main__.py": "print('hi')\n", "pkg/other.py": "x = 1\n"},
    )
    result, output = explore(root, "pkg/__main__.py")
    assert_clean(result)
    assert output["tree"] == TreeNode(path="pkg/__main__.py", kind="file")
    assert roles(output) == [("pkg/__main__.py", "entry point: python -m pkg")]
    assert refs(result) == {"pkg/__main__.py": "pkg/__main__.py:1 print('hi')"}
    assert result.gaps == []


def test_empty_scope_fails_understood(tmp_path: Path) -> None:
    result, output = explore(make_tree(tmp_path, {"a.txt": "x\n"}), "missing")
    assert [(g.name, g.passed, g.ran) for g in result.gates] == [
        ("understood", False, True),
        ("evidence", False, False),
        ("complete", False, False),
    ]
    assert output == {}
    assert result.gaps == ["no indexable files under missing"]


def test_spec_and_split(tmp_path: Path) -> None:
    ctx = Context(root=make_tree(tmp_path, {"a/x.txt": "x\n"}), scope="a")
    track = tree_track(ctx)
    assert track.spec.name == "tree" and track.spec.focus == "a"
    assert len(track.spec.gates) == 3
    assert track.make is tree_track
    assert track.split is not None and track.split(ctx) == []  # far too small to split


def test_single_file_without_a_role(tmp_path: Path) -> None:
    result, output = explore(make_tree(tmp_path, {"src/util.py": "\nx = 1\n"}), "src/util.py")
    assert_clean(result)
    assert output["tree"] == TreeNode(path="src/util.py", kind="file")
    assert output["key_files"] == []
    assert result.gaps == ["no key files by convention in scope"]
    assert [(f.claim, f.citations[0].ref) for f in result.findings] == [
        ("the scope is the single file src/util.py", "src/util.py:2")
    ]


def test_source_packages_come_before_tests_docs_and_examples(tmp_path: Path) -> None:
    from dowse.explore.records import ExploreResult
    from dowse.explore.render import fit_budget, render_markdown

    files = {f"docs/page{i:02}.rst": "Page\n====\n" for i in range(30)}
    files |= {f"examples/demo{i}/app.py": "x = 1\n" for i in range(3)}
    files |= {f"tests/test_{i}.py": "def test():\n    pass\n" for i in range(12)}
    files |= {f"src/pkg/mod{i}.py": "x = 1\n" for i in range(8)}
    files |= {".github/workflows/ci.yml": "jobs:\n", "README.md": "# pkg\n"}
    make_tree(tmp_path, files)
    _, output = explore(tmp_path)
    tree = output["tree"]
    # by rank first (source, then tests and hidden directories, then docs and examples),
    # then by size
    assert [c.path for c in tree.children] == [
        "src",
        "tests",
        ".github",
        "docs",
        "examples",
        "README.md",
    ]
    result = ExploreResult(path=".", root=str(tmp_path), depth="shallow", tree=tree)
    # whatever the budget, a docs page is shown only after the whole source package
    shown = []
    for budget in range(100, 400, 5):
        text = render_markdown(fit_budget(result, budget))
        modules = sum(f"mod{i}.py" in text for i in range(8))
        assert "page00.rst" not in text or modules == 8, budget
        shown.append((modules, "page00.rst" in text))
    assert (8, False) in shown and (8, True) in shown and shown[0][0] < 8


def test_release_note_fragments_rank_with_the_docs(tmp_path: Path) -> None:
    # pytest: changelog/ holds 52 towncrier fragments; they come after source and tests.
    files = {f"changelog/{1000 + i}.bugfix.rst": "Fixed.\n" for i in range(30)}
    files |= {f"src/pkg/mod{i}.py": "x = 1\n" for i in range(3)}
    files |= {"tests/test_a.py": "def test():\n    pass\n", "README.md": "# pkg\n"}
    make_tree(tmp_path, files)
    _, output = explore(tmp_path)
    assert [c.path for c in output["tree"].children] == ["src", "tests", "changelog", "README.md"]


def _function(name: str, body_lines: int, indent: str = "    ") -> str:
    body = "".join(f"{indent}total += {i};\n" for i in range(body_lines))
    return f"function {name}(total: number): number {{\n{body}{indent}return total;\n}}\n"


def test_the_files_with_the_most_behaviour_are_core_modules(tmp_path: Path) -> None:
    """ky: its core (the `Ky` class, most of its code) was named nowhere in the report; its
    key files were its configs. The biggest file on disk, a file of documented types, does
    nothing; a Rust file whose bulk is its tests module is ranked by the code it tests."""
    docs = "".join(
        f"\t/** Option {i}, documented\n\tat length. */\n\topt{i}?: string;\n" for i in range(200)
    )
    asserts = "        assert!(true);\n" * 8
    tests_mod = "".join(f"    #[test]\n    fn t{i}() {{\n{asserts}    }}\n" for i in range(30))
    files = {
        "package.json": '{\n  "name": "ky"\n}\n',
        "source/types/options.ts": f"export type Options = {{\n{docs}}};\n",
        "source/core/Ky.ts": "export class Ky {\n"
        + "".join(_function(f"m{i}", 40).replace("function ", "\t") for i in range(4))
        + "}\n",
        "source/utils/merge.ts": _function("merge", 120),
        "source/utils/small.ts": _function("small", 30),
        "test/ky.test.ts": _function("testEverything", 400),
        "src/vscreen.rs": "pub fn parse(x: u32) -> u32 {\n"
        + "    let y = x + 1;\n" * 105
        + "    y\n}\n#[cfg(test)]\nmod tests {\n"
        + tests_mod
        + "}\n",
    }
    result, output = explore(make_tree(tmp_path, files))
    assert_clean(result)
    core = [(p, r) for p, r in roles(output) if r.startswith("core module")]
    assert [p for p, _ in core] == ["source/core/Ky.ts", "source/utils/merge.ts", "src/vscreen.rs"]
    assert core[0][1] == (
        "core module: 174 lines, 172 of them in functions; its largest definition `Ky` (174 lines)"
    )
    # The tests beside the code are not its behaviour, nor its largest definition.
    assert core[2][1].startswith("core module: 441 lines, 108 of them in functions;")
    assert core[2][1].endswith("its largest definition `parse` (108 lines)")
    # Repository-level: after the manifest, cited at the largest definition.
    assert [p for p, _ in roles(output)][:2] == ["package.json", "source/core/Ky.ts"]
    assert refs(result)["source/core/Ky.ts"].startswith("source/core/Ky.ts:1 ")
