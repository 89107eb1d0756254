"""What a run that finds nothing to do needs, kept beside the manifest (`settled.json`),
so that the next such run opens no table: no LanceDB import, no table maintenance.

A run of `dowse index` that changes nothing (`build.build_index`), or one that commits
and leaves the next run nothing to do, records here the snapshot as it leaves it: each
file's size and mtime, the skipped files, the counts a run that finds nothing to do
reports, the options it ran with, and a fingerprint of the table directories.
The next run with the same options whose walk finds the same files, stat for stat,
answers from this record instead of opening the index.

Invariants:
- A record describes one snapshot: it names the manifest's `updated` stamp, table
  versions and generation, and any commit makes it stale. A stale, damaged or missing
  record only means the run opens the index as before; it is never trusted partially.
- It is only used while a writer would find nothing to do: until the first moment after
  the writing run's start dropped what it could (`checked`) at which a version or table
  the manifest retired (or the manifest itself) turns the writer's grace period
  (`store.Retention.grace`) old (`until`). The writer's start (dropping retired tables,
  pruning versions no reader uses, restoring a table an interrupted run left ahead of
  the manifest) finds more to do only at those moments. The table directories must be
  as they were when it was written (a version written since, committed or not, changes
  their fingerprint).
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

__all__ = ["SETTLED", "Settled", "load", "record", "until"]

SETTLED = "settled.json"


class Settled(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stamp: list[Any] = Field(description="the snapshot: manifest `updated`, versions, tables")
    options: dict[str, Any] = Field(description="the run's options that decide what is indexed")
    disk: list[list[Any]] = Field(description="LanceDB table directories and their versions")
    checked: float = Field(
        description="when the writer's start of the run that wrote this dropped what it could"
    )
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


def until(manifest: Manifest, grace: timedelta, checked: float) -> float | None:
    """The first moment after `checked` at which a writer's start, keeping what commits
    replaced for `grace`, finds something more to drop (a retired version or table, or the
    manifest, turning `grace` old); None when there is none: nothing ever will."""
    times = [manifest.updated, *manifest.retired.values()]
    times += [at for kept in manifest.superseded.values() for _, at in kept]
    due = [t + grace.total_seconds() for t in times]
    return min((d for d in due if d > checked), default=None)


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
    """Write the record of a run that found nothing to do, or that committed and left the
    next run nothing to do (the lock held). `checked`: when its writer's start dropped
    what it could (`Store.maintained`), on the clock the writer dates its commits with
    (`Store.clock`); what was replaced after that waits for a later writer. Best effort:
    a record that cannot be written leaves the next run to open the index."""
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
    now: float,
    grace: timedelta = Retention().grace,  # noqa: B008 - frozen
) -> Settled | None:
    """The record, if it describes this snapshot under these options and at `now` (the
    writer's clock) nothing is left for a writer that keeps what commits replaced for
    `grace` to do (`until`); else None (the run opens the index)."""
    try:
        settled = Settled.model_validate(json.loads((index_dir / SETTLED).read_text()))
    except (OSError, ValueError, ValidationError):
        return None
    # Compared as JSON reads them back (tuples become lists).
    if (
        settled.stamp != json.loads(json.dumps(_stamp(manifest)))
        or settled.options != json.loads(json.dumps(options))
        or now >= (until(manifest, grace, settled.checked) or float("inf"))
    ):
        return None
    try:
        if settled.disk != json.loads(json.dumps(_disk(index_dir))):
            return None
    except OSError:
        return None
    return settled
