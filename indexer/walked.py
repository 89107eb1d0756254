"""What the walk of the last run saw, kept beside the manifest (`walked.json`), so that
the check before a query ("has anything changed since the snapshot?") stats the paths
the walk's result depends on instead of walking the tree again.

A walk's result (`walk.walk`) depends on the listings of the directories it scanned, the
stat of each file it admitted or left out by its stat, and the ignore files it read or
looked for (`walk.WalkResult.seen`). When every one of them stats as it did, a new walk
returns the same files with the same sizes and mtimes and the same skipped ones: the
tree is as the snapshot has it, by the same stat-only rule the refresh applies
(`options.changed_since`). Django's ~900 directories and ~6k files stat in a fraction of
the time their walk takes (matching every name against the ignore rules).

Invariants:
- A record describes one snapshot under one set of walk options and one root: it names
  the manifest's `updated` stamp, table versions and generation, and is written by the
  writer (the lock held) after its last commit, from the walk that run made. Any commit
  since makes it stale; a stale, damaged or missing record only means the check walks
  the tree as before. It is never trusted partially.
- Only ever a "nothing changed" answer comes from it. A file changed between that walk
  and its read, or after, stats differently from the record, so the check walks.
- A racy stat (an mtime within `RACY_NS` of the walk: the path could change again within
  the same timestamp tick without its stat showing it, as git says of its index) is
  checked by what the walk takes of the path, so a tree indexed right after an edit, a
  fresh clone, or the index directory's making in the root does not send every query
  to the walk until the next run: a file's stat is all the walk takes of it (the walk
  would see no more than the record does); a directory is listed again and an ignore
  file read again, and compared with what the walk found (`listing`, `text_digest`:
  the walk's own digests, defined here with the rest of what a walk's result depends
  on, so that a check of the record (`as_seen`, `indexer.noop`) imports no walk).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dowse.indexer.ignore import read_text

if TYPE_CHECKING:
    from dowse.indexer.store import Manifest
    from dowse.indexer.walk import WalkConfig, WalkResult

__all__ = [
    "KIND",
    "LISTING",
    "RACY_NS",
    "STAT",
    "TEXT",
    "WALKED",
    "Seen",
    "as_seen",
    "listing",
    "record",
    "stat_key",
    "text_digest",
    "unchanged",
]

WALKED = "walked.json"
FORMAT = 2
"""The record's layout: a record of another is not read (a walk instead)."""

RACY_NS = 2_000_000_000
"""A stat this close to a walk (2 s, beyond any file system's timestamp step) is not
proof that nothing changed since: the path could change again within the same tick
(`as_seen` compares what the walk took of it instead)."""

LISTING, STAT, TEXT, KIND = "listing", "stat", "text", "kind"
"""What of a seen path the walk's result depends on: a directory's listing (its entries'
names and kinds; stat'ed through links, as scanned), a file's stat alone, an ignore
file's text (read, or looked for), or only whether a path is there and as what."""

Seen = tuple[str, str, tuple[int, ...] | None]
"""A path the walk's result depends on, what of it (`LISTING`, `STAT`, `TEXT`, `KIND`),
and its `stat_key` (for `KIND` its file type alone), or None when it was absent."""


def stat_key(st: os.stat_result) -> tuple[int, ...]:
    """What of a stat decides the walk: size, mtime, type and permission bits, owner."""
    return (st.st_size, st.st_mtime_ns, st.st_mode, st.st_uid, st.st_gid)


def listing(entries: list[os.DirEntry[str]]) -> str:
    """A digest of what of a directory's listing the walk decides by: each entry's name
    and kind (symlink, directory, other). Equal digests mean the scan of the directory
    admits, skips and descends into the same names."""
    names = []
    for e in entries:
        try:
            kind = "l" if e.is_symlink() else "d" if e.is_dir(follow_symlinks=False) else "f"
        except OSError:
            kind = "?"
        names.append(kind + e.name)
    return _digest("\0".join(sorted(names)))


def text_digest(text: str | None) -> str:
    """A digest of an ignore file's text as `ignore.read_text` gives it (None: not there
    as a readable file)."""
    return "-" if text is None else _digest(text)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def _stamp(manifest: Manifest) -> list[Any]:
    return [manifest.updated, sorted(manifest.versions.items()), sorted(manifest.tables.items())]


def _options(root: Path, config: WalkConfig) -> list[Any]:
    return [str(root), sorted(dataclasses.asdict(config).items())]


def record(
    index_dir: Path,
    manifest: Manifest,
    root: Path,
    config: WalkConfig,
    result: WalkResult,
) -> bool:
    """Write what the walk `result` saw, for `manifest`'s snapshot
    (after the run's last commit, the lock held), with the digests of its racy
    directories and ignore files; False when it could not. Best effort: without a record
    the check walks."""
    racy = result.started_ns - RACY_NS
    data = {
        "format": FORMAT,
        "stamp": _stamp(manifest),
        "options": _options(root, config),
        "walked_ns": result.started_ns,
        "seen": result.seen,
        "digests": {
            path: result.digests[path]
            for path, what, key in result.seen
            if what != KIND and key is not None and key[1] >= racy and path in result.digests
        },
    }
    path = index_dir / WALKED
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    try:
        tmp.write_text(json.dumps(data, separators=(",", ":")))
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False
    return True


def unchanged(index_dir: Path, manifest: Manifest, root: Path, config: WalkConfig) -> bool:
    """True when the record says, by stat alone, that a walk of `root` would find the
    tree as `manifest`'s snapshot has it; False when it cannot say (then walk). A record
    that is not one this module wrote (damaged, edited) says nothing."""
    try:
        data = json.loads((index_dir / WALKED).read_text())
        snapshot = json.loads(json.dumps([_stamp(manifest), _options(root, config)]))
        if [data["stamp"], data["options"]] != snapshot:
            return False
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return as_seen(data)


def as_seen(data: Any) -> bool:
    """True when the tree stats as the record `data` (a `walked.json`, read) says its walk
    found it; False when it cannot say. Which snapshot and options the record is of is
    the caller's to check."""
    try:
        if data["format"] != FORMAT:
            return False
        return _same(data["seen"], data["digests"], int(data["walked_ns"]) - RACY_NS)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return False


def _same(seen: list[Any], digests: dict[str, str], limit: int) -> bool:
    """Whether every path of `seen` stats as recorded, and one whose mtime is at `limit`
    or later (racy) is as the walk found it by what the walk takes of it."""
    for path, what, key in seen:
        try:
            st = os.stat(path, follow_symlinks=what == LISTING)
        except OSError:
            if key is None:
                continue  # still absent
            return False
        if key is None:
            return False  # there now
        if what == KIND:
            if key[0] != stat.S_IFMT(st.st_mode):
                return False
            continue
        now = stat_key(st)
        if list(now) != key:
            return False
        if now[1] >= limit and what != STAT and _now(path, what) != digests.get(path):
            return False
    return True


def _now(path: str, what: str) -> str:
    """The digest of what the walk takes of a directory or an ignore file, as it is now."""
    if what == LISTING:
        with os.scandir(path) as it:
            return listing(list(it))
    return text_digest(read_text(path))
