"""Which index answers for a path: the one locator of the CLI, explore and the MCP server.

An index is looked for at `<D>/.dowse` for D the path's directory and each directory
above it, unless an index directory is named (`--index-dir`, or a served root's own).

Invariants:
- An index serves a path only when its manifest's root, compared as a resolved real path,
  is the directory it belongs to: `<D>/.dowse` found looking upward only when the root is
  D, a named index directory only when its root is the path's directory or contains it.
  The manifest is a file that travels with the tree (a tarball, a shared folder, a
  repository under review can ship a `.dowse/`), so a root it names elsewhere is never
  followed: such an index is passed over, with a line saying why, and the search goes on
  upward. Ignoring it rather than failing is what the user asked for: the path they
  named is what gets searched, and the real index above a planted one still serves. A
  relative root never matches (it would mean whatever directory dowse runs in).
- A root is easy to guess (where a tarball will be unpacked), so a matching root is not
  enough: the manifest must also carry this user's signature (`indexer.trust.vouched`).
  One that does not is passed over the same way, saying so.
- A manifest that cannot be read (damaged, another format) stops the search with its own
  one-line error and fix: dowse does not quietly answer from some other index instead.
- Only manifests are read; nothing is written.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from dowse.errors import DowseError, IndexNotFound
from dowse.indexer.layout import INDEX_DIR_NAME, MANIFEST
from dowse.indexer.store import Manifest, Store
from dowse.indexer.trust import vouched

__all__ = ["IndexLocation", "is_index_of", "locate_index", "names_root", "own_manifest", "why_not"]


class IndexLocation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    index_dir: Path = Field(description="the index that serves, else where one would go")
    root: Path | None = Field(description="its indexed root (a real path), None for no index")
    passed_over: list[str] = Field(
        default_factory=list, description="one line for each index found but not used, and why"
    )

    @property
    def found(self) -> bool:
        return self.root is not None

    def require(self) -> tuple[Path, Path]:
        """(root, index directory); IndexNotFound, saying what was passed over, when no
        index serves."""
        if self.root is None:
            why = f" ({'; '.join(self.passed_over)})" if self.passed_over else ""
            raise IndexNotFound(f"no index at {self.index_dir}; run `dowse index` first{why}")
        return self.root, self.index_dir


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def _covers(manifest: Manifest, directory: Path, *, below: bool) -> bool:
    if not os.path.isabs(manifest.root):
        return False
    root, here = _real(manifest.root), _real(directory)
    return here.is_relative_to(root) if below else here == root


def names_root(manifest: Manifest, directory: Path) -> bool:
    """Whether `manifest` names `directory` as its root, signed or not."""
    return _covers(manifest, directory, below=False)


def _own(manifest: Manifest) -> bool:
    return vouched(manifest.root, manifest.walk, manifest.signature)


def is_index_of(manifest: Manifest, directory: Path) -> bool:
    """Whether `manifest` is this user's index of `directory` (its root, as real paths,
    and signed here)."""
    return _covers(manifest, directory, below=False) and _own(manifest)


def own_manifest(index_dir: Path, root: Path) -> Manifest | None:
    """The manifest at `index_dir` when it is `root`'s index; None when there is none,
    it cannot be read, it names another root or this user's dowse did not sign it:
    nothing it remembers is reused then."""
    try:
        manifest = Store.read_manifest(index_dir)
    except DowseError:  # a damaged manifest remembers nothing a run could use
        return None
    return manifest if is_index_of(manifest, root) else None


def why_not(manifest: Manifest, directory: Path, *, below: bool = False) -> str:
    """Why an index with `manifest` is not this user's index of `directory` (of it or a
    directory above it, with `below`), as a clause about "it"."""
    if _covers(manifest, directory, below=below):
        return (
            "your dowse did not build it on this machine (it came with the files, or is "
            "from before dowse signed its indexes)"
        )
    above = " or a directory above it" if below else ""
    return (
        f"it was built for {manifest.root}, not {directory}{above} (it came with the "
        "files, or the directory moved)"
    )


def _ignored(index_dir: Path, manifest: Manifest, directory: Path, *, below: bool = False) -> str:
    return f"ignored the index at {index_dir}: {why_not(manifest, directory, below=below)}"


def locate_index(path: Path, index_dir: Path | None = None) -> IndexLocation:
    """The index that serves `path` (a directory or a file), by the rules above."""
    target = _real(path)
    start = target if target.is_dir() else target.parent
    if index_dir is not None:
        named = Path(os.path.abspath(index_dir))
        try:
            manifest = Store.read_manifest(named)
        except IndexNotFound:
            return IndexLocation(index_dir=named, root=None)
        if _covers(manifest, start, below=True) and _own(manifest):
            return IndexLocation(index_dir=named, root=_real(manifest.root))
        note = _ignored(named, manifest, start, below=True)
        return IndexLocation(index_dir=named, root=None, passed_over=[note])
    notes: list[str] = []
    for d in (start, *start.parents):
        candidate = d / INDEX_DIR_NAME
        if not (candidate / MANIFEST).is_file():
            continue
        manifest = Store.read_manifest(candidate)  # unreadable: its error is the answer
        if is_index_of(manifest, d):
            return IndexLocation(index_dir=candidate, root=d, passed_over=notes)
        notes.append(_ignored(candidate, manifest, d))
    return IndexLocation(index_dir=start / INDEX_DIR_NAME, root=None, passed_over=notes)
