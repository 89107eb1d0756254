"""Cross-validate the parameters that order `ask`'s first files.

Usage:
    python benchmarks/crossval.py record --dataset DEV.jsonl --repos CLONES --work DIR
        --out RECORD.jsonl [--repo OWNER/NAME] [--limit N]
    python benchmarks/crossval.py fit RECORD.jsonl [--folds 5] [--seed 0]

`record` runs `ask` once per instance (budget 4000, the work indexes with file vectors as
`dowse eval swebench` builds them, reusing DIR) and writes one line per instance: every
evaluation the loop made (the chunk, its file, its fused score, the cycle, the
evaluator's features), the whole-file rankings `ask` fuses (by words, by closeness, by
history), the hybrid search's file ranking as `dowse eval swebench --methods hybrid`
makes it, `ask`'s own file order, and the gold files. A rerun resumes.

`fit` replays the file ranking of `ask` from those records under other parameters (the
loop's candidates stay those recorded: a reweighted evaluator would have let the loop
wander elsewhere, which a replay cannot see), splits the instances into k folds (by
repository, whole repositories per fold, so a held-out fold is a repository the fit has
not seen: the question the dev/test gap asks), fits on k-1 folds, scores Acc@1, Acc@5 and
MRR on the held-out one, and prints the pooled held-out figures of

- (a) hybrid search alone,
- (b) `ask` with the shipped parameters (no fit),
- (c) the evaluator's log-odds and the file fusion weights refitted on each fold's
  training part,
- (d) reduced models with one parameter or none (see `REDUCED`).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dowse.evaluation.gittree import git_dir_of, sync_tree
from dowse.evaluation.history import _source_commits
from dowse.evaluation.swebench import indexed_instances, load_dataset, unrecorded
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.commits import HistorySource
from dowse.indexer.store import Store
from dowse.retrieval.ask import Packing, ask
from dowse.retrieval.evaluate import (
    _KNOTS,
    SEMANTIC_WEIGHTS,
    WEIGHTS,
    Evaluation,
    OfflineEvaluator,
    weights_for,
)
from dowse.retrieval.file_ranking import files_by_closeness, files_by_history, files_by_words
from dowse.retrieval.fusion import FileFusion
from dowse.retrieval.grains import to_hits
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.pool import Candidate
from dowse.retrieval.query import QueryAnalysis, analyze
from dowse.retrieval.records import SearchOptions

_SKIP = {"id_hit", "term_hit", "terms"}
Record = dict[str, Any]


class _Recorder(OfflineEvaluator):
    """The offline evaluator, writing down every evaluation and its features."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.cycle = 0

    def evaluate(
        self,
        analysis: QueryAnalysis,
        candidates: Sequence[Candidate],
        known_symbols: Any,
        in_context: Any,
    ) -> list[Evaluation]:
        self.cycle += 1
        evals = super().evaluate(analysis, candidates, known_symbols, in_context)
        semantic = weights_for(candidates) is not weights_for([])
        feats = self.features(analysis, candidates)
        for c, f, e in zip(candidates, feats, evals, strict=True):
            self.rows.append(
                {
                    "id": c.id,
                    "file": c.row["path"],
                    "score": c.score,
                    "cycle": self.cycle,
                    "relevance": e.relevance,
                    "semantic": semantic,
                    "f": {k: float(v) for k, v in dataclasses.asdict(f).items() if k not in _SKIP},
                }
            )
        return evals


def _record_one(store: Store, embedder: Any, text: str) -> Record:
    """What `ask` ranks the files of one question from, and what it and hybrid search
    rank first (`record`'s line without the task's names)."""
    searcher = HybridSearcher(store, lambda: embedder)
    rec = _Recorder()
    answer = ask(searcher, text, budget=4000, evaluator=rec, with_trace=False)
    analysis = analyze(text)
    lookups, ranking = searcher.lookups, searcher.file_ranking
    words = files_by_words(lookups, analysis, config=ranking)
    close = files_by_closeness(lookups, searcher.questions, analysis, config=ranking)
    history = files_by_history(lookups, analysis, config=ranking)
    cands = searcher.candidates(analysis, k=80)  # as `dowse eval swebench --methods hybrid`
    ranked = sorted(cands.values(), key=lambda c: (-c.score, c.id))
    hybrid = to_hits(lookups, ranked, SearchOptions(grain="file", limit=20))
    return {
        "ask": [f.path for f in answer.files][:20],
        "hybrid": [[h.path, h.score] for h in hybrid],
        "words": [p for p, _ in words],
        "closeness": [p for p, _ in close],
        "history": [p for p, _ in history],
        "evals": rec.rows,
    }


def record(args: argparse.Namespace) -> None:
    from dowse.indexer.embed import get_embedder

    embedder = get_embedder()
    config = IndexConfig(embed=True, embed_chunks=False)
    if args.history:
        _record_history(args, embedder, config)
        return
    if not (args.dataset and args.repos):
        raise SystemExit("error: record needs --dataset and --repos, or --history CLONE")
    dataset = [i for i in load_dataset(args.dataset) if not args.repo or i.repo == args.repo]
    todo = unrecorded(dataset, args.out)
    snapshots = indexed_instances(todo, args.repos, args.work, embedder=embedder, config=config)
    with args.out.open("a") as out:
        for n, (inst, store) in enumerate(itertools.islice(snapshots, args.limit or None), 1):
            line = {"instance_id": inst.instance_id, "repo": inst.repo, "gold": inst.gold_files}
            line.update(_record_one(store, embedder, inst.problem_statement))
            out.write(json.dumps(line) + "\n")
            out.flush()
            print(f"{n:4d} {inst.instance_id}: {len(line['evals'])} evaluations", file=sys.stderr)


def _record_history(args: argparse.Namespace, embedder: Any, config: IndexConfig) -> None:
    """The tasks of `dowse eval history CLONE -n N` (the last N non-merge commits that
    modify source files, the message as the question, the tree and the history at the
    parent), recorded as `record` records a dataset's."""
    git_dir = git_dir_of(args.history)
    name = args.history.name
    done = (
        {json.loads(line)["instance_id"] for line in args.out.open()}
        if args.out.exists()
        else set()
    )
    commits = list(reversed(_source_commits(git_dir, args.commits)))
    with args.out.open("a") as out:
        for n, (commit, parent, message, changed) in enumerate(commits, 1):
            if f"{name}@{commit[:12]}" in done:
                continue
            sync_tree(git_dir, parent, args.work / "tree")
            build_index(
                args.work / "tree",
                index_dir=args.work / ".dowse-index",
                embedder=embedder,
                config=dataclasses.replace(config, history_source=HistorySource(git_dir, parent)),
            )
            store = Store.open(args.work / ".dowse-index")
            line = {"instance_id": f"{name}@{commit[:12]}", "repo": name, "gold": changed}
            line.update(_record_one(store, embedder, message))
            out.write(json.dumps(line) + "\n")
            out.flush()
            print(
                f"{n:4d} {line['instance_id']}: {len(line['evals'])} evaluations", file=sys.stderr
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--dataset", type=Path)
    r.add_argument("--repos", type=Path)
    r.add_argument("--work", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--repo")
    r.add_argument("--limit", type=int, default=0)
    r.add_argument("--history", type=Path, help="a clone: record its history's tasks instead")
    r.add_argument("-n", "--commits", type=int, default=30)
    f = sub.add_parser("fit")
    f.add_argument("record", type=Path)
    f.add_argument("--folds", type=int, default=5)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--outside", type=Path, help="records of tasks outside the split (history)")
    args = ap.parse_args()
    if args.cmd == "record":
        record(args)
    else:
        fit(args)


# -- replay ----------------------------------------------------------------------------

NAMES = [
    "coverage",
    "symbol",
    "path",
    "closeness",
    "rank_prior",
    "score",
    "gap",
    "test",
    "text",
    "refined",
    "linked",
    "summary",
    "raised",
]
# Not fitted: the fit drives tests and docs to about -9 (a SWE-bench fix never lands in
# them); the shipped models cap them at -4, and so does every refit here.
FIXED = {"test": -4.0, "text": -4.0}
KNOTS_P = np.array([p for p, _ in _KNOTS])
KNOTS_R = np.array([r for _, r in _KNOTS])


def vector(weights: dict[str, float]) -> np.ndarray:
    """A log-odds model as [intercept, *NAMES]."""
    return np.array([weights["intercept"], *(weights.get(k, 0.0) for k in NAMES)])


@dataclasses.dataclass
class Task:
    """One recorded question, ready to replay."""

    id: str
    repo: str
    gold: set[str]
    ask: list[str]
    hybrid: list[str]
    words: list[str]
    closeness: list[str]
    history: list[str]
    X: np.ndarray  # evaluations x [1, *NAMES], the score capped at 1.5 as `probability`
    semantic: np.ndarray  # evaluations: the semantic model applies
    chunk: list[str]
    file: list[str]
    score: np.ndarray  # each evaluation's fused retrieval score
    label: np.ndarray  # each evaluation's file is a gold file


def load(path: Path) -> list[Task]:
    tasks = []
    for line in path.open():
        r = json.loads(line)
        ev = r["evals"]
        X = np.array(
            [
                [1.0, *(min(e["f"][k], 1.5) if k == "score" else e["f"][k] for k in NAMES)]
                for e in ev
            ]
        ).reshape(len(ev), len(NAMES) + 1)
        gold = set(r["gold"])
        tasks.append(
            Task(
                id=r["instance_id"],
                repo=r["repo"],
                gold=gold,
                ask=r["ask"],
                hybrid=[p for p, _ in r["hybrid"]],
                words=r["words"],
                closeness=r["closeness"],
                history=r["history"],
                X=X,
                semantic=np.array([e["semantic"] for e in ev], dtype=bool),
                chunk=[e["id"] for e in ev],
                file=[e["file"] for e in ev],
                score=np.array([e["score"] for e in ev]),
                label=np.array([e["file"] in gold for e in ev], dtype=float),
            )
        )
    return tasks


@dataclasses.dataclass(frozen=True)
class Params:
    """What orders `ask`'s files: the evaluator's two log-odds models, `FileFusion`, and
    the reduced models' extra knobs (off by default)."""

    semantic: tuple[float, ...] = tuple(vector(SEMANTIC_WEIGHTS))
    lexical: tuple[float, ...] = tuple(vector(WEIGHTS))
    relevance: float = FileFusion().relevance
    words: float = FileFusion().words
    closeness: float = FileFusion().closeness
    history: float = FileFusion().history
    bonus: float = 0.05  # a file's relevance and score per further relevant part (cap 2x)
    hybrid: float = 0.0  # the search's own file ranking as a further reciprocal-rank list
    margin: float | None = None  # the search's first file stays first unless beaten by this
    margin_on: str = "place"  # what the margin compares: "place" or "relevance"


def relevances(task: Task, params: Params) -> np.ndarray:
    logit = np.where(
        task.semantic, task.X @ np.array(params.semantic), task.X @ np.array(params.lexical)
    )
    p = 1 / (1 + np.exp(-logit))
    return np.round(np.interp(p, KNOTS_P, KNOTS_R), 3)


def replay(task: Task, params: Params) -> list[str]:
    """`ask`'s file ranking (retrieval/ask.py `_files`) under `params`."""
    rel = relevances(task, params)
    best: dict[str, tuple[float, float, str]] = {}
    for chunk, path, r, s in zip(task.chunk, task.file, rel, task.score, strict=True):
        if chunk not in best or r > best[chunk][0]:  # loop.py `_keep_best`
            best[chunk] = (float(r), float(s), path)
    by_file: dict[str, list[tuple[float, float]]] = {}
    for r, s, path in best.values():
        if r >= Packing().min_relevance:
            by_file.setdefault(path, []).append((r, s))
    scored = {}
    top_rel = {}
    for path, its in by_file.items():
        bonus = min(params.bonus * (len(its) - 1), 2 * params.bonus)
        rank = max(params.relevance * r + (1 - params.relevance) * min(s, 1.0) for r, s in its)
        scored[path] = round(rank + bonus, 4)
        top_rel[path] = min(max(r for r, _ in its) + bonus, 1.0)
    evaluated = sorted(scored, key=lambda p: (-scored[p], p))
    if not task.words and not task.closeness:
        out = evaluated
    else:
        out = evaluated + [p for p in dict.fromkeys(task.words + task.closeness) if p not in scored]
    ev_rank = {p: i for i, p in enumerate(evaluated)}
    lists = [
        (params.words, {p: i for i, p in enumerate(task.words)}),
        (params.closeness, {p: i for i, p in enumerate(task.closeness)}),
        (params.history, {p: i for i, p in enumerate(task.history)}),
        (params.hybrid, {p: i for i, p in enumerate(task.hybrid)}),
    ]
    place = {}
    for p in out:
        v = 1 / (1 + ev_rank[p]) if p in ev_rank else 0.0
        place[p] = v + sum(w / (1 + ranks[p]) for w, ranks in lists if w and p in ranks)
    out.sort(key=lambda p: (-place[p], p))
    if (
        params.margin is not None
        and out
        and task.hybrid
        and out[0] != task.hybrid[0]
        and task.hybrid[0] in place
    ):
        first, searched = out[0], task.hybrid[0]
        if params.margin_on == "place":
            ahead = place[first] - place[searched]
        else:
            ahead = top_rel.get(first, 0.0) - top_rel.get(searched, 0.0)
        if ahead < params.margin:
            out = [searched, *(p for p in out if p != searched)]
    return out


def metrics(tasks: Sequence[Task], ranked: Sequence[Sequence[str]]) -> dict[str, float]:
    """Acc@k (every gold file within the top k), R@k (share of them), MRR, in percent
    (MRR as a fraction)."""
    out = dict.fromkeys(["acc1", "acc5", "r1", "r5", "mrr"], 0.0)
    for t, files in zip(tasks, ranked, strict=True):
        for k in (1, 5):
            top = set(files[:k])
            out[f"acc{k}"] += float(t.gold <= top)
            out[f"r{k}"] += len(t.gold & top) / len(t.gold)
        out["mrr"] += next((1 / (i + 1) for i, f in enumerate(files) if f in t.gold), 0.0)
    n = len(tasks) or 1
    return {k: (v / n if k == "mrr" else 100 * v / n) for k, v in out.items()}


def score_of(tasks: Sequence[Task], params: Params) -> dict[str, float]:
    return metrics(tasks, [replay(t, params) for t in tasks])


# -- fitting -----------------------------------------------------------------------------


def fit_evaluator(
    tasks: Sequence[Task], start: Sequence[float], only: Sequence[str] | None = None
) -> tuple[float, ...]:
    """The semantic model's log-odds refitted on `tasks`' evaluations (label: the
    candidate lies in a gold file), as benchmarks/calibrate.py fits: Newton's method with a
    ridge of 1 (a smaller one lets a feature that separates a fold's few cases run off);
    FIXED weights held; features constant over `tasks` (or not in `only`) keep `start`'s;
    symbol and path held at 0 or above (the score carries them)."""
    X = np.vstack([t.X[t.semantic] for t in tasks])
    y = np.concatenate([t.label[t.semantic] for t in tasks])
    cols = [0] + [
        i + 1
        for i, k in enumerate(NAMES)
        if k not in FIXED and X[:, i + 1].std() > 0 and (only is None or k in only)
    ]
    w = np.array(start, dtype=float)
    for k, v in FIXED.items():
        w[NAMES.index(k) + 1] = v
    free = np.zeros(len(cols))
    free[:] = w[cols]
    rest = [i for i in range(len(w)) if i not in cols]
    offset = X[:, rest] @ w[rest]
    A = X[:, cols]
    for _ in range(50):
        p = 1 / (1 + np.exp(-(A @ free + offset)))
        grad = A.T @ (p - y) + free
        hess = (A * (p * (1 - p))[:, None]).T @ A + np.eye(len(cols))
        step = np.linalg.solve(hess, grad)
        free -= step
        if np.abs(step).max() < 1e-8:
            break
    w[cols] = free
    for k in ("symbol", "path"):
        w[NAMES.index(k) + 1] = max(w[NAMES.index(k) + 1], 0.0)
    return tuple(float(v) for v in w)


def objective(m: dict[str, float]) -> tuple[float, float, float]:
    return (m["mrr"], m["acc1"], m["acc5"])


def best_of(tasks: Sequence[Task], grid: Sequence[Params]) -> Params:
    return max(grid, key=lambda p: objective(score_of(tasks, p)))


FUSION_GRID = {
    "relevance": (0.3, 0.5, 0.7),
    "words": (0.0, 0.2, 0.4),
    "closeness": (0.0, 0.3, 0.6),
    "history": (0.0, 0.25, 0.5, 0.75),
}
MARGINS = (-0.1, -0.05, 0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 10.0)
HYBRID_WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)


def fusion_grid(base: Params) -> list[Params]:
    keys = list(FUSION_GRID)
    return [
        dataclasses.replace(base, **dict(zip(keys, values, strict=True)))
        for values in itertools.product(*(FUSION_GRID[k] for k in keys))
    ]


# Each model: (name, free parameters, how it is fitted on a training part).
Fitter = Callable[[Sequence[Task]], Params]
SHIPPED = Params()


def _refit(train: Sequence[Task]) -> Params:
    semantic = fit_evaluator(train, SHIPPED.semantic)
    return best_of(train, fusion_grid(dataclasses.replace(SHIPPED, semantic=semantic)))


def _evaluator_only(train: Sequence[Task]) -> Params:
    return dataclasses.replace(SHIPPED, semantic=fit_evaluator(train, SHIPPED.semantic))


# The evaluator's strongest evidence on the dev split; the rest held at the shipped values.
FEW = ("coverage", "score", "summary")


def _few_features(train: Sequence[Task]) -> Params:
    return dataclasses.replace(SHIPPED, semantic=fit_evaluator(train, SHIPPED.semantic, FEW))


def _refit_then_margin(train: Sequence[Task]) -> Params:
    refit = _refit(train)
    grid = [dataclasses.replace(refit, margin=m, margin_on="relevance") for m in MARGINS]
    return best_of(train, grid)


def _margin(on: str) -> Fitter:
    def fitter(train: Sequence[Task]) -> Params:
        grid = [dataclasses.replace(SHIPPED, margin=m, margin_on=on) for m in MARGINS]
        return best_of(train, grid)

    return fitter


def _hybrid_list(train: Sequence[Task]) -> Params:
    return best_of(train, [dataclasses.replace(SHIPPED, hybrid=w) for w in HYBRID_WEIGHTS])


MODELS: list[tuple[str, str, Fitter | None]] = [
    ("(a) hybrid search alone", "0", None),
    ("(b) ask, shipped values (fitted on all of dev)", "0 here", lambda t: SHIPPED),
    ("(c) ask, evaluator and fusion refitted per fold", "11 + 4", _refit),
    ("(c1) ask, the evaluator alone refitted per fold", "11", _evaluator_only),
    ("(c2) ask, the evaluator's intercept and 3 strongest refitted", "4", _few_features),
    ("(c3) (c), then (d2)'s margin, per fold", "11 + 4 + 1", _refit_then_margin),
    (
        "(d1) shipped; search's first file first unless ask's beats its place by m",
        "1",
        _margin("place"),
    ),
    (
        "(d2) shipped; search's first file first unless ask's beats its relevance by m",
        "1",
        _margin("relevance"),
    ),
    ("(d3) shipped + the search's file ranking as a reciprocal-rank list", "1", _hybrid_list),
    (
        "(d4) shipped + the search's ranking at weight 1",
        "0",
        lambda t: dataclasses.replace(SHIPPED, hybrid=1.0),
    ),
]


def folds_of(tasks: Sequence[Task], k: int, seed: int, how: str) -> list[int]:
    """Each task's fold. "stratified": each repository's tasks shuffled (fixed seed) and
    dealt round the folds, so every fold holds a share of every repository, as the dev
    split and the rest of SWE-bench Lite each do; "repository": whole repositories per
    fold, largest first into the smallest fold."""
    fold = [0] * len(tasks)
    by_repo: dict[str, list[int]] = {}
    for i, t in enumerate(tasks):
        by_repo.setdefault(t.repo, []).append(i)
    if how == "stratified":
        rng = random.Random(seed)
        dealt = 0
        for repo in sorted(by_repo):
            idx = sorted(by_repo[repo], key=lambda i: tasks[i].id)
            rng.shuffle(idx)
            for i in idx:
                fold[i] = dealt % k
                dealt += 1
        return fold
    sizes = [0] * k
    for repo in sorted(by_repo, key=lambda r: (-len(by_repo[r]), r)):
        f = sizes.index(min(sizes))
        for i in by_repo[repo]:
            fold[i] = f
        sizes[f] += len(by_repo[repo])
    return fold


def crossvalidate(
    tasks: Sequence[Task], fitter: Fitter | None, fold: Sequence[int], k: int
) -> tuple[list[list[str]], list[Params]]:
    ranked: list[list[str]] = [[] for _ in tasks]
    fitted = []
    for f in range(k):
        train = [t for t, g in zip(tasks, fold, strict=True) if g != f]
        params = fitter(train) if fitter else None
        fitted.append(params)
        for i, t in enumerate(tasks):
            if fold[i] == f:
                ranked[i] = replay(t, params) if params else t.hybrid
    return ranked, fitted


def _row(name: str, m: dict[str, float], extra: str = "") -> str:
    return f"| {name} | {m['acc1']:.1f} | {m['acc5']:.1f} | {m['mrr']:.3f} |{extra}"


def _describe(p: Params | None) -> str:
    if p is None:
        return ""
    if p.margin is not None:
        return f"margin {p.margin:g}"
    if p.hybrid:
        return f"search list {p.hybrid:g}"
    if p == SHIPPED:
        return ""
    return (
        f"rel {p.relevance:g} words {p.words:g} close {p.closeness:g} hist {p.history:g}"
        f" summary {p.semantic[NAMES.index('summary') + 1]:.2f}"
    )


def fit(args: argparse.Namespace) -> None:
    tasks = load(args.record)
    same = sum(replay(t, SHIPPED)[:5] == t.ask[:5] for t in tasks)
    print(f"{len(tasks)} tasks; the replay gives `ask`'s recorded top 5 for {same}")
    in_sample = metrics(tasks, [replay(t, SHIPPED) for t in tasks])
    print(_row("ask as recorded (replayed, in-sample)", in_sample))
    for how in ("stratified", "repository"):
        fold = folds_of(tasks, args.folds, args.seed, how)
        sizes = [fold.count(f) for f in range(args.folds)]
        print(f"\n{args.folds} folds, {how} (seed {args.seed}), sizes {sizes}: held-out figures")
        print("| model | free parameters | Acc@1 | Acc@5 | MRR | fitted per fold |")
        print("|---|---|---|---|---|---|")
        for name, free, fitter in MODELS:
            ranked, fitted = crossvalidate(tasks, fitter, fold, args.folds)
            m = metrics(tasks, ranked)
            per_fold = "; ".join(dict.fromkeys(_describe(p) for p in fitted if p))
            print(
                f"| {name} | {free} | {m['acc1']:.1f} | {m['acc5']:.1f} | {m['mrr']:.3f} "
                f"| {per_fold} |"
            )
    outside = load(args.outside) if args.outside else []
    print("\n(d2)'s margin, unfitted: every task at each value")
    print("| margin | dev Acc@1 | dev Acc@5 | dev MRR | outside R@1 | outside R@5 | outside MRR |")
    print("|---|---|---|---|---|---|---|")
    for margin in (None, *MARGINS):
        params = dataclasses.replace(SHIPPED, margin=margin, margin_on="relevance")
        m, o = score_of(tasks, params), score_of(outside, params)
        print(
            f"| {'off' if margin is None else f'{margin:g}'} | {m['acc1']:.1f} | {m['acc5']:.1f} "
            f"| {m['mrr']:.3f} | {o['r1']:.1f} | {o['r5']:.1f} | {o['mrr']:.3f} |"
        )
    if outside:
        print(f"\nOutside the split ({len(outside)} history tasks), fitted on all {len(tasks)}:")
        print("| model | R@1 | R@5 | MRR | fitted |")
        print("|---|---|---|---|---|")
        for name, _, fitter in MODELS:
            params = fitter(tasks) if fitter else None
            ranked = [replay(t, params) if params else t.hybrid for t in outside]
            m = metrics(outside, ranked)
            print(
                f"| {name} | {m['r1']:.1f} | {m['r5']:.1f} | {m['mrr']:.3f} | {_describe(params)} |"
            )


if __name__ == "__main__":
    main()
