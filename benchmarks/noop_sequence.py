"""The no-op `dowse index` runs right after an index: what each costs, in order.

Usage:
    python benchmarks/noop_sequence.py TREE [--runs N] [--gap S] [--rounds R] [--work DIR]

Each round copies TREE into `--work` (a temporary directory by default) with every file's
mtime an hour back, indexes it with `python -m dowse index` (the `dowse` this interpreter
imports), then runs `dowse index` again `--runs` times, `--gap` seconds apart, each a new
process. Printed per round: each no-op run's wall and CPU seconds (user + system of the
child) and which path answered it: `idle` (the no-op record, before the writer loads),
`settled` (the settled record, without opening a table) or `opened` (the index opened).
A user who indexes and then runs `dowse index` again, or a tool that does before each
query, meets these runs in this order.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cold_start import _run  # noqa: E402


def _once(root: Path) -> tuple[float, float, str]:
    """(wall s, CPU s, path) of one `dowse index` of `root`."""
    index = root / ".dowse"

    def stamp(name: str) -> int | None:
        try:
            return (index / name).stat().st_mtime_ns
        except OSError:
            return None

    idle, settled = stamp("idle.json"), stamp("settled.json")
    wall, cpu, _ = _run(["-m", "dowse", "index", str(root), "--quiet"], root)
    # The idle record is written by a run answered from the settled record; a run that
    # opens the index rewrites the settled record.
    if stamp("settled.json") != settled:
        path = "opened"
    elif stamp("idle.json") != idle:
        path = "settled"
    else:
        path = "idle"
    return wall, cpu, path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--gap", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--work", type=Path)
    opts = parser.parse_args()
    if not opts.tree.is_dir():
        raise SystemExit(f"not a directory: {opts.tree}")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()}")
    work = opts.work or Path(tempfile.mkdtemp(prefix="noop-sequence-"))
    hour_ago = time.time() - 3600
    for round_ in range(opts.rounds):
        root = (work / f"tree-{round_}").resolve()
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(opts.tree, root, ignore=shutil.ignore_patterns(".dowse", ".git"))
        for path in [root, *root.rglob("*")]:
            os.utime(path, (hour_ago, hour_ago), follow_symlinks=False)
        wall, cpu, _ = _once(root)
        runs = []
        for _ in range(opts.runs):
            time.sleep(opts.gap)
            runs.append(_once(root))
        shown = "  ".join(f"{w:.3f}/{c:.3f} {p}" for w, c, p in runs)
        print(f"round {round_ + 1}: index {wall:.2f} s; no-op runs (wall/CPU s): {shown}")
    print(f"load at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
