"""Record and cross-validate the ranking of `ask`'s definitions (`retrieval.definitions`).

Usage:
    python benchmarks/function_ranking.py record --dataset DEV.jsonl --repos CLONES
        --work DIR --out RECORD.jsonl [--repo OWNER/NAME] [--instances ID,...]
    python benchmarks/function_ranking.py fit RECORD.jsonl [RECORD.jsonl ...] [--folds 5]
        [--seed 0] [--places answer|file]

`record` runs `ask` as `dowse eval swebench --methods ask --budget 4000` does (the work
indexes with file vectors, reusing DIR) and writes one line per instance: the answer's
files, the definitions its context shows (`found_functions` before the ranking:
`evaluation.swebench._definitions` of its blocks), every behaviour definition of its
first ten files with its file's place and its place in each ranking
(`RankedDefinition.rankings`), counted among all ten files' definitions (`candidates`)
and among its own file's (`file_candidates`), and the gold functions (`gold_spans`; for a dataset
without them, run benchmarks/gold_functions.py first). A rerun resumes.

`fit` replays the ranking from those records (the context does not depend on it, so a
replay is exact; the places of the first N files' definitions are counted anew among
them) under a grid of its two weights (`DefinitionRanking.file_weight`,
`context_weight`) and of the number of files ranked, splits the instances into k folds
(stratified by repository: each fold a share of every repository), picks the best grid
point on k-1 folds by FuncAcc@5 then FuncAcc@10 and scores the held-out fold, and
prints pooled held-out FuncAcc@5/10 beside the shown definitions alone, the shipped
parameters, and the shown definitions first with the ranking after them.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dowse.evaluation.swebench import (
    _ask_units,
    _definitions,
    _function_rank,
    load_dataset,
    prepared_runs,
    unrecorded,
)
from dowse.explore.handoff import investigate
from dowse.retrieval.definitions import (
    RANKINGS,
    DefinitionRanking,
    RankedDefinition,
    rank_definitions,
)
from dowse.retrieval.file_parts import RRF_K
from dowse.retrieval.query import analyze, naming

sys.path.insert(0, str(Path(__file__).parent))
from crossval import folds_of  # noqa: E402

BUDGET = 4000
RECORDED_FILES = 10


def record(args: argparse.Namespace) -> None:
    from dowse.indexer.embed import get_embedder

    wanted = set(",".join(args.instances).split(",")) - {""} if args.instances else set()
    dataset = [
        i
        for i in load_dataset(args.dataset)
        if (not args.repo or i.repo == args.repo) and (not wanted or i.instance_id in wanted)
    ]
    todo = unrecorded(dataset, args.out)
    runs = prepared_runs(todo, args.repos, args.work, embedder=get_embedder(), budget=BUDGET)
    with args.out.open("a") as out:
        for n, (inst, run, seconds) in enumerate(runs, 1):
            line = record_line(inst, run.searcher, run.store, answer_only=args.answer_only)
            out.write(json.dumps(line) + "\n")
            out.flush()
            print(
                f"{n:4d} {inst.instance_id}: {len(line['candidates'])} definitions, "
                f"index {seconds.get('dowse', 0):.1f}s",
                file=sys.stderr,
            )


def record_line(
    inst: Any, searcher: Any, store: Any, *, answer_only: bool = False
) -> dict[str, Any]:
    """One instance's record: `candidates` with their places counted among all the
    ranked files' definitions (`DefinitionRanking.places` "answer"), `file_candidates`
    among their own file's (the same `ask` asked again: the context does not depend on
    the ranking)."""
    text = inst.problem_statement
    line: dict[str, Any] = {
        "instance_id": inst.instance_id,
        "repo": inst.repo,
        "gold_files": inst.gold_files,
        "gold_spans": inst.gold_spans,
    }
    counts = (("answer", "candidates"), ("file", "file_candidates"))
    for places, field in counts[: 1 if answer_only else 2]:
        ranking = DefinitionRanking(files=RECORDED_FILES, limit=10**6, places=places)
        report = investigate(searcher, text, budget=BUDGET, ranking=ranking)
        line["files"] = [f.path for f in report.files][:20]
        line["shown"] = _definitions(store, _ask_units(report), naming(analyze(text)))
        line[field] = [
            d.model_dump(
                include={
                    "path",
                    "qualified_name",
                    "kind",
                    "start_line",
                    "end_line",
                    "file_rank",
                    "rankings",
                    "declaration",
                }
            )
            for d in report.definitions
        ]
    return line


@dataclass(frozen=True)
class Task:
    id: str
    repo: str
    gold: dict[str, list[str]]
    shown: list[str]
    names: list[str]
    """The candidates' `path::qualified_name`, in the order recorded (file, then line)."""
    file_rank: np.ndarray
    fused: dict[int, np.ndarray]
    """Each candidate's `1 / (RRF_K + place)` summed over every ranking but `context`,
    by the number of files ranked."""
    context: dict[int, np.ndarray]
    """Its `context` ranking's term (0 when the context shows none of it), by files."""
    candidates: dict[int, list[dict[str, Any]]]
    """The candidates of the first files, their places counted among those files', by
    files."""
    declaration: np.ndarray
    """1 for a type declared with no code of its own (`RankedDefinition.declaration`; 0
    in a record from before it)."""


FILES = (3, 5, 10)
"""The numbers of files ranked that the fit tries (the record holds ten)."""


def among_first(cands: Sequence[dict[str, Any]], files: int) -> list[dict[str, Any]]:
    """The candidates of the first `files` files, each ranking's places counted anew
    among them (as `ask` ranking `files` files counts them): a ranking's groups of tied
    definitions are those sharing a place, in the order of their places."""
    mine = [dict(c, rankings=dict(c["rankings"])) for c in cands if c["file_rank"] < files]
    for name in RANKINGS:
        placed = sorted({c["rankings"][name] for c in mine if name in c["rankings"]})
        before = 0
        for place in placed:
            group = [c for c in mine if c["rankings"].get(name) == place]
            for c in group:
                c["rankings"][name] = before + (len(group) - 1) / 2
            before += len(group)
    return mine


def load(paths: Sequence[Path], places: str = "answer") -> list[Task]:
    """The records' instances with gold functions, their candidates' places counted as
    `places` says (`DefinitionRanking.places`; a record from before the choice has its
    own file's places only, as `candidates`)."""
    tasks = []
    for path in paths:
        for line in path.read_text().splitlines():
            r = json.loads(line)
            if not r.get("gold_spans"):
                continue
            if places == "file":  # a file's places hang on no other file
                cands = r.get("file_candidates", r["candidates"])
                first = {n: [c for c in cands if c["file_rank"] < n] for n in FILES}
            else:
                cands = r["candidates"]
                first = {n: among_first(cands, n) for n in FILES}
            tasks.append(
                Task(
                    r["instance_id"],
                    r["repo"],
                    r["gold_spans"],
                    r["shown"],
                    [f"{c['path']}::{c['qualified_name']}" for c in cands],
                    np.array([c["file_rank"] for c in cands], dtype=float),
                    {n: _terms(cands, first[n]) for n in FILES},
                    {n: _terms(cands, first[n], "context") for n in FILES},
                    first,
                    np.array([bool(c.get("declaration")) for c in cands], dtype=float),
                )
            )
    return tasks


def _terms(
    cands: Sequence[dict[str, Any]], first: Sequence[dict[str, Any]], only: str | None = None
) -> np.ndarray:
    """`_fused` of each of `cands` (in order), 0 for those not among `first` (the first
    files' candidates, in the same order)."""
    out = np.zeros(len(cands))
    it = iter(first)
    j = 0
    for c in it:
        while (
            cands[j]["file_rank"] != c["file_rank"]
            or cands[j]["qualified_name"] != c["qualified_name"]
            or cands[j]["path"] != c["path"]
        ):
            j += 1
        out[j] = _fused(c["rankings"], only)
        j += 1
    return out


def _fused(places: dict[str, float], only: str | None = None) -> float:
    """The rankings' `1 / (RRF_K + place)` summed: of `only`, else of all but `context`."""
    return sum(
        1 / (RRF_K + v) for k, v in places.items() if (k == only if only else k != "context")
    )


def check_replay(tasks: Sequence[Task], params: Params) -> None:
    """`found` gives what `rank_definitions` gives (the library's own order)."""
    files, file_weight, context_weight, _ = params
    ranking = DefinitionRanking(
        files=files, limit=50, file_weight=file_weight, context_weight=context_weight
    )
    for t in tasks:
        cands = [
            RankedDefinition(**{**c, "start_line": 0, "end_line": 0, "score": 0.0})
            for c in t.candidates[files]
        ]
        # Ties: the library breaks them by file, line and name; the record's order (the
        # recorded ask's ranking) stands for the line.
        for i, c in enumerate(cands):
            c.start_line = i
        mine = [f"{d.path}::{d.qualified_name}" for d in rank_definitions(cands, ranking)]
        assert list(dict.fromkeys(mine))[:50] == found(t, params), t.id


Params = tuple[int, float, float, bool]
"""(files ranked, file weight, context weight, the shown definitions first)."""


def found(task: Task, params: Params) -> list[str]:
    """The ranked list `rank_definitions` makes under `params` (its score, rounded as it
    rounds, then the file's place and the line: the recorded order stands for it)."""
    files, file_weight, context_weight, shown_first = params
    score = np.round(
        file_weight / (1 + task.file_rank)
        + task.fused[files]
        + context_weight * task.context[files]
        - DefinitionRanking().declaration_penalty * task.declaration,
        4,
    )
    keep = np.flatnonzero(task.file_rank < files)
    order = keep[np.lexsort((keep, task.file_rank[keep], -score[keep]))]
    ranked = [task.names[i] for i in order]
    if shown_first:
        ranked = task.shown + ranked
    return list(dict.fromkeys(ranked))[:50]


def metrics(tasks: Sequence[Task], lists: Sequence[Sequence[str]]) -> dict[str, float]:
    ranks = [_function_rank(t.gold, f) for t, f in zip(tasks, lists, strict=True)]
    n = max(len(tasks), 1)
    return {f"f{k}": 100 * sum(r <= k for r in ranks) / n for k in (1, 5, 10)}


def score_of(tasks: Sequence[Task], params: Params) -> dict[str, float]:
    return metrics(tasks, [found(t, params) for t in tasks])


GRID: list[Params] = [
    (files, fw, cw, first)
    for files in FILES
    for fw in (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 10.0)
    for cw in (0.0, 0.5, 1.0, 2.0, 4.0)
    for first in (False, True)
]
BEFORE: Params = (5, 2.0, 1.0, False)
"""The defaults while the places were counted inside each file."""
SHIPPED: Params = (
    DefinitionRanking().files,
    DefinitionRanking().file_weight,
    DefinitionRanking().context_weight,
    False,
)


def best_of(tasks: Sequence[Task], grid: Sequence[Params]) -> Params:
    def key(p: Params) -> tuple[float, float, float]:
        m = score_of(tasks, p)
        return m["f5"], m["f10"], m["f1"]

    return max(grid, key=key)


def crossvalidate(
    tasks: Sequence[Task], fitter: Callable[[Sequence[Task]], Params], k: int, seed: int
) -> tuple[dict[str, float], list[Params]]:
    fold = folds_of(tasks, k, seed, "stratified")  # as crossval.py deals files' tasks
    lists: list[list[str]] = [[] for _ in tasks]
    fitted = []
    for f in range(k):
        params = fitter([t for t, g in zip(tasks, fold, strict=True) if g != f])
        fitted.append(params)
        for i, t in enumerate(tasks):
            if fold[i] == f:
                lists[i] = found(t, params)
    return metrics(tasks, lists), fitted


def fit(args: argparse.Namespace) -> None:
    tasks = load(args.records, args.places)
    print(f"{len(tasks)} instances with gold functions, places among the {args.places}'s")
    print("| ranking | FuncAcc@1 | FuncAcc@5 | FuncAcc@10 |\n|---|---|---|---|")

    def row(name: str, m: dict[str, float]) -> None:
        print(f"| {name} | {m['f1']:.1f} | {m['f5']:.1f} | {m['f10']:.1f} |")

    check_replay(tasks, SHIPPED)
    row("the context's definitions", metrics(tasks, [t.shown for t in tasks]))
    row(f"shipped {SHIPPED}", score_of(tasks, SHIPPED))
    row(f"chosen with the places counted in each file {BEFORE}", score_of(tasks, BEFORE))
    grid = [p for p in GRID if not p[3] and p[1] == 0.0]
    held, fitted = crossvalidate(
        tasks, functools.partial(best_of, grid=grid), args.folds, args.seed
    )
    row(f"ranked without the file's weight: held-out, fitted per fold {sorted(set(fitted))}", held)
    for first in (False, True):
        grid = [p for p in GRID if p[3] == first]
        held, fitted = crossvalidate(
            tasks, functools.partial(best_of, grid=grid), args.folds, args.seed
        )
        label = "shown first, then ranked" if first else "ranked"
        row(f"{label}: held-out, fitted per fold {sorted(set(fitted))}", held)
        best = best_of(tasks, grid)
        row(f"{label}: fitted on all {best} (in-sample)", score_of(tasks, best))
    if args.per_repo:
        for repo in sorted({t.repo for t in tasks}):
            mine = [t for t in tasks if t.repo == repo]
            print(f"{repo} ({len(mine)}):")
            row("  main", metrics(mine, [t.shown for t in mine]))
            row("  shipped", score_of(mine, SHIPPED))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("--dataset", type=Path, required=True)
    rec.add_argument("--repos", type=Path, required=True)
    rec.add_argument("--work", type=Path, required=True)
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("--repo")
    rec.add_argument("--instances", action="append")
    rec.add_argument(
        "--answer-only",
        action="store_true",
        help="record the places among all the files' definitions only (one `ask`)",
    )
    f = sub.add_parser("fit")
    f.add_argument("records", type=Path, nargs="+")
    f.add_argument("--folds", type=int, default=5)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--per-repo", action="store_true")
    f.add_argument(
        "--places",
        choices=("answer", "file"),
        default="answer",
        help="the candidates' places among all the ranked files' definitions or their file's",
    )
    args = parser.parse_args()
    {"record": record, "fit": fit}[args.command](args)


if __name__ == "__main__":
    main()
