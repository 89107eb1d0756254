"""What a search's full-text query costs by itself: for each question, the words `search`
asks the chunks' full-text index for (`pool.base_tokens` and `title_tokens`, as
`pool.gather` asks them), timed alone, `--runs` times (the median CPU kept), reading the
chunk columns a search reads when the chunks are not held and reading ids alone.

Usage:
    python benchmarks/full_text_cost.py --index-root PATH --queries FILE.jsonl
        [--limit N] [--runs N] [--k N] [--index-dir DIR]

`--queries`: SWE-bench-style JSONL (`problem_statement`) or `query` per line. Prints
per question the number of words and the two CPU medians (ms, all threads), then their
medians over the questions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from dowse.indexer.store import Store
from dowse.retrieval.lookups import CHUNK_COLUMNS
from dowse.retrieval.query import analyze, base_tokens, title_tokens


def _cpu_ms(store: Store, text: str, columns: list[str], k: int, runs: int) -> float:
    """The median CPU (ms, all threads) of `runs` full-text queries of `text`."""
    spent = []
    for _ in range(runs):
        start = time.process_time()
        store.full_text("chunks", text, columns, k)
        spent.append(time.process_time() - start)
    return statistics.median(spent) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index-root", type=Path, required=True)
    ap.add_argument("--index-dir", type=Path, help="the index, when not at INDEX_ROOT/.dowse")
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--k", type=int, default=60, help="rows asked for (a search's pool: 60)")
    args = ap.parse_args()
    store = Store.open(args.index_dir or args.index_root / ".dowse")
    rows = [json.loads(line) for line in args.queries.read_text().splitlines() if line.strip()]
    questions = [r.get("query") or r["problem_statement"] for r in rows][: args.limit]
    store.full_text("chunks", "warm up", ["id", "_score"], args.k)
    columns, ids = [], []
    print("words | chunk columns, CPU ms | ids, CPU ms")
    print("--- | --- | ---")
    for question in questions:
        analysis = analyze(question)
        words = list(dict.fromkeys(base_tokens(analysis))) + title_tokens(analysis)
        text = " ".join(words)
        columns.append(_cpu_ms(store, text, [*CHUNK_COLUMNS, "_score"], args.k, args.runs))
        ids.append(_cpu_ms(store, text, ["id", "_score"], args.k, args.runs))
        print(f"{len(words)} | {columns[-1]:.1f} | {ids[-1]:.1f}")
    print(f"median | {statistics.median(columns):.1f} | {statistics.median(ids):.1f}")


if __name__ == "__main__":
    main()
