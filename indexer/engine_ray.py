"""The Ray engine: an index run's per-file stages and its embedding as a Ray Data pipeline.

`dowse index --engine ray [--address ADDRESS]` (`pip install 'dowse[ray]'`):

    walked files ─ from_items ─ map_batches(read → parse → chunk → summarise) ─▶ driver
    texts        ─ from_items ─ map_batches(embedder actors, ActorPoolStrategy) ─▶ driver

The per-file code is the local engine's (`indexer.extract`: the same read checks, secret
redaction, parse, chunk and summary), run in Ray tasks; the vectors come from a pool of
actors that each build the embedder once and may hold GPUs (`num_gpus`). The driver, the
process that runs `build_index`, holds the write lock and makes both commits through the
same store code: the index is the local engine's, under the same crash-safe rules.

Invariants:
- Ray is imported here and nowhere else, and this module only when the Ray engine is
  asked for (`indexer.engine.load_engine`): the default path never imports Ray.
- Without an address a local Ray is started for the run and stopped after it; with one,
  the run connects to that cluster and leaves it running; a Ray already initialised in
  this process (a test's cluster) is used as it is and left running.
- Workers read each file at the path the driver walked and check it is the file walked
  (device and inode, `indexer.reading.read_walked`): on several machines every node must
  see the tree at the same path on the same file system, or its files are skipped as
  swapped. Workers never write the index.
- A file whose outcome Ray cannot return (a worker crashed on it, a node was lost) is not
  lost: what did not come back is extracted by the local engine, whose isolation indexes
  a file that crashes the parser as text. A failure while embedding is `EngineError`; the
  first commit stands and the next run embeds what is missing.
"""

from __future__ import annotations

import logging
import pickle
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from dowse.errors import EmbedderError, EngineError
from dowse.indexer.extract import ExtractConfig, FileJob, FileOutcome, Pooling, extract_files

if TYPE_CHECKING:
    import numpy as np

    from dowse.indexer.embed import Embedder

__all__ = ["RayEngine"]

MAX_BLOCKS = 2000
"""At most this many blocks per dataset (a block is the unit Ray schedules)."""


def _extract_batch(batch: dict[str, Any], cfg: ExtractConfig) -> dict[str, Any]:
    """One batch of file jobs through the local engine's per-file code."""
    import numpy as np

    from dowse.indexer.extract import process_batch

    jobs = [
        FileJob(
            str(path),
            str(abspath),
            int(size),
            int(mtime_ns),
            None if old_hash is None else str(old_hash),
            dev=int(dev),
            ino=int(ino),
        )
        for path, abspath, size, mtime_ns, old_hash, dev, ino in zip(
            batch["path"],
            batch["abspath"],
            batch["size"],
            batch["mtime_ns"],
            batch["old_hash"],
            batch["dev"],
            batch["ino"],
            strict=True,
        )
    ]
    outcomes = [pickle.dumps(o) for o in process_batch(jobs, cfg)]
    return {"outcome": np.array(outcomes, dtype=object)}


class _EmbedderActor:
    """Holds one embedder for its life (a model loads once per actor, not per batch)."""

    def __init__(self, factory: Callable[[], Embedder], name: str, dim: int) -> None:
        self.embedder = factory()
        if (self.embedder.name, self.embedder.dim) != (name, dim):
            raise EmbedderError(
                f"the Ray workers' embedder is {self.embedder.name} ({self.embedder.dim}-d), "
                f"the index's {name} ({dim}-d)"
            )

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        return {"i": batch["i"], "vector": self.embedder.embed([str(t) for t in batch["text"]])}


def _blocks(n: int, per_block: int) -> int:
    return max(1, min(MAX_BLOCKS, -(-n // per_block)))


class RayEngine:
    """The per-file stages and the embedding on a Ray cluster (see the module's doc)."""

    name = "ray"

    def __init__(
        self,
        *,
        embedder: Callable[[], Embedder],
        address: str | None = None,
        embedders: int = 2,
        num_gpus: float = 0.0,
    ) -> None:
        """`embedder`: what each embedder actor calls to build its embedder (picklable:
        a registry entry, `functools.partial(get_embedder, name)`); it must make the
        vectors of the embedder the run is given. `embedders`: at most this many actors;
        `num_gpus`: GPUs each of them reserves."""
        self.factory, self.address = embedder, address
        self.embedders, self.num_gpus = embedders, num_gpus
        self._owned: bool | None = None  # None: not connected yet
        self.recovered: list[str] = []
        """Files Ray did not return, extracted by the local engine instead."""

    # -- the cluster -------------------------------------------------------------------

    def _connect(self) -> Any:
        """Ray, connected (on first use only: a run with nothing to do starts nothing)."""
        import ray
        import ray.data

        if self._owned is None:
            if ray.is_initialized():
                self._owned = False
            else:
                where = self.address or "a local Ray"
                try:
                    with warnings.catch_warnings():
                        # Starting Ray spawns its processes with fork+exec; lancedb warns
                        # about any fork, but nothing runs between the two.
                        warnings.filterwarnings("ignore", "lancedb fork", RuntimeWarning)
                        ray.init(
                            address=self.address or "local",
                            include_dashboard=False,
                            log_to_driver=False,
                            logging_level=logging.ERROR,
                        )
                except (ConnectionError, RuntimeError, ValueError) as exc:
                    raise EngineError(f"cannot start or reach {where}: {exc}") from None
                self._owned = True
            logging.getLogger("ray.data").setLevel(logging.ERROR)
            ray.data.DataContext.get_current().enable_progress_bars = False
        return ray

    def close(self) -> None:
        """Stop the Ray this engine started (a cluster it connected to keeps running)."""
        if self._owned:
            import ray

            ray.shutdown()
        self._owned = None

    def __enter__(self) -> RayEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the stages --------------------------------------------------------------------

    def extract(
        self,
        jobs: Sequence[FileJob],
        cfg: ExtractConfig,
        *,
        progress: Callable[[int, int], None],
        workers: int | None,
    ) -> Iterator[FileOutcome]:
        total = len(jobs)
        if not jobs:
            return
        ray = self._connect()
        items = [
            {
                "path": j.path,
                "abspath": j.abspath,
                "size": j.size,
                "mtime_ns": j.mtime_ns,
                "old_hash": j.old_hash,
                "dev": j.dev,
                "ino": j.ino,
            }
            for j in jobs
        ]
        size = Pooling().batch  # a worker's batch, as the local engine's
        data = ray.data.from_items(items, override_num_blocks=_blocks(total, size))
        data = data.map_batches(
            _extract_batch, fn_kwargs={"cfg": cfg}, batch_size=size, batch_format="numpy"
        )
        seen: set[str] = set()
        try:
            for batch in data.iter_batches(batch_size=None, batch_format="numpy"):
                for blob in batch["outcome"]:
                    out: FileOutcome = pickle.loads(blob)
                    seen.add(out.path)
                    yield out
                progress(len(seen), total)
        except ray.exceptions.RayError:
            pass  # what did not come back is extracted below
        rest = [j for j in jobs if j.path not in seen]
        self.recovered += [j.path for j in rest]
        done = len(seen)
        yield from extract_files(
            rest, cfg, progress=lambda d, n: progress(done + d, total), workers=workers
        )

    def embed(
        self, texts: Sequence[str], embedder: Embedder, *, batch: int
    ) -> Iterator[tuple[Sequence[int], np.ndarray]]:
        if not texts:
            return
        ray = self._connect()
        items = [{"i": i, "text": t} for i, t in enumerate(texts)]
        data = ray.data.from_items(items, override_num_blocks=_blocks(len(texts), batch))
        data = data.map_batches(
            _EmbedderActor,
            fn_constructor_kwargs={
                "factory": self.factory,
                "name": embedder.name,
                "dim": embedder.dim,
            },
            batch_size=batch,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(min_size=1, max_size=max(1, self.embedders)),
            num_gpus=self.num_gpus or None,
        )
        try:
            for part in data.iter_batches(batch_size=None, batch_format="numpy"):
                yield [int(i) for i in part["i"]], part["vector"]
        except ray.exceptions.RayError as exc:
            cause = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            raise EngineError(f"the Ray embedders failed: {cause[:300]}") from None
