"""The iterative retrieval loop: DISPATCH → EVALUATE → REFINE → LOOP (at most 3 cycles).

- DISPATCH builds the first query from the task text (identifiers, quoted strings, paths,
  stack-trace frames, plain terms).
- EVALUATE scores every candidate with the evaluator (relevance, reason, missing context).
- REFINE adds distinctive identifiers of the high-relevance hits as keywords, excludes
  files whose every candidate scored < 0.2, and targets the gaps: definitions of
  `missing_context` names are looked up directly in the symbol table. It also follows
  the structure: the best caller and callee (`retrieval.references`) of the definitions
  of at most `RefineLimits.followed` new high-relevance hits a cycle join the next cycle's pool,
  flagged with a "caller" or "callee" signal for the evaluator to weigh.
- LOOP stops early when at least `stop_hits` results score ≥ `high` and no critical gap
  remains (a name the task itself mentions that no context item defines or uses);
  otherwise it refines and repeats. The best evaluation of every chunk across cycles is
  kept.
- The items come best first: by relevance times their share of behaviour (code against
  docstring, comments and imports: `behaviour.py`), so the lines that act come before a
  header that describes them; the relevance itself, which ranks files and drives
  REFINE, is the evaluator's.

Every cycle is recorded in the trace, so a caller can see why the loop stopped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dowse.retrieval.behaviour import behaviour_share, defines_any
from dowse.retrieval.evaluate import (
    CALL,
    Evaluation,
    Evaluator,
    OfflineEvaluator,
    Spot,
    owner_of,
    used_names,
)
from dowse.retrieval.grains import chunk_hit, definition_of, lines_above, to_hits
from dowse.retrieval.hybrid import HybridSearcher, PathFilter
from dowse.retrieval.pool import Candidate
from dowse.retrieval.project import project_names
from dowse.retrieval.query import QueryAnalysis
from dowse.retrieval.records import Hit, SearchOptions
from dowse.retrieval.references import Link, links_of
from dowse.tokens import tokenize

__all__ = [
    "ContextItem",
    "Cycle",
    "LoopConfig",
    "LoopResult",
    "RefineLimits",
    "loop_analysis",
    "run_loop",
]


class RefineLimits(BaseModel):
    """How much REFINE adds to the next cycle: each limit keeps a cycle's pool and its
    evaluation bounded however many names and links the task and its hits bring."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gaps: int = Field(default=8, gt=0, description="missing-context names looked up a cycle")
    keywords: int = Field(
        default=8, gt=0, description="distinctive identifiers of high hits added as keywords"
    )
    calls_per_hit: int = Field(
        default=6, gt=0, description="names a high hit calls that are read as keywords"
    )
    named: int = Field(
        default=8,
        gt=0,
        description=(
            "candidates always looked at of each kind the task points at (a file it names, a "
            "definition of a name it mentions)"
        ),
    )
    followed: int = Field(
        default=2,
        gt=0,
        description="high-relevance hits whose definitions' best caller and callee a cycle follows",
    )


class LoopConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_cycles: int = Field(default=3, ge=1, le=10)
    per_cycle: int = Field(default=20, gt=0, description="candidates evaluated per cycle")
    per_file: int = Field(
        default=3,
        gt=0,
        description=(
            "at most this many of a cycle's candidates from one file, so that one long file "
            "matching many words does not crowd the others out"
        ),
    )
    high: float = Field(default=0.7, ge=0, le=1, description="a high-relevance hit")
    stop_hits: int = Field(default=3, gt=0, description="high hits needed to stop early")
    exclude_below: float = Field(default=0.2, ge=0, le=1)
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    languages: list[str] = Field(default_factory=list)
    refine: RefineLimits = Field(default_factory=RefineLimits)


class ContextItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hit: Hit
    relevance: float = Field(ge=0, le=1)
    reason: str
    missing_context: list[str] = Field(default_factory=list)
    cycle: int = Field(ge=1, description="the cycle that found it")
    behaviour: float = Field(
        default=1.0,
        gt=0,
        le=1,
        description=(
            "how much of it is code rather than docstring, comments or imports "
            "(`behaviour_share`: 1 when code outweighs them); the context is ordered by "
            "relevance times this"
        ),
    )


class Cycle(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n: int
    keywords: list[str] = Field(description="the query's keywords this cycle")
    excluded: list[str] = Field(default_factory=list, description="paths excluded so far")
    targeted: list[str] = Field(default_factory=list, description="gap names looked up")
    followed: list[str] = Field(
        default_factory=list,
        description="callers and callees of high hits added: 'caller of X: path:line'",
    )
    candidates: list[tuple[str, float]] = Field(
        default_factory=list, description="(citation, relevance) evaluated this cycle"
    )
    gaps: list[str] = Field(default_factory=list, description="missing context after it")
    critical_gaps: list[str] = Field(default_factory=list)
    high_hits: int = 0
    stop: str | None = Field(default=None, description="why the loop stopped here")


class LoopResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str
    analysis: QueryAnalysis
    items: list[ContextItem] = Field(description="best evaluation per chunk, best first")
    searched: list[str] = Field(
        default_factory=list,
        description=(
            "the first cycle's files as the search ranks them (`dowse search --grain file`), "
            "best first: what the evaluations started from"
        ),
    )
    trace: list[Cycle]
    stop_reason: str


def _critical_gaps(analysis: QueryAnalysis, items: dict[str, ContextItem]) -> list[str]:
    """Names the task mentions that no relevant context item defines or uses."""
    relevant = [it for it in items.values() if it.relevance >= 0.5]
    have: set[str] = set()
    for it in relevant:
        have.update(tokenize(f"{it.hit.symbol or ''} {it.hit.text or ''}"))
    gaps = []
    for ident in analysis.identifiers:
        last = ident.split(".")[-1]
        if last.lower() not in have:
            gaps.append(ident)
    return gaps


def _refine_keywords(
    items: Sequence[ContextItem],
    analysis: QueryAnalysis,
    limits: RefineLimits = RefineLimits(),  # noqa: B008 - frozen
) -> list[str]:
    """Distinctive identifiers of high-relevance hits: their symbols and the names they call."""
    seen = {t for t in tokenize(analysis.text)}
    out: list[str] = []
    for it in items:
        names = [it.hit.symbol.split(".")[-1]] if it.hit.symbol else []
        names += CALL.findall(it.hit.text or "")[: limits.calls_per_hit]
        for name in names:
            for tok in tokenize(name)[:1]:
                if tok not in seen and len(tok) > 3:
                    seen.add(tok)
                    out.append(tok)
    return out[: limits.keywords]


def loop_analysis(
    searcher: HybridSearcher, question: str, analysis: QueryAnalysis | None = None
) -> QueryAnalysis:
    """`question` as the loop reads it: the searcher's analysis, with the project's names
    as prose words. The project's name as a prose word (`bat`, `rg`, `flask`) is neither
    a name to look up (bat's diagnostics script defines a `BAT`) nor evidence for one
    file; written otherwise (`Flask`, `BAT_PAGER`) it is a name of the code.
    `analysis`: `searcher.analyze(question)` when the caller has it (it is read, not
    changed: the loop's reading is a copy)."""
    analysis = searcher.analyze(question) if analysis is None else analysis.model_copy(deep=True)
    own = project_names(searcher.root)
    analysis.project = sorted(own)
    analysis.identifiers = [i for i in analysis.identifiers if i not in own]
    return analysis


def run_loop(
    searcher: HybridSearcher,
    question: str,
    *,
    config: LoopConfig | None = None,
    evaluator: Evaluator | None = None,
    analysis: QueryAnalysis | None = None,
) -> LoopResult:
    """The loop's context for `question`: at most `config.max_cycles` cycles of
    DISPATCH, EVALUATE and REFINE (the module docstring), each recorded in the trace.
    `analysis`: the question's `loop_analysis`, when the caller has it already."""
    return _Loop(
        searcher,
        question,
        config or LoopConfig(),
        evaluator or OfflineEvaluator(),
        analysis or loop_analysis(searcher, question),
    ).run()


@dataclass
class _Assessed:
    """What one cycle's evaluations say about the context so far (REFINE's input)."""

    ranked: list[ContextItem]
    """Every item so far, by relevance."""
    high: list[ContextItem]
    gaps: list[str]
    critical: list[str]


class _Loop:
    """One task's run of the loop: the state its cycles share, and one method a phase."""

    def __init__(
        self,
        searcher: HybridSearcher,
        question: str,
        config: LoopConfig,
        evaluator: Evaluator,
        analysis: QueryAnalysis,
    ) -> None:
        self.searcher, self.question = searcher, question
        self.config, self.evaluator = config, evaluator
        self.analysis = analysis
        self.items: dict[str, ContextItem] = {}
        self.excluded: list[str] = []
        self.keywords: list[str] = []
        self.targeted: list[str] = []
        self.trace: list[Cycle] = []
        self.pending_gaps: list[str] = []
        self.resolved: set[str] = set()  # gap names whose definitions were looked up
        self.memo: dict[str, Any] = {}  # the searcher's work that depends on the task text alone
        self.definitions: dict[str, list[Spot]] = {}  # name -> where defined, so far
        self.links: list[Link] = []  # callers and callees of high hits, for the next cycle
        self.followed: set[tuple[str, int]] = set()  # (path, first line) of the hits followed
        self.searched: list[str] = []

    def run(self) -> LoopResult:
        """DISPATCH, EVALUATE and REFINE a cycle at a time until a stop; then the items in
        the order the context shows them."""
        stop_reason = ""
        for n in range(1, self.config.max_cycles + 1):
            keep = PathFilter(self.config.include, [*self.config.exclude, *self.excluded])
            cands, looked_up, linked = self._dispatch(keep)
            batch = self._batch(n, cands)
            cycle, evals = self._evaluate(n, batch, looked_up, linked)
            assessed = self._assess(cycle, batch, evals)
            stop = self._stop(n, assessed)
            if stop is not None:
                stop_reason = cycle.stop = stop
                break
            self._refine(assessed)
        return LoopResult(
            question=self.question,
            analysis=self.analysis,
            items=self._ordered(),
            searched=self.searched,
            trace=self.trace,
            stop_reason=stop_reason,
        )

    def _dispatch(self, keep: PathFilter) -> tuple[dict[str, Candidate], list[str], list[str]]:
        """The cycle's pool: the search's candidates for the query and the refined
        keywords, the definitions of the pending gaps and the chunks of the links
        followed; with the gap names looked up and the links added."""
        cands = self.searcher.candidates(
            self.analysis,
            keep=keep,
            languages=self.config.languages,
            extra_tokens=self.keywords,
            memo=self.memo,
        )
        # Target the gaps: definitions of missing names go straight into the pool.
        looked_up = [g for g in self.pending_gaps if g not in self.targeted][
            : self.config.refine.gaps
        ]
        self.targeted += looked_up
        gap_symbols = self.searcher.lookups.symbols_named(looked_up)
        gap_rows = self.searcher.lookups.definition_chunks(gap_symbols)
        for sym in gap_symbols:
            row = gap_rows.get((sym["path"], sym["start_line"]))
            if row is None or not keep(row["path"]):
                continue
            self.resolved.add(sym["name"])
            if row["id"] in cands:
                cands[row["id"]].signals["gap"] = 1.0
            else:
                cands[row["id"]] = Candidate(row, {"gap": 1.0}, score=0.0)
        linked = _add_links(self.searcher, self.links, keep, cands)
        return cands, looked_up, linked

    def _batch(self, n: int, cands: dict[str, Candidate]) -> list[Candidate]:
        """What the cycle evaluates: the best new candidates spread over files, the gaps'
        definitions and the links not yet in the context, and what the task names."""
        config = self.config
        ranked = sorted(cands.values(), key=lambda c: (-c.score, c.id))
        if n == 1:  # nothing looked up or followed yet: the search's own pool
            self.searched = [h.path for h in to_hits(self.searcher.lookups, ranked, _SEARCHED)]
        fresh = _spread(
            [c for c in ranked if c.id not in self.items], config.per_cycle, config.per_file
        )
        if n > 1:  # new to this cycle: found by the refined query, not the task's words
            for c in fresh:
                c.signals.setdefault("refined", 1.0)
        gap_cands = [
            c
            for c in ranked
            if ("gap" in c.signals or _LINKS & c.signals.keys())
            and c.id not in self.items
            and c not in fresh
        ]
        batch = fresh + gap_cands
        batch += _named(ranked, self.items, batch, config.refine.named)
        return batch

    def _evaluate(
        self, n: int, batch: list[Candidate], looked_up: list[str], linked: list[str]
    ) -> tuple[Cycle, list[Evaluation]]:
        """The evaluator's verdict on each of `batch`, recorded in the cycle; the best
        evaluation of each chunk is kept."""
        in_context = self.resolved | {
            it.hit.symbol.split(".")[-1] for it in self.items.values() if it.hit.symbol
        }
        known = _known_names(self.searcher, batch, self.definitions)
        evals = self.evaluator.evaluate(self.analysis, batch, known, in_context)
        cycle = Cycle(
            n=n,
            keywords=[*self.analysis.identifiers, *self.analysis.terms[:12], *self.keywords],
            excluded=list(self.excluded),
            targeted=looked_up,
            followed=linked,
        )
        for cand, ev in zip(batch, evals, strict=True):
            cycle.candidates.append(
                (
                    f"{cand.row['path']}:{cand.row['start_line']}-{cand.row['end_line']}",
                    ev.relevance,
                )
            )
            _keep_best(self.items, cand, ev, n)
        return cycle, evals

    def _assess(self, cycle: Cycle, batch: list[Candidate], evals: list[Evaluation]) -> _Assessed:
        """REFINE's reading of the cycle: files whose every candidate scored below
        `exclude_below` are excluded; the high hits, the gaps the relevant items name and
        the critical gaps are recorded in the cycle, which joins the trace."""
        config = self.config
        by_file: dict[str, float] = {}
        for cand, ev in zip(batch, evals, strict=True):
            by_file[cand.row["path"]] = max(by_file.get(cand.row["path"], 0.0), ev.relevance)
        for path, best in by_file.items():
            if best < config.exclude_below and path not in self.excluded:
                self.excluded.append(path)
        ranked_items = sorted(self.items.values(), key=lambda it: -it.relevance)
        high = [it for it in ranked_items if it.relevance >= config.high]
        gaps = list(
            dict.fromkeys(
                g
                for it in ranked_items[:10]
                if it.relevance >= 0.5
                for g in it.missing_context
                if g not in self.resolved
            )
        )
        critical = _critical_gaps(self.analysis, self.items)
        cycle.gaps, cycle.critical_gaps, cycle.high_hits = gaps, critical, len(high)
        self.trace.append(cycle)
        return _Assessed(ranked_items, high, gaps, critical)

    def _stop(self, n: int, assessed: _Assessed) -> str | None:
        """Why the loop stops after cycle `n`, or None to go on."""
        config = self.config
        if len(assessed.high) >= config.stop_hits and not assessed.critical:
            return (
                f"{len(assessed.high)} results scored >= {config.high} and no critical gap remains"
            )
        if n > 1 and not any(
            it.cycle == n and it.relevance >= config.exclude_below for it in self.items.values()
        ):
            return "converged: the last cycle found nothing new of relevance"
        if n == config.max_cycles:
            return f"reached {config.max_cycles} cycles"
        return None

    def _refine(self, assessed: _Assessed) -> None:
        """The next cycle's query: the high hits' identifiers as keywords, the gaps to
        look up, and the best caller and callee of a few high hits not followed yet."""
        high, analysis, items = assessed.high, self.analysis, self.items
        new_keywords = _refine_keywords(high or assessed.ranked[:3], analysis, self.config.refine)
        self.keywords = list(dict.fromkeys([*self.keywords, *new_keywords]))
        self.pending_gaps = [*assessed.critical, *assessed.gaps]
        spans = [
            (it.hit.path, it.hit.start_line, it.hit.end_line, it.hit.symbol)
            for it in high
            if (it.hit.path, it.hit.start_line) not in self.followed
        ][: self.config.refine.followed]
        self.followed.update((path, start) for path, start, _, _ in spans)
        self.links = links_of(
            self.searcher.store,
            spans,
            limit=1,
            # Not what the context already shows, nor tests the task is not about.
            skip=lambda path, line: analysis.unasked_test(path) or _shown(items, path, line),
            lookups=self.searcher.lookups,
        )

    def _ordered(self) -> list[ContextItem]:
        """The items as the context shows them: by relevance and behaviour, the gaps a
        later cycle found left out, without files now outside the root, stale ones
        marked."""
        analysis, lookups = self.analysis, self.searcher.lookups
        # Within what is relevant, the code that holds the behaviour comes before a
        # docstring, a class header or an import block that only names it (behaviour.py).
        # A chunk that defines a value the question names keeps its place (`defines_any`).
        # A chunk cut from a long definition is read with the lines of it above (a
        # docstring's rest is prose, not code).
        named = {it.hit.path for it in self.items.values() if it.hit.symbol}
        definitions: dict[str, list[dict[str, Any]]] = {}
        for r in lookups.rows_in(
            "symbols", ["path", "qualified_name", "start_line", "end_line"], "path", named
        ):
            definitions.setdefault(r["path"], []).append(r)
        sources: dict[str, list[str]] = {}
        for it in self.items.values():
            row = {
                "path": it.hit.path,
                "start_line": it.hit.start_line,
                "end_line": it.hit.end_line,
                "symbol": it.hit.symbol,
            }
            above = definition_of(row, definitions.get(it.hit.path, ())) if it.hit.symbol else None
            share = behaviour_share(
                it.hit.text or "",
                it.hit.language,
                imports_are_code=analysis.mentions_imports,
                preceding=lines_above(self.searcher.root, row, above, sources),
            )
            if share < 1 and not defines_any(it.hit.text or "", analysis.identifiers):
                it.behaviour = share
                it.reason += "; mostly docstring, comments or imports"
        ranked_items = sorted(
            self.items.values(),
            key=lambda it: (
                -it.relevance * it.behaviour,
                -it.relevance,
                it.hit.path,
                it.hit.start_line,
            ),
        )
        # A gap found by a later cycle is no gap any more.
        in_context = self.resolved | {
            it.hit.symbol.split(".")[-1] for it in ranked_items if it.hit.symbol
        }
        for it in ranked_items:
            it.missing_context = [m for m in it.missing_context if m not in in_context]
        # A file that became a symlink leading out of the root since it was indexed is not
        # shown: its blocks would be read from outside.
        outside = lookups.outside_paths(it.hit.path for it in ranked_items)
        ranked_items = [it for it in ranked_items if it.hit.path not in outside]
        stale = lookups.stale_paths(it.hit.path for it in ranked_items)
        for it in ranked_items:
            if it.hit.path in stale:
                it.hit = it.hit.model_copy(update={"stale": True})
        return ranked_items


def _spread(ranked: Sequence[Candidate], limit: int, per_file: int) -> list[Candidate]:
    """The best `limit` candidates taking at most `per_file` from one file; when too few
    files are left, the rest are filled from the best of those passed over."""
    picked: list[Candidate] = []
    passed: list[Candidate] = []
    count: dict[str, int] = {}
    for cand in ranked:
        if len(picked) == limit:
            break
        path = cand.row["path"]
        if count.get(path, 0) < per_file:
            count[path] = count.get(path, 0) + 1
            picked.append(cand)
        else:
            passed.append(cand)
    picked += passed[: limit - len(picked)]
    return picked


_LINKS = frozenset({"caller", "callee"})
_SEARCHED = SearchOptions(grain="file", limit=10)


def _shown(items: dict[str, ContextItem], path: str, line: int) -> bool:
    return any(
        it.hit.path == path and it.hit.start_line <= line <= it.hit.end_line
        for it in items.values()
    )


def _add_links(
    searcher: HybridSearcher,
    links: Sequence[Link],
    keep: PathFilter,
    cands: dict[str, Candidate],
) -> list[str]:
    """Put the chunks of `links` into the pool, flagged with their relation; what was
    added, as 'caller of X: path:line'. A caller's chunk is the one holding the
    referencing line, a callee's the one showing its definition."""
    wanted = [
        {"path": link.path, "start_line": link.line, "qualified_name": link.qualified_name}
        for link in links
        if keep(link.path)
    ]
    rows = searcher.lookups.definition_chunks(wanted) if wanted else {}
    added: list[str] = []
    for link in links:
        row = rows.get((link.path, link.line))
        if row is None:
            continue
        if row["id"] in cands:
            cands[row["id"]].signals[link.relation] = 1.0
        else:
            cands[row["id"]] = Candidate(row, {link.relation: 1.0}, score=0.0)
        added.append(f"{link.relation} of {link.of}: {link.path}:{link.line}")
    return added


def _named(
    ranked: Sequence[Candidate],
    items: dict[str, ContextItem],
    batch: Sequence[Candidate],
    limit: int,
) -> list[Candidate]:
    """What the task points at that the batch and the context lack: the best candidate of
    each file it names (a path or a stack-trace frame), each definition of a name it
    mentions that is defined in few places (a full symbol signal), and each chunk that
    holds a flag or message it quotes (`pool.literal_rows`: where a quoted flag is
    defined or read). Always looked at, at most `limit` of each."""
    files = {c.row["path"] for c in batch} | {it.hit.path for it in items.values()}
    taken = {c.id for c in batch} | items.keys()
    named_files: list[Candidate] = []
    definitions: list[Candidate] = []
    literals: list[Candidate] = []
    for cand in ranked:
        if cand.id in taken:
            continue
        if "path" in cand.signals and cand.row["path"] not in files:
            files.add(cand.row["path"])
            named_files.append(cand)
        elif cand.signals.get("symbol", 0.0) >= 0.8:
            definitions.append(cand)
        elif "literal" in cand.signals:
            literals.append(cand)
    return named_files[:limit] + definitions[:limit] + literals[:limit]


def _keep_best(items: dict[str, ContextItem], cand: Candidate, ev: Evaluation, n: int) -> None:
    old = items.get(cand.id)
    if old is not None and old.relevance >= ev.relevance:
        return
    hit = chunk_hit(cand)
    items[cand.id] = ContextItem(
        hit=hit,
        relevance=ev.relevance,
        reason=ev.reason,
        missing_context=ev.missing_context,
        cycle=old.cycle if old else n,
    )


_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _known_names(
    searcher: HybridSearcher,
    batch: Sequence[Candidate],
    definitions: dict[str, list[Spot]],
) -> dict[str, list[Spot]]:
    """Names called in the batch that are defined in the index: name -> where (`Spot`:
    path, line, the type it is a method of). `definitions` remembers earlier look-ups
    (names defined nowhere map to [])."""
    called = {m for c in batch for m in used_names(c.row["text"]) if _WORD.match(m)}
    fresh = sorted(called - definitions.keys())
    if fresh:
        for name in fresh:
            definitions[name] = []
        for r in searcher.lookups.definitions_of(fresh):
            definitions[r["name"]].append(
                Spot(r["path"], r["start_line"], owner_of(r["qualified_name"]))
            )
    return {name: definitions[name] for name in sorted(called) if definitions[name]}
