"""Measure the within-file part ranking (`file_parts.best_parts`) on the files real fixes change.

Usage:
    python benchmarks/part_ranking.py --dataset DEV.jsonl --repos CLONES --work DIR
        [--repo OWNER/NAME] [--instances ID,...] [--limit N] [--out PARTS.jsonl]
        [--ablate]

`ask` shows the best part of each of its first files and the first file's next parts;
whether the changed lines reach the context is first of all whether the part that holds
them ranks near the top of its file. This isolates that ranking from the file ranking
and the packing: for each instance, its repository is synced and indexed as `dowse eval
swebench` does (the same work directory layout, so an eval's `--work` is reused), the
loop runs on the issue text as `ask` runs it, and each file the fix changes (whatever its
place among the files) has its parts ranked as `ask` ranks them, with the loop's
evaluations, and without the parts another one's printed lines hold, as `ask` offers
them (`file_parts.distinct_parts`). A hunk of `gold_lines` is shown by a part when the
lines `ask` would print for it (`file_parts.printed_lines`: its chunk, widened to its
definition when that is shorter than `WHOLE_DEFINITION_LINES`) hold the whole hunk; its
place is the first such part's.

Printed: hunks, the share whose part is first, in the first 3 and 6, the mean reciprocal
place, and the share no ranked part shows. `--ablate` repeats the ranking with each of
`file_parts.RANKINGS` left out. `--out` writes one line per instance: each gold file's
hunks with their places and the first parts with the rankings that placed them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dowse.errors import EvalError
from dowse.evaluation.swebench import load_dataset, prepared_runs, select_instances
from dowse.indexer.embed import get_embedder
from dowse.retrieval.ask import Packing, definitions_of, evaluated_parts
from dowse.retrieval.file_parts import (
    RANKINGS,
    Part,
    best_parts,
    distinct_parts,
    printed_lines,
)
from dowse.retrieval.loop import run_loop

SHOWN = 6
"""The first parts of each gold file written to `--out`."""


def _places(
    ranked: Sequence[Part], symbols: Sequence[dict[str, Any]], hunks: Sequence[Sequence[int]]
) -> list[int | None]:
    """For each hunk, the 1-based place of the first part that shows it whole."""
    spans = [printed_lines(p.row, symbols) for p in ranked]
    return [
        next((n for n, (lo, hi) in enumerate(spans, 1) if lo <= a and b <= hi), None)
        for a, b in hunks
    ]


def _summary(places: Sequence[int | None]) -> str:
    n = len(places)
    if not n:
        return "no hunks"

    def share(k: int) -> float:
        return 100 * sum(p is not None and p <= k for p in places) / n

    mrr = sum(1 / p for p in places if p is not None) / n
    missing = 100 * sum(p is None for p in places) / n
    return (
        f"hunks {n}  @1 {share(1):.1f}  @3 {share(3):.1f}  @6 {share(6):.1f}  "
        f"MRR {mrr:.3f}  unranked {missing:.1f}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--repo")
    ap.add_argument("--instances", default="")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--ablate", action="store_true")
    args = ap.parse_args(argv)
    try:
        chosen = select_instances(
            [i for i in load_dataset(args.dataset) if i.gold_lines],
            instances=[i for i in args.instances.split(",") if i],
            repo=args.repo,
            limit=args.limit,
            source=args.dataset,
        )
    except EvalError as e:
        raise SystemExit(f"part_ranking: {e}") from None
    variants: dict[str, frozenset[str]] = {"all": RANKINGS}
    if args.ablate:
        variants |= {f"-{name}": RANKINGS - {name} for name in sorted(RANKINGS)}
    places: dict[str, list[int | None]] = {v: [] for v in variants}
    out = args.out.open("w", encoding="utf-8") if args.out else None
    runs = prepared_runs(chosen, args.repos, args.work, embedder=get_embedder(), budget=4000)
    for inst, run, _ in runs:
        searcher = run.searcher
        result = run_loop(searcher, inst.problem_statement)
        evaluated = evaluated_parts(
            [it for it in result.items if it.relevance >= Packing().min_relevance]
        )
        paths = sorted(inst.gold_lines)
        symbols = definitions_of(searcher, paths)
        record: dict[str, Any] = {"instance_id": inst.instance_id, "files": {}}
        for name, rankings in variants.items():
            ranked = best_parts(
                searcher,
                result.analysis,
                paths,
                evaluated=evaluated,
                symbols=symbols,
                rankings=rankings,
            )
            for path in paths:
                mine = distinct_parts(ranked.get(path, []), symbols.get(path, []))
                found = _places(mine, symbols.get(path, []), inst.gold_lines[path])
                places[name] += found
                if name == "all":
                    record["files"][path] = {
                        "hunks": inst.gold_lines[path],
                        "places": found,
                        "parts": [
                            [
                                *printed_lines(p.row, symbols.get(path, [])),
                                round(p.score, 3),
                                p.why,
                            ]
                            for p in mine[:SHOWN]
                        ],
                    }
        if out is not None:
            out.write(json.dumps(record) + "\n")
            out.flush()
        print(inst.instance_id, file=sys.stderr, flush=True)
    if out is not None:
        out.close()
    for name in variants:
        print(f"{name:12} {_summary(places[name])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
