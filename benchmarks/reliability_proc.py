"""Running `dowse` for benchmarks/reliability.py: the command and its environment, one
run's outcome (`Ran`), runs in a session of their own, and the processes a killed run
leaves behind.

dowse must be installed (`pip install -e .`): the reliability_* modules import it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# Subprocesses with a preexec_fn are started by fork() then exec(): LanceDB, loaded by this
# process to read indexes, warns about the fork although the child runs no Python code of ours.
warnings.filterwarnings("ignore", message="lancedb fork support")

_installed = Path(sys.executable).with_name("dowse")
DOWSE = [str(_installed)] if _installed.exists() else [sys.executable, "-m", "dowse"]
_SET = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def environment() -> dict[str, str]:
    """The environment a `dowse` run gets: this process's as it is now (a test's
    DOWSE_CACHE_DIR, and with it the key that signs its indexes, included)."""
    return {**os.environ, **_SET}


# -- running dowse -------------------------------------------------------------------------


@dataclass
class Ran:
    args: list[str]
    code: int
    out: str
    err: str
    seconds: float

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.err or "panicked at" in self.err

    @property
    def last_line(self) -> str:
        lines = [ln for ln in self.err.splitlines() if ln.strip()]
        return lines[-1].strip() if lines else ""

    @property
    def one_line_error(self) -> bool:
        """Exit 1 and a single `Error: ...` line on stderr (progress bars aside)."""
        errors = [ln for ln in self.err.splitlines() if ln.startswith("Error: ")]
        return self.code == 1 and len(errors) == 1 and not self.traceback


def without_dac() -> list[str]:
    """A command prefix that drops root's power to ignore file modes, or [] when not root
    (or capsh is missing: then the figures say so)."""
    if os.geteuid() != 0 or shutil.which("capsh") is None:
        return []
    return ["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", 'exec "$0" "$@"']


def dowse(
    *args: str,
    timeout: float = 900,
    prefix: list[str] | None = None,
    preexec: Callable[[], None] | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Ran:
    """`dowse ARGS` to its end; `env` adds to (or, with "", drops from) the environment."""
    cmd = [*(prefix or []), *DOWSE, *args]
    t = time.perf_counter()
    try:
        p = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            env=_env(env),
            cwd=cwd or REPO,
            timeout=timeout,
            preexec_fn=preexec,
            errors="replace",
        )
        code, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = -999, str(exc.stdout or ""), f"timed out after {timeout}s"
    return Ran(list(args), code, out, err, time.perf_counter() - t)


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    merged = {**environment(), **(extra or {})}
    return {k: v for k, v in merged.items() if v != ""}


def mcp_calls(
    root: Path,
    calls: list[tuple[str, dict[str, Any]]],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> list[tuple[bool, str]]:
    """One `dowse serve ROOT` session answering `calls` (tool, arguments) in order:
    (is_error, the answer's text) each; a session that dies answers the rest with its
    exception, as errors."""
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=DOWSE[0], args=[*DOWSE[1:], "serve", str(root)], cwd=str(REPO), env=_env(env)
    )
    answers: list[tuple[bool, str]] = []

    async def session() -> None:
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                for tool, arguments in calls:
                    result = await asyncio.wait_for(s.call_tool(tool, arguments), timeout)
                    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
                    answers.append((bool(result.is_error), text))

    try:
        asyncio.run(session())
    except Exception as exc:  # noqa: BLE001 - a dead server is an answer to count
        answers += [(True, f"{type(exc).__name__}: {exc}")] * (len(calls) - len(answers))
    return answers


def launch(*args: str) -> subprocess.Popen[bytes]:
    """`dowse ARGS` in a session of its own (its pid is the process group id)."""
    return subprocess.Popen(
        [*DOWSE, *args],
        env=environment(),
        cwd=REPO,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def group_alive(pgid: int) -> list[int]:
    """Live (not zombie) processes in a process group, from /proc."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in "ZX":
            pids.append(int(entry))
    return pids


def reap_group(pgid: int, wait_s: float) -> int:
    """Wait up to `wait_s` for a killed run's processes to exit; kill and count those left."""
    deadline = time.monotonic() + wait_s
    while (alive := group_alive(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    return len(alive)
