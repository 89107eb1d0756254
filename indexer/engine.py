"""Where an index run computes: the per-file stages and the embedding.

An index run (`indexer.build`) owns the walk, the plan of what changes and both commits;
an engine only computes, and hands every result back to the process that commits:

- `extract`: file jobs → outcomes (read → check → hash → redact → parse → chunk →
  summarise, `indexer.extract.process_file`), in any order;
- `embed`: texts → vectors, as (positions in the texts given, their vectors) parts, in
  any order.

So every engine writes the same LanceDB tables through the same store code, under the
same incremental and crash-safe rules (the commits never leave the driver), and reads
files under the same trust and secret rules (the per-file code is the same).

    LocalEngine   worker processes of this machine; the embedder in this process (default)
    RayEngine     a Ray Data pipeline on a Ray cluster (`indexer.engine_ray`, imported
                  only when asked: `dowse index --engine ray`, `pip install 'dowse[ray]'`)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

from dowse.errors import EngineError
from dowse.indexer.extract import ExtractConfig, FileJob, FileOutcome, extract_files

if TYPE_CHECKING:
    import numpy as np

    from dowse.indexer.embed import Embedder

__all__ = ["ENGINES", "Engine", "LocalEngine", "load_engine"]

ENGINES = ("local", "ray")
"""The engines `dowse index --engine` names."""


class Engine(Protocol):
    name: str

    def extract(
        self,
        jobs: Sequence[FileJob],
        cfg: ExtractConfig,
        *,
        progress: Callable[[int, int], None],
        workers: int | None,
    ) -> Iterator[FileOutcome]:
        """One outcome per job, in any order."""
        ...

    def embed(
        self, texts: Sequence[str], embedder: Embedder, *, batch: int
    ) -> Iterator[tuple[Sequence[int], np.ndarray]]:
        """Every text's vector from `embedder`'s model, as (positions, vectors) parts in
        any order; a part is embedded at once (up to `batch` texts)."""
        ...

    def close(self) -> None:
        """Release what the engine started (processes, a cluster)."""
        ...


class LocalEngine:
    """Parser processes of this machine (`extract_files`), then the embedder in this
    process, batch after batch in the order given."""

    name = "local"

    def extract(
        self,
        jobs: Sequence[FileJob],
        cfg: ExtractConfig,
        *,
        progress: Callable[[int, int], None],
        workers: int | None,
    ) -> Iterator[FileOutcome]:
        return extract_files(jobs, cfg, progress=progress, workers=workers)

    def embed(
        self, texts: Sequence[str], embedder: Embedder, *, batch: int
    ) -> Iterator[tuple[Sequence[int], np.ndarray]]:
        for start in range(0, len(texts), batch):
            part = range(start, min(start + batch, len(texts)))
            yield part, embedder.embed(texts[start : start + batch])

    def close(self) -> None:
        pass  # extract_files stops its workers itself


RAY_INSTALL = "pip install 'dowse[ray]'"


def load_engine(
    name: str,
    *,
    embedder: Callable[[], Embedder],
    address: str | None = None,
    embedders: int = 2,
    num_gpus: float = 0.0,
) -> Engine:
    """The engine `dowse index --engine NAME` names; the Ray one is imported here, only
    when asked for. `embedder` builds the run's embedder (the Ray engine's actors call
    it); `address`, `embedders`, `num_gpus` are the Ray engine's (the local engine has
    no use for them)."""
    if name == "local":
        return LocalEngine()
    if name != "ray":
        raise EngineError(f"unknown engine {name!r} (known: {', '.join(ENGINES)})")
    try:
        import ray.data  # noqa: F401 - only to say what is missing
    except ImportError:
        raise EngineError(f"the Ray engine needs Ray: {RAY_INSTALL}") from None
    from dowse.indexer.engine_ray import RayEngine

    return RayEngine(embedder=embedder, address=address, embedders=embedders, num_gpus=num_gpus)
