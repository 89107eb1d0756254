"""Who calls a definition, and what it calls: the refs table resolved at query time.

The index stores each reference as a name as written (`indexer.references`); which
definition it means is decided here, against the definitions and imports of the whole
index, in this order of evidence (`Via`):

    same-file   the referencing file defines the name itself
    import      the file imports a file that defines it (in Rust, a `use` of the module
                the file is; `use a::b::item` brings `item` alone), or imports the name from a
                package whose directory holds the definition, or reaches it through a
                module it imports (`flask.helper()`, `requests.utils.helper()`, re-exports
                followed; `from pkg import mod` then `mod.helper()`, the module's file
                wherever the tree holds it) or a Rust path naming its module
                (`grep::cli::helper()`)
    package     a file in the same directory defines it (Go, Java, C# need no import)
    name        the index defines the name exactly once, and nothing above applies

Invariants:
- A name the file imports from outside the index (`from pathlib import Path`, an npm
  package) means that outside thing: it resolves to nothing, even when the index
  defines the same name elsewhere.
- A method call through a receiver (`x.get()`) on a name the language's runtime
  provides (`builtin_names`) means a method of the index only when the receiver is named
  after its class (`cache.get()`, `self._cache.get()` for `Cache.get`) or the calling
  definition names the class (`s = Session(); s.get(url)`), and then only by evidence
  above `name`: `self._aliases.get()` is a dict's, whatever the file imports; through a
  receiver the file does not import as a module, it means a method of the file, never
  its free function (Python, Rust, Go), and in Python never any free function.
- A method call through a receiver that is a call's result (`c.Parent().HelpFunc()`)
  means a method of a class that call returns, when the index's definitions of the
  called name all state their return type (`Parent() *Command`) and it is no method
  the runtime gives every value (clap's `self.name.clone().translate()`): `c.Flags().
  HasAvailableFlags()` on `Flags() *flag.FlagSet` is the library's, not `Command`'s.
- A reference inside a definition's own lines does not make it its own caller.
- A Go import names a package and a C or C++ `#include` a file: neither means a
  definition (grpc-go's `import ".../keepalive"` is no reference to a `keepalive` method).
- A macro invocation (kind "macro") means a macro definition; in Rust, where a macro is
  always invoked with `!`, no other reference means one.
- An index without the refs table (written before it existed) answers with no
  references and `indexed=False`, until its next run fills the table.
"""

from __future__ import annotations

import builtins
import posixpath
import re
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dowse.indexer.records import ReferenceKind
from dowse.indexer.store import (
    Store,
    all_of,
    where_between,
    where_equals,
    where_in,
)
from dowse.quote import one_line
from dowse.retrieval.builtin_names import builtin_methods
from dowse.retrieval.records import check_query
from dowse.retrieval.symbols import qualifies

if TYPE_CHECKING:
    from dowse.retrieval.lookups import IndexLookups

__all__ = [
    "DEFINITION_COLUMNS",
    "Callee",
    "Caller",
    "DefinitionRef",
    "References",
    "Via",
    "Link",
    "called_within",
    "callees_of",
    "find_references",
    "links_of",
    "render_references",
]

Via = Literal["same-file", "import", "package", "name"]
_Site = tuple[int, ReferenceKind, Via]
"""Where a reference is: its line, its kind, the evidence it resolved on."""
_STRENGTH: dict[str, int] = {"same-file": 0, "import": 1, "package": 2, "name": 3}
_SELF = frozenset({"self", "this", "cls", "Self", "$this", "static", "super"})
_NOT_DEFINITIONS = ("heading",)
_FAMILY = {"typescript": "javascript", "tsx": "javascript", "cpp": "c"}
"""Languages whose files call each other's definitions."""
_PYTHON_BUILTINS = frozenset(dir(builtins))
_IMPORTS_NEEDED = frozenset({"python", "javascript", "rust"})
_MEMBERS = frozenset({"method", "constructor", "field"})
_IMPORTS_FILES = frozenset({"go", "c"})
"""Languages whose imports name a package or a file only, never a definition."""
DEFINITION_COLUMNS = [
    "id",
    "path",
    "name",
    "qualified_name",
    "kind",
    "signature",
    "start_line",
    "end_line",
    "parent",
    "language",
]
"""What following references reads of a definition (the look-ups hold these columns).

Defined here, not in `lookups`, so that the records importing this module do not
import pyarrow."""
_REFERENCE_COLUMNS = ["path", "line", "name", "kind", "qualifier", "from_id", "from_name"]
DEFAULT_KINDS: tuple[ReferenceKind, ...] = ("call", "type", "other", "macro")
"""The reference kinds that make a caller; imports are where a name comes from."""


class _Record(BaseModel):
    # Built on first use: an `ask` follows links without making these records.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class DefinitionRef(_Record):
    id: str
    path: str
    qualified_name: str
    kind: str
    signature: str = ""
    start_line: int
    end_line: int


class Caller(_Record):
    """One definition (or a file's top level) that references the target."""

    path: str
    definition: DefinitionRef | None = Field(
        description="the definition the references are in; None at the file's top level"
    )
    lines: list[int] = Field(description="where it references the target, ascending")
    kinds: list[ReferenceKind] = Field(description="how it references it, one per line")
    target: str = Field(description="id of the definition it references")
    via: Via = Field(description="the evidence that the name means the target")


class Callee(_Record):
    """One definition the source references."""

    definition: DefinitionRef
    lines: list[int] = Field(description="where the source references it, ascending")
    kinds: list[ReferenceKind]
    via: Via


class References(_Record):
    name: str = Field(description="the name asked for")
    definitions: list[DefinitionRef] = Field(description="the definitions the name means")
    callers: list[Caller] = Field(default_factory=list)
    callees: list[Callee] = Field(default_factory=list)
    truncated: bool = Field(default=False, description="more callers or callees than the limit")
    indexed: bool = Field(
        default=True, description="false for an index built before references were kept"
    )


def find_references(
    store: Store,
    name: str,
    *,
    callers: bool = True,
    callees: bool = True,
    kinds: Sequence[ReferenceKind] = DEFAULT_KINDS,
    limit: int = 50,
    within: Callable[[str], bool] | None = None,
    lookups: IndexLookups | None = None,
) -> References:
    """The definitions `name` means, with their callers and/or callees.

    `name` is a definition's name, optionally qualified (`Store.open`, `store.Store`),
    as `dowse symbol` takes it. Callers reference one of those definitions with a
    reference of one of `kinds`, in a file `within` accepts (default: any); callees are
    the definitions of the index their bodies reference. At most `limit` of each,
    strongest evidence first. A searcher's `lookups` answer the reads of definitions,
    files and imports from the rows they hold (`links_of`).
    """
    check_query(name, "name")
    qualifier, _, last = name.strip().rpartition(".")
    reads = _Reads(store, lookups)
    definitions = [d for d in _definitions(reads, [last]) if qualifies(d, qualifier)]
    answer = References(name=name, definitions=[_definition(d) for d in definitions])
    if not store.has_table("refs"):
        return answer.model_copy(update={"indexed": False})
    found_callers: list[Caller] = []
    found_callees: list[Callee] = []
    if callers and definitions:
        found_callers = _callers(reads, definitions, kinds, within)
    if callees and definitions:
        found_callees = _callees(reads, definitions, kinds)
    return answer.model_copy(
        update={
            "callers": found_callers[:limit],
            "callees": found_callees[:limit],
            "truncated": len(found_callers) > limit or len(found_callees) > limit,
        }
    )


def callees_of(
    store: Store, definition: DefinitionRef, *, kinds: Sequence[ReferenceKind] = DEFAULT_KINDS
) -> list[Callee]:
    """The definitions of the index that one definition's body references, strongest
    evidence first (`find_references` takes them for every definition of a name)."""
    if not store.has_table("refs"):
        return []
    row = {
        "id": definition.id,
        "path": definition.path,
        "start_line": definition.start_line,
        "end_line": definition.end_line,
    }
    return _callees(_Reads(store), [row], kinds)


class Link(_Record):
    """A definition one reference away from another: what the retrieval loop follows."""

    relation: Literal["caller", "callee"]
    of: str = Field(description="qualified name of the definition followed from")
    path: str
    line: int = Field(description="the referencing line (caller), the first line (callee)")
    qualified_name: str = Field(description="the caller's or callee's; '' at top level")


def links_of(
    store: Store,
    spans: Sequence[tuple[str, int, int, str | None]],
    *,
    limit: int = 1,
    skip: Callable[[str, int], bool] = lambda path, line: False,
    lookups: IndexLookups | None = None,
) -> list[Link]:
    """Callers and callees of the definitions in `spans` ((path, start, end, qualified
    name or None)): the named definition, or for a span that names none (small
    definitions merged into one chunk) the first `_PER_SPAN` functions, methods or
    classes that start in it. At most `limit` of each per definition, strongest evidence
    first, callers first, none at a (path, line) `skip` refuses. A searcher's `lookups`
    answer the reads of definitions, files and imports from the rows they hold (the
    same rows as the queries, which take a few ms each: 80 % of them in a django ask)."""
    if not spans or not store.has_table("refs"):
        return []
    reads = _Reads(store, lookups)
    paths = {path for path, _, _, _ in spans}
    by_path: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in sorted(
        reads.rows_in("symbols", DEFINITION_COLUMNS, "path", paths), key=lambda r: r["start_line"]
    ):
        by_path[r["path"]].append(r)
    rows: list[dict[str, Any]] = []
    for path, start, end, name in spans:
        if name:
            rows += [r for r in by_path[path] if r["qualified_name"] == name][:1]
        else:
            inside = [
                r
                for r in by_path[path]
                if start <= r["start_line"] <= end and r["kind"] in _FOLLOWED_KINDS
            ]
            rows += inside[:_PER_SPAN]
    out: list[Link] = []
    if not rows:
        return out
    # One read of the refs for every definition followed, one resolver for them all: a
    # cycle follows a few definitions, and each of them asked the refs table twice.
    names = sorted({r["name"] for r in rows})
    named = _refs_named(reads, names, DEFAULT_KINDS)
    bodies = _refs_inside(reads, rows, DEFAULT_KINDS)
    candidates = _definitions(reads, {*names, *(r["name"] for refs in bodies for r in refs)})
    refs_paths = {r["path"] for r in named} | {r["path"] for refs in bodies for r in refs}
    resolver = _Resolver(reads, refs_paths, candidates)
    groups = [
        _caller_groups(resolver, [row], [r for r in named if r["name"] == row["name"]])
        for row in rows
    ]
    owners = _owners(reads, [g for grouped in groups for g in grouped])
    for row, grouped, refs in zip(rows, groups, bodies, strict=True):
        of = row["qualified_name"]
        callers = [c for c in _callers_from(grouped, owners) if not skip(c.path, c.lines[0])]
        callees = [
            c
            for c in _callees_among(resolver, [row], refs)
            if not skip(c.definition.path, c.definition.start_line)
        ]
        for caller in callers[:limit]:
            name = caller.definition.qualified_name if caller.definition else ""
            out.append(
                Link(
                    relation="caller",
                    of=of,
                    path=caller.path,
                    line=caller.lines[0],
                    qualified_name=name,
                )
            )
        for callee in callees[:limit]:
            d = callee.definition
            out.append(
                Link(
                    relation="callee",
                    of=of,
                    path=d.path,
                    line=d.start_line,
                    qualified_name=d.qualified_name,
                )
            )
    return out


def called_within(
    store: Store,
    spans: Sequence[tuple[str, int, int, str | None]],
    paths: Iterable[str],
    *,
    lookups: IndexLookups | None = None,
) -> list[DefinitionRef]:
    """The definitions in `paths` that the lines of `spans` ((path, start, end, qualified
    name or None), best first) call, in the spans' order, each once: what the code a
    question found hands its work to. A call inside the span's own lines (a nested or
    neighbouring definition the span shows already) is none, nor a recursive one; nor is
    a call that means several definitions (`handler.on_year()` on whichever of a file's
    handler classes, an interface's implementations): it says nothing of which one acts.
    The definitions of one name in one file (a C prototype and its body) are one
    definition, its longest."""
    wanted = set(paths)
    if not spans or not wanted or not store.has_table("refs"):
        return []
    reads = _Reads(store, lookups)
    named = {
        (r["path"], r["qualified_name"]): r
        for r in reads.rows_in(
            "symbols", DEFINITION_COLUMNS, "path", {path for path, _, _, _ in spans}
        )
    }
    sources: list[dict[str, Any]] = [
        {
            "id": named[(path, name)]["id"] if (path, name) in named else "",
            "path": path,
            "start_line": start,
            "end_line": end,
        }
        for path, start, end, name in spans
    ]
    inside = _refs_inside(reads, sources, ("call",))
    refs = [r for found in inside for r in found]
    if not refs:
        return []
    resolver = _Resolver(
        reads, {r["path"] for r in refs}, _definitions(reads, {r["name"] for r in refs})
    )
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for source, found in zip(sources, inside, strict=True):
        for ref in sorted(found, key=lambda r: r["line"]):
            meant: dict[tuple[str, str], dict[str, Any]] = {}
            for target, _ in resolver.resolve(ref):
                if target["id"] == source["id"]:
                    continue  # a recursive call
                key = (target["path"], target["qualified_name"])
                held = meant.get(key)
                if held is None or _length(target) > _length(held):
                    meant[key] = target
            if len(meant) != 1:
                continue
            ((key, target),) = meant.items()
            own = target["path"] == source["path"] and (
                source["start_line"] <= target["start_line"] <= source["end_line"]
            )
            if target["path"] in wanted and not own:
                out.setdefault(key, target)
    return [_definition(d) for d in out.values()]


def _length(definition: dict[str, Any]) -> int:
    return int(definition["end_line"]) - int(definition["start_line"])


_PER_SPAN = 2
_FOLLOWED_KINDS = frozenset({"function", "method", "class", "struct", "constructor"})


def render_references(refs: References, *, callers: bool = True, callees: bool = True) -> str:
    """Plain text, one reference site per line: `path:line  in <definition>  (kind, via)`
    for callers, `path:start-end  <kind> <name>  (line ...; via)` for callees."""
    lines: list[str] = []
    for d in refs.definitions:
        where = f"{one_line(d.path)}:{d.start_line}-{d.end_line}"
        if callers:
            mine = [c for c in refs.callers if c.target == d.id]
            lines.append(f"callers of {one_line(d.qualified_name)} ({where}): {len(mine)}")
            for c in mine:
                owner = one_line(c.definition.qualified_name) if c.definition else "(top level)"
                for line, kind in zip(c.lines, c.kinds, strict=True):
                    lines.append(f"  {one_line(c.path)}:{line}  in {owner}  ({kind}, {c.via})")
        if callees and not callers:
            lines.append(f"{one_line(d.qualified_name)} ({where}) references:")
    if callees:
        if callers:
            lines.append("callees:")
        for e in refs.callees:
            t = e.definition
            at = ", ".join(map(str, e.lines))
            lines.append(
                f"  {one_line(t.path)}:{t.start_line}-{t.end_line}  {t.kind} "
                f"{one_line(t.qualified_name)}  (line {at}; {e.via})"
            )
        if not refs.callees:
            lines.append("  (none the index defines)")
    if refs.truncated:
        lines.append("… more; raise --limit")
    return "\n".join(lines)


# -- callers -----------------------------------------------------------------------------


def _callers(
    reads: _Reads,
    targets: list[dict[str, Any]],
    kinds: Sequence[ReferenceKind],
    within: Callable[[str], bool] | None = None,
) -> list[Caller]:
    names = sorted({t["name"] for t in targets})
    refs = _refs_named(reads, names, kinds, within)
    resolver = _Resolver(reads, {r["path"] for r in refs}, _definitions(reads, names))
    groups = _caller_groups(resolver, targets, refs)
    return _callers_from(groups, _owners(reads, groups))


_Groups = dict[tuple[str, str | None, str], list[_Site]]
"""(referencing path, the definition holding the references or None, target id) -> the
sites there."""


def _refs_named(
    reads: _Reads,
    names: Sequence[str],
    kinds: Sequence[ReferenceKind],
    within: Callable[[str], bool] | None = None,
) -> list[dict[str, Any]]:
    """The references to `names` of one of `kinds`, in files `within` accepts, in the
    table's order."""
    return [
        r
        for r in reads.store.rows("refs", _REFERENCE_COLUMNS, where=where_in("name", names))
        if r["kind"] in kinds and (within is None or within(r["path"]))
    ]


def _caller_groups(
    resolver: _Resolver, targets: list[dict[str, Any]], refs: list[dict[str, Any]]
) -> _Groups:
    """`refs` that mean one of `targets`, grouped by where they are."""
    wanted = {t["id"] for t in targets}
    groups: _Groups = defaultdict(list)
    for ref in refs:
        for match, via in resolver.resolve(ref):
            if match["id"] not in wanted or _inside(ref, match):
                continue
            groups[(ref["path"], ref["from_id"], match["id"])].append(
                (ref["line"], ref["kind"], via)
            )
    return groups


def _owners(reads: _Reads, groups: Iterable[tuple[str, str | None, str]]) -> dict[str, Any]:
    """The definitions that hold the references of `groups`, by id."""
    ids = {from_id for _, from_id, _ in groups if from_id is not None}
    return {r["id"]: r for r in _rows_by_id(reads, ids)}


def _callers_from(groups: _Groups, owners: dict[str, Any]) -> list[Caller]:
    out: list[Caller] = []
    for (path, from_id, target), sites in groups.items():
        sites.sort()
        owner = owners.get(from_id) if from_id is not None else None
        out.append(
            Caller(
                path=path,
                definition=_definition(owner) if owner is not None else None,
                lines=[line for line, _, _ in sites],
                kinds=[kind for _, kind, _ in sites],
                target=target,
                via=_strongest(sites),
            )
        )
    out.sort(key=lambda c: (_STRENGTH[c.via], c.path, c.lines[0]))
    return out


def _strongest(sites: Sequence[_Site]) -> Via:
    return min((via for _, _, via in sites), key=_STRENGTH.__getitem__)


def _inside(ref: dict[str, Any], definition: dict[str, Any]) -> bool:
    inside: bool = (
        ref["path"] == definition["path"]
        and definition["start_line"] <= ref["line"] <= definition["end_line"]
    )
    return inside


# -- callees -----------------------------------------------------------------------------


def _callees(
    reads: _Reads, sources: list[dict[str, Any]], kinds: Sequence[ReferenceKind]
) -> list[Callee]:
    refs = [r for inside in _refs_inside(reads, sources, kinds) for r in inside]
    if not refs:
        return []
    candidates = _definitions(reads, {r["name"] for r in refs})
    resolver = _Resolver(reads, {r["path"] for r in refs}, candidates)
    return _callees_among(resolver, sources, refs)


def _refs_inside(
    reads: _Reads, sources: list[dict[str, Any]], kinds: Sequence[ReferenceKind]
) -> list[list[dict[str, Any]]]:
    """For each of `sources`, the references of one of `kinds` within its lines, in the
    table's order: one query for them all."""
    spans = sorted({(s["path"], s["start_line"], s["end_line"]) for s in sources})
    if not spans:
        return []
    where = " OR ".join(
        f"({all_of(where_equals('path', path), where_between('line', start, end))})"
        for path, start, end in spans
    )
    rows = [
        r for r in reads.store.rows("refs", _REFERENCE_COLUMNS, where=where) if r["kind"] in kinds
    ]
    return [
        [
            r
            for r in rows
            if r["path"] == s["path"] and s["start_line"] <= r["line"] <= s["end_line"]
        ]
        for s in sources
    ]


def _callees_among(
    resolver: _Resolver, sources: list[dict[str, Any]], refs: list[dict[str, Any]]
) -> list[Callee]:
    """The definitions `refs` (the references within `sources`) mean."""
    source_ids = {s["id"] for s in sources}
    groups: dict[str, list[_Site]] = defaultdict(list)
    by_id: dict[str, dict[str, Any]] = {}
    for ref in refs:
        for target, via in resolver.resolve(ref):
            if target["id"] in source_ids:
                continue  # a recursive call is no callee
            by_id[target["id"]] = target
            groups[target["id"]].append((ref["line"], ref["kind"], via))
    out = [
        Callee(
            definition=_definition(by_id[target]),
            lines=sorted({line for line, _, _ in sites}),
            kinds=[kind for _, kind, _ in sorted(sites)],
            via=_strongest(sites),
        )
        for target, sites in groups.items()
    ]
    out.sort(key=lambda c: (_STRENGTH[c.via], c.lines[0], c.definition.path))
    return out


# -- resolution --------------------------------------------------------------------------


class _Resolver:
    """Resolves references in a few files against the definitions of a few names."""

    def __init__(self, reads: _Reads, paths: set[str], candidates: list[dict[str, Any]]) -> None:
        self.by_name: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for c in candidates:
            self.by_name[c["name"]].append(c)
        # (name, language family) -> its candidates: a name's references are resolved one
        # by one, hundreds for a common method name, each against the same definitions.
        self._of_family: dict[tuple[str, str], list[dict[str, Any]]] = {}
        # path -> the indexed files it imports; path -> name -> where the name comes from:
        # an indexed file or package directory ("pkg/"), else the module as written.
        self.imported: dict[str, set[str]] = defaultdict(set)
        self.named: dict[str, dict[str, tuple[str | None, str]]] = defaultdict(dict)
        self.modules: dict[str, set[str]] = defaultdict(set)  # bare imports' first parts
        # path -> module as written -> the indexed file a bare import of it resolved to
        self.module_files: dict[str, dict[str, str]] = defaultdict(dict)
        self.languages: dict[str, str] = {}
        self.reads = reads
        self._read: set[str] = set()  # files whose imports are loaded
        # class name -> the (path, definition id) that reference it by name
        self._mentions: dict[str, set[tuple[str, str | None]]] = {}
        # (function name, language family) -> the type names its definitions return
        self._returns: dict[tuple[str, str], frozenset[str] | None] = {}
        if paths:
            self._load_imports(paths)
            for row in reads.rows_in("files", ["path", "language"], "path", paths):
                self.languages[row["path"]] = row["language"]
        for c in candidates:
            self.languages.setdefault(c["path"], c["language"])

    def _load_imports(self, paths: set[str]) -> None:
        paths = paths - self._read
        if not paths:
            return
        self._read |= paths
        columns = ["path", "module", "names", "resolved"]
        for row in self.reads.rows_in("imports", columns, "path", paths):
            resolved = row["resolved"]
            origin = resolved
            if resolved is not None:
                if _imports_file(row["path"], row["module"], row["names"], resolved):
                    self.imported[row["path"]].add(resolved)
                elif not row["names"]:
                    # Rust's `use a::b::item`: the item's name comes from there, not all
                    # of the file's (tokio's tests `use tokio_test::assert_pending`, and
                    # their `rt.block_on(...)` was tokio-test's free `block_on`).
                    item = row["module"].rsplit("::", 1)[-1]
                    self.named[row["path"]][item] = (resolved, row["module"])
                if posixpath.basename(resolved).startswith("__init__."):
                    # `from pkg import mod`, `from pkg import Name` (re-exported): the
                    # package directory stands for its files.
                    origin = posixpath.dirname(resolved) + "/"
            if not row["names"]:
                self.modules[row["path"]].add(row["module"].lstrip(".").split(".", 1)[0])
                if resolved is not None:
                    self.module_files[row["path"]][row["module"]] = resolved
            for imported in row["names"] or []:
                self.named[row["path"]][imported.rsplit(".", 1)[-1]] = (origin, row["module"])

    def _from_import(
        self,
        path: str,
        key: str,
        candidates: list[dict[str, Any]],
        *,
        hops: int = 1,
        name: str | None = None,
    ) -> list[dict[str, Any]] | None:
        """The candidates `path`'s import of `key` means; None when it imports no `key`,
        [] when it imports it from outside the index. A file of the index that imports
        the name itself (a re-export: `from .budget import estimate_tokens`) is followed
        `hops` more times. `name`: the name reached through `key` (`f` of `key.f()`),
        when `key` is a qualifier rather than the name itself."""
        name = key if name is None else name
        entry = self.named.get(path, {}).get(key)
        if entry is None:
            return None
        origin, module = entry
        if origin is not None:
            hit = [c for c in candidates if _from(c["path"], origin)]
            files = [] if origin.endswith("/") else [origin]
        else:
            # Unresolved: the module as written may still name an indexed file (a package
            # whose root is the indexed directory); if none, it is from outside the index.
            hit = [c for c in candidates if _names_file(module, key, c["path"])]
            files = self.reads.files_of_module(module)
        if (origin is None or origin.endswith("/")) and key != name:
            # `from pkg import mod` then `mod.f()`: `mod` is the package's module file,
            # which the import itself does not resolve to when the importer is the
            # package's own `__init__` (pytest's `from _pytest.assertion import
            # truncate`) or the package sits under a source directory (`src/`).
            inside = self.reads.submodule_files(path, module, key)
            hit = [c for c in candidates if c["path"] in inside] or hit
        if hit or not hops:
            return hit
        for file in files:
            self._load_imports({file})
            again = self._from_import(file, key, candidates, hops=hops - 1)
            if again:
                return again
        return []

    def _through_module(
        self, path: str, qualifier: str, name: str, candidates: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """The candidates `qualifier.name` means when `qualifier` is a module `path`
        imports bare (`import flask` ... `flask.name`, `import requests` ...
        `requests.utils.name`): those in the module it names, else the one that module
        re-exports (`from .helpers import name` in the package's `__init__`)."""
        for module, file in self.module_files.get(path, {}).items():
            if qualifier != module and not qualifier.startswith(module + "."):
                continue
            rest = qualifier[len(module) :].lstrip(".").replace(".", "/")
            base = file.rsplit(".", 1)[0].removesuffix("/__init__")
            target = f"{base}/{rest}" if rest else base
            names = {f"{target}.py", f"{target}/__init__.py"}
            hit = [c for c in candidates if c["path"] in names]
            if hit:
                return hit
            for module_file in sorted(names & set(self._paths())):
                self._load_imports({module_file})
                again = self._from_import(module_file, name, candidates, hops=1)
                if again:
                    return again
        return []

    def _paths(self) -> list[str]:
        return self.reads.indexed_paths()

    def _names_class(self, ref: dict[str, Any], cls: str) -> bool:
        """Whether the definition (or the file's top level) that holds `ref` references
        the class `cls` by name (constructs it, types a parameter with it, imports it)."""
        self._read_mentions([cls])
        return (ref["path"], ref["from_id"]) in self._mentions[cls]

    def _read_mentions(self, classes: Iterable[str]) -> None:
        """Who references each of `classes` by name, for those not read yet: one query
        for them all (a method name common in the runtime, `get`, has dozens of classes'
        definitions to check a reference against)."""
        new = sorted({c for c in classes if c not in self._mentions})
        if not new:
            return
        for cls in new:
            self._mentions[cls] = set()
        columns = ["path", "from_id", "name"]
        for r in self.reads.store.rows("refs", columns, where=where_in("name", new)):
            self._mentions[r["name"]].add((r["path"], r["from_id"]))

    def _returned_by(self, qualifier: str, language: str) -> frozenset[str] | None:
        """The type names a receiver that is a call's result can be (`c.Parent()`: what
        the index's `Parent` returns, `Command`), from the signatures of the called
        name's definitions in the language family; None when the receiver is no call,
        the call is a name the language's runtime gives every value (`clone()`,
        `unwrap()`: `builtin_names`), the index does not define the name, or a
        definition states no return type (a Python function without an annotation):
        then nothing is known of the receiver."""
        m = _CALLED.search(qualifier)
        if m is None or m.group(1) in builtin_methods(language):
            # `self.name.clone()`: the runtime's method of any value (a derived `Clone`),
            # whatever `clone`s of other types the index defines.
            return None
        key = (m.group(1), language)
        if key not in self._returns:
            definitions = [
                d
                for d in _definitions(self.reads, [m.group(1)])
                if _FAMILY.get(d["language"], d["language"]) == language
            ]
            names: set[str] = set()
            for d in definitions:
                stated = _return_types(d["signature"] or "", d["name"], d["language"])
                if stated is None:
                    names = set()
                    break
                # `-> Self`, `: this`: the defining class.
                names |= {_last(d["parent"] or "") if n in _SELF else n for n in stated}
            self._returns[key] = frozenset(names) if names else None
        return self._returns[key]

    def resolve(self, ref: dict[str, Any]) -> list[tuple[dict[str, Any], Via]]:
        name, path, qualifier = ref["name"], ref["path"], ref["qualifier"] or ""
        language = _FAMILY.get(self.languages.get(path, ""), self.languages.get(path, ""))
        candidates = self._of_family.get((name, language))
        if candidates is None:
            candidates = self._of_family[(name, language)] = [
                c
                for c in self.by_name.get(name, [])
                if _FAMILY.get(c["language"], c["language"]) == language
            ]
        if not qualifier and language in _IMPORTS_NEEDED:
            # A bare name there never means a method: `open()` in a class with `open`.
            candidates = [c for c in candidates if c["kind"] not in _MEMBERS]
        if ref["kind"] == "import" and language in _IMPORTS_FILES:
            # `import ".../keepalive"`, `#include "store.h"`: a package or a file, never
            # the method `keepalive` nor the function `store`.
            return []
        if ref["kind"] == "macro":
            candidates = [c for c in candidates if c["kind"] == "macro"]
        elif language == "rust":
            candidates = [c for c in candidates if c["kind"] != "macro"]
        returned = self._returned_by(qualifier, language)
        if returned is not None:
            # `c.Parent().HelpFunc()`: the receiver is what `Parent` returns (`*Command`),
            # so a method of another class is not meant; `c.Flags().HasAvailableFlags()`
            # on `Flags() *flag.FlagSet` is a library's method, not `Command`'s.
            candidates = [
                c for c in candidates if not c["parent"] or _last(c["parent"]) in returned
            ]
        if not candidates:
            return []
        same = [c for c in candidates if c["path"] == path]
        if same and (not qualifier or qualifier in _SELF or ref["kind"] == "import"):
            return [(c, "same-file") for c in same]
        head = qualifier.split(".", 1)[0].split("::", 1)[0]
        for key in (name, head) if head else (name,):
            found = self._from_import(
                path, key, candidates, hops=1 if key == name else 0, name=name
            )
            if found == [] and key == name:
                return []  # the file imports the name from elsewhere
            if found:
                return [(c, "import") for c in found]
        if qualifier and language == "python":
            found = self._through_module(path, qualifier, name, candidates)
            if found:
                return [(c, "import") for c in found]
        if "::" in qualifier and language == "rust":
            found = [c for c in candidates if not c["parent"] and _rust_module(qualifier, c)]
            if found:
                return [(c, "import") for c in found]
        # Through a qualifier that is no module the file imports, in Python, Rust and Go
        # the name is a method of the file, never its free function (tokio's
        # `park.block_on(f)` is not the file's own `fn block_on`); in Python, where a
        # module's function is reached through an import (above), never any free function
        # (pytest's `path.resolve()` is not monkeypatch's `resolve` because the file
        # imports `MonkeyPatch` from there). Rust's `context::f()` keeps its qualifier
        # as a receiver's would be, Go's `pkg.Func()` is a package's function, and
        # JavaScript's `helper.broadcast()` may be an object literal's: there only the
        # same file is narrowed, or nothing.
        receiver = bool(qualifier) and qualifier not in _SELF and "::" not in qualifier
        if receiver and name in builtin_methods(language):
            # `d.get(k)`, `self._aliases.get(k)`: the runtime's method of a value, unless
            # the receiver is named after the class (`cache.get(k)` on `Cache`) or the
            # calling code names the class (`s = Session(); s.get(url)`): a `get` of a
            # class the file imports is no evidence (pytest's config/__init__.py imports
            # `Cache` and `Stash`, and its dicts' `get` were theirs).
            named_for = _receiver_key(qualifier)
            self._read_mentions(
                c["parent"].rsplit(".", 1)[-1]
                for c in candidates
                if c["parent"] and _receiver_key(c["parent"]) != named_for
            )
            candidates = [
                c
                for c in candidates
                if _receiver_key(c["parent"] or "") == named_for
                or (c["parent"] and self._names_class(ref, c["parent"].rsplit(".", 1)[-1]))
            ]
            same = [c for c in same if c in candidates]
            if not candidates:
                return []
        if receiver and head not in self.modules.get(path, set()):
            if language in ("python", "rust", "go"):
                same = [c for c in same if c["parent"] or c["kind"] in _MEMBERS]
            if language == "python":
                candidates = [c for c in candidates if c["parent"] or c["kind"] in _MEMBERS]
        imported = self.imported.get(path, set())
        hit = [c for c in candidates if c["path"] in imported]
        if hit:
            return [(c, "import") for c in hit]
        if same and head not in self.modules.get(path, set()):
            return [(c, "same-file") for c in same]  # `obj.save()` where obj is local
        directory = posixpath.dirname(path)
        hit = [c for c in candidates if posixpath.dirname(c["path"]) == directory]
        if hit and (not qualifier or qualifier in _SELF):
            return [(c, "package") for c in hit]
        if (
            len(candidates) == 1
            and ref["kind"] != "other"  # a value passed along is mostly a local variable
            # Python and JavaScript reach another file's function only through an import
            # (handled above); a method, through any object.
            and (language not in _IMPORTS_NEEDED or (qualifier and candidates[0]["parent"]))
            and not (qualifier and name in builtin_methods(language))
            and not (language == "python" and name in _PYTHON_BUILTINS)
        ):
            return [(candidates[0], "name")]
        return []


_CALLED = re.compile(r"(\w+)\s*(?:::<[^()]*>)?\((?:[^()]|\([^()]*\))*\)[?!]?$")
"""A qualifier that is a call's result, and the called name: `c.Parent()`,
`self.config(x)`, Rust's `self.parent()?`."""
_RETURNS_BEFORE = frozenset({"java", "csharp", "c", "cpp"})
"""Languages whose signatures state the return type before the name."""
_WORD = re.compile(r"[A-Za-z_]\w*")
_MODIFIERS = frozenset(
    """public private protected internal static final abstract synchronized native
    virtual override inline extern const constexpr unsigned signed struct async def fn
    func function pub""".split()
)


def _return_types(signature: str, name: str, language: str) -> frozenset[str] | None:
    """The names in the return type a signature states (`func (c *Command) Parent()
    *Command`: {`Command`}; `fn parent(&self) -> Option<&Self>`: {`Option`, `Self`};
    `public Command getParent()`: {`Command`}), None when it states none."""
    at = re.search(rf"(?<![\w.]){re.escape(name)}\s*(?:<[^()]*>|\[[^()]*\])?\(", signature)
    if at is None:
        return None
    if language in _RETURNS_BEFORE:
        stated = signature[: at.start()]
    else:
        depth, end = 0, len(signature)
        for i in range(at.end() - 1, len(signature)):
            depth += {"(": 1, ")": -1}.get(signature[i], 0)
            if depth == 0:
                end = i + 1
                break
        stated = signature[end:].split(" where ", 1)[0]
    names = frozenset(w for w in _WORD.findall(stated) if w not in _MODIFIERS)
    return names or None


def _last(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1].rsplit("::", 1)[-1]


def _receiver_key(name: str) -> str:
    """A receiver's or a class's name as one word: its last part, lowercased, without
    underscores (`self._cache`, `Cache` and `cache` are `cache`)."""
    last = name.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
    return last.replace("_", "").lower()


def _imports_file(path: str, module: str, names: Sequence[str] | None, resolved: str) -> bool:
    """Whether an import makes every name of the file it resolved to reachable: always
    but in Rust, where `use a::b` does when `b` is the module that file is (`use
    tokio::fs;`, `mod x;`, a glob, `use a::{self, X}`), while `use a::b::item` and `use
    a::{X, Y}` bring those names alone."""
    if not path.endswith(".rs") or module.endswith("*") or module.startswith("mod "):
        return True
    if "self" in (names or ()):
        return True
    if names:
        return False
    return _rust_module(module, {"path": resolved})


def _rust_module(qualifier: str, candidate: dict[str, Any]) -> bool:
    """Whether a Rust path (`grep::cli`, `crate::search`) ends with the module that
    holds `candidate`: its file (`search.rs`), or for `lib.rs`/`mod.rs`/`main.rs` its
    directory or crate directory (`crates/cli/src/lib.rs` is `cli`)."""
    last = qualifier.rsplit("::", 1)[-1]
    parts: list[str] = str(candidate["path"]).split("/")
    stem = parts[-1].removesuffix(".rs")
    if stem not in ("lib", "mod", "main"):
        return stem == last
    dirs = [p for p in parts[:-1] if p != "src"]
    return bool(dirs) and dirs[-1] == last


def _dotted_stem(path: str) -> str:
    """`path` as the module it would be imported as (`indexer/store.py`: `indexer.store`)."""
    return path.rsplit(".", 1)[0].removesuffix("/__init__").replace("/", ".")


def _names_file(module: str, name: str, path: str) -> bool:
    """Whether `module` as written (`dowse.indexer.store`), or `module.name`, ends with
    the dotted form of `path` (`indexer/store.py`)."""
    stem = _dotted_stem(path)
    for dotted in (module.lstrip("."), f"{module.lstrip('.')}.{name}"):
        if dotted == stem or dotted.endswith("." + stem):
            return True
    return False


def _dotted_tails(dotted: str) -> set[str]:
    """The stems `_names_file` finds `dotted` to end with: itself and each part after a
    dot (`a.b.c`: `a.b.c`, `b.c`, `c`; `a.b.`: also the empty stem)."""
    return {dotted, *(dotted[i + 1 :] for i, ch in enumerate(dotted) if ch == ".")}


def _from(path: str, origin: str) -> bool:
    return path.startswith(origin) if origin.endswith("/") else path == origin


# -- reading -----------------------------------------------------------------------------


_Stems = tuple[list[str], dict[str, list[int]], dict[str, list[str]]]
"""Every indexed path in the table's order, their positions by dotted stem, and the
stems by their last part."""
_STEMS: weakref.WeakKeyDictionary[IndexLookups, _Stems] = weakref.WeakKeyDictionary()
"""A searcher's look-ups' `_Stems`, made once: an unresolved import scanned all of
django's 3,900 paths, about 30 times in the 20 dev tasks' asks (a tenth of their CPU)."""


class _Reads:
    """Where the references read definitions, files and imports: the rows a searcher's
    `lookups` hold (`IndexLookups.rows_in`), or LanceDB queries without them; the same
    rows either way, in the table's order. The refs table is always queried."""

    def __init__(self, store: Store, lookups: IndexLookups | None = None) -> None:
        self.store = store
        self.lookups = lookups
        self._stems: _Stems | None = None
        self._submodules: dict[str, set[str]] = {}

    def rows_in(
        self, table: str, columns: Sequence[str], column: str, values: Iterable[str]
    ) -> list[dict[str, Any]]:
        """The rows of `table` whose `column` is one of `values`, `columns` of them."""
        values = sorted(set(values))
        if not values:
            return []
        if self.lookups is not None:
            return self.lookups.rows_in(table, columns, column, values)
        return self.store.rows(table, columns, where=where_in(column, values))

    def all_paths(self) -> list[str]:
        """Every indexed file's path, in the table's order."""
        if self.lookups is not None:
            return list(self.lookups.file_stats())
        return [r["path"] for r in self.store.rows("files", ["path"])]

    def indexed_paths(self) -> list[str]:
        """`all_paths`, read once (for a searcher's look-ups, once per snapshot)."""
        return self._stems_made()[0]

    def files_of_module(self, module: str) -> list[str]:
        """The indexed files `module` as written names (`_names_file(module, "", path)`),
        in the table's order."""
        paths, by_stem, _ = self._stems_made()
        dotted = module.lstrip(".")
        found = {
            i
            for tail in _dotted_tails(dotted) | _dotted_tails(dotted + ".")
            for i in by_stem.get(tail, ())
        }
        return [paths[i] for i in sorted(found)]

    def submodule_files(self, importer: str, module: str, key: str) -> set[str]:
        """The indexed files `from module import key` imports when `key` is a module:
        `module/key.py` or `module/key/__init__.py`, a relative `module` from the
        importer's directory, an absolute one wherever the tree holds its dotted path
        (`src/_pytest/assertion/truncate.py` for `_pytest.assertion` and `truncate`)."""
        level = len(module) - len(module.lstrip("."))
        parts = [p for p in module[level:].split(".") if p] + [key]
        if level:
            base = posixpath.dirname(importer)
            for _ in range(level - 1):
                base = posixpath.dirname(base)
            stem = posixpath.join(base, *parts)
            return {f"{stem}.py", f"{stem}/__init__.py"}
        dotted = ".".join(parts)
        found = self._submodules.get(dotted)
        if found is None:
            # The dotted path as the end of a file's (under `src/`, a sub-project), never
            # a part of a name: `x.a.b` ends with `a.b`, `xa.b` does not.
            # Such a stem's last part is the dotted path's: only those are looked at (a
            # scan of every path's stem took ~30 ms on a 20k-file tree).
            paths, by_stem, by_last = self._stems_made()
            found = self._submodules[dotted] = {
                paths[i]
                for stem in by_last.get(dotted.rsplit(".", 1)[-1], ())
                if stem == dotted or stem.endswith("." + dotted)
                for i in by_stem[stem]
            }
        return found

    def _stems_made(self) -> _Stems:
        if self._stems is None:
            made = _STEMS.get(self.lookups) if self.lookups is not None else None
            if made is None:
                paths = self.all_paths()
                by_stem: dict[str, list[int]] = defaultdict(list)
                for i, path in enumerate(paths):
                    by_stem[_dotted_stem(path)].append(i)
                by_last: dict[str, list[str]] = defaultdict(list)
                for stem in by_stem:
                    by_last[stem.rsplit(".", 1)[-1]].append(stem)
                made = (paths, dict(by_stem), dict(by_last))
                if self.lookups is not None:
                    _STEMS[self.lookups] = made
            self._stems = made
        return self._stems


def _definitions(reads: _Reads, names: Iterable[str]) -> list[dict[str, Any]]:
    # As `kind NOT IN (...)` would, a row without a kind is no definition.
    return [
        r
        for r in reads.rows_in("symbols", DEFINITION_COLUMNS, "name", names)
        if r["kind"] is not None and r["kind"] not in _NOT_DEFINITIONS
    ]


def _rows_by_id(reads: _Reads, ids: set[str]) -> list[dict[str, Any]]:
    return reads.rows_in("symbols", DEFINITION_COLUMNS, "id", ids)


def _definition(row: dict[str, Any]) -> DefinitionRef:
    return DefinitionRef(
        id=row["id"],
        path=row["path"],
        qualified_name=row["qualified_name"],
        kind=row["kind"],
        signature=row["signature"] or "",
        start_line=row["start_line"],
        end_line=row["end_line"],
    )
