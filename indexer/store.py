"""The on-disk index: LanceDB tables tied together by a manifest.

Layout of an index directory (default `<root>/.dowse/`):

    manifest.json   format version, model, dimension, root, and the table versions that
                    together form the last committed snapshot
    write.lock      held (flock) by the one process that writes
    db/             LanceDB tables: files, symbols, chunks, imports, vectors, skipped,
                    and embed_cache (text hash -> vector, shared by every snapshot)

Invariants:
- manifest.json is replaced atomically (write, fsync, rename) and only after every table
  write it refers to has committed. Readers open each table at the version the manifest
  names, so they see one consistent snapshot even while a writer works.
- A writer that finds a table ahead of the manifest (an interrupted run) restores it to
  the manifest's version before writing: a crash never leaves a mixed snapshot.
- embed_cache is append-only and not part of a snapshot: a vector computed once is kept
  even when the run that computed it is interrupted.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
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
    IndexCorrupt,
    IndexLocked,
    IndexNotFound,
    IndexVersionMismatch,
    IndexWriteError,
)

__all__ = ["FORMAT_VERSION", "Manifest", "Store", "WriteLock", "quote_list"]

FORMAT_VERSION = 2
MANIFEST = "manifest.json"
SNAPSHOT_TABLES = ("files", "symbols", "chunks", "imports", "vectors", "skipped")
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
        "skipped": pa.schema([("path", s), ("reason", s)]),
        CACHE_TABLE: pa.schema([("hash", s), ("vector", vector)]),
    }


def quote_list(values: Iterable[str]) -> str:
    """A SQL list literal for a `col IN (...)` filter."""
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


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
    embedded: bool = Field(default=False, description="every chunk has a vector")
    no_embed: bool = Field(default=False, description="built with --no-embed")
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
        for name in (*SNAPSHOT_TABLES, CACHE_TABLE):
            want = self.manifest.versions.get(name)
            if name not in existing or (name in SNAPSHOT_TABLES and want is None):
                if name in existing:
                    self.db.drop_table(name)
                self._tables[name] = self.db.create_table(name, schema=self.schemas[name])
                continue
            table = self.db.open_table(name)
            if name == CACHE_TABLE and table.schema != self.schemas[name]:
                self.db.drop_table(name)  # a cache for another model dimension
                table = self.db.create_table(name, schema=self.schemas[name])
            if want is not None and table.version != want:
                table.restore(want)  # an interrupted write went past the snapshot
            self._tables[name] = table

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
                    f"the index table {name!r} at {self.index_dir} cannot be read ({exc}); "
                    "run `dowse index --rebuild`"
                ) from None
            self._tables[name] = table
        return table

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
