"""Evaluation: file localization on a SWE-bench-style dataset (a repository's own history
is in `evaluation.history`, on the same machinery).

`run_swebench` indexes each instance's repository at its `base_commit` and asks every
method to rank files for the issue text (`MethodRunner` keeps one tree and its index in
step and runs the methods). `score` turns predictions into the numbers of the bench's
`score.py`, with the same definitions:

- Acc@k: 1 when ALL gold files are within the top k (the Agentless / LocAgent / SweRank
  definition); Recall@k: share of gold files within the top k; MRR: reciprocal rank of
  the first gold file. An instance without a prediction scores 0.
- in_context: share of instances whose gold files all lie in `context_files`; medians
  of `tokens` and `seconds` (query time only; indexing is timed separately).
- FuncAcc@k (instances with `gold_spans` and a `found_functions`): 1 when every gold
  function is within the top k definitions, a definition matching by its qualified name
  or by its last part (`Class.method` matches `method`; a dotted gold name must be a
  suffix of it).
- line_recall, hunks_in_context, context_lines_median (instances with `gold_lines` and
  `context_spans`): mean share of the changed base lines the context shows in full, the
  share of instances where it shows all of them, and the median number of distinct
  source lines shown.
- Subsets: all, locagent274, not_mentioned, and `lang:NAME` for each `language` of the
  dataset (Multi-SWE-bench).

Methods:
- `bm25`: whole-file BM25Okapi (k1=1.2, b=0.75) over `dowse.tokens.tokenize` tokens
  (identifiers and their snake/camel sub-words) of every file of an indexed code
  language; no dowse index involved.
- `lexical`: hybrid search at file grain without an embedder (full-text, symbol, path).
- `dense`: vector similarity only (needs embeddings): with chunk vectors, files ranked by
  their best chunk; with file vectors only (the default `--embed files`), by the
  closeness of their summary or closest definition (`files_by_closeness`).
- `hybrid`: hybrid search at file grain with the embedder (needs embeddings).
- `ask`: what `dowse ask` prints (`investigate`: one retrieval loop, or an exploration
  for a broad question), files in `AskResult.files` order.

`context_files` is what the method would deliver in `budget` tokens: for `ask` the files
of its context as printed (the whole markdown fitted into the budget, as `dowse ask
--budget` prints it), and `tokens` that printed answer's count; for `lexical`, `dense`
and `hybrid` the files of the ranked chunks that fit, in rank order (a chunk that does
not fit is skipped), costed by their text and citation; for `bm25` the ranked whole
files that fit (a whole-file retriever has no chunks). `context_spans` are the line
ranges of those same blocks (for `ask` a signature-only block shows one line);
`found_functions` are the definitions (`path::Qualified.name`) the ranked units show:
`ask`'s context blocks by relevance, the search methods' ranked chunks, and for `bm25`
the definitions of its ranked files in file and line order. A unit shows the definitions
whose name line it shows (a chunk of three short methods shows the three methods, not
only the class it is filed under; those the question names first,
`retrieval.query.naming`, then in line order) and then those it lies inside, innermost
first; a signature line shows its own definition only.

Invariants:
- The work tree of a repository (`<work>/<owner>__<name>/tree`) is synced, never rebuilt:
  only files whose blob differs are written and removed files deleted, so unchanged files
  keep their mtimes and the incremental index (`<work>/<owner>__<name>/.dowse-index`,
  outside the tree) redoes only what changed between base commits. Instances of a repo
  run in commit-date order to keep those steps small.
- The clones are only read (`git ls-tree`, `git cat-file`); blobs missing from a clone
  (large files left out of a snapshot) are skipped, and so is an instance whose base
  commit the clone lacks (named in `EvalReport.skipped`, scored as unpredicted).
- Predictions are appended to the output JSONL as they are made, one line per
  (instance, method); a rerun skips the pairs already there, so a run can be resumed.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dowse.budgets import EVAL_BUDGET
from dowse.errors import EvalError, IndexVersionMismatch
from dowse.evaluation.gittree import clone_for, commit_order, missing_commits, sync_tree
from dowse.explore.handoff import fit_report, investigate, render_report
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.commits import HistorySource
from dowse.indexer.embed import Embedder
from dowse.indexer.parse import parse_source
from dowse.indexer.store import Store, where_in
from dowse.languages import CODE_LANGUAGES, language_for
from dowse.retrieval.ask import AskResult, ContextBlock, Packing, estimate_tokens
from dowse.retrieval.definitions import shown_definitions
from dowse.retrieval.file_ranking import files_by_closeness
from dowse.retrieval.grains import read_lines, to_hits
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.query import analyze, naming
from dowse.retrieval.records import SearchOptions
from dowse.tokens import tokenize

__all__ = [
    "KS",
    "METHODS",
    "SUBSETS",
    "EvalConfig",
    "EvalError",
    "EvalReport",
    "Instance",
    "Method",
    "Prediction",
    "Score",
    "Span",
    "by_repository",
    "indexed_instances",
    "load_dataset",
    "load_predictions",
    "prepared_runs",
    "run_swebench",
    "score",
    "score_report",
    "select_instances",
    "unrecorded",
]

Method = Literal["bm25", "lexical", "dense", "hybrid", "ask"]
METHODS: tuple[Method, ...] = ("bm25", "lexical", "dense", "hybrid", "ask")
_NEEDS_VECTORS = frozenset({"dense", "hybrid"})
"""Both run on chunk vectors or on file vectors."""
KS = (1, 3, 5, 10)
SUBSETS = ("all", "locagent274", "not_mentioned")
BM25_K1 = 1.2
BM25_B = 0.75
FUNCTION_LIMIT = 50
"""Definitions recorded per prediction: FuncAcc reads the top 10, the rest is for study."""

Progress = Callable[[str, int, int], None]
"""progress(stage, done, total): 'instances' or 'commits', then build_index's stages."""


# -- records ---------------------------------------------------------------------------


class EvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dataset: Path = Field(description="SWE-bench-style JSONL, one instance a line")
    repos: Path = Field(description="directory of clones named <owner>__<name>, bare or not")
    out: Path = Field(description="predictions JSONL, appended to (a rerun resumes)")
    work: Path = Field(description="where trees and indexes live, one directory per repo")
    instances: list[str] = Field(default_factory=list, description="only these instance ids")
    repo: str | None = Field(default=None, description="only this repository (owner/name)")
    limit: int | None = Field(default=None, gt=0, description="first N selected instances")
    methods: list[Method] | None = Field(
        default=None, description="default: every method the index supports"
    )
    budget: int = Field(default=EVAL_BUDGET, gt=0, description="context token budget")
    embed: bool = Field(
        default=True, description=("embed (dense and hybrid need file or chunk vectors)")
    )
    embed_chunks: bool = Field(
        default=IndexConfig.embed_chunks,
        description="chunk vectors, not only one per file summary (--embed all)",
    )
    found_limit: int = Field(default=20, gt=0, le=1000, description="files ranked per method")
    index_workers: int | None = Field(
        default=1, gt=0, description="parser processes; 1 keeps a run to one process"
    )


class Instance(BaseModel):
    # The dataset carries more fields (version, gold_spans, ...) than are read here.
    model_config = ConfigDict(extra="ignore")

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    gold_files: list[str]
    in_locagent274: bool = True
    agentless: dict[str, Any] | None = None
    gold_spans: dict[str, list[str]] = Field(
        default_factory=dict, description="file -> the definitions the fix touched"
    )
    gold_lines: dict[str, list[tuple[int, int]]] = Field(
        default_factory=dict, description="file -> base-file line ranges the fix changes"
    )
    language: str | None = Field(default=None, description="Multi-SWE-bench's language")

    @property
    def names_file(self) -> bool:
        """Whether the issue text names the file (Agentless's label; the string 'None'
        and a missing label both mean it does not)."""
        where = (self.agentless or {}).get("issue_file_location")
        return where not in (None, "None")

    def in_subset(self, subset: str) -> bool:
        if subset == "all":
            return True
        if subset == "locagent274":
            return self.in_locagent274
        if subset == "not_mentioned":
            return not self.names_file
        if subset == "mentioned":
            return self.names_file
        if subset.startswith("lang:"):
            return self.language == subset[5:]
        raise ValueError(f"unknown subset {subset!r}")


class Span(BaseModel):
    """Source lines the delivered context shows in full (1-based, inclusive)."""

    model_config = ConfigDict(extra="forbid")

    path: str
    start: int = Field(ge=1)
    end: int = Field(ge=1)


class Prediction(BaseModel):
    """One line of the predictions JSONL (a superset of what score.py reads)."""

    model_config = ConfigDict(extra="forbid")

    instance_id: str
    method: Method
    found_files: list[str] = Field(description="ranked repo-relative paths")
    context_files: list[str] = Field(description="files inside the delivered context")
    # None only on lines written before these were recorded: score.py, like `score`,
    # leaves such lines out of the function- and line-level numbers.
    found_functions: list[str] | None = Field(
        default=None, description="ranked definitions, best first, as path::Qualified.name"
    )
    context_spans: list[Span] | None = Field(
        default=None, description="every line range the delivered context shows in full"
    )
    tokens: int = Field(ge=0, description="estimated tokens of the delivered context")
    seconds: float = Field(ge=0, description="query time only")
    index_seconds: float = Field(
        ge=0, description="indexing for this instance (dowse index, or the BM25 corpus)"
    )


class Score(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n: int
    missing_predictions: int
    acc: dict[int, float] = Field(description="k -> Acc@k, percent")
    recall: dict[int, float] = Field(description="k -> Recall@k, percent")
    mrr: float
    in_context: float | None = Field(default=None, description="percent")
    func_acc: dict[int, float] | None = Field(
        default=None, description="k -> FuncAcc@k, percent of func_n"
    )
    func_n: int = Field(default=0, description="predictions scored at function level")
    line_recall: float | None = Field(
        default=None, description="mean share of gold lines shown, percent of line_n"
    )
    hunks_in_context: float | None = Field(
        default=None, description="share whose every gold line is shown, percent of line_n"
    )
    context_lines_median: float | None = Field(
        default=None, description="median number of distinct source lines shown"
    )
    line_n: int = Field(default=0, description="predictions scored at line level")
    tokens_median: float | None = None
    seconds_median: float | None = None
    index_seconds_median: float | None = None


class EvalReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    config: EvalConfig
    instances: list[str] = Field(description="the instances selected (and scored)")
    methods: list[Method]
    scores: dict[str, dict[str, Score]] = Field(description="method -> subset -> score")
    new_predictions: int = Field(description="predictions made by this run (not resumed)")
    skipped: list[str] = Field(
        default_factory=list,
        description="instances whose base commit the clone lacks (scored as unpredicted)",
    )


# -- loading ---------------------------------------------------------------------------


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        yield n, json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise EvalError(f"{path}:{n}: not JSON ({exc.msg})") from None
    except FileNotFoundError:
        raise EvalError(f"no such file: {path}") from None
    except OSError as exc:
        raise EvalError(f"cannot read {path}: {exc.strerror}") from None


def load_dataset(path: Path) -> list[Instance]:
    out = []
    for n, row in _read_jsonl(path):
        try:
            out.append(Instance.model_validate(row))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise EvalError(f"{path}:{n}: {where}: {first['msg']}") from None
    return out


def load_predictions(path: Path) -> list[Prediction]:
    """The predictions written so far (none when the file does not exist yet)."""
    if not path.exists():
        return []
    out = []
    for n, row in _read_jsonl(path):
        try:
            out.append(Prediction.model_validate(row))
        except ValidationError:
            raise EvalError(f"{path}:{n}: not a prediction line of this tool") from None
    return out


def select_instances(
    dataset: Sequence[Instance],
    *,
    instances: Sequence[str] = (),
    repo: str | None = None,
    limit: int | None = None,
    source: object = "the dataset",
) -> list[Instance]:
    """The instances of `dataset` chosen by id, then by repository, then the first
    `limit`, in the dataset's order; an id it lacks, or a repository without instances,
    is an EvalError naming `source`."""
    chosen = list(dataset)
    if instances:
        known = {i.instance_id for i in dataset}
        unknown = [i for i in instances if i not in known]
        if unknown:
            raise EvalError(f"not in {source}: {', '.join(unknown)}")
        wanted = set(instances)
        chosen = [i for i in chosen if i.instance_id in wanted]
    if repo:
        chosen = [i for i in chosen if i.repo == repo]
        if not chosen:
            raise EvalError(f"no instance of {repo} in {source}")
    if limit:
        chosen = chosen[:limit]
    return chosen


def _select(dataset: Sequence[Instance], config: EvalConfig) -> list[Instance]:
    return select_instances(
        dataset,
        instances=config.instances or (),
        repo=config.repo,
        limit=config.limit,
        source=config.dataset,
    )


def resolve_methods(requested: Sequence[Method] | None, embed: bool) -> list[Method]:
    """The methods to run (default: every one the index's vectors support)."""

    def supported(m: Method) -> bool:
        return embed or m not in _NEEDS_VECTORS

    if requested is None:
        return [m for m in METHODS if supported(m)]
    if needy := [m for m in requested if not supported(m)]:
        verb = "need" if len(needy) > 1 else "needs"
        raise EvalError(f"{', '.join(needy)} {verb} vectors; run with --embed files or all")
    return list(dict.fromkeys(requested))


class _BM25Corpus:
    """Whole-file BM25 over the files of every indexed code language in a synced tree;
    token lists are cached by blob sha, so the next commit of the same repository only
    tokenizes the files that changed."""

    def __init__(self) -> None:
        self.tokens: dict[str, list[str]] = {}
        self.paths: list[str] = []
        self.model: Any = None

    def build(self, tree: Path, files: Mapping[str, str]) -> None:
        from rank_bm25 import BM25Okapi

        paths = sorted(p for p in files if language_for(p) in CODE_LANGUAGES)
        docs = []
        for path in paths:
            sha = files[path]
            toks = self.tokens.get(sha)
            if toks is None:
                try:
                    text = (tree / path).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    text = ""
                toks = self.tokens[sha] = tokenize(text)
            docs.append(toks)
        live = set(files.values())
        for sha in [s for s in self.tokens if s not in live]:
            del self.tokens[sha]
        self.paths = paths
        # An empty document list breaks BM25Okapi; a repository without such files ranks
        # nothing.
        self.model = BM25Okapi(docs, k1=BM25_K1, b=BM25_B) if docs else None

    def rank(self, text: str, limit: int) -> list[str]:
        if self.model is None:
            return []
        scores = self.model.get_scores(tokenize(text))
        order = sorted(range(len(self.paths)), key=lambda i: (-scores[i], self.paths[i]))
        return [self.paths[i] for i in order[:limit]]


@dataclasses.dataclass
class Answer:
    """What one method delivered for one query (a Prediction without its bookkeeping)."""

    found: list[str]
    context: list[str]
    tokens: int
    seconds: float
    functions: list[str]
    spans: list[Span]

    def prediction(self, instance_id: str, method: Method, index_seconds: float) -> Prediction:
        """The predictions file's line for this answer."""
        return Prediction(
            instance_id=instance_id,
            method=method,
            found_files=self.found,
            context_files=self.context,
            found_functions=self.functions,
            context_spans=self.spans,
            tokens=self.tokens,
            seconds=round(self.seconds, 4),
            index_seconds=round(index_seconds, 3),
        )


def _block_cost(path: str, start: int, end: int, text: str) -> int:
    """What a search method's ranked chunk costs in the context: its text and citation.
    (`ask` costs its blocks as printed, header and reason included, in `retrieval.ask`.)"""
    return estimate_tokens(text) + estimate_tokens(f"{path}:{start}-{end}") + 4


def _pack(blocks: Iterable[tuple[str, int, int, str]], budget: int) -> tuple[list[Span], int]:
    """The blocks that fit the budget, taken in rank order; a block that does not fit is
    skipped (a smaller one after it may still fit)."""
    taken: list[Span] = []
    used = 0
    for path, start, end, text in blocks:
        cost = _block_cost(path, start, end, text)
        if used + cost <= budget:
            used += cost
            taken.append(Span(path=path, start=start, end=end))
    return taken, used


def _files_of(spans: Iterable[Span]) -> list[str]:
    return list(dict.fromkeys(s.path for s in spans))


def _pack_files(tree: Path, ranked: Sequence[str], budget: int) -> tuple[list[Span], int]:
    def blocks() -> Iterator[tuple[str, int, int, str]]:
        for path in ranked:
            try:
                text = (tree / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            # A last line without its newline is a line too.
            lines = text.count("\n") + (0 if text.endswith("\n") else 1)
            yield path, 1, max(lines, 1), text

    return _pack(blocks(), budget)


def _chunk_blocks(rows: Iterable[dict[str, Any]]) -> Iterator[tuple[str, int, int, str]]:
    for r in rows:
        yield r["path"], r["start_line"], r["end_line"], r["text"] or ""


def _by_file(paths: Iterable[str], limit: int) -> list[str]:
    return list(dict.fromkeys(paths))[:limit]


Unit = tuple[str, int, int, str | None, bool]
"""A ranked piece of source: (path, start line, end line, its enclosing definition,
whether it shows its lines; a signature line shows only its definition's name)."""


def _definitions(
    store: Store, units: Sequence[Unit], named: Callable[[str], int] | None = None
) -> list[str]:
    """The definitions ranked units show, best unit first, each name once
    (`retrieval.definitions.shown_definitions`; `named`: how much of a qualified name the
    question names, `retrieval.query.naming`). A unit's symbol is only where its chunk
    sits: a chunk that holds three short methods of a class is named after the class, yet
    what a reader sees are the methods."""
    paths = sorted({u[0] for u in units})
    inside: dict[str, list[dict[str, Any]]] = {}
    if paths:
        for r in store.rows(
            "symbols",
            ["path", "qualified_name", "start_line", "end_line", "name_line"],
            where=where_in("path", paths),
        ):
            inside.setdefault(r["path"], []).append(r)
    out: list[str] = []
    for path, start, end, symbol, lines in units:
        shown = shown_definitions(inside.get(path, []), start, end, named) if lines else []
        names = [d["qualified_name"] for d in shown]
        if symbol and symbol not in names:
            names.append(symbol)  # the index's own name for it, when the rows lack it
        out += [f"{path}::{name}" for name in names]
    return list(dict.fromkeys(out))[:FUNCTION_LIMIT]


def _chunk_units(rows: Iterable[dict[str, Any]]) -> list[Unit]:
    return [(r["path"], r["start_line"], r["end_line"], r.get("symbol"), True) for r in rows]


def _file_functions(tree: Path, ranked: Sequence[str]) -> list[str]:
    """The definitions of ranked files, file by file and in line order within a file: a
    whole-file ranking knows nothing finer."""
    out: list[str] = []
    for path in ranked:
        try:
            source = (tree / path).read_bytes()
        except OSError:
            continue
        parsed = parse_source(path, source, language_for(path) or "")
        symbols = sorted(parsed.symbols, key=_line_key)
        out += [f"{path}::{s.qualified_name}" for s in symbols]
        if len(out) >= FUNCTION_LIMIT:
            break
    return list(dict.fromkeys(out))[:FUNCTION_LIMIT]


def _line_key(symbol: Any) -> tuple[int, int]:
    return symbol.start_line, -symbol.end_line


def _ask_units(result: AskResult) -> list[Unit]:
    """`ask`'s context blocks by relevance (the full blocks come in the loop's order, so
    a stable sort keeps it among equals)."""
    blocks = sorted(result.context, key=lambda b: -b.relevance)
    return [(b.path, b.start_line, b.end_line, b.symbol, b.form == "full") for b in blocks]


def _ask_spans(tree: Path, result: AskResult) -> list[Span]:
    """The lines `ask`'s context shows: a full block its range, a signature block the one
    line it prints."""
    return [
        Span(path=b.path, start=b.start_line, end=b.end_line)
        if b.form == "full"
        else Span(path=b.path, start=(line := _signature_line(tree, b)), end=line)
        for b in result.context
    ]


def _signature_line(tree: Path, block: ContextBlock) -> int:
    """The line of the block's range that its printed signature starts with (the
    signature of a decorated definition is not its first line); the first line when
    none matches, as when the file changed since it was indexed."""
    first = block.text.strip().split("\n")[0].strip()[:40]
    text = read_lines(tree, block.path, block.start_line, block.end_line)
    if first and text:
        for offset, line in enumerate(text.split("\n")):
            if line.strip().startswith(first):
                return block.start_line + offset
    return block.start_line


class MethodRunner:
    """Runs the methods on one snapshot of one repository."""

    def __init__(
        self,
        tree: Path,
        index_dir: Path,
        *,
        methods: Sequence[Method],
        embedder: Embedder,
        embed: bool,
        embed_chunks: bool,
        budget: int,
        found_limit: int,
        workers: int | None,
        progress: Progress,
    ) -> None:
        self.tree, self.index_dir, self.methods = tree, index_dir, list(methods)
        self.embedder, self.embed, self.budget = embedder, embed, budget
        self.embed_chunks = embed_chunks
        self.found_limit, self.workers, self.progress = found_limit, workers, progress
        self.bm25 = _BM25Corpus()
        self.packing: Packing | None = None  # how `ask` packs its answer (None: the default)
        self._warm = False

    def prepare(
        self,
        files: Mapping[str, str],
        methods: Sequence[Method],
        history: HistorySource | None = None,
    ) -> dict[str, float]:
        """Index what the methods need, with `history` as the commits before the tree
        (the tree is an export: its own history is the clone's); seconds per index kind."""
        seconds: dict[str, float] = {}
        if "bm25" in methods:
            t = time.perf_counter()
            self.bm25.build(self.tree, files)
            seconds["bm25"] = time.perf_counter() - t
        if any(m != "bm25" for m in methods):
            t = time.perf_counter()
            _index_work_tree(
                self.tree,
                self.index_dir,
                embedder=self.embedder,
                config=IndexConfig(
                    embed=self.embed,
                    embed_chunks=self.embed_chunks,
                    workers=self.workers,
                    history_source=history,
                    history=history is not None,
                ),
                progress=self.progress,
            )
            seconds["dowse"] = time.perf_counter() - t
            self.store = Store.open(self.index_dir)
            factory = (lambda: self.embedder) if self.embed else None
            self.searcher = HybridSearcher(self.store, factory)
            self.lexical_searcher = HybridSearcher(self.store, None)
            if self.embed and not self._warm:
                self.searcher.questions.embed_query("warm up")  # model load is not query time
                self._warm = True
            # Nor is reading the rows a searcher holds: a warm index has them in memory.
            if "lexical" in methods:
                self.lexical_searcher.warm()
            if any(m not in ("bm25", "lexical") for m in methods):
                self.searcher.warm()
        return seconds

    def query(self, method: Method, text: str) -> Answer:
        """What `method` delivers for one query; `seconds` is the query's time, not the
        bookkeeping that names the definitions and lines it delivered."""
        t = time.perf_counter()
        if method == "bm25":
            found = self.bm25.rank(text, self.found_limit)
            spans, tokens = _pack_files(self.tree, self.bm25.rank(text, 50), self.budget)
            seconds = time.perf_counter() - t
            functions = _file_functions(self.tree, found)
        elif method == "ask":
            # What `dowse ask QUESTION --budget B` prints: the same routing (one loop or
            # an exploration) and the same fit of the whole markdown into the budget.
            report = investigate(self.searcher, text, budget=self.budget, packing=self.packing)
            printed = fit_report(report, self.budget, "markdown")
            seconds = time.perf_counter() - t
            found = [f.path for f in report.files][: self.found_limit]
            spans = _ask_spans(self.tree, printed)
            tokens = estimate_tokens(render_report(printed))
            functions = list(
                dict.fromkeys(f"{d.path}::{d.qualified_name}" for d in report.definitions)
            )
        else:
            if method == "dense":
                found, rows = self._dense(text)
            else:
                searcher = self.lexical_searcher if method == "lexical" else self.searcher
                k = max(60, self.found_limit * 4)  # as `dowse search` asks for
                cands = searcher.candidates(searcher.analyze(text), k=k)
                ranked = sorted(cands.values(), key=lambda c: (-c.score, c.id))
                hits = to_hits(
                    searcher.lookups, ranked, SearchOptions(grain="file", limit=self.found_limit)
                )
                found, rows = [h.path for h in hits], [c.row for c in ranked]
            spans, tokens = _pack(_chunk_blocks(rows), self.budget)
            seconds = time.perf_counter() - t
            functions = _definitions(self.store, _chunk_units(rows), naming(analyze(text)))
        return Answer(
            found=found,
            context=_files_of(spans),
            tokens=tokens,
            seconds=seconds,
            functions=functions,
            spans=spans,
        )

    def _dense(self, text: str) -> tuple[list[str], list[dict[str, Any]]]:
        """Ranked files and the ranked chunks their context is packed from."""
        vector = self.searcher.questions.embed_query(text)
        if vector is None:
            raise EvalError(f"the index at {self.index_dir} has no vectors for dense search")
        if not self.searcher.questions.has_vectors:  # file vectors only
            close = files_by_closeness(
                self.searcher.lookups,
                self.searcher.questions,
                self.searcher.analyze(text),
                limit=self.found_limit,
                config=self.searcher.file_ranking,
            )
            return [p for p, _ in close], [row for _, row in close]
        sims = self.searcher.lookups.dense(vector, max(60, self.found_limit * 4))
        rows = self.searcher.lookups.chunks_by_id(i for i, _ in sims)
        ranked = [rows[i] for i, _ in sims if i in rows]
        return _by_file((r["path"] for r in ranked), self.found_limit), ranked


def no_progress(stage: str, done: int, total: int) -> None:
    pass


# -- SWE-bench -------------------------------------------------------------------------


def by_repository(
    instances: Iterable[Instance], repos: Path, *, skipped: list[Instance] | None = None
) -> Iterator[tuple[str, Path, list[Instance]]]:
    """Each repository of `instances` (by name) with its clone under `repos` and its
    instances, oldest base commit first, so that syncing the tree and indexing it move
    forward through history. Every clone is found before the first is yielded: a missing
    one fails at once, not after hours of the others. An instance whose base commit its
    clone lacks fails the run too, unless `skipped` is given: then it is left out and
    appended there (as each repository's turn comes)."""
    grouped: dict[str, list[Instance]] = {}
    for inst in instances:
        grouped.setdefault(inst.repo, []).append(inst)
    clones = {repo: clone_for(repos, repo) for repo in grouped}
    return _ordered(grouped, clones, skipped)


def _ordered(
    grouped: Mapping[str, list[Instance]],
    clones: Mapping[str, Path],
    skipped: list[Instance] | None,
) -> Iterator[tuple[str, Path, list[Instance]]]:
    for repo in sorted(grouped):
        todo = grouped[repo]
        if skipped is not None:
            lacking = set(missing_commits(clones[repo], [i.base_commit for i in todo]))
            skipped += [i for i in todo if i.base_commit in lacking]
            todo = [i for i in todo if i.base_commit not in lacking]
            if not todo:
                continue
        order = commit_order(clones[repo], [i.base_commit for i in todo])
        yield (
            repo,
            clones[repo],
            sorted(todo, key=lambda i: (order[i.base_commit], i.instance_id)),
        )


def unrecorded(instances: Iterable[Instance], path: Path) -> list[Instance]:
    """The instances no line of the JSONL file at `path` names by `instance_id` yet: what
    a resumed recording run still has to do."""
    done = set()
    if path.exists():
        with path.open(encoding="utf-8") as lines:
            done = {json.loads(line)["instance_id"] for line in lines if line.strip()}
    return [i for i in instances if i.instance_id not in done]


def indexed_instances(
    instances: Iterable[Instance],
    repos: Path,
    work: Path,
    *,
    embedder: Embedder,
    config: IndexConfig,
) -> Iterator[tuple[Instance, Store]]:
    """Each instance (`by_repository`'s order) with its repository's index at its base
    commit: the tree under `work/<owner>__<name>/tree` is synced to the commit and the
    index beside it updated incrementally (the scripts that record evidence use this;
    `run_swebench` does the same through `MethodRunner`)."""
    for repo, git_dir, todo in by_repository(instances, repos):
        home = work / repo.replace("/", "__")
        for inst in todo:
            sync_tree(git_dir, inst.base_commit, home / "tree")
            _index_work_tree(
                home / "tree",
                home / ".dowse-index",
                embedder=embedder,
                config=dataclasses.replace(
                    config, history_source=HistorySource(git_dir, inst.base_commit)
                ),
            )
            yield inst, Store.open(home / ".dowse-index")


def prepared_runs(
    instances: Iterable[Instance],
    repos: Path,
    work: Path,
    *,
    embedder: Embedder,
    budget: int,
) -> Iterator[tuple[Instance, MethodRunner, dict[str, float]]]:
    """Each instance (`by_repository`'s order) with an `ask` runner on its repository's
    index at its base commit, synced and indexed as `run_swebench` does with its default
    vectors (file vectors), and the index's seconds: for the benchmarks that ask one
    index many ways (packings, rankings)."""
    for repo, git_dir, todo in by_repository(instances, repos):
        home = work / repo.replace("/", "__")
        run = MethodRunner(
            home / "tree",
            home / ".dowse-index",
            methods=["ask"],
            embedder=embedder,
            embed=True,
            embed_chunks=False,
            budget=budget,
            found_limit=20,
            workers=1,
            progress=no_progress,
        )
        for inst in todo:
            files = sync_tree(git_dir, inst.base_commit, home / "tree")
            seconds = run.prepare(files, ["ask"], HistorySource(git_dir, inst.base_commit))
            yield inst, run, seconds


def _index_work_tree(
    tree: Path,
    index_dir: Path,
    *,
    embedder: Embedder,
    config: IndexConfig,
    progress: Progress = no_progress,
) -> None:
    """Index a work tree incrementally; an index an older dowse wrote there (another
    format) is rebuilt: the work directory is the harness's own cache, and a rerun after
    an upgrade must not stop at it."""
    try:
        build_index(tree, index_dir=index_dir, embedder=embedder, config=config, progress=progress)
    except IndexVersionMismatch:
        build_index(
            tree,
            index_dir=index_dir,
            embedder=embedder,
            config=dataclasses.replace(config, rebuild=True),
            progress=progress,
        )


def run_swebench(
    config: EvalConfig, *, embedder: Embedder, progress: Progress = no_progress
) -> EvalReport:
    """Predict files for every selected instance (resuming from `config.out`), then score.

    `embedder` builds the index's vectors when `config.embed` (and names the model in the
    index manifest either way).
    """
    dataset = load_dataset(config.dataset)
    chosen = _select(dataset, config)
    methods = resolve_methods(config.methods, config.embed)
    done = {(p.instance_id, p.method) for p in load_predictions(config.out)}
    todo_all = [i for i in chosen if any((i.instance_id, m) not in done for m in methods)]
    skipped: list[Instance] = []
    # Every clone is found first (fail early); an instance whose base commit its clone
    # lacks is one instance lost, not the run.
    repos = by_repository(todo_all, config.repos, skipped=skipped)
    config.out.parent.mkdir(parents=True, exist_ok=True)
    made = 0
    finished = len(chosen) - len(todo_all)
    progress("instances", finished, len(chosen))
    with open(config.out, "a", encoding="utf-8") as out:
        for repo, git_dir, todo in repos:
            home = config.work / repo.replace("/", "__")
            run = MethodRunner(
                home / "tree",
                home / ".dowse-index",
                methods=methods,
                embedder=embedder,
                embed=config.embed,
                embed_chunks=config.embed_chunks,
                budget=config.budget,
                found_limit=config.found_limit,
                workers=config.index_workers,
                progress=progress,
            )
            for inst in todo:
                wanted = [m for m in methods if (inst.instance_id, m) not in done]
                files = sync_tree(git_dir, inst.base_commit, home / "tree")
                index_seconds = run.prepare(files, wanted, HistorySource(git_dir, inst.base_commit))
                for method in wanted:
                    answer = run.query(method, inst.problem_statement)
                    kind = "bm25" if method == "bm25" else "dowse"
                    pred = answer.prediction(inst.instance_id, method, index_seconds[kind])
                    out.write(pred.model_dump_json() + "\n")
                    out.flush()
                    done.add((inst.instance_id, method))
                    made += 1
                finished += 1
                progress("instances", finished, len(chosen))
    if skipped:
        progress("instances", finished + len(skipped), len(chosen))
    return score_report(
        config,
        chosen,
        load_predictions(config.out),
        methods,
        made,
        skipped=[i.instance_id for i in skipped],
    )


def _function_matches(gold: str, found: str) -> bool:
    """Whether a found `path::name` is the gold definition `gold` (the path is compared
    by the caller): by qualified name, or by last part, a dotted gold name being a suffix
    of the found one (score.py's rule)."""
    name = found.partition("::")[2]
    if name == gold:
        return True
    return name.split(".")[-1] == gold.split(".")[-1] and ("." not in gold or name.endswith(gold))


def _function_rank(gold_spans: Mapping[str, Sequence[str]], found: Sequence[str]) -> int:
    """The rank (from 1) at which the last gold definition is found; `_NEVER` when one
    is not, or when `gold_spans` names no definition at all."""
    worst = 0
    for path, names in gold_spans.items():
        for gold in names:
            rank = next(
                (
                    i + 1
                    for i, f in enumerate(found)
                    if f.partition("::")[0] == path and _function_matches(gold, f)
                ),
                _NEVER,
            )
            worst = max(worst, rank)
    return worst or _NEVER


_NEVER = 10**9


def _line_cover(
    gold_lines: Mapping[str, Sequence[tuple[int, int]]], spans: Iterable[Span]
) -> tuple[float, int]:
    """(share of the gold lines the spans show, distinct lines shown) for one instance."""
    shown: dict[str, set[int]] = {}
    for s in spans:
        shown.setdefault(s.path, set()).update(range(s.start, s.end + 1))
    gold = [(p, n) for p, ranges in gold_lines.items() for a, b in ranges for n in range(a, b + 1)]
    hit = sum(n in shown.get(p, ()) for p, n in gold)
    return (hit / len(gold) if gold else 0.0), sum(len(v) for v in shown.values())


def score(instances: Sequence[Instance], predictions: Mapping[str, Prediction]) -> Score:
    """score.py's numbers for one method: instances without a prediction score 0 at file
    level and are left out of the function- and line-level shares, as are predictions
    without `found_functions` / `context_spans` and instances without gold for them."""
    acc = dict.fromkeys(KS, 0.0)
    recall = dict.fromkeys(KS, 0.0)
    mrr = 0.0
    in_ctx: list[float] = []
    tokens: list[float] = []
    seconds: list[float] = []
    index_seconds: list[float] = []
    function_ranks: list[int] = []
    covers: list[tuple[float, int]] = []
    missing = 0
    for inst in instances:
        gold = set(inst.gold_files)
        pred = predictions.get(inst.instance_id)
        if pred is None:
            missing += 1
            continue
        ranked = pred.found_files
        for k in KS:
            top = set(ranked[:k])
            acc[k] += float(gold <= top)
            recall[k] += len(gold & top) / len(gold) if gold else 0.0
        mrr += next((1.0 / (i + 1) for i, f in enumerate(ranked) if f in gold), 0.0)
        in_ctx.append(float(gold <= set(pred.context_files)))
        if pred.found_functions is not None and inst.gold_spans:
            function_ranks.append(_function_rank(inst.gold_spans, pred.found_functions))
        if pred.context_spans is not None and inst.gold_lines:
            covers.append(_line_cover(inst.gold_lines, pred.context_spans))
        tokens.append(pred.tokens)
        seconds.append(pred.seconds)
        index_seconds.append(pred.index_seconds)
    n = len(instances) or 1
    return Score(
        n=len(instances),
        missing_predictions=missing,
        acc={k: round(100 * v / n, 2) for k, v in acc.items()},
        recall={k: round(100 * v / n, 2) for k, v in recall.items()},
        mrr=round(mrr / n, 4),
        in_context=round(100 * sum(in_ctx) / len(in_ctx), 2) if in_ctx else None,
        func_acc=(
            {
                k: round(100 * sum(r <= k for r in function_ranks) / len(function_ranks), 2)
                for k in KS
            }
            if function_ranks
            else None
        ),
        func_n=len(function_ranks),
        line_recall=round(100 * sum(c for c, _ in covers) / len(covers), 2) if covers else None,
        hunks_in_context=(
            round(100 * sum(c == 1.0 for c, _ in covers) / len(covers), 2) if covers else None
        ),
        context_lines_median=statistics.median(n for _, n in covers) if covers else None,
        line_n=len(covers),
        tokens_median=statistics.median(tokens) if tokens else None,
        seconds_median=round(statistics.median(seconds), 3) if seconds else None,
        index_seconds_median=round(statistics.median(index_seconds), 3) if index_seconds else None,
    )


def score_report(
    config: EvalConfig,
    instances: Sequence[Instance],
    predictions: Iterable[Prediction],
    methods: Sequence[Method],
    new_predictions: int = 0,
    *,
    skipped: Sequence[str] = (),
) -> EvalReport:
    """Score `methods` on `instances` (overall, per subset and per language when the
    dataset has languages) from a prediction list; a later prediction of the same
    (instance, method) wins."""
    by_method: dict[str, dict[str, Prediction]] = {}
    for p in predictions:
        by_method.setdefault(p.method, {})[p.instance_id] = p
    languages = sorted({i.language for i in instances if i.language})
    subsets = [*SUBSETS, *(f"lang:{name}" for name in languages)]
    scores: dict[str, dict[str, Score]] = {
        method: {
            subset: score([i for i in instances if i.in_subset(subset)], by_method.get(method, {}))
            for subset in subsets
        }
        for method in methods
    }
    return EvalReport(
        config=config,
        instances=[i.instance_id for i in instances],
        methods=list(methods),
        scores=scores,
        new_predictions=new_predictions,
        skipped=list(skipped),
    )
