"""Resolve import statements to the indexed files they refer to.

Resolution is by path convention only (no interpreter, no build system): Python dotted
and relative modules, and relative JavaScript/TypeScript specifiers. Anything else (the
standard library, third-party packages, languages without a convention here) stays
unresolved (None) rather than guessed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection

__all__ = ["resolve_import", "suffix_map"]

_JS_LANGS = {"javascript", "typescript", "tsx"}
_JS_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


def _python(
    module: str, importer: str, paths: Collection[str], suffixes: dict[str, str]
) -> str | None:
    level = len(module) - len(module.lstrip("."))
    dotted = module[level:]
    parts = [p for p in dotted.split(".") if p]
    if level:
        base = posixpath.dirname(importer)
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        stems = [posixpath.join(base, *parts) if parts else base]
    else:
        if not parts:
            return None
        stems = ["/".join(parts)]
    for stem in stems:
        for cand in (stem + ".py", stem + "/__init__.py", stem + ".pyi"):
            if cand in paths:
                return cand
    if not level:
        # A package under a source directory (src/pkg/mod.py) or a sub-project:
        # match the dotted path as a suffix of an indexed path.
        for tail in ("/".join(parts) + ".py", "/".join(parts) + "/__init__.py"):
            if tail in suffixes:
                return suffixes[tail]
    return None


def _js(module: str, importer: str, paths: Collection[str]) -> str | None:
    if not module.startswith("."):
        return None
    stem = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
    if stem in paths:
        return stem
    for ext in _JS_EXTS:
        if stem + ext in paths:
            return stem + ext
    for ext in _JS_EXTS:
        if f"{stem}/index{ext}" in paths:
            return f"{stem}/index{ext}"
    return None


def suffix_map(paths: Collection[str]) -> dict[str, str]:
    """Path suffixes of the Python files below a source directory ('b/c.py' -> 'src/b/c.py'),
    shortest path wins.

    A suffix counts only where the directory before it is not itself a package: an
    absolute `import datetime` can mean `src/datetime.py` but never
    `pkg/functions/datetime.py`, which is only importable as `pkg.functions.datetime`.
    """
    packages = {
        posixpath.dirname(p)
        for p in paths
        if posixpath.basename(p) in ("__init__.py", "__init__.pyi")
    }
    out: dict[str, str] = {}
    for p in sorted(paths, key=lambda p: (p.count("/"), p)):
        if p.endswith((".py", ".pyi")):
            parts = p.split("/")
            for i in range(1, len(parts)):
                if "/".join(parts[:i]) not in packages:
                    out.setdefault("/".join(parts[i:]), p)
    return out


def resolve_import(
    module: str,
    importer: str,
    language: str,
    paths: Collection[str],
    suffixes: dict[str, str] | None = None,
) -> str | None:
    """The indexed file `module` (as written in `importer`) refers to, if any."""
    if not module:
        return None
    if language == "python":
        return _python(module, importer, paths, suffixes if suffixes is not None else {})
    if language in _JS_LANGS:
        return _js(module, importer, paths)
    return None
