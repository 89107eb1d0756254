"""The CPU each test of a pytest run takes, summed per module (docs/testing.md, Timings).

A pytest plug-in and its report. The plug-in records, for every test, its wall time and
the CPU of the pytest process and the children it waited for (user + system), and writes
them per xdist worker when the run ends:

    PYTHONPATH=benchmarks LANE_CPU_OUT=/tmp/lane pytest -n 2 --dist worksteal \\
        -m "not model" -p lane_cpu
    python benchmarks/lane_cpu.py /tmp/lane

The report prints the tests' total and each module's CPU, system CPU and wall time,
the costliest first, then each worker's tests, busy time and span (from the session's
start to its first test's start and to its last test's end: how even the workers'
shares were, and how long collection took). Processes the tests start and do not wait
for (a Ray cluster's) are not counted.
"""

from __future__ import annotations

import collections
import glob
import json
import os
import resource
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

_rows: list[tuple[str, float, float, float, float]] = []
_started = time.time()


def _cpu() -> tuple[float, float]:
    """(user + system, system) CPU seconds of this process and its waited children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    system = own.ru_stime + kids.ru_stime
    return own.ru_utime + kids.ru_utime + system, system


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    cpu, system = _cpu()
    at = time.time()
    start = time.perf_counter()
    yield
    cpu_after, system_after = _cpu()
    wall = time.perf_counter() - start
    _rows.append((item.nodeid, wall, cpu_after - cpu, system_after - system, at))


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("LANE_CPU_OUT")
    if out:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(f"{out}.{worker}.json", "w") as fh:
            json.dump({"started": _started, "rows": _rows}, fh)


def report(prefix: str) -> None:
    rows: list[Any] = []
    workers: dict[str, tuple[float, list[Any]]] = {}
    for path in sorted(glob.glob(f"{prefix}.*.json")):
        with open(path) as fh:
            data = json.load(fh)
        if isinstance(data, list):  # written before the rows had their start
            data = {"started": None, "rows": [[*r, None] for r in data]}
        rows += data["rows"]
        name = path.removeprefix(prefix).strip(".").removesuffix(".json")
        workers[name] = (data["started"], data["rows"])
    by_module: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for nodeid, wall, cpu, system, _ in rows:
        totals = by_module[nodeid.split("::")[0]]
        totals[0] += cpu
        totals[1] += system
        totals[2] += wall
        totals[3] += 1
    cpu = sum(r[2] for r in rows)
    system = sum(r[3] for r in rows)
    print(f"{len(rows)} tests: {cpu:.1f} s CPU ({system:.1f} s system)")
    for module, (cpu, system, wall, n) in sorted(by_module.items(), key=lambda kv: -kv[1][0]):
        print(f"{cpu:7.1f} s CPU {system:6.1f} s system {wall:7.1f} s wall {n:5d}  {module}")
    # The session's start is the controller's (`main`) when there is one: the workers
    # start a moment after it.
    started = workers.pop("main", (None, []))[0]
    for name, (own, its) in workers.items():
        if not its:
            continue
        busy = sum(r[1] for r in its)
        span = ""
        if its[0][4] is not None:
            zero = started or own
            first = min(r[4] for r in its) - zero
            last = max(r[4] + r[1] for r in its) - zero
            span = f", tests from {first:.1f} to {last:.1f} s"
        print(f"{name}: {len(its)} tests, {busy:.1f} s busy{span}")


if __name__ == "__main__":
    report(sys.argv[1])
