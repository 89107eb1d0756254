"""benchmarks/lane_time.py counts the processes its command leaves behind: they are
reparented to it and reaped by it, and those still running after `--linger` are killed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

SCRIPT = REPO / "benchmarks" / "lane_time.py"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's"
)

# A command that leaves a daemon behind: it forks a child that starts its own session
# and outlives it. The daemon waits for its parent to end, writes the pid it was
# reparented to into `where`, then sleeps `seconds`.
_DAEMON = """
import os, sys, time
where, seconds = sys.argv[1], float(sys.argv[2])
parent = os.getpid()
if os.fork() == 0:
    os.setsid()
    while os.getppid() == parent:
        time.sleep(0.01)
    with open(where + ".tmp", "w") as fh:
        fh.write(str(os.getppid()))
    os.rename(where + ".tmp", where)
    time.sleep(seconds)
    os._exit(0)
"""


def _run(tmp_path: Path, seconds: float, *options: str) -> tuple[subprocess.Popen[str], dict]:
    out = tmp_path / "figures.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(SCRIPT),
            "--json",
            str(out),
            *options,
            "--",
            sys.executable,
            "-c",
            _DAEMON,
            str(tmp_path / "adopted"),
            str(seconds),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return proc, json.loads(out.read_text())


def test_an_orphan_is_reaped_by_the_timer(tmp_path):
    proc, figures = _run(tmp_path, 0)
    # The daemon's parent, once the command had ended, was the timer: its CPU is in
    # the timer's `RUSAGE_CHILDREN`, where `/usr/bin/time` would have had none of it.
    assert (tmp_path / "adopted").read_text() == str(proc.pid)
    assert figures["code"] == 0 and figures["orphans_killed"] == 0


def test_an_orphan_still_running_after_the_linger_is_killed(tmp_path):
    _, figures = _run(tmp_path, 600, "--linger", "0.5")
    assert figures["code"] == 0 and figures["orphans_killed"] == 1


def test_a_command_that_cannot_run_is_one_line(tmp_path):
    missing = tmp_path / "no-such-program"
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--", str(missing)], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert out.stderr.splitlines()[-1].endswith(f"cannot run {missing}: No such file or directory")
    assert "Traceback" not in out.stderr
