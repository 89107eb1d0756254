"""The check for changes a query makes before it answers: the stat-only one against the
last run's walk record (`indexer.walked`) beside the walk it replaces
(`indexer.options.changed_since`), in CPU seconds of this process.

Usage:
    python benchmarks/refresh_check.py ROOT [--index-dir DIR] [--runs N]

ROOT must be indexed (by this dowse, so that its last run left a record) and unchanged
since. Printed: each check's answer and its CPU time per run, then the medians.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from dowse.indexer import walked
from dowse.indexer.options import changed_since, walk_config_of
from dowse.indexer.store import Store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--index-dir", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    root = opts.root.resolve()
    store = Store.open(opts.index_dir or root / ".dowse")
    config = walk_config_of(store.manifest)
    stat_only, walking = [], []
    for _ in range(opts.runs):
        t = time.process_time()
        same = walked.unchanged(store.index_dir, store.manifest, root, config)
        stat_only.append(time.process_time() - t)
        t = time.process_time()
        changes = changed_since(store, root, config)
        walking.append(time.process_time() - t)
        print(
            f"record says unchanged: {same} ({stat_only[-1]:.3f} s); walk: {changes} "
            f"({walking[-1]:.3f} s)"
        )
    print(
        f"median CPU: stat-only {statistics.median(stat_only):.3f} s, "
        f"walk {statistics.median(walking):.3f} s"
    )


if __name__ == "__main__":
    main()
