"""The import graphs `explore` draws of some trees: modules, edges, the modules on import
cycles, the cycles shown, and the edges only type checkers read.

Usage:
    python benchmarks/import_cycles.py TREE [TREE ...] [--json]
    PYTHONPATH=OTHER_CHECKOUT python benchmarks/import_cycles.py TREE ...   # another version

Each tree is read by parsing (its index, if any, is not used), as `dowse explore TREE
--depth deep` reads one without an index. CPU is the process's for that tree's graph.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from dowse.explore.imports import import_graph
from dowse.explore.tracks import Context


def measure(root: Path) -> dict[str, object]:
    started = time.process_time()
    graph = import_graph(Context(root=root.resolve()))
    return {
        "tree": root.name,
        "modules": len(graph.nodes),
        "edges": len(graph.edges),
        "components": len(graph.components),
        "on_cycles": sum(len(c) for c in graph.components),
        "cycles_shown": len(graph.cycles),
        # absent in versions before the field: they read every edge as one that runs
        "type_only_edges": sum(bool(getattr(e, "type_only", False)) for e in graph.edges),
        "cpu_s": round(time.process_time() - started, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for tree in args.trees:
        if not tree.is_dir():
            raise SystemExit(f"import_cycles: not a directory: {tree}")
        row = measure(tree)
        print(json.dumps(row) if args.json else "  ".join(f"{k} {v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
