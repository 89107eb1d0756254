"""`dowse ask`: run the retrieval loop and pack the best context into a token budget.

Ranking files: each file of the context items by its best item's relevance and
retrieval evidence (`rank_score`, a little more for several relevant parts), fused by
reciprocal rank with the files whose chunks match the question's words best taken
together (`HybridSearcher.files_by_words`, close to a whole-file BM25; `WORDS_WEIGHT`).
A file only the word ranking found (none of its parts was scored relevant) is listed
too, with relevance 0, and gets a signature line in the context. The ranking by
closeness in meaning joins the fusion the same way (`CLOSENESS_WEIGHT`), and the
ranking by the past commits whose messages match the question (`HISTORY_WEIGHT`)
reorders the files listed, never adding one.

Packing: context items (relevance >= 0.2, best first) are widened to their whole
enclosing definition when it is small enough, overlapping ranges are merged, and whole
blocks are added while they fit the budget less a reserve (`SIGNATURE_SHARE`); the rest
are listed as signatures with their citations: first one for each ranked file that has
no block yet, in file order, then the others, while the whole budget allows. So a
reader always learns where the next-best files are, not only the code of the first few.
The token count uses a conservative estimate (3 characters a token), so the delivered
context never exceeds the budget.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from dowse.indexer.store import quote_list
from dowse.retrieval.evaluate import Evaluator
from dowse.retrieval.grains import read_lines
from dowse.retrieval.hybrid import HybridSearcher, PathFilter
from dowse.retrieval.loop import ContextItem, Cycle, LoopConfig, run_loop
from dowse.retrieval.query import analyze
from dowse.retrieval.records import check_query

__all__ = ["AskResult", "ContextBlock", "FileResult", "ask", "estimate_tokens", "rank_score"]

CHARS_PER_TOKEN = 3.0
MIN_RELEVANCE = 0.2
FILE_RELEVANCE_WEIGHT = 0.5
SIGNATURE_SHARE = 0.15
"""The budget share kept for the signatures of what did not fit whole."""
UNEVALUATED_REASON = "no part scored relevant; its chunks match the question's words best together"
WORDS_WEIGHT = 0.2
"""The whole-file word ranking's weight beside the evaluated ranking, both as reciprocal
ranks: a file's place is 1/(1 + its rank by relevance and evidence) + WORDS_WEIGHT/(1 +
its rank by words) (RESULTS-eval.md section 11) + CLOSENESS_WEIGHT/(1 + its rank by
closeness)."""
CLOSENESS_WEIGHT = 0.3
"""The weight of the ranking of files by closeness in meaning (`files_by_closeness`: a
file's summary or its closest definition) beside the other two (RESULTS-eval.md section
15: with every definition embedded it ranks the fixed file in its top 10 for 79 % of the
dev tasks)."""
UNEVALUATED_CLOSE_REASON = "no part scored relevant; its file is close to the question in meaning"
HISTORY_WEIGHT = 0.5
"""The weight of the ranking of files by the past commits whose messages match the
question (`files_by_history`), beside the other three (RESULTS-eval.md section 17). It
only reorders files the other rankings found: what a commit message matches is a hint
about a file, not evidence of what its code does."""


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class ContextBlock(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    start_line: int
    end_line: int
    symbol: str | None = None
    kind: str | None = None
    relevance: float
    reason: str
    form: Literal["full", "signature"] = Field(
        description="full source lines, or only the signature and citation"
    )
    text: str
    stale: bool = False
    tokens: int

    @property
    def citation(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


class FileResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    relevance: float
    score: float = Field(description="ranking score: relevance and retrieval evidence")
    reason: str
    citations: list[str]
    words_rank: int | None = Field(
        default=None,
        description=(
            "its place (0 first) among the files whose chunks match the question's words best "
            "taken together, when among the first few"
        ),
    )
    closeness_rank: int | None = Field(
        default=None,
        description=(
            "its place (0 first) among the files closest to the question in meaning, when "
            "among the first few"
        ),
    )
    history_rank: int | None = Field(
        default=None,
        description=(
            "its place (0 first) among the files changed by the past commits whose messages "
            "match the question best, when among the first few"
        ),
    )
    commits: list[str] = Field(
        default_factory=list,
        description=("the best of those commits that changed it: short hash and subject"),
    )


class AskResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str
    mode: Literal["retrieval"] = "retrieval"
    files: list[FileResult]
    context: list[ContextBlock]
    tokens: int = Field(description="estimated tokens of the delivered context")
    budget: int | None
    stop_reason: str
    cycles: int
    trace: list[Cycle] = Field(default_factory=list)


def rank_score(item: ContextItem) -> float:
    """How strongly an item answers: the evaluator's relevance says what a chunk is, the
    fused retrieval score how strongly the query points at it; both count."""
    return FILE_RELEVANCE_WEIGHT * item.relevance + (1 - FILE_RELEVANCE_WEIGHT) * min(
        item.hit.score, 1.0
    )


def _files(
    items: list[ContextItem],
    by_words: Sequence[tuple[str, dict]] = (),
    by_closeness: Sequence[tuple[str, dict]] = (),
    by_history: Sequence[tuple[str, list[dict]]] = (),
) -> list[FileResult]:
    """The files of the context items, by relevance and evidence, fused with the
    whole-file word ranking (`WORDS_WEIGHT`), the ranking by closeness in meaning
    (`CLOSENESS_WEIGHT`) and the ranking by past commits (`HISTORY_WEIGHT`, for files
    already listed); a file only the word or closeness ranking found is listed with
    relevance 0 and its chunk's citation (the best for the words, else its closest
    definition's)."""
    evaluated = _evaluated_files(items)
    if not by_words and not by_closeness:
        return evaluated
    words = {path: i for i, (path, _) in enumerate(by_words)}
    close = {path: i for i, (path, _) in enumerate(by_closeness)}
    history = {path: (i, commits) for i, (path, commits) in enumerate(by_history)}
    place = {f.path: 1 / (1 + i) for i, f in enumerate(evaluated)}
    out = [
        f.model_copy(update={"words_rank": words.get(f.path), "closeness_rank": close.get(f.path)})
        for f in evaluated
    ]
    for path, (row, reason) in _unevaluated(
        by_words, by_closeness, {f.path for f in evaluated}
    ).items():
        out.append(
            FileResult(
                path=path,
                relevance=0.0,
                score=0.0,
                words_rank=words.get(path),
                closeness_rank=close.get(path),
                reason=reason,
                citations=[f"{path}:{row['start_line']}-{row['end_line']}"],
            )
        )
    for i, f in enumerate(out):
        if f.path in history:
            rank, commits = history[f.path]
            out[i] = f = f.model_copy(
                update={
                    "history_rank": rank,
                    "commits": [f"{c['id'][:12]} {c['subject']}" for c in commits[:2]],
                }
            )
        place[f.path] = place.get(f.path, 0.0) + sum(
            weight / (1 + rank)
            for weight, rank in (
                (WORDS_WEIGHT, f.words_rank),
                (CLOSENESS_WEIGHT, f.closeness_rank),
                (HISTORY_WEIGHT, f.history_rank),
            )
            if rank is not None
        )
    out.sort(key=lambda f: (-place[f.path], f.path))
    return out


def _unevaluated(
    by_words: Sequence[tuple[str, dict]],
    by_closeness: Sequence[tuple[str, dict]],
    evaluated: Collection[str],
) -> dict[str, tuple[dict, str]]:
    """The files only the word or the closeness ranking found, in that order, each with
    the chunk it came with (the word ranking's first) and the reason it is listed."""
    out: dict[str, tuple[dict, str]] = {}
    for ranking, reason in (
        (by_words, UNEVALUATED_REASON),
        (by_closeness, UNEVALUATED_CLOSE_REASON),
    ):
        for path, row in ranking:
            if path not in evaluated:
                out.setdefault(path, (row, reason))
    return out


def _evaluated_files(items: list[ContextItem]) -> list[FileResult]:
    by_path: dict[str, list[ContextItem]] = {}
    for it in items:
        by_path.setdefault(it.hit.path, []).append(it)
    out = []
    for path, its in by_path.items():
        best = max(its, key=lambda i: i.relevance)
        # A file with several relevant parts ranks a little above one with a single part.
        bonus = min(0.05 * (len(its) - 1), 0.1)
        rank = max(rank_score(i) for i in its)
        out.append(
            FileResult(
                path=path,
                relevance=round(min(best.relevance + bonus, 1.0), 3),
                score=round(rank + bonus, 4),
                reason=best.reason,
                citations=[i.hit.citation for i in its],
            )
        )
    out.sort(key=lambda f: (-f.score, f.path))
    return out


def _widen(
    searcher: HybridSearcher, items: list[ContextItem], max_lines: int
) -> list[tuple[ContextItem, int, int, str | None, str | None, str]]:
    """Each item's range, widened to its enclosing definition when that is small enough."""
    paths = sorted({it.hit.path for it in items})
    symbols: dict[tuple[str, str], dict] = {}
    if paths:
        for r in searcher.store.rows(
            "symbols",
            ["path", "qualified_name", "kind", "start_line", "end_line", "signature"],
            where=f"path IN ({quote_list(paths)})",
        ):
            symbols[(r["path"], r["qualified_name"])] = r
    out = []
    for it in items:
        h = it.hit
        start, end, kind, signature = h.start_line, h.end_line, None, ""
        sym = symbols.get((h.path, h.symbol or ""))
        if sym is not None:
            kind, signature = sym["kind"], sym["signature"]
            if sym["end_line"] - sym["start_line"] < max_lines:
                start, end = min(start, sym["start_line"]), max(end, sym["end_line"])
        out.append((it, start, end, h.symbol, kind, signature))
    return out


def ask(
    searcher: HybridSearcher,
    question: str,
    *,
    budget: int | None = None,
    loop: LoopConfig | None = None,
    evaluator: Evaluator | None = None,
    with_trace: bool = True,
) -> AskResult:
    check_query(question, "question")
    config = loop or LoopConfig()
    keep = PathFilter(config.include, config.exclude)
    # The history's ranking needs only the question: it runs while the loop does.
    with ThreadPoolExecutor(max_workers=1) as pool:
        history = pool.submit(
            searcher.files_by_history, analyze(question), keep=keep, languages=config.languages
        )
        result = run_loop(searcher, question, config=loop, evaluator=evaluator)
        by_history = history.result()
    items = [it for it in result.items if it.relevance >= MIN_RELEVANCE]
    limit = budget if budget is not None else 8000
    widened = _widen(searcher, items, max_lines=120)
    blocks: list[ContextBlock] = []
    taken: dict[str, list[tuple[int, int]]] = {}
    used = 0
    rest = []
    whole = limit - math.floor(limit * SIGNATURE_SHARE)
    for it, start, end, symbol, kind, signature in widened:
        spans = taken.setdefault(it.hit.path, [])
        if any(s <= start and end <= e for s, e in spans):
            continue  # already delivered inside a wider block
        text = read_lines(searcher.root, it.hit.path, start, end) or it.hit.text or ""
        cost = estimate_tokens(text) + estimate_tokens(f"{it.hit.path}:{start}-{end}") + 4
        if used + cost <= whole:
            spans.append((start, end))
            used += cost
            blocks.append(
                ContextBlock(
                    path=it.hit.path,
                    start_line=start,
                    end_line=end,
                    symbol=symbol,
                    kind=kind,
                    relevance=it.relevance,
                    reason=it.reason,
                    form="full",
                    text=text,
                    stale=it.hit.stale,
                    tokens=cost,
                )
            )
        else:
            rest.append((it, start, end, symbol, kind, signature))
    by_words = searcher.files_by_words(result.analysis, keep=keep, languages=config.languages)
    by_closeness = searcher.files_by_closeness(
        result.analysis, keep=keep, languages=config.languages
    )
    files = _files(items, by_words, by_closeness, by_history)
    order = {f.path: i for i, f in enumerate(files)}
    shown = {b.path for b in blocks}
    # Signature lines: (path, start, end, symbol, kind, relevance, reason, line, stale).
    lines = [
        (
            it.hit.path,
            start,
            end,
            symbol,
            kind,
            it.relevance,
            it.reason,
            signature or _first_line(it.hit.text),
            it.hit.stale,
        )
        for it, start, end, symbol, kind, signature in rest
    ]
    unevaluated = _unevaluated(by_words, by_closeness, {it.hit.path for it in items})
    for path in searcher.outside_paths(unevaluated):
        del unevaluated[path]
    stale = searcher.stale_paths(unevaluated)
    lines += [
        (
            path,
            row["start_line"],
            row["end_line"],
            row["symbol"],
            None,
            0.0,
            reason,
            _first_line(row["text"]),
            path in stale,
        )
        for path, (row, reason) in unevaluated.items()
    ]
    firsts: dict[str, tuple] = {}
    others = []
    for entry in lines:
        if entry[0] in shown or entry[0] in firsts:
            others.append(entry)
        else:
            firsts[entry[0]] = entry
    ordered = sorted(firsts.values(), key=lambda e: order.get(e[0], len(order))) + others
    for path, start, end, symbol, kind, relevance, reason, line, is_stale in ordered:
        cost = estimate_tokens(line) + estimate_tokens(f"{path}:{start}-{end}") + 4
        if used + cost > limit:
            continue
        used += cost
        blocks.append(
            ContextBlock(
                path=path,
                start_line=start,
                end_line=end,
                symbol=symbol,
                kind=kind,
                relevance=relevance,
                reason=reason,
                form="signature",
                text=line,
                stale=is_stale,
                tokens=cost,
            )
        )
    return AskResult(
        question=question,
        files=files,
        context=blocks,
        tokens=used,
        budget=budget,
        stop_reason=result.stop_reason,
        cycles=len(result.trace),
        trace=result.trace if with_trace else [],
    )


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n")[0][:160]


def render_markdown(result: AskResult, *, trace: bool = False) -> str:
    lines = [f"# {result.question}", ""]
    lines.append(
        f"_{len(result.files)} files, {len(result.context)} blocks, "
        f"~{result.tokens} tokens"
        + (f" of {result.budget}" if result.budget else "")
        + f"; {result.cycles} cycle(s): {result.stop_reason}_"
    )
    lines += ["", "## Files", ""]
    for f in result.files[:15]:
        lines.append(
            f"- `{f.path}` (relevance {f.relevance:.2f}, rank score {f.score:.2f}): "
            f"{f.reason}" + (f"; changed by {f.commits[0]}" if f.commits else "")
        )
    lines += ["", "## Context", ""]
    for b in result.context:
        what = f" {b.kind} `{b.symbol}`" if b.kind and b.symbol else ""
        stale = " **(stale: file changed since indexing)**" if b.stale else ""
        lines.append(f"### `{b.citation}`{what} ({b.relevance:.2f}){stale}")
        lines.append(f"{b.reason}")
        if b.form == "full":
            lines += ["", "```", b.text, "```", ""]
        else:
            lines += ["", f"    {b.text}", ""]
    if trace:
        lines += ["## Trace", ""]
        for c in result.trace:
            lines.append(
                f"- cycle {c.n}: keywords {', '.join(c.keywords[:12])}; "
                f"{len(c.candidates)} candidates, {c.high_hits} high; "
                f"excluded {len(c.excluded)}; gaps {', '.join(c.gaps) or '-'}; "
                f"critical {', '.join(c.critical_gaps) or '-'}"
                + (f"; targeted {', '.join(c.targeted)}" if c.targeted else "")
                + (f"; stop: {c.stop}" if c.stop else "")
            )
    return "\n".join(lines).rstrip() + "\n"
