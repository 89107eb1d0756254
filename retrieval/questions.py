"""The question-vector cache of one index snapshot: a question's embedding and its cosines
to every file summary and definition vector, each computed once per question.

Why: the loop searches with the same question every cycle, and `ask` ranks files by the
same question's closeness beside it; embedding it costs milliseconds and the scan of the
file vectors ~1 ms in memory, ~10 ms through LanceDB. The embedder loads on first use.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence

import numpy as np

from dowse.indexer.embed import Embedder
from dowse.indexer.store import Store
from dowse.retrieval.file_vectors import FileCosines, FileVectors
from dowse.retrieval.query import question_vector

__all__ = ["FILE_MATRIX_ROWS", "QuestionVectors"]

FILE_MATRIX_ROWS = 100_000
"""Up to this many file summary and definition vectors are scanned in memory (100k x 384
float32: 154 MB; django has 14.5k)."""
QUERY_VECTORS = 64
"""Question vectors kept (the loop's and `ask`'s questions of the last few asks)."""
QUESTION_COSINES = 8
"""Questions whose file cosines are kept."""


class QuestionVectors:
    """Embeds questions with the model that built `store`'s index (none without
    `embedder_factory`: lexical only) and compares them with its file vectors."""

    def __init__(
        self,
        store: Store,
        embedder_factory: Callable[[], Embedder] | None = None,
        *,
        matrix_rows: int = FILE_MATRIX_ROWS,
    ) -> None:
        self.store = store
        self.matrix_rows = matrix_rows
        """Up to this many file vectors are held in memory (`FILE_MATRIX_ROWS`)."""
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        self._searchable: dict[str, bool] = {}
        self._query_vectors: dict[str, list[float]] = {}
        self._cosines: dict[str, FileCosines] = {}
        self._file_vectors: FileVectors | None = None
        self._file_vectors_read = False
        self._lock = threading.Lock()
        self._file_lock = threading.Lock()
        """Held while the file vectors are read: a question is embedded meanwhile."""

    @property
    def has_vectors(self) -> bool:
        """Chunk vectors, and a model to embed queries with."""
        return self._has_rows("vectors")

    @property
    def has_file_vectors(self) -> bool:
        """File summary vectors, and a model to embed queries with."""
        return self._has_rows("file_vectors")

    def _has_rows(self, table: str) -> bool:
        if table not in self._searchable:
            self._searchable[table] = (
                self._embedder_factory is not None and self.store.count(table) > 0
            )
        return self._searchable[table]

    def embed_query(self, text: str) -> list[float] | None:
        """The query's vector (cached: the loop asks for the same text every cycle). A
        question of several lines is embedded with its first line too (an issue's title,
        the gist its body elaborates), which takes `TITLE_WEIGHT` of the vector: cosines
        with the blend are the blend of the cosines."""
        if (
            not text.strip()
            or not (self.has_vectors or self.has_file_vectors)
            or self._embedder_factory is None
        ):
            return None
        with self._lock:
            cached = self._query_vectors.get(text)
            if cached is not None:
                return cached
            if self._embedder is None:
                self._embedder = self._embedder_factory()
            embedder = self._embedder
        vector = [float(x) for x in question_vector(embedder, text)]
        with self._lock:
            if len(self._query_vectors) >= QUERY_VECTORS:
                self._query_vectors.clear()
            self._query_vectors[text] = vector
        return vector

    def clear_query_cache(self) -> None:
        with self._lock:
            self._query_vectors.clear()
            self._cosines.clear()

    def question_cosines(self, text: str) -> FileCosines | None:
        """The question's cosines to every file vector (None without file vectors or a
        model to embed it with). Cached: the loop's search and `ask`'s closeness ranking
        ask for the same question's."""
        with self._lock:
            cached = self._cosines.get(text)
        if cached is not None:
            return cached
        vector = self.embed_query(text)
        if vector is None or not self.has_file_vectors:
            return None
        cosines = self.file_cosines(vector)
        with self._lock:
            if len(self._cosines) >= QUESTION_COSINES:
                self._cosines.clear()
            self._cosines[text] = cosines
        return cosines

    def file_cosines(self, vector: Sequence[float]) -> FileCosines:
        """Every file summary and definition vector's cosine to `vector`. Up to
        `matrix_rows` vectors the scan is a matrix product over the snapshot's
        vectors, read once (a LanceDB scan costs ~10 ms of overhead per query on
        django; this ~1 ms); beyond, LanceDB scans them all."""
        query = np.asarray(vector, dtype=np.float32)
        query /= max(float(np.linalg.norm(query)), 1e-12)
        held = self.file_matrix()
        return held.cosines(query) if held is not None else FileVectors.scan(self.store, query)

    def file_matrix(self) -> FileVectors | None:
        """The snapshot's file vectors held in memory, read once (None beyond
        `matrix_rows`)."""
        with self._file_lock:
            if not self._file_vectors_read:
                self._file_vectors = FileVectors.read(self.store, self.matrix_rows)
                self._file_vectors_read = True
            return self._file_vectors

    def prefetch(self) -> threading.Thread:
        """Start reading the file vectors (`warm`) on a thread of their own, and return
        it: for a one-shot query, whose question needs them once it is embedded, while
        the caller checks the tree and reads the rows the full-text side needs (the
        LanceDB scan runs without the GIL). A failure is left to the query that needs
        them, which reads them again and reports it."""

        def read() -> None:
            # Whatever fails here fails again, on the caller's thread, in the query that
            # needs the vectors, where it is reported as that command reports errors; a
            # thread's own exception would print a traceback.
            with contextlib.suppress(Exception):
                self.warm()

        # Not a daemon: the interpreter waits for it at exit instead of stopping it
        # inside LanceDB's reads.
        thread = threading.Thread(target=read, name="dowse-file-vectors")
        thread.start()
        return thread

    def warm(self) -> None:
        """Read the file vectors now (django's 15k take ~0.1-0.4 s to read; they are
        read on first need otherwise)."""
        if self.has_file_vectors:
            self.file_matrix()
