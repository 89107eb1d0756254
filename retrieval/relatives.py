"""Relatives: listed files that the code ties to `ask`'s first files, moved up to them.

Two ties, each read from the index; only files already listed move, upwards, nothing is
added or dropped (RESULTS-multi.md, "Rust and Java: module roots and sibling classes in
`ask`"):

- **The module root** (Rust). A file's module is declared in its parent module (`mod
  impls;` in `src/de/mod.rs`, `mod de;` in `src/lib.rs`), and a fix that adds or renames
  something in the first file often declares or re-exports it there (serde's
  `src/lib.rs`, tokio-stream's `src/lib.rs`). The nearest module root of the first file
  that is listed, when it is listed below `top`, is moved to `top`.
- **Sibling classes** (languages whose class headers write `extends`). A class family
  shares its behaviour through a superclass, and a fix to that behaviour is repeated in
  each member: jackson-core's JSON parsers (`ReaderBasedJsonParser`,
  `UTF8StreamJsonParser`, `UTF8DataInputJsonParser`) all extend `ParserBase`. When two of
  the first `top` files define classes extending the same superclass of the index, the
  other listed files whose classes extend it follow the last member of the family among
  the first files, in their own order; never ahead of a member (placed after the second
  member, a sibling pushed a third, changed member out of the first five).

Invariants:
- A superclass is what a top-level class header writes after `extends` (a type
  parameter's bound, `<T extends Foo>`, is none), by its last name part; a superclass the
  index does not define as a class (`Exception`, `React.Component`) makes no family. An
  interface a class `implements`, or a Rust trait a type implements, is a contract, not
  shared code: not read (screened: it adds one instance and fires on `Versioned`,
  `AsyncRead` families without a gain).
- Relatives are looked for among the first `DEPTH` listed files only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TypeVar

from dowse.retrieval.lookups import IndexLookups

__all__ = [
    "DEPTH",
    "EXTENDS_LANGUAGES",
    "module_root_up",
    "siblings_up",
    "superclass_of",
    "superclasses",
    "with_module_root",
    "with_siblings",
]

DEPTH = 20
"""How far down the listed files a relative is looked for (as deep as the word, closeness
and history rankings reach together)."""
EXTENDS_LANGUAGES = frozenset({"java", "scala", "javascript", "typescript", "tsx", "php"})
"""The languages dowse parses whose class headers name a superclass after `extends`."""

_EXTENDS = re.compile(r"\bextends\s+([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)")
_TYPE_PARAMETERS = re.compile(r"<[^<>]*>")

_F = TypeVar("_F")


def superclass_of(signature: str) -> str | None:
    """The superclass a class header extends, by its last name part (`ParserBase` of
    `public class ReaderBasedJsonParser extends ParserBase`, of `extends
    base.ParserBase<T>`), or None."""
    text = signature
    while True:  # type parameters, innermost first: their bounds are no superclass
        stripped = _TYPE_PARAMETERS.sub(" ", text)
        if stripped == text:
            break
        text = stripped
    match = _EXTENDS.search(text)
    return re.split(r"\s*\.\s*", match.group(1))[-1] if match else None


def superclasses(lookups: IndexLookups, paths: Iterable[str]) -> dict[str, set[str]]:
    """The superclasses the top-level classes of each of `paths` extend, of those the
    index defines as classes."""
    extended: dict[str, set[str]] = {}
    for row in lookups.rows_in(
        "symbols", ["path", "kind", "signature", "parent", "language"], "path", paths
    ):
        if row["kind"] == "class" and not row["parent"] and row["language"] in EXTENDS_LANGUAGES:
            base = superclass_of(row["signature"] or "")
            if base is not None:
                extended.setdefault(row["path"], set()).add(base)
    bases = {b for found in extended.values() for b in found}
    defined = {
        r["name"]
        for r in lookups.rows_in("symbols", ["name", "kind"], "name", bases)
        if r["kind"] == "class"
    }
    return {path: found & defined for path, found in extended.items() if found & defined}


def with_siblings(
    files: Sequence[_F],
    path_of: Callable[[_F], str],
    bases: Mapping[str, Collection[str]],
    *,
    top: int,
) -> tuple[list[_F], dict[str, str]]:
    """`files` with the siblings of the first `top` files moved to follow the last member
    of their family among them, and for each moved file the superclass that moved it.
    `bases`: the superclasses (defined in the index) that each file's classes extend."""
    first = [path_of(f) for f in files[:top]]
    shared = Counter(base for path in first for base in set(bases.get(path, ())))
    family = {base for base, n in shared.items() if n >= 2}
    if not family:
        return list(files), {}

    def kin(path: str) -> str | None:
        return next((b for b in sorted(bases.get(path, ())) if b in family), None)

    moved = {path_of(f): base for f in files[top:] if (base := kin(path_of(f))) is not None}
    if not moved:
        return list(files), {}
    after = max(i for i, path in enumerate(first) if kin(path) is not None) + 1
    head = list(files[:after])
    siblings = [f for f in files[top:] if path_of(f) in moved]
    rest = [f for f in files[after:] if path_of(f) not in moved]
    return [*head, *siblings, *rest], moved


def with_module_root(
    files: Sequence[_F],
    path_of: Callable[[_F], str],
    parents: Mapping[str, str],
    *,
    top: int,
) -> tuple[list[_F], dict[str, str]]:
    """`files` with the nearest listed module root of the first file (`parents`: each
    module's declaring file) moved to place `top` when it is listed below, and the moved
    root with the first file's path."""
    if not files or top < 1:
        return list(files), {}
    place = {path_of(f): i for i, f in enumerate(files)}
    first = path_of(files[0])
    root, seen = parents.get(first), {first}
    while root is not None and root not in place and root not in seen:
        seen.add(root)
        root = parents.get(root)
    if root is None or root in seen or place[root] < top:
        return list(files), {}
    rest = [f for f in files if path_of(f) != root]
    return [*rest[: top - 1], files[place[root]], *rest[top - 1 :]], {root: first}


def siblings_up(
    lookups: IndexLookups, files: Sequence[_F], path_of: Callable[[_F], str], *, top: int
) -> tuple[list[_F], dict[str, str]]:
    """`with_siblings` on the first `DEPTH` of `files`, with the index's superclasses;
    below 2 first files: nothing moves."""
    if top < 2 or len(files) <= top:
        return list(files), {}
    head = files[:DEPTH]
    ordered, moved = with_siblings(
        head, path_of, superclasses(lookups, [path_of(f) for f in head]), top=top
    )
    return [*ordered, *files[DEPTH:]], moved


def module_root_up(
    lookups: IndexLookups, files: Sequence[_F], path_of: Callable[[_F], str], *, top: int
) -> tuple[list[_F], dict[str, str]]:
    """`with_module_root` on the first `DEPTH` of `files`, with the index's module
    declarations; `top` 0: nothing moves."""
    if top < 1 or len(files) <= top or not path_of(files[0]).endswith(".rs"):
        return list(files), {}
    head = files[:DEPTH]
    ordered, moved = with_module_root(head, path_of, lookups.module_parents(), top=top)
    return [*ordered, *files[DEPTH:]], moved
