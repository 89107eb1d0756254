"""The CPU each test of a pytest run takes, summed per module (docs/testing.md, Timings).

A pytest plug-in and its report. The plug-in records, for every test, its wall time and
the CPU of the pytest process and the children it waited for (user + system), and writes
them per xdist worker when the run ends:

    PYTHONPATH=benchmarks LANE_CPU_OUT=/tmp/lane pytest -n 2 --dist worksteal \\
        -m "not model" -p lane_cpu
    python benchmarks/lane_cpu.py /tmp/lane

The report prints the tests' total and each module's CPU, system CPU and wall time,
the costliest first. Processes the tests start and do not wait for (a Ray cluster's)
are not counted.
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

_rows: list[tuple[str, float, float, float]] = []


def _cpu() -> tuple[float, float]:
    """(user + system, system) CPU seconds of this process and its waited children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    system = own.ru_stime + kids.ru_stime
    return own.ru_utime + kids.ru_utime + system, system


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    cpu, system = _cpu()
    start = time.perf_counter()
    yield
    cpu_after, system_after = _cpu()
    _rows.append((item.nodeid, time.perf_counter() - start, cpu_after - cpu, system_after - system))


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("LANE_CPU_OUT")
    if out:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(f"{out}.{worker}.json", "w") as fh:
            json.dump(_rows, fh)


def report(prefix: str) -> None:
    rows: list[Any] = []
    for path in glob.glob(f"{prefix}.*.json"):
        with open(path) as fh:
            rows += json.load(fh)
    by_module: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for nodeid, wall, cpu, system in rows:
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


if __name__ == "__main__":
    report(sys.argv[1])
