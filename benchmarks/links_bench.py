"""CPU and output of following references (`retrieval.references.links_of`), as the
retrieval loop follows them: a few definitions at a time.

Takes a sample of an index's functions, methods and classes, in pairs (the loop follows
`RefineLimits.followed`, 2, high hits a cycle), each pair once by qualified name and once
as bare spans (a chunk that names no definition), and follows their links with and
without a searcher's held rows; then `find_references` (`dowse symbol --callers
--callees`) of a quarter of them. Prints the CPU, the refs-table queries and a digest of
every link and reference found: two versions of the code that print the same digest on
an index found the same links and references, in the same order.

    python benchmarks/links_bench.py INDEX_DIR [--sample 400] [--seed 1]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from pathlib import Path

from dowse.indexer.store import Store
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.references import find_references, links_of

KINDS = {"function", "method", "class", "struct", "constructor"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("--sample", type=int, default=400, help="definitions followed")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    store = Store.open(args.index_dir)
    columns = ["path", "start_line", "end_line", "qualified_name", "kind"]
    definitions = sorted(
        (r["path"], r["start_line"], r["end_line"], r["qualified_name"])
        for r in store.rows("symbols", columns)
        if r["kind"] in KINDS
    )
    picked = random.Random(args.seed).sample(definitions, min(args.sample, len(definitions)))
    pairs = [picked[i : i + 2] for i in range(0, len(picked), 2)]
    searcher = HybridSearcher(store, None)
    searcher.warm()
    queries = 0
    rows = store.rows

    def counted(name: str, *a: object, **k: object) -> object:
        nonlocal queries
        queries += name == "refs"
        return rows(name, *a, **k)  # type: ignore[arg-type]

    store.rows = counted  # type: ignore[method-assign,assignment]
    digest = hashlib.sha256()
    for held in (False, True):
        lookups = searcher.lookups if held else None
        queries, links = 0, 0
        start = time.process_time()
        for pair in pairs:
            for named in (True, False):
                spans = [(p, s, e, q if named else None) for p, s, e, q in pair]
                found = links_of(store, spans, limit=3, lookups=lookups)
                links += len(found)
                digest.update(json.dumps([f.model_dump() for f in found]).encode())
        cpu = time.process_time() - start
        print(
            f"{'held rows' if held else 'queries'}: {len(pairs) * 2} calls, {links} links, "
            f"{queries} refs queries, {cpu:.2f} s CPU"
        )
    start = time.process_time()
    names = [name for _, _, _, name in picked[: len(picked) // 4]]
    for name in names:
        digest.update(
            find_references(store, name, lookups=searcher.lookups).model_dump_json().encode()
        )
    print(f"find_references: {len(names)} names, {time.process_time() - start:.2f} s CPU")
    print(
        f"digest {digest.hexdigest()[:16]} ({len(definitions)} definitions, {len(picked)} followed)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
