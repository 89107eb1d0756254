"""Stand-ins for `indexer.extract`'s per-file work that die like a segfaulting grammar on
one file, for tests/test_extract.py.

A module of their own, importing nothing but `indexer.extract`: the pool's workers
unpickle them by reference, so every worker imports this module, and each worker the
crash leaves to isolate a file would otherwise import a whole test module (the index
builder, the searcher) again first."""

from __future__ import annotations

import os

from dowse.indexer.extract import ExtractConfig, FileJob, FileOutcome, process_file


def crashing_safe(job: FileJob, cfg: ExtractConfig) -> FileOutcome:
    """Stands in for extract._safe in worker processes."""
    if job.path.endswith("payments.py"):
        os._exit(139)
    return process_file(job, cfg)


def crashing_batch(jobs: list[FileJob], cfg: ExtractConfig) -> list[FileOutcome]:
    return [crashing_safe(job, cfg) for job in jobs]
