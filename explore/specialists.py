"""Module specialists: how the code in scope uses one documented module, judged by its docs.

A specialist is added for each complex module found in scope, at most `MAX_SPECIALISTS`:

- an internal module: a directory holding code and its own context doc (``ai-context.md``,
  ``AGENTS.md``, ``CLAUDE.md``, or a ``README.md``/``README.rst`` below the root);
- a heavily used third-party Python package (imported by at least `MIN_IMPORTERS` files and
  `MIN_IMPORTER_SHARE` of the Python files in scope) that is installed where dowse runs:
  its documentation is its docstrings, read from the source with `ast`, never imported or
  executed. A package that is not installed gets no specialist, only a gap.

A specialist's only context is that documentation, and its only scope is how the rest of
the code uses the module (the module's own directory is its implementation, not a use):

    used      documented APIs the code calls, with their call sites
    missed    code re-implementing a documented helper: a function defined elsewhere with a
              documented API's name, or that name with a my_/custom_/local_ prefix or an
              _impl/_helper/_local suffix; or a string literal that the docs say a helper
              handles (`load_config()` reads "settings.json") written out by hand
    misuse    calls the docs rule out: "`X` is deprecated", "do not call `X`", "use `Y`
              instead of X" (X a call, or a phrase naming a literal such as settings.json);
              for a package, public functions that warn with a DeprecationWarning or say
              "deprecated" in their docstring - each with the documented alternative

The heuristics are chosen to be precise rather than complete, and say so in the gaps.
Test files are not checked for misuse or missed conveniences (tests call deprecated APIs on
purpose and build their fixtures by hand). Review only: a specialist never writes.

This module finds the complex modules in scope and chooses the specialists;
`explore.specialist_docs` reads their documentation and `explore.specialist_review` runs
each specialist's review.
"""

from __future__ import annotations

import importlib.util
import math
import posixpath
from collections import Counter, defaultdict
from pathlib import Path

from dowse.explore.patterns import local_module_names
from dowse.explore.specialist_docs import Docs, internal_docs
from dowse.explore.specialist_review import python_imports, specialist_track
from dowse.explore.tracks import STDLIB, Context, Track
from dowse.languages import CODE_LANGUAGES, is_test_path, language_for

__all__ = ["MAX_SPECIALISTS", "specialist_tracks"]

MAX_SPECIALISTS = 4
MIN_IMPORTERS = 3
MIN_IMPORTER_SHARE = 0.02
MAX_IMPORT_SCAN = 600

_DOC_NAMES = {"ai-context.md": 0, "agents.md": 1, "claude.md": 2, "readme.md": 3, "readme.rst": 4}


def specialist_tracks(ctx: Context) -> list[Track]:
    """One review track per complex module in scope: internal modules with their own
    context doc and heavily used installed packages, alternating, at most MAX_SPECIALISTS.

    An internal module's doc is read here (a doc that names none of the module's functions
    and no rule makes no specialist); a package's docstrings are read by its track. Notes on
    what was left out (a package that is not installed, ...) go to the first track's gaps.
    """
    notes: list[str] = []
    internal: list[Docs] = []
    for module, sources in _internal_modules(ctx):
        if len(internal) == MAX_SPECIALISTS:
            break
        docs = internal_docs(ctx, module, sources)
        if docs.apis or docs.rules:
            internal.append(docs)
        else:
            notes.append(
                f"{', '.join(sources)} names none of {module}'s functions and no "
                "usage rule: no specialist"
            )
    heavy, left_out = _heavy_packages(ctx)
    notes += left_out
    # A package's docstrings are read by its track, in parallel with the others.
    packages = [Docs(module=name, kind="package", sources=[origin]) for name, origin in heavy]
    chosen: list[Docs] = []
    while len(chosen) < MAX_SPECIALISTS and (internal or packages):
        for queue in (internal, packages):
            if queue and len(chosen) < MAX_SPECIALISTS:
                chosen.append(queue.pop(0))
    if internal or packages:
        notes.append(
            f"{len(internal) + len(packages)} more complex modules than "
            f"specialists ({MAX_SPECIALISTS}): not reviewed"
        )
    return [specialist_track(ctx, docs, notes if i == 0 else []) for i, docs in enumerate(chosen)]


# -- detection ---------------------------------------------------------------------------


def _internal_modules(ctx: Context) -> list[tuple[str, list[str]]]:
    """(directory, its context docs in priority order), best documented and biggest first."""
    docs: dict[str, list[str]] = defaultdict(list)
    for p in ctx.files():
        d, name = posixpath.split(p)
        # The scope's own doc describes what is explored, not a module inside it.
        if d and d != ctx.scope and name.lower() in _DOC_NAMES and not is_test_path(d + "/"):
            docs[d].append(p)
    code = [p for p in ctx.files() if language_for(p) in CODE_LANGUAGES]
    ranked = []
    for d, paths in docs.items():
        n = sum(1 for p in code if p.startswith(d + "/"))
        if n:
            paths.sort(key=lambda p: _DOC_NAMES[posixpath.basename(p).lower()])
            ranked.append((_DOC_NAMES[posixpath.basename(paths[0]).lower()], -n, d, paths))
    return [(d, paths) for _, _, d, paths in sorted(ranked)]


def _heavy_packages(ctx: Context) -> tuple[list[tuple[str, str]], list[str]]:
    """(package, its source file) for installed third-party packages imported by many files
    in scope, most importers first; and notes on the ones left out."""
    py = [p for p in ctx.files() if p.endswith(".py")]
    # A large scope is judged on an evenly spaced sample of its Python files.
    scanned = py[:: math.ceil(len(py) / MAX_IMPORT_SCAN)] if py else []
    local = local_module_names(ctx.all_files())
    importers: Counter[str] = Counter()
    for p in scanned:
        lines = ctx.lines(p)
        if lines is None:
            continue
        importers.update({top for top, _, _ in python_imports("\n".join(lines))})
    threshold = max(MIN_IMPORTERS, math.ceil(MIN_IMPORTER_SHARE * len(scanned)))
    out: list[tuple[str, str]] = []
    notes: list[str] = []
    root = ctx.root.resolve()
    for name, n in sorted(importers.items(), key=lambda kv: (-kv[1], kv[0])):
        if n < threshold or name in STDLIB or name in local:
            continue
        origin = _source_of(name)
        if origin is None:
            notes.append(
                f"`{name}` is imported by {n} of {len(scanned)} Python files but is "
                "not installed here as Python source: no offline documentation, no "
                "specialist"
            )
        elif root in Path(origin).resolve().parents:
            continue  # the package is this repository itself, installed in development mode
        else:
            out.append((name, origin))
    return out, notes


def _source_of(name: str) -> str | None:
    """The package's source file, found without importing it; None when there is none."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return spec.origin
