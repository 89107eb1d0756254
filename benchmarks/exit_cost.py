"""What a `dowse` process spends after its exit handlers: the interpreter's end.

Usage:
    python benchmarks/exit_cost.py --before PATH --after PATH [--runs N] -- ARGS...

Runs `python -m dowse ARGS` with each checkout (a directory holding `dowse`, its
PYTHONPATH), alternately, `--runs` times each after one round that is not counted (as
`cold_compare.py` does, each side's bytecode cached apart). An exit handler registered
before the command runs is the last to run: it prints the wall clock and the process's
CPU seconds, and the parent takes both again when the process has ended. Printed per
checkout: the medians of the wall and CPU seconds between the two (the collections,
module teardown and native libraries' destructors at the interpreter's end).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Registered before `dowse` runs, so run after every handler the command registers.
_MAIN = (
    "import atexit, resource, sys, time\n"
    "def _last():\n"
    "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    print(time.time(), r.ru_utime + r.ru_stime, file=sys.stderr)\n"
    "atexit.register(_last)\n"
    "import runpy\n"
    "sys.argv[0] = 'dowse'\n"
    "runpy.run_module('dowse', run_name='__main__', alter_sys=True)\n"
)


def _once(args: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )
    ended = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    at, cpu_at = map(float, done.stderr.strip().splitlines()[-1].split())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return ended - at, cpu - cpu_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("args", nargs="+", help="dowse's arguments (after --)")
    opts = parser.parse_args()
    cache = Path(tempfile.gettempdir()) / "dowse-cold-compare"
    sides = {"before": opts.before.resolve(), "after": opts.after.resolve()}
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for n in range(opts.runs + 1):
        for name, checkout in sides.items():
            os.environ["PYTHONPATH"] = str(checkout)
            os.environ["PYTHONPYCACHEPREFIX"] = str(cache / name)
            got = _once(opts.args)
            if n:
                results[name].append(got)
    print(f"{' '.join(opts.args)}: {opts.runs} runs each, load at the end {os.getloadavg()}")
    for name, rows in results.items():
        wall, cpu = (statistics.median(c) for c in zip(*rows, strict=True))
        print(f"  {name:<6} after the exit handlers: wall {wall:.3f} s, CPU {cpu:.3f} s (medians)")


if __name__ == "__main__":
    main()
