"""The file-level vectors of an index, as one matrix: each file's summary and each of its
definitions (name and signature, and the docstring's opening when it has one).

Why: a file's closeness to a question is the larger of its summary's cosine and its
closest definition's. The summary says what the file is (path, module docstring, names
defined); a definition's docstring says in words what one piece of it does, which is
what bug reports and questions say too, and its name and signature what it is about.
Held in memory, the scan is one matrix product and a per-file maximum (~1-2 ms for
django's 14.5k vectors).

Invariants: rows come from the `file_vectors` table, where a summary's id is its file's
path and a definition's is the symbol id `path#qualified_name@start_line`. A file
without definitions is as close as its summary: closeness stays on the
cosine scale the evaluator's summary feature was calibrated on (the mean of the two,
which halves an undocumented file's, dropped django's fixed files that have no
docstrings out of the list: RESULTS-eval.md section 14).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from dowse.indexer.store import Store

__all__ = ["FileCosines", "FileVectors"]


@dataclass(frozen=True)
class FileVectors:
    paths: list[str]
    """Each file once, in first-seen order."""
    vectors: np.ndarray | None
    """Every row's unit vector (None when the rows were scanned, not held)."""
    summary_row: np.ndarray
    """Per file, the row of its summary (-1: none yet)."""
    definition_rows: np.ndarray
    """The definition rows, grouped by file (file i's are `definition_rows[starts[i]:
    starts[i + 1]]`)."""
    starts: np.ndarray
    definitions: list[tuple[str, int]]
    """(qualified name, start line) of each of `definition_rows`."""
    position: dict[str, int]
    """Each file's place in `paths`."""

    @classmethod
    def read(cls, store: Store, limit: int) -> FileVectors | None:
        """The `file_vectors` table of `store`'s snapshot, each vector made unit length
        (None when it has more than `limit` rows: then `scan`)."""
        if store.count("file_vectors") > limit:
            return None
        data = store.scan("file_vectors", ["id", "path", "vector"])
        from pyarrow import _compute as arrow_compute

        # `.flatten()` itself, without importing `pyarrow.compute` (`lookups._take`).
        flat = arrow_compute.call_function(
            "list_flatten",
            [data.column("vector").combine_chunks()],
            arrow_compute.ListFlattenOptions(False),
        )
        vectors = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(
            data.num_rows, -1
        )
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return cls.of(data.column("id").to_pylist(), data.column("path").to_pylist(), vectors)

    @staticmethod
    def scan(store: Store, query: np.ndarray) -> FileCosines:
        """Every row's cosine to the unit vector `query`, by a LanceDB scan of `store`'s
        `file_vectors` (for tables too large to hold)."""
        every = max(store.count("file_vectors"), 1)
        data = store.nearest("file_vectors", query.tolist(), ["id", "path", "_distance"], every)
        sims = 1.0 - data.column("_distance").to_numpy(zero_copy_only=False)
        held = FileVectors.of(data.column("id").to_pylist(), data.column("path").to_pylist(), None)
        return FileCosines(held, sims.astype(np.float32))

    @classmethod
    def of(
        cls, ids: Sequence[str], paths: Sequence[str], vectors: np.ndarray | None
    ) -> FileVectors:
        index: dict[str, int] = {}
        owner = np.fromiter(
            (index.setdefault(p, len(index)) for p in paths), dtype=np.int64, count=len(paths)
        )
        summary_row = np.full(len(index), -1, dtype=np.int64)
        definitions, named = [], []
        for row, (ident, path) in enumerate(zip(ids, paths, strict=True)):
            if ident == path:
                summary_row[owner[row]] = row
            else:
                definitions.append(row)
                named.append(_name_and_line(ident, path))
        rows = np.asarray(definitions, dtype=np.int64)
        order = np.argsort(owner[rows], kind="stable") if len(rows) else rows
        rows = rows[order]
        starts = np.searchsorted(owner[rows], np.arange(len(index) + 1))
        return cls(
            paths=list(index),
            vectors=vectors,
            summary_row=summary_row,
            definition_rows=rows,
            starts=starts,
            definitions=[named[i] for i in order.tolist()],
            position=index,
        )

    def cosines(self, query: np.ndarray) -> FileCosines:
        """Every held row's cosine to the unit vector `query`."""
        assert self.vectors is not None, "scanned rows hold no vectors"
        # einsum, not `@`: a BLAS matrix-vector product spins up threads that fight the
        # query embedding for the cores.
        return FileCosines(self, np.einsum("ij,j->i", self.vectors, query))

    def closeness(self, sims: np.ndarray) -> np.ndarray:
        """Per file, from every row's cosine `sims`: the larger of its summary's and its
        closest definition's (-1 for a part it lacks)."""
        best = np.where(self.summary_row >= 0, sims[np.maximum(self.summary_row, 0)], -1.0).astype(
            np.float32
        )
        if len(self.definition_rows):
            documented = np.flatnonzero(self.starts[1:] > self.starts[:-1])
            best[documented] = np.maximum(
                best[documented],
                np.maximum.reduceat(sims[self.definition_rows], self.starts[documented]),
            )
        return best

    def closest_definitions(
        self, sims: np.ndarray, paths: Sequence[str]
    ) -> dict[str, tuple[str, int]]:
        """For each of `paths` with definitions, the (qualified name, start
        line) of the one closest to the query, from every row's cosine `sims`."""
        out: dict[str, tuple[str, int]] = {}
        for path in paths:
            i = self.position.get(path)
            if i is None or self.starts[i] == self.starts[i + 1]:
                continue
            lo, hi = int(self.starts[i]), int(self.starts[i + 1])
            out[path] = self.definitions[lo + int(np.argmax(sims[self.definition_rows[lo:hi]]))]
        return out


@dataclass(frozen=True)
class FileCosines:
    """One query's cosine to every row of `held`."""

    held: FileVectors
    sims: np.ndarray

    @cached_property
    def closeness(self) -> np.ndarray:
        """Per file of `held`, its closeness (`FileVectors.closeness`), computed once."""
        return self.held.closeness(self.sims)

    def nearest(self, k: int) -> list[tuple[str, float]]:
        """The `k` closest files, (path, closeness), best first (ties by path)."""
        scores = self.closeness
        paths = self.held.paths
        k = min(k, len(paths))
        nearest = np.argpartition(-scores, k - 1)[:k].tolist() if k else []
        nearest.sort(key=lambda i: (-float(scores[i]), paths[i]))
        return [(paths[i], float(scores[i])) for i in nearest]


def _name_and_line(symbol_id: str, path: str) -> tuple[str, int]:
    """(qualified name, start line) from a symbol id `path#qualified_name@line`."""
    name, _, line = symbol_id[len(path) + 1 :].rpartition("@")
    return name, int(line) if line.isdigit() else 0
