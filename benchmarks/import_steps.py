"""The CPU each of a sequence of statements takes in a fresh Python: what an import adds
after the ones before it.

Usage:
    python benchmarks/import_steps.py [--runs N] STATEMENT [STATEMENT ...]

Each run is a new process (this interpreter, the caller's PYTHONPATH and bytecode cache)
that executes the statements in order and reads its CPU time (`time.process_time`, all
threads) after each. Printed: each statement's median CPU over `--runs` runs (after one
that fills the caches), and their sum, which leaves out the interpreter's start. An
import's figure is what it adds to the ones before it: order the statements as a
command imports them (`python -X importtime` shows the order).

    python benchmarks/import_steps.py --runs 7 "import click, dowse.cli" \\
        "from pydantic import BaseModel" "import numpy" "import dowse.explore.handoff"
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_PROBE = """
import json, time
marks = [time.process_time()]
for statement in {statements!r}:
    exec(statement)
    marks.append(time.process_time())
print(json.dumps(marks))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("statements", nargs="+")
    opts = parser.parse_args()
    code = _PROBE.format(statements=opts.statements)
    rows = []
    for n in range(opts.runs + 1):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise SystemExit(done.stderr[-2000:])
        marks = json.loads(done.stdout.strip().splitlines()[-1])
        if n:
            rows.append([b - a for a, b in zip(marks, marks[1:], strict=False)])
    medians = [statistics.median(column) for column in zip(*rows, strict=True)]
    for statement, cpu in zip(opts.statements, medians, strict=True):
        print(f"{cpu * 1e3:8.1f} ms  {statement}")
    print(f"{sum(medians) * 1e3:8.1f} ms  in all; {opts.runs} runs, load {os.getloadavg()}")


if __name__ == "__main__":
    main()
