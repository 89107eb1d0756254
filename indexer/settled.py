"""What a run that finds nothing to do needs, kept beside the manifest (`settled.json`),
so that the next such run opens no table: no LanceDB import, no table maintenance.

A run of `dowse index` that changes nothing (`build.build_index`) records here the
snapshot it found unchanged: each file's size and mtime, the skipped files, the counts
its report shows, the options it ran with, and a fingerprint of the table directories.
The next run with the same options whose walk finds the same files, stat for stat,
answers from this record instead of opening the index.

Invariants:
- A record describes one snapshot: it names the manifest's `updated` stamp, table
  versions and generation, and any commit makes it stale. A stale, damaged or missing
  record only means the run opens the index as before; it is never trusted partially.
- It is only used when the run that wrote it left nothing for a writer to do: written at
  least the writer's grace period (`store.Retention.grace`) after every version or table
  the manifest retired, so that the writer's start (dropping retired tables, pruning
  versions no reader uses, restoring a table an interrupted run left ahead of the
  manifest) had already found nothing more, and with the table directories as they were
  then (a version written since, committed or not, changes their fingerprint).
- Written like the manifest (temporary file, rename), by the writer holding the lock.
"""

from __future__ import annotations

import contextlib
import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dowse.indexer.store import Manifest, Retention

__all__ = ["SETTLED", "Settled", "load", "record"]

SETTLED = "settled.json"


class Settled(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stamp: list[Any] = Field(description="the snapshot: manifest `updated`, versions, tables")
    options: dict[str, Any] = Field(description="the run's options that decide what is indexed")
    disk: list[list[Any]] = Field(description="LanceDB table directories and their versions")
    checked: float = Field(description="when the run that wrote this found nothing to do")
    files: dict[str, tuple[int, int]] = Field(description="path -> (size, mtime_ns)")
    skipped: list[tuple[str, str]] = Field(description="(path, reason), sorted")
    vectors: int = Field(ge=0, description="rows of the chunk vectors table")
    counts: dict[str, int] = Field(description="files, symbols, chunks, vectors_pending")


def _stamp(manifest: Manifest) -> list[Any]:
    return [manifest.updated, sorted(manifest.versions.items()), sorted(manifest.tables.items())]


def _disk(index_dir: Path) -> list[list[Any]]:
    """Each table directory with the mtime of its versions folder: every write of a
    table (a commit or an interrupted run's) adds a file there."""
    out: list[list[Any]] = []
    with os.scandir(index_dir / "db") as entries:
        for entry in entries:
            try:
                stamp = os.stat(os.path.join(entry.path, "_versions")).st_mtime_ns
            except OSError:
                stamp = None
            out.append([entry.name, stamp])
    return sorted(out, key=lambda e: e[0])


def _settled_at(manifest: Manifest, grace: timedelta) -> float:
    """When a writer's start, keeping what commits replaced for `grace`, stops finding
    versions or tables to drop."""
    times = [manifest.updated, *manifest.retired.values()]
    times += [at for kept in manifest.superseded.values() for _, at in kept]
    return max(times) + grace.total_seconds()


def record(
    index_dir: Path,
    manifest: Manifest,
    *,
    options: dict[str, Any],
    files: dict[str, tuple[int, int]],
    skipped: list[tuple[str, str]],
    vectors: int,
    counts: dict[str, int],
    checked: float,
) -> None:
    """Write the record of a run that found nothing to do (the lock held), at `checked`
    on the clock the writer dates its commits with (`Store.clock`). Best effort: a
    record that cannot be written leaves the next run to open the index."""
    settled = Settled(
        stamp=_stamp(manifest),
        options=options,
        disk=_disk(index_dir),
        checked=checked,
        files=files,
        skipped=sorted(skipped),
        vectors=vectors,
        counts=counts,
    )
    path = index_dir / SETTLED
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    try:
        tmp.write_text(settled.model_dump_json())
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def load(
    index_dir: Path,
    manifest: Manifest,
    options: dict[str, Any],
    *,
    grace: timedelta = Retention().grace,  # noqa: B008 - frozen
) -> Settled | None:
    """The record, if it describes this snapshot under these options and nothing is left
    for a writer that keeps what commits replaced for `grace` to do; else None (the run
    opens the index)."""
    try:
        settled = Settled.model_validate(json.loads((index_dir / SETTLED).read_text()))
    except (OSError, ValueError, ValidationError):
        return None
    # Compared as JSON reads them back (tuples become lists).
    if (
        settled.stamp != json.loads(json.dumps(_stamp(manifest)))
        or settled.options != json.loads(json.dumps(options))
        or settled.checked < _settled_at(manifest, grace)
    ):
        return None
    try:
        if settled.disk != json.loads(json.dumps(_disk(index_dir))):
            return None
    except OSError:
        return None
    return settled
