"""Where a cold `dowse ask` spends its time: per phase, the main thread's CPU and the wall.

Usage:
    python benchmarks/cold_phases.py --path INDEXED_TREE [--runs N] [--question TEXT]
        [--format markdown|agent]

Each run is a new Python process that runs the `dowse ask` command in process (as
`dowse.cli.main` does: pandas left out, its GC threshold, the same options) with its
steps wrapped, and prints, at each step's end, the wall time and the main thread's CPU
time (`time.thread_time`) since the process started: the imports up to `dowse.cli`, those
the answer adds before the index opens (the query embedder's load starts on its thread
at their end), opening the index (LanceDB's import) and checking the tree for changes,
then the answer and its output.
The main thread's CPU is what a second core cannot take over; the wall beyond it is time
spent waiting, mostly for LanceDB's Rust threads: the LanceDB reads the main thread
waited for are listed with their wall and main-thread CPU. Medians of `--runs` runs
(after one to warm the bytecode and page caches); the process's CPU (all threads) last.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

_RUN = r"""
import json, os, resource, sys, threading, time
T0W, T0C = time.perf_counter(), time.thread_time()
marks, waits = [], {}

def mark(name):
    marks.append((name, time.perf_counter() - T0W, time.thread_time() - T0C))

import dowse.cli as cli
for name, value in getattr(cli, "ARROW_ALLOCATOR_ENV", {}).items():  # as `main` does
    os.environ.setdefault(name, value)
from dowse.indexer.lance import leave_out_pandas
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
leave_out_pandas()
try:  # as `main` does, where it does
    from dowse.lazy import leave_out_pydantic_plugins
    leave_out_pydantic_plugins()
except ImportError:
    pass
if hasattr(cli, "GC_YOUNG_THRESHOLD"):
    import gc
    gc.set_threshold(cli.GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
mark("import dowse.cli")
import dowse.indexer.store as store_module
from dowse.server.workspace import Workspace

def wrapped(owner, name, before=None, after=None):
    original = getattr(owner, name)
    def call(*a, **k):
        if before:
            mark(before)
        try:
            return original(*a, **k)
        finally:
            if after:
                mark(after)
    setattr(owner, name, call)

wrapped(Workspace, "_fresh", "imports for the answer", "index opened, tree checked")

def waited(name):
    original = getattr(store_module.Store, name)
    def call(self, *a, **k):
        w, c = time.perf_counter(), time.thread_time()
        try:
            return original(self, *a, **k)
        finally:
            if threading.current_thread() is threading.main_thread():
                key = f"{name} {a[0]}" if a else name
                n, wall, cpu = waits.get(key, (0, 0.0, 0.0))
                waits[key] = (n + 1, wall + time.perf_counter() - w, cpu + time.thread_time() - c)
    setattr(store_module.Store, name, call)

for name in ("rows", "scan", "full_text", "nearest", "count"):
    waited(name)
try:
    cli.cli.main(sys.argv[1:], prog_name="dowse", standalone_mode=False)
finally:
    mark("answer and its output")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"marks": marks, "waits": waits,
                      "process_cpu": usage.ru_utime + usage.ru_stime}), file=sys.stderr)
"""


def _one(args: list[str], cwd: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"dowse {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stderr.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--path", type=Path, required=True, help="an indexed tree")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--question", default="where are expired sessions deleted?")
    parser.add_argument("--format", choices=["markdown", "agent"], default="markdown")
    opts = parser.parse_args()
    args = ["ask", opts.question, "--path", str(opts.path.resolve())]
    if opts.format == "agent":
        args += ["--format", "agent"]
    here = Path.cwd()
    # Bytecode cached, as `cold_compare.py` runs: else every run compiles dowse's modules.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    _one(args, here)  # bytecode and page caches
    runs = [_one(args, here) for _ in range(opts.runs)]
    print(f"load {os.getloadavg()}, {opts.runs} runs, medians (ms since the process started)")
    names = [m[0] for m in runs[0]["marks"]]
    last = (0.0, 0.0)
    for i, name in enumerate(names):
        wall = statistics.median(r["marks"][i][1] for r in runs) * 1e3
        cpu = statistics.median(r["marks"][i][2] for r in runs) * 1e3
        print(
            f"  {name:<28} wall {wall:7.1f} (+{wall - last[0]:6.1f})   "
            f"main-thread CPU {cpu:7.1f} (+{cpu - last[1]:6.1f})"
        )
        last = (wall, cpu)
    print("LanceDB reads the main thread waited for (median per run: calls, wall, its CPU):")
    for key in sorted(runs[0]["waits"], key=lambda k: -runs[0]["waits"][k][1]):
        got = [r["waits"].get(key, (0, 0.0, 0.0)) for r in runs]
        print(
            f"  {key:<22} {statistics.median(g[0] for g in got):4.0f}  "
            f"{statistics.median(g[1] for g in got) * 1e3:7.1f} ms  "
            f"{statistics.median(g[2] for g in got) * 1e3:6.1f} ms"
        )
    cpu = statistics.median(r["process_cpu"] for r in runs)
    print(f"process CPU (all threads) median {cpu * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
