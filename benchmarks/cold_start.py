"""Cold start: the wall and CPU time of fresh `dowse` processes, and what they import.

Usage:
    python benchmarks/cold_start.py --ask-root PATH [--ask-index-dir DIR] [--noop-root PATH]
        [--runs N] [--question TEXT] [--top N]

Each command runs `--runs` times in a new Python process (`python -m dowse ...`, the
`dowse` this interpreter imports): `dowse --help`; a no-op `dowse index` of
`--noop-root` (indexed first, once, if it has no index); `dowse ask --format agent` and
`dowse ask` (markdown) on `--ask-root` (which must be indexed, at `--ask-index-dir` if
the index is elsewhere: django takes minutes, so it is never built here).
Printed per command: wall seconds (median, min, max) and CPU seconds (user + system of
the child and its threads, median), which a machine whose neighbours take the cores
inflates far less than wall time; the heavy packages the process imported; then the
`--top` imports by cumulative time (`python -X importtime`, one more run) and, for
`ask`, the query embedding's share: loading the ONNX graph and the tokenizer and
embedding the question, in a process of its own.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _run(args: list[str], cwd: Path) -> tuple[float, float, str]:
    """(wall s, child CPU s, stderr) of one `python <args>`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, check=False
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
    _, _, stderr = _run(["-X", "importtime", "-m", "dowse", *args], cwd)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ask-root", type=Path, help="an indexed repository (django-sized)")
    parser.add_argument("--ask-index-dir", type=Path, help="its index, when not at ROOT/.dowse")
    parser.add_argument("--noop-root", type=Path, help="a small repository")
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
        _run(["-m", "dowse", "index", str(root), "--quiet"], root)  # a no-op run first
        measure("index no-op", ["index", str(root), "--quiet"], root, opts.runs, opts.top)
    if opts.ask_root:
        root = opts.ask_root.resolve()
        args = ["ask", opts.question, "--path", str(root)]
        if opts.ask_index_dir:
            args += ["--index-dir", str(opts.ask_index_dir.resolve())]
        measure("ask agent", [*args, "--format", "agent"], root, opts.runs, opts.top)
        measure("ask", args, root, opts.runs, opts.top)
        embedding_share(opts.question, opts.runs)
    print(f"load at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
