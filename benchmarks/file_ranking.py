"""Record what `ask` ranks files from, then try other file rankings offline in seconds.

Usage:
    python benchmarks/file_ranking.py record --dataset DEV.jsonl --repos CLONES --work DIR
        --out REC.jsonl [--repo OWNER/NAME] [--limit N] [--embed files|none]
    python benchmarks/file_ranking.py replay REC.jsonl

`record` syncs each instance's repository to its base commit and indexes it (reusing DIR
as `dowse eval swebench` does), runs the retrieval loop once on the issue text and writes
one line per instance (resumable): the gold files; `final`, the file ranking `ask` returns;
every evaluated chunk's relevance and fused retrieval score by file; the whole-file word
ranking (40 files); the ranking by closeness in meaning (40, as `ask` fuses it: tests
and docs only when asked for) and every file's closeness (the first 60, under `summary`);
the ranking by past commits (40, `files_by_history`); and the in-repository imports from
and to the first 30 files.

`replay` ranks files again from those records: first as `ask` does (it must reproduce
`final` exactly, or the records are stale), then with other weights — the evaluated
ranking's mix of relevance and retrieval score, the multi-part bonus, the word ranking's
weight and depth, the closeness and history rankings' weights and depths, and import
neighbours as a further reciprocal-rank list — printing Acc@1/3/5/10 (every gold file
within the top k) and MRR for each.
A file ranking change that does not move these numbers needs no full evaluation run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dowse.evaluation.swebench import indexed_instances, load_dataset, unrecorded  # noqa: E402
from dowse.indexer.build import IndexConfig, embed_flags  # noqa: E402
from dowse.indexer.embed import get_embedder  # noqa: E402
from dowse.indexer.store import Store, quote_list  # noqa: E402
from dowse.languages import is_documentation, is_test_path, language_for  # noqa: E402

# The ranking `ask` delivers, from its own helpers, so that `final` is what ask returns.
from dowse.retrieval.ask import Packing, _files  # noqa: E402
from dowse.retrieval.file_ranking import (  # noqa: E402
    FileRankingConfig,
    files_by_closeness,
    files_by_history,
    files_by_words,
)
from dowse.retrieval.fusion import FileFusion  # noqa: E402
from dowse.retrieval.hybrid import HybridSearcher  # noqa: E402
from dowse.retrieval.loop import run_loop  # noqa: E402

FUSION = FileFusion()
RANKING = FileRankingConfig()

Record = dict[str, Any]


def record(args: argparse.Namespace) -> None:
    dataset = [i for i in load_dataset(args.dataset) if not args.repo or i.repo == args.repo]
    embed, embed_chunks = embed_flags(args.embed)
    embedder = get_embedder()  # names the model in the manifest even when nothing embeds
    factory = (lambda: embedder) if embed else None
    config = IndexConfig(embed=embed, embed_chunks=embed_chunks)
    todo = unrecorded(dataset, args.out)
    snapshots = indexed_instances(todo, args.repos, args.work, embedder=embedder, config=config)
    with args.out.open("a") as out:
        for n, (inst, store) in enumerate(itertools.islice(snapshots, args.limit or None), 1):
            searcher = HybridSearcher(store, factory)
            out.write(json.dumps(_record_one(searcher, store, inst)) + "\n")
            out.flush()
            print(f"{n:4d} {inst.instance_id}", file=sys.stderr)


def _record_one(searcher: HybridSearcher, store: Store, inst: Any) -> Record:
    t = time.perf_counter()
    result = run_loop(searcher, inst.problem_statement)
    items = [it for it in result.items if it.relevance >= Packing().min_relevance]
    by_words = files_by_words(searcher.lookups, result.analysis, limit=40)
    by_closeness = files_by_closeness(
        searcher.lookups, searcher.questions, result.analysis, limit=40
    )
    by_history = files_by_history(searcher.lookups, result.analysis, limit=40)
    final = [
        f.path
        for f in _files(
            items,
            by_words[: RANKING.word_files],
            by_closeness[: RANKING.close_files],
            by_history[: RANKING.history_files],
        )
    ]
    seconds = time.perf_counter() - t
    cosines = searcher.questions.question_cosines(inst.problem_statement)
    summary = [(p, round(sim, 4)) for p, sim in cosines.nearest(60)] if cosines else []
    chunks: dict[str, list[tuple[float, float]]] = {}
    for it in result.items:
        chunks.setdefault(it.hit.path, []).append((it.relevance, it.hit.score))
    top = final[:30]
    imports: list[tuple[str, str]] = []
    if top:
        listed = quote_list(top)
        rows = [
            *store.rows("imports", ["path", "resolved"], where=f"path IN ({listed})"),
            *store.rows("imports", ["path", "resolved"], where=f"resolved IN ({listed})"),
        ]
        imports = sorted(
            {
                (r["path"], r["resolved"])
                for r in rows
                if r["resolved"] and r["resolved"] != r["path"]
            }
        )
    return {
        "instance_id": inst.instance_id,
        "gold": inst.gold_files,
        "final": final,
        "chunks": chunks,
        "words": [p for p, _ in by_words],
        "close": [p for p, _ in by_closeness],
        "history": [p for p, _ in by_history],
        "summary": summary,
        "imports": imports,
        "seconds": round(seconds, 3),
    }


# -- replay ------------------------------------------------------------------------------


def _aside(path: str) -> bool:
    """Tests and documentation, which the word and summary lists leave out."""
    return is_test_path(path) or is_documentation(path, language_for(path))


def rank(
    rec: Record,
    *,
    weight: float = FUSION.relevance,
    score_cap: float = 1.0,
    bonus: float = 0.05,
    bonus_cap: float = 0.1,
    words_weight: float = FUSION.words,
    words_depth: int = RANKING.word_files,
    closeness_weight: float = FUSION.closeness,
    closeness_depth: int = RANKING.close_files,
    history_weight: float = FUSION.history,
    history_depth: int = RANKING.history_files,
    import_weight: float = 0.0,
    import_top: int = 3,
) -> list[str]:
    """Files best first: the evaluated files by relevance and retrieval score (as
    `ask`'s rank_score, a bonus per further relevant part), as reciprocal ranks, plus
    the other lists' reciprocal ranks at their weights."""
    scored = []
    for path, parts in rec["chunks"].items():
        kept = [(rel, score) for rel, score in parts if rel >= Packing().min_relevance]
        if kept:
            best = max(weight * rel + (1 - weight) * min(score, score_cap) for rel, score in kept)
            scored.append((path, best + min(bonus * (len(kept) - 1), bonus_cap)))
    scored.sort(key=lambda x: (-x[1], x[0]))
    place = {p: 1 / (1 + i) for i, (p, _) in enumerate(scored)}
    for i, p in enumerate(rec["words"][:words_depth]):
        place[p] = place.get(p, 0.0) + words_weight / (1 + i)
    if closeness_weight:
        near = (
            rec["close"]
            if "close" in rec  # as `files_by_closeness` ranks
            else [p for p, _ in rec["summary"] if not _aside(p)]
        )[:closeness_depth]
        for i, p in enumerate(near):
            place[p] = place.get(p, 0.0) + closeness_weight / (1 + i)
    # As `ask`: the history only reorders the files the other rankings listed.
    for i, p in enumerate(rec.get("history", [])[:history_depth]):
        if p in place:
            place[p] += history_weight / (1 + i)
    if import_weight:
        top = sorted(place, key=lambda p: (-place[p], p))[:import_top]
        lift: dict[str, float] = {}
        for a, b in rec["imports"]:
            for src, dst in ((a, b), (b, a)):
                if src in top and not _aside(dst):
                    lift[dst] = lift.get(dst, 0.0) + import_weight * place[src]
        for p, extra in lift.items():
            place[p] = place.get(p, 0.0) + extra
    return sorted(place, key=lambda p: (-place[p], p))


def scores(recs: Sequence[Record], ranked: Sequence[Sequence[str]]) -> str:
    cells = []
    for k in (1, 3, 5, 10):
        hits = sum(
            all(g in r[:k] for g in rec["gold"]) for rec, r in zip(recs, ranked, strict=True)
        )
        cells.append(f"{100 * hits / len(recs):5.1f}")
    mrr = sum(
        next((1 / (i + 1) for i, p in enumerate(r) if p in rec["gold"]), 0.0)
        for rec, r in zip(recs, ranked, strict=True)
    ) / len(recs)
    return " ".join(cells) + f"  {mrr:.3f}"


def replay(args: argparse.Namespace) -> None:
    recs = [json.loads(line) for line in args.records.open()]
    if not recs:
        sys.exit(f"no records in {args.records}")
    as_ask = [rank(r) for r in recs]
    stale = sum(a != r["final"] for a, r in zip(as_ask, recs, strict=True))
    print(f"{len(recs)} instances; columns Acc@1 Acc@3 Acc@5 Acc@10 MRR")
    print(f"{'recorded (ask)':<40} {scores(recs, [r['final'] for r in recs])}")
    print(
        f"{'replayed as ask ranks':<40} {scores(recs, as_ask)}"
        + (f"  ({stale} rankings differ: records from other code)" if stale else "")
    )
    grids: list[tuple[str, Callable[..., list[str]], list[dict[str, Any]]]] = [
        (
            "relevance weight, score cap",
            rank,
            [
                {"weight": w, "score_cap": c}
                for w, c in itertools.product((0.3, 0.4, 0.6, 0.7, 0.8), (1.0, 1.5, 2.0))
            ],
        ),
        (
            "multi-part bonus, its cap",
            rank,
            [
                {"bonus": b, "bonus_cap": c}
                for b, c in itertools.product((0.0, 0.03, 0.1), (0.1, 0.2))
            ],
        ),
        (
            "word ranking weight, depth",
            rank,
            [
                {"words_weight": w, "words_depth": d}
                for w, d in itertools.product((0.0, 0.1, 0.3, 0.5), (10, 20, 40))
            ],
        ),
        (
            "closeness ranking weight, depth",
            rank,
            [
                {"closeness_weight": w, "closeness_depth": d}
                for w, d in itertools.product((0.0, 0.1, 0.2, 0.3, 0.5), (5, 10, 20))
            ],
        ),
        (
            "history ranking weight, depth",
            rank,
            [
                {"history_weight": w, "history_depth": d}
                for w, d in itertools.product((0.0, 0.2, 0.3, 0.5, 0.7, 1.0), (5, 10, 20))
            ],
        ),
        (
            "import neighbours weight, of the top",
            rank,
            [
                {"import_weight": w, "import_top": t}
                for w, t in itertools.product((0.05, 0.1, 0.2, 0.4), (1, 3, 5))
            ],
        ),
    ]
    for title, ranker, settings in grids:
        print(f"\n{title}")
        for kw in settings:
            label = ", ".join(f"{k}={v}" for k, v in kw.items())
            print(f"  {label:<38} {scores(recs, [ranker(r, **kw) for r in recs])}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run the loop per instance and record its evidence")
    rec.add_argument("--dataset", type=Path, required=True)
    rec.add_argument("--repos", type=Path, required=True)
    rec.add_argument("--work", type=Path, required=True)
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("--repo")
    rec.add_argument("--limit", type=int, default=0)
    rec.add_argument("--embed", choices=("files", "none"), default="files")
    rep = sub.add_parser("replay", help="rank files again from the records")
    rep.add_argument("records", type=Path)
    args = ap.parse_args()
    record(args) if args.command == "record" else replay(args)


if __name__ == "__main__":
    main()
