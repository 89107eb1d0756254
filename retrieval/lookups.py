"""Look-ups in one index snapshot that every search step shares: chunks by id, by line or
by file, the chunk that shows a definition, definitions by name, files named by a path
(matched by their longest common tail), which files changed since they were indexed,
the definitions, files' languages and imports that following references reads
(`rows_in`), and the chunks' full-text and vector searches.

`HybridSearcher` (retrieval/hybrid.py) holds one as `.lookups`; they read the store only.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
from pyarrow import _compute as arrow_compute

from dowse.indexer.reading import inside
from dowse.indexer.store import Store, where_in
from dowse.languages import CODE_LANGUAGES, ModuleRole, language_for, module_role
from dowse.retrieval.references import DEFINITION_COLUMNS

__all__ = [
    "CHUNK_COLUMNS",
    "SYMBOL_COLUMNS",
    "IndexLookups",
    "by_file_name",
    "files_for",
    "tail_matches",
]

CHUNK_COLUMNS = ["id", "path", "language", "start_line", "end_line", "symbol", "text"]
SYMBOL_COLUMNS = ["name", "name_lower", "qualified_name", "path", "start_line"]
SPAN_COLUMNS = ["id", "path", "start_line", "end_line", "symbol"]
"""What choosing a file's chunk needs (no text)."""
HELD_COLUMNS = {
    "chunks": CHUNK_COLUMNS,
    "spans": SPAN_COLUMNS,
    "symbols": list(dict.fromkeys([*SYMBOL_COLUMNS, *DEFINITION_COLUMNS, "decorators"])),
    "files": ["path", "language"],
    "imports": ["path", "module", "names", "resolved"],
}
"""The columns of each table the look-ups hold in memory. `spans` are the chunks'
without their text, held when the chunks are too many to hold with it."""
HELD_TABLE = {"spans": "chunks"}
"""The table a held name reads, where the two differ."""
KEYED = (
    ("chunks", "id"),
    ("chunks", "path"),
    ("spans", "path"),
    ("symbols", "name_lower"),
    ("symbols", "name"),
    ("symbols", "path"),
    ("symbols", "id"),
    ("files", "path"),
    ("imports", "path"),
)
"""The (table, column) pairs the look-ups find held rows by (`rows_in`)."""
MEMORY_ROWS = 100_000
"""Tables of up to this many rows are held in memory (django's 20k chunks with their
text take 26 MB and 75 ms to read); beyond, each look-up is a LanceDB query."""
NARROW_ROWS = 1_000_000
"""What a long-lived searcher (a server's) holds of the tables without text (symbols,
files' languages, imports, and the chunks' spans when the chunks are too many to hold
with their text): up to this many rows each. On a 20k-file tree (181k symbols, 126k
chunks) they take ~0.4 GB and ~1.8 s of CPU to read and key, which a one-shot query
would pay for a few look-ups (benchmarks/RESULTS.md)."""
_READING = threading.Lock()
_K = TypeVar("_K")
_Scored = list[tuple[dict[str, Any], float]]


class _Groups:
    """A held column's rows by value, for a column whose values repeat: each value's rows
    in the table's order, kept as one array of row numbers sorted by value (a dict of a
    list per value, built row by row in Python, took ~50 ms of a cold `ask` for django's
    33k symbol names)."""

    def __init__(self, codes: np.ndarray, values: list[Any]) -> None:
        # A stable sort keeps each value's rows in the table's order.
        self._rows = np.argsort(codes, kind="stable")
        self._ends = np.cumsum(np.bincount(codes, minlength=len(values)))
        self._code = dict(zip(values, range(len(values)), strict=True))

    def get(self, value: Any) -> list[int] | None:
        """`value`'s rows, in the table's order (None when no row holds it)."""
        code = self._code.get(value)
        if code is None:
            return None
        start = int(self._ends[code - 1]) if code else 0
        return self._rows[start : int(self._ends[code])].tolist()  # type: ignore[no-any-return]


_Positions = dict[Any, int] | _Groups
"""A held column's rows by value: its one row when every value is unique (ids), else its
rows in the table's order (`_Groups`)."""


def _positions(column: pa.Array | pa.ChunkedArray) -> _Positions:
    """`column`'s positions (`_Positions`). A column of unique values is one dict built in
    C (django's 40k symbol ids: 5 ms, where a list for each took 75 ms of a cold `ask`)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    unique = dict(zip(column.to_pylist(), range(len(column)), strict=True))
    if len(unique) == len(column):
        return unique
    encoded = arrow_compute.call_function(
        "dictionary_encode", [column], arrow_compute.DictionaryEncodeOptions("encode")
    )
    values = encoded.dictionary.to_pylist()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return _Groups(codes, values)


def _take(data: pa.Table, rows: list[int]) -> pa.Table:
    """`data.take(rows)`. Arrow's compute functions are called through `pyarrow._compute`
    here: `pyarrow.compute` (which `Table.take` imports) makes a documented wrapper for
    each of its 286 functions as it loads, some 45 ms of a cold query's main thread."""
    indices = pa.array(rows, type=pa.int64())
    return arrow_compute.call_function("take", [data, indices], arrow_compute.TakeOptions())


def _part_of(chunk: dict[str, Any], qualified_name: str) -> bool:
    """Whether a chunk lies in the named definition (`Cart` holds `Cart.total`'s chunks)."""
    owner = chunk["symbol"]
    return owner is not None and (owner == qualified_name or owner.startswith(qualified_name + "."))


def _common_tail(a: Sequence[str], b: Sequence[str]) -> int:
    """How many trailing components two paths share."""
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def tail_matches(parts: Sequence[str], files: Iterable[Sequence[str]]) -> list[str]:
    """The files (as path components) a path (its components) names: those sharing the
    longest run of trailing components with it, at least two (or all of a shorter path);
    sorted, [] when none does."""
    shared = {"/".join(f): _common_tail(parts, f) for f in files}
    best = max(shared.values(), default=0)
    if not parts or best < min(2, len(parts)):
        return []
    return sorted(path for path, n in shared.items() if n == best)


def by_file_name(paths: Iterable[str]) -> dict[str, list[tuple[str, ...]]]:
    """Paths as their components, by file name: what `files_for` looks a path up in."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for path in paths:
        parts = PurePosixPath(path).parts
        out.setdefault(parts[-1], []).append(parts)
    return out


def files_for(path: str, by_name: dict[str, list[tuple[str, ...]]]) -> list[str]:
    """The files of `by_name` (`by_file_name`) that a path names (`tail_matches`)."""
    parts = PurePosixPath(path.strip("/")).parts
    return tail_matches(parts, by_name.get(parts[-1], ())) if parts else []


class IndexLookups:
    """The look-ups in `store`'s snapshot of the tree at `store.manifest.root`.

    Each LanceDB query costs a few ms however little it returns, so what the look-ups
    read is read once, on first need, and kept: the file list (path, size, mtime), the
    tables of `HELD_COLUMNS` (chunks, symbols, the files' languages, imports) and their
    keys (`KEYED`). Naming
    files, checking staleness, finding definitions, choosing a file's chunk and reading
    chunks by id are then look-ups in memory, and a full-text query reads only ids."""

    def __init__(
        self, store: Store, *, memory_rows: int = MEMORY_ROWS, narrow_rows: int | None = None
    ) -> None:
        self.store = store
        self.root = Path(store.manifest.root)
        self.memory_rows = memory_rows
        """Tables of up to this many rows are held (`MEMORY_ROWS`)."""
        self.narrow_rows = memory_rows if narrow_rows is None else narrow_rows
        """The tables without text, up to this many rows each (`NARROW_ROWS` for a
        long-lived searcher; `memory_rows` when not given)."""
        self._file_stats: dict[str, tuple[int, int]] | None = None
        self._by_name: dict[str, list[tuple[str, ...]]] | None = None
        self._main_language: tuple[str | None] | None = None
        self._module_roles: dict[str, ModuleRole] | None = None
        self._module_parents: dict[str, str] | None = None
        self._declarations: list[dict[str, Any]] | None = None
        self._tables: dict[str, pa.Table | None] | None = None
        self._positions: dict[tuple[str, str], _Positions] | None = None
        self._remembered = threading.local()
        """`asked`: inside `remembering`, the calling thread's full-text results so far
        by (text, where): the rows asked for, whether fewer matched, the rows."""

    def file_stats(self) -> dict[str, tuple[int, int]]:
        """Every indexed file: path -> (size, mtime_ns) as indexed."""
        if self._file_stats is None:
            rows = self.store.rows("files", ["path", "size", "mtime_ns"])
            self._file_stats = {r["path"]: (r["size"], r["mtime_ns"]) for r in rows}
        return self._file_stats

    def main_language(self) -> str | None:
        """The language most indexed code files are written in (by their names; text
        and documentation formats left out), None when the index holds no code."""
        if self._main_language is None:
            counts = Counter(language_for(path) for path in self.file_stats())
            code = [(n, lang) for lang, n in counts.items() if lang in CODE_LANGUAGES]
            self._main_language = (max(code)[1] if code else None,)
        return self._main_language[0]

    def module_roles(self) -> dict[str, ModuleRole]:
        """The files whose declaration as a module in another file gives them a role
        (`languages.module_role`): "test" for a Rust file declared `#[cfg(test)] mod x;`,
        and for every module such a file declares in turn (test code under src/, which
        its path does not show); "macros" for one declared `#[macro_use] mod x;`. Read
        once: two queries, and none for an index without Rust."""
        if self._module_roles is None:
            roles: dict[str, ModuleRole] = {}
            declared = self._module_declarations()
            if declared:
                modules = self.store.rows(
                    "symbols",
                    ["path", "name", "decorators", "name_line", "language"],
                    where="kind = 'module'",
                )
                attributes = {
                    (m["path"], m["name_line"], m["name"]): (m["language"], m["decorators"])
                    for m in modules
                    if m["decorators"]
                }
                children: dict[str, list[str]] = {}
                for d in declared:
                    if d["resolved"] is None:
                        continue
                    children.setdefault(d["path"], []).append(d["resolved"])
                    language, attrs = attributes.get(
                        (d["path"], d["line"], d["module"][4:].strip()), ("", [])
                    )
                    role = module_role(language, attrs)
                    if role is not None:
                        roles[d["resolved"]] = role
                # What a test module declares is compiled with it, for the tests alone.
                todo = [p for p, r in roles.items() if r == "test"]
                while todo:
                    for child in children.get(todo.pop(), []):
                        if roles.get(child) != "test":
                            roles[child] = "test"
                            todo.append(child)
            self._module_roles = roles
        return self._module_roles

    def module_parents(self) -> dict[str, str]:
        """Each file declared as a module in another file (Rust's `mod x;`): the file
        that declares it, its module root (`src/de/mod.rs` of `src/de/impls.rs`,
        `src/lib.rs` of `src/de/mod.rs`). A crate's root has none."""
        if self._module_parents is None:
            self._module_parents = {
                d["resolved"]: d["path"]
                for d in self._module_declarations()
                if d["resolved"] is not None and d["resolved"] != d["path"]
            }
        return self._module_parents

    def _module_declarations(self) -> list[dict[str, Any]]:
        """The module declarations (`mod x;`) of the index's Rust files with the file
        each resolves to: one query, read once, none for an index without Rust."""
        if self._declarations is None:
            self._declarations = (
                self.store.rows(
                    "imports", ["path", "module", "line", "resolved"], where="module LIKE 'mod %'"
                )
                if any(p.endswith(".rs") for p in self.file_stats())
                else []
            )
        return self._declarations

    def test_modules(self) -> frozenset[str]:
        """The files that are test code by their module declaration (`module_roles`)."""
        return frozenset(p for p, role in self.module_roles().items() if role == "test")

    def _files_by_name(self) -> dict[str, list[tuple[str, ...]]]:
        """Every indexed file's path components, by file name."""
        if self._by_name is None:
            self._by_name = by_file_name(self.file_stats())
        return self._by_name

    def warm(self) -> None:
        """Read now what the look-ups hold, and build their keys (a searcher does it on
        first need otherwise: on django the keys and file names took ~85 ms of the
        first `ask`, benchmarks/RESULTS.md)."""
        self._files_by_name()
        for table in HELD_COLUMNS:
            self.held(table)
        for table, column in KEYED:
            self._positions_of(table, column)

    def held(self, table: str) -> pa.Table | None:
        """`HELD_COLUMNS[table]` of every row, read once (None beyond `memory_rows` for
        the chunks, `narrow_rows` for the others; the chunks' spans only when the chunks
        are not held, whose rows serve otherwise)."""
        chunks = self.held("chunks") if table == "spans" else None
        with _READING:
            if self._tables is None:
                self._tables = {}
            if table not in self._tables:
                self._tables[table] = None
                read = HELD_TABLE.get(table, table)
                limit = self.memory_rows if table == "chunks" else self.narrow_rows
                if chunks is None and self.store.count(read) <= limit:
                    # One contiguous chunk per column: `take` across the scan's record
                    # batches costs ~1.7 ms for 60 rows, across one ~0.04 ms.
                    self._tables[table] = self.store.scan(
                        read, HELD_COLUMNS[table]
                    ).combine_chunks()
            return self._tables[table]

    def _held_for(self, table: str, columns: Sequence[str], column: str) -> str:
        """The held name that answers a look-up of `columns` by `column` in `table`: the
        chunks' spans when the chunks are not held with their text and the look-up
        needs none of it."""
        wanted = {*columns, column}
        if table == "chunks" and wanted <= set(SPAN_COLUMNS) and self.held("chunks") is None:
            return "spans"
        return table

    def rows_in(
        self, table: str, columns: Sequence[str], column: str, values: Iterable[str]
    ) -> list[dict[str, Any]]:
        """The rows of `table` whose `column` is one of `values` (`columns` only, of
        `HELD_COLUMNS[table]`), in the table's order: from the held rows, or one LanceDB
        query when the table is not held (the same rows: a filter keeps the table's
        order)."""
        values = sorted(set(values))
        if not values:
            return []
        held = self._held_for(table, columns, column)
        data = self.held(held)
        positions = self._positions_of(held, column)
        if data is None or positions is None:
            return self.store.rows(table, columns, where=where_in(column, values))
        rows: list[int] = []
        for value in values:
            at = positions.get(value)
            if isinstance(at, int):
                rows.append(at)
            elif at is not None:
                rows += at
        rows.sort()
        picked = _take(data.select(list(columns)), rows)
        return picked.to_pylist()  # type: ignore[no-any-return]

    def _positions_of(self, table: str, column: str) -> _Positions | None:
        """The held rows of `table` by their `column` value (None when it is not held),
        built once."""
        data = self.held(table)
        if data is None:
            return None
        with _READING:
            if self._positions is None:
                self._positions = {}
            positions = self._positions.get((table, column))
            if positions is None:
                positions = self._positions[(table, column)] = _positions(data.column(column))
            return positions

    def lexical(
        self, tokens: Sequence[str], k: int, where: str | None = None
    ) -> list[tuple[dict[str, Any], float]]:
        """The `k` best chunks for `tokens` by full-text (BM25) score, with the score;
        only those matching `where` when given. Inside `remembering`, a query asked again
        for as many rows or fewer is answered from the first answer: the first `k` of a
        larger query's rows are its `k` best (rows of equal scores may come in another
        order)."""
        if not tokens:
            return []
        text = " ".join(tokens)
        memo: dict[tuple[str, str | None], tuple[int, bool, _Scored]] | None = getattr(
            self._remembered, "asked", None
        )
        asked = memo.get((text, where)) if memo is not None else None
        if asked is not None and (asked[0] >= k or asked[1]):
            return [(dict(r), score) for r, score in asked[2][:k]]
        if self.held("chunks") is None:
            rows = self.store.full_text("chunks", text, [*CHUNK_COLUMNS, "_score"], k, where)
            found = [(r, float(r.pop("_score"))) for r in rows]
            hits = len(rows)
        else:
            # The chunks are in memory: the query reads only ids and scores.
            scored = self.store.full_text("chunks", text, ["id", "_score"], k, where)
            by_id = self.chunks_by_id(r["id"] for r in scored)
            found = [(by_id[r["id"]], float(r["_score"])) for r in scored if r["id"] in by_id]
            hits = len(scored)
        if memo is None:
            return found
        memo[(text, where)] = (k, hits < k, found)
        return [(dict(r), score) for r, score in found]  # a caller may change its rows

    @contextmanager
    def remembering(self) -> Iterator[None]:
        """Within it, the calling thread's full-text queries keep their results for the
        same query asked again (`lexical`): for one question's answer (`ask` asks its
        first search's words for its whole-file word ranking first, with five times as
        many rows), not across questions."""
        outer = getattr(self._remembered, "asked", None)
        self._remembered.asked = {} if outer is None else outer
        try:
            yield
        finally:
            self._remembered.asked = outer

    def dense(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """The `k` chunks closest to `vector`: (id, cosine similarity)."""
        rows = self.store.nearest("vectors", vector, ["id", "_distance"], k).to_pylist()
        return [(r["id"], 1.0 - float(r["_distance"])) for r in rows]

    def chunks_by_id(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        ids = list(ids)
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ids), 500):  # a LanceDB filter of a bounded length
            out.update(
                (r["id"], r)
                for r in self.rows_in("chunks", CHUNK_COLUMNS, "id", ids[start : start + 500])
            )
        return out

    def chunk_at(self, path: str, line: int) -> dict[str, Any] | None:
        return self.chunks_at([(path, line)]).get((path, line))

    def chunks_at(self, spots: Iterable[tuple[str, int]]) -> dict[tuple[str, int], dict[str, Any]]:
        """The chunk holding each (path, line) (one query for all, none when held)."""
        spots = list(spots)
        return self.rows_of(self.spans_at(spots, self.spans_of(p for p, _ in spots)))

    def definition_chunks(
        self, symbols: Iterable[dict[str, Any]]
    ) -> dict[tuple[str, int], dict[str, Any]]:
        """The chunk that shows each symbol's definition, by (path, start_line): the one
        holding its first line when that chunk belongs to it, else its own first chunk.
        (A long function's `def` line can close a chunk of the lines above it, its body
        starting the next one: that chunk says little about the function.)"""
        symbols = list(symbols)
        by_path = self.spans_of(s["path"] for s in symbols)
        chosen: dict[tuple[str, int], dict[str, Any]] = {}
        for sym in symbols:
            path, line, name = sym["path"], sym["start_line"], sym["qualified_name"]
            spans = sorted(by_path.get(path, ()), key=lambda r: r["start_line"])
            holding = next((r for r in spans if r["start_line"] <= line <= r["end_line"]), None)
            own = next((r for r in spans if r["start_line"] >= line and _part_of(r, name)), None)
            pick = holding if holding is None or _part_of(holding, name) or own is None else own
            if pick is not None:
                chosen[(path, line)] = pick
        return self.rows_of(chosen)

    def chunks_of_definitions(self, named: dict[str, tuple[str, int]]) -> dict[str, dict[str, Any]]:
        """By path, the chunk that shows the definition `named` gives for it (qualified
        name, start line: `FileVectors.closest_definitions`)."""
        defined = self.definition_chunks(
            {"path": p, "qualified_name": name, "start_line": line}
            for p, (name, line) in named.items()
        )
        return {path: row for (path, _), row in defined.items()}

    def first_chunks(self, paths: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Each file's first chunk, by path (one query for all, none when held)."""
        paths = list(paths)
        return self.rows_of(self.first_spans(paths, self.spans_of(paths)))

    def spans_of(self, paths: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """The spans (`SPAN_COLUMNS`) of every chunk of the given files, by path."""
        by_path: dict[str, list[dict[str, Any]]] = {}
        for r in self.rows_in("chunks", SPAN_COLUMNS, "path", paths):
            by_path.setdefault(r["path"], []).append(r)
        return by_path

    @staticmethod
    def spans_at(
        spots: Iterable[tuple[str, int]], by_path: dict[str, list[dict[str, Any]]]
    ) -> dict[tuple[str, int], dict[str, Any]]:
        """The span holding each (path, line) among `by_path`'s."""
        out: dict[tuple[str, int], dict[str, Any]] = {}
        for path, line in spots:
            for r in by_path.get(path, ()):
                if r["start_line"] <= line <= r["end_line"]:
                    out[(path, line)] = r
                    break
        return out

    @staticmethod
    def first_spans(
        paths: Iterable[str], by_path: dict[str, list[dict[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
        """Each file's first span among `by_path`'s."""
        return {
            path: min(by_path[path], key=lambda r: r["start_line"])
            for path in dict.fromkeys(paths)
            if by_path.get(path)
        }

    def rows_of(self, spans: dict[_K, dict[str, Any]]) -> dict[_K, dict[str, Any]]:
        """The chunk rows (`CHUNK_COLUMNS`) of chosen spans, under the same keys."""
        rows = self.chunks_by_id(dict.fromkeys(r["id"] for r in spans.values()))
        return {key: rows[r["id"]] for key, r in spans.items() if r["id"] in rows}

    def chunks_holding(self, text: str, limit: int = 50) -> list[dict[str, Any]]:
        """The chunks (`CHUNK_COLUMNS`) whose text holds `text` verbatim (any case), at
        most `limit`, in the table's order; none when the chunks are not held in memory
        (a scan of every chunk's text in the store would cost more than the evidence is
        worth)."""
        data = self.held("chunks")
        if data is None or not text:
            return []
        options = arrow_compute.MatchSubstringOptions(text, ignore_case=True)
        found = arrow_compute.call_function("match_substring", [data.column("text")], options)
        found = arrow_compute.call_function("coalesce", [found, pa.scalar(False)])
        rows = arrow_compute.call_function("indices_nonzero", [found]).to_pylist()[:limit]
        if not rows:
            return []
        return _take(data, rows).to_pylist()  # type: ignore[no-any-return]

    def symbols_named(self, names: Iterable[str], limit: int = 50) -> list[dict[str, Any]]:
        """The definitions of `names` (any case), at most `limit`, the rarest names'
        first: a task naming `_print_SingularityFunction` (3 definitions) beside `expr`
        (62) and `_print_Pow` (24) keeps the three that say where."""
        lowered = sorted({n.lower() for n in names if n})
        if not lowered:
            return []
        rows = self.rows_in("symbols", SYMBOL_COLUMNS, "name_lower", lowered)
        defined = Counter(r["name_lower"] for r in rows)
        rows.sort(
            key=lambda r: (defined[r["name_lower"]], r["name_lower"], r["path"], r["start_line"])
        )
        return rows[:limit]

    def definitions_of(self, names: Iterable[str]) -> list[dict[str, Any]]:
        """Where each of `names` (its exact case) is defined: name, qualified name, path
        and start line, in the table's order."""
        wanted = set(names)
        rows = self.rows_in(
            "symbols",
            ["name", "qualified_name", "path", "start_line"],
            "name_lower",
            {n.lower() for n in wanted},
        )
        return [r for r in rows if r["name"] in wanted]

    def files_named(self, paths: Iterable[str]) -> dict[str, list[str]]:
        """For each path, the indexed files it names (`tail_matches`). So `models/query.py`
        names every file ending so, and a traceback's installed copy
        `/usr/lib/python3/site-packages/django/db/models/query.py` names the repository's
        `django/db/models/query.py` (and `site-packages/_pytest/runner.py` names
        `src/_pytest/runner.py`)."""
        out: dict[str, list[str]] = {}
        for p in paths:
            if named := files_for(p, self._files_by_name()):
                out[p] = named
        return out

    def outside_paths(self, paths: Iterable[str]) -> set[str]:
        """The indexed paths that now resolve outside the root (a file replaced by a
        symlink leading out since it was indexed): never shown."""
        return {p for p in set(paths) if not inside(self.root, p)}

    def stale_paths(self, paths: Iterable[str]) -> set[str]:
        paths = sorted(set(paths))
        if not paths:
            return set()
        known = self.file_stats()
        stale: set[str] = set()
        for p in paths:
            try:
                st = os.stat(self.root / p)
            except OSError:
                stale.add(p)
                continue
            if known.get(p) != (st.st_size, st.st_mtime_ns):
                stale.add(p)
        return stale
