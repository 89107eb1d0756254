"""Index builds and started processes per test of a pytest run (docs/testing.md, Timings).

A pytest plug-in and its report, beside `lane_cpu.py`. The plug-in counts, for every test
(its fixtures' setup included), the in-process `build_index` calls and their CPU (the
whole process's, LanceDB's threads included), and the processes it starts, by program
(`git` split into the tests' own and the library's `dowse.git` runs):

    PYTHONPATH=benchmarks LANE_BUILDS_OUT=/tmp/builds pytest -n 2 --dist worksteal \\
        -m "not model" -p lane_builds
    python benchmarks/lane_builds.py /tmp/builds

The report prints the totals, then each module's builds, their CPU and its processes,
the costliest first, and the tests whose builds took most.
"""

from __future__ import annotations

import collections
import glob
import json
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

_rows: dict[str, dict[str, Any]] = {}
_current: str | None = None
_popen_init = subprocess.Popen.__init__


def _program(args: Any) -> str:
    argv = [str(a) for a in args] if isinstance(args, (list, tuple)) else [str(args)]
    name = os.path.basename(argv[0])
    if name.startswith("python"):
        return "python " + (" ".join(argv[1:3]) if argv[1:2] == ["-m"] else " ".join(argv[1:2])[:2])
    if name == "git":
        library = any(
            f.filename.endswith(os.path.join("dowse", "git.py"))
            for f in traceback.extract_stack(limit=12)
        )
        return "git (dowse.git)" if library else "git (tests)"
    return name


def _counting_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
    if _current is not None:
        _rows[_current]["procs"][_program(args)] += 1
    _popen_init(self, args, *rest, **kw)


def _wrap_builds() -> None:
    """Every module's `build_index` name, rebound to a counting wrapper (test modules
    import it by name, so each test rebinds those imported since)."""
    from dowse.indexer import build

    counting = getattr(build.build_index, "_counting", None)
    if counting is None:
        real = build.build_index

        def counting(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return real(*args, **kwargs)
            finally:
                if _current is not None:
                    _rows[_current]["builds"] += 1
                    _rows[_current]["build_cpu"] += time.process_time() - start

        counting._counting = counting  # type: ignore[attr-defined]
        counting._real = real  # type: ignore[attr-defined]
        build.build_index = counting
    real = counting._real  # type: ignore[attr-defined]
    for module in list(sys.modules.values()):
        if getattr(module, "build_index", None) is real:
            module.build_index = counting  # type: ignore[union-attr]


def pytest_configure(config: pytest.Config) -> None:
    subprocess.Popen.__init__ = _counting_init  # type: ignore[method-assign]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    global _current
    _wrap_builds()
    _current = item.nodeid
    _rows[_current] = {"builds": 0, "build_cpu": 0.0, "procs": collections.Counter()}
    yield
    _current = None


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("LANE_BUILDS_OUT")
    if out:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(f"{out}.{worker}.json", "w") as fh:
            json.dump(_rows, fh)


def report(prefix: str, top: int = 20) -> None:
    rows: dict[str, dict[str, Any]] = {}
    for path in sorted(glob.glob(f"{prefix}.*.json")):
        with open(path) as fh:
            rows.update(json.load(fh))
    procs: collections.Counter[str] = collections.Counter()
    by_module: dict[str, list[Any]] = collections.defaultdict(
        lambda: [0, 0.0, collections.Counter()]
    )
    for nodeid, row in rows.items():
        procs.update(row["procs"])
        totals = by_module[nodeid.split("::")[0]]
        totals[0] += row["builds"]
        totals[1] += row["build_cpu"]
        totals[2].update(row["procs"])
    builds = sum(r["builds"] for r in rows.values())
    cpu = sum(r["build_cpu"] for r in rows.values())
    print(f"{len(rows)} tests: {builds} builds, {cpu:.1f} s CPU in them")
    print("processes: " + ", ".join(f"{n} {name}" for name, n in procs.most_common()))
    for module, (n, module_cpu, started) in sorted(by_module.items(), key=lambda kv: -kv[1][1]):
        if n or started:
            print(f"{n:5d} builds {module_cpu:6.1f} s  {module}  {dict(started.most_common())}")
    print(f"the {top} tests whose builds took most:")
    ranked = sorted(rows.items(), key=lambda kv: -kv[1]["build_cpu"])[:top]
    for nodeid, row in ranked:
        print(f"{row['builds']:5d} builds {row['build_cpu']:6.2f} s  {nodeid}")


if __name__ == "__main__":
    report(sys.argv[1])
