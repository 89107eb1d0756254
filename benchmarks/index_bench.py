"""Index benchmark: cold, no-op, one-file edit, and another commit, on any repository.

Usage (a directory as it is):
    python benchmarks/index_bench.py --repo PATH [--embed all|files|none] [--embedder NAME]

Usage (a git clone at given commits, bare or not; the tree is written from the clone's
objects by `retrieval.gittree.sync_tree`, the clone is never written):
    python benchmarks/index_bench.py --git-dir CLONE --commit SHA [--commit2 SHA2] \
        --work /tmp/dowse-bench [--embedder NAME] [--embed all|files|none]

Prints files, symbols, chunks, wall time split into walk/parse/write/embed, chunks/s,
peak RSS, and index size versus source size; then a no-op re-index, a one-file edit and
(with --commit2) a checkout of another commit. Each step is timed in-process around
`build_index`, so start-up cost is excluded; `--json` prints the table as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from dowse.evaluation.gittree import STATE_FILE, git_dir_of, sync_tree  # noqa: E402
from dowse.indexer.build import (  # noqa: E402
    DEFAULT_EMBED_SCOPE,
    EMBED_SCOPES,
    IndexConfig,
    IndexStats,
    build_index,
    embed_flags,
)
from dowse.indexer.embed import get_embedder  # noqa: E402


def dir_size(path: Path, *, skip: str | None = None) -> int:
    total = 0
    for dirpath, dirnames, files in os.walk(path):
        if skip and skip in dirnames:
            dirnames.remove(skip)
        total += sum(
            os.path.getsize(os.path.join(dirpath, f))
            for f in files
            if os.path.isfile(os.path.join(dirpath, f))
        )
    return total


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def step(name: str, root: Path, cfg: IndexConfig, embedder) -> dict:
    t = time.perf_counter()
    stats: IndexStats = build_index(root, config=cfg, embedder=embedder)
    wall = time.perf_counter() - t
    row = {
        "step": name,
        "wall_s": round(wall, 2),
        **stats.seconds,
        "files": stats.files,
        "parsed": stats.parsed,
        "symbols": stats.symbols,
        "chunks": stats.chunks,
        "embedded": stats.embedded,
        "reused": stats.reused_vectors,
        "peak_rss_mb": round(peak_rss_mb()),
        "index_mb": round(dir_size(root / ".dowse") / 1e6, 1),
    }
    if stats.embedded and stats.seconds.get("embed"):
        row["chunks_per_s"] = round(stats.embedded / stats.seconds["embed"], 1)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--repo", type=Path, help="a directory to index as it is")
    src.add_argument("--git-dir", type=Path, help="a git clone (bare or not)")
    ap.add_argument("--commit", help="commit to index (with --git-dir)")
    ap.add_argument("--commit2", help="a second commit, indexed incrementally after the first")
    ap.add_argument("--work", type=Path, help="where trees are materialized")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--no-embed", action="store_true", help="same as --embed none")
    ap.add_argument(
        "--embed",
        choices=EMBED_SCOPES,
        default=DEFAULT_EMBED_SCOPE,
        help="what gets vectors, as `dowse index --embed`",
    )
    ap.add_argument(
        "--lexical-first",
        action="store_true",
        help="time a --no-embed cold index first, then the embeddings",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="dowse-bench-"))
    if args.git_dir:
        if not args.commit:
            ap.error("--commit is required with --git-dir")
        git_dir = git_dir_of(args.git_dir)
        root = work / "tree"
        shutil.rmtree(root, ignore_errors=True)  # a cold tree: sync writes every file
        (work / STATE_FILE).unlink(missing_ok=True)
        first = sync_tree(git_dir, args.commit, root)
    else:
        root = args.repo.resolve()
    shutil.rmtree(root / ".dowse", ignore_errors=True)
    # A fresh embedding cache: the cold run really embeds everything.
    embedder = get_embedder(args.embedder)
    rows = []
    scope = "none" if args.no_embed else args.embed
    embed, embed_chunks = embed_flags(scope)
    cfg = IndexConfig(embed=embed, embed_chunks=embed_chunks)
    if args.lexical_first:
        rows.append(
            step("cold, lexical + symbols (--embed none)", root, IndexConfig(embed=False), embedder)
        )
        if cfg.embed:
            rows.append(step(f"then embeddings (--embed {scope})", root, cfg, embedder))
    else:
        rows.append(step(f"cold (--embed {scope})", root, cfg, embedder))
    rows.append(step("no-op re-index", root, cfg, embedder))
    target = next(
        p for p in sorted(root.rglob("*.py")) if p.stat().st_size > 2000 and ".dowse" not in p.parts
    )
    original = target.read_text()
    target.write_text(original + "\n\ndef _bench_added(x):\n    return x * 2\n")
    rows.append(step(f"one-file edit ({target.relative_to(root)})", root, cfg, embedder))
    if args.commit2:
        target.write_text(original)  # sync_tree trusts its record of what it wrote
        second = sync_tree(git_dir, args.commit2, root)
        n = sum(first.get(p) != second.get(p) for p in first.keys() | second.keys())
        rows.append(step(f"checkout {args.commit2[:10]} ({n} files differ)", root, cfg, embedder))
    source = dir_size(root, skip=".dowse")
    index = dir_size(root / ".dowse")
    summary = {
        "root": str(root),
        "source_mb": round(source / 1e6, 1),
        "index_mb": round(index / 1e6, 1),
        "index_to_source": round(index / source, 2),
        "embedder": args.embedder,
        "rows": rows,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    keys = [
        "step",
        "wall_s",
        "walk",
        "parse",
        "write",
        "embed",
        "files",
        "parsed",
        "symbols",
        "chunks",
        "embedded",
        "reused",
        "chunks_per_s",
        "peak_rss_mb",
        "index_mb",
    ]
    print(" | ".join(keys))
    print(" | ".join("---" for _ in keys))
    for r in rows:
        print(" | ".join(str(r.get(k, "")) for k in keys))
    print(
        f"\nsource {summary['source_mb']} MB, index {summary['index_mb']} MB "
        f"({summary['index_to_source']}x), embedder {args.embedder}"
    )


if __name__ == "__main__":
    main()
