"""References: extracted per language, kept per file, resolved at query time, and read by
`dowse symbol --callers/--callees`, the MCP `references` tool and the loop's REFINE.

The expected references were written by hand from ``fixtures/references/`` (one small
file per language: `caller` calls `helper` twice and `store.save` once), not copied
from the extractor's output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_tree

from dowse.errors import IndexVersionMismatch
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.parse import parse_source
from dowse.indexer.store import FORMAT_VERSION, MANIFEST, Store
from dowse.languages import CODE_LANGUAGES, language_for
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.loop import LoopConfig, run_loop
from dowse.retrieval.references import DEFAULT_KINDS, find_references

REFERENCES = Path(__file__).resolve().parent.parent / "fixtures" / "references"

# file -> (the calling definition, [(name, line, qualifier)] of its calls)
CALLS: dict[str, tuple[str, list[tuple[str, int, str]]]] = {
    "refs.py": ("caller", [("helper", 9, ""), ("save", 9, "store"), ("helper", 10, "")]),
    "refs.js": ("caller", [("helper", 8, ""), ("save", 8, "store"), ("Store", 9, "")]),
    "refs.ts": ("caller", [("helper", 8, ""), ("save", 8, "store"), ("helper", 9, "")]),
    "refs.tsx": ("Caller", [("Badge", 8, ""), ("helper", 8, "")]),
    "refs.go": ("caller", [("Save", 8, "store"), ("helper", 8, ""), ("helper", 9, "")]),
    "refs.rs": ("caller", [("helper", 8, ""), ("save", 8, "store"), ("helper", 9, "")]),
    "refs.c": ("caller", [("helper", 8, ""), ("store_save", 8, ""), ("helper", 9, "")]),
    "refs.cpp": ("caller", [("helper", 8, ""), ("save", 8, "store"), ("helper", 9, "util")]),
    "Refs.java": ("Refs.caller", [("helper", 9, ""), ("save", 9, "store"), ("helper", 10, "")]),
    "Refs.cs": ("Refs.Caller", [("Helper", 9, ""), ("Save", 9, "store"), ("Helper", 10, "")]),
    "refs.kt": ("caller", [("helper", 8, ""), ("save", 8, "store"), ("helper", 9, "")]),
    "refs.swift": ("caller", [("helper", 8, ""), ("save", 8, "store"), ("helper", 9, "")]),
    "refs.scala": (
        "Refs.caller",
        [("helper", 9, ""), ("save", 9, "store"), ("helper", 10, "")],
    ),
    "refs.rb": ("caller", [("helper", 8, ""), ("save", 8, "store"), ("helper", 9, "")]),
    "refs.php": ("caller", [("helper", 9, ""), ("save", 9, "$store"), ("helper", 10, "")]),
    "refs.sh": ("caller", [("helper", 9, ""), ("store_save", 9, ""), ("helper", 10, "")]),
}
# file -> the type the caller's parameter names, and its line (languages with types)
TYPES = {
    "refs.py": ("Store", 8),
    "refs.ts": ("Store", 7),
    "refs.tsx": ("Props", 7),
    "refs.go": ("Store", 7),
    "refs.rs": ("Store", 7),
    "refs.c": ("Store", 7),
    "refs.cpp": ("Store", 7),
    "Refs.java": ("Store", 8),
    "Refs.cs": ("Store", 8),
    "refs.kt": ("Store", 7),
    "refs.swift": ("Store", 7),
    "refs.scala": ("Store", 8),
    "refs.php": ("Store", 8),
}


def test_every_language_has_a_fixture():
    assert {language_for(name) for name in CALLS} == set(CODE_LANGUAGES)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_calls_and_types_are_extracted_in_every_language(name):
    path = REFERENCES / name
    parsed = parse_source(name, path.read_bytes(), language_for(name) or "")
    assert parsed.tree is not None, parsed.note
    caller, calls = CALLS[name]
    (owner,) = [s for s in parsed.symbols if s.qualified_name == caller]
    found = {
        (r.name, r.line, r.qualifier)
        for r in parsed.references
        if r.kind == "call" and r.from_id == owner.id
    }
    assert set(calls) <= found
    assert all(r.from_name == caller for r in parsed.references if r.from_id == owner.id)
    if name in TYPES:
        type_name, line = TYPES[name]
        assert (type_name, line, owner.id) in {
            (r.name, r.line, r.from_id) for r in parsed.references if r.kind == "type"
        }
    # `helper`'s own name is a definition, never a reference to itself.
    (helper,) = [s for s in parsed.symbols if s.name.lower() == "helper"]
    assert not [r for r in parsed.references if r.line == helper.name_line and r.name == "helper"]


def test_imports_are_references_at_file_level():
    parsed = parse_source("refs.py", (REFERENCES / "refs.py").read_bytes(), "python")
    (imported,) = [r for r in parsed.references if r.kind == "import"]
    assert (imported.name, imported.qualifier, imported.line) == ("Store", "shop.store", 1)
    assert imported.from_id is None and imported.from_name == ""


# -- the index ----------------------------------------------------------------------------

REPO = {
    "pkg/__init__.py": "",
    # Two calls on one line are one reference (line 10).
    "pkg/core.py": (
        "class Path:\n"  # 1
        "    pass\n"
        "\n"
        "\n"
        "def normalise(text):\n"  # 5
        "    return text.strip()\n"
        "\n"
        "\n"
        "def render(text):\n"  # 9
        "    return normalise(text) + normalise(text)\n"
    ),
    "pkg/app.py": (
        "from pathlib import Path\n"  # 1
        "\n"
        "from pkg.core import normalise\n"
        "\n"
        "\n"
        "def main(arg):\n"  # 6
        "    where = Path(arg)\n"
        "    return normalise(str(where))\n"
    ),
    "pkg/cli.py": (
        "from pkg import core\n"  # 1
        "\n"
        "\n"
        "def run(arg):\n"  # 4
        "    return core.render(arg)\n"
    ),
}


@pytest.fixture
def repo(tmp_path, fake_embedder):
    root = make_tree(tmp_path / "repo", REPO)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    return root


def _callers(root: Path, name: str) -> list[tuple[str, str, list[int], str]]:
    refs = find_references(Store.open(root / ".dowse"), name, callees=False)
    return [
        (c.path, c.definition.qualified_name if c.definition else "", c.lines, c.via)
        for c in refs.callers
    ]


def test_callers_resolve_through_imports_and_the_same_file(repo):
    assert _callers(repo, "normalise") == [
        ("pkg/core.py", "render", [10], "same-file"),
        ("pkg/app.py", "main", [8], "import"),
    ]
    # `from pkg import core` then `core.render(...)`: the module's file, by import.
    assert _callers(repo, "render") == [("pkg/cli.py", "run", [5], "import")]
    # `Path` in app.py is pathlib's: not a caller of pkg/core.py's class.
    assert _callers(repo, "Path") == []


def test_callees_are_the_definitions_of_the_index(repo):
    refs = find_references(Store.open(repo / ".dowse"), "main", callers=False)
    # Path is pathlib's, str a builtin: only normalise is defined here.
    assert [(c.definition.qualified_name, c.lines, c.via) for c in refs.callees] == [
        ("normalise", [8], "import")
    ]


def test_refs_of_an_edited_file_are_replaced_and_of_a_deleted_one_dropped(repo, fake_embedder):
    config = IndexConfig(embed=False)
    (repo / "pkg/app.py").write_text(
        "from pkg.core import normalise, render\n\n\ndef main(arg):\n    return render(arg)\n"
    )
    stats = build_index(repo, config=config, embedder=fake_embedder)
    assert stats.parsed == 1
    assert _callers(repo, "normalise") == [("pkg/core.py", "render", [10], "same-file")]
    assert ("pkg/app.py", "main", [5], "import") in _callers(repo, "render")
    (repo / "pkg/cli.py").unlink()
    build_index(repo, config=config, embedder=fake_embedder)
    assert _callers(repo, "render") == [("pkg/app.py", "main", [5], "import")]
    rows = Store.open(repo / ".dowse").rows("refs", ["path"])
    assert {r["path"] for r in rows} == {"pkg/core.py", "pkg/app.py"}


def test_an_index_from_before_the_refs_table_reads_and_fills_it(repo, fake_embedder):
    index_dir = repo / ".dowse"
    manifest = json.loads((index_dir / MANIFEST).read_text())
    del manifest["versions"]["refs"]
    (index_dir / MANIFEST).write_text(json.dumps(manifest))
    store = Store.open(index_dir)
    store.verify()
    refs = find_references(store, "normalise")
    assert not refs.indexed and refs.definitions and refs.callers == []

    stats = build_index(repo, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert stats.parsed == len(REPO)  # each file once, for its references
    assert len(_callers(repo, "normalise")) == 2


ALIASED = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def normalise(text):\n    return text.strip()\n",
    "pkg/app.py": (
        "import pkg.core as c\n"  # 1
        "from pkg.core import normalise as norm\n"
        "from pkg import core as k\n"
        "\n"
        "\n"
        "def main(arg):\n"  # 6
        "    first = norm(arg)\n"
        "    second = c.normalise(first)\n"
        "    return k.normalise(second)\n"
    ),
}


@pytest.mark.parametrize(
    ("language", "name", "source", "expected"),
    [
        (
            "python",
            "a.py",
            b"import numpy as np\nfrom x import y as z\nz(np.array(1))\n",
            {("y", ""), ("array", "numpy")},
        ),
        ("javascript", "a.js", b"import { a as b } from './x'\nb()\n", {("a", "")}),
        (
            "go",
            "a.go",
            b'package m\nimport h "net/http"\nfunc f() { h.Get() }\n',
            {("Get", "http")},
        ),
        (
            "rust",
            "a.rs",
            b"use a::b as c;\nuse x::{y as z};\nfn f() { c::g(); z(); }\n",
            {("g", "a::b"), ("y", "")},
        ),
    ],
)
def test_an_import_alias_is_stored_as_what_it_stands_for(language, name, source, expected):
    parsed = parse_source(name, source, language)
    calls = {(r.name, r.qualifier) for r in parsed.references if r.kind == "call"}
    assert calls == expected


def test_callers_follow_import_aliases(tmp_path, fake_embedder):
    root = make_tree(tmp_path / "repo", ALIASED)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    # `norm(...)` (a name aliased), `c.normalise(...)` (a module aliased) and
    # `k.normalise(...)` (a module imported from its package, aliased).
    assert _callers(root, "normalise") == [("pkg/app.py", "main", [7, 8, 9], "import")]


def test_an_index_from_before_aliases_is_never_read_and_indexing_builds_it_anew(
    tmp_path, fake_embedder
):
    root = make_tree(tmp_path / "repo", ALIASED)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    manifest = root / ".dowse" / MANIFEST
    data = json.loads(manifest.read_text())
    data["format"] = FORMAT_VERSION - 1  # written before references followed aliases
    manifest.write_text(json.dumps(data))
    with pytest.raises(IndexVersionMismatch, match="--rebuild"):
        Store.open(root / ".dowse")  # never read as if its references followed aliases
    # `dowse index` builds the root's own outdated index anew, saying so.
    stats = build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert stats.parsed == len(ALIASED)  # every file parsed again, not only the changed
    assert any("format" in n and "building it anew" in n for n in stats.notes)
    assert _callers(root, "normalise") == [("pkg/app.py", "main", [7, 8, 9], "import")]
    assert Store.read_manifest(root / ".dowse").format == FORMAT_VERSION
    # An outdated index elsewhere may be another tree's: only --rebuild replaces it.
    elsewhere = tmp_path / "elsewhere"
    build_index(root, index_dir=elsewhere, config=IndexConfig(embed=False), embedder=fake_embedder)
    data = json.loads((elsewhere / MANIFEST).read_text())
    data["format"] = FORMAT_VERSION - 1
    (elsewhere / MANIFEST).write_text(json.dumps(data))
    with pytest.raises(IndexVersionMismatch, match="--rebuild"):
        build_index(
            root, index_dir=elsewhere, config=IndexConfig(embed=False), embedder=fake_embedder
        )
    config = IndexConfig(embed=False, rebuild=True)
    stats = build_index(root, index_dir=elsewhere, config=config, embedder=fake_embedder)
    assert stats.parsed == len(ALIASED)


# -- the command line and the MCP tool ----------------------------------------------------


@pytest.fixture
def indexed(tmp_path, fake_embedder, indexed_examples):
    """The example, indexed lexically (the session's build, copied: conftest)."""
    return indexed_examples.copy(tmp_path / "example", IndexConfig(embed=False))


def test_symbol_callers_and_callees_print_path_line(indexed, run):
    out = run("symbol", "validate_token", "--path", str(indexed), "--callers").output
    assert out == (
        "callers of validate_token (shop/auth/tokens.py:30-42): 3\n"
        "  shop/api/routes.py:22  in authenticate  (call, import)\n"
        "  tests/test_tokens.py:8  in test_round_trip  (call, import)\n"
        "  tests/test_tokens.py:14  in test_expired_token_is_rejected  (call, import)\n"
    )
    out = run("symbol", "validate_token", "--path", str(indexed), "--callees").output
    assert out == (
        "validate_token (shop/auth/tokens.py:30-42) references:\n"
        "  shop/auth/tokens.py:14-15  class TokenError  (line 35, 37, 41; same-file)\n"
        "  shop/auth/tokens.py:18-20  function _sign  (line 36; same-file)\n"
    )
    data = json.loads(
        run("symbol", "validate_token", "--path", str(indexed), "--callers", "--json").output
    )
    assert [(c["path"], c["lines"], c["via"]) for c in data["callers"]][0] == (
        "shop/api/routes.py",
        [22],
        "import",
    )
    assert data["callers"][0]["definition"]["qualified_name"] == "authenticate"
    assert data["indexed"] and data["callees"] == []


def test_symbol_callers_of_an_unknown_name_is_an_error(indexed, run):
    result = run("symbol", "no_such_thing", "--path", str(indexed), "--callers", code=1)
    assert result.output == "Error: no symbol named exactly 'no_such_thing'\n"


def test_mcp_references_fit_their_budget(indexed):
    from dowse.server.records import ReferencesRequest
    from dowse.server.workspace import ServedRoot, Workspace

    workspace = Workspace([ServedRoot(indexed)], embed=False)
    answer = workspace.references(ReferencesRequest(name="validate_token"))
    assert [(c.path, c.lines) for c in answer.callers][0] == ("shop/api/routes.py", [22])
    assert [c.definition.qualified_name for c in answer.callees] == ["TokenError", "_sign"]
    assert answer.indexed and answer.budget.cut == answer.budget.omitted == 0
    small = workspace.references(
        ReferencesRequest(name="validate_token", direction="callers", max_tokens=256)
    )
    assert small.budget.tokens <= 256 and small.callees == []
    assert small.budget.cut + small.budget.omitted > 0


# -- the retrieval loop --------------------------------------------------------------------

LOOP_REPO = {
    "core/quota.py": (
        '"""Upload rate limits."""\n\n\n'
        "def throttle_window(user: str) -> int:\n"
        '    """How many uploads a user may make per minute: the upload rate limit."""\n'
        '    if user.startswith("admin"):\n'
        "        return 600\n"
        "    return 60\n"
    ),
    # No word of the question: only the reference leads here.
    "app/handlers.py": (
        "from core.quota import throttle_window\n\n\n"
        "def handle_post(request: dict) -> int:\n"
        '    return throttle_window(request["who"])\n'
    ),
    "app/other.py": "def unrelated() -> int:\n    return 1\n",
}


def test_refine_follows_the_caller_of_a_high_relevance_hit(tmp_path, fake_embedder):
    root = make_tree(tmp_path / "loop", LOOP_REPO)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    searcher = HybridSearcher(Store.open(root / ".dowse"), lambda: fake_embedder)
    question = "how many uploads may a user make per minute: the upload rate limit"
    result = run_loop(searcher, question, config=LoopConfig(stop_hits=10))
    assert result.trace[0].candidates[0][0] == "core/quota.py:1-8"
    assert result.trace[0].candidates[0][1] >= 0.7
    assert result.trace[1].followed == ["caller of throttle_window: app/handlers.py:5"]
    (caller,) = [it for it in result.items if it.hit.path == "app/handlers.py"]
    assert caller.hit.signals["caller"] == 1.0
    assert "calls or is called by relevant code" in caller.reason
    # Followed once: a later cycle does not add it again.
    assert all(not c.followed for c in result.trace[2:])


def test_refine_follows_nothing_in_an_index_without_references(tmp_path, fake_embedder):
    root = make_tree(tmp_path / "loop", LOOP_REPO)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    manifest = json.loads((root / ".dowse" / MANIFEST).read_text())
    del manifest["versions"]["refs"]
    (root / ".dowse" / MANIFEST).write_text(json.dumps(manifest))
    searcher = HybridSearcher(Store.open(root / ".dowse"), lambda: fake_embedder)
    question = "how many uploads may a user make per minute: the upload rate limit"
    result = run_loop(searcher, question, config=LoopConfig(stop_hits=10))
    assert all(not c.followed for c in result.trace)


def test_a_call_under_a_splat_is_a_call():
    source = b"def f(text):\n    return [*analyze(text).identifiers]\n"
    parsed = parse_source("x.py", source, "python")
    assert ("analyze", "call", 2) in {(r.name, r.kind, r.line) for r in parsed.references}


def test_calls_inside_a_rust_macro_are_calls_and_a_macro_is_not_a_function():
    source = (
        b"fn f() {\n"
        b'    assert_eq!(parse(&read("a")), 1);\n'  # 2
        b"    check!(builder.escape(x), y);\n"  # 3
        b"    let v = vec![a[0], b];\n"  # 4: `a[0]` indexes, it calls nothing
        b"}\n"
    )
    refs = {
        (r.line, r.name, r.kind, r.qualifier)
        for r in parse_source("x.rs", source, "rust").references
    }
    assert {
        (2, "parse", "call", ""),
        (2, "read", "call", ""),
        (2, "assert_eq", "macro", ""),
    } <= refs
    # A method call in a token tree keeps its receiver, once.
    assert (3, "escape", "call", "builder") in refs and (3, "escape", "call", "") not in refs
    assert not any(name == "a" for _, name, _, _ in refs)


RUST_REPO = {
    "crates/cli/src/lib.rs": "pub fn is_tty() -> bool {\n    true\n}\n",
    "crates/glob/src/lib.rs": (
        "macro_rules! required {\n"  # 1
        "    ($x:expr) => { $x };\n"
        "}\n"
        "fn required(x: u8) -> u8 {\n"  # 4
        "    x\n"
        "}\n"
        "fn user() -> u8 {\n"  # 7
        "    let tty = grep::cli::is_tty();\n"  # 8
        "    required!(1) + required(2)\n"  # 9
        "}\n"
    ),
}


def test_rust_paths_and_macros_resolve_to_what_they_name(tmp_path, fake_embedder):
    root = make_tree(tmp_path / "rs", RUST_REPO)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    # `grep::cli::is_tty()`: the path names the crate directory `cli`.
    assert _callers(root, "is_tty") == [("crates/glob/src/lib.rs", "user", [8], "import")]
    refs = find_references(Store.open(root / ".dowse"), "required", callees=False)
    by_kind = {
        d.kind: [(c.lines, c.kinds) for c in refs.callers if c.target == d.id]
        for d in refs.definitions
    }
    # `required!(1)` invokes the macro, `required(2)` calls the function: never the other.
    assert by_kind == {"macro": [([9], ["macro"])], "function": [([9], ["call"])]}


PY_PACKAGE = {
    "src/pkg/__init__.py": "from .helpers import shout as shout\n",
    "src/pkg/helpers.py": "def shout(text):\n    return text.upper()\n",
    "src/pkg/utils.py": "def rewind(body):\n    return body\n",
    "tests/test_pkg.py": (
        "import pkg\n"  # 1
        "\n"
        "\n"
        "def test_it():\n"  # 4
        "    pkg.shout('a')\n"  # 5: re-exported by the package
        "    pkg.utils.rewind(b'')\n"  # 6: the module the path names
        "    other.rewind(b'')\n"  # 7: another object's method, not ours
    ),
}


def test_python_calls_through_an_imported_package_resolve(tmp_path, fake_embedder):
    root = make_tree(tmp_path / "py", PY_PACKAGE)
    (root / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert _callers(root, "shout") == [("tests/test_pkg.py", "test_it", [5], "import")]
    assert _callers(root, "rewind") == [("tests/test_pkg.py", "test_it", [6], "import")]


def test_a_call_through_a_receiver_is_a_method_of_the_file_never_its_free_function(
    tmp_path, fake_embedder
):
    # tokio's future/block_on.rs: `park.block_on(f)` inside `fn block_on` is
    # CachedParkThread's method, not the file's other `fn block_on`.
    files = {
        "src/block_on.rs": (
            "pub fn block_on(f: u8) -> u8 {\n"  # 1
            "    let mut park = Park::new();\n"
            "    park.block_on(f)\n"  # 3: a receiver's method
            "}\n"
            "\n"
            "pub fn run(f: u8) -> u8 {\n"  # 6
            "    block_on(f)\n"  # 7: the free function
            "}\n"
        ),
        "app/store.py": (
            "class Store:\n"  # 1
            "    def save(self):\n"
            "        return 1\n"
            "\n"
            "\n"
            "def save():\n"  # 6
            "    return 0\n"
            "\n"
            "\n"
            "def main(store):\n"  # 10
            "    store.save()\n"  # 11: the method, not the module's function
            "    save()\n"  # 12: the function
        ),
    }
    # pytest's legacypath.py imports `MonkeyPatch` from monkeypatch.py, which defines a
    # free `resolve`: `path.resolve()` is pathlib's method, not that function.
    files["app/mp.py"] = "class MonkeyPatch:\n    pass\n\n\ndef resolve(name):\n    return name\n"
    files["app/legacy.py"] = (
        "from app.mp import MonkeyPatch\n\n\ndef mktemp(path):\n    return path.resolve()\n"
    )
    root = make_tree(tmp_path / "recv", files)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    refs = find_references(Store.open(root / ".dowse"), "block_on", callees=False)
    assert [
        (c.definition.qualified_name if c.definition else "", c.lines) for c in refs.callers
    ] == [("run", [7])]
    refs = find_references(Store.open(root / ".dowse"), "save", callees=False)
    by_target = sorted((c.target.split("#", 1)[-1], c.lines) for c in refs.callers)
    assert by_target == [("Store.save@2", [11]), ("save@6", [12])]
    assert find_references(Store.open(root / ".dowse"), "resolve", callees=False).callers == []


class _Files:
    """Look-ups holding only a file list (what `_Reads.files_of_module` reads)."""

    def __init__(self, paths: list[str]) -> None:
        self._stats = {p: (0, 0) for p in paths}

    def file_stats(self) -> dict[str, tuple[int, int]]:
        return self._stats


def test_the_files_a_module_names_are_those_the_dotted_forms_end_with():
    from dowse.retrieval.references import _names_file, _Reads

    paths = [
        "a/b.py",
        "b.py",
        "a/b/__init__.py",
        "x/a/b.py",
        "src/a/b/c.py",
        "c.py",
        "__init__.py",
        ".py",
        "a/b..py",
        "a/b.c.py",
        "ab.py",
        "a/bb.py",
    ]
    reads = _Reads(None, _Files(paths))  # type: ignore[arg-type]
    for module in [
        "a.b",
        ".b",
        "..a.b",
        "b",
        "a.b.",
        "x.a.b",
        "a.b.c",
        "a",
        "",
        ".",
        "bb",
        "a.b.c.d",
    ]:
        expected = [p for p in paths if _names_file(module, "", p)]
        assert reads.files_of_module(module) == expected, module
    # `a.b` names the files that module would be, not `x/a/b.py` (`x.a.b`); `.py` (the
    # empty stem) and `a/b..py` (`a.b.`) through the form `a.b.` the lookup also tries.
    assert reads.files_of_module("a.b") == ["a/b.py", "b.py", "a/b/__init__.py", ".py", "a/b..py"]


MODULE_IMPORTS = {
    "src/pkg/__init__.py": (
        "from pkg import trunc\n"  # 1: the package importing its own module
        "\n"
        "\n"
        "def explain(lines):\n"  # 4
        "    return trunc.cut(lines)\n"  # 5
    ),
    "src/pkg/trunc.py": "def cut(lines):\n    return lines[:1]\n",
    "src/pkg/sub/__init__.py": "",
    "src/pkg/sub/fmt.py": "def cut(text):\n    return text\n",
    "src/pkg/sub/use.py": (
        "from . import fmt\n"  # 1: relative, from the module's own package
        "from pkg import trunc\n"  # 2
        "\n"
        "\n"
        "def show(text):\n"  # 5
        "    fmt.cut(text)\n"  # 6: fmt.py's
        "    trunc.cut(text)\n"  # 7: trunc.py's
        "    other.cut(text)\n"  # 8: an object's method, neither
    ),
}


def test_a_module_imported_from_its_package_resolves_its_calls(tmp_path, fake_embedder):
    # pytest's assertion/__init__.py: `from _pytest.assertion import truncate`, then
    # `truncate.materialize_with_truncation(...)`; the import names the importer itself.
    root = make_tree(tmp_path / "mod", MODULE_IMPORTS)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    refs = find_references(Store.open(root / ".dowse"), "cut", callees=False)
    by_target = sorted((c.target.split("#", 1)[0], c.path, c.lines, c.via) for c in refs.callers)
    assert by_target == [
        ("src/pkg/sub/fmt.py", "src/pkg/sub/use.py", [6], "import"),
        ("src/pkg/trunc.py", "src/pkg/__init__.py", [5], "import"),
        ("src/pkg/trunc.py", "src/pkg/sub/use.py", [7], "import"),
    ]


def test_a_runtime_method_name_through_a_receiver_means_the_class_it_is_named_after(
    tmp_path, fake_embedder
):
    # pytest's config/__init__.py imports `Cache` and `Stash` (each with a `get`);
    # `self._parser._ini_aliases.get(name, name)` is a dict's `get`, not theirs.
    files = {
        "pkg/__init__.py": "",
        "pkg/cache.py": "class Cache:\n    def get(self, key):\n        return key\n",
        "pkg/cfg.py": (
            "from pkg.cache import Cache\n"  # 1
            "\n"
            "\n"
            "class Config:\n"  # 4
            "    def getini(self, name):\n"  # 5
            "        alias = self._aliases.get(name, name)\n"  # 6: a dict's
            "        return self._cache.get(alias)\n"  # 7: the Cache's
            "\n"
            "\n"
            "def warm(key):\n"  # 10
            "    c = Cache()\n"
            "    return c.get(key)\n"  # 12: the calling code names the class
            "\n"
            "\n"
            "def lookup(env, key):\n"  # 15
            "    return env.get(key)\n"  # 16: nothing says what env is
        ),
    }
    root = make_tree(tmp_path / "recv", files)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert _callers(root, "get") == [
        ("pkg/cfg.py", "Config.getini", [7], "import"),
        ("pkg/cfg.py", "warm", [12], "import"),
    ]


def test_a_rust_use_of_an_item_brings_that_item_not_its_whole_file(tmp_path, fake_embedder):
    # tokio's tests `use tokio_test::assert_pending;`: their `rt.block_on(...)` is a
    # runtime's method, not tokio-test's free `block_on`; `use tokio_test::block_on;`
    # brings that one, and `use crate::util;` (a module) the whole file.
    files = {
        "helper/Cargo.toml": '[package]\nname = "helper"\n',
        "helper/src/lib.rs": (
            "pub fn block_on(f: u8) -> u8 {\n    f\n}\n\npub fn assert_ready(f: u8) {}\n"
        ),
        "app/Cargo.toml": '[package]\nname = "app"\n',
        "app/src/lib.rs": "pub mod util;\n",
        "app/src/util.rs": "pub fn block_on(f: u8) -> u8 {\n    f\n}\n",
        "app/tests/rt.rs": (
            "use helper::assert_ready;\n"  # 1: an item of helper/src/lib.rs
            "\n"
            "fn run(rt: Rt) -> u8 {\n"  # 3
            "    assert_ready(0);\n"
            "    rt.block_on(1)\n"  # 5: a method: neither free function
            "}\n"
        ),
        "app/tests/direct.rs": (
            "use helper::block_on;\n"  # 1: the item itself
            "\n"
            "fn go() -> u8 {\n"  # 3
            "    block_on(2)\n"  # 4
            "}\n"
        ),
    }
    root = make_tree(tmp_path / "rs", files)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    store = Store.open(root / ".dowse")
    by_target = sorted(
        (c.target.split("#", 1)[0], c.path, c.lines)
        for c in find_references(store, "block_on", callees=False).callers
    )
    assert by_target == [("helper/src/lib.rs", "app/tests/direct.rs", [4])]
    assert [c.path for c in find_references(store, "assert_ready", callees=False).callers] == [
        "app/tests/rt.rs"
    ]


def test_a_go_import_names_a_package_never_a_definition(tmp_path, fake_embedder):
    # grpc-go: `import "google.golang.org/grpc/keepalive"` is no reference to
    # `http2Client.keepalive`, whether in the method's own file or in a test.
    files = {
        "go.mod": "module example.com/shop\n\ngo 1.21\n",
        "keepalive/keepalive.go": "package keepalive\n\ntype Params struct{}\n",
        "transport/client.go": (
            "package transport\n"
            "\n"
            'import "example.com/shop/keepalive"\n'  # 3
            "\n"
            "type client struct{}\n"
            "\n"
            "func (c *client) keepalive() {}\n"  # 7
            "\n"
            "func (c *client) run(p keepalive.Params) {\n"
            "\tc.keepalive()\n"  # 10
            "}\n"
        ),
        "dial_test.go": (
            "package shop\n"
            "\n"
            "import (\n"
            '\t"testing"\n'
            '\t"example.com/shop/keepalive"\n'  # 5
            ")\n"
            "\n"
            "func TestDial(t *testing.T) { _ = keepalive.Params{} }\n"
        ),
    }
    root = make_tree(tmp_path / "go", files)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    store = Store.open(root / ".dowse")
    refs = find_references(store, "keepalive", callees=False, kinds=(*DEFAULT_KINDS, "import"))
    assert [(c.path, c.lines, c.kinds) for c in refs.callers] == [
        ("transport/client.go", [10], ["call"])
    ]


def test_a_receiver_that_is_a_calls_result_is_of_the_type_it_returns(tmp_path, fake_embedder):
    # cobra: `c.Parent().HelpFunc()` asks the parent `*Command`; `c.Flags()` returns
    # pflag's `*flag.FlagSet`, whose `HasAvailableFlags` is the library's, not the
    # same-named method of `Command` in this file.
    files = {
        "go.mod": "module example.com/cli\n\ngo 1.21\n",
        "command.go": (
            "package cli\n"
            "\n"
            'import flag "github.com/spf13/pflag"\n'
            "\n"
            "type Command struct{ parent *Command }\n"  # 5
            "\n"
            "func (c *Command) Parent() *Command { return c.parent }\n"
            "\n"
            "func (c *Command) Flags() *flag.FlagSet { return nil }\n"
            "\n"  # 10
            "func (c *Command) HelpFunc() func() { return nil }\n"
            "\n"
            "func (c *Command) HasAvailableFlags() bool { return true }\n"
            "\n"
            "func (c *Command) Help() {\n"  # 15
            "\tc.Parent().HelpFunc()\n"
            "\tif c.Flags().HasAvailableFlags() {\n"
            "\t}\n"
            "}\n"
            "\n"  # 20
            "func (c *Command) UseLine() bool {\n"
            "\treturn c.HasAvailableFlags()\n"
            "}\n"
        ),
    }
    root = make_tree(tmp_path / "go", files)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert _callers(root, "HelpFunc") == [("command.go", "Command.Help", [16], "same-file")]
    assert _callers(root, "HasAvailableFlags") == [
        ("command.go", "Command.UseLine", [22], "same-file")
    ]


def test_a_receiver_from_a_runtime_method_is_of_no_type_the_index_knows(tmp_path, fake_embedder):
    # clap_derive: `self.name.clone().translate(..)` calls `Name.translate` on a derived
    # `Clone`; the index's one `clone` (another type's impl) says nothing of `Name`'s.
    files = {
        "Cargo.toml": '[package]\nname = "derive"\nversion = "0.1.0"\n',
        "src/lib.rs": (
            "#[derive(Clone)]\n"
            "pub struct Name;\n"
            "\n"
            "impl Name {\n"
            "    pub fn translate(self) -> u32 {\n"  # 5
            "        1\n"
            "    }\n"
            "}\n"
            "\n"
            "pub struct Other;\n"  # 10
            "\n"
            "impl Clone for Other {\n"
            "    fn clone(&self) -> Self {\n"
            "        Other\n"
            "    }\n"  # 15
            "}\n"
            "\n"
            "pub struct Item {\n"
            "    name: Name,\n"
            "}\n"  # 20
            "\n"
            "impl Item {\n"
            "    pub fn cased(&self) -> u32 {\n"
            "        self.name.clone().translate()\n"
            "    }\n"  # 25
            "}\n"
        ),
    }
    root = make_tree(tmp_path / "rs", files)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert _callers(root, "translate") == [("src/lib.rs", "Item.cased", [24], "same-file")]
