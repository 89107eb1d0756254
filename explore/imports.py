"""The imports explorer: the scope's import graph, its entry points, cycles and hubs.

Nodes are the files in scope of the languages whose imports `indexer.resolve` maps to
files (`GRAPH_LANGUAGES`); an edge is "file imports internal file", one per pair, labelled
with the first import line that makes it. An import can make several edges: a Go package
is its directory's files, a C/C++ header brings its implementation file. The imports come
from the index's `imports` table when there is an index (files the index does not have
yet are parsed), or from parsing the scope with `indexer.parse` and resolving with
`indexer.resolve`: both ways give the same graph for the same files. An import the index
left unresolved is resolved again against today's files (its module may have been added
since).

Invariants:
- `from pkg import name` points at `pkg/name.py` when `name` is a submodule, and at the
  package's `__init__.py` only for names that are not submodules: a package's
  `__init__` is not a hub just because its submodules are imported through it.
- An absolute import of a standard-library name (`import datetime`) is never an edge to
  a same-named file deep in the tree (the resolver's suffix match would say so): the
  file must sit at the top of the tree, or one directory down (a `src/` layout).
- Edges to internal files outside the scope are not in the graph; they are counted and
  reported as leaving the scope. `external` lists third-party packages only; the
  standard library is named in a conclusion.
- Cycles are strongly connected components (Tarjan, iterative) shown as their shortest
  cycles, smallest first; centrality is PageRank by power iteration. Nothing recurses,
  so a deep graph cannot overflow the stack.
- A cycle is made of imports that run: an edge all of whose statements are read by type
  checkers only (``if TYPE_CHECKING:``, ``import type``: `import_guards.type_only`) is in
  the graph and its PageRank but on no cycle; it is the usual way to type two modules
  that use each other without a circular import.
- `import_graph` is the same graph the track summarizes (same nodes, edges, components,
  ranks), whole and as a record, for pictures of it (explore/graph.py).
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dowse.errors import DowseError
from dowse.explore.import_guards import conditional, type_only
from dowse.explore.records import (
    Citation,
    GraphEdge,
    GraphNode,
    ImportGraph,
    ImportReport,
    TrackSpec,
)
from dowse.explore.tracks import STDLIB, Context, Track, TrackState, cite, find_line, plural
from dowse.indexer.parse import parse_source
from dowse.indexer.reading import read_inside
from dowse.indexer.resolve import ImportResolver, read_layout
from dowse.languages import TEXT_LANGUAGES, is_test_path, language_for

__all__ = ["import_graph", "imports_track"]

GRAPH_LANGUAGES = frozenset(
    {
        "python",
        "javascript",
        "typescript",
        "tsx",
        "go",
        "rust",
        "java",
        "kotlin",
        "scala",
        "c",
        "cpp",
    }
)
"""The languages whose imports indexer.resolve maps to files."""
_GRAPHED = "Python, JavaScript/TypeScript, Go, Rust, Java/Kotlin/Scala or C/C++"
_IMPORT_WORDS = ("import", "require", "#include", "use ", "mod ")
"""Words that show an import statement on a line (JS `require`, C `#include`, Rust)."""
_GO_IMPORT_SPEC = re.compile(r'^\s*(?:[\w.]+\s+)?"[^"]+"\s*$')
"""One line of a Go `import ( ... )` block: a quoted path, perhaps after its name."""
MAX_CYCLES = 10
MAX_CENTRAL = 10
MAX_ENTRY_POINTS = 12
MAX_EXTERNAL = 15
CLAIMED_EXTERNAL = 5
CLAIMED_OUTSIDE = 3
DAMPING = 0.85
PAGERANK_TOL = 1e-9
PAGERANK_MAX_ITER = 100
MAX_PACKAGE_DEPTH = 4
"""How many directory levels below the scope packages may be looked for."""

_NODE_BUILTINS = frozenset(
    {
        "assert",
        "buffer",
        "child_process",
        "cluster",
        "crypto",
        "dns",
        "events",
        "fs",
        "http",
        "https",
        "module",
        "net",
        "os",
        "path",
        "perf_hooks",
        "process",
        "querystring",
        "readline",
        "stream",
        "timers",
        "tls",
        "url",
        "util",
        "vm",
        "worker_threads",
        "zlib",
    }
)
_RUN_NAMES = frozenset(
    {
        "manage.py",
        "main.py",
        "cli.py",
        "app.py",
        "run.py",
        "server.py",
        "wsgi.py",
        "asgi.py",
        "index.js",
        "main.js",
        "server.js",
        "app.js",
        "cli.js",
        "index.ts",
        "main.go",
        "main.rs",
        "main.c",
        "main.cc",
        "main.cpp",
        "main.ts",
        "server.ts",
        "app.ts",
        "cli.ts",
    }
)
_MAIN_GUARD = re.compile(
    r"""^if\s+(__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__)\s*:"""
    r"""|require\.main\s*===?\s*module"""
)


@dataclass(frozen=True)
class _Row:
    path: str
    module: str
    names: tuple[str, ...]
    line: int
    resolved: str | None


@dataclass
class _Graph:
    nodes: list[str]
    succ: dict[str, dict[str, int]] = field(default_factory=dict)
    """importer -> imported file in scope -> first import line."""
    statements: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    """(importer, imported file in scope) -> the lines of every statement making the edge."""
    runs: dict[str, dict[str, int]] = field(default_factory=dict)
    """`succ` without the edges only type checkers read, each with its first line that
    runs (`_running`)."""
    typed: int = 0
    """Edges between modules that import each other, only type checkers read."""
    outside: dict[str, dict[str, int]] = field(default_factory=dict)
    """internal file outside the scope -> importer in scope -> line."""
    importers_outside: dict[str, set[str]] = field(default_factory=dict)
    """file in scope -> importers outside the scope (known only from the index)."""
    external: dict[str, dict[str, int]] = field(default_factory=dict)
    """third-party package -> importer -> line."""
    stdlib: set[str] = field(default_factory=set)
    imports: int = 0
    unresolved_relative: int = 0

    def pred(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {n: {} for n in self.nodes}
        for src, dsts in self.succ.items():
            for dst, line in dsts.items():
                out[dst][src] = line
        return out


class _Resolver:
    """indexer.resolve over the root's files and manifests, with the stdlib guard and a
    cache."""

    def __init__(
        self, paths: Sequence[str], read: Callable[[str], bytes | None] | None = None
    ) -> None:
        self.paths = set(paths)
        self._read = read
        self._resolver: ImportResolver | None = None
        self._cache: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}

    @property
    def resolver(self) -> ImportResolver:
        if self._resolver is None:
            # Without a reader no manifest is known: Go, tsconfig aliases and crate names
            # stay unresolved.
            layout = read_layout(self.paths, self._read) if self._read else None
            self._resolver = ImportResolver(self.paths, layout)
        return self._resolver

    def resolve(
        self, module: str, importer: str, language: str, names: Sequence[str] = ()
    ) -> list[str]:
        # An absolute Python module means one file wherever it is imported; elsewhere the
        # importer matters (its directory, its crate, its tsconfig).
        shared = language == "python" and not module.startswith(".")
        key = (module, language if shared else importer, tuple(names))
        if key not in self._cache:
            found = self.resolver.resolve(module, importer, language, names)
            self._cache[key] = [p for p in found if self.check(module, language, p)]
        return self._cache[key]

    def check(self, module: str, language: str, resolved: str | None) -> str | None:
        """`resolved`, unless it is a stdlib import the suffix match sent deep into the tree."""
        if not resolved or resolved not in self.paths:
            return None
        if language != "python" or module.startswith("."):
            return resolved
        top = module.split(".", 1)[0]
        if top in STDLIB:
            stems = [p.removesuffix(".pyi").removesuffix(".py") for p in resolved.split("/")[:2]]
            if top not in stems:
                return None
        return resolved


def _submodule(module: str, name: str) -> str:
    return module + name if module.endswith(".") else f"{module}.{name}"


def _targets(row: _Row, language: str, resolver: _Resolver) -> list[str]:
    """The internal files an import statement makes its file depend on."""
    resolved = resolver.check(row.module, language, row.resolved)
    if resolved is not None:
        found = [resolved]
    elif language in GRAPH_LANGUAGES:
        # The index resolved against the files it had: a module added since may match now.
        found = resolver.resolve(row.module, row.path, language, row.names)
    else:
        found = []
    if not found or language != "python":
        return found
    resolved = found[0]
    subs: list[str] = []
    for name in row.names:
        if (
            name != "*"
            and (sub := resolver.resolve(_submodule(row.module, name), row.path, language))
            and sub[0] != resolved
        ):
            subs.append(sub[0])
    if row.names and len(subs) == len(row.names):
        return subs
    return [resolved, *subs]


_JVM_STDLIB = ("java", "javax", "jdk", "sun", "kotlin", "kotlinx", "scala", "android")
_RUST_STDLIB = frozenset({"std", "core", "alloc", "proc_macro", "test"})


_C_SYSTEM_DIRS = frozenset(
    "sys linux asm asm-generic bits gnu arpa net netinet netinet6 netpacket machine mach"
    " libkern scsi mtd rdma sound xen".split()
)
"""The include directories of the C library and the kernel's headers: `<sys/stat.h>`,
`<linux/perf_event.h>` are the system's, not a third-party library named "sys"."""


_RUST_ITEM = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:mod|enum|struct|trait|type|union)\s+(\w+)"
)


def _rust_items(ctx: Context, path: str) -> frozenset[str]:
    """The modules and types a Rust file declares itself: a path that starts with one
    (clap's `use inner::Inner;` of its `mod inner { ... }`, `use Kind::*` of its own
    enum) names the file's item, in scope since Rust 2018, not a crate."""
    return frozenset(m.group(1) for ln in ctx.lines(path) or [] if (m := _RUST_ITEM.match(ln)))


def _compiled_package(module: str, language: str) -> tuple[bool, str] | None:
    """(standard library?, package) of an unresolved Go, Rust, JVM or C/C++ import, or
    None when it names a file of the project that is not there."""
    if language == "go":
        parts = module.split("/")
        return ("." not in parts[0], "/".join(parts[:3]) if "." in parts[0] else module)
    if language == "rust":
        top = module.split("::", 1)[0]
        if module.startswith("mod ") or top in ("crate", "self", "super"):
            return None
        return (top in _RUST_STDLIB, top)
    if language in ("java", "kotlin", "scala"):
        parts = module.split(".")
        return (parts[0] in _JVM_STDLIB, ".".join(parts[:3]))
    # C/C++: `<vector>`, `<stdio.h>` and `<sys/types.h>` are the system's,
    # `<gtest/gtest.h>` a library's.
    if module.startswith("."):
        return None
    top, slash, _ = module.partition("/")
    return (not slash or top in _C_SYSTEM_DIRS, top if slash else module)


def _package(module: str, language: str) -> str | None:
    """The top-level package an unresolved import names, or None for relative ones."""
    if language == "python":
        return None if module.startswith(".") else module.split(".", 1)[0]
    if module.startswith((".", "/")) or "://" in module:
        return None
    parts = module.split("/")
    return "/".join(parts[:2]) if module.startswith("@") and len(parts) > 1 else parts[0]


# -- gathering imports ---------------------------------------------------------------------


def _index_rows(searcher: Any) -> tuple[list[_Row], set[str]]:
    """Every import row of the index, and the paths the index has."""
    store = searcher.store
    indexed = {r["path"] for r in store.rows("files", ["path"])}
    rows = [
        _Row(r["path"], r["module"], tuple(r["names"] or ()), int(r["line"]), r["resolved"] or None)
        for r in store.rows("imports", ["path", "module", "names", "line", "resolved"])
    ]
    return rows, indexed


def _parse_rows(
    ctx: Context, paths: Iterable[str], resolver: _Resolver
) -> tuple[list[_Row], list[str]]:
    rows: list[_Row] = []
    failed: list[str] = []
    for path in paths:
        language = language_for(path)
        lines = ctx.lines(path)
        if language is None or lines is None:
            failed.append(path)
            continue
        # Joined from ctx.lines, so that line numbers are the ones citations are checked with.
        parsed = parse_source(path, "\n".join(lines).encode(), language)
        if parsed.tree is None:
            failed.append(path)
        for i in parsed.imports:
            targets: list[str | None] = [*resolver.resolve(i.module, path, language, i.names)]
            rows.extend(
                _Row(i.path, i.module, tuple(i.names), i.line, target)
                for target in targets or [None]
            )
    return rows, failed


def _build_graph(ctx: Context, nodes: list[str], rows: list[_Row], resolver: _Resolver) -> _Graph:
    graph = _Graph(nodes=nodes, succ={n: {} for n in nodes})
    in_graph = set(nodes)
    statements: set[tuple[str, int, str]] = set()  # an import has a row per file it names
    items: dict[str, frozenset[str]] = {}  # a Rust file -> its own modules and types
    for row in sorted(rows, key=lambda r: (r.path, r.line)):
        language = language_for(row.path) or ""
        if row.path not in in_graph:
            if language in GRAPH_LANGUAGES and not ctx.in_scope(row.path):
                for target in _targets(row, language, resolver):
                    if target in in_graph:
                        graph.importers_outside.setdefault(target, set()).add(row.path)
            continue
        statement = (row.path, row.line, row.module)
        graph.imports += statement not in statements
        statements.add(statement)
        targets = _targets(row, language, resolver)
        for target in targets:
            if target == row.path:
                continue
            if target in in_graph:
                graph.succ[row.path].setdefault(target, row.line)
                graph.statements.setdefault((row.path, target), []).append(row.line)
            else:
                graph.outside.setdefault(target, {}).setdefault(row.path, row.line)
        if targets:
            continue
        if language == "rust":
            if row.path not in items:
                items[row.path] = _rust_items(ctx, row.path)
            if row.module.split("::", 1)[0] in items[row.path]:
                continue  # `use inner::Inner;` of the file's own `mod inner { ... }`
        if language not in ("python", "javascript", "typescript", "tsx"):
            compiled = _compiled_package(row.module, language)
            if compiled is None:
                graph.unresolved_relative += 1
            elif compiled[0]:
                graph.stdlib.add(compiled[1])
            else:
                graph.external.setdefault(compiled[1], {}).setdefault(row.path, row.line)
            continue
        package = _package(row.module, language)
        if package is None:
            graph.unresolved_relative += 1
        elif language == "python":
            if package in STDLIB:
                graph.stdlib.add(package)
            elif not resolver.resolve(package, row.path, language):
                graph.external.setdefault(package, {}).setdefault(row.path, row.line)
            # else: an internal package whose submodule is not a file (an attribute import)
        elif package.startswith("node:") or package in _NODE_BUILTINS:
            graph.stdlib.add(package.removeprefix("node:"))
        else:
            graph.external.setdefault(package, {}).setdefault(row.path, row.line)
    return graph


# -- graph algorithms ----------------------------------------------------------------------


def _sccs(nodes: Sequence[str], succ: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components (Tarjan's algorithm with an explicit stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(succ.get(root, ()))))]
        while work:
            v, children = work[-1]
            descended = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                    descended = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if descended:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                component: list[str] = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                out.append(sorted(component))
    return out


def _shortest_cycle(
    start: str, members: set[str], succ: dict[str, dict[str, int]]
) -> list[str] | None:
    """The shortest cycle through `start` inside `members` (breadth-first), or None."""
    parent: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        u = queue.popleft()
        if start in succ.get(u, {}):
            path: list[str] = []
            node: str | None = u
            while node is not None:
                path.append(node)
                node = parent[node]
            return path[::-1]
        for w in sorted(succ.get(u, ())):
            if w in members and w not in parent:
                parent[w] = u
                queue.append(w)
    return None


def _rotate(cycle: list[str]) -> tuple[str, ...]:
    i = cycle.index(min(cycle))
    return tuple(cycle[i:] + cycle[:i])


def _cycles(components: list[list[str]], succ: dict[str, dict[str, int]]) -> list[list[str]]:
    """The shortest cycle through each module of each component, smallest first, capped;
    every component is shown by its shortest cycle before any gets a second one."""
    best: list[tuple[str, ...]] = []
    rest: list[tuple[str, ...]] = []
    for component in components:
        members = set(component)
        found = {_rotate(c) for n in component if (c := _shortest_cycle(n, members, succ))}
        ordered = sorted(found, key=lambda c: (len(c), c))
        if ordered:
            best.append(ordered[0])
            rest.extend(ordered[1:])
    best.sort(key=lambda c: (len(c), c))
    rest.sort(key=lambda c: (len(c), c))
    chosen = (best + rest)[:MAX_CYCLES]
    return [list(c) for c in sorted(chosen, key=lambda c: (len(c), c))]


def _pagerank(nodes: Sequence[str], succ: dict[str, dict[str, int]]) -> dict[str, float]:
    """PageRank by power iteration; a module with no imports spreads its rank evenly."""
    n = len(nodes)
    if not n:
        return {}
    pos = {p: i for i, p in enumerate(nodes)}
    out = [[pos[d] for d in succ.get(p, {}) if d in pos] for p in nodes]
    rank = [1.0 / n] * n
    for _ in range(PAGERANK_MAX_ITER):
        dangling = sum(rank[i] for i in range(n) if not out[i])
        base = (1.0 - DAMPING) / n + DAMPING * dangling / n
        new = [base] * n
        for i, targets in enumerate(out):
            if targets:
                share = DAMPING * rank[i] / len(targets)
                for j in targets:
                    new[j] += share
        delta = sum(abs(a - b) for a, b in zip(new, rank, strict=True))
        rank = new
        if delta < PAGERANK_TOL:
            break
    return {p: rank[i] for i, p in enumerate(nodes)}


def _running(ctx: Context, graph: _Graph) -> None:
    """`graph.runs`: the edges that run, each at its first statement that runs. Only
    edges inside a strongly connected component of the whole graph can be on a cycle,
    so only their files are read."""
    member = {p: i for i, c in enumerate(_sccs(graph.nodes, graph.succ)) for p in c}
    graph.runs = {n: {} for n in graph.nodes}
    for src, dsts in graph.succ.items():
        for dst, line in dsts.items():
            if member.get(src) != member.get(dst):
                graph.runs[src][dst] = line
                continue
            lines = ctx.lines(src) or []
            language = language_for(src) or ""
            statements = sorted(set(graph.statements.get((src, dst), [line])))
            running = (n for n in statements if not type_only(lines, n, language))
            if (first := next(running, None)) is not None:
                graph.runs[src][dst] = first
            else:
                graph.typed += 1


def _structure(
    ctx: Context, graph: _Graph
) -> tuple[list[list[str]], list[list[str]], dict[str, float]]:
    """(components of more than one module, their shortest cycles, PageRank): cycles of
    the imports that run, PageRank of every import."""
    _running(ctx, graph)
    components = [c for c in _sccs(graph.nodes, graph.runs) if len(c) > 1]
    cycles = _cycles(components, graph.runs)
    return components, cycles, _pagerank(graph.nodes, graph.succ)


# -- entry points --------------------------------------------------------------------------


def _main_guard(ctx: Context, path: str) -> int | None:
    text = "\n".join(ctx.lines(path) or ())
    if "__main__" not in text and "require.main" not in text:  # most files: skip the regex
        return None
    return find_line(ctx, path, _MAIN_GUARD)


def _first_text_line(ctx: Context, path: str) -> int | None:
    lines = ctx.lines(path) or []
    return next((i + 1 for i, ln in enumerate(lines) if ln.strip()), None)


def _entry_points(
    ctx: Context, graph: _Graph, pred: dict[str, dict[str, int]]
) -> list[tuple[str, str, Citation | None]]:
    """(path, why, citation), runnable files first, then the roots of the graph."""
    runnable: list[tuple[str, str, Citation | None]] = []
    named: list[tuple[str, str, Citation | None]] = []
    roots: list[tuple[int, str, str, Citation | None]] = []
    leaving: dict[str, int] = {}  # importer -> first line importing a file outside the scope
    for importers in graph.outside.values():
        for importer, line in importers.items():
            leaving[importer] = min(line, leaving.get(importer, line))
    for path in graph.nodes:
        name = posixpath.basename(path)
        indegree, outdegree = len(pred[path]), len(graph.succ[path])
        if name == "__main__.py":
            text = _first_text_line(ctx, path)
            runnable.append(
                (path, "runs with `python -m`", cite(ctx, path, text) if text else None)
            )
        elif (guard := _main_guard(ctx, path)) is not None:
            runnable.append((path, "runs as a script (main guard)", cite(ctx, path, guard)))
        elif indegree == 0 and (outdegree or path in leaving):
            first = min(graph.succ[path].values(), default=leaving.get(path))
            citation = _import_cite(ctx, path, first) if first else None
            if name in _RUN_NAMES:
                named.append((path, "a conventional program name no file here imports", citation))
            else:
                what = "1 module" if outdegree == 1 else f"{outdegree} modules"
                roots.append(
                    (-outdegree, path, f"no file in scope imports it; it imports {what}", citation)
                )
    found = runnable + named + [(p, why, c) for _, p, why, c in sorted(roots)]
    chosen = [e for e in found if not is_test_path(e[0])] or found
    return chosen[:MAX_ENTRY_POINTS]


# -- the track -----------------------------------------------------------------------------


def _import_cite(ctx: Context, path: str, line: int) -> Citation | None:
    """The import statement at `line` (the index may be a little older than the file)."""
    lines = ctx.lines(path) or []
    text = lines[line - 1] if 1 <= line <= len(lines) else ""
    if any(w in text for w in _IMPORT_WORDS) or _GO_IMPORT_SPEC.match(text):
        return cite(ctx, path, line)
    return None


def _nested(ctx: Context, path: str, line: int) -> bool:
    """Whether the statement at `line` is indented (inside a function or a condition)."""
    lines = ctx.lines(path) or []
    return 1 <= line <= len(lines) and lines[line - 1][:1] in (" ", "\t")


def _gather(ctx: Context, state: TrackState, nodes: list[str]) -> tuple[_Graph, str]:
    """The graph of `nodes`, from the index when there is one; and where it came from."""
    resolver = _Resolver(ctx.all_files(), lambda p: read_inside(ctx.root, p))
    searcher = None
    try:
        searcher = ctx.searcher()
    except DowseError as exc:
        state.gaps.append(f"the index could not be read ({exc}); parsed the files instead")
    if searcher is not None:
        rows, indexed = _index_rows(searcher)
        missing = [p for p in nodes if p not in indexed]
        parsed, failed = _parse_rows(ctx, missing, resolver)
        rows += parsed
        source = "the index" + (
            f" (and parsing {plural(len(missing), 'file')} it does not have yet)" if missing else ""
        )
    else:
        rows, failed = _parse_rows(ctx, nodes, resolver)
        source = f"parsing {plural(len(nodes), 'file')} (no index)"
        state.gaps.append("without an index, imports of the scope from outside it are not known")
    if failed:
        state.gaps.append(
            f"{plural(len(failed), 'file')} could not be parsed for imports: {_short(failed, 3)}"
        )
    return _build_graph(ctx, nodes, rows, resolver), source


def _short(paths: Iterable[str], limit: int = 5) -> str:
    items = list(paths)
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


_PACKAGE_FILES = frozenset({"__init__", "mod", "lib", "index", "main"})


def _module_name(path: str) -> str:
    """The name an import statement gives a module: its file's stem, or its directory's
    for a package file (`__init__.py`, `mod.rs`, `index.ts`) and for Go (packages are
    directories)."""
    parts = path.split("/")
    stem = parts[-1].split(".")[0]
    if (stem in _PACKAGE_FILES or path.endswith(".go")) and len(parts) > 1:
        return parts[-2]
    return stem


def imports_track(ctx: Context, *, keep_graph: bool = False) -> Track:
    """The import graph of `ctx`'s scope: entry points, cycles, central modules, packages.
    `keep_graph`: its output also has the whole graph (`import_graph`'s record) as
    "graph", built from the same parse."""
    focus = ctx.scope or "."
    spec = TrackSpec(
        name="imports",
        focus=focus,
        approach="build the file-level import graph (index imports table, or tree-sitter "
        "parsing and path-convention resolution), then Tarjan SCCs for cycles, "
        "PageRank for central modules, roots and main guards for entry points",
        gates=[
            f"understood: the scope has {_GRAPHED} files with imports to build a graph from",
            "evidence: every cycle, central module, entry point and package cites the "
            "import line or main guard that shows it",
            "complete: the graph has edges (or imports leaving the scope) and every reported "
            "cycle and the most central module kept a verified claim",
        ],
        deliverable="ImportReport: modules, edges, entry points, cycles, PageRank-central "
        "modules, external packages",
    )

    def understand(state: TrackState) -> tuple[bool, str]:
        files = ctx.files()
        nodes = [p for p in files if language_for(p) in GRAPH_LANGUAGES]
        if not nodes:
            return False, f"no {_GRAPHED} files in {focus}"
        graph, source = _gather(ctx, state, nodes)
        if not graph.imports:
            return False, f"no imports in the {len(nodes)} {_GRAPHED} files of {focus}"
        m = _measure(ctx, state, nodes, graph, keep_graph=keep_graph)
        state.conclusions.append(
            f"{len(nodes)} modules and {m.n_edges} internal import edges in {focus}, from {source}"
        )
        _claim_cycles(ctx, state, graph, m, focus)
        _claim_central(ctx, state, m)
        _claim_entries_and_packages(ctx, state, graph, m)
        _claim_outside(ctx, state, graph, focus)
        _note_limits(state, graph, files)
        return True, (
            f"{len(nodes)} modules, {m.n_edges} edges, {len(m.cycles)} cycles, "
            f"{len(m.external)} third-party packages"
        )

    def complete(state: TrackState) -> tuple[bool, str]:
        report = state.output.get("imports")
        if not isinstance(report, ImportReport):
            return False, "no import report"
        kept = Counter(f.topic for f in state.findings)
        if report.edges == 0 and not kept["outside"]:
            return False, f"no file in {focus} imports another internal file"
        if kept["cycle"] < len(report.cycles):
            lost = len(report.cycles) - kept["cycle"]
            return False, f"{lost} of {len(report.cycles)} cycles lost their evidence"
        top = report.central[0][0] if report.central else "none"
        if report.central and not any(
            f.topic == "central" and f"({top})" in f.claim for f in state.findings
        ):
            return False, f"the most central module {top} lost its evidence"
        return True, (
            f"{report.modules} modules, {report.edges} edges, {len(report.cycles)} "
            f"cycles, {len(report.entry_points)} entry points; most central: {top}"
        )

    return Track(spec=spec, understand=understand, complete=complete, make=imports_track)


# -- the track's phases: measure the graph, then claim what it shows --------------------


@dataclass
class _Measured:
    """What the track measured on the graph, for its claims."""

    pred: dict[str, dict[str, int]]
    n_edges: int
    components: list[list[str]]
    cycles: list[list[str]]
    rank: dict[str, float]
    central: list[str]
    entries: list[tuple[str, str, Citation | None]]
    external: list[tuple[str, int]]


def _measure(
    ctx: Context, state: TrackState, nodes: list[str], graph: _Graph, *, keep_graph: bool
) -> _Measured:
    """Cycles, PageRank, entry points and third-party packages; the report (and, with
    `keep_graph`, the whole graph) into the track's output."""
    pred = graph.pred()
    n_edges = sum(len(d) for d in graph.succ.values())
    components, cycles, rank = _structure(ctx, graph)
    if keep_graph:
        state.output["graph"] = _graph_record(
            ctx, nodes, graph, components, cycles, rank, state.gaps
        )
    central = sorted((p for p in nodes if pred[p]), key=lambda p: (-rank[p], p))
    central = central[:MAX_CENTRAL]
    entries = _entry_points(ctx, graph, pred)
    external = sorted(
        ((pkg, len(imp)) for pkg, imp in graph.external.items()), key=lambda kv: (-kv[1], kv[0])
    )
    state.output["imports"] = ImportReport(
        modules=len(nodes),
        edges=n_edges,
        entry_points=[p for p, _, _ in entries],
        cycles=cycles,
        central=[(p, round(rank[p], 4)) for p in central],
        external=external[:MAX_EXTERNAL],
        conditional=conditional(ctx, {p: graph.external[p] for p, _ in external}),
        sites=_sites(ctx, graph, [p for p, _ in external[:MAX_EXTERNAL]]),
    )
    return _Measured(pred, n_edges, components, cycles, rank, central, entries, external)


def _sites(ctx: Context, graph: _Graph, packages: list[str]) -> dict[str, Citation]:
    """Each package -> a verified import of it, a file outside the tests first."""
    out: dict[str, Citation] = {}
    for pkg in packages:
        importers = sorted(graph.external[pkg].items(), key=lambda kv: (is_test_path(kv[0]), kv))
        found = (_import_cite(ctx, path, line) for path, line in importers)
        if (c := next((c for c in found if c is not None), None)) is not None:
            out[pkg] = c
    return out


def _claim_cycles(ctx: Context, state: TrackState, graph: _Graph, m: _Measured, focus: str) -> None:
    for cycle in m.cycles:
        edges = list(zip(cycle, cycle[1:] + cycle[:1], strict=True))
        cites = [_import_cite(ctx, a, graph.runs[a][b]) for a, b in edges]
        nested = [f"{a}:{graph.runs[a][b]}" for a, b in edges if _nested(ctx, a, graph.runs[a][b])]
        note = (
            f"; the import at {', '.join(nested)} is nested (in a function or a "
            "condition), which is how such cycles are usually made to work"
            if nested
            else ""
        )
        state.claim(f"import cycle: {' → '.join(cycle + cycle[:1])}{note}", *cites, topic="cycle")
    if m.components:
        sizes = sorted((len(c) for c in m.components), reverse=True)
        state.conclusions.append(
            f"{len(m.components)} strongly connected components with more than one module "
            f"(sizes {_short(map(str, sizes), 8)}); {len(m.cycles)} shortest cycles shown"
        )
    else:
        state.conclusions.append(f"no circular imports between the files of {focus}")
    if graph.typed:
        state.conclusions.append(
            f"{plural(graph.typed, 'import')} between modules that import each other "
            "only type checkers read (`if TYPE_CHECKING:`, `import type`): no cycle"
        )


def _claim_central(ctx: Context, state: TrackState, m: _Measured) -> None:
    for i, path in enumerate(m.central):
        importer, line = min(m.pred[path].items())
        what = "the most central module" if i == 0 else f"central module #{i + 1}"
        state.claim(
            f"`{_module_name(path)}` ({path}) is {what} by PageRank ({m.rank[path]:.4f}); "
            f"imported by {plural(len(m.pred[path]), 'file')} in scope, e.g. {importer}",
            _import_cite(ctx, importer, line),
            topic="central",
        )
    if m.central:
        state.conclusions.append(f"most central modules (PageRank): {_short(m.central)}")


def _claim_entries_and_packages(
    ctx: Context, state: TrackState, graph: _Graph, m: _Measured
) -> None:
    for path, why, citation in m.entries:
        state.claim(f"entry point {path}: {why}", citation, topic="entry point")
    if m.entries:
        state.conclusions.append(f"entry points: {_short(p for p, _, _ in m.entries)}")
    for pkg, count in m.external[:CLAIMED_EXTERNAL]:
        importer, line = min(graph.external[pkg].items())
        state.claim(
            f"third-party package {pkg} is imported by {plural(count, 'file')} in scope",
            _import_cite(ctx, importer, line),
            topic="external",
        )
    if m.external:
        state.conclusions.append(
            f"{len(m.external)} third-party packages, most used: "
            f"{_short(f'{p} ({n})' for p, n in m.external)}"
        )
    if graph.stdlib:
        state.conclusions.append(
            f"standard library modules used: {_short(sorted(graph.stdlib), 12)}"
        )


def _claim_outside(ctx: Context, state: TrackState, graph: _Graph, focus: str) -> None:
    """Imports leaving the scope for internal modules, and the scope's importers outside."""
    outside = sorted(graph.outside.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    for target, importers in outside[:CLAIMED_OUTSIDE]:
        importer, line = min(importers.items())
        state.claim(
            f"{target}, outside {focus}, is imported by {plural(len(importers), 'file')} in scope",
            _import_cite(ctx, importer, line),
            topic="outside",
        )
    if outside:
        state.conclusions.append(
            f"{sum(len(i) for _, i in outside)} import edges leave {focus} for "
            f"{len(outside)} internal modules outside it (external to the scope), most: "
            f"{_short(f'{t} ({len(i)})' for t, i in outside)}"
        )
    if graph.importers_outside:
        users = set().union(*graph.importers_outside.values())
        state.conclusions.append(
            f"{len(graph.importers_outside)} modules of {focus} are imported by "
            f"{plural(len(users), 'file')} outside it"
        )


def _note_limits(state: TrackState, graph: _Graph, files: list[str]) -> None:
    """What the graph cannot show, as gaps."""
    if graph.unresolved_relative:
        state.gaps.append(
            f"{graph.unresolved_relative} relative imports name no file "
            "here (generated or missing modules)"
        )
    others = Counter(
        lang
        for p in files
        if (lang := language_for(p)) is not None
        and lang not in GRAPH_LANGUAGES
        and lang not in TEXT_LANGUAGES
    )
    if others:
        state.gaps.append(
            "imports are not resolved to files for "
            + ", ".join(f"{lang} ({plural(n, 'file')})" for lang, n in others.most_common())
        )
    state.gaps.append(
        "edges follow import statements only: dynamic imports, plugin "
        "registries and dotted paths in strings or settings are not seen"
    )


# -- the whole graph, for pictures ---------------------------------------------------------


def _packages(paths: Sequence[str], scope: str) -> dict[str, str]:
    """Each path's group: its directory at the first depth below the scope that splits the
    files into more than one directory (a `src/pkg/` layout is looked through)."""
    base = scope.split("/") if scope else []
    if scope in paths:  # the scope is one file: group it under its directory
        base = base[:-1]
    dirs = {p: p.split("/")[len(base) : -1] for p in paths}
    depth = 1
    while depth < MAX_PACKAGE_DEPTH and all(len(d) >= depth for d in dirs.values()):
        if len({tuple(d[:depth]) for d in dirs.values()}) > 1:
            break
        depth += 1
    return {p: "/".join(base + d[:depth]) or "." for p, d in dirs.items()}


def import_graph(ctx: Context) -> ImportGraph:
    """The whole import graph of `ctx`'s scope, the one `imports_track` summarizes: every
    module with its package, PageRank and cycle component, and every edge."""
    scope = ctx.scope or "."
    nodes = [p for p in ctx.files() if language_for(p) in GRAPH_LANGUAGES]
    if not nodes:
        return ImportGraph(
            root=str(ctx.root),
            scope=scope,
            gaps=[f"no {_GRAPHED} files in {scope}"],
        )
    state = TrackState(ctx=ctx)
    graph, _ = _gather(ctx, state, nodes)
    components, cycles, rank = _structure(ctx, graph)
    return _graph_record(ctx, nodes, graph, components, cycles, rank, state.gaps)


def _graph_record(
    ctx: Context,
    nodes: Sequence[str],
    graph: _Graph,
    components: list[list[str]],
    cycles: list[list[str]],
    rank: dict[str, float],
    gaps: list[str],
) -> ImportGraph:
    components = sorted(components, key=lambda c: (-len(c), c))
    member = {p: i for i, c in enumerate(components) for p in c}
    package = _packages(nodes, ctx.scope)
    return ImportGraph(
        root=str(ctx.root),
        scope=ctx.scope or ".",
        nodes=[
            GraphNode(path=p, package=package[p], rank=rank[p], component=member.get(p))
            for p in sorted(nodes)
        ],
        edges=[
            GraphEdge(
                source=src,
                target=dst,
                line=line,
                cycle=dst in graph.runs.get(src, {})
                and src in member
                and member[src] == member.get(dst),
                type_only=dst not in graph.runs.get(src, {}),
            )
            for src in sorted(graph.succ)
            for dst, line in sorted(graph.succ[src].items())
        ],
        components=components,
        cycles=cycles,
        gaps=list(gaps),
    )
