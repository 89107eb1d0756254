"""Query latency on a warm index: `search` and `ask` (offline evaluator), p50 and p95.

Usage:
    python benchmarks/query_bench.py --index-root PATH [--queries FILE.jsonl] [--limit N]
        [--repeat N] [--phases] [--no-hold | --hold-rows N] [--narrow-rows N] [--index-dir DIR]
        [--no-query-graph] [--interleave] [--profile FILE] [--answers DIR]

`--queries` takes a JSONL file with a `problem_statement` (SWE-bench format) or `query`
field per line; without it a small built-in set of code questions is used. Each query is
run once to warm caches, then timed (`--repeat N`: N times, its median kept, which steadies
the figures on a machine whose neighbours take CPU). The embedder is the one matching the
index's model (loaded once, before timing). Also prints the process CPU time of `search`
and `ask` (all threads; a machine whose neighbours take the cores inflates it far less
than wall time) and the calling thread's own (`time.thread_time`), the cold time of
one `dowse ask` process, and, when `rg` (ripgrep) is installed, its time for the same
keywords on the same tree. `--no-hold` makes every
look-up a LanceDB query (`memory_rows` and `narrow_rows` 0), to measure what holding the
index's rows in memory buys (`--hold-rows N`: the chunks with their text held up to N rows,
`--narrow-rows N`: the tables without text up to N rows each, by default as a server's
searcher holds them, `NARROW_ROWS`);
`--no-query-graph` embeds questions on the int8 graph the index's texts use instead of
the fully quantised one (`OnnxEmbedder.embed_queries`). `--interleave` times only
`search`, with and without the query graph in the same process, alternating query by
query (each order in turn, `--repeat` rounds): a comparison the machine's drift does not
bias. `--profile FILE` runs the timed `ask` calls under cProfile (so their times are the
profiler's), writes its stats to FILE (`python -m pstats FILE`) and prints the functions
with the most cumulative time. `--answers DIR` writes each query's `search` hits and
`ask` result as JSON (`NNN.json`, in query order) into DIR: the same command on two
checkouts and `diff -r` of the two directories shows whether a change kept every answer.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import json
import pstats
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from dowse.indexer.embed import Embedder, embedder_for_model  # noqa: E402
from dowse.indexer.onnx_embed import OnnxEmbedder  # noqa: E402
from dowse.indexer.store import Store  # noqa: E402
from dowse.retrieval.ask import AskResult, ask  # noqa: E402
from dowse.retrieval.hybrid import HybridSearcher  # noqa: E402
from dowse.retrieval.lookups import MEMORY_ROWS, NARROW_ROWS, IndexLookups  # noqa: E402
from dowse.retrieval.query import analyze  # noqa: E402
from dowse.retrieval.records import Hit  # noqa: E402

DEFAULT_QUERIES = [
    "where is the database connection opened",
    "QuerySet.filter with Q objects",
    "how are migrations applied",
    "template rendering of variables",
    "HttpResponse streaming",
    "password hashing algorithm",
    "CSRF token validation",
    "URL resolver reverse",
]


def load_queries(path: Path | None, limit: int) -> list[str]:
    if path is None:
        return DEFAULT_QUERIES[:limit]
    out = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        out.append(row.get("query") or row["problem_statement"])
    return out[:limit]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


# The searcher's steps `--phases` times (they nest: `lexical` counts every full-text
# query, including those inside the named-file and summary steps).
PHASES = (
    ("lookups", "lexical"),
    ("questions", "embed_query"),
    ("questions", "file_cosines"),
    ("pool", "summary_chunks"),
    ("pool", "_symbol_rows"),
    ("pool", "_path_rows"),
    ("pool", "_summary_signal"),
    ("lookups", "stale_paths"),
)
"""(part, step): a part of the searcher (`lookups`, `questions`), or the pool module."""


HELD_ROWS = MEMORY_ROWS
"""The chunks are held in memory with their text up to this many rows (`--no-hold`: 0)."""
HELD_NARROW = NARROW_ROWS
"""The held tables without text, up to this many rows each (`--no-hold`: 0)."""


def _searcher(store: Store, factory: Callable[[], Embedder] | None) -> HybridSearcher:
    return HybridSearcher(
        store,
        factory,
        lookups=IndexLookups(store, memory_rows=HELD_ROWS, narrow_rows=HELD_NARROW),
    )


def time_phases(searcher: HybridSearcher, spent: dict[str, float]) -> None:
    """Wrap the searcher's steps so that each call adds its wall time to `spent` (the
    pool's steps are module functions: they are timed for every searcher)."""
    import dowse.retrieval.pool as pool

    for part, name in PHASES:
        owner = pool if part == "pool" else getattr(searcher, part)
        method = getattr(owner, name)

        def timed(*a: object, _name: str = name, _method: object = method, **k: object) -> object:
            t = time.perf_counter()
            try:
                return _method(*a, **k)  # type: ignore[operator]
            finally:
                spent[_name] = spent.get(_name, 0.0) + time.perf_counter() - t

        setattr(owner, name, timed)


def without_query_graph(embedder: OnnxEmbedder) -> OnnxEmbedder:
    """The same graphs, questions on the int8 one the index's texts use."""
    return OnnxEmbedder(models=dataclasses.replace(embedder.models, query=None))


def interleave(store: Store, embedder: OnnxEmbedder, queries: list[str], rounds: int) -> None:
    """Search p50 with the query graph and with the index's int8 graph for questions."""
    plain = without_query_graph(embedder)
    searchers = {
        "query graph": _searcher(store, lambda: embedder),
        "int8 graph": _searcher(store, lambda: plain),
    }
    for s in searchers.values():
        for q in queries:
            s.search(q)  # warm: the model, the held rows
    spent: dict[str, list[float]] = {name: [] for name in searchers}
    for round_ in range(rounds):
        order = list(searchers) if round_ % 2 == 0 else list(reversed(searchers))
        for q in queries:
            for name in order:
                searchers[name].questions.clear_query_cache()
                t = time.perf_counter()
                searchers[name].search(q)
                spent[name].append(time.perf_counter() - t)
    for name, values in spent.items():
        print(
            f"search, {name:<11} p50 {statistics.median(values) * 1000:7.1f} ms   "
            f"p95 {pct(values, 0.95) * 1000:7.1f} ms   ({len(values)} searches)"
        )


def write_answer(out: Path, n: int, hits: list[Hit], answer: AskResult) -> None:
    """The `n`th query's hits and answer, as JSON, into `out/NNN.json`."""
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "hits": [h.model_dump(mode="json") for h in hits],
        "ask": answer.model_dump(mode="json"),
    }
    (out / f"{n:03d}.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index-root", type=Path, required=True)
    ap.add_argument("--queries", type=Path)
    ap.add_argument("--repo", help="only dataset rows of this repo (owner/name)")
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument(
        "--repeat", type=int, default=1, help="time each query this many times and keep its median"
    )
    ap.add_argument(
        "--phases", action="store_true", help="also print the mean time per search of each step"
    )
    ap.add_argument(
        "--no-hold",
        action="store_true",
        help="hold nothing in memory: every look-up is a LanceDB query",
    )
    ap.add_argument(
        "--hold-rows",
        type=int,
        default=None,
        metavar="N",
        help=f"hold the chunks with their text up to N rows (default {MEMORY_ROWS})",
    )
    ap.add_argument(
        "--narrow-rows",
        type=int,
        default=None,
        metavar="N",
        help=f"hold the tables without text up to N rows each (default {NARROW_ROWS})",
    )
    ap.add_argument("--index-dir", type=Path, help="the index, when not at INDEX_ROOT/.dowse")
    ap.add_argument(
        "--no-query-graph", action="store_true", help="embed questions on the index's int8 graph"
    )
    ap.add_argument(
        "--interleave",
        action="store_true",
        help="compare search with and without the query graph, alternating",
    )
    ap.add_argument("--profile", type=Path, metavar="FILE", help="profile the timed asks into FILE")
    ap.add_argument(
        "--answers", type=Path, metavar="DIR", help="write each query's hits and answer into DIR"
    )
    args = ap.parse_args()
    global HELD_ROWS, HELD_NARROW
    if args.no_hold:
        HELD_ROWS = HELD_NARROW = 0
    if args.hold_rows is not None:
        HELD_ROWS = args.hold_rows
    if args.narrow_rows is not None:
        HELD_NARROW = args.narrow_rows
    queries = load_queries(args.queries, 10_000)
    if args.repo and args.queries:
        rows = [json.loads(x) for x in args.queries.read_text().splitlines()]
        queries = [r["problem_statement"] for r in rows if r.get("repo") == args.repo]
    queries = queries[: args.limit]
    store = Store.open(args.index_dir or args.index_root / ".dowse")
    # The backend `dowse search` itself would use (the fast one first): picking the
    # first registered backend with the model's name timed sentence-transformers instead.
    factory = embedder_for_model(store.manifest.model)
    has_vectors = store.count("vectors") or store.count("file_vectors")
    embedder = factory() if factory and has_vectors else None
    if args.no_query_graph and isinstance(embedder, OnnxEmbedder):
        embedder = without_query_graph(embedder)
    query_model = (lambda: embedder) if embedder else None
    searcher = _searcher(store, query_model)
    searcher.questions.embed_query("warm up")
    if args.interleave:
        if not isinstance(embedder, OnnxEmbedder):
            sys.exit("--interleave needs the index's minilm-onnx vectors")
        interleave(store, embedder, queries, max(2, args.repeat))
        return
    timings: dict[str, list[float]] = {"search": [], "ask": []}
    rg = shutil.which("rg")
    if rg:
        timings["rg"] = []
    cycles = []
    profiler = cProfile.Profile() if args.profile else None
    phases: dict[str, float] = {}
    if args.phases:
        # A second searcher, warmed like the first, whose steps are timed (the wrappers
        # cost a little, so the timed searches above run without them).
        timed = _searcher(store, query_model)
        timed.search(queries[0] if queries else "warm up")
        time_phases(timed, phases)
        phases.clear()
    for q in queries:
        if rg:
            # ripgrep for the same keywords (the query's names and first terms), listing
            # the files that contain any: what an agent without an index would run.
            a = analyze(q)
            words = list(dict.fromkeys([*a.identifiers, *a.terms[:8]]))[:16] or [q[:40]]
            cmd = [
                rg,
                "-l",
                "-i",
                "-F",
                "-g",
                "!.dowse",
                *(x for w in words for x in ("-e", w)),
                str(args.index_root),
            ]
            subprocess.run(cmd, capture_output=True)  # warm the page cache like the others
            t = time.perf_counter()
            subprocess.run(cmd, capture_output=True)
            timings["rg"].append(time.perf_counter() - t)
        hits = searcher.search(q)
        answer = ask(searcher, q, budget=4000)
        if args.answers:
            write_answer(args.answers, len(cycles), hits, answer)
        runs: dict[str, list[float]] = {
            "search": [],
            "ask": [],
            "search_cpu": [],
            "ask_cpu": [],
            "search_main": [],
            "ask_main": [],
        }
        for _ in range(max(1, args.repeat)):
            searcher.questions.clear_query_cache()  # time the query's embedding too
            t, cpu, main = time.perf_counter(), time.process_time(), time.thread_time()
            searcher.search(q)
            runs["search"].append(time.perf_counter() - t)
            runs["search_cpu"].append(time.process_time() - cpu)
            runs["search_main"].append(time.thread_time() - main)
            searcher.questions.clear_query_cache()
            t, cpu, main = time.perf_counter(), time.process_time(), time.thread_time()
            if profiler:
                profiler.enable()
            result = ask(searcher, q, budget=4000)
            if profiler:
                profiler.disable()
            runs["ask"].append(time.perf_counter() - t)
            runs["ask_cpu"].append(time.process_time() - cpu)
            runs["ask_main"].append(time.thread_time() - main)
        for name, values in runs.items():
            timings.setdefault(name, []).append(statistics.median(values))
        if args.phases:
            timed.questions.clear_query_cache()
            timed.search(q)
        cycles.append(result.cycles)
    print(
        f"queries {len(queries)}, chunks {store.count('chunks')}, vectors "
        f"{store.count('vectors')}, file vectors {store.count('file_vectors')}, "
        f"embedder {store.manifest.model if embedder else 'none'}"
        + (f" ({type(embedder).__name__})" if embedder else "")
    )
    cpu_times = timings.pop("search_cpu")
    ask_cpu_times = timings.pop("ask_cpu")
    main_times = {name: timings.pop(f"{name}_main") for name in ("search", "ask")}
    for name, values in timings.items():
        print(
            f"{name:<7} p50 {statistics.median(values) * 1000:7.1f} ms   "
            f"p95 {pct(values, 0.95) * 1000:7.1f} ms"
        )
    # Process CPU time (all threads): on 2 cores a search cannot take less than half of it.
    print(f"search CPU p50 {statistics.median(cpu_times) * 1000:7.1f} ms (all threads)")
    print(f"ask CPU p50 {statistics.median(ask_cpu_times) * 1000:7.1f} ms (all threads)")
    # The calling thread's alone: the Python share, beside LanceDB's and the embedder's
    # threads.
    for name, values in main_times.items():
        print(f"{name} main-thread CPU p50 {statistics.median(values) * 1000:7.1f} ms")
    print(f"ask cycles: mean {statistics.mean(cycles):.2f}")
    if args.phases:
        print(
            "search steps, mean per search (nested; embed_query, file_cosines and "
            "_summary_chunks run in a thread alongside the first full-text query, "
            "_symbol_rows and _path_rows):"
        )
        for name in PHASES:
            print(f"  {name:<16} {phases.get(name, 0.0) / len(queries) * 1000:7.1f} ms")
    if profiler:
        profiler.dump_stats(args.profile)
        print(f"profile of the timed asks in {args.profile}, by cumulative time:")
        pstats.Stats(str(args.profile)).sort_stats("cumulative").print_stats("dowse", 25)
    t = time.perf_counter()
    subprocess.run(
        [
            *(
                sys.executable,
                "-m",
                "dowse",
                "ask",
                queries[0],
                "--path",
                str(args.index_root.resolve()),
            ),
            *(("--index-dir", str(args.index_dir.resolve())) if args.index_dir else ()),
        ],
        check=True,
        capture_output=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    print(f"cold `dowse ask` process: {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
