"""A filtered scan of a table with and without a scalar (BTree) index, by table size.

Usage:
    python benchmarks/scalar_index.py [--sizes 1000 5000 10000 20000 50000 100000]
        [--queries 30]

For each size, a chunks-like table (path, id, 400 characters of text; 8 rows a path) is
written twice in a temporary directory, once without indexes and once with BTree indexes
on `path` and `id` (the CPU of making them is printed), and read through the native
reader dowse's queries use (`indexer.lance_read`): `--queries` scans for the rows of 5
random paths each, the median CPU of one printed. Where the index stops paying for
itself is `Batches.scalar_index_min_rows`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import lancedb
import pyarrow as pa
from lancedb.index import BTree

from dowse.indexer.lance_read import NativeDb


def measure(size: int, queries: int, rng: random.Random) -> dict[str, tuple[float, float]]:
    paths = [f"pkg/mod{i // 8}/file{i // 8}.py" for i in range(size)]
    data = pa.table(
        {"path": paths, "id": [f"{p}:{i}" for i, p in enumerate(paths)], "text": ["x" * 400] * size}
    )
    out: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = lancedb.connect(tmp)
        for name, indexed in (("plain", False), ("btree", True)):
            table = db.create_table(name, data)
            start = time.process_time()
            if indexed:
                table.create_index("path", config=BTree())
                table.create_index("id", config=BTree())
            made = time.process_time() - start
            native = NativeDb(Path(tmp)).open_table(name)
            times = []
            for _ in range(queries):
                chosen = rng.sample(paths, 5)
                where = "path IN (" + ", ".join(f"'{p}'" for p in chosen) + ")"
                start = time.process_time()
                native.scan(["id", "path"], where, None)
                times.append(time.process_time() - start)
            out[name] = (made, statistics.median(times))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--sizes", type=int, nargs="+", default=[1000, 5000, 10000, 20000, 50000, 100000]
    )
    ap.add_argument("--queries", type=int, default=30)
    args = ap.parse_args()
    rng = random.Random(1)
    print(f"{'rows':>7} {'scan, no index':>15} {'scan, BTree':>12} {'making the BTrees':>18}")
    for size in args.sizes:
        r = measure(size, args.queries, rng)
        print(
            f"{size:>7} {r['plain'][1] * 1000:>12.2f} ms {r['btree'][1] * 1000:>9.2f} ms"
            f" {r['btree'][0] * 1000:>15.1f} ms"
        )


if __name__ == "__main__":
    main()
