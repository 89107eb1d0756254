"""Embedding backends compared on real code: throughput, agreement, latency, cold start.

    python benchmarks/embedders.py [PATH ...] [--chunks 500] [--seq 256 128]

PATH are directories (or files) whose .py files are cut into chunks of 30-60 lines;
by default the installed `click` and `rich` packages. Rows:

- sentence-transformers: the reference ("minilm", torch fp32).
- onnx int8 (shipped): `indexer.onnx_embed.OnnxEmbedder` ("minilm-onnx") as exported.
- onnx int8 (recipe): every MatMul and Attention quantised, the plain recipe of
  shared/DEPENDENCIES.md, built here from the cached fp32 graph for comparison.

The report (markdown) goes to stdout, progress to stderr. The machine may be shared:
the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent

from dowse.indexer.embed import SentenceTransformerEmbedder  # noqa: E402
from dowse.indexer.onnx_embed import OnnxEmbedder, OnnxModels, export_models  # noqa: E402

QUERY = "where are expired session tokens rejected?"


def default_paths() -> list[Path]:
    paths: list[Path] = []
    for name in ("click", "rich"):
        spec = importlib.util.find_spec(name)
        if spec and spec.submodule_search_locations:
            paths.extend(Path(p) for p in spec.submodule_search_locations)
    return paths


def code_chunks(paths: Sequence[Path], n: int, lines: tuple[int, int], seed: int) -> list[str]:
    """Consecutive windows of `lines` lines from every .py file, shuffled, the first n."""
    files = sorted({f for p in paths for f in ([p] if p.is_file() else p.rglob("*.py"))})
    rng = random.Random(seed)
    chunks = []
    for file in files:
        text = file.read_text(encoding="utf-8", errors="replace").splitlines()
        start = 0
        while start + lines[0] <= len(text):
            size = rng.randint(*lines)
            chunks.append("\n".join(text[start : start + size]))
            start += size
    rng.shuffle(chunks)
    return chunks[:n]


def recipe_int8(models: OnnxModels, dest: Path) -> OnnxModels:
    """The DEPENDENCIES.md recipe: quantise every MatMul and Attention of the fp32 graph."""
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.disable(logging.WARNING)
    target = dest / "recipe-int8.onnx"
    quantize_dynamic(
        str(models.fp32),
        str(target),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul", "Attention"],
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )
    logging.disable(logging.NOTSET)
    return OnnxModels(int8=target, fp32=models.fp32)


def throughput(
    embed: Callable[[list[str]], np.ndarray], chunks: list[str], batch: int
) -> tuple[float, float, np.ndarray]:
    """Chunks per wall second and per CPU second (all threads), and the vectors."""
    embed(chunks[:8])  # warm up: sessions, thread pools, lazy loading
    wall, cpu = time.perf_counter(), time.process_time()
    parts = [embed(chunks[i : i + batch]) for i in range(0, len(chunks), batch)]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return len(chunks) / wall, len(chunks) / cpu, np.vstack(parts)


def latency_ms(embed: Callable[[list[str]], np.ndarray], runs: int) -> tuple[float, float]:
    embed([QUERY])
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        embed([QUERY])
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))]


COLD = """
import json, sys, time
t0 = time.perf_counter()
from dowse.indexer.{module} import {cls}
t1 = time.perf_counter()
v = {cls}({kwargs}).embed([{query!r}])
t2 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "first_vector": t2 - t1, "dim": int(v.shape[1]),
                  "torch": "torch" in sys.modules}}))
"""


def cold_start(module: str, cls: str, kwargs: str, runs: int) -> list[dict]:
    """Fresh interpreters: wall time from spawn to exit, and the split inside."""
    code = COLD.format(module=module, cls=cls, kwargs=kwargs, query=QUERY)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    results = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", code],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        results.append({"wall": time.perf_counter() - start, **json.loads(proc.stdout)})
    return results


def note(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="directories or files to take .py chunks from "
        "(default: the installed click and rich packages)",
    )
    parser.add_argument("--chunks", type=int, default=500)
    parser.add_argument("--lines", type=int, nargs=2, default=(30, 60), metavar=("MIN", "MAX"))
    parser.add_argument(
        "--seq", type=int, nargs="+", default=[256, 128], help="max_seq_length values to measure"
    )
    parser.add_argument("--batch", type=int, default=32, help="texts per embed() call")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads for torch and onnxruntime (default: their defaults; "
        "1 gives steadier figures on a busy machine)",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="model cache (default: $DOWSE_CACHE_DIR or ~/.cache/dowse)",
    )
    parser.add_argument("--latency-runs", type=int, default=50)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-recipe", action="store_true", help="skip the plain-recipe int8 comparison"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.cache_dir is not None:
        os.environ["DOWSE_CACHE_DIR"] = str(args.cache_dir)  # the cold-start children too

    paths = args.paths or default_paths()
    chunks = code_chunks(paths, args.chunks, tuple(args.lines), args.seed)
    note(f"{len(chunks)} chunks from {', '.join(map(str, paths))}")

    start = time.perf_counter()
    models = export_models(cache_dir=args.cache_dir)
    export_s = time.perf_counter() - start
    scratch = Path(tempfile.mkdtemp(prefix="dowse-bench-"))
    variants: dict[str, OnnxModels] = {"onnx int8 (shipped)": models}
    if not args.no_recipe:
        variants["onnx int8 (recipe)"] = recipe_int8(models, scratch)

    versions = {
        p: importlib.metadata.version(p)
        for p in ("onnxruntime", "torch", "sentence-transformers", "tokenizers")
    }
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    ort_threads = OnnxEmbedder(threads=args.threads).threads

    print("# Embedding backends on real code\n")
    print(f"- command: `{' '.join([Path(sys.executable).name, *sys.argv])}`")
    print(
        f"- {len(chunks)} chunks of {args.lines[0]}-{args.lines[1]} lines from "
        f"{', '.join(p.name for p in paths)}; embed() called with {args.batch} texts"
    )
    print(
        f"- {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start; "
        f"torch threads {torch.get_num_threads()}, onnxruntime intra-op threads "
        f"{ort_threads}"
    )
    print(f"- versions: {', '.join(f'{k} {v}' for k, v in versions.items())}")
    export_note = f"{export_s:.1f} s (done now)" if models.exported else "cached"
    print(
        f"- ONNX export: {export_note}; "
        f"int8 {models.int8.stat().st_size / 1e6:.0f} MB, "
        f"fp32 {models.fp32.stat().st_size / 1e6:.0f} MB\n"
    )

    print("## Throughput and agreement with sentence-transformers\n")
    print(
        "| backend | max_seq | chunks/s | vs torch | chunks/CPU-s | cos min | cos mean "
        "| cos p1 | chunks < 0.99 | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for seq in args.seq:
        note(f"sentence-transformers, max_seq_length {seq}")
        reference = SentenceTransformerEmbedder(max_seq_length=seq)
        ref_rate, ref_cpu, expected = throughput(reference.embed, chunks, args.batch)
        print(
            f"| sentence-transformers | {seq} | {ref_rate:.1f} | 1.00x | {ref_cpu:.1f} "
            f"| - | - | - | - | {os.getloadavg()[0]:.1f} |",
            flush=True,
        )
        for label, variant in variants.items():
            note(f"{label}, max_seq_length {seq}")
            embedder = OnnxEmbedder(max_seq_length=seq, models=variant, threads=args.threads)
            rate, cpu, vectors = throughput(embedder.embed, chunks, args.batch)
            cos = (vectors * expected).sum(axis=1)
            print(
                f"| {label} | {seq} | {rate:.1f} | {rate / ref_rate:.2f}x | {cpu:.1f} "
                f"| {cos.min():.4f} "
                f"| {cos.mean():.4f} | {np.percentile(cos, 1):.4f} "
                f"| {int((cos < 0.99).sum())}/{len(cos)} | {os.getloadavg()[0]:.1f} |",
                flush=True,
            )

    note("single-query latency")
    print(f"\n## One short query ({QUERY!r}), warm, {args.latency_runs} runs\n")
    print("| backend | median ms | p90 ms |")
    print("|---|---|---|")
    for label, embed in (
        ("sentence-transformers", SentenceTransformerEmbedder().embed),
        ("onnx (shipped)", OnnxEmbedder(models=models, threads=args.threads).embed),
    ):
        median, p90 = latency_ms(embed, args.latency_runs)
        print(f"| {label} | {median:.2f} | {p90:.2f} |", flush=True)

    note("cold processes")
    print(
        f"\n## Cold process to the first query vector ({args.cold_runs} runs, "
        "graphs already exported)\n"
    )
    print(
        "| backend | wall, spawn to exit (min / median) | import | first embed() | torch imported |"
    )
    print("|---|---|---|---|---|")
    for label, module, cls in (
        ("onnx (shipped)", "onnx_embed", "OnnxEmbedder"),
        ("sentence-transformers", "embed", "SentenceTransformerEmbedder"),
    ):
        runs = cold_start(module, cls, "", args.cold_runs)
        walls = [r["wall"] for r in runs]
        best = min(runs, key=lambda r: r["wall"])
        print(
            f"| {label} | {min(walls):.2f} s / {statistics.median(walls):.2f} s "
            f"| {best['import']:.2f} s | {best['first_vector']:.2f} s | {best['torch']} |",
            flush=True,
        )
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
