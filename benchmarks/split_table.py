"""A localization split's table per language and per repository, and what moved between runs.

Usage:
    python benchmarks/split_table.py --dataset DATASET --score SCORE_PY \\
        --pred LABEL=PRED.jsonl [--pred LABEL=PRED.jsonl ...] [--method ask] [--changes]
        [--predicted]

Each predictions file (`dowse eval swebench --out`, any number concatenated) is scored
with the split's own scorer (`score.py`, its `score` function, loaded from `--score`) on
the whole dataset, on each language (`language` field) and on each repository, and
printed as one markdown row per label and subset: n, Acc@1/5/10, R@1/5/10, MRR, the gold
in the context, line_recall, hunks_in_context, FuncAcc@5 (when the dataset has
`gold_spans`), median tokens and query seconds. An instance without a prediction counts
as a miss, as the scorer counts it; `--predicted` scores only the instances every run
predicted (a run stopped part-way: n says how many).

`--changes` (two labels): every instance whose first file changed between gold and not
gold, whose gold files changed between all in the top 5 and not, or whose Recall@5 or
first gold rank moved, with the first gold rank and Recall@5 on both sides.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path
from typing import Any

COLUMNS = (
    ("Acc@1", "Acc@1"),
    ("Acc@5", "Acc@5"),
    ("Acc@10", "Acc@10"),
    ("R@1", "Recall@1"),
    ("R@5", "Recall@5"),
    ("R@10", "Recall@10"),
    ("MRR", "MRR"),
    ("in-ctx", "in_context"),
    ("L-rec", "line_recall"),
    ("hunks", "hunks_in_context"),
    ("FuncAcc@5", "FuncAcc@5"),
    ("tokens", "tokens_median"),
    ("query s", "seconds_median"),
)


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_scorer(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("split_score", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def predictions(path: Path, method: str | None) -> dict[str, dict[str, Any]]:
    """Instance id -> its prediction line (the last one of `method`, as the scorer reads)."""
    out: dict[str, dict[str, Any]] = {}
    for line in load_jsonl(path):
        if method is None or line.get("method") == method:
            out[line["instance_id"]] = line
    return out


def subsets(dataset: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """("all", every row), then each language, then each repository, in sorted order."""
    out = [("all", dataset)]
    for field, prefix in (("language", "lang:"), ("repo", "")):
        for value in sorted({str(r.get(field)) for r in dataset if r.get(field)}):
            out.append((prefix + value, [r for r in dataset if str(r.get(field)) == value]))
    return out


def first_gold_rank(row: dict[str, Any], pred: dict[str, Any] | None) -> int | None:
    gold = set(row["gold_files"])
    ranked = (pred or {}).get("found_files") or []
    return next((i + 1 for i, f in enumerate(ranked) if f in gold), None)


def recall_at(row: dict[str, Any], pred: dict[str, Any] | None, k: int) -> float:
    gold = set(row["gold_files"])
    ranked = (pred or {}).get("found_files") or []
    return len(gold & set(ranked[:k])) / len(gold)


def changes(
    dataset: list[dict[str, Any]],
    before: dict[str, dict[str, Any]],
    after: dict[str, dict[str, Any]],
) -> list[str]:
    """One line per instance whose first file, top 5 or first gold rank moved."""
    lines = []
    for row in dataset:
        iid = row["instance_id"]
        a, b = before.get(iid), after.get(iid)
        ra, rb = first_gold_rank(row, a), first_gold_rank(row, b)
        r5a, r5b = recall_at(row, a, 5), recall_at(row, b, 5)
        if ra == rb and r5a == r5b:
            continue
        moved = []
        if (ra == 1) != (rb == 1):
            moved.append("rank 1 " + ("gained" if rb == 1 else "lost"))
        if (r5a == 1.0) != (r5b == 1.0):
            moved.append("all in top 5 " + ("gained" if r5b == 1.0 else "lost"))
        lines.append(
            f"{iid}: first gold rank {ra or '-'} -> {rb or '-'}, "
            f"R@5 {r5a:.2f} -> {r5b:.2f}" + (f" ({'; '.join(moved)})" if moved else "")
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--score", type=Path, required=True, help="the split's score.py")
    parser.add_argument("--pred", action="append", required=True, help="LABEL=PRED.jsonl")
    parser.add_argument("--method", default="ask")
    parser.add_argument("--changes", action="store_true")
    parser.add_argument(
        "--predicted", action="store_true", help="only the instances every run predicted"
    )
    args = parser.parse_args()

    scorer = load_scorer(args.score)
    dataset = load_jsonl(args.dataset)
    runs = []
    for spec in args.pred:
        label, sep, path = spec.partition("=")
        if not sep:
            raise SystemExit(f"--pred wants LABEL=PATH, got {spec!r}")
        runs.append((label, predictions(Path(path), args.method)))
    if args.predicted:
        dataset = [r for r in dataset if all(r["instance_id"] in preds for _, preds in runs)]

    print("| run | subset | n | " + " | ".join(name for name, _ in COLUMNS) + " |")
    print("|---" * (3 + len(COLUMNS)) + "|")
    for name, rows in subsets(dataset):
        for label, preds in runs:
            res = scorer.score(rows, preds)
            cells = [str(res.get(key, "")) for _, key in COLUMNS]
            print(f"| {label} | {name} | {res['n']} | " + " | ".join(cells) + " |")

    if args.changes:
        if len(runs) != 2:
            raise SystemExit("--changes compares two --pred runs")
        print()
        for line in changes(dataset, runs[0][1], runs[1][1]):
            print(line)


if __name__ == "__main__":
    main()
