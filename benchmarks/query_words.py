"""What a question's words contribute to the chunks' full-text query, and what they cost.

Usage:
    python benchmarks/query_words.py cost --index-root PATH --queries FILE.jsonl
        [--limit N] [--runs N] [--k N] [--index-dir DIR] [--repo OWNER/NAME]
        [--shares 0.2,0.1,0.05] [--rarest 64,128]
    python benchmarks/query_words.py eval --dataset DEV.jsonl --repos CLONES --work DIR
        --out OUTDIR [--repo OWNER/NAME] [--instances ID,...] [--limit N]
        [--budget N] [--shares off,0.1,0.05]
    python benchmarks/query_words.py table --dataset DEV.jsonl OUTDIR [OUTDIR ...]
    python benchmarks/query_words.py asks --index-root PATH --queries FILE.jsonl
        [--limit N] [--repeat N] [--index-dir DIR] [--repo OWNER/NAME]

`cost`: for each question, the words `pool.gather` asks the chunks' full-text index for
(`base_tokens`, then `title_tokens` once more), asked whole and with fewer words: without
the words in more than SHARE of the chunks (each share of `--shares`), and only the K
words in the fewest chunks (each K of `--rarest`). The chunks holding each word are
counted once, over the index's whole `tokens` column (exact, not the sample the look-ups
read). Prints per rule: the words asked, the full-text query's CPU (median over the
questions of each one's median of `--runs`, ids only, all threads), how many of the
whole query's `--k` best chunks it returns too, whether its 10 best are the whole
query's 10 best in the same order, and the largest share of the best score the dropped
words could add to a chunk (their BM25 bounds, idf x (k1 + 1), over the whole query's
best score).

`eval`: each instance's repository synced and indexed as `dowse eval swebench` does (the
same work directory layout), then `ask` and `hybrid` (what `dowse search` ranks) answer
once per share of `--shares`, on the same index, every full-text query of the chunks
(`IndexLookups.lexical`) without the words in more than SHARE of `SAMPLE_CHUNKS` chunks
evenly spaced over the table (`off` keeps every word: the shipped answer). Writes
OUTDIR/SHARE-METHOD.jsonl, predictions for `score.py`.

`asks`: the full-text queries of the chunks a warm `ask` makes (the searcher held as a
server's, `NARROW_ROWS`): for each question, after one `ask` to warm, `--repeat` more,
each query's words, rows asked, filter and CPU (all threads) recorded; prints per
question the queries of its first timed `ask`, then the medians over the questions of
the queries per `ask` and of their CPU summed (each question's median over its runs).

`table`: each predictions file's scores (`evaluation.swebench.score`) on the instances
every file of the OUTDIRs predicted: Acc@1/5, Recall@5, MRR, line_recall and
hunks_in_context, and per file how many instances rank a gold file higher and lower
(first gold file's rank) than the `off` file of the same method.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dowse.errors import EvalError
from dowse.evaluation.swebench import (
    load_dataset,
    load_predictions,
    prepared_runs,
    score,
    select_instances,
    unrecorded,
)
from dowse.indexer.embed import get_embedder
from dowse.indexer.store import Store
from dowse.retrieval.query import analyze, base_tokens, title_tokens

K1 = 1.2  # LanceDB's BM25 parameter
SAMPLE_CHUNKS = 1_000


def chunk_counts(store: Store) -> tuple[Counter[str], int]:
    """In how many chunks each token occurs, and the number of chunks."""
    counts: Counter[str] = Counter()
    table = store.scan("chunks", ["tokens"])
    for batch in table.column("tokens").chunks:
        for text in batch.to_pylist():
            counts.update(set((text or "").split()))
    return counts, table.num_rows


def idf(n: int, total: int) -> float:
    return math.log(1 + (total - n + 0.5) / (n + 0.5))


def asked(store: Store, words: list[str], k: int, runs: int) -> tuple[list[str], float, float]:
    """The ids the full-text query of `words` returns, its median CPU (ms) and its best
    score."""
    text = " ".join(words)
    spent, rows = [], []
    for _ in range(runs):
        start = time.process_time()
        rows = store.full_text("chunks", text, ["id", "_score"], k)
        spent.append(time.process_time() - start)
    best = max((float(r["_score"]) for r in rows), default=0.0)
    return [r["id"] for r in rows], statistics.median(spent) * 1000, best


def _questions(queries: Path, repo: str | None, limit: int) -> list[str]:
    """The first `limit` questions of a queries file (`query`, else a task's
    `problem_statement`), only `repo`'s when given."""
    rows = [json.loads(line) for line in queries.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if not repo or r.get("repo") == repo]
    return [r.get("query") or r["problem_statement"] for r in rows][:limit]


def cost(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index-root", type=Path, required=True)
    ap.add_argument("--index-dir", type=Path, help="the index, when not at INDEX_ROOT/.dowse")
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--repo", help="only the questions of this repository (`repo` field)")
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--k", type=int, default=60, help="rows asked for (a search's pool: 60)")
    ap.add_argument("--shares", default="0.2,0.1,0.05,0.02")
    ap.add_argument("--rarest", default="64,128")
    args = ap.parse_args(argv)
    store = Store.open(args.index_dir or args.index_root / ".dowse")
    questions = _questions(args.queries, args.repo, args.limit)
    counts, total = chunk_counts(store)
    store.full_text("chunks", "warm up", ["id", "_score"], args.k)
    shares = [float(s) for s in args.shares.split(",") if s]
    rarest = [int(s) for s in args.rarest.split(",") if s]
    rules = ["whole", *(f"share>{s:g} dropped" for s in shares), *(f"{k} rarest" for k in rarest)]
    stats: dict[str, dict[str, list[float]]] = {r: {} for r in rules}
    for question in questions:
        analysis = analyze(question)
        words = [*base_tokens(analysis), *title_tokens(analysis)]
        whole, cpu, best = asked(store, words, args.k, args.runs)
        distinct = list(dict.fromkeys(words))
        variants: dict[str, list[str]] = {"whole": words}
        for s in shares:
            variants[f"share>{s:g} dropped"] = [w for w in words if counts[w] <= s * total]
        by_count = sorted(distinct, key=lambda w: (counts[w], w))
        for k in rarest:
            kept = set(by_count[:k])
            variants[f"{k} rarest"] = [w for w in words if w in kept]
        for rule, kept_words in variants.items():
            ids, spent, _ = (
                (whole, cpu, best) if rule == "whole" else asked(store, kept_words, args.k, 3)
            )
            dropped = set(distinct) - set(kept_words)
            bound = sum(idf(counts[w], total) * (K1 + 1) for w in dropped)
            got = stats[rule]
            got.setdefault("words", []).append(len(set(kept_words)))
            got.setdefault("cpu", []).append(spent)
            got.setdefault("overlap", []).append(len(set(ids) & set(whole)))
            got.setdefault("top10", []).append(float(ids[:10] == whole[:10]))
            got.setdefault("bound", []).append(bound / best if best else 0.0)
    print(f"{len(questions)} questions, {total} chunks, {len(counts)} distinct tokens")
    print(
        f"rule | words (median) | CPU ms (median) | of the whole query's {args.k} best "
        "(mean) | same 10 best | dropped words' bound / best score (median)"
    )
    print("--- | --- | --- | --- | --- | ---")
    for rule in rules:
        got = stats[rule]
        print(
            f"{rule} | {statistics.median(got['words']):.0f} | {statistics.median(got['cpu']):.1f}"
            f" | {statistics.mean(got['overlap']):.1f} | {sum(got['top10']):.0f}/{len(questions)}"
            f" | {statistics.median(got['bound']):.2f}"
        )


def sampled_counts(store: Store) -> tuple[dict[str, int], int]:
    """In how many of `SAMPLE_CHUNKS` chunks, evenly spaced over the chunks table (every
    chunk of a smaller one), each token occurs, and how many chunks that is."""
    total = store.count("chunks")
    size = min(total, SAMPLE_CHUNKS)
    if not size:
        return {}, 0
    texts = store.scan("chunks", ["tokens"]).column("tokens").to_pylist()
    counts: Counter[str] = Counter()
    for i in range(size):
        counts.update(set((texts[i * total // size] or "").split()))
    return dict(counts), size


def without_common(
    asked: Callable[..., Any],
    counts: dict[str, int],
    size: int,
    share: float | None,
    tokens: Sequence[str],
    *rest: Any,
) -> Any:
    """`asked` (an `IndexLookups.lexical`) of `tokens` without those in more than `share`
    of the sampled chunks (all of them when every one is; every token when None)."""
    if share is not None:
        tokens = [t for t in tokens if counts.get(t, 0) <= share * size] or list(tokens)
    return asked(tokens, *rest)


def evaluate(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--repo")
    ap.add_argument("--instances", default="")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--budget", type=int, default=4000)
    ap.add_argument("--shares", default="off,0.1")
    args = ap.parse_args(argv)
    shares = {s: None if s == "off" else float(s) for s in args.shares.split(",") if s}
    try:
        chosen = select_instances(
            load_dataset(args.dataset),
            instances=[i for i in args.instances.split(",") if i],
            repo=args.repo,
            limit=args.limit,
            source=args.dataset,
        )
    except EvalError as e:
        raise SystemExit(f"query_words: {e}") from None
    args.out.mkdir(parents=True, exist_ok=True)
    methods = ("ask", "hybrid")
    outs = {(s, m): args.out / f"{s}-{m}.jsonl" for s in shares for m in methods}
    pending = {key: {i.instance_id for i in unrecorded(chosen, path)} for key, path in outs.items()}
    todo = [i for i in chosen if any(i.instance_id in ids for ids in pending.values())]
    runs = prepared_runs(todo, args.repos, args.work, embedder=get_embedder(), budget=args.budget)
    for inst, run, seconds in runs:
        lookups = run.searcher.lookups
        counts, size = sampled_counts(run.store)
        asked = lookups.lexical
        for name, share in shares.items():
            lookups.lexical = functools.partial(without_common, asked, counts, size, share)
            for method in methods:
                if inst.instance_id not in pending[(name, method)]:
                    continue
                answer = run.query(method, inst.problem_statement)
                pred = answer.prediction(inst.instance_id, method, seconds["dowse"])
                with outs[(name, method)].open("a", encoding="utf-8") as out:
                    out.write(pred.model_dump_json() + "\n")
        print(inst.instance_id, file=sys.stderr, flush=True)


def table(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("outdirs", type=Path, nargs="+")
    args = ap.parse_args(argv)
    files = sorted(p for d in args.outdirs for p in d.glob("*-*.jsonl"))
    preds = {p: {r.instance_id: r for r in load_predictions(p)} for p in files}
    common = set.intersection(*(set(v) for v in preds.values())) if preds else set()
    chosen = [i for i in load_dataset(args.dataset) if i.instance_id in common]

    def rank(pred: Any, gold: set[str]) -> int:
        return next((i for i, f in enumerate(pred.found_files) if f in gold), 10**6)

    print(f"{len(chosen)} instances")
    print("file | Acc@1 | Acc@5 | Recall@5 | MRR | line_recall | hunks | up / down vs off")
    print("--- | --- | --- | --- | --- | --- | --- | ---")
    for path in files:
        got = score(chosen, preds[path])
        base = path.with_name("off-" + path.name.split("-", 1)[1])
        moved = ""
        if base in preds and base != path:
            ranks = [
                (
                    rank(preds[path][i.instance_id], set(i.gold_files)),
                    rank(preds[base][i.instance_id], set(i.gold_files)),
                )
                for i in chosen
            ]
            moved = f"{sum(a < b for a, b in ranks)} / {sum(a > b for a, b in ranks)}"
        print(
            f"{path.parent.name}/{path.stem} | {got.acc[1]} | {got.acc[5]} | {got.recall[5]}"
            f" | {got.mrr} | {got.line_recall} | {got.hunks_in_context} | {moved}"
        )


def asks(argv: list[str]) -> None:
    from dowse.retrieval.ask import ask
    from dowse.retrieval.hybrid import HybridSearcher
    from dowse.retrieval.lookups import NARROW_ROWS, IndexLookups

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index-root", type=Path, required=True)
    ap.add_argument("--index-dir", type=Path, help="the index, when not at INDEX_ROOT/.dowse")
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--repo", help="only the questions of this repository (`repo` field)")
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    store = Store.open(args.index_dir or args.index_root / ".dowse")
    questions = _questions(args.queries, args.repo, args.limit)
    searcher = HybridSearcher(store, None, lookups=IndexLookups(store, narrow_rows=NARROW_ROWS))
    searcher.warm()
    asked: list[tuple[int, int, str, float]] = []
    full_text = store.full_text

    def timed(name: str, text: str, columns: Any, k: int, where: str | None = None) -> Any:
        start = time.process_time()
        out = full_text(name, text, columns, k, where)
        asked.append((len(text.split()), k, (where or "")[:30], time.process_time() - start))
        return out

    store.full_text = timed  # type: ignore[method-assign]
    counts, spent = [], []
    for n, question in enumerate(questions):
        ask(searcher, question)
        runs = []
        for _ in range(args.repeat):
            asked.clear()
            ask(searcher, question)
            runs.append(list(asked))
        print(
            f"question {n}: "
            + ", ".join(
                f"{w} words k={k} {where!r} {1000 * c:.1f} ms" for w, k, where, c in runs[0]
            )
        )
        counts.append(len(runs[0]))
        spent.append(statistics.median(sum(c for *_, c in run) for run in runs) * 1000)
    print(
        f"median: {statistics.median(counts)} full-text queries per ask, "
        f"{statistics.median(spent):.1f} ms of CPU"
    )


def main() -> None:
    commands = {"asks": asks, "cost": cost, "eval": evaluate, "table": table}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        raise SystemExit(f"usage: query_words.py {{{','.join(commands)}}} ...")
    commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
