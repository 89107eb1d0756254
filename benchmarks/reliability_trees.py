"""Trees for benchmarks/reliability.py: private copies of a repository, and the
deterministic states (`States`) a crash or disk-full run moves a tree between.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

# -- trees -----------------------------------------------------------------------------------


def materialize(source: Path, dest: Path) -> Path:
    """A private copy of `source` at `dest`: a git repository's HEAD (read with `git
    archive`, nothing written to it), or a plain directory copied without its index."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    is_git = (
        subprocess.run(
            ["git", "-C", str(source), "rev-parse", "--git-dir"], capture_output=True
        ).returncode
        == 0
    )
    if is_git:
        tar = subprocess.run(
            ["git", "-C", str(source), "archive", "--format=tar", "HEAD"],
            capture_output=True,
            check=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
            archive.extractall(dest, filter="tar")
    else:
        shutil.copytree(
            source,
            dest,
            symlinks=True,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns(".dowse", ".git"),
        )
    return dest


class States:
    """Deterministic states of a tree. State 0 is the tree as written; state k > 0 appends
    a probe function (naming k) to some files, adds probe modules, and for odd k deletes
    some files and renames others. Every state has text no earlier state had."""

    def __init__(
        self,
        root: Path,
        rng: random.Random,
        *,
        edits: int = 12,
        deletes: int = 4,
        adds: int = 4,
        renames: int = 2,
    ) -> None:
        from dowse.languages import language_for

        self.root = root
        candidates = sorted(
            p.relative_to(root).as_posix()
            for p in root.rglob("*.py")
            if p.is_file()
            and not p.is_symlink()
            and 200 < p.stat().st_size < 60_000
            and language_for(p.name) == "python"
        )
        need = edits + deletes + renames
        if len(candidates) < need:
            raise SystemExit(f"{root} has too few Python files ({len(candidates)} < {need})")
        picked = rng.sample(candidates, need)
        self.edited = picked[:edits]
        self.deleted = picked[edits : edits + deletes]
        self.renamed = picked[edits + deletes :]
        self.added = [f"dowse_probe/probe_{i}.py" for i in range(adds)]
        self.original = {p: (root / p).read_bytes() for p in picked}
        self.state = 0
        # Names for queries: the first definition of each edited and deleted file.
        self.names = {p: _first_def(self.original[p]) for p in self.edited + self.deleted}

    def files(self, k: int) -> dict[str, bytes | None]:
        want: dict[str, bytes | None] = {}
        for i, p in enumerate(self.edited):
            want[p] = self.original[p] + (_probe(k, i) if k else b"")
        for p in self.deleted:
            want[p] = None if k % 2 else self.original[p]
        for p in self.renamed:
            target = p[:-3] + "_renamed.py"
            want[p] = None if k % 2 else self.original[p]
            want[target] = self.original[p] if k % 2 else None
        for i, p in enumerate(self.added):
            want[p] = _probe_module(k, i) if k else None
        return want

    def apply(self, k: int) -> None:
        for rel, data in self.files(k).items():
            path = self.root / rel
            if data is None:
                path.unlink(missing_ok=True)
            elif not path.exists() or path.read_bytes() != data:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        if not k:
            with contextlib.suppress(OSError):
                (self.root / "dowse_probe").rmdir()
        self.state = k

    def queries(self) -> tuple[list[str], list[str]]:
        """(search queries, symbol names) whose answers tell the states apart."""
        names = [n for n in self.names.values() if n]
        return (
            ["dowse probe payload slot", *names[:2]],
            ["dowse_probe", *[n for n in (self.names[p] for p in self.deleted) if n][:1]],
        )


def _first_def(source: bytes) -> str:
    m = re.search(rb"^(?:def|class) ([A-Za-z_][A-Za-z0-9_]*)", source, re.M)
    return m.group(1).decode() if m else ""


def _probe(k: int, i: int) -> bytes:
    return (
        f"\n\ndef dowse_probe_{k}_{i}(payload):\n"
        f'    """Reliability probe {k}.{i}, written by benchmarks/reliability.py."""\n'
        f'    return {{"probe": {k}, "slot": {i}, "payload": payload}}\n'
    ).encode()


def _probe_module(k: int, i: int) -> bytes:
    return (
        f'"""Probe module {i} of state {k}."""\n\n\n'
        f"class DowseProbe{i}State{k}:\n"
        f'    """Carries payload slot {i} for state {k}."""\n\n'
        f"    def payload(self):\n        return {k * 100 + i}\n\n"
        f'    def slot(self):\n        return "slot {i} of {k}"\n'
    ).encode()
