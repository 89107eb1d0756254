"""A small tree's index runs: their CPU, and the LanceDB calls they wait on.

Usage:
    python benchmarks/small_build.py --work DIR [--repo PATH] [--embed none|files]
        [--rounds 5] [--json] [--calls]
    python benchmarks/small_build.py --grammars

The tree at PATH (default: fixtures/example) is copied to DIR/tree and indexed
in-process, `--rounds` times over: a fresh build (no index), a run after a one-line edit
of one file (the largest Python file, or the first file), and a run with nothing to do
after `touch` of that file (its stat changed, its content not: the run opens the index,
reads the file and writes nothing but its stat), then one with nothing changed. Each
run's process CPU (LanceDB's threads included) and wall are recorded. With `--embed
files` the runs embed file summaries and definitions with a deterministic hash embedder
(no model: what the test suite's runs write), with `none` nothing.

Every call into LanceDB's Python layer waits on its background event loop
(`lancedb.background_loop.LOOP.run`); each wait is counted by the coroutine it ran
(`AsyncTable.add`, `AsyncTable.optimize`, `AsyncConnection.open_table`, ...), and each
of dowse's own calls into the native core (`indexer.lance_read`) by the method that made
it (`native scan`, ...), with its wall time and the process CPU meanwhile. `--calls`
prints them per run kind, median over the rounds.

`--grammars` prints instead what a process pays once per language it parses: the CPU of
loading each grammar and compiling its tree-sitter query (`indexer.parse._grammar`).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import re
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from lancedb import background_loop

from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.embed import get_embedder

_calls: list[tuple[str, float, float]] = []
_run = background_loop.LOOP.run


def _counted(future: Any) -> Any:
    name = getattr(future, "__qualname__", type(future).__name__)
    start, cpu = time.perf_counter(), time.process_time()
    try:
        return _run(future)
    finally:
        _calls.append((name, time.perf_counter() - start, time.process_time() - cpu))


background_loop.LOOP.run = _counted  # type: ignore[method-assign]

try:  # dowse's own reads through LanceDB's native core, on a loop of its own
    from dowse.indexer import lance_read

    _native_run = lance_read._LOOP.run

    def _native_counted(call: Any) -> Any:
        name = "native " + sys._getframe(1).f_code.co_name
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return _native_run(call)
        finally:
            _calls.append((name, time.perf_counter() - start, time.process_time() - cpu))

    lance_read._LOOP.run = _native_counted  # type: ignore[method-assign]
except ImportError:  # a dowse without it
    pass


class HashEmbedder:
    """Deterministic 384-d vectors from hashed words: an embedder that costs no model."""

    name = "hash"
    dim = 384

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text):
                h = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, int.from_bytes(h, "big") % self.dim] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
            else:
                out[row, 0] = 1.0
        return out


def _edited(tree: Path) -> Path:
    files = sorted(p for p in tree.rglob("*") if p.is_file() and ".dowse" not in p.parts)
    python = [p for p in files if p.suffix == ".py"]
    return max(python, key=lambda p: p.stat().st_size) if python else files[0]


def _timed(tree: Path, config: IndexConfig, embedder: Any) -> dict[str, Any]:
    _calls.clear()
    cpu, wall = time.process_time(), time.perf_counter()
    stats = build_index(tree, config=config, embedder=embedder)
    kinds: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    for name, seconds, used in _calls:
        kinds[name].append((seconds, used))
    return {
        "cpu": time.process_time() - cpu,
        "wall": time.perf_counter() - wall,
        "parsed": stats.parsed,
        "calls": {
            k: [len(v), sum(s for s, _ in v), sum(c for _, c in v)] for k, v in kinds.items()
        },
    }


def run(repo: Path, work: Path, embed: str, rounds: int) -> dict[str, list[dict[str, Any]]]:
    config = IndexConfig(embed=embed != "none", embed_chunks=False, history=False)
    embedder = HashEmbedder() if embed != "none" else get_embedder()
    tree = work / "tree"
    out: dict[str, list[dict[str, Any]]] = {"fresh": [], "edit": [], "touch": [], "noop": []}
    for _ in range(rounds):
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(repo, tree, ignore=shutil.ignore_patterns(".dowse", ".git"))
        out["fresh"].append(_timed(tree, config, embedder))
        edited = _edited(tree)
        with open(edited, "a") as fh:
            fh.write("\n# an edit\n")
        os.utime(edited, ns=(time.time_ns() - 10**10,) * 2)  # safely old: not racy
        out["edit"].append(_timed(tree, config, embedder))
        os.utime(edited, ns=(time.time_ns() - 5 * 10**9,) * 2)
        out["touch"].append(_timed(tree, config, embedder))
        out["noop"].append(_timed(tree, config, embedder))
    return out


def grammars() -> None:
    from dowse.indexer import parse

    print(f"{'language':<12} {'grammar and query':>18} {'patterns':>9}")
    for language in sorted(parse.CODE_LANGUAGES):
        start = time.process_time()
        grammar = parse._grammar.__wrapped__(language)
        used = time.process_time() - start
        print(f"{language:<12} {used * 1000:>15.1f} ms {grammar.query.pattern_count:>9}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=Path(__file__).parent.parent / "fixtures/example")
    ap.add_argument("--work", type=Path)
    ap.add_argument("--embed", choices=("none", "files"), default="none")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--calls", action="store_true", help="the LanceDB calls per run kind")
    ap.add_argument("--grammars", action="store_true", help="each grammar's load and query")
    args = ap.parse_args()
    if args.grammars:
        grammars()
        return
    if args.work is None:
        ap.error("--work is required")
    os.environ.setdefault("DOWSE_CACHE_DIR", str(args.work / "cache"))
    result = run(args.repo.resolve(), args.work.resolve(), args.embed, args.rounds)
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{'run':<6} {'CPU median':>10} {'CPU min':>8} {'wall median':>11} {'calls':>6}"
        f" {'waited':>8} {'their CPU':>9}"
    )
    for kind, runs in result.items():
        calls = [sum(c[0] for c in r["calls"].values()) for r in runs]
        waited = [sum(c[1] for c in r["calls"].values()) for r in runs]
        used = [sum(c[2] for c in r["calls"].values()) for r in runs]
        print(
            f"{kind:<6} {statistics.median(r['cpu'] for r in runs):>9.3f}s"
            f" {min(r['cpu'] for r in runs):>7.3f}s"
            f" {statistics.median(r['wall'] for r in runs):>10.3f}s"
            f" {statistics.median(calls):>6.0f} {statistics.median(waited):>7.3f}s"
            f" {statistics.median(used):>7.3f}s"
        )
    if args.calls:
        for kind, runs in result.items():
            print(f"\n{kind}: LanceDB call, count, wall waited, CPU (medians over the rounds)")
            names = sorted({n for r in runs for n in r["calls"]})
            rows = [
                (
                    n,
                    *(
                        statistics.median(r["calls"].get(n, [0, 0, 0])[i] for r in runs)
                        for i in range(3)
                    ),
                )
                for n in names
            ]
            for n, count, seconds, used in sorted(rows, key=lambda r: -r[3]):
                print(f"  {n:<44} {count:>5.0f} {seconds * 1000:>8.1f} ms {used * 1000:>7.1f} ms")


if __name__ == "__main__":
    main()
