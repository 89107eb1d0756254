"""Where things live in the library, as issue 21 set them: one git runner (`dowse.git`),
the store the only door to LanceDB (`indexer.store`, its tables and queries), the shared
basics (errors, languages, tokens, budgets) importing no part of the library.

Read from the source with `ast`, nothing imported: a module that breaks one of these
fails here with its name and line.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator

from conftest import REPO, repository_sources

_NOT_LIBRARY = {"tests", "benchmarks", "fixtures", "build", "docs"}


@functools.cache
def _library() -> tuple[tuple[str, ast.Module], ...]:
    """(path relative to the repository, parsed module) of every module of the library,
    parsed once for the module's tests (they only read the trees)."""
    return tuple(
        (rel.as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        for path in repository_sources()
        for rel in [path.relative_to(REPO)]
        if rel.parts[0] not in _NOT_LIBRARY
    )


def _imports(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, module) of every import in the module, at any depth (deferred ones too)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module


def test_the_library_is_found():
    modules = dict(_library())
    assert {"git.py", "cli.py", "indexer/store.py", "retrieval/hybrid.py"} <= set(modules)
    assert not [m for m in modules if m.startswith(("tests/", "benchmarks/"))]


def test_git_runs_through_the_one_runner():
    # dowse.git is hardened for repositories dowse does not trust (its docstring); a
    # second place starting processes would start git without that.
    spawning = sorted(
        f"{rel}:{line}"
        for rel, tree in _library()
        for line, module in _imports(tree)
        if module.split(".")[0] in ("subprocess", "pty") or module == "asyncio.subprocess"
    )
    assert [where.split(":")[0] for where in spawning] == ["git.py"], spawning


def test_only_the_indexer_reaches_lancedb():
    # The store builds the queries and turns LanceDB's failures into dowse's errors
    # (indexer/store.py); a table opened elsewhere would bypass both.
    reached = []
    for rel, tree in _library():
        if rel.startswith("indexer/"):
            continue
        for line, module in _imports(tree):
            if module.split(".")[0] in ("lancedb", "lance"):
                reached.append(f"{rel}:{line}: imports {module}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("table", "open_table", "db"):
                reached.append(f"{rel}:{node.lineno}: .{node.attr}")
    assert reached == []


def test_the_shared_basics_import_no_part_of_the_library():
    # Every part may import these; they import none of the parts (`indexer`, `retrieval`,
    # `explore`, `server`, `evaluation`), so no part reaches into another for them.
    parts = ("indexer", "retrieval", "explore", "server", "evaluation")
    found = [
        f"{rel}:{line}: {module}"
        for rel, tree in _library()
        if rel in ("errors.py", "languages.py", "tokens.py", "budgets.py", "quote.py", "git.py")
        for line, module in _imports(tree)
        if module.split(".")[:2] in (["dowse", part] for part in parts)
    ]
    assert found == []
