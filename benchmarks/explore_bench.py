"""Explore and ask-with-exploration timings on a warm index: wall time vs summed track time.

Usage:
    python benchmarks/explore_bench.py --root PATH [--runs N] [--focus TEXT] [--scope SUB]

PATH must be indexed (`dowse index PATH`, with or without embeddings). Each configuration
runs once to warm the caches (index tables, query embedder, file reads), then `--runs`
times in the same process; the median is printed with the tracks' summed time, so the
parallelism shows. Also prints one cold `dowse explore` process per depth.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from dowse.explore.handoff import investigate  # noqa: E402
from dowse.explore.run import explore  # noqa: E402
from dowse.retrieval.hybrid import HybridSearcher  # noqa: E402

QUESTIONS = [
    "how does the database transaction handling work?",
    "why does a query sometimes fail with a timeout?",
    "how are errors handled across the modules?",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--scope", default="", help="a subdirectory to explore (default: all)")
    ap.add_argument("--focus", default="how are database transactions committed?")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    root = args.root.resolve()
    target = root / args.scope if args.scope else root
    searcher = HybridSearcher.open(root / ".dowse")

    print(f"{'configuration':<44} {'median s':>9} {'tracks summed s':>16}")
    for depth in ("shallow", "standard", "deep"):
        for focus in (None, args.focus):
            if depth == "shallow" and focus:
                continue
            walls, sums = [], []
            for i in range(args.runs + 1):
                t0 = time.perf_counter()
                r = explore(
                    target,
                    depth=depth,
                    focus=focus,  # type: ignore[arg-type]
                    searcher=searcher,
                )
                if i:  # the first run warms the caches
                    walls.append(time.perf_counter() - t0)
                    sums.append(r.timings["sum"])
            label = f"explore --depth {depth}" + (" --focus" if focus else "")
            print(f"{label:<44} {statistics.median(walls):>9.2f} {statistics.median(sums):>16.2f}")
    for q in QUESTIONS:
        walls, sums = [], []
        for i in range(args.runs + 1):
            t0 = time.perf_counter()
            report = investigate(searcher, q, budget=4000)
            if i:
                walls.append(time.perf_counter() - t0)
                sums.append(report.timings.get("sum", 0.0))
        label = f"ask ({report.mode}) {q[:28]}…"
        print(f"{label:<44} {statistics.median(walls):>9.2f} {statistics.median(sums):>16.2f}")
    dowse = Path(sys.executable).parent / "dowse"
    for depth in ("standard", "deep"):
        t0 = time.perf_counter()
        subprocess.run(
            [str(dowse), "explore", str(target), "--depth", depth], check=True, capture_output=True
        )
        print(f"{'cold CLI: dowse explore --depth ' + depth:<44} {time.perf_counter() - t0:>9.2f}")


if __name__ == "__main__":
    main()
