"""Two checkouts' cold `dowse` processes, run alternately: a before/after on a busy machine.

Usage:
    python benchmarks/cold_compare.py --before PATH --after PATH [--runs N] -- ARGS...
    python benchmarks/cold_compare.py --before PATH --after PATH [--runs N] --serve ROOT
    python benchmarks/cold_compare.py --before PATH --after PATH --after-env NAME=VALUE -- ARGS...

`{side}` in ARGS stands for the checkout's side, `before` or `after` (`index
DIR/{side}/django`): each side its own copy of a tree, where a run's records name the code
that wrote them (`idle.json` does) and the other side's runs would rewrite them.

Each checkout is a directory holding `dowse` (its PYTHONPATH); each keeps its bytecode in
a cache of its own under the system's temporary directory. One run of each, before then
after, `--runs` times (after one round that is not counted, to fill the bytecode and page
caches): a machine whose load drifts weighs on both alike. Printed per checkout: the wall
and CPU seconds (user + system of the process and its threads) of `python -m dowse
ARGS`, its main thread's CPU seconds, and the seconds its main thread waited for a core
while runnable (the kernel's schedstat; what a busy machine adds) and blocked otherwise
(for another thread, a lock, the disk: on a quiet machine, the wall beyond the main
thread's CPU), medians; with `--serve ROOT`, the seconds from
starting `dowse serve --no-embed ROOT` to its answers to `initialize` and `tools/list`
(as `cold_start.py` measures them).
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

sys.path.insert(0, str(Path(__file__).parent))
from cold_start import _serve_once  # noqa: E402

# `python -m dowse ARGS`, printing at exit (stderr's last line) its main thread's CPU
# seconds (what a second core cannot take over) and, from the start of this code to its
# exit, the seconds the main thread waited: for a core while runnable (the kernel's
# schedstat: a busy machine's share) and otherwise (blocked: for another thread, a lock,
# the disk).
_MAIN = (
    "import atexit, sys, time\n"
    "def waited():\n"
    "    try:\n"
    "        with open('/proc/thread-self/schedstat') as f:\n"
    "            return int(f.read().split()[1]) / 1e9\n"
    "    except OSError:\n"
    "        return float('nan')\n"
    "T0, C0, Q0 = time.perf_counter(), time.thread_time(), waited()\n"
    "def report():\n"
    "    cpu, queued = time.thread_time(), waited() - Q0\n"
    "    blocked = time.perf_counter() - T0 - (cpu - C0) - queued\n"
    "    print(cpu, queued, blocked, file=sys.stderr)\n"
    "atexit.register(report)\n"
    "import runpy\n"
    "sys.argv[0] = 'dowse'\n"
    "runpy.run_module('dowse', run_name='__main__', alter_sys=True)\n"
)


def _command(args: list[str]) -> tuple[float, ...]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return (wall, cpu, *map(float, done.stderr.strip().splitlines()[-1].split()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--serve", type=Path, help="time serve's handshake over this root")
    parser.add_argument(
        "--after-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the after side's runs alone (repeatable): one "
        "checkout against itself, with a setting the command would otherwise choose",
    )
    parser.add_argument("args", nargs="*", help="dowse's arguments (after --)")
    opts = parser.parse_args()
    if bool(opts.serve) == bool(opts.args):
        parser.error("give either --serve ROOT or dowse's arguments")
    cache = Path(tempfile.gettempdir()) / "dowse-cold-compare"
    sides = {"before": opts.before.resolve(), "after": opts.after.resolve()}
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    after_env = dict(item.split("=", 1) for item in opts.after_env)
    base_env = dict(os.environ)
    results: dict[str, list[tuple[float, ...]]] = {name: [] for name in sides}
    for n in range(opts.runs + 1):
        for name, checkout in sides.items():
            os.environ.clear()
            os.environ.update(base_env if name == "before" else {**base_env, **after_env})
            os.environ["PYTHONPATH"] = str(checkout)
            os.environ["PYTHONPYCACHEPREFIX"] = str(cache / name)
            args = [a.replace("{side}", name) for a in opts.args]
            got = _serve_once(opts.serve.resolve()) if opts.serve else _command(args)
            if n:
                results[name].append(got)
    what = f"serve {opts.serve}" if opts.serve else " ".join(opts.args)
    if after_env:
        what += f" (after with {' '.join(opts.after_env)})"
    print(f"{what}: {opts.runs} runs each, load at the end {os.getloadavg()}")
    for name, rows in results.items():
        columns = [statistics.median(c) for c in zip(*rows, strict=True)]
        if opts.serve:
            init, listed, cpu = columns
            print(
                f"  {name:<6} initialize answered {init:.3f} s, tools/list answered "
                f"{listed:.3f} s, process CPU {cpu:.3f} s (medians)"
            )
        else:
            wall, cpu, main_cpu, queued, blocked = columns
            print(
                f"  {name:<6} wall {wall:.3f} s, CPU {cpu:.3f} s, main thread's CPU "
                f"{main_cpu:.3f} s, its waits for a core {queued:.3f} s and blocked "
                f"{blocked:.3f} s (medians)"
            )


if __name__ == "__main__":
    main()
