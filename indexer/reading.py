"""Reading a file's bytes: at index time only the file the walk checked, when serving only
a file that still lies inside the root, and always in one text form.

Invariants:

- `read_walked` reads the very file the walk stat'ed, or nothing. It opens without
  following a final symlink (``O_NOFOLLOW``; a symlink the walk accepted is opened at its
  resolved target), without blocking on a FIFO (``O_NONBLOCK``), and then checks the open
  descriptor: a regular file, the walk's ``(st_dev, st_ino)``, and (where the system
  names an open file's path, ``/proc/self/fd``) a path inside the root. A file swapped
  between the walk and the read, for a symlink leading out of the root, another file or
  a FIFO, is refused with a reason instead of read. Content that grew past the size
  limit after the walk is refused too: at most ``limit + 1`` bytes are ever read.
- The stat `read_walked` returns is the descriptor's, taken before reading: the index
  records the size and mtime of what it read, so a write during the read leaves a newer
  mtime on disk and the next run reads the file again.
- `text_bytes` is the one text form of a file for the indexer and for everything that
  reads a served file back (blocks, widened context, citations): UTF-16 and UTF-32 with a
  byte-order mark become UTF-8, and a lone CR (classic Mac line endings) becomes LF, so
  that every line number counts ``\\r`` as a line break, as editors do. CRLF stays as it
  is. In UTF-8 the CR replacement is byte for byte: offsets do not move.
- `read_inside` and `inside` are the serving side: a root-relative path is read (or
  shown) only while it still resolves inside the root.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
from pathlib import Path

__all__ = ["ReadRefused", "inside", "read_inside", "read_walked", "text_bytes"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_FLAGS = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY
_FD_PATHS = Path("/proc/self/fd")
_FD_PATHS_WORK = _FD_PATHS.is_dir()

# UTF-32 first: its little-endian mark begins with UTF-16's.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_LONE_CR = re.compile(rb"\r(?!\n)")


class ReadRefused(Exception):
    """A walked file that must not be read; the message is the reason to record."""


def _within(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def read_walked(
    path: str,
    *,
    dev: int,
    ino: int,
    limit: int,
    root: str | None = None,
) -> tuple[bytes, os.stat_result]:
    """The bytes of the file the walk stat'ed as ``(dev, ino)`` at `path`, and the stat
    of what was read. ReadRefused when it is no longer that file, not a regular file,
    outside `root` (a resolved path), or over `limit` bytes; OSError when it cannot be
    opened at all (gone, permission)."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        # O_NOFOLLOW on a symlink fails with ELOOP (EMLINK on some BSDs).
        if exc.errno in (errno.ELOOP, errno.EMLINK) or os.path.islink(path):
            raise ReadRefused("changed during indexing (now a symlink)") from None
        raise
    with open(fd, "rb", closefd=True) as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ReadRefused("changed during indexing (not a regular file)")
        # ino 0: a platform whose directory listing does not give identities.
        if ino and (st.st_dev, st.st_ino) != (dev, ino):
            raise ReadRefused("changed during indexing (replaced by another file)")
        if root is not None and _FD_PATHS_WORK:
            try:
                opened = os.readlink(_FD_PATHS / str(fd))
            except OSError:
                opened = None
            if opened is not None and not _within(opened, root):
                raise ReadRefused("changed during indexing (leads outside the root)")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ReadRefused(f"too large (grew past {limit} bytes during indexing)")
    return data, st


def text_bytes(data: bytes) -> bytes:
    """`data` in the form every stage reads: UTF-8 for UTF-16 and UTF-32 text with a
    byte-order mark (kept as it is when it does not decode: then it is binary), and a lone
    CR as LF."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                data = data.decode(codec).encode("utf-8")
            except UnicodeError:
                return data
            break
    if b"\r" in data:
        data = _LONE_CR.sub(b"\n", data)
    return data


def inside(root: Path, rel: str) -> bool:
    """Whether the root-relative `rel` still resolves inside `root` (it may have become a
    symlink leading out since it was indexed)."""
    real_root = os.path.realpath(root)
    return _within(os.path.realpath(os.path.join(real_root, rel)), real_root)


def read_inside(root: Path, rel: str) -> bytes | None:
    """The text (`text_bytes`) of the root-relative file `rel` as it is now, or None when
    it cannot be read, is not a regular file, or resolves outside `root`."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, rel))
    if not _within(real, real_root) or real == real_root:
        return None
    try:
        fd = os.open(real, _FLAGS)
    except OSError:
        return None
    with open(fd, "rb", closefd=True) as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        try:
            return text_bytes(f.read())
        except OSError:
            return None
