"""The imports explorer on a small package with a cycle, a hub and an entry point: the same
graph from the index, from parsing, and from both (files the index does not have yet)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dowse.explore.imports import imports_track
from dowse.explore.records import ImportReport
from dowse.explore.tracks import Context, run_track
from dowse.indexer.build import IndexConfig, build_index

FILES = {
    "pkg/__init__.py": "",
    # a -> b -> c -> a is the cycle; every module uses the hub.
    "pkg/a.py": "from pkg import b\nfrom pkg import hub\nimport requests\n\n\n"
    "def run():\n    return b.go()\n",
    "pkg/b.py": "from . import c\nfrom .hub import helper\n\n\ndef go():\n"
    "    return helper(c.late())\n",
    "pkg/c.py": "from pkg.hub import helper\nimport os\n\n\ndef late():\n"
    "    import pkg.a\n    return pkg.a, helper, os\n",
    "pkg/hub.py": "import datetime\nimport json\n\n\ndef helper(x=None):\n"
    "    return json.dumps(str(datetime.date.today()))\n",
    # `import datetime` above must not become an edge to this file.
    "pkg/util/datetime.py": "def parse(text):\n    return text\n",
    "pkg/d.py": "from pkg.hub import helper\nimport requests\nimport yaml.loader\n",
    "pkg/e.py": "from .hub import helper\n",
    "cli.py": "import sys\n\nfrom pkg import a\nfrom pkg.hub import helper\n\n"
    'if __name__ == "__main__":\n    sys.exit(a.run())\n',
    "tests/test_hub.py": "from pkg.hub import helper\n\n\ndef test_helper():\n"
    "    assert helper()\n",
    "web/app.js": 'import { fmt } from "./util.js";\nimport React from "react";\n'
    'import fs from "node:fs";\n',
    "web/util.js": "export function fmt(x) { return `${x}`; }\n",
    "README.md": "# demo\n",
}

CENTRAL_FIRST = "pkg/hub.py"
CYCLES = [["pkg/a.py", "pkg/b.py", "pkg/c.py"]]
ENTRY_POINTS = ["cli.py", "web/app.js", "pkg/d.py", "pkg/e.py"]
EXTERNAL = [("requests", 2), ("react", 1), ("yaml", 1)]
MODULES = 12  # .py and .js files, README.md aside
EDGES = {
    ("pkg/a.py", "pkg/b.py"),
    ("pkg/a.py", "pkg/hub.py"),
    ("pkg/b.py", "pkg/c.py"),
    ("pkg/b.py", "pkg/hub.py"),
    ("pkg/c.py", "pkg/hub.py"),
    ("pkg/c.py", "pkg/a.py"),
    ("pkg/d.py", "pkg/hub.py"),
    ("pkg/e.py", "pkg/hub.py"),
    ("cli.py", "pkg/a.py"),
    ("cli.py", "pkg/hub.py"),
    ("tests/test_hub.py", "pkg/hub.py"),
    ("web/app.js", "web/util.js"),
}


def _repo(root: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _index(root: Path, embedder) -> Path:
    build_index(root, config=IndexConfig(embed=False), embedder=embedder)
    return root / ".dowse"


def _run(ctx: Context):
    result, output = run_track(ctx, imports_track(ctx))
    assert result.dropped == []
    return result, output.get("imports")


def _check_graph(result, report: ImportReport) -> None:
    assert [g.passed for g in result.gates] == [True, True, True], result.gates
    assert report.modules == MODULES
    assert report.edges == len(EDGES)
    assert report.cycles == CYCLES
    assert report.central[0][0] == CENTRAL_FIRST
    assert report.entry_points == ENTRY_POINTS
    assert report.external == EXTERNAL


def test_graph_from_parsing(tmp_path):
    result, report = _run(Context(root=_repo(tmp_path)))
    _check_graph(result, report)
    cycle = next(f for f in result.findings if f.topic == "cycle")
    assert cycle.claim.startswith("import cycle: pkg/a.py → pkg/b.py → pkg/c.py → pkg/a.py")
    assert "pkg/c.py:6 is nested" in cycle.claim
    assert [c.ref for c in cycle.citations] == ["pkg/a.py:1", "pkg/b.py:1", "pkg/c.py:6"]
    hub = next(f for f in result.findings if f.topic == "central")
    assert hub.claim.startswith("`hub` (pkg/hub.py) is the most central module")
    assert "imported by 7 files in scope" in hub.claim
    entry = [f for f in result.findings if f.topic == "entry point"]
    assert entry[0].citations[0].quote == 'if __name__ == "__main__":'
    assert any(
        "standard library modules used: datetime, fs, json, os, sys" in c
        for c in result.conclusions
    )
    assert any("without an index" in g for g in result.gaps)


def test_graph_from_the_index_is_the_same(tmp_path, fake_embedder):
    parsed = _run(Context(root=_repo(tmp_path / "a")))[1]
    root = _repo(tmp_path / "b")
    ctx = Context(root=root, index_dir=_index(root, fake_embedder))
    assert ctx.searcher() is not None
    result, report = _run(ctx)
    _check_graph(result, report)
    assert report == parsed
    assert "from the index" in result.conclusions[0]


def test_files_missing_from_the_index_are_parsed(tmp_path, fake_embedder):
    # The hub arrives after indexing: it is parsed, and the imports of it the index could
    # not resolve then are resolved now.
    files = dict(FILES)
    late = files.pop("pkg/hub.py")
    root = _repo(tmp_path, files)
    index_dir = _index(root, fake_embedder)
    _repo(root, {"pkg/hub.py": late})
    result, report = _run(Context(root=root, index_dir=index_dir))
    _check_graph(result, report)
    assert "and parsing 1 file it does not have yet" in result.conclusions[0]


def test_edge_list_matches(tmp_path):
    # The exact edges, through the private graph builder the report summarizes.
    from dowse.explore.imports import _build_graph, _parse_rows, _Resolver

    ctx = Context(root=_repo(tmp_path))
    nodes = [p for p in ctx.files() if p.endswith((".py", ".js"))]
    resolver = _Resolver(ctx.all_files())
    rows, failed = _parse_rows(ctx, nodes, resolver)
    graph = _build_graph(ctx, nodes, rows, resolver)
    assert failed == []
    assert {(a, b) for a, targets in graph.succ.items() for b in targets} == EDGES


def test_scope_is_a_directory(tmp_path, fake_embedder):
    root = _repo(tmp_path)
    ctx = Context(root=root, scope="pkg", index_dir=_index(root, fake_embedder))
    result, report = _run(ctx)
    assert report.modules == 8
    assert report.cycles == CYCLES
    assert report.central[0][0] == CENTRAL_FIRST
    assert report.entry_points == ["pkg/d.py", "pkg/e.py"]
    assert report.external == [("requests", 2), ("yaml", 1)]
    assert any(
        c == "2 modules of pkg are imported by 2 files outside it" for c in result.conclusions
    ), result.conclusions


def test_scope_is_one_file(tmp_path, fake_embedder):
    root = _repo(tmp_path)
    ctx = Context(root=root, scope="pkg/c.py", index_dir=_index(root, fake_embedder))
    result, report = _run(ctx)
    assert [g.passed for g in result.gates] == [True, True, True], result.gates
    assert (report.modules, report.edges, report.cycles) == (1, 0, [])
    outside = sorted(f.claim for f in result.findings if f.topic == "outside")
    assert outside == [
        "pkg/a.py, outside pkg/c.py, is imported by 1 file in scope",
        "pkg/hub.py, outside pkg/c.py, is imported by 1 file in scope",
    ]
    assert any(c.startswith("2 import edges leave pkg/c.py") for c in result.conclusions)


def test_make_rebuilds_for_a_narrower_scope(tmp_path):
    ctx = Context(root=_repo(tmp_path))
    track = imports_track(ctx)
    assert track.make is not None
    narrow = track.make(ctx.narrowed("web", deepen=0))
    assert narrow.spec.focus == "web"
    result, output = run_track(ctx.narrowed("web", deepen=0), narrow)
    assert output["imports"].edges == 1
    assert output["imports"].external == [("react", 1)]


@pytest.mark.parametrize(
    "files, detail",
    [
        (
            {"README.md": "# hi\n"},
            "no Python, JavaScript/TypeScript, Go, Rust, Java/Kotlin/Scala or C/C++ files in .",
        ),
        (
            {"a.py": "x = 1\n", "b.py": "y = 2\n"},
            "no imports in the 2 Python, JavaScript/TypeScript, Go, Rust, Java/Kotlin/Scala "
            "or C/C++ files of .",
        ),
    ],
)
def test_nothing_to_graph_fails_understood(tmp_path, files, detail):
    result, output = run_track(ctx := Context(root=_repo(tmp_path, files)), imports_track(ctx))
    assert [(g.name, g.passed, g.ran) for g in result.gates] == [
        ("understood", False, True),
        ("evidence", False, False),
        ("complete", False, False),
    ]
    assert result.gates[0].detail == detail
    assert "imports" not in output


def test_c_system_headers_under_a_directory_are_the_systems(tmp_path):
    root = _repo(
        tmp_path,
        {
            "src/io.c": "#include <sys/stat.h>\n#include <linux/perf_event.h>\n"
            '#include <stdio.h>\n#include <zlib/zlib.h>\n#include "io.h"\n',
            "src/io.h": "int io_open(const char *path);\n",
        },
    )
    _, report = _run(Context(root=root))
    assert report.external == [("zlib", 1)]


TYPED = {
    # Each pair imports the other, one way only for type checkers: no cycle.
    "py/model.py": "from __future__ import annotations\n\nfrom typing import TYPE_CHECKING\n\n"
    "if TYPE_CHECKING:\n    from py.store import Store\n\n\n"
    "def save(store: Store) -> None:\n    store.put()\n",
    "py/store.py": "from py.model import save\n\n\nclass Store:\n    def put(self):\n"
    "        return save\n",
    "ts/hooks.ts": "import type {Options} from './options';\n"
    "import {\n  type Retry,\n  type Stop,\n} from './constants';\n"
    "export type Hook = (o: Options, r: Retry, s: Stop) => void;\n",
    "ts/options.ts": "import {Hook} from './hooks';\nexport type {Stop} from './constants';\n"
    "export const options = {hooks: [] as Hook[]};\n",
    "ts/constants.ts": "import {options} from './options';\nexport type Retry = number;\n"
    "export type Stop = symbol;\nexport const retries = options.hooks.length;\n",
    # One runtime import besides a type-only one keeps this pair a cycle.
    "ts/a.ts": "import type {B} from './b';\nimport {b} from './b';\nexport type A = B;\n"
    "export const a = b;\n",
    "ts/b.ts": "import {a} from './a';\nexport type B = number;\nexport const b = 1 + a;\n",
}


def test_imports_only_type_checkers_read_make_no_cycle(tmp_path):
    result, report = _run(Context(root=_repo(tmp_path, TYPED)))
    # hooks -> options and hooks -> constants are type-only, options -> constants too;
    # options -> hooks and constants -> options run: without the types, no cycle.
    assert report.cycles == [["ts/a.ts", "ts/b.ts"]]
    cycle = next(f for f in result.findings if f.topic == "cycle")
    assert [c.ref for c in cycle.citations] == ["ts/a.ts:2", "ts/b.ts:1"]
    assert any(
        c.startswith("4 imports between modules that import each other only type checkers")
        for c in result.conclusions
    ), result.conclusions
    # The types still count for centrality: every edge is in the graph.
    assert report.edges == 9


def test_the_graph_marks_the_edges_only_type_checkers_read(tmp_path):
    from dowse.explore.imports import import_graph

    graph = import_graph(Context(root=_repo(tmp_path, TYPED)))
    typed = {(e.source, e.target) for e in graph.edges if e.type_only}
    assert typed == {
        ("py/model.py", "py/store.py"),
        ("ts/hooks.ts", "ts/options.ts"),
        ("ts/hooks.ts", "ts/constants.ts"),
        ("ts/options.ts", "ts/constants.ts"),
    }
    assert {(e.source, e.target) for e in graph.edges if e.cycle} == {
        ("ts/a.ts", "ts/b.ts"),
        ("ts/b.ts", "ts/a.ts"),
    }
    assert graph.components == [["ts/a.ts", "ts/b.ts"]]


@pytest.mark.parametrize(
    "line, language, expected",
    [
        ("import type {A} from './a';", "typescript", True),
        ("import type A from './a';", "tsx", True),
        ("import type * as N from './a';", "typescript", True),
        ("export type {A} from './a';", "typescript", True),
        ("import {type A, type B as C} from './a';", "typescript", True),
        ("import type from './type';", "typescript", False),  # a default import named type
        ("import {type A, B} from './a';", "typescript", False),
        ("import X, {type A} from './a';", "typescript", False),
        ("import {A} from './a';", "typescript", False),
        ("import './side-effect';", "typescript", False),
        ("import type {A} from './a';", "go", False),
    ],
)
def test_type_only_reads_the_statement(line, language, expected):
    from dowse.explore.import_guards import type_only

    assert type_only([line], 1, language) is expected
