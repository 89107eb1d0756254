"""What a searcher's held rows cost: per table, the rows and Arrow bytes held, and the CPU
and resident memory that reading them and building their keys take (`IndexLookups.warm`,
step by step).

Usage:
    python benchmarks/held_rows.py --index-root PATH [--index-dir DIR] [--hold-rows N]
        [--narrow-rows N]

`--hold-rows N` holds every table up to N rows (`memory_rows`, default `MEMORY_ROWS`);
`--narrow-rows N` the tables without text up to N rows each (`narrow_rows`; default as a
one-shot query's searcher, `memory_rows`; `NARROW_ROWS` is a server's). Resident memory
is read from /proc/self/status after each step.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from dowse.indexer.store import Store
from dowse.retrieval.lookups import HELD_COLUMNS, KEYED, MEMORY_ROWS, IndexLookups


def _rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index-root", type=Path, required=True)
    ap.add_argument("--index-dir", type=Path, help="the index, when not at INDEX_ROOT/.dowse")
    ap.add_argument("--hold-rows", type=int, default=MEMORY_ROWS, metavar="N")
    ap.add_argument("--narrow-rows", type=int, default=None, metavar="N")
    args = ap.parse_args()
    store = Store.open(args.index_dir or args.index_root / ".dowse")
    lookups = IndexLookups(store, memory_rows=args.hold_rows, narrow_rows=args.narrow_rows)
    lookups.file_stats()
    start_rss, start_cpu = _rss_mb(), time.process_time()
    print(f"after the file list: RSS {start_rss:.0f} MB")
    print("step | rows | Arrow MB | CPU s | RSS MB")
    print("--- | --- | --- | --- | ---")
    for table in HELD_COLUMNS:
        cpu = time.process_time()
        data = lookups.held(table)
        rows, size = ("not held", "") if data is None else (data.num_rows, data.nbytes / 1e6)
        size = f"{size:.1f}" if size != "" else ""
        print(f"read {table} | {rows} | {size} | {time.process_time() - cpu:.2f} | {_rss_mb():.0f}")
    for table, column in KEYED:
        if lookups.held(table) is None:
            continue
        cpu = time.process_time()
        lookups._positions_of(table, column)
        print(f"keys {table}.{column} | | | {time.process_time() - cpu:.2f} | {_rss_mb():.0f}")
    print(
        f"total: CPU {time.process_time() - start_cpu:.2f} s, RSS +{_rss_mb() - start_rss:.0f} MB"
    )


if __name__ == "__main__":
    main()
