"""The on-disk index: LanceDB tables tied together by a manifest.

Layout of an index directory (default `<root>/.dowse/`):

    manifest.json   format version, model, dimension, root, and the tables and table
                    versions that together form the last committed snapshot
    write.lock      held (flock) by the one process that writes
    settled.json    what the last run that found nothing to do saw (`indexer.settled`):
                    the next such run answers from it without opening a table
    walked.json     what the last run's walk depended on, with each path's stat
                    (`indexer.walked`): the check for changes before a query stats them
    idle.json       the request and report of the last run that found nothing to do
                    (`indexer.noop`): the same request answered before the writer loads
    db/             LanceDB tables: files (with each file's summary text), symbols, chunks,
                    imports, vectors (one per chunk), file_vectors (one per file summary),
                    skipped, commits (the history's messages and files, `indexer.commits`),
                    refs (each file's references, `indexer.references`),
                    and embed_cache (text hash -> vector, shared by every snapshot).
                    A snapshot table is stored under its own name, or `<name>-<hex>` for
                    the generation a rebuild wrote (the manifest maps one to the other).

Invariants:
- manifest.json is replaced atomically (write, fsync, rename) and only after every table
  write it refers to has committed. Readers open the tables the manifest names, at the
  versions it names, so they see one consistent snapshot even while a writer works.
- A writer that finds a table ahead of the manifest (an interrupted run) restores it to
  the manifest's version before writing: a crash never leaves a mixed snapshot.
- `--rebuild` writes a new generation of every snapshot table beside the committed one,
  which readers keep seeing until the rebuild's first commit names the new tables. An
  interrupted rebuild leaves the previous index whole; only a snapshot no reader can use
  (a damaged manifest, another format) is replaced in place.
- A table no manifest names is dropped by the next writer: at once if no commit ever named
  it (an interrupted rebuild's), else a grace period (`Retention.grace`) after the commit
  that replaced it (the manifest records when), so a reader that opened the previous
  manifest can finish. Older versions of live tables are kept for the grace period after
  a commit replaced them (the manifest records which and when), and no longer: an index
  written every few seconds stays bounded. A run that drops rows holding a secret keeps
  nothing for readers: it rewrites the tables and deletes every other version and table
  at once (`rewrite`, `forget_versions`), so no byte of those rows is left in the index
  directory.
- embed_cache is append-only and not part of a snapshot: a vector computed once is kept
  even when the run that computed it is interrupted. Being only a cache, a damaged one is
  dropped and started afresh by `--rebuild` (an incremental run reports it).
- A snapshot table the manifest names but that is missing or unreadable is an
  `IndexCorrupt` ("run `dowse index --rebuild`"), never silently recreated empty: that
  would drop its rows while the files table still says they are indexed. LanceDB's own
  failures become dowse errors through `storage_error` (see `indexer.lance`).

Layout: `indexer.lance` imports LanceDB, quotes filter values and maps its failures to
dowse errors; this module keeps the tables, the manifest and the write lock, and owns
the queries: every read goes through `rows`, `scan`, `full_text`, `nearest` or `count`,
which turn LanceDB's failures into dowse's errors, and every filter is built by the
`where_*`/`all_of` builders here, so no other module writes SQL or catches LanceDB's
exceptions. `quote_list` and `storage_error` stay importable from here.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from dowse.errors import (
    IndexCorrupt,
    IndexNotFound,
    IndexVersionMismatch,
    IndexWriteError,
)
from dowse.indexer.lance import (
    LANCE_ERRORS,
    check_location,
    import_lancedb,
    lance_detail,
    quote_list,
    storage_error,
)
from dowse.indexer.lance_read import NativeDb, NativeTable
from dowse.indexer.layout import FORMAT_VERSION, MANIFEST, WriteLock
from dowse.indexer.trust import ensure_key, sign

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "FORMAT_VERSION",
    "OPTIONAL_TABLES",
    "SNAPSHOT_TABLES",
    "Manifest",
    "Retention",
    "Store",
    "WriteLock",
    "all_of",
    "quote_list",
    "storage_error",
    "where_between",
    "where_equals",
    "where_in",
    "where_not_in",
    "where_prefix",
]

SNAPSHOT_TABLES = (
    "files",
    "symbols",
    "chunks",
    "imports",
    "vectors",
    "file_vectors",
    "skipped",
    "commits",
    "refs",
)
OPTIONAL_TABLES = ("commits", "refs")
"""Snapshot tables an index written before they existed lacks: a reader takes them as
empty, the next writer creates them."""
CACHE_TABLE = "embed_cache"
_GENERATION = re.compile(rf"(?:{'|'.join(SNAPSHOT_TABLES)})(?:-[0-9a-f]+)?")
"""The LanceDB name of a snapshot table, of any generation."""
_LANCE_MAGIC = b"LANC"
"""The last four bytes of every Lance file (data files and index files alike)."""


# How many `optimize` calls a table gets to settle before its old versions are deleted
# at once (`Store._compact`); two settle every table a run writes.
_COMPACT_ROUNDS = 4


class Retention(BaseModel):
    """How long a writer keeps what its commits replaced, for the readers of an earlier
    manifest (`Store.create(retention=...)`, `IndexConfig(retention=...)`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    grace: timedelta = Field(
        default=timedelta(seconds=60),
        description=(
            "how long table versions and tables that a commit replaced stay on disk for "
            "the readers of the previous manifest (readers reopen the manifest for each "
            "request, and a request takes well under a second: a minute covers a slow one "
            "on a loaded machine)"
        ),
    )
    prune_margin: timedelta = Field(
        default=timedelta(seconds=1),
        description=(
            "versions this much older than the manifest's, or less, outlive a pruning: "
            "LanceDB dates them on the real clock and prunes by age, and `optimize` "
            "compacts before it prunes (the margin covers the moment between)"
        ),
    )


def _schemas(dim: int) -> dict[str, pa.Schema]:
    import pyarrow as pa  # here: reading the manifest alone (a no-op run) needs no Arrow

    s, i32, i64 = pa.string(), pa.int32(), pa.int64()
    # float16 halves the largest part of the index; cosine error stays below 1e-3.
    vector = pa.list_(pa.float16(), dim)
    return {
        "files": pa.schema(
            [
                ("path", s),
                ("language", s),
                ("size", i64),
                ("hash", s),
                ("mtime_ns", i64),
                ("parser", s),
                ("note", s),
                ("n_symbols", i32),
                ("n_chunks", i32),
                ("summary", s),
                ("summary_hash", s),
            ]
        ),
        "symbols": pa.schema(
            [
                ("id", s),
                ("path", s),
                ("name", s),
                ("qualified_name", s),
                ("kind", s),
                ("signature", s),
                ("docstring", s),
                ("decorators", pa.list_(s)),
                ("start_line", i32),
                ("end_line", i32),
                ("name_line", i32),
                ("parent", s),
                ("language", s),
                ("name_lower", s),
                ("tokens", s),
            ]
        ),
        "chunks": pa.schema(
            [
                ("id", s),
                ("path", s),
                ("language", s),
                ("start_line", i32),
                ("end_line", i32),
                ("symbol", s),
                ("text", s),
                ("header", s),
                ("hash", s),
                ("tokens", s),
            ]
        ),
        "imports": pa.schema(
            [
                ("path", s),
                ("module", s),
                ("names", pa.list_(s)),
                ("line", i32),
                ("resolved", s),
            ]
        ),
        "vectors": pa.schema([("id", s), ("path", s), ("hash", s), ("vector", vector)]),
        "file_vectors": pa.schema([("id", s), ("path", s), ("hash", s), ("vector", vector)]),
        "skipped": pa.schema([("path", s), ("reason", s)]),
        "commits": pa.schema(
            [
                ("id", s),
                ("time", i64),
                ("subject", s),
                ("files", pa.list_(s)),
                ("tokens", s),
            ]
        ),
        "refs": pa.schema(
            [
                ("path", s),
                ("line", i32),
                ("name", s),
                ("kind", s),
                ("qualifier", s),
                ("from_id", s),
                ("from_name", s),
            ]
        ),
        CACHE_TABLE: pa.schema([("hash", s), ("vector", vector)]),
    }


def where_in(column: str, values: Sequence[str]) -> str:
    """The filter `column IN (values)`, the values quoted (`quote_list`)."""
    return f"{column} IN ({quote_list(values)})"


def where_not_in(column: str, values: Sequence[str]) -> str:
    """The filter `column NOT IN (values)`, the values quoted."""
    return f"{column} NOT IN ({quote_list(values)})"


def where_equals(column: str, value: str) -> str:
    """The filter `column = value`, the value quoted."""
    return f"{column} = {quote_list([value])}"


def where_between(column: str, low: int, high: int) -> str:
    """The filter `low <= column <= high` on an integer column."""
    return f"{column} >= {int(low)} AND {column} <= {int(high)}"


def where_prefix(column: str, prefix: str) -> str:
    """The filter "`column` starts with `prefix`", its quote and wildcards escaped."""
    escaped = prefix.replace("'", "''").replace("%", r"\%").replace("_", r"\_")
    return f"{column} LIKE '{escaped}%' ESCAPE '\\'"


def all_of(*clauses: str | None) -> str | None:
    """The filter every given clause must match (None when none is given)."""
    given = [c for c in clauses if c]
    return " AND ".join(given) if given else None


def _batched(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: int = FORMAT_VERSION
    model: str = Field(description="embedding model the vectors were made with")
    dim: int = Field(gt=0)
    root: str = Field(description="absolute path of the indexed root")
    versions: dict[str, int] = Field(default_factory=dict, description="table -> version")
    tables: dict[str, str] = Field(
        default_factory=dict,
        description="table -> the LanceDB table holding it, where "
        "the names differ (a rebuild writes beside the old one)",
    )
    retired: dict[str, float] = Field(
        default_factory=dict,
        description="LanceDB tables of a replaced snapshot -> "
        "when it was replaced (dropped `Retention.grace` later)",
    )
    superseded: dict[str, list[tuple[int, float]]] = Field(
        default_factory=dict,
        description="table -> (version, when a commit replaced it) for the versions "
        "replaced less than `Retention.grace` ago, which a reader may still be using",
    )
    embedded: bool = Field(
        default=False, description="every vector the embed scope asks for exists"
    )
    no_embed: bool = Field(default=False, description="built with --embed none")
    embed_chunks: bool = Field(
        default=True,
        description="chunks have vectors, not only file summaries (--embed all, not --embed files)",
    )
    definitions: bool = Field(
        default=False,
        description="documented definitions get "
        "vectors beside the file summaries (false in indexes made "
        "before they did: the next run embeds them)",
    )
    undocumented: bool = Field(
        default=False,
        description="definitions without a docstring "
        "get vectors too, by path, name and signature (false in "
        "indexes made before they did: the next run embeds them)",
    )
    history: str = Field(
        default="", description="the commit whose history the commits table holds ('' none)"
    )
    no_history: bool = Field(default=False, description="built with --no-history")
    walk: dict[str, Any] = Field(
        default_factory=dict, description="the walk options of the last run (reused)"
    )
    secret_scan: str = Field(
        default="",
        description="the secret rules the stored text was redacted with "
        "(`secrets.SCANNER`), 'included' for --include-secrets, '' unknown: "
        "under other rules every file is read again",
    )
    signature: str = Field(
        default="",
        description="this user's HMAC over the root and the walk options that widen "
        "what is read: without a valid one the index is not used (indexer.trust)",
    )
    created: float = Field(default_factory=time.time)
    updated: float = Field(default_factory=time.time)


class Store:
    """Access to one index directory; `Store.open` for readers, `Store.create` for writers."""

    def __init__(
        self, index_dir: Path, manifest: Manifest, db: Any, reader: NativeDb | None = None
    ) -> None:
        self.index_dir = index_dir
        self.manifest = manifest
        self._db = db
        # A reader's queries go to LanceDB's native core (`lance_read`); `db`, the
        # `lancedb` connection, is made when something else is asked (`verify`).
        self._reader = reader
        self._tables: dict[str, Any] = {}
        self._read_tables: dict[str, NativeTable] = {}
        self.schemas = _schemas(manifest.dim)
        # The LanceDB tables of the committed snapshot a rebuild replaces: readers use
        # them until this store's first commit.
        self._replacing: list[str] = []
        self._trust_cache = True
        # table -> the version an `optimize` left as it was: another would find nothing
        # to do either, until a write makes a new version (`Store.optimize`).
        self._settled: dict[str, int] = {}
        # table -> its committed version when this writer began its run (`Store.written`).
        self._began = dict(manifest.versions)
        # What `Retention.grace` is measured on: the times a commit records
        # (`Manifest.updated`, `retired`, `superseded`) and compares them with. Only a
        # writer reads it, and its retention.
        self.clock: Callable[[], float] = time.time
        self.retention = Retention()
        self.maintained = 0.0
        """When this writer's start was done dropping what no reader could still use
        (`create`; 0 for a store that did not): what its run's commits replace after
        that, it has not."""

    # -- opening -----------------------------------------------------------------------

    @staticmethod
    def read_manifest(index_dir: Path) -> Manifest:
        path = index_dir / MANIFEST
        try:
            raw = path.read_text()
        except FileNotFoundError:
            raise IndexNotFound(f"no index at {index_dir}; run `dowse index` first") from None
        except OSError as exc:
            raise IndexCorrupt(f"cannot read {path}: {exc.strerror}") from None
        try:
            data = json.loads(raw)
        except json.JSONDecodeError:
            raise IndexCorrupt(
                f"the index manifest {path} is damaged; run `dowse index --rebuild`"
            ) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION:
            found = data.get("format") if isinstance(data, dict) else None
            raise IndexVersionMismatch(
                f"the index at {index_dir} has format {found}, this dowse reads format "
                f"{FORMAT_VERSION}; run `dowse index --rebuild`"
            )
        try:
            return Manifest.model_validate(data)
        except ValueError:
            raise IndexCorrupt(
                f"the index manifest {path} is damaged; run `dowse index --rebuild`"
            ) from None

    @classmethod
    def open(cls, index_dir: Path) -> Store:
        """Open the last committed snapshot for reading."""
        manifest = cls.read_manifest(index_dir)
        check_location(index_dir)
        try:
            reader = NativeDb(index_dir / "db")
        except LANCE_ERRORS as exc:
            error = storage_error(exc, index_dir)
            if error is None:
                raise
            raise error from None
        store = cls(index_dir, manifest, None, reader)
        for name in store.live_tables():
            store._read_table(name)  # fail now, with a clear message, if a table is damaged
        return store

    @property
    def db(self) -> Any:
        """The `lancedb` connection (a reader's is made on first use)."""
        if self._db is None:
            self._db = import_lancedb().connect(str(self.index_dir / "db"))
        return self._db

    def live_tables(self) -> list[str]:
        """The snapshot tables this index has (an older index lacks OPTIONAL_TABLES)."""
        versions = self.manifest.versions
        return [
            n for n in SNAPSHOT_TABLES if n not in OPTIONAL_TABLES or n in versions or not versions
        ]

    def has_table(self, name: str) -> bool:
        return name in self.live_tables()

    @classmethod
    def create(
        cls,
        index_dir: Path,
        *,
        root: Path,
        model: str,
        dim: int,
        rebuild: bool,
        trust_cache: bool = True,
        clock: Callable[[], float] = time.time,
        retention: Retention = Retention(),  # noqa: B008 - frozen
    ) -> Store:
        """Open (or start) an index for writing; the caller must hold the WriteLock.

        A rebuild starts an empty snapshot in new tables; the committed one stays what
        readers see until the first `commit`. Without `trust_cache` (an index that came
        with the files) the embedding cache is started afresh: its vectors are whatever
        the files' sender put there, for texts they chose. `clock` (seconds since the
        epoch) dates what a commit replaces and measures `retention.grace` (a test moves it
        on instead of waiting); LanceDB's own version timestamps stay on the real clock."""
        check_location(index_dir)
        ensure_key()  # what this run writes must be signed, or no later run believes it
        lancedb = import_lancedb()

        try:
            old: Manifest | None = cls.read_manifest(index_dir)
        except IndexNotFound:
            old = None
        except (IndexCorrupt, IndexVersionMismatch):
            if not rebuild:
                raise
            old = None  # no reader can use that snapshot: nothing to keep it for
        if old is not None and not rebuild and (old.model, old.dim) != (model, dim):
            raise IndexVersionMismatch(
                f"the index at {index_dir} was built with {old.model} ({old.dim}-d), "
                f"not {model} ({dim}-d); run `dowse index --rebuild`"
            )
        dbdir = index_dir / "db"
        try:
            dbdir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise IndexWriteError(
                f"cannot write the index at {index_dir}: {exc.strerror}"
            ) from None
        replacing: list[str] = []
        if old is not None and not rebuild:
            manifest = old
        elif old is None:
            now = clock()
            manifest = Manifest(model=model, dim=dim, root=str(root), created=now, updated=now)
        else:
            generation = secrets.token_hex(4)
            now = clock()
            manifest = Manifest(
                created=now,
                updated=now,
                model=model,
                dim=dim,
                root=str(root),
                retired=old.retired,
                tables={n: f"{n}-{generation}" for n in SNAPSHOT_TABLES},
            )
            replacing = [old.tables.get(n, n) for n in SNAPSHOT_TABLES]
        store = cls(index_dir, manifest, lancedb.connect(str(dbdir)))
        store.clock = clock
        store.retention = retention
        store._replacing = replacing
        store._trust_cache = trust_cache
        # First: an interrupted rebuild's tables may fill the disk.
        store._drop_unused(retention.grace)
        store._recover()
        store._prune_versions()
        store.maintained = clock()
        store._began = dict(store.manifest.versions)
        return store

    def _physical(self, name: str) -> str:
        """The LanceDB table that holds snapshot table `name`."""
        return self.manifest.tables.get(name, name)

    def _recover(self) -> None:
        """Bring every table to the manifest's snapshot, creating missing ones."""
        existing = set(self.db.list_tables().tables)
        for name in SNAPSHOT_TABLES:
            physical = self._physical(name)
            want = self.manifest.versions.get(name)
            if want is None:  # a new index or generation: start the table afresh
                if physical in existing:
                    self._drop(physical)
                self._tables[name] = self.db.create_table(physical, schema=self.schemas[name])
                continue
            if physical not in existing:
                raise IndexCorrupt(
                    f"the index table {name!r} at {self.index_dir} is missing; "
                    "run `dowse index --rebuild`"
                )
            table = self.db.open_table(physical)
            if table.version != want:
                try:
                    table.restore(want)  # an interrupted write went past the snapshot
                except LANCE_ERRORS as exc:
                    # LanceDB says ValueError for a version that is gone (cleaned up, or
                    # a manifest from elsewhere): the snapshot cannot be brought back.
                    if not isinstance(exc, ValueError) and storage_error(exc) is None:
                        raise
                    raise IndexCorrupt(
                        f"the index table {name!r} at {self.index_dir} has no version {want}, "
                        "which the manifest names; run `dowse index --rebuild`"
                    ) from None
            self._tables[name] = table
        self._tables[CACHE_TABLE] = self._open_cache(existing, verify=not self.manifest.versions)

    def _open_cache(self, existing: set[str], *, verify: bool) -> Any:
        """The embedding cache, started afresh when it is not trusted, for another
        dimension or damaged (`verify` reads it whole, as a rebuild does before relying
        on it)."""
        schema = self.schemas[CACHE_TABLE]
        if CACHE_TABLE in existing and not self._trust_cache:
            self._drop(CACHE_TABLE)
        elif CACHE_TABLE in existing:
            try:
                table = self.db.open_table(CACHE_TABLE)
                if table.schema == schema:
                    if verify:
                        table.to_arrow()
                    return table
            except LANCE_ERRORS as exc:
                if storage_error(exc) is None:
                    raise
            self._drop(CACHE_TABLE)
        return self.db.create_table(CACHE_TABLE, schema=schema)

    def _drop_unused(self, older_than: timedelta) -> None:
        """Drop the snapshot tables no manifest needs any more: those a commit replaced
        more than `older_than` ago, and at once those no commit ever named (an interrupted
        rebuild's: no reader can have opened them). The caller holds the WriteLock."""
        live = {self._physical(n) for n in SNAPSHOT_TABLES} | {*self._replacing, CACHE_TABLE}
        retired = self.manifest.retired
        cutoff = self.clock() - older_than.total_seconds()
        kept: dict[str, float] = {}
        for name in set(self.db.list_tables().tables) - live:
            when = retired.get(name)
            if when is not None and when > cutoff:
                kept[name] = when
            elif _GENERATION.fullmatch(name):
                self._drop(name)
        # Recorded with the next commit; until then a dropped name stays listed, harmlessly.
        self.manifest = self.manifest.model_copy(update={"retired": kept})

    def _drop(self, name: str) -> None:
        try:
            self.db.drop_table(name)
        except LANCE_ERRORS as exc:
            if storage_error(exc) is None:
                raise
            shutil.rmtree(self.index_dir / "db" / f"{name}.lance", ignore_errors=True)

    def table(self, name: str) -> Any:
        """Snapshot table `name`, as `lancedb` opens it."""
        table = self._tables.get(name)
        if table is None:
            table = self._open(name, self.db)
            self._tables[name] = table
        return table

    def _open(self, name: str, db: Any) -> Any:
        try:
            table = db.open_table(self._physical(name))
            version = self.manifest.versions.get(name)
            if version is not None:
                table.checkout(version)
        except LANCE_ERRORS as exc:
            raise IndexCorrupt(
                f"the index table {name!r} at {self.index_dir} cannot be read "
                f"({lance_detail(exc) or exc}); run `dowse index --rebuild`"
            ) from None
        return table

    def _read_table(self, name: str) -> NativeTable:
        """Snapshot table `name`, for the queries below: a reader's through LanceDB's
        native core, a writer's through its own `lancedb` table (its writes included)."""
        if self._reader is None:
            # The native table under the writer's own handle: the same rows, order and
            # scores as `lancedb`'s query builder (tests/test_lance_read.py), without
            # its three schema reads a query.
            return NativeTable(self.table(name)._table._inner)
        table = self._read_tables.get(name)
        if table is None:
            table = self._open(name, self._reader)
            self._read_tables[name] = table
        return table

    def verify(self) -> None:
        """Read the whole snapshot, every row of every table and a probe of every index on
        it; IndexCorrupt names the first table that cannot be read. Opening a table reads
        only its metadata, so a truncated or deleted data file shows only here (or in the
        query that needs it)."""
        for name in self.live_tables():
            table = self.table(name)
            try:
                data = table.to_arrow()
                if data.num_rows:
                    for index in table.list_indices():
                        self._probe(table, index, data)
            except LANCE_ERRORS as exc:
                detail = lance_detail(exc)
                if detail is None:
                    raise
                raise IndexCorrupt(
                    f"the index table {name!r} at {self.index_dir} is damaged "
                    f"({detail}); run `dowse index --rebuild`"
                ) from None

    @staticmethod
    def cut_short(index_dir: Path, manifest: Manifest) -> str | None:
        """The first Lance file (data or index) of the snapshot's tables or the embedding
        cache that does not end whole, or None. A Lance file ends with the magic bytes
        `LANC`, so a file cut short shows by its last four bytes: a check cheap enough
        for every writer's run, where `verify` reads the whole snapshot. A file no
        version names (an interrupted write's) is a false alarm `verify` clears."""
        for name in [*(manifest.tables.get(n, n) for n in SNAPSHOT_TABLES), CACHE_TABLE]:
            table = index_dir / "db" / f"{name}.lance"
            for path in sorted([*table.glob("data/*.lance"), *table.glob("_indices/*/*.lance")]):
                try:
                    with open(path, "rb") as fh:
                        size = fh.seek(0, os.SEEK_END)
                        fh.seek(max(size - len(_LANCE_MAGIC), 0))
                        whole = fh.read() == _LANCE_MAGIC
                except OSError:
                    whole = False
                if not whole:
                    return str(path.relative_to(index_dir))
        return None

    @staticmethod
    def _probe(table: Any, index: Any, data: pa.Table) -> None:
        """One query that has to read `index` (a value from the first row as the key)."""
        column = index.columns[0]
        value = data.column(column)[0].as_py()
        if index.index_type == "FTS":
            word = next(iter(str(value).split()), "x")
            table.search(word, query_type="fts", fts_columns=column).limit(1).to_list()
        elif column == "vector":
            table.search(value).limit(1).to_list()
        elif isinstance(value, str):
            table.search().where(f"{column} = {quote_list([value])}").limit(1).to_list()

    # -- writing -----------------------------------------------------------------------

    def add(self, name: str, rows: list[dict[str, Any]]) -> None:
        if rows:
            self.table(name).add(self._arrow(name, rows))

    def _arrow(self, name: str, rows: list[dict[str, Any]]) -> pa.Table:
        """`rows` as a pyarrow Table of table `name`'s schema."""
        import numpy as np
        import pyarrow as pa

        schema = self.schemas[name]
        if "vector" not in schema.names:
            return pa.Table.from_pylist(rows, schema=schema)
        matrix = np.asarray([r["vector"] for r in rows], dtype=np.float16)
        columns = [
            pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), self.manifest.dim)
            if f.name == "vector"
            else pa.array([r[f.name] for r in rows], type=f.type)
            for f in schema
        ]
        return pa.Table.from_arrays(columns, schema=schema)

    def add_arrow(self, name: str, data: pa.Table) -> None:
        if data.num_rows:
            self.table(name).add(data)

    def delete_paths(self, name: str, paths: Sequence[str]) -> None:
        """Delete the rows of `paths` from table `name`; an empty table is left alone:
        LanceDB writes a new version for every delete, whether it matched or not, which
        the run would then commit and prune. (Counting a table's rows reads its manifest;
        counting those a filter matches is a scan, which costs a small table what the
        delete does.)"""
        table = self.table(name)
        if not paths or not table.count_rows():
            return
        for batch in _batched(list(paths), 500):
            table.delete(f"path IN ({quote_list(batch)})")

    def overwrite(self, name: str, rows: list[dict[str, Any]]) -> None:
        """Replace the rows of table `name` with `rows`: a table without indexes in one
        write (one new version), one with indexes by a delete and an add, which keeps
        its indexes (and so the full-text statistics they hold) as they were."""
        table = self.table(name)
        if rows and not table.list_indices():
            table.add(self._arrow(name, rows), mode="overwrite")
            return
        table.delete("true")
        self.add(name, rows)

    def commit(self, **changes: Any) -> None:
        """Record the current table versions as the new snapshot, atomically."""
        now = self.clock()
        versions = {name: self.table(name).version for name in SNAPSHOT_TABLES}
        retired = {**self.manifest.retired, **dict.fromkeys(self._replacing, now)}
        superseded: dict[str, list[tuple[int, float]]] = {}
        for name, version in versions.items():
            kept = self._still_read(name, now)
            old = self.manifest.versions.get(name)
            if old is not None and old != version:
                kept.append((old, now))
            if kept:
                superseded[name] = kept
        if "walk" in changes:
            # Only the walk options a run was given are signed: a commit that keeps the
            # manifest's (an unsigned one among them) keeps its signature, valid or not.
            changes["signature"] = sign(self.manifest.root, changes["walk"])
        self.manifest = self.manifest.model_copy(
            update={
                "versions": versions,
                "retired": retired,
                "superseded": superseded,
                "updated": now,
                **changes,
            }
        )
        # Left out while empty, so that a dowse from before rebuilds wrote beside the old
        # snapshot (or signed walk options) still reads an index that has none.
        empty = {
            k
            for k in ("tables", "retired", "superseded", "signature")
            if not getattr(self.manifest, k)
        }
        path = self.index_dir / MANIFEST
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        try:
            with open(tmp, "w") as fh:
                fh.write(self.manifest.model_dump_json(indent=2, exclude=empty))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
            self._replacing = []
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise IndexWriteError(
                f"cannot write the index manifest {path}: {exc.strerror}"
            ) from None

    def cleanup(self, older_than: timedelta | None = None) -> None:
        """Drop the table versions and tables no snapshot needs any more (after a commit).

        Those replaced less than `older_than` (default `Retention.grace`) ago stay, so a
        reader that opened the previous manifest a moment ago can finish its query;
        readers reopen the manifest for each request rather than holding a snapshot open.
        """
        self._drop_unused(self.retention.grace if older_than is None else older_than)

    def _still_read(self, name: str, now: float) -> list[tuple[int, float]]:
        """The versions of table `name` a commit replaced less than `Retention.grace` before
        `now`, with when: a reader that opened an earlier manifest may still be using them."""
        return [
            (v, at)
            for v, at in self.manifest.superseded.get(name, [])
            if now - at < self.retention.grace.total_seconds()
        ]

    def _prune_versions(self) -> None:
        """Delete the table versions no reader can still be using (at the start of a
        writer's run, the lock held).

        A reader uses the versions of the manifest it opened, for one request. So the
        versions in use are the manifest's and those a commit replaced less than
        `Retention.grace` ago (`Manifest.superseded`); the oldest of them is the floor, and
        every version before it can go, however often the index is written (a server
        re-indexing on every edit never leaves a quiet minute). LanceDB deletes versions
        only by age, through `optimize`: versions older than the floor by more than
        `Retention.prune_margin` go. `optimize` compacts before it prunes and measures the
        age when it prunes, so a first call compacts and the second starts pruning at once
        (the margin covers the moment between). The compacted version lies past the
        manifest's (same rows) and is committed at once, as is a table `_recover` restored
        (the same rows again): a run that then finds nothing to index would otherwise leave
        it uncommitted, the next run restore the manifest's version over it, and the
        versions past the manifest's, which no age reaches, keep a second copy of the data
        for good (django: 98 -> 132 MB after a no-op re-index).
        The embedding cache, read by writers only, keeps its latest version alone.
        """
        now = self.clock()
        grace, margin = self.retention.grace.total_seconds(), self.retention.prune_margin
        if not self.manifest.superseded and now - self.manifest.updated < grace:
            return  # written by a dowse that did not record what it replaced
        moved = False
        for name in SNAPSHOT_TABLES:
            want = self.manifest.versions.get(name)
            if want is None:
                continue
            floor = min([want, *(v for v, _ in self._still_read(name, now))])
            table = self._tables[name]
            moved = moved or table.version != want  # restored over an unfinished run
            stamps = {v["version"]: v["timestamp"] for v in table.list_versions()}
            if floor not in stamps:
                continue
            if any(v < floor and ts < stamps[floor] - margin for v, ts in stamps.items()):
                table.optimize()
                # LanceDB's version timestamps are naive local time.
                table.optimize(cleanup_older_than=datetime.now() - stamps[floor] + margin)
                moved = moved or table.version != want
                stamps = {v["version"]: v["timestamp"] for v in table.list_versions()}
            if (
                floor == want
                and table.version == want
                and any(v < floor for v in stamps)
                and now - self.manifest.updated >= grace
            ):
                # Versions within the prune margin of the manifest's (the compaction that
                # ended its run) outlive every prune: once the index has been left alone
                # for the grace period, the same rows again as a new version, committed,
                # leave them past the margin for the next run.
                table.restore(want)
                moved = True
        cache = self._tables[CACHE_TABLE]
        if len(cache.list_versions()) > 1:
            cache.optimize(cleanup_older_than=margin)
        if moved:
            self.commit()

    # -- forgetting --------------------------------------------------------------------

    def rewrite(self) -> None:
        """Write every snapshot table anew as its current rows alone (before a commit).

        A delete only marks rows deleted: their bytes stay in the data files of the table
        (compaction leaves a file whose deleted share is small) and in its indexes. Rows
        dropped because they held a secret must not stay anywhere, so the table is
        replaced by a copy of what it holds now. Its indexes go with it: the caller
        builds them again before committing; `forget_versions` then deletes the rest.
        """
        for name in SNAPSHOT_TABLES:
            table = self.table(name)
            table.add(table.to_arrow(), mode="overwrite")

    def written(self, name: str) -> bool:
        """Whether this run moved snapshot table `name` (rows added or deleted, an index
        made; committed since or not), or the snapshot it began from lacked it. A table it
        did not write is as the run that committed it left it: nothing of this run's for
        an `optimize` to compact or fold into its indexes."""
        return bool(self.table(name).version != self._began.get(name))

    def optimize(self, name: str) -> bool:
        """Compact table `name` and fold its new rows into its indexes (LanceDB's
        `optimize`, which also prunes versions older than a week); whether the table was
        settled: the call left its version as it was. A table settled at its current
        version is not asked again (on django a call that finds nothing still reads the
        table's manifest and indexes, some 2-13 ms)."""
        table = self.table(name)
        before = table.version
        if self._settled.get(name) == before:
            return True
        table.optimize()
        if table.version != before:
            return False
        self._settled[name] = before
        return True

    def _compact(self, name: str) -> bool:
        """Optimize table `name` until an `optimize` leaves its version as it was
        (`_COMPACT_ROUNDS` calls at most, none for a table an earlier call of this run
        settled at its current version); whether it did, so that a pruning `optimize`
        after the commit finds nothing to compact.

        `optimize` compacts, then prunes, then folds new rows into the indexes, and
        compaction merges only fragments the same indexes cover: rows added after an
        index was made (a rebuild that took some vectors from the cache, indexed them,
        and then embedded the rest) are folded into the index by one `optimize` and
        merged with the others only by the next. Left to a pruning call, that merge
        made a version past the committed one, and the pruning then deleted the version
        the manifest names: an index no reader could open."""
        return any(self.optimize(name) for _ in range(_COMPACT_ROUNDS))

    def forget_versions(self) -> None:
        """Delete, now, every table version and table the committed snapshot does not
        name (after a commit, the lock held), with no `Retention.grace`: a reader still using the
        previous snapshot fails its request, and its next one reads this snapshot."""
        # Compacted and committed first, so that the pruning never deletes a version the
        # manifest on disk names (an interruption then leaves an index that opens).
        for name in SNAPSHOT_TABLES:
            self._compact(name)  # unsettled, the second commit below names its last version
        self.commit(superseded={})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "removes every version": wanted
            for name in SNAPSHOT_TABLES:
                self.table(name).optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
        self._drop_unused(timedelta(0))
        self.commit(superseded={})

    def forget_drafts(self, names: Sequence[str]) -> None:
        """Delete, now, every version but the latest of the snapshot tables `names`,
        which no commit named before this run (a new index, a rebuild's generation, a
        table added to an older index): no reader can have opened any of their earlier
        versions. A run writes the files it parsed in batches and compacts them at its
        commit, which leaves a second copy of those rows behind in the batches' versions;
        an older table's copy goes `Retention.grace` later (`_prune_versions`). After the last
        commit, the lock held."""
        drafts = [n for n in names if len(self.table(n).list_versions()) > 1]
        # Compacted and committed first, as in `forget_versions`: the pruning below then
        # only deletes versions the manifest on disk does not name.
        settled = [n for n in drafts if self._compact(n)]  # the others wait for a run
        if any(self.table(n).version != self.manifest.versions.get(n) for n in drafts):
            self.commit()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "removes every version": wanted
            for name in settled:
                self.table(name).optimize(cleanup_older_than=timedelta(0), delete_unverified=True)

    # -- reading -----------------------------------------------------------------------
    # The queries against the tables are built here; a LanceDB failure inside one (a
    # damaged file met mid-query) leaves as dowse's own error (`storage_error`).

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except LANCE_ERRORS as exc:
            # Worded as the CLI and MCP seams worded it before the store converted it.
            error = storage_error(exc)
            if error is None:
                raise
            raise error from None

    def rows(
        self,
        name: str,
        columns: Sequence[str] | None = None,
        where: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """The rows of table `name` matching `where` (all when None), `columns` of them
        (all when None), at most `limit` (all when None), in the table's order."""
        with self._reading():
            return self._read_table(name).scan(columns, where, limit).to_pylist()  # type: ignore[no-any-return]

    def scan(self, name: str, columns: Sequence[str]) -> Any:
        """`columns` of every row of table `name`, as one pyarrow Table."""
        with self._reading():
            return self._read_table(name).scan(columns)

    def full_text(
        self,
        name: str,
        text: str,
        columns: Sequence[str],
        limit: int,
        where: str | None = None,
    ) -> list[dict[str, Any]]:
        """The `limit` best rows of table `name` for `text` by BM25 (`_score` among
        `columns`), best first; only rows matching `where` when given."""
        with self._reading():
            table = self._read_table(name)
            return table.full_text(text, columns, limit, where).to_pylist()  # type: ignore[no-any-return]

    def nearest(
        self, name: str, vector: Sequence[float], columns: Sequence[str], limit: int
    ) -> Any:
        """The `limit` rows of table `name` whose `vector` is closest to `vector` by
        cosine (`_distance` among `columns`: 1 - cosine), closest first, as one pyarrow
        Table."""
        with self._reading():
            return self._read_table(name).nearest(vector, columns, limit)

    def count(self, name: str, where: str | None = None) -> int:
        """How many rows of table `name` match `where` (all when None)."""
        with self._reading():
            return self._read_table(name).count(where)

    def size_bytes(self) -> int:
        total = 0
        for dirpath, _, files in os.walk(self.index_dir):
            for f in files:
                with contextlib.suppress(OSError):
                    total += os.path.getsize(os.path.join(dirpath, f))
        return total
