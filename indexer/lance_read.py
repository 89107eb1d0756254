"""Reading a committed snapshot's tables through LanceDB's native core alone.

`import lancedb` costs a cold query more than any other import (its Python layer: the
query builders' pydantic models, the embedding registry, `pyarrow.dataset`, the
namespace client); what a reader asks of a table (open it at a version, scan columns,
filter, full-text and nearest-vector queries, count) is all in its Rust extension,
`lancedb._lancedb`, which the Python layer only wraps. A reader (`Store.open`) goes
there directly; a writer imports `lancedb` to write, and reads through the native table
under its own `lancedb` handle (its uncommitted rows included); anything else a reader
asks for (`Store.verify`) imports `lancedb`.

Invariants:
- Each query is the one LanceDB's synchronous `Table.search()` builds for the same
  arguments (the same native calls, in its order), so a reader's rows, their order and
  their scores are the ones `lancedb` returns (tests/test_lance_read.py compares them).
- The extension's calls are coroutines; they run on one event loop in a daemon thread
  of this module's own (as `lancedb` does on its own), so a caller inside an event loop
  (the MCP server) and one outside it both can wait for them. A forked child starts a
  loop of its own on first use.
- Importing `lancedb._lancedb` registers the `lancedb` package without running its
  `__init__` (`unrun_package`): the package runs it, in full, the first time anything
  asks it for a name (a writer's `import_lancedb`).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from dowse.indexer.lance import import_pyarrow
from dowse.lazy import unrun_package

__all__ = ["LanceDbTable", "NativeDb", "NativeTable"]


def _native() -> Any:
    """The extension module, imported without `lancedb`'s Python layer."""
    unrun_package("lancedb")
    return importlib.import_module("lancedb._lancedb")


class _Loop:
    """An asyncio loop in a daemon thread, started on first use (again in a forked
    child, whose copy of the thread does not run)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: Any = None
        self._pid = 0

    def run(self, call: Callable[[], Awaitable[Any]]) -> Any:
        """What `call()`'s awaitable gives, awaited on the loop (the extension makes its
        futures only inside a running loop)."""
        import asyncio

        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                self._loop = asyncio.new_event_loop()
                self._pid = os.getpid()
                threading.Thread(
                    target=self._loop.run_forever, name="dowse-lance-read", daemon=True
                ).start()
            loop = self._loop
        future = asyncio.run_coroutine_threadsafe(_awaited(call), loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise


async def _awaited(call: Callable[[], Awaitable[Any]]) -> Any:
    return await call()


_LOOP = _Loop()


async def _collect(query: Any) -> Any:
    """All of `query`'s rows as one pyarrow Table."""
    import pyarrow as pa

    stream = await query.execute(max_batch_length=None, timeout=None)
    batches = [batch async for batch in stream]
    return pa.Table.from_batches(batches, stream.schema)


class NativeTable:
    """One table of the index, at the version it was checked out at."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def checkout(self, version: int) -> None:
        _LOOP.run(lambda: self._inner.checkout(version))

    def _query(self, columns: Sequence[str] | None, where: str | None, limit: int | None) -> Any:
        # In the order LanceDB's `_sync_query_to_async` sets them.
        query = self._inner.query()
        if limit is not None:
            query.limit(limit)
        if columns:
            query.select_columns(list(columns))
        if where:
            query.where(where)
        return query

    def scan(
        self, columns: Sequence[str] | None, where: str | None = None, limit: int | None = None
    ) -> Any:
        """`columns` (all when None) of the rows matching `where`, at most `limit`, in
        the table's order, as one pyarrow Table."""
        return _LOOP.run(lambda: _collect(self._query(columns, where, limit)))

    def full_text(self, text: str, columns: Sequence[str], limit: int, where: str | None) -> Any:
        """The `limit` best rows for `text` by BM25 (`_score`), best first; `where` as a
        prefilter."""
        query = self._query(columns, where, limit).nearest_to_text({"query": text})
        return _LOOP.run(lambda: _collect(query))

    def nearest(self, vector: Any, columns: Sequence[str], limit: int) -> Any:
        """The `limit` rows whose `vector` column is closest to `vector` (float32) by
        cosine (`_distance`), closest first."""
        import array

        import pyarrow as pa

        # As `Table.search(list)` hands it over: float32 values, as Python floats.
        values = array.array("f", vector).tolist()
        query = self._query(columns, None, limit).nearest_to(pa.array(values))
        query.distance_range(None, None)
        query.distance_type("cosine")
        query.column("vector")
        return _LOOP.run(lambda: _collect(query))

    def count(self, where: str | None = None) -> int:
        return int(_LOOP.run(lambda: self._inner.count_rows(where)))


class LanceDbTable:
    """A `lancedb` table read as a `NativeTable` is: what tests/test_lance_read.py holds
    the native reads to (the same rows, order and scores)."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def scan(
        self, columns: Sequence[str] | None, where: str | None = None, limit: int | None = None
    ) -> Any:
        query = self._table.search()
        if where:
            query = query.where(where)
        if columns:
            query = query.select(list(columns))
        return query.limit(limit).to_arrow()

    def full_text(self, text: str, columns: Sequence[str], limit: int, where: str | None) -> Any:
        query = self._table.search(text, query_type="fts")
        if where:
            query = query.where(where, prefilter=True)
        return query.select(list(columns)).limit(limit).to_arrow()

    def nearest(self, vector: Any, columns: Sequence[str], limit: int) -> Any:
        return (
            self._table.search(list(vector), vector_column_name="vector")
            .distance_type("cosine")
            .select(list(columns))
            .limit(limit)
            .to_arrow()
        )

    def count(self, where: str | None = None) -> int:
        return int(self._table.count_rows(where))


class NativeDb:
    """The tables of one LanceDB directory, opened for reading."""

    def __init__(self, path: Path) -> None:
        import_pyarrow()  # what the extension hands back is pyarrow's
        native = _native()
        # The arguments `lancedb.connect` passes for a local directory.
        self._inner = _LOOP.run(
            lambda: native.connect(
                str(path.expanduser().absolute()),
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                False,
                None,
            )
        )

    def open_table(self, name: str) -> NativeTable:
        return NativeTable(_LOOP.run(lambda: self._inner.open_table(name)))
