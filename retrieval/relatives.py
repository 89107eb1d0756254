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

- **The counterpart of a first file's type** (languages whose class headers write
  `extends` and `implements`). A Java project names the one implementation of an
  interface or abstract class `DefaultX` or `XImpl`, and the class that forwards every
  method of X to a wrapped X `XDelegate`; a method added to or changed in X has to be
  written in them too (the compiler asks it of an implementation; a delegate that does
  not forward it silently calls X's default). When one of the first `REACH` files
  defines X, the best-ranked listed file below `top` whose top-level class is so named
  and whose header extends or implements X is moved to `top`: jackson-core's
  `JsonParserDelegate` for `JsonParser`, mockito's `DefaultMockitoPlugins` for
  `MockitoPlugins`.

Invariants:
- A superclass is what a top-level class header writes after `extends` (a type
  parameter's bound, `<T extends Foo>`, is none), by its last name part; a superclass the
  index does not define as a class (`Exception`, `React.Component`) makes no family. An
  interface a class `implements`, or a Rust trait a type implements, is a contract, not
  shared code: not read (screened: it adds one instance and fires on `Versioned`,
  `AsyncRead` families without a gain).
- A counterpart is named after X and declares X after `extends` or `implements`, both:
  the name alone would take `DefaultFoo` for any class of that name, the header alone
  every implementation of a common interface (screened: it moved jackson-core's
  `ParserBase` and `GeneratorBase` for `JsonParser` and `JsonGenerator`, pushing a
  fixed file out of the first five).
- Relatives are looked for among the first `DEPTH` listed files only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TypeVar

from dowse.retrieval.lookups import IndexLookups

__all__ = [
    "COUNTERPART_NAMES",
    "DEPTH",
    "EXTENDS_LANGUAGES",
    "REACH",
    "counterpart_up",
    "counterparts",
    "module_root_up",
    "siblings_up",
    "superclass_of",
    "superclasses",
    "supertypes_of",
    "with_counterpart",
    "with_module_root",
    "with_siblings",
]

DEPTH = 20
"""How far down the listed files a relative is looked for (as deep as the word, closeness
and history rankings reach together)."""
EXTENDS_LANGUAGES = frozenset({"java", "scala", "javascript", "typescript", "tsx", "php"})
"""The languages dowse parses whose class headers name a superclass after `extends`."""

REACH = 3
"""How many first files' types a counterpart is looked for (the first file's alone
moved none of Java's 29 dev instances; three moved four, two of them fixed files)."""
COUNTERPART_NAMES = ("Default{}", "{}Impl", "{}Delegate")
"""The names a Java project gives the implementation and the delegate of a type `{}`."""

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


_SUPERTYPES = re.compile(
    r"\b(?:extends|implements)\s+([A-Za-z_$][\w$.\s,]*?)(?=\s*(?:\bimplements\b|\bpermits\b|[{(]|$))"
)

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _bare(signature: str) -> str:
    text = signature
    while True:  # type parameters, innermost first: their bounds are no supertype
        stripped = _TYPE_PARAMETERS.sub(" ", text)
        if stripped == text:
            return text
        text = stripped


def supertypes_of(signature: str) -> set[str]:
    """Every type a class or interface header extends or implements, by its last name
    part (`{"JsonParser"}` of `public class JsonParserDelegate extends JsonParser`,
    `{"Base", "Plugins", "Closeable"}` of `class A extends p.Base<T> implements
    Plugins, java.io.Closeable`)."""
    found: set[str] = set()
    text = _COMMENT.sub(" ", signature)
    for match in _SUPERTYPES.finditer(_bare(text)):
        for part in match.group(1).split(","):
            name = re.split(r"\s*\.\s*", part.strip())[-1]
            if re.fullmatch(r"[A-Za-z_$][\w$]*", name):
                found.add(name)
    return found


def counterparts(lookups: IndexLookups, paths: Iterable[str]) -> dict[str, tuple[str, set[str]]]:
    """Each of `paths`' top-level class or interface (the first one a file defines): its
    name and the types it extends or implements."""
    types: dict[str, tuple[str, set[str]]] = {}
    for row in lookups.rows_in(
        "symbols", ["path", "name", "kind", "signature", "parent", "language"], "path", paths
    ):
        if (
            row["kind"] in ("class", "interface")
            and not row["parent"]
            and row["language"] in EXTENDS_LANGUAGES
            and row["path"] not in types
        ):
            types[row["path"]] = (row["name"], supertypes_of(row["signature"] or ""))
    return types


def with_counterpart(
    files: Sequence[_F],
    path_of: Callable[[_F], str],
    types: Mapping[str, tuple[str, Collection[str]]],
    *,
    top: int,
) -> tuple[list[_F], dict[str, str]]:
    """`files` with the best-ranked listed counterpart below `top` of a type the first
    `REACH` files define moved to place `top` (`types`: each file's top-level type and
    what it extends or implements), and the moved file with that type."""
    if top < 1:
        return list(files), {}
    defined = {types[p][0] for f in files[:REACH] if (p := path_of(f)) in types}
    for f in files[top:]:
        name, supers = types.get(path_of(f), ("", ()))
        base = next(
            (
                t
                for t in sorted(defined & set(supers))
                if name in {n.format(t) for n in COUNTERPART_NAMES}
            ),
            None,
        )
        if base is not None:
            rest = [g for g in files if g is not f]
            return [*rest[: top - 1], f, *rest[top - 1 :]], {path_of(f): base}
    return list(files), {}


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


def counterpart_up(
    lookups: IndexLookups, files: Sequence[_F], path_of: Callable[[_F], str], *, top: int
) -> tuple[list[_F], dict[str, str]]:
    """`with_counterpart` on the first `DEPTH` of `files`, with the index's class and
    interface headers; `top` 0: nothing moves."""
    if top < 1 or len(files) <= top:
        return list(files), {}
    head = files[:DEPTH]
    ordered, moved = with_counterpart(
        head, path_of, counterparts(lookups, [path_of(f) for f in head]), top=top
    )
    return [*ordered, *files[DEPTH:]], moved
