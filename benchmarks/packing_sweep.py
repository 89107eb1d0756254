"""Measure `ask`'s context packing under other `Packing` settings, one index per instance.

Usage:
    python benchmarks/packing_sweep.py --dataset DEV.jsonl --repos CLONES --work DIR
        --out OUTDIR [--repo OWNER/NAME] [--instances ID,...] [--limit N]
        [--budgets 4000,2000] VARIANT [VARIANT ...]

A VARIANT is `NAME` or `NAME:field=value,field=value` over the fields of
`dowse.retrieval.ask.Packing` (`base` with no fields is the shipped packing). Each
instance's repository is synced and indexed once, as `dowse eval swebench` does (file
vectors; the same work directory layout, so a `--work` of an eval run is reused), and
`ask` then runs once per variant and budget: what the variants change is only how the
same loop's answer is packed. Predictions go to OUTDIR/NAME-BUDGET.jsonl in
`dowse eval swebench`'s format (method `ask`), for `score.py` (line_recall,
hunks_in_context, ...). A rerun skips the instances a file already holds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dowse.errors import EvalError
from dowse.evaluation.swebench import (
    load_dataset,
    prepared_runs,
    select_instances,
    unrecorded,
)
from dowse.indexer.embed import get_embedder
from dowse.retrieval.ask import Packing


def parse_variant(text: str) -> tuple[str, Packing]:
    """`NAME:field=value,...` -> (NAME, the Packing with those fields)."""
    name, _, fields = text.partition(":")
    values: dict[str, Any] = {}
    for pair in filter(None, fields.split(",")):
        key, sep, value = pair.partition("=")
        if not sep or key not in Packing.model_fields:
            raise SystemExit(f"packing_sweep: no Packing field in {pair!r}")
        values[key] = json.loads(value)
    return name, Packing(**values)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True, help="directory of predictions")
    ap.add_argument("--repo")
    ap.add_argument("--instances", default="")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--budgets", default="4000")
    ap.add_argument("variants", nargs="+")
    args = ap.parse_args(argv)
    variants = [parse_variant(v) for v in args.variants]
    budgets = [int(b) for b in args.budgets.split(",")]
    try:
        chosen = select_instances(
            load_dataset(args.dataset),
            instances=[i for i in args.instances.split(",") if i],
            repo=args.repo,
            limit=args.limit,
            source=args.dataset,
        )
    except EvalError as e:
        raise SystemExit(f"packing_sweep: {e}") from None
    args.out.mkdir(parents=True, exist_ok=True)
    outs = {(n, b): args.out / f"{n}-{b}.jsonl" for n, _ in variants for b in budgets}
    pending = {key: {i.instance_id for i in unrecorded(chosen, path)} for key, path in outs.items()}
    todo = [i for i in chosen if any(i.instance_id in ids for ids in pending.values())]
    runs = prepared_runs(todo, args.repos, args.work, embedder=get_embedder(), budget=budgets[0])
    for inst, run, seconds in runs:
        for name, packing in variants:
            for budget in budgets:
                if inst.instance_id not in pending[(name, budget)]:
                    continue
                run.budget, run.packing = budget, packing
                answer = run.query("ask", inst.problem_statement)
                pred = answer.prediction(inst.instance_id, "ask", seconds["dowse"])
                with outs[(name, budget)].open("a", encoding="utf-8") as out:
                    out.write(pred.model_dump_json() + "\n")
        print(inst.instance_id, file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
