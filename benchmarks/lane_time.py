"""The wall and CPU time of a command and of every process it starts, daemons included.

    python benchmarks/lane_time.py [--json OUT] -- pytest -n 2 --dist worksteal -m "not model"

`/usr/bin/time` counts the processes its command waited for; a daemon that outlives its
parent (the Ray cluster's raylets, GCS and agents, which the Ray test's fixture leaves
to be reparented) is reaped by init and counted nowhere. Here this process makes itself
the children's subreaper (Linux `PR_SET_CHILD_SUBREAPER`): every orphan of the command
is reparented to it and reaped by it, so `RUSAGE_CHILDREN` holds them all. After the
command ends it waits up to `--linger` seconds for the orphans still running, then kills
them (SIGKILL) and reaps them too, and says how many it killed.

Printed: wall seconds, user and system CPU of the whole tree, the command's exit code,
the 1-minute load at the start and at the end, and the orphans killed.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def _load() -> float:
    with open("/proc/loadavg", encoding="ascii") as fh:
        return float(fh.read().split()[0])


def _children() -> list[int]:
    """The pids whose parent is this process (orphans reparented here included)."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            found.append(int(entry))
    return found


def _reap_all(linger: float) -> int:
    """Reap every child; those still running after `linger` seconds are killed. How many
    were killed."""
    deadline, killed = time.monotonic() + linger, 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return killed
        if pid:
            continue
        if time.monotonic() > deadline:
            for child in _children():
                try:
                    os.kill(child, signal.SIGKILL)
                    killed += 1
                except ProcessLookupError:
                    pass
            deadline = float("inf")
        time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--linger", type=float, default=30.0, help="seconds orphans may run on")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    _become_subreaper()
    load, start = _load(), time.monotonic()
    try:
        code = subprocess.call(command)
    except OSError as exc:  # not found, not executable
        parser.error(f"cannot run {command[0]}: {exc.strerror}")
    wall = time.monotonic() - start
    killed = _reap_all(args.linger)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures = {
        "wall": round(wall, 2),
        "user": round(usage.ru_utime, 2),
        "system": round(usage.ru_stime, 2),
        "cpu": round(usage.ru_utime + usage.ru_stime, 2),
        "code": code,
        "load_start": load,
        "load_end": _load(),
        "orphans_killed": killed,
    }
    print(
        f"wall {wall:.1f} s, CPU {usage.ru_utime:.1f} + {usage.ru_stime:.1f} = "
        f"{figures['cpu']:.1f} s, exit {code}, load {load} -> {figures['load_end']}, "
        f"orphans killed {killed}",
        file=sys.stderr,
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(figures, fh)
    return code


if __name__ == "__main__":
    sys.exit(main())
