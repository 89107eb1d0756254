"""Fit one weight per within-file ranking of `file_parts.best_parts`, held out by repository.

Usage:
    python benchmarks/part_weights.py collect --dataset DEV.jsonl --repos CLONES --work DIR
        --out PARTS.jsonl [--repo OWNER/NAME] [--instances ID,...] [--limit N]
    python benchmarks/part_weights.py shown --dataset DEV.jsonl PRED.jsonl [...]
    python benchmarks/part_weights.py fit PARTS.jsonl [...] [--first N] [--others N]
        [--grid 0,0.5,1,2,4] [--k 1] [--ks 0.5,1,2,4] [--free words,closeness,...]

`ask` shows the best part of each of its first `Packing.lead_files` files and up to
`Packing.first_file_parts` parts of the first; `best_parts` orders each file's chunks by
reciprocal-rank fusion of its rankings, all counting alike. `collect` runs, for each
instance, the loop and the file ranking as `ask` runs them (its repository synced and
indexed as `dowse eval swebench` does, the same work directory layout, so an eval's
`--work` is reused), and for each gold file among those first files calls `best_parts`
as `ask` calls it; it writes one line per such file: its place among the files, its
hunks (`gold_lines`), and every one of its parts with the lines `ask` would print for
it (`printed_lines`), each ranking's places of it and the factor its score was
multiplied by for being mostly prose (`Part.places`, `Part.share`). Nothing is fitted
there: any weighting of the rankings can then be scored offline, reordering the parts
and dropping those an earlier one's printed lines hold (`distinct_parts`).

`shown` measures N, how many blocks of a gold file among the first three the context
shows, from recorded `ask` predictions (`context_spans` longer than a line).

`fit` scores the share of gold hunks whose part is within the first N parts of its file
(`--first` for the first file, `--others` for the next ones) and fits the weights
(coordinate ascent over `--grid`, from all 1, and `RRF_K` over `--ks` when given; only
the `--free` rankings' weights, the others staying 1) with
leave-one-repository-out cross-validation: each repository's hunks are scored with the
weights fitted on the other repositories. Printed per language: hunks, the unweighted
share, the held-out share, instances up / down, gold files with a hunk within N; the
weights fitted on all; and each ranking left out (weight 0), scored on all.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dowse.errors import EvalError
from dowse.evaluation.swebench import load_dataset, prepared_runs, select_instances
from dowse.indexer.embed import get_embedder
from dowse.retrieval.ask import LoopConfig, Packing
from dowse.retrieval.file_parts import RANKINGS, RRF_K, best_parts, printed_lines

ask_module = importlib.import_module("dowse.retrieval.ask")  # the package's `ask` is the function

NAMES = sorted(RANKINGS)


def collect(args: argparse.Namespace) -> int:
    try:
        chosen = select_instances(
            [i for i in load_dataset(args.dataset) if i.gold_lines],
            instances=[i for i in args.instances.split(",") if i],
            repo=args.repo,
            limit=args.limit,
            source=args.dataset,
        )
    except EvalError as e:
        raise SystemExit(f"part_weights: {e}") from None
    packing = Packing()
    runs = prepared_runs(chosen, args.repos, args.work, embedder=get_embedder(), budget=4000)
    with args.out.open("a", encoding="utf-8") as out:
        for inst, run, _ in runs:
            searcher = run.searcher
            result, by_words, by_history = ask_module._loop_and_history(
                searcher, inst.problem_statement, None, None
            )
            items = [it for it in result.items if it.relevance >= packing.min_relevance]
            ranked = ask_module._rank_files(
                searcher,
                result,
                items,
                by_words,
                by_history,
                LoopConfig(),
                ask_module.FileFusion(),
            )
            leads = [f.path for f in ranked.files[: packing.lead_files]]
            parts = best_parts(
                searcher,
                result.analysis,
                leads,
                evaluated=ask_module.evaluated_parts(items),
                symbols=ranked.symbols,
            )
            for n, path in enumerate(leads, 1):
                if path not in inst.gold_lines:
                    continue
                symbols = ranked.symbols.get(path, [])
                record = {
                    "instance_id": inst.instance_id,
                    "repo": inst.repo,
                    "language": inst.language or "Python",
                    "path": path,
                    "file_rank": n,
                    "hunks": inst.gold_lines[path],
                    "parts": [
                        {
                            "start": int(p.row["start_line"]),
                            "printed": list(printed_lines(p.row, symbols)),
                            "places": p.places,
                            "share": p.share,
                        }
                        for p in parts.get(path, [])
                    ],
                }
                out.write(json.dumps(record) + "\n")
            out.flush()
            print(inst.instance_id, file=sys.stderr, flush=True)
    return 0


def shown(args: argparse.Namespace) -> int:
    gold = {i.instance_id: i for i in load_dataset(args.dataset)}
    counts: dict[str, Counter[int]] = {"first": Counter(), "others": Counter()}
    for pred_path in args.pred:
        for line in pred_path.read_text(encoding="utf-8").splitlines():
            pred = json.loads(line)
            inst = gold.get(pred["instance_id"])
            if inst is None:
                continue
            for n, path in enumerate(pred["found_files"][:3], 1):
                if path not in inst.gold_lines:
                    continue
                blocks = sum(
                    s["path"] == path and s["end"] > s["start"] for s in pred["context_spans"]
                )
                counts["first" if n == 1 else "others"][blocks] += 1
    for name, c in counts.items():
        total = sum(c.values())
        if not total:
            continue
        mean = sum(k * v for k, v in c.items()) / total
        print(
            f"{name:7} gold files {total}  blocks shown: mean {mean:.2f}  ", dict(sorted(c.items()))
        )
    return 0


def load(paths: Iterable[Path]) -> list[dict[str, Any]]:
    rows = []
    seen: set[tuple[str, str]] = set()
    for path in paths:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
            records = [json.loads(line) for line in lines]
        except (OSError, ValueError) as e:
            raise SystemExit(f"part_weights: {path}: {e}") from None
        for row in records:
            key = (row["instance_id"], row["path"])
            if key not in seen:  # a rerun appends
                seen.add(key)
                rows.append(row)
    return rows


_SUMS: dict[tuple[int, float], list[tuple[dict[str, float], float, int]]] = {}


def _sums(row: Mapping[str, Any], k: float) -> list[tuple[dict[str, float], float, int]]:
    """Per part: each ranking's `1 / (k + place)` summed over its places, its share, its
    first line (cached: the fit scores each file many times)."""
    key = (id(row), k)
    if key not in _SUMS:
        _SUMS[key] = [
            (
                {r: sum(1 / (k + place) for place in places) for r, places in p["places"].items()},
                p["share"],
                p["start"],
            )
            for p in row["parts"]
        ]
    return _SUMS[key]


def order(row: Mapping[str, Any], weights: Mapping[str, float], k: float) -> list[int]:
    """The file's parts (their indexes in the record) in the order `weights` and `k` give,
    as `best_parts` orders them (the score, then the first line)."""
    scored = [
        (-sum(weights[r] * v for r, v in sums.items()) * share, start, i)
        for i, (sums, share, start) in enumerate(_sums(row, k))
    ]
    return [i for *_, i in sorted(scored)]


def hunk_hits(
    row: Mapping[str, Any], weights: Mapping[str, float], k: float, first: int, others: int
) -> list[bool]:
    """For each of the file's hunks, whether the parts ordered by `weights` and `k` show
    it whole within the first N (after `distinct_parts`)."""
    wanted = first if row["file_rank"] == 1 else others
    spans: list[tuple[int, int]] = []
    for i in order(row, weights, k):
        lo, hi = row["parts"][i]["printed"]
        if any(a <= lo and hi <= b for a, b in spans):
            continue
        spans.append((lo, hi))
        if len(spans) == wanted:
            break
    return [any(lo <= a and b <= hi for lo, hi in spans) for a, b in row["hunks"]]


def total(
    rows: Sequence[Mapping[str, Any]],
    weights: Mapping[str, float],
    k: float,
    first: int,
    others: int,
) -> int:
    return sum(sum(hunk_hits(r, weights, k, first, others)) for r in rows)


def fit_weights(
    rows: Sequence[Mapping[str, Any]],
    grid: Sequence[float],
    ks: Sequence[float],
    first: int,
    others: int,
    free: Sequence[str] = NAMES,
) -> tuple[dict[str, float], float]:
    """Coordinate ascent from equal weights: each weight (and `k`) in turn set to the grid
    value that hits the most hunks, ties kept at the current value, until no change."""
    weights = {r: 1.0 for r in NAMES}
    k = ks[0]
    best = total(rows, weights, k, first, others)
    for _ in range(4):
        changed = False
        for name in [*free, "k"] if len(ks) > 1 else free:
            for value in ks if name == "k" else grid:
                trial_w = weights if name == "k" else {**weights, name: value}
                trial_k = value if name == "k" else k
                hits = total(rows, trial_w, trial_k, first, others)
                if hits > best:
                    best, weights, k, changed = hits, trial_w, trial_k, True
        if not changed:
            break
    return weights, k


def fit(args: argparse.Namespace) -> int:
    rows = load(args.parts)
    grid = [float(x) for x in args.grid.split(",")]
    ks = [float(x) for x in args.ks.split(",")] if args.ks else [args.k]
    free = [n for n in args.free.split(",") if n] if args.free else NAMES
    if set(free) - set(NAMES):
        raise SystemExit(f"part_weights: --free names rankings of {', '.join(NAMES)}")
    equal = {r: 1.0 for r in NAMES}
    # The records are in `best_parts`' order: equal weights must give it back.
    differ = sum(order(r, equal, float(RRF_K)) != list(range(len(r["parts"]))) for r in rows)
    print(f"{len(rows)} gold files; equal weights reorder {differ} of them (must be 0)")
    by_repo: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        by_repo[r["repo"]].append(r)
    held: dict[str, list[tuple[Mapping[str, Any], list[bool]]]] = defaultdict(list)
    for repo, mine in sorted(by_repo.items()):
        train = [r for r in rows if r["repo"] != repo]
        weights, k = fit_weights(train, grid, ks, args.first, args.others, free)
        hits = sum(sum(hunk_hits(r, weights, k, args.first, args.others)) for r in mine)
        base = sum(sum(hunk_hits(r, equal, args.k, args.first, args.others)) for r in mine)
        print(
            f"held out {repo:32} hunks {sum(len(r['hunks']) for r in mine):4}  equal {base:4}  "
            f"fitted {hits:4}  k {k}  " + " ".join(f"{n}={weights[n]:g}" for n in NAMES),
            flush=True,
        )
        for r in mine:
            held[r["language"]].append((r, hunk_hits(r, weights, k, args.first, args.others)))
    print(f"\nfirst file N={args.first}, next files N={args.others}; share of hunks (held out)")
    print(
        "| language | gold files | hunks | equal weights | held-out fitted | instances up / down "
        "| files with a hunk shown: equal / fitted |"
    )
    print("|---|---|---|---|---|---|---|")
    sums = [0] * 8
    for lang, pairs in sorted(held.items()):
        n = sum(len(r["hunks"]) for r, _ in pairs)
        eq = [hunk_hits(r, equal, args.k, args.first, args.others) for r, _ in pairs]
        base = sum(sum(e) for e in eq)
        hits = sum(sum(h) for _, h in pairs)
        per: dict[str, int] = defaultdict(int)
        for (r, h), e in zip(pairs, eq, strict=True):
            per[r["instance_id"]] += sum(h) - sum(e)
        up = sum(v > 0 for v in per.values())
        down = sum(v < 0 for v in per.values())
        files_eq = sum(any(e) for e in eq)
        files_fit = sum(any(h) for _, h in pairs)
        print(
            f"| {lang} | {len(pairs)} | {n} | {base} ({100 * base / n:.1f} %) | "
            f"{hits} ({100 * hits / n:.1f} %) | {up} / {down} | {files_eq} / {files_fit} |"
        )
        for i, v in enumerate((len(pairs), n, base, hits, up, down, files_eq, files_fit)):
            sums[i] += v
    if sums[1]:
        print(
            f"| all | {sums[0]} | {sums[1]} | {sums[2]} ({100 * sums[2] / sums[1]:.1f} %) | "
            f"{sums[3]} ({100 * sums[3] / sums[1]:.1f} %) | {sums[4]} / {sums[5]} | "
            f"{sums[6]} / {sums[7]} |"
        )
    weights, k = fit_weights(rows, grid, ks, args.first, args.others, free)
    print("\nfitted on all: k", k, " ".join(f"{n}={weights[n]:g}" for n in NAMES))
    print("\neach ranking left out (weight 0, the others 1), hunks within N, per language:")
    langs = sorted(held)
    print("| left out | " + " | ".join(langs) + " | all |")
    print("|---|" + "---|" * (len(langs) + 1))
    for name in ["(none)", *NAMES]:
        w = {**equal, **({name: 0.0} if name in equal else {})}
        cells = [
            sum(
                sum(hunk_hits(r, w, args.k, args.first, args.others))
                for r in rows
                if r["language"] == lang
            )
            for lang in langs
        ]
        print(f"| {name} | " + " | ".join(map(str, cells)) + f" | {sum(cells)} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--dataset", type=Path, required=True)
    c.add_argument("--repos", type=Path, required=True)
    c.add_argument("--work", type=Path, required=True)
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--repo")
    c.add_argument("--instances", default="")
    c.add_argument("--limit", type=int)
    s = sub.add_parser("shown")
    s.add_argument("--dataset", type=Path, required=True)
    s.add_argument("pred", type=Path, nargs="+")
    f = sub.add_parser("fit")
    f.add_argument("parts", type=Path, nargs="+")
    f.add_argument("--first", type=int, default=3)
    f.add_argument("--others", type=int, default=1)
    f.add_argument("--grid", default="0,0.5,1,2,4")
    f.add_argument("--k", type=float, default=float(RRF_K))
    f.add_argument("--ks", default="")
    f.add_argument("--free", default="", help="the rankings whose weights are fitted (all)")
    args = ap.parse_args(argv)
    return {"collect": collect, "shown": shown, "fit": fit}[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
