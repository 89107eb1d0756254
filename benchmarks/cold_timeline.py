"""A cold `dowse` command's main thread over time: what it does, and what it waits for.

Usage:
    python benchmarks/cold_timeline.py [--runs N] [--interval MS] [--top N] -- ARGS...

Each run is a new `python -m dowse ARGS` process (bytecode cached, as `cold_compare.py`
runs) with a sampling thread started before anything else is imported: every
`--interval` ms it takes the main thread's stack, its CPU clock
(`time.pthread_getcpuclockid`) and its wait for a core so far (the kernel's schedstat),
the process's CPU, and what each of dowse's other threads (named `dowse-...`) does. Each
interval between two samples goes to the phase of the first one: the innermost frame of
dowse's own code with the innermost frame of all (an import below it is named `import
MODULE`; the interpreter's end is `exit`).

Printed for the median run (by wall): the main thread's phases in order, consecutive
samples of one phase joined, each with its wall, the main thread's CPU in it, its wait
for a core while runnable ("queued": a busy machine's share), the rest ("blocked": for a
lock, another thread, the disk) and the other threads' CPU; the other threads' activity
likewise; then every phase of the main thread summed over the runs (medians per run);
and an estimate of the wall on a quiet machine (`_quiet`). The sampler costs the main
thread a little (it takes the GIL at each sample): its figures are larger than
`cold_compare.py`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

_RUN = r"""
import os, sys, threading, time, json
INTERVAL = float(os.environ["COLD_TIMELINE_INTERVAL"])
MAIN = threading.main_thread().ident
CLOCK = time.pthread_getcpuclockid(MAIN)
SCHED = f"/proc/self/task/{threading.main_thread().native_id}/schedstat"

def queued():
    try:
        with open(SCHED) as f:
            return int(f.read().split()[1]) / 1e9
    except OSError:
        return 0.0
T0 = time.perf_counter()
samples = []
stop = False

def phase(frame):
    names = []
    importing = None
    inner = None
    while frame is not None:
        code = frame.f_code
        path = code.co_filename
        if inner is None:
            inner = f"{os.path.basename(path)}:{code.co_name}"
        if code.co_name == "_find_and_load" and importing is None and "importlib" in path:
            importing = frame.f_locals.get("name", "?")
        if "/dowse/" in path and "benchmarks" not in path:
            rel = path.rsplit("/dowse/", 1)[1]
            names.append(f"{rel}:{code.co_name}")
        frame = frame.f_back
    own = names[0] if names else "-"
    if importing is not None:
        top = importing.split(".")[0]
        return f"import {top} (in {own})"
    return f"{own} [{inner}]"

def others(frames):
    # The other threads that run dowse's work, each with what it does now.
    got = []
    for ident, frame in frames.items():
        thread = threading._active.get(ident)
        if ident == MAIN or thread is None or not thread.name.startswith("dowse"):
            continue
        got.append(f"{thread.name.split('_')[0]}: {phase(frame)}")
    return sorted(got)

def sample():
    while not stop:
        frames = sys._current_frames()
        frame = frames.get(MAIN)
        label = phase(frame) if frame is not None else "exit"
        samples.append((time.perf_counter() - T0, time.clock_gettime(CLOCK), label,
                        time.process_time(), others(frames), queued()))
        time.sleep(INTERVAL)

threading.Thread(target=sample, daemon=True).start()

def finish():
    global stop
    samples.append((time.perf_counter() - T0, time.clock_gettime(CLOCK), "end",
                    time.process_time(), [], queued()))
    stop = True
    with open(os.environ["COLD_TIMELINE_OUT"], "w") as out:
        json.dump(samples, out)

import atexit
atexit.register(finish)
import runpy
sys.argv[0] = "dowse"
runpy.run_module("dowse", run_name="__main__", alter_sys=True)
"""


Sample = tuple[float, float, str, float, list[str], float]
"""Seconds since the start, the main thread's CPU, its phase, the process's CPU, what
each of dowse's other threads does, and the main thread's wait for a core so far."""

Span = tuple[str, float, float, float, float, float]
"""A phase, its start, wall, main thread's CPU, other threads' CPU, main thread's wait
for a core (runnable, not running)."""


def _one(args: list[str], interval_ms: float) -> list[Sample]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = dict(os.environ)
        env["COLD_TIMELINE_INTERVAL"] = str(interval_ms / 1e3)
        env["COLD_TIMELINE_OUT"] = out.name
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        done = subprocess.run(
            [sys.executable, "-c", _RUN, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"dowse {' '.join(args)} failed:\n{done.stderr[-2000:]}")
        return [tuple(s) for s in json.loads(Path(out.name).read_text())]  # type: ignore[misc]


def _spans(samples: list[Sample], key: int = 2) -> list[Span]:
    """Each run of consecutive samples of one phase (`key` 2: the main thread's, 4: the
    other threads')."""
    spans: list[Span] = []
    for one, two in zip(samples, samples[1:], strict=False):
        label = one[2] if key == 2 else "; ".join(one[4]) or "-"
        wall, cpu, wait = two[0] - one[0], two[1] - one[1], two[5] - one[5]
        rest = (two[3] - one[3]) - cpu
        if spans and spans[-1][0] == label:
            name, start, w, c, r, q = spans[-1]
            spans[-1] = (name, start, w + wall, c + cpu, r + rest, q + wait)
        else:
            spans.append((label, one[0], wall, cpu, rest, wait))
    return spans


def _print_spans(spans: list[Span], min_ms: float) -> None:
    print(
        f"  {'start':>7} {'wall':>7} {'CPU':>7} {'queued':>7} {'blocked':>7} {'others':>7}"
        "  phase (ms)"
    )
    for name, start, wall, cpu, rest, wait in spans:
        if wall * 1e3 >= min_ms:
            print(
                f"  {start * 1e3:7.1f} {wall * 1e3:7.1f} {cpu * 1e3:7.1f} {wait * 1e3:7.1f} "
                f"{(wall - cpu - wait) * 1e3:7.1f} {rest * 1e3:7.1f}  {name}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--interval", type=float, default=2.0, help="ms between samples")
    parser.add_argument("--top", type=int, default=40, help="phases in the summed table")
    parser.add_argument("--min-ms", type=float, default=4.0, help="shortest span printed")
    parser.add_argument("args", nargs="+", help="dowse's arguments (after --)")
    opts = parser.parse_args()
    _one(opts.args, opts.interval)  # bytecode and page caches
    runs = [_one(opts.args, opts.interval) for _ in range(opts.runs)]
    runs.sort(key=lambda r: r[-1][0])
    median = runs[len(runs) // 2]
    print(f"load {os.getloadavg()}, {opts.runs} runs; the median run by wall, its main thread:")
    _print_spans(_spans(median), opts.min_ms)
    print("  its other threads (the embedder's load, the searches):")
    _print_spans(_spans(median, key=4), opts.min_ms)
    end = median[-1]
    print(
        f"  total wall {end[0] * 1e3:.1f} ms, main thread's CPU {end[1] * 1e3:.1f} ms, "
        f"the process's {end[3] * 1e3:.1f} ms"
    )
    summed: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for run in runs:
        per: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
        for name, _, wall, cpu, _, wait in _spans(run):
            per[name][0] += wall
            per[name][1] += cpu
            per[name][2] += wait
        for name, (wall, cpu, wait) in per.items():
            summed[name].append((wall, cpu, wait))
    print("the main thread's phases summed, medians over the runs (a run without it counts 0):")
    print(f"  {'wall':>7} {'CPU':>7} {'queued':>7} {'blocked':>7}  phase (ms), by blocked")
    rows = []
    for name, got in summed.items():
        got = got + [(0.0, 0.0, 0.0)] * (len(runs) - len(got))
        wall = statistics.median(g[0] for g in got)
        cpu = statistics.median(g[1] for g in got)
        wait = statistics.median(g[2] for g in got)
        rows.append((wall - cpu - wait, wall, cpu, wait, name))
    for blocked, wall, cpu, wait, name in sorted(rows, reverse=True)[: opts.top]:
        print(
            f"  {wall * 1e3:7.1f} {cpu * 1e3:7.1f} {wait * 1e3:7.1f} {blocked * 1e3:7.1f}  {name}"
        )
    walls = [r[-1][0] for r in runs]
    mains = [r[-1][1] for r in runs]
    procs = [r[-1][3] for r in runs]
    queued = [r[-1][5] - r[0][5] for r in runs]
    blocked = [r[-1][0] - r[-1][1] - q for r, q in zip(runs, queued, strict=True)]
    print(
        f"medians: wall {statistics.median(walls) * 1e3:.1f} ms, main thread's CPU "
        f"{statistics.median(mains) * 1e3:.1f} ms, queued {statistics.median(queued) * 1e3:.1f}"
        f" ms, blocked {statistics.median(blocked) * 1e3:.1f} ms; the process's CPU "
        f"{statistics.median(procs) * 1e3:.1f} ms"
    )
    quiet = [_quiet(r) for r in runs]
    print(
        f"an estimate of the wall on a quiet machine: {statistics.median(quiet) * 1e3:.1f} ms "
        f"(runs {min(quiet) * 1e3:.1f}-{max(quiet) * 1e3:.1f})"
    )


def _quiet(samples: list[Sample]) -> float:
    """The main thread's CPU, plus in each interval it was blocked the other threads'
    CPU in it, up to the time blocked: what the wall would be with a core ready for each
    runnable thread and the other threads' work done at one core's speed (not queued
    behind another process's; an estimate, neither bound exact: a busy machine also slows
    what a thread's CPU second does, and the other threads may run side by side)."""
    total = samples[-1][1] - samples[0][1]
    for one, two in zip(samples, samples[1:], strict=False):
        cpu = two[1] - one[1]
        blocked = (two[0] - one[0]) - cpu - (two[5] - one[5])
        others = (two[3] - one[3]) - cpu
        total += max(0.0, min(blocked, others))
    return total


if __name__ == "__main__":
    main()
