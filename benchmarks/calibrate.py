"""Calibrate the offline evaluator on a SWE-bench-style dataset.

Usage:
    python benchmarks/calibrate.py --dataset DEV.jsonl --repos CLONES --work DIR
        [--repo OWNER/NAME] [--limit N] [--features OUT.jsonl] [--fit-only]
        [--embed none|files|all] [--predictions PRED.jsonl]

For every instance the repository is synced to its base commit and indexed (lexical only
unless `--embed files|all`, reusing DIR as `dowse eval swebench` does), `ask` runs on the
issue text, and every candidate the evaluator scored is written with its features, its
signals, its relevance and its label (its file is one the fix changed). Then it prints

- the reliability table: per relevance band, how many candidates and what share lie in a
  gold file (the bands should mean what the rubric says: high bands mostly gold);
- a logistic fit of the label on the features, with the weights' log-odds, and the share
  of gold candidates per band of the fitted probability.

`--fit-only` refits from an existing `--features` file without running anything.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np  # noqa: E402

from dowse.evaluation.swebench import indexed_instances, load_dataset, unrecorded  # noqa: E402
from dowse.indexer.build import EMBED_SCOPES, IndexConfig, embed_flags  # noqa: E402
from dowse.languages import TEXT_LANGUAGES, language_for  # noqa: E402
from dowse.retrieval.ask import ask  # noqa: E402
from dowse.retrieval.evaluate import Evaluation, Features, OfflineEvaluator, relevance_of  # noqa: E402
from dowse.retrieval.hybrid import HybridSearcher  # noqa: E402
from dowse.retrieval.pool import Candidate  # noqa: E402
from dowse.retrieval.query import QueryAnalysis  # noqa: E402

FEATURES = [
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
    "summary",
    "raised",
]
BANDS = [(0.0, 0.2), (0.2, 0.5), (0.5, 0.7), (0.7, 0.8), (0.8, 1.01)]


class Recorder(OfflineEvaluator):
    """The offline evaluator, writing down what it saw."""

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
        for c, f, e in zip(candidates, self.features(analysis, candidates), evals, strict=True):
            self.rows.append(
                {
                    "file": c.row["path"],
                    "id": c.id,
                    "relevance": e.relevance,
                    "score": c.score,
                    "cycle": self.cycle,
                    "signals": c.signals,
                    **{f"f_{k}": float(getattr(f, k)) for k in FEATURES},
                }
            )
        return evals


def collect(args: argparse.Namespace) -> None:
    dataset = [i for i in load_dataset(args.dataset) if not args.repo or i.repo == args.repo]
    embedder: Any = _NoEmbed()
    config = IndexConfig(embed=False)
    factory = None
    if args.embed != "none":
        from dowse.indexer.embed import get_embedder

        embedder = get_embedder()
        embed, embed_chunks = embed_flags(args.embed)
        config = IndexConfig(embed=embed, embed_chunks=embed_chunks, workers=1)
        factory = lambda: embedder  # noqa: E731
    predictions = args.predictions.open("a") if args.predictions else None
    todo = unrecorded(dataset, args.features)
    snapshots = indexed_instances(todo, args.repos, args.work, embedder=embedder, config=config)
    with args.features.open("a") as out:
        for n, (inst, store) in enumerate(itertools.islice(snapshots, args.limit or None), 1):
            searcher = HybridSearcher(store, factory)
            rec = Recorder()
            answer = ask(
                searcher, inst.problem_statement, budget=4000, evaluator=rec, with_trace=False
            )
            if predictions is not None:
                predictions.write(
                    json.dumps(
                        {
                            "instance_id": inst.instance_id,
                            "found_files": [f.path for f in answer.files][:20],
                            "context_files": list(dict.fromkeys(b.path for b in answer.context)),
                            "tokens": answer.tokens,
                        }
                    )
                    + "\n"
                )
                predictions.flush()
            gold = set(inst.gold_files)
            for row in rec.rows:
                row.update(instance_id=inst.instance_id, gold=row["file"] in gold)
                out.write(json.dumps(row) + "\n")
            out.flush()
            print(
                f"{n:4d} {inst.instance_id}: {len(rec.rows)} candidates, "
                f"{sum(r['gold'] for r in rec.rows)} in gold files",
                file=sys.stderr,
            )


class _NoEmbed:
    """The model name an existing lexical work index was made with (never embeds)."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def embed(self, texts: Sequence[str]) -> Any:
        raise RuntimeError("lexical calibration never embeds")


def _bands(values: np.ndarray, labels: np.ndarray, title: str) -> None:
    print(f"\n{title}")
    print(f"{'band':<12} {'n':>7} {'gold share':>11}")
    for lo, hi in BANDS:
        mask = (values >= lo) & (values < hi)
        n = int(mask.sum())
        share = float(labels[mask].mean()) if n else float("nan")
        print(f"{lo:.1f}-{min(hi, 1.0):.1f}    {n:>7} {share:>11.3f}")


def _features(row: dict[str, Any]) -> dict[str, Any]:
    """The evaluator's features of a recorded row, as `Features` takes them."""
    return {k: _feature(row, k) for k in FEATURES}


def _feature(row: dict[str, Any], name: str) -> float:
    """A feature of a recorded row; rows recorded before a feature existed derive it."""
    if f"f_{name}" in row:
        value = float(row[f"f_{name}"])
        return min(value, 1.5) if name == "score" else value
    if name == "score":
        return min(float(row["score"]), 1.5)
    if name == "text":
        return float(language_for(row["file"]) in TEXT_LANGUAGES)
    if name == "refined":
        return float(row["cycle"] > 1)
    if name in ("summary", "raised"):
        return 0.0
    raise KeyError(name)


def fit(path: Path) -> None:
    rows = [json.loads(line) for line in path.open()]
    names = FEATURES
    X = np.array([[_feature(r, k) for k in FEATURES] for r in rows], dtype=float)
    y = np.array([r["gold"] for r in rows], dtype=float)
    rel = np.array([r["relevance"] for r in rows], dtype=float)
    print(
        f"{len(rows)} candidates from {len({r['instance_id'] for r in rows})} instances, "
        f"{y.mean():.3f} in a gold file"
    )
    _bands(rel, y, "offline relevance when recorded")
    now = np.array([relevance_of(Features(**_features(r))) for r in rows])
    _bands(now, y, "offline relevance of this version (same candidates)")
    # Logistic regression by Newton's method (small, dense, well conditioned).
    A = np.hstack([np.ones((len(X), 1)), X])
    w = np.zeros(A.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-A @ w))
        grad = A.T @ (p - y) + 1e-3 * w
        hess = (A * (p * (1 - p))[:, None]).T @ A + 1e-3 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    p = 1 / (1 + np.exp(-A @ w))
    print("\nlogistic fit (log-odds per unit of each feature):")
    for name, value in zip(["intercept", *names], w, strict=True):
        print(f"  {name:<11} {value:+.3f}")
    ll = float(np.sum(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)))
    base = float(y.mean())
    ll0 = len(y) * (base * math.log(base) + (1 - base) * math.log(1 - base))
    print(f"  log-likelihood {ll:.1f} (intercept only {ll0:.1f})")
    _bands(p, y, "fitted probability")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", type=Path)
    ap.add_argument("--repos", type=Path)
    ap.add_argument("--work", type=Path)
    ap.add_argument("--repo")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument(
        "--embed",
        choices=EMBED_SCOPES,
        default="none",
        help="vectors of the work indexes (as `dowse index --embed`)",
    )
    ap.add_argument("--features", type=Path, default=Path("calibration-features.jsonl"))
    ap.add_argument("--fit-only", action="store_true")
    ap.add_argument(
        "--predictions",
        type=Path,
        default=None,
        help="also write `ask`'s ranked files (budget 4000) as score.py reads them",
    )
    args = ap.parse_args()
    if not args.fit_only:
        if not (args.dataset and args.repos and args.work):
            ap.error("--dataset, --repos and --work are needed unless --fit-only")
        collect(args)
    fit(args.features)


if __name__ == "__main__":
    main()
