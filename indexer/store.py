"""The on-disk index: LanceDB tables tied together by a manifest.

Layout of an index directory (default `<root>/.dowse/`):

    manifest.json   format version, model, dimension, root, and the table versions that
                    together form the last committed snapshot
    write.lock      held (flock) by the one process that writes
    db/             LanceDB tables: files (with each file's summary text), symbols, chunks,
                    imports, vectors (one per chunk), file_vectors (one per file summary),
                    skipped, and embed_cache (text hash -> vector, shared by every snapshot)

Invariants:
- manifest.json is replaced atomically (write, fsync, rename) and only after every table
  write it refers to has committed. Readers open each table at the version the manifest
  names, so they see one consistent snapshot even while a writer works.
- A writer that finds a table ahead of the manifest (an interrupted run) restores it to
  the manifest's version before writing: a crash never leaves a mixed snapshot.
- embed_cache is append-only and not part of a snapshot: a vector computed once is kept
  even when the run that computed it is interrupted. Being only a cache, a damaged one is
  dropped and started afresh by `--rebuild` (an incremental run reports it).
- A snapshot table the manifest names but that is missing or unreadable is an
  `IndexCorrupt` ("run `dowse index --rebuild`"), never silently recreated empty: that
  would drop its rows while the files table still says they are indexed. LanceDB's own
  failures become `IndexWriteError` (the disk refused a write) or `IndexCorrupt` (a file
  is missing or damaged) through `storage_error`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import shutil
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from indexer.errors import (
    DowseError,
    IndexCorrupt,
    IndexLocked,
    IndexNotFound,
    IndexVersionMismatch,
    IndexWriteError,
)

__all__ = ["FORMAT_VERSION", "Manifest", "Store", "WriteLock", "quote_list", "storage_error"]

FORMAT_VERSION = 3
MANIFEST = "manifest.json"
SNAPSHOT_TABLES = ("files", "symbols", "chunks", "imports", "vectors", "file_vectors",
                   "skipped")
CACHE_TABLE = "embed_cache"

os.environ.setdefault("LANCE_LOG", "error")  # keep Rust-side deprecation chatter off stderr


def _schemas(dim: int) -> dict[str, pa.Schema]:
    s, i32, i64 = pa.string(), pa.int32(), pa.int64()
    # float16 halves the largest part of the index; cosine error stays below 1e-3.
    vector = pa.list_(pa.float16(), dim)
    return {
        "files": pa.schema([
            ("path", s), ("language", s), ("size", i64), ("hash", s), ("mtime_ns", i64),
            ("parser", s), ("note", s), ("n_symbols", i32), ("n_chunks", i32),
            ("summary", s), ("summary_hash", s),
        ]),
        "symbols": pa.schema([
            ("id", s), ("path", s), ("name", s), ("qualified_name", s), ("kind", s),
            ("signature", s), ("docstring", s), ("start_line", i32), ("end_line", i32),
            ("parent", s), ("language", s), ("name_lower", s), ("tokens", s),
        ]),
        "chunks": pa.schema([
            ("id", s), ("path", s), ("language", s), ("start_line", i32), ("end_line", i32),
            ("symbol", s), ("text", s), ("header", s), ("hash", s), ("tokens", s),
        ]),
        "imports": pa.schema([
            ("path", s), ("module", s), ("names", pa.list_(s)), ("line", i32), ("resolved", s),
        ]),
        "vectors": pa.schema([("id", s), ("path", s), ("hash", s), ("vector", vector)]),
        "file_vectors": pa.schema([("id", s), ("path", s), ("hash", s), ("vector", vector)]),
        "skipped": pa.schema([("path", s), ("reason", s)]),
        CACHE_TABLE: pa.schema([("hash", s), ("vector", vector)]),
    }


def quote_list(values: Iterable[str]) -> str:
    """A SQL list literal for a `col IN (...)` filter."""
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


_WRITE_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EFBIG,
                           errno.EDQUOT})
_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_RUST_LOCATION = re.compile(r",? /\S+\.rs:\d+:\d+")
_LANCE_PREFIX = re.compile(r"^(?:lance error: )?(?:LanceError\(\w+\): )?")


def _lance_detail(exc: BaseException) -> str | None:
    """What a LanceDB storage failure says, without its Rust source locations; None for
    any other exception."""
    text = str(exc)
    if not isinstance(exc, (RuntimeError, OSError, ValueError)) or not (
        "lance error" in text or "LanceError" in text
        or re.search(r"Table '\w+' was not found", text)
    ):
        return None
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return _LANCE_PREFIX.sub("", _RUST_LOCATION.sub("", first))[:200]


def storage_error(exc: BaseException, index_dir: Path | None = None) -> DowseError | None:
    """The one-line error for a failure inside LanceDB's storage layer, or None when `exc`
    is anything else (a bug, which keeps its traceback).

    A write the operating system refused (read-only, permission, disk full, file size
    limit) is an `IndexWriteError`; anything else (a missing, truncated or garbled file)
    an `IndexCorrupt` that names the fix.
    """
    if isinstance(exc, DowseError):
        return exc
    detail = _lance_detail(exc)
    if detail is None:
        return None
    where = f" at {index_dir}" if index_dir is not None else ""
    code = _OS_ERROR.search(str(exc))
    if code and int(code.group(1)) in _WRITE_ERRNOS:
        return IndexWriteError(f"cannot write the index{where}: {os.strerror(int(code.group(1)))}")
    return IndexCorrupt(f"the index{where} is damaged ({detail}); run `dowse index --rebuild`")


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
    embedded: bool = Field(default=False,
                           description="every vector the embed scope asks for exists")
    no_embed: bool = Field(default=False, description="built with --embed none")
    embed_chunks: bool = Field(default=True, description="chunks have vectors, not only "
                               "file summaries (--embed all, not --embed files)")
    walk: dict[str, Any] = Field(default_factory=dict,
                                 description="the walk options of the last run (reused)")
    created: float = Field(default_factory=time.time)
    updated: float = Field(default_factory=time.time)


class WriteLock:
    """An exclusive, cross-process writer lock (flock), released when its holder dies."""

    def __init__(self, index_dir: Path) -> None:
        self.path = index_dir / "write.lock"
        self._fd: int | None = None

    def acquire(self, timeout: float | None, on_wait: Any = None) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise IndexWriteError(
                f"cannot write the index at {self.path.parent}: {exc.strerror}"
            ) from None
        deadline = None if timeout is None else time.monotonic() + timeout
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    os.close(fd)
                    holder = self.holder()
                    raise IndexLocked(
                        f"another dowse process{holder} is writing the index at "
                        f"{self.path.parent}; try again when it finishes"
                    ) from None
                if not waited and on_wait is not None:
                    on_wait(self.holder())
                waited = True
                time.sleep(0.2)
        with contextlib.suppress(OSError):
            # The pid only tells a waiting process whom it waits for: a disk too full for
            # these few bytes must not stop a run that may have nothing to write.
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def holder(self) -> str:
        try:
            pid = self.path.read_text().strip()
        except OSError:
            return ""
        return f" (pid {pid})" if pid else ""

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


class Store:
    """Access to one index directory; `Store.open` for readers, `Store.create` for writers."""

    def __init__(self, index_dir: Path, manifest: Manifest, db: Any) -> None:
        self.index_dir = index_dir
        self.manifest = manifest
        self.db = db
        self._tables: dict[str, Any] = {}
        self.schemas = _schemas(manifest.dim)

    # -- opening -----------------------------------------------------------------------

    @staticmethod
    def read_manifest(index_dir: Path) -> Manifest:
        path = index_dir / MANIFEST
        try:
            raw = path.read_text()
        except FileNotFoundError:
            raise IndexNotFound(
                f"no index at {index_dir}; run `dowse index` first"
            ) from None
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
        import lancedb

        store = cls(index_dir, manifest, lancedb.connect(str(index_dir / "db")))
        for name in SNAPSHOT_TABLES:
            store.table(name)  # fail now, with a clear message, if a table is damaged
        return store

    @classmethod
    def create(cls, index_dir: Path, *, root: Path, model: str, dim: int, rebuild: bool) -> Store:
        """Open (or start) an index for writing; the caller must hold the WriteLock."""
        import lancedb

        manifest: Manifest | None = None
        if not rebuild:
            try:
                manifest = cls.read_manifest(index_dir)
            except IndexNotFound:
                manifest = None
            if manifest is not None and (manifest.model, manifest.dim) != (model, dim):
                raise IndexVersionMismatch(
                    f"the index at {index_dir} was built with {manifest.model} "
                    f"({manifest.dim}-d), not {model} ({dim}-d); "
                    "run `dowse index --rebuild`"
                )
        dbdir = index_dir / "db"
        try:
            dbdir.mkdir(parents=True, exist_ok=True)
            if rebuild or manifest is None:
                # Readers see "no index" rather than tables vanishing under them.
                (index_dir / MANIFEST).unlink(missing_ok=True)
                for name in SNAPSHOT_TABLES:
                    shutil.rmtree(dbdir / f"{name}.lance", ignore_errors=True)
        except OSError as exc:
            raise IndexWriteError(
                f"cannot write the index at {index_dir}: {exc.strerror}"
            ) from None
        if manifest is None:
            manifest = Manifest(model=model, dim=dim, root=str(root))
        store = cls(index_dir, manifest, lancedb.connect(str(dbdir)))
        store._recover()
        return store

    def _recover(self) -> None:
        """Bring every table to the manifest's snapshot, creating missing ones."""
        existing = set(self.db.list_tables().tables)
        for name in SNAPSHOT_TABLES:
            want = self.manifest.versions.get(name)
            if want is None:  # a new index: start the table afresh
                if name in existing:
                    self.db.drop_table(name)
                self._tables[name] = self.db.create_table(name, schema=self.schemas[name])
                continue
            if name not in existing:
                raise IndexCorrupt(f"the index table {name!r} at {self.index_dir} is missing; "
                                   "run `dowse index --rebuild`")
            table = self.db.open_table(name)
            if table.version != want:
                table.restore(want)  # an interrupted write went past the snapshot
            self._tables[name] = table
        self._tables[CACHE_TABLE] = self._open_cache(existing, verify=not self.manifest.versions)

    def _open_cache(self, existing: set[str], *, verify: bool) -> Any:
        """The embedding cache, started afresh when it is for another dimension or damaged
        (`verify` reads it whole, as a rebuild does before relying on it)."""
        schema = self.schemas[CACHE_TABLE]
        if CACHE_TABLE in existing:
            try:
                table = self.db.open_table(CACHE_TABLE)
                if table.schema == schema:
                    if verify:
                        table.to_arrow()
                    return table
            except Exception as exc:
                if storage_error(exc) is None:
                    raise
            self._drop(CACHE_TABLE)
        return self.db.create_table(CACHE_TABLE, schema=schema)

    def _drop(self, name: str) -> None:
        try:
            self.db.drop_table(name)
        except Exception as exc:
            if storage_error(exc) is None:
                raise
            shutil.rmtree(self.index_dir / "db" / f"{name}.lance", ignore_errors=True)

    def table(self, name: str) -> Any:
        table = self._tables.get(name)
        if table is None:
            try:
                table = self.db.open_table(name)
                version = self.manifest.versions.get(name)
                if version is not None:
                    table.checkout(version)
            except Exception as exc:
                raise IndexCorrupt(
                    f"the index table {name!r} at {self.index_dir} cannot be read "
                    f"({_lance_detail(exc) or exc}); run `dowse index --rebuild`"
                ) from None
            self._tables[name] = table
        return table

    def verify(self) -> None:
        """Read the whole snapshot, every row of every table and a probe of every index on
        it; IndexCorrupt names the first table that cannot be read. Opening a table reads
        only its metadata, so a truncated or deleted data file shows only here (or in the
        query that needs it)."""
        for name in SNAPSHOT_TABLES:
            table = self.table(name)
            try:
                data = table.to_arrow()
                if data.num_rows:
                    for index in table.list_indices():
                        self._probe(table, index, data)
            except Exception as exc:
                detail = _lance_detail(exc)
                if detail is None:
                    raise
                raise IndexCorrupt(f"the index table {name!r} at {self.index_dir} is damaged "
                                   f"({detail}); run `dowse index --rebuild`") from None

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
        if not rows:
            return
        schema = self.schemas[name]
        if "vector" not in schema.names:
            self.table(name).add(pa.Table.from_pylist(rows, schema=schema))
            return
        matrix = np.asarray([r["vector"] for r in rows], dtype=np.float16)
        columns = [
            pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), self.manifest.dim)
            if f.name == "vector" else pa.array([r[f.name] for r in rows], type=f.type)
            for f in schema
        ]
        self.table(name).add(pa.Table.from_arrays(columns, schema=schema))

    def add_arrow(self, name: str, data: pa.Table) -> None:
        if data.num_rows:
            self.table(name).add(data)

    def delete_paths(self, name: str, paths: Sequence[str]) -> None:
        table = self.table(name)
        for batch in _batched(list(paths), 500):
            table.delete(f"path IN ({quote_list(batch)})")

    def overwrite(self, name: str, rows: list[dict[str, Any]]) -> None:
        table = self.table(name)
        table.delete("true")
        self.add(name, rows)

    def commit(self, **changes: Any) -> None:
        """Record the current table versions as the new snapshot, atomically."""
        versions = {name: self.table(name).version for name in SNAPSHOT_TABLES}
        self.manifest = self.manifest.model_copy(
            update={"versions": versions, "updated": time.time(), **changes}
        )
        path = self.index_dir / MANIFEST
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        try:
            with open(tmp, "w") as fh:
                fh.write(self.manifest.model_dump_json(indent=2))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise IndexWriteError(
                f"cannot write the index manifest {path}: {exc.strerror}"
            ) from None

    def cleanup(self, older_than: timedelta = timedelta(seconds=60)) -> None:
        """Drop table versions no snapshot needs any more (after a commit).

        Versions younger than `older_than` stay, so a reader that opened the previous
        manifest a moment ago can finish its query; readers reopen the manifest for each
        request rather than holding a snapshot open.
        """
        # optimize(cleanup_older_than=...) would also compact, writing a version past the
        # snapshot; cleanup_old_versions only deletes.
        for name in (*SNAPSHOT_TABLES, CACHE_TABLE):
            with contextlib.suppress(Exception), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.table(name).cleanup_old_versions(older_than=older_than)

    # -- reading -----------------------------------------------------------------------

    def rows(self, name: str, columns: Sequence[str] | None = None,
             where: str | None = None) -> list[dict[str, Any]]:
        table = self.table(name)
        query = table.search()
        if where:
            query = query.where(where)
        if columns:
            query = query.select(list(columns))
        return query.limit(None).to_arrow().to_pylist()  # type: ignore[no-any-return]

    def count(self, name: str) -> int:
        return int(self.table(name).count_rows())

    def size_bytes(self) -> int:
        total = 0
        for dirpath, _, files in os.walk(self.index_dir):
            for f in files:
                with contextlib.suppress(OSError):
                    total += os.path.getsize(os.path.join(dirpath, f))
        return total
