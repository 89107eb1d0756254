"""CPU of fitting an explore report to a budget (`explore.render.fit_budget`).

The report is the one tests/test_workspace_explore.py fits over MCP: a deep report whose
only section is 1,500 dependencies, fitted to each budget from 500 to 695 tokens in steps
of 5, as JSON and as markdown:

    python benchmarks/fit_bench.py [--deps 1500]
"""

from __future__ import annotations

import argparse
import time

from dowse.explore.records import Dependency, ExploreResult, ManifestReport
from dowse.explore.render import fit_budget


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deps", type=int, default=1500, help="dependencies in the report")
    args = parser.parse_args(argv)
    deps = [
        Dependency(name=f"package-{i}", manifest="requirements.txt", line=i + 1)
        for i in range(args.deps)
    ]
    result = ExploreResult(
        path=".",
        root="/r",
        depth="deep",
        dependencies=ManifestReport(manifests=["requirements.txt"], dependencies=deps),
    )
    budgets = range(500, 700, 5)
    for fmt in ("json", "markdown"):
        start = time.process_time()
        for budget in budgets:
            fit_budget(result, budget, fmt)
        cpu = time.process_time() - start
        print(f"{fmt}: {cpu:.2f} s CPU for {len(budgets)} fits")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
