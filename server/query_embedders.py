"""The query embedders of one process, one per model, and a question's head start.

`QueryEmbedders` makes an index's query embedder (`embedder_for_model`) once per model
and lends it to every searcher on an index of that model (a `Workspace` holds one).
`prepare` has it start loading what a question will be embedded with, on a thread of
its own (`prepare_question`: onnxruntime builds a session without holding the GIL), so
that on a second core the graph is built while this thread works on.

Apart from `server.workspace`, which imports everything an answer needs, so that a
cold command (`dowse ask`, `dowse search`) can start the load before those imports: the
session's build then overlaps them instead of the index's opening alone, and the
question's embedding does not wait for it (benchmarks/RESULTS.md, issue 26).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from dowse.errors import DowseError
from dowse.indexer.embed import embedder_for_model

if TYPE_CHECKING:
    from dowse.indexer.embed import Embedder

__all__ = ["QueryEmbedders"]


class QueryEmbedders:
    """A process's query embedders by model, each made on first need."""

    def __init__(self) -> None:
        self._by_model: dict[str, Embedder | None] = {}
        self._prepared: set[tuple[Path, str]] = set()
        self._lock = threading.Lock()

    def get(self, model: str) -> Embedder | None:
        """The query embedder of an index built with `model` (None: no backend makes its
        vectors; the searcher is lexical then)."""
        with self._lock:
            if model not in self._by_model:
                factory = embedder_for_model(model)
                self._by_model[model] = None if factory is None else factory()
            return self._by_model[model]

    def prepare(self, root: Path, index_dir: Path, question: str) -> None:
        """Have the embedder of the index at `index_dir` start loading what `question`
        will be embedded with, when that index is `root`'s own and has vectors; once per
        index and question (a second call, as a workspace makes after the command's,
        finds it started). Nothing when the manifest cannot be read or the embedder
        cannot be made: the query says what is wrong, where it did before."""
        from dowse.indexer.locate import is_index_of
        from dowse.indexer.store import Store
        from dowse.retrieval.query import prepare_question

        with self._lock:
            if (index_dir, question) in self._prepared:
                return
            self._prepared.add((index_dir, question))
        try:
            manifest = Store.read_manifest(index_dir)
            if manifest.no_embed or not is_index_of(manifest, root):
                return
            embedder = self.get(manifest.model)
        except DowseError:
            return
        if embedder is not None:
            prepare_question(embedder, question)
