"""Cold start: the wall and CPU time of fresh `dowse` processes, and what they import.

Usage:
    python benchmarks/cold_start.py --ask-root PATH [--ask-index-dir DIR] [--noop-root PATH]
        [--serve-root PATH] [--runs N] [--question TEXT] [--top N]

Each command runs `--runs` times in a new Python process (`python -m dowse ...`, the
`dowse` this interpreter imports): `dowse --help`; a no-op `dowse index` of
`--noop-root` (indexed first, once, if it has no index, then no-op runs until the
index answers one from its record: `_settle`); `dowse ask --format agent` and
`dowse ask` (markdown) on `--ask-root` (which must be indexed, at `--ask-index-dir` if
the index is elsewhere: django takes minutes, so it is never built here); `dowse serve
--no-embed` over `--serve-root` (indexed first, once, if it has no index) driven over stdio
by raw JSON-RPC lines until it has answered `initialize` and `tools/list`, then closed.
Printed per command: wall seconds (median, min, max) and CPU seconds (user + system of
the child and its threads, median), which a machine whose neighbours take the cores
inflates far less than wall time; the heavy packages the process imported; then the
`--top` imports by cumulative time (`python -X importtime`, one more run) and, for
`ask`, the query embedding's share: loading the ONNX graph and the tokenizer and
embedding the question, in a process of its own. For `serve`, the wall time from the
process's start to each of the two answers; its CPU is the whole process's, the indexes
warmed on a thread of their own included.
Each command's git processes are counted too (a `git` on PATH that logs, then runs the
real one): the runner's processes per command, which the CPU figures include.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall s, child CPU s, stderr) of one `python <args>`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stderr


def _imports(stderr: str, top: int) -> list[tuple[int, int, str]]:
    """The `top` imports by cumulative microseconds: (cumulative, self, module)."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, own, cumulative, name = (p.strip() for p in line.replace(":", "|", 1).split("|"))
        rows.append((int(cumulative), int(own), name))
    return sorted(rows, reverse=True)[:top]


HEAVY = (
    "lancedb",
    "pyarrow",
    "pandas",
    "numpy",
    "onnxruntime",
    "tokenizers",
    "torch",
    "sentence_transformers",
    "detect_secrets",
    "tree_sitter",
    "mcp",
)

_HEAVY_PROBE = """
import atexit, runpy, sys
heavy = {heavy!r}
atexit.register(lambda: print("heavy:", " ".join(h for h in heavy if h in sys.modules) or "-",
                              file=sys.stderr))
sys.argv = ["dowse", *{args!r}]
runpy.run_module("dowse", run_name="__main__", alter_sys=True)
"""


def measure(name: str, args: list[str], cwd: Path, runs: int, top: int) -> None:
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu, _ = _run(["-m", "dowse", *args], cwd)
        walls.append(wall)
        cpus.append(cpu)
    print(
        f"{name:<12} wall median {statistics.median(walls):.3f} s "
        f"(min {min(walls):.3f}, max {max(walls):.3f}), "
        f"CPU median {statistics.median(cpus):.3f} s (min {min(cpus):.3f}), {runs} runs"
    )
    _, _, stderr = _run(["-c", _HEAVY_PROBE.format(heavy=HEAVY, args=args)], cwd)
    print("    " + next(x for x in stderr.splitlines()[::-1] if x.startswith("heavy:")))
    print(f"    git processes: {git_processes(args, cwd)}")
    _, _, stderr = _run(["-X", "importtime", "-m", "dowse", *args], cwd)
    for cumulative, own, module in _imports(stderr, top):
        print(f"    {cumulative / 1e3:8.1f} ms cumulative {own / 1e3:7.1f} ms self  {module}")


_GIT_LOGGER = """#!/bin/sh
echo "$*" >> {log}
exec {git} "$@"
"""


def git_processes(args: list[str], cwd: Path) -> int:
    """How many git processes one `dowse <args>` runs."""
    real = shutil.which("git")
    if real is None:
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log"
        log.touch()
        shim = Path(tmp) / "bin" / "git"
        shim.parent.mkdir()
        shim.write_text(_GIT_LOGGER.format(log=log, git=real))
        shim.chmod(0o755)
        env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        _run(["-m", "dowse", *args], cwd, env)
        return len(log.read_text().splitlines())


_SERVE_CLIENT = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "cold_start", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def _serve_once(root: Path) -> tuple[float, float, float]:
    """(s to the initialize answer, s to the tools/list answer, CPU s) of one `dowse serve`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dowse", "serve", "--no-embed", "--quiet", str(root)],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    answered = []
    for message in _SERVE_CLIENT:
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        if "id" not in message:
            continue
        while True:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit(f"dowse serve ended before answering {message['method']}")
            if json.loads(line).get("id") == message["id"]:
                break
        answered.append(time.perf_counter() - start)
    proc.stdin.close()
    proc.wait(timeout=60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return answered[0], answered[1], cpu


def measure_serve(root: Path, runs: int, top: int) -> None:
    if not (root / ".dowse" / "manifest.json").is_file():
        _run(["-m", "dowse", "index", str(root), "--no-embed", "--quiet"], root)
    _serve_once(root)  # bytecode and page caches
    times = [_serve_once(root) for _ in range(runs)]
    init, listed, cpu = (sorted(column) for column in zip(*times, strict=True))
    print(
        f"{'serve':<12} initialize answered: median {statistics.median(init):.3f} s "
        f"(min {init[0]:.3f}, max {init[-1]:.3f}); tools/list answered: median "
        f"{statistics.median(listed):.3f} s (min {listed[0]:.3f}, max {listed[-1]:.3f}); "
        f"CPU median {statistics.median(cpu):.3f} s, {runs} runs"
    )
    # The imports up to the answers: a server whose stdin is closed at once.
    _, _, stderr = _run(
        ["-X", "importtime", "-m", "dowse", "serve", "--no-embed", "--quiet", str(root)], root
    )
    for cumulative, own, module in _imports(stderr, top):
        print(f"    {cumulative / 1e3:8.1f} ms cumulative {own / 1e3:7.1f} ms self  {module}")


_EMBED = """
import time
t0 = time.perf_counter()
from dowse.indexer.onnx_embed import OnnxEmbedder
e = OnnxEmbedder()
t1 = time.perf_counter()
e.embed_queries([{question!r}])
t2 = time.perf_counter()
e.embed_queries([{question!r}])
t3 = time.perf_counter()
print(f"{{t1 - t0:.3f}} {{t2 - t1:.3f}} {{t3 - t2:.3f}}")
"""


def embedding_share(question: str, runs: int) -> None:
    firsts, imports, warms = [], [], []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", _EMBED.format(question=question)],
            capture_output=True,
            text=True,
            check=True,
        )
        imported, first, warm = (float(x) for x in done.stdout.split())
        imports.append(imported)
        firsts.append(first)
        warms.append(warm)
    print(
        f"query embedding: import {statistics.median(imports):.3f} s, first vector (graph and "
        f"tokenizer load) {statistics.median(firsts):.3f} s (min {min(firsts):.3f}), "
        f"warm {statistics.median(warms) * 1e3:.1f} ms, {runs} runs"
    )


def _settle(root: Path) -> None:
    """No-op runs until one leaves the record the next answers from (`noop.IDLE`): a run
    that committed leaves the record the next no-op run answers from without opening
    the index, which writes `IDLE`. A file changed less than two seconds before a run is
    read again by the next (`indexer.walked.RACY_NS`), so the runs are a second apart."""
    from dowse.indexer.noop import IDLE

    index = root / ".dowse"
    for _ in range(5):
        if (index / IDLE).is_file():
            return
        _run(["-m", "dowse", "index", str(root), "--quiet"], root)
        time.sleep(1)
    if not (index / IDLE).is_file():
        print("no no-op record was written: the no-op figures below open the index")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ask-root", type=Path, help="an indexed repository (django-sized)")
    parser.add_argument("--ask-index-dir", type=Path, help="its index, when not at ROOT/.dowse")
    parser.add_argument("--noop-root", type=Path, help="a small repository")
    parser.add_argument("--serve-root", type=Path, help="a repository to serve over MCP")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--question", default="where are expired sessions deleted?")
    opts = parser.parse_args()
    here = Path.cwd()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()}")
    measure("--help", ["--help"], here, opts.runs, opts.top)
    if opts.noop_root:
        root = opts.noop_root.resolve()
        if not (root / ".dowse" / "manifest.json").is_file():
            _run(["-m", "dowse", "index", str(root), "--quiet"], root)
        _settle(root)
        measure("index no-op", ["index", str(root), "--quiet"], root, opts.runs, opts.top)
    if opts.ask_root:
        root = opts.ask_root.resolve()
        args = ["ask", opts.question, "--path", str(root)]
        if opts.ask_index_dir:
            args += ["--index-dir", str(opts.ask_index_dir.resolve())]
        measure("ask agent", [*args, "--format", "agent"], root, opts.runs, opts.top)
        measure("ask", args, root, opts.runs, opts.top)
        embedding_share(opts.question, opts.runs)
    if opts.serve_root:
        measure_serve(opts.serve_root.resolve(), opts.runs, opts.top)
    print(f"load at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
