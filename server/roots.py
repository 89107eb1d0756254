"""The served roots: where each one's index is, what lies inside it, its warm snapshot.

Apart from `server.workspace` so that `dowse serve` can name its roots before it imports
the searcher (numpy, pyarrow, LanceDB), which a server needs for its first tool call, not
for the MCP handshake.

Invariant: a path a caller names is confined to the root (`ServedRoot.confine`): no
absolute path elsewhere, no `..` escape, no symlink leading out.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dowse.errors import InvalidPath
from dowse.indexer.options import default_index_dir
from dowse.indexer.reading import inside

if TYPE_CHECKING:
    from dowse.retrieval.hybrid import HybridSearcher

__all__ = ["MAX_PATH_CHARS", "RootOptions", "ServedRoot"]

MAX_PATH_CHARS = 4096
"""Linux's PATH_MAX: no longer path names a file."""


@dataclass(frozen=True)
class RootOptions:
    """What a root's settings ask of the index runs the server makes (`dowse.settings`,
    resolved by `dowse serve`); None leaves an option to the index's memory, else the
    default."""

    walk: dict[str, Any] = field(default_factory=dict)
    """resolve_walk_config's overrides: max_file_bytes, exclude, include_secrets."""
    history: bool | None = None
    embed_scope: str | None = None
    """For an index built from scratch: all, files or none."""
    embedder: str | None = None
    """For an index built from scratch."""


class ServedRoot:
    """One served repository: where its index is, what lies inside it, its warm snapshot."""

    def __init__(
        self, path: Path, index_dir: Path | None = None, options: RootOptions | None = None
    ) -> None:
        self.options = options or RootOptions()
        self.given = Path(os.path.abspath(path))
        self.path = Path(os.path.realpath(path))
        self.index_dir = (
            Path(os.path.abspath(index_dir))
            if index_dir is not None
            else default_index_dir(self.path)
        )
        self.lock = threading.RLock()
        self.searcher: HybridSearcher | None = None
        self.stamp: tuple[Any, ...] | None = None

    @property
    def name(self) -> str:
        return self.path.name

    def confine(self, path: str) -> tuple[str, bool]:
        """`path` (relative to the root, or absolute) as a POSIX path relative to the
        root ('' for the root itself), and whether it is a directory. InvalidPath when it
        lies outside the root, lexically or through a symlink, or does not exist."""
        if not path.strip() or "\x00" in path:
            raise InvalidPath(f"not a usable path: {path!r}")
        if len(path) > MAX_PATH_CHARS:
            raise InvalidPath(
                f"the path is {len(path):,} characters long; at most {MAX_PATH_CHARS:,}"
            )
        try:
            return self._confine(path)
        except OSError as exc:  # a component over NAME_MAX, a permission on the way
            shown = path if len(path) <= 80 else path[:77] + "..."
            raise InvalidPath(f"not a usable path ({exc.strerror or exc}): {shown!r}") from None

    def _confine(self, path: str) -> tuple[str, bool]:
        raw = Path(path)
        base = self.path
        target = Path(os.path.normpath(raw if raw.is_absolute() else self.path / raw))
        if not target.is_relative_to(self.path) and target.is_relative_to(self.given):
            base = self.given  # an absolute path through the root's own symlinked name
        if not target.is_relative_to(base):
            raise InvalidPath(
                f"{path!r} is outside the served root {self.path}: paths must lie inside it"
            )
        real = Path(os.path.realpath(target))
        if not real.is_relative_to(self.path):
            raise InvalidPath(
                f"{path!r} leads outside the served root {self.path} through a symlink: refused"
            )
        if not real.exists():
            raise InvalidPath(f"no such file or directory in {self.path}: {path!r}")
        rel = target.relative_to(base).as_posix()
        return ("" if rel == "." else rel), real.is_dir()

    def contains(self, rel: str) -> bool:
        """Whether an indexed path still resolves inside the root (it may have become a
        symlink leading out since it was indexed)."""
        return inside(self.path, rel)
