"""What an index build and its incremental updates spend in LanceDB's `optimize`.

Usage:
    python benchmarks/compact_cost.py --repo PATH --work DIR [--embed none|files|all]
        [--edits 2] [--json]

The tree at PATH is copied to DIR/tree (the copy is edited, PATH never is) and indexed
in-process: a cold build, then `--edits` runs that each follow an edit of one file (a
function appended to a Python file, or a line to any text file), then one more after the
clock has moved past `Retention.grace` (the run that prunes what the earlier ones
replaced). Every `optimize` LanceDB is asked for is timed (process CPU, which counts
LanceDB's threads) with the table, the dowse function that called it and whether it
made a new version; `create_index` is timed too. Per run it prints the run's CPU, the
`optimize` calls, their CPU, and those that changed nothing (no new version), then the
calls per caller.

`--defer` is an experiment, not dowse's behaviour: a run then optimizes no table the
committed snapshot already holds (a table's new rows stay unindexed, searched by a
scan beside its indexes, until a run's pruning compacts it), to measure what compacting
written tables costs an incremental run; compare the answers of the two indexes with
`benchmarks/query_bench.py --answers`.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from lancedb.table import LanceTable

from dowse.indexer.build import IndexConfig, build_index, embed_flags
from dowse.indexer.embed import get_embedder
from dowse.indexer.store import Retention, Store

_CALLERS = (
    "_ensure_indexes",
    "_ensure_vector_index",
    "_compact",
    "forget_versions",
    "forget_drafts",
    "_prune_versions",
)
_calls: list[dict[str, Any]] = []


def _caller() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name in _CALLERS:
            return frame.f_code.co_name
        frame = frame.f_back  # type: ignore[assignment]
    return "other"


def _timed(kind: str, method: Any) -> Any:
    def wrapper(self: LanceTable, *args: Any, **kwargs: Any) -> Any:
        before = self.version
        cpu = time.process_time()
        try:
            return method(self, *args, **kwargs)
        finally:
            _calls.append(
                {
                    "kind": kind,
                    "table": self.name.split("-")[0],
                    "caller": _caller(),
                    "cpu": time.process_time() - cpu,
                    "changed": self.version != before,
                    "prune": kind == "optimize" and "cleanup_older_than" in kwargs,
                }
            )

    return wrapper


LanceTable.optimize = _timed("optimize", LanceTable.optimize)  # type: ignore[method-assign]
LanceTable.create_index = _timed("create_index", LanceTable.create_index)  # type: ignore[method-assign]


def _edit(root: Path, n: int) -> str:
    """Append to one file of the tree (a different one each time when there are several)."""
    candidates = sorted(
        p
        for p in root.rglob("*.py")
        if ".dowse" not in p.parts and p.is_file() and p.stat().st_size > 500
    ) or sorted(p for p in root.rglob("*") if p.is_file() and ".dowse" not in p.parts)
    target = candidates[(n * 7919) % len(candidates)]
    with open(target, "a") as fh:
        fh.write(f"\n\ndef _compact_cost_{n}(x):\n    return x + {n}\n")
    return str(target.relative_to(root))


def _run(name: str, root: Path, cfg: IndexConfig, embedder: Any, clock: Any) -> dict[str, Any]:
    del _calls[:]
    cpu, wall = time.process_time(), time.perf_counter()
    stats = build_index(root, config=cfg, embedder=embedder, clock=clock)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    opt = [c for c in _calls if c["kind"] == "optimize"]
    idle = [c for c in opt if not c["changed"]]
    by_caller: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0, 0.0])
    for c in opt:
        row = by_caller[c["caller"]]
        row[0] += 1
        row[1] += c["cpu"]
        if not c["changed"]:
            row[2] += 1
            row[3] += c["cpu"]
    return {
        "run": name,
        "parsed": stats.parsed,
        "cpu_s": round(cpu, 3),
        "wall_s": round(wall, 3),
        "optimize_calls": len(opt),
        "optimize_cpu_s": round(sum(c["cpu"] for c in opt), 3),
        "unchanged_calls": len(idle),
        "unchanged_cpu_s": round(sum(c["cpu"] for c in idle), 3),
        "create_index_cpu_s": round(sum(c["cpu"] for c in _calls if c["kind"] != "optimize"), 3),
        "calls": [{**c, "cpu": round(c["cpu"], 3)} for c in _calls if c["kind"] == "optimize"],
        "by_caller": {
            k: {
                "calls": v[0],
                "cpu_s": round(v[1], 3),
                "unchanged": v[2],
                "unchanged_cpu_s": round(v[3], 3),
            }
            for k, v in sorted(by_caller.items())
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, required=True, help="the tree to index (copied)")
    ap.add_argument("--work", type=Path, required=True, help="where the copy and index go")
    ap.add_argument("--embed", choices=("none", "files", "all"), default="none")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--edits", type=int, default=2, help="incremental runs within the grace")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--defer", action="store_true", help="skip optimizing committed tables")
    args = ap.parse_args()
    if args.defer:
        written = Store.written

        def deferred(self: Store, name: str) -> bool:
            return name not in self.manifest.versions and written(self, name)

        Store.written = deferred  # type: ignore[method-assign]

    root = args.work / "tree"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(args.repo, root, symlinks=True, ignore=shutil.ignore_patterns(".dowse"))
    embed, embed_chunks = embed_flags(args.embed)
    cfg = IndexConfig(embed=embed, embed_chunks=embed_chunks, retention=Retention())
    embedder = get_embedder(args.embedder)
    offset = [0.0]

    def clock() -> float:
        return time.time() + offset[0]

    rows = [_run("cold", root, cfg, embedder, clock)]
    for n in range(args.edits):
        rows.append(_run(f"edit {_edit(root, n)}", root, cfg, embedder, clock))
    offset[0] = Retention().grace.total_seconds() + 5
    rows.append(_run(f"edit {_edit(root, args.edits)}, past the grace", root, cfg, embedder, clock))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    keys = ["run", "parsed", "cpu_s", "optimize_calls", "optimize_cpu_s"]
    keys += ["unchanged_calls", "unchanged_cpu_s", "create_index_cpu_s"]
    print(" | ".join(keys))
    print(" | ".join("---" for _ in keys))
    for r in rows:
        print(" | ".join(str(r[k]) for k in keys))
    for r in rows:
        print(f"\n{r['run']}:")
        for caller, v in r["by_caller"].items():
            print(f"  {caller}: {v}")


if __name__ == "__main__":
    main()
