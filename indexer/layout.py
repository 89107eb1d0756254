"""An index directory's names and format, and its write lock: what a run needs before it
knows whether it will write (`indexer.noop`), importable without the writer (pydantic's
models, LanceDB, Arrow). `indexer.store` describes the whole layout and re-exports these.

Invariants:
- `FORMAT_VERSION` is the one format this dowse reads and writes; an index of another is
  built anew by `dowse index` (`Store.read_manifest` says which).
- One `WriteLock` holder at a time per index directory, across processes; the lock goes
  with its holder's process, however it ends.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path
from typing import Any

from dowse.errors import IndexLocked, IndexWriteError

__all__ = ["FORMAT_VERSION", "INDEX_DIR_NAME", "MANIFEST", "WriteLock"]

FORMAT_VERSION = 8
"""5: an import has one `imports` row per file it resolves to (Go packages, C headers with
their implementation); Rust `mod foo;` declarations are imports. 6: a reference through an
import alias names what the alias stands for (`np.array` is `array` through `numpy`). 7:
Rust items inside a brace macro call are symbols at their own lines, and a comment trailing
an attribute keeps the doc comments above it with their item: an index of format 6 holds the
old definitions for every file it did not parse again, so its unchanged files and its
changed ones would disagree (the same question answered differently by a fresh build). 8:
C++ classes named with a scope or as a specialization (`class doc::result`, `struct
formatter<path>`), and declarations behind specifier macros (`really_inline T f();`), are
symbols under their own names."""
MANIFEST = "manifest.json"
INDEX_DIR_NAME = ".dowse"
"""The directory an index lives in under its root, by default (`indexer.locate` looks for
it); the walk never enters one."""


class WriteLock:
    """An exclusive, cross-process writer lock (flock), released when its holder dies."""

    def __init__(self, index_dir: Path) -> None:
        self.path = index_dir / "write.lock"
        self._fd: int | None = None

    def acquire(self, timeout: float | None, on_wait: Any = None) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise IndexWriteError(
                f"cannot write the index at {self.path.parent}: {exc.strerror}"
            ) from None
        deadline = None if timeout is None else time.monotonic() + timeout
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    os.close(fd)
                    holder = self.holder()
                    raise IndexLocked(
                        f"another dowse process{holder} is writing the index at "
                        f"{self.path.parent}; try again when it finishes"
                    ) from None
                if not waited and on_wait is not None:
                    on_wait(self.holder())
                waited = True
                time.sleep(0.2)
        with contextlib.suppress(OSError):
            # The pid only tells a waiting process whom it waits for: a disk too full for
            # these few bytes must not stop a run that may have nothing to write.
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def holder(self) -> str:
        try:
            pid = self.path.read_text().strip()
        except OSError:
            return ""
        return f" (pid {pid})" if pid else ""

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
