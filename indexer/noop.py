"""The no-op `dowse index`: the report of a run with nothing to do, decided before the
writer loads.

A run that finds nothing to do (`build._unchanged`) opens no table, yet most of its time
is its imports: pydantic and the index's records, the writer, tree-sitter's parsers, the
ignore rules' compiler. Such a run, asked by a caller that says what it was asked
(`request`), ends by writing `idle.json` beside the manifest (`record`): the request, the
digests of the manifest's and the walk record's bytes, the table files' stats and its
report. The next run asked the same (`answer`) checks those with the standard library and
one `git rev-parse`, and gives the same report; on any difference it gives None, and the
run goes the whole way (which writes the record anew if it again finds nothing to do).

Invariants:
- Only "nothing to do" comes from the record, when all of this is as the run that wrote
  it found it: the request (the options as the caller was given them, the root, the
  index directory), this dowse's index format, the manifest's bytes (any commit rewrites
  them, and with them the snapshot, the signature, the model and the options the index
  remembers), the walk record's bytes and the tree as that record says
  (`walked.as_seen`: every listing, stat and ignore file the walk depended on), each
  table's versions folder and Lance files (size and mtime: an interrupted run's writes, a
  file cut short), the settled record's and the signing key's stats, and the commit the
  history was read up to (HEAD's, as `commits.update` resolves it); and only until the
  moment the settled record it was answered from stops vouching that a writer's start
  finds nothing to drop (`settled.until`), so the grace period's pruning still happens.
- A run's options follow from its request and the manifest (`options.resolve_*`); a
  caller that was warned while resolving them passes no request, so a warning is never
  skipped.
- The check holds the write lock as a run does; a lock held elsewhere is a doubt.
- Written by the writer holding the lock (temporary file, rename), best effort; a record
  that cannot be read or is of another layout says nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dowse.errors import DowseError
from dowse.indexer.layout import FORMAT_VERSION, MANIFEST, WriteLock
from dowse.indexer.trust import key_path
from dowse.indexer.walked import WALKED, as_seen

__all__ = ["IDLE", "answer", "record"]

IDLE = "idle.json"
FORMAT = 2
"""The record's layout: a record of another says nothing."""

_SETTLED = "settled.json"  # indexer.settled.SETTLED, which imports pydantic


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _tables(index_dir: Path) -> list[list[Any]]:
    """Each table directory, its versions folder's mtime and its Lance files' names,
    sizes and mtimes: every write of a table adds a version file and data files."""
    out: list[list[Any]] = []
    with os.scandir(index_dir / "db") as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            versions = _stat(Path(entry.path) / "_versions")
            files = []
            for sub in sorted([Path(entry.path) / "data", *Path(entry.path).glob("_indices/*")]):
                with contextlib.suppress(OSError), os.scandir(sub) as found:
                    for f in found:
                        if f.name.endswith(".lance"):
                            st = f.stat(follow_symlinks=False)
                            files.append([f.path, st.st_size, st.st_mtime_ns])
            out.append([entry.name, versions, sorted(files)])
    return out


def _code() -> list[list[Any]]:
    """This dowse's code as it stands: each module of the package and of the indexer, by
    name, size and mtime. Another dowse (an upgrade, an edited checkout) may walk, scan for
    secrets or index otherwise (the rules `settled` records by name)."""
    out = []
    for folder in (Path(__file__).parent.parent, Path(__file__).parent):
        with os.scandir(folder) as entries:
            for e in entries:
                if e.name.endswith(".py"):
                    st = e.stat()
                    out.append([e.path, st.st_size, st.st_mtime_ns])
    return sorted(out)


def _head(root: Path) -> str:
    """The commit HEAD names, as `commits.source_of` and `commits.resolve` find it (''
    outside a repository with commits)."""
    from dowse import git
    from dowse.errors import GitError

    try:
        return git.text("rev-parse", "--verify", "-q", "HEAD^{commit}", cwd=root).strip()
    except GitError:
        return ""


def _state(
    root: Path, index_dir: Path, request: Mapping[str, Any], walked: bytes
) -> dict[str, Any]:
    """What the record must find as it was, but for the tree and the history (`walked`:
    the walk record's bytes)."""
    return {
        "format": FORMAT,
        "index_format": FORMAT_VERSION,
        "code": _code(),
        "root": str(root),
        "request": json.loads(json.dumps(request)),
        "manifest": _digest((index_dir / MANIFEST).read_bytes()),
        "walked": _digest(walked),
        "settled": _stat(index_dir / _SETTLED),
        "key": _stat(key_path()),
        "tables": _tables(index_dir),
    }


def record(
    root: Path,
    index_dir: Path,
    request: Mapping[str, Any],
    *,
    history: bool,
    head: str,
    report: Mapping[str, Any],
    until: float | None,
) -> None:
    """Write the record of a run of `request` that found nothing to do (the lock held):
    `history` whether it reads the history, `head` the commit the index read it up to,
    `report` its `IndexStats` as JSON values, `until` when a writer's start would next
    find something to drop (`settled.until`; None: never). Best effort: without a record
    the next run goes the whole way."""
    path = index_dir / IDLE
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    try:
        walked = (index_dir / WALKED).read_bytes()
        data = {
            **_state(root, index_dir, request, walked),
            "history": history,
            "head": head,
            "until": until,
        }
        tmp.write_text(json.dumps({**data, "report": dict(report)}))
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        with contextlib.suppress(OSError):
            tmp.unlink()


def answer(
    root: Path,
    index_dir: Path,
    request: Mapping[str, Any],
    *,
    clock: Callable[[], float] = time.time,
) -> dict[str, Any] | None:
    """The report (`IndexStats` as JSON values, its `seconds` this check's) of a run of
    `request` over `root` into `index_dir`, when the record says it would find nothing to
    do before its `until` (on `clock`, the writer's); None when it cannot say (then
    run)."""
    try:
        data = json.loads((index_dir / IDLE).read_bytes())
    except (OSError, ValueError):
        return None
    lock = WriteLock(index_dir)
    try:
        lock.acquire(0)
    except DowseError:
        return None  # a writer at work: the run waits for it
    try:
        return _answer(root, index_dir, request, data, clock())
    finally:
        lock.release()


def _answer(
    root: Path, index_dir: Path, request: Mapping[str, Any], data: Any, now: float
) -> dict[str, Any] | None:
    try:
        walked = (index_dir / WALKED).read_bytes()
        state = _state(root, index_dir, request, walked)
        if not isinstance(data, dict) or any(data.get(k) != v for k, v in state.items()):
            return None
        if data["until"] is not None and now >= float(data["until"]):
            return None  # a writer's start has something to drop by now
        t = time.perf_counter()
        if not as_seen(json.loads(walked)):
            return None
        walk_s = time.perf_counter() - t
        t = time.perf_counter()
        if data["history"] and _head(root) != data["head"]:
            return None
        report = dict(data["report"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    seconds = {"walk": round(walk_s, 3), "parse": 0.0, "write": 0.0, "embed": 0.0}
    return {**report, "seconds": {**seconds, "history": round(time.perf_counter() - t, 3)}}
