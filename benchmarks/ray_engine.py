"""The Ray engine's throughput beside the local engine's, on one directory.

Usage:
    python benchmarks/ray_engine.py PATH [--embed none|files|all] [--embedder NAME]
        [--address ADDRESS] [--embedders N] [--json]

Indexes PATH from scratch twice, into two temporary index directories: with the local
engine (this machine's parser processes, the embedder in this process), then with the
Ray engine (a local Ray started first, or the cluster at --address). Prints, for each:
files parsed, the wall time of `build_index` split into parse (read, parse, chunk,
summarise) and embed, files/s of the parse stage and of the whole run, and texts/s of
the embedding; for Ray also the seconds its start took (not in the run's wall time).
Then checks that both indexes hold the same rows (files, symbols, chunks, vectors).
"""

from __future__ import annotations

import argparse
import functools
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from dowse.indexer.build import IndexConfig, build_index, embed_flags
from dowse.indexer.embed import DEFAULT_EMBEDDER, get_embedder
from dowse.indexer.engine import Engine, LocalEngine, load_engine
from dowse.indexer.engine_ray import RayEngine
from dowse.indexer.store import Store

KEYS = {"files": "path", "symbols": "id", "chunks": "id", "vectors": "id", "file_vectors": "id"}


def _run(root: Path, index_dir: Path, cfg: IndexConfig, embedder: str, engine: Engine) -> dict:
    t = time.perf_counter()
    stats = build_index(
        root, index_dir=index_dir, config=cfg, embedder=get_embedder(embedder), engine=engine
    )
    wall = time.perf_counter() - t
    parse = stats.seconds["parse"]
    embed = stats.seconds["embed"]
    return {
        "engine": engine.name,
        "files": stats.files,
        "parsed": stats.parsed,
        "symbols": stats.symbols,
        "chunks": stats.chunks,
        "embedded": stats.embedded,
        "wall_s": round(wall, 2),
        "parse_s": parse,
        "embed_s": embed,
        "parse_files_per_s": round(stats.parsed / parse, 1) if parse else None,
        "files_per_s": round(stats.parsed / wall, 1),
        "embed_texts_per_s": round(stats.embedded / embed, 1) if embed else None,
    }


def _rows(index_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each table's rows without their vectors (by key), and the vectors by id."""
    store = Store.open(index_dir)
    out, vectors = {}, {}
    for name, key in KEYS.items():
        rows = store.rows(name)
        for r in rows:
            r.pop("mtime_ns", None)
            if "vector" in r:
                vectors[(name, r["id"])] = np.asarray(r.pop("vector"), dtype=np.float32)
        out[name] = sorted(rows, key=lambda r, k=key: r[k])  # type: ignore[misc]
    return out, vectors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", type=Path)
    ap.add_argument("--embed", choices=["none", "files", "all"], default="none")
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    ap.add_argument("--address", default=None, help="a Ray cluster (default: a local Ray)")
    ap.add_argument("--embedders", type=int, default=2, help="embedder actors at most")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    root = args.path.resolve()
    embed, embed_chunks = embed_flags(args.embed)
    cfg = IndexConfig(embed=embed, embed_chunks=embed_chunks, history=False)
    rows = []
    with tempfile.TemporaryDirectory(prefix="dowse-ray-bench-") as tmp:
        rows.append(_run(root, Path(tmp) / "local", cfg, args.embedder, LocalEngine()))
        engine = load_engine(
            "ray",
            embedder=functools.partial(get_embedder, args.embedder),
            address=args.address,
            embedders=args.embedders,
        )
        assert isinstance(engine, RayEngine)
        with engine:
            t = time.perf_counter()
            engine._connect()  # the start of Ray, timed apart from the run
            start = time.perf_counter() - t
            rows.append(
                {**_run(root, Path(tmp) / "ray", cfg, args.embedder, engine), "start_s": start}
            )
        (a, va), (b, vb) = _rows(Path(tmp) / "local"), _rows(Path(tmp) / "ray")
        same = {name: a[name] == b[name] for name in KEYS}
        # A batch of other texts pads differently: vectors may differ in the last digits.
        gap = max((float(np.abs(va[k] - vb[k]).max()) for k in va if k in vb), default=0.0)
    report = {
        "path": str(root),
        "embed": args.embed,
        "runs": rows,
        "same_rows": same,
        "max_vector_diff": gap,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{root} (--embed {args.embed})")
    cols = ["engine", "parsed", "wall_s", "parse_s", "embed_s", "parse_files_per_s"]
    cols += ["files_per_s", "embed_texts_per_s", "start_s"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r.get(c, "")) for c in cols))
    print("same rows:", ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in same.items()))
    print(f"largest difference of a vector component: {gap:.2g}")


if __name__ == "__main__":
    main()
