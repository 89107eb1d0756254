"""`dowse ask`: run the retrieval loop and pack the best context into a token budget.

Ranking files: each file of the context items by its best item's relevance and
retrieval evidence (`rank_score`, a little more for several relevant parts), fused by
reciprocal rank with the files whose chunks match the question's words best taken
together (`file_ranking.files_by_words`, close to a whole-file BM25; `FileFusion.words`).
A file only the word ranking found (none of its parts was scored relevant) is listed
too, with relevance 0, and gets a signature line in the context. The ranking by
closeness in meaning joins the fusion the same way (`FileFusion.closeness`), and the
ranking by the past commits whose messages match the question (`FileFusion.history`)
reorders the files listed, never adding one.

Packing (`Packing`): first the best part of each of the first `lead_files` files (`file_parts`:
each file's chunks ranked by the question's words, closeness in meaning, the names it
mentions and the loop's evaluations), then the context items (relevance >= 0.2, best
first), each as a whole block of its own lines while it fits; overlapping ranges merge.
Then each delivered item grows to its whole enclosing definition, when that is small
enough, while it still fits. The source gets the budget less the printed frame at its
smallest (`Frame`: title cut to `title_chars`, summary, the files list without its evidence,
which printing trims first: `fit_result`) and less a reserve (`signature_share`);
blocks are costed as printed (in markdown without their reasons: `Frame.block_reasons`).
The rest are listed as signatures with their citations: first one for each ranked
file that has no block yet, in file order, then the others, while the whole budget
allows. So a reader always learns where the next-best files are, not only the code of
the first few. Every token is counted by `budget.estimate_tokens`, the one counter, on
the text as printed.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from dowse.budgets import DEFAULT_BUDGET
from dowse.languages import is_test_attribute, is_test_path
from dowse.quote import code_span, fence, one_line
from dowse.retrieval.behaviour import VALUE_KINDS
from dowse.retrieval.budget import (
    CHARS_PER_TOKEN,
    Entry,
    Levels,
    Step,
    estimate_tokens,
    fit,
    forms,
    steps,
)
from dowse.retrieval.definitions import DefinitionRanking, RankedDefinition, ranked_definitions
from dowse.retrieval.evaluate import Evaluator
from dowse.retrieval.file_parts import best_parts, definition_of, distinct_parts, printed_lines
from dowse.retrieval.file_ranking import files_by_closeness, files_by_history, files_by_words
from dowse.retrieval.fusion import FileFusion, file_place
from dowse.retrieval.grains import chunk_hit, read_lines
from dowse.retrieval.hybrid import HybridSearcher, PathFilter
from dowse.retrieval.lookups import IndexLookups
from dowse.retrieval.loop import (
    ContextItem,
    Cycle,
    LoopConfig,
    LoopResult,
    loop_analysis,
    run_loop,
)
from dowse.retrieval.pool import Candidate
from dowse.retrieval.query import QueryAnalysis
from dowse.retrieval.records import ContextBlock, FileResult, check_query, left_out_when_empty
from dowse.retrieval.relatives import module_root_up, siblings_up

__all__ = [
    "AskResult",
    "ContextBlock",
    "FileResult",
    "Frame",
    "JsonRecords",
    "Packing",
    "ask",
    "block_plan",
    "definitions_of",
    "estimate_tokens",
    "evaluated_parts",
    "fit_result",
    "is_signature",
    "rank_score",
    "render_json",
    "render_markdown",
    "signature_block",
    "slim_file",
    "title",
]


class Frame(BaseModel):
    """What frames the source in `ask`'s markdown: the title, the summary line and the
    files list. `ask` takes the frame at its smallest from the budget before it packs the
    source (`_source_room`); `render_markdown` prints it. Both are given the same one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title_chars: int = Field(
        default=200,
        gt=1,
        description=(
            "the longest title: the question's first characters. The asker has the "
            "question; a pasted issue echoed whole (often 1,000 tokens and more) would take "
            "the budget its answer needs, and at 2,000 tokens leave no room for a single block"
        ),
    )
    head_tokens: int = Field(
        default=40, ge=0, description="the summary line's share of the frame, beside the title"
    )
    listed_files: int = Field(
        default=15,
        ge=0,
        description="how many ranked files the markdown lists at most (JSON lists them all)",
    )
    min_listed_files: int = Field(
        default=5, ge=0, description="how many it lists at least, under any budget"
    )
    tokens_per_listed_file: int = Field(
        default=400,
        gt=0,
        description=(
            "a budget lists one ranked file for each this many of its tokens (between "
            "`min_listed_files` and `listed_files`): at 2,000 tokens fifteen file lines would "
            "take an eighth of the answer from its code, and the files without a block are "
            "named by their signature lines"
        ),
    )

    block_reasons: bool = Field(
        default=False,
        description=(
            "a block's reason under its heading (when its file's line in the files list "
            "gives another). Off: the heading's citation, name and relevance say what a "
            "block is, the files list says why its file ranks, and the packing gives the "
            "room to code (with `rank_scores` off: 4 % of a 4,000-token answer, django's 56 "
            "dev instances 2 more whose changed lines are all shown, "
            "benchmarks/RESULTS-context.md)"
        ),
    )
    rank_scores: bool = Field(
        default=False,
        description=(
            "a listed file's rank score beside its relevance (the file's place in the list "
            "is its rank; JSON keeps the score)"
        ),
    )

    definition_lines: int = Field(
        default=10,
        ge=0,
        description=(
            "the most ranked definitions whose lines keep their room, one for each "
            "`tokens_per_listed_file` of the budget: the source is packed beside them, and "
            "a fit cuts them only before it cuts a whole block (the list's others take the "
            "room the rest leaves)"
        ),
    )
    definitions_budget: int = Field(
        default=4000,
        ge=0,
        description=(
            "the least budget under which the ranked definitions keep their room: at 4,000 "
            "tokens ten lines cost django's 56 dev instances none of the fix's lines, at "
            "2,000 five cost two of them a hunk (benchmarks/RESULTS-context.md)"
        ),
    )

    def listed(self, budget: int | None) -> int:
        """How many ranked files the markdown lists under `budget`."""
        if budget is None:
            return self.listed_files
        return max(
            self.min_listed_files, min(self.listed_files, budget // self.tokens_per_listed_file)
        )

    def kept_definitions(self, budget: int | None) -> int:
        """How many of the ranked definitions keep their room under `budget`."""
        if budget is None:
            return self.definition_lines
        if budget < self.definitions_budget:
            return 0
        return min(self.definition_lines, budget // self.tokens_per_listed_file)


class Packing(BaseModel):
    """How `ask` shares the source's room among the first files' parts, the loop's items
    and the signature lines (the packing's shares and limits; `FileFusion` ranks)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_relevance: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description=(
            "the loop's items the context takes: those the evaluator scored at least this "
            '(0.2, its "indirectly related"); a first file\'s part the loop did not '
            "evaluate is placed with this relevance"
        ),
    )
    signature_share: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description=(
            "the share of the source's room kept for the signature lines of what did not "
            "fit whole: pointers to the next places to read, five to ten lines at 4,000 "
            "tokens (0.1 while a line was a section with a heading and a reason, twice "
            "the cost of the one-item line it is now)"
        ),
    )
    lead_files: int = Field(
        default=3,
        ge=0,
        description=(
            "the first files whose best part (`file_parts.best_parts`) is shown before the "
            "loop's other items"
        ),
    )
    lead_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description=(
            "at most this share of the source's room goes to the first files' whole "
            "definitions before the loop's other items are placed (their own lines are "
            "placed regardless)"
        ),
    )
    paired_leads: int = Field(
        default=2,
        ge=0,
        description=(
            "how many of the first files have the loop's best item in them placed right "
            "after their best part, before the next file's best part; the others' loop items "
            "wait for the loop's order. A third file's second block is worth less than the "
            "first file's next parts (the first file is the one to change far more often), "
            "while its best part still holds the fix of a change across files: 2, with "
            "`first_file_share` 0.7, measured on both splits and on instances outside them "
            "(benchmarks/RESULTS-context.md)"
        ),
    )
    first_file_parts: int = Field(
        default=6,
        ge=0,
        description="how many of the first file's best parts are candidates for the context",
    )
    first_file_leads: int = Field(
        default=1,
        ge=1,
        description=(
            "how many of the first file's best parts are placed right after its loop-best "
            "item, before the other first files' best parts (the rest of its parts come "
            "after those), within `first_file_share`; the room they take is added to "
            "`lead_share`, so the other files' best parts still fit. On the SWE-bench Lite "
            "dev split the first file's second and third parts held changed lines more "
            "often than the second file's best blocks, outside Python less often: 1 until "
            "a measurement over both splits says otherwise (benchmarks/packing_sweep.py)"
        ),
    )
    first_file_share: float = Field(
        default=0.7,
        ge=0,
        le=1,
        description=(
            "the first file's next parts are shown while that file holds at most this share "
            "of the source's room: the first file is the one to change in two of three "
            "SWE-bench Lite dev instances, and its fixed lines were most often in a part "
            "next to the one shown (0.5 until the room `paired_leads` frees let them fit)"
        ),
    )


class JsonRecords(BaseModel):
    """How an answer printed as JSON costs its records, for packing its context: its
    envelope (everything but the context and the files) costs `frame` tokens, and records
    print with `indent` spaces a level (None: compact), `depth` levels deep."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    frame: int = Field(ge=0)
    indent: int | None = None
    depth: int = Field(default=2, ge=0)

    def _tokens(self, record: BaseModel) -> int:
        if self.indent is None:
            return estimate_tokens(record.model_dump_json()) + 1  # and its comma
        text = record.model_dump_json(indent=self.indent)
        # Each of its lines sits `depth` levels in, past the level its own dump starts at.
        margin = (self.depth - 1) * self.indent * (text.count("\n") + 1)
        return estimate_tokens(text) + math.ceil(margin / CHARS_PER_TOKEN) + 1

    def cost(self, block: ContextBlock) -> int:
        """What a block costs printed: its record, indented as printed."""
        return self._tokens(block)

    def entry(self, path: str) -> int:
        """What the files list's slim entry of a file costs, paid with the file's first
        record in the context (a file no block shows is left out of the list first)."""
        listed = FileResult(path=path, relevance=1.0, score=1.0, reason="", citations=[])
        return self._tokens(listed)

    def room(self, budget: int | None) -> int:
        """The tokens the context and its files' entries may take: the budget less the
        envelope."""
        return max((budget if budget is not None else DEFAULT_BUDGET) - self.frame, 0)


LEAD_REASON = "the best part of the file ranked {n} for the question: {why}"
NEXT_PART_REASON = "a next-best part of the file ranked {n} for the question: {why}"
SIBLING_REASON = "{reason}; its class extends {base}, as two of the first files' classes do"
MODULE_ROOT_REASON = "{reason}; the module root of the first file, {first}"
UNEVALUATED_REASON = "no part scored relevant; its chunks match the question's words best together"
UNEVALUATED_CLOSE_REASON = "no part scored relevant; its file is close to the question in meaning"


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
    definitions: list[RankedDefinition] = Field(
        default_factory=list,
        exclude_if=left_out_when_empty,
        description="the definitions of the first files that answer the question, best "
        "first, each with why (`retrieval.definitions`); left out when none is listed",
    )


def rank_score(item: ContextItem, fusion: FileFusion = FileFusion()) -> float:  # noqa: B008
    """How strongly an item answers: the evaluator's relevance says what a chunk is, the
    fused retrieval score how strongly the query points at it; both count
    (`FileFusion.relevance`)."""
    return fusion.relevance * item.relevance + (1 - fusion.relevance) * min(item.hit.score, 1.0)


def _files(
    items: list[ContextItem],
    by_words: Sequence[tuple[str, dict[str, Any]]] = (),
    by_closeness: Sequence[tuple[str, dict[str, Any]]] = (),
    by_history: Sequence[tuple[str, list[dict[str, Any]]]] = (),
    fusion: FileFusion = FileFusion(),  # noqa: B008 - frozen
    searched: Sequence[str] = (),
) -> list[FileResult]:
    """The files of the context items, by relevance and evidence, fused with the
    whole-file word ranking, the ranking by closeness in meaning and the ranking by past
    commits (for files already listed) by `fusion` (`file_place`); a file only the word
    or closeness ranking found is listed with relevance 0 and its chunk's citation (the
    best for the words, else its closest definition's). The search's first file
    (`searched`, the loop's first cycle) stays first unless the fused first beats it
    (`_search_first`)."""
    evaluated = _evaluated_files(items, fusion)
    if not by_words and not by_closeness:
        return _search_first(evaluated, searched, fusion)
    words = {path: i for i, (path, _) in enumerate(by_words)}
    close = {path: i for i, (path, _) in enumerate(by_closeness)}
    history = {path: (i, commits) for i, (path, commits) in enumerate(by_history)}
    evaluated_rank = {f.path: i for i, f in enumerate(evaluated)}
    place: dict[str, float] = {}
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
        place[f.path] = file_place(
            evaluated_rank.get(f.path), f.words_rank, f.closeness_rank, f.history_rank, fusion
        )
    out.sort(key=lambda f: (-place[f.path], f.path))
    return _search_first(out, searched, fusion)


def _search_first(
    files: list[FileResult], searched: Sequence[str], fusion: FileFusion
) -> list[FileResult]:
    """`files` with the search's first file first unless the fused first file's relevance
    beats its by `FileFusion.search_first` (a file the ranking does not list stays out)."""
    if fusion.search_first is None or not files or not searched or files[0].path == searched[0]:
        return files
    lead = next((f for f in files if f.path == searched[0]), None)
    if lead is None or files[0].relevance - lead.relevance >= fusion.search_first:
        return files
    return [lead, *(f for f in files if f is not lead)]


def _unevaluated(
    by_words: Sequence[tuple[str, dict[str, Any]]],
    by_closeness: Sequence[tuple[str, dict[str, Any]]],
    evaluated: Collection[str],
) -> dict[str, tuple[dict[str, Any], str]]:
    """The files only the word or the closeness ranking found, in that order, each with
    the chunk it came with (the word ranking's first) and the reason it is listed."""
    out: dict[str, tuple[dict[str, Any], str]] = {}
    for ranking, reason in (
        (by_words, UNEVALUATED_REASON),
        (by_closeness, UNEVALUATED_CLOSE_REASON),
    ):
        for path, row in ranking:
            if path not in evaluated:
                out.setdefault(path, (row, reason))
    return out


def _evaluated_files(
    items: list[ContextItem],
    fusion: FileFusion = FileFusion(),  # noqa: B008 - frozen
) -> list[FileResult]:
    by_path: dict[str, list[ContextItem]] = {}
    for it in items:
        by_path.setdefault(it.hit.path, []).append(it)
    out = []
    for path, its in by_path.items():
        best = max(its, key=lambda i: i.relevance)
        # A file with several relevant parts ranks a little above one with a single part.
        bonus = min(fusion.part_bonus * (len(its) - 1), fusion.part_bonus_cap)
        rank = max(rank_score(i, fusion) for i in its)
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


def definitions_of(
    searcher: HybridSearcher, paths: Collection[str]
) -> dict[str, list[dict[str, Any]]]:
    """The definitions of `paths`, by path, in line order."""
    out: dict[str, list[dict[str, Any]]] = {}
    if paths:
        for r in searcher.lookups.rows_in(
            "symbols",
            ["path", "qualified_name", "kind", "start_line", "end_line", "signature", "decorators"],
            "path",
            paths,
        ):
            out.setdefault(r["path"], []).append(r)
    for rows in out.values():
        rows.sort(key=lambda r: (r["start_line"], -r["end_line"]))
    return out


def inline_tests(symbols: dict[str, list[dict[str, Any]]]) -> dict[str, list[tuple[int, int]]]:
    """Per path, the line ranges of the definitions a test attribute marks as test code
    in a file of code (`languages.is_test_attribute`: Rust's `#[cfg(test)] mod tests`
    and `#[test]` functions, JUnit's `@Test`), two such definitions one blank line apart
    as one range."""
    out: dict[str, list[tuple[int, int]]] = {}
    for path, rows in symbols.items():
        if is_test_path(path):
            continue  # a test file is all tests: ranked as one, not cut to nothing
        spans: list[tuple[int, int]] = []
        for r in sorted(rows, key=lambda r: r["start_line"]):
            if not any(is_test_attribute(d) for d in r.get("decorators") or ()):
                continue
            start, end = r["start_line"], r["end_line"]
            if spans and start <= spans[-1][1] + 2:
                spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
            else:
                spans.append((start, end))
        if spans:
            out[path] = spans
    return out


def _lines(it: ContextItem) -> tuple[int, int]:
    return it.hit.start_line, it.hit.end_line


def without_tests(it: ContextItem, tests: dict[str, list[tuple[int, int]]]) -> ContextItem:
    """`it` without the test lines that end or begin its chunk (`inline_tests`): a chunk
    of small definitions merged (a function and the tests after it) shows the function."""
    start, end = _lines(it)
    for a, b in tests.get(it.hit.path, ()):
        if start < a <= end <= b:
            end = a - 1
        elif a <= start <= b < end:
            start = b + 1
    if (start, end) == _lines(it):
        return it
    hit = it.hit.model_copy(update={"start_line": start, "end_line": end, "text": None})
    return it.model_copy(update={"hit": hit})


def in_tests(path: str, start: int, end: int, tests: dict[str, list[tuple[int, int]]]) -> bool:
    """Whether lines `start`..`end` of `path` lie within one of its test ranges
    (`inline_tests`); a part that holds any other line is no test (bat's
    `get_pager_executable` shares a chunk with the tests that call it)."""
    return any(a <= start and end <= b for a, b in tests.get(path, ()))


def evaluated_parts(
    items: Sequence[ContextItem],
) -> dict[str, list[tuple[dict[str, Any], float]]]:
    """The loop's items as `best_parts`' `evaluated`: per path, (chunk row: path, start and
    end line, symbol; relevance), in the loop's order."""
    evaluated: dict[str, list[tuple[dict[str, Any], float]]] = {}
    for it in items:
        row = {
            "path": it.hit.path,
            "start_line": it.hit.start_line,
            "end_line": it.hit.end_line,
            "symbol": it.hit.symbol,
        }
        evaluated.setdefault(it.hit.path, []).append((row, it.relevance))
    return evaluated


def _lead_items(
    searcher: HybridSearcher,
    analysis: QueryAnalysis,
    files: Sequence[FileResult],
    items: Sequence[ContextItem],
    symbols: dict[str, list[dict[str, Any]]],
    stale: Collection[str],
    packing: Packing = Packing(),  # noqa: B008 - frozen
    tests: dict[str, list[tuple[int, int]]] | None = None,
    high: float | None = None,
) -> list[list[ContextItem]]:
    """The best parts of each of `files`, in their order (`best_parts`, the calls of the
    items of at least `high` relevance one of its rankings): one for each
    file, up to `Packing.first_file_parts` for the first, best first, none of a file's
    `tests` (`inline_tests`). Each is the loop's own item when it evaluated that chunk,
    else a new item of the lowest relevance the context shows (`Packing.min_relevance`:
    "indirectly related"), its reason saying why."""
    tests = tests or {}
    by_key: dict[tuple[str, int], ContextItem] = {}
    for it in items:
        by_key.setdefault((it.hit.path, it.hit.start_line), it)
    parts = best_parts(
        searcher,
        analysis,
        [f.path for f in files],
        evaluated=evaluated_parts(items),
        symbols=symbols,
        high=high,
    )
    out: list[list[ContextItem]] = []
    for n, f in enumerate(files, 1):
        ranked = [
            p
            for p in distinct_parts(parts.get(f.path, []), symbols.get(f.path, []))
            if not in_tests(f.path, p.row["start_line"], p.row["end_line"], tests)
        ]
        if not ranked:
            continue
        mine = []
        for place, part in enumerate(ranked[: packing.first_file_parts if n == 1 else 1]):
            known = by_key.get(part.key)
            if known is not None:
                # The loop's own item, with its relevance and reason, at the part's place:
                # the ranking of the file's parts counts the loop's evaluations already.
                mine.append(known)
                continue
            hit = chunk_hit(Candidate(part.row, {}, score=0.0))
            if f.path in stale:
                hit = hit.model_copy(update={"stale": True})
            why = ", ".join(part.why) or "matches the question"
            reason = LEAD_REASON if place == 0 else NEXT_PART_REASON
            mine.append(
                ContextItem(
                    hit=hit,
                    relevance=packing.min_relevance,
                    reason=reason.format(n=n, why=why),
                    cycle=1,
                )
            )
        out.append([without_tests(it, tests) for it in mine])
    return out


def _widen(
    items: list[ContextItem], symbols: dict[str, list[dict[str, Any]]]
) -> list[tuple[ContextItem, list[tuple[int, int]], str | None, str | None]]:
    """Each item with the ranges that would show it, widest first: its enclosing
    definition when that is small enough (`file_parts.printed_lines`), then (last) its
    own lines."""
    out = []
    for it in items:
        h = it.hit
        ranges = [(h.start_line, h.end_line)]
        kind = None
        row = {"start_line": h.start_line, "end_line": h.end_line, "symbol": h.symbol}
        sym = definition_of(row, symbols.get(h.path, []))
        if sym is not None:
            kind = sym["kind"]
            wide = printed_lines(row, [sym])
            if wide != ranges[0]:
                ranges.insert(0, wide)
        out.append((it, ranges, h.symbol, kind))
    return out


_NOT_A_SIGNATURE = re.compile(
    r"""^(?:@|\#\[|from\s+\S+\s+import\b|import\b|\#include\b|use\s|using\s|package\s|
    require\(|(?:const|let|var)\s+\w+\s*=\s*require\(|[rbuRBU]?["']{3}|
    (?:\#|//|/\*|\*|--)|\}|\)|\]|\s*$)""",
    re.X,
)
_DEFINITION_LINE = re.compile(
    r"""^(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?
    (?:(?:public|private|protected|internal|static|final|abstract|open|override|data|
    sealed|unsafe|extern|const|inline|virtual)\s+)*
    (?:def|class|fn|func|function|interface|struct|enum|trait|impl|type|module|object|
    fun|record|namespace|macro_rules!)\b""",
    re.X,
)


def is_signature(line: str) -> bool:
    """Whether `line` can stand for a definition: not blank, not an import, a decorator,
    a comment, a lone docstring quote or a closing bracket."""
    return bool(line.strip()) and not _NOT_A_SIGNATURE.match(line.strip())


def _signature_line(
    path: str,
    start: int,
    end: int,
    symbol: str | None,
    text: str,
    text_at: int,
    symbols: dict[str, list[dict[str, Any]]],
) -> tuple[str, int, int, str | None, str | None] | None:
    """The definition line that stands for a range: (line, start, end, symbol, kind) of
    the range's own definition, else of the first definition inside it (a value only
    when there is no other), else the first line of its text that declares one, else
    the first line that is not an import, decorator, comment or docstring quote. None
    when the range holds no such line."""
    rows = symbols.get(path, [])
    own = [r for r in rows if r["qualified_name"] == (symbol or "")]
    inside = [r for r in rows if start <= r["start_line"] <= end]
    defs = [r for r in inside if r["kind"] not in VALUE_KINDS]  # a value only when no other
    for r in [*own, *defs, *inside]:
        if is_signature(r["signature"]):
            return r["signature"], r["start_line"], r["end_line"], r["qualified_name"], r["kind"]
    lines = text.split("\n")
    for pattern in (_DEFINITION_LINE, None):
        for n, line in enumerate(lines):
            stripped = line.strip()
            if is_signature(stripped) and (pattern is None or pattern.match(stripped)):
                at = text_at + n
                return stripped.removesuffix("{").rstrip()[:160], at, at, symbol, None
    return None


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two line ranges overlap or touch (then one block shows both)."""
    return a[0] <= b[1] + 1 and b[0] <= a[1] + 1


def _place(
    blocks: list[ContextBlock],
    searcher: HybridSearcher,
    it: ContextItem,
    start: int,
    end: int,
    symbol: str | None,
    kind: str | None,
    used: int,
    whole: int,
    cost: Callable[[ContextBlock], int],
    entry: Callable[[str], int],
) -> tuple[list[ContextBlock], int] | None:
    """`blocks` with lines `start`..`end` of the item's file added whole, and the tokens
    they use (each block's by `cost`, and a file's first by `entry` too); None when they
    do not fit `whole` or cannot be read. Lines another block holds are not added again;
    an overlapping (or adjacent) block grows to hold both, so no line prints twice."""
    path = it.hit.path
    mine = [i for i, b in enumerate(blocks) if b.path == path]
    if any(blocks[i].start_line <= start and end <= blocks[i].end_line for i in mine):
        return blocks, used  # already delivered inside a wider block
    near = [i for i in mine if _overlaps((start, end), (blocks[i].start_line, blocks[i].end_line))]
    lo = min([start, *(blocks[i].start_line for i in near)])
    hi = max([end, *(blocks[i].end_line for i in near)])
    text = read_lines(searcher.root, path, lo, hi)
    if text is None and not near and (start, end) == (it.hit.start_line, it.hit.end_line):
        text = it.hit.text or ""  # an unreadable file: the indexed text, marked stale
    if text is None:
        return None
    first = blocks[near[0]] if near else None
    block = ContextBlock(
        path=path,
        start_line=lo,
        end_line=hi,
        symbol=first.symbol if first is not None else symbol,
        kind=first.kind if first is not None else kind,
        relevance=first.relevance if first is not None else it.relevance,
        reason=first.reason if first is not None else it.reason,
        form="full",
        text=text,
        stale=it.hit.stale,
        tokens=0,
    )
    block.tokens = cost(block)
    freed = sum(blocks[i].tokens for i in near)
    listed = 0 if mine else entry(path)
    if used - freed + block.tokens + listed > whole:
        return None
    if not near:
        return [*blocks, block], used + block.tokens + listed
    out = [block if i == near[0] else b for i, b in enumerate(blocks) if i not in near[1:]]
    return out, used + block.tokens - freed


def ask(
    searcher: HybridSearcher,
    question: str,
    *,
    budget: int | None = None,
    loop: LoopConfig | None = None,
    evaluator: Evaluator | None = None,
    with_trace: bool = True,
    fusion: FileFusion | None = None,
    packing: Packing | None = None,
    records: JsonRecords | None = None,
    frame: Frame | None = None,
    ranking: DefinitionRanking | None = None,
) -> AskResult:
    """Answer `question` from the index: run the loop, rank the files, pack the best
    context into `budget` tokens (the module docstring tells how).

    `records`: pack for an answer printed as JSON (`JsonRecords`): each block counts as
    its record and the first files as their slim entries, so that fitting the JSON
    afterwards need not cut whole blocks for the records' metadata (packed as markdown,
    it cut them and left up to a quarter of the budget unused). `frame`: the markdown's
    frame the source is packed beside (the one `render_markdown` is given)."""
    check_query(question, "question")
    fusion = fusion or FileFusion()
    packing = packing or Packing()
    with searcher.lookups.remembering():
        result, by_words, by_history = _loop_and_history(searcher, question, loop, evaluator)
        items = [it for it in result.items if it.relevance >= packing.min_relevance]
        ranked = _rank_files(
            searcher, result, items, by_words, by_history, loop or LoopConfig(), fusion
        )
    cost: Callable[[ContextBlock], int]
    entry: Callable[[str], int] = _listed_already
    if records is None:
        frame = frame or Frame()
        cost = functools.partial(_cost, reasons=frame.block_reasons)
        room = _source_room(question, ranked.files, budget, frame)
        room -= _definitions_room(ranked, ranking or DefinitionRanking(), frame, budget)
        room = max(room, 0)
    else:
        room, cost, entry = records.room(budget), records.cost, records.entry
    pack = _Pack(searcher, packing, ranked.symbols, room, cost, entry)
    # A code file's own tests (Rust's `#[cfg(test)]` modules) call the code with its
    # names and words, so the loop scores them high; they are not where it is done.
    tests = {} if result.analysis.mentions_tests else inline_tests(ranked.symbols)
    shown = [
        without_tests(it, tests) for it in items if not in_tests(it.hit.path, *_lines(it), tests)
    ]
    leads_by_file = _lead_items(
        searcher,
        result.analysis,
        ranked.files[: packing.lead_files],
        shown,
        ranked.symbols,
        ranked.stale,
        packing,
        tests,
        (loop or LoopConfig()).high,
    )
    rest = pack.place_items(leads_by_file, shown)
    pack.add_signature_lines(_signature_lines(rest, ranked, {b.path for b in pack.blocks}))
    # Rank order: the files' order, and in a file its whole blocks before its lines.
    order = ranked.order
    pack.blocks.sort(key=lambda b: (order.get(b.path, len(order)), b.form != "full"))
    definitions = _definitions(
        searcher, result.analysis, ranked, items, pack.blocks, ranking, tests
    )
    return AskResult(
        question=question,
        files=ranked.files,
        context=pack.blocks,
        tokens=pack.used,
        budget=budget,
        stop_reason=result.stop_reason,
        cycles=len(result.trace),
        trace=result.trace if with_trace else [],
        definitions=definitions,
    )


def _definitions(
    searcher: HybridSearcher,
    analysis: QueryAnalysis,
    ranked: _Ranked,
    items: Sequence[ContextItem],
    blocks: Sequence[ContextBlock],
    ranking: DefinitionRanking | None,
    tests: dict[str, list[tuple[int, int]]],
) -> list[RankedDefinition]:
    """The first files' definitions ranked (`definitions.ranked_definitions`), with the
    loop's evaluated chunks and the context's blocks as two of the rankings, the most
    relevant first (a signature line stands for the definition it starts); a code
    file's own tests (`tests`: the context's `inline_tests` of `ranked.symbols`) only for
    a question about tests."""
    ranking = ranking or DefinitionRanking()
    paths = [f.path for f in ranked.files[: ranking.files]]
    more = definitions_of(searcher, set(paths) - set(ranked.symbols))
    symbols = {**ranked.symbols, **more}
    if not analysis.mentions_tests:  # a code file's own tests, as the context leaves them
        tests = {**tests, **inline_tests(more)}
        symbols = {
            p: [d for d in rows if not in_tests(p, d["start_line"], d["end_line"], tests)]
            for p, rows in symbols.items()
        }
    evaluated = [
        (it.hit.path, it.hit.start_line, it.hit.end_line)
        for it in sorted(items, key=lambda it: -it.relevance)
    ]
    context = [
        (b.path, b.start_line, b.end_line if b.form == "full" else b.start_line)
        for b in sorted(blocks, key=lambda b: -b.relevance)
    ]
    return ranked_definitions(
        searcher, analysis, paths, symbols, evaluated=evaluated, context=context, ranking=ranking
    )


def _loop_and_history(
    searcher: HybridSearcher,
    question: str,
    loop: LoopConfig | None,
    evaluator: Evaluator | None,
) -> tuple[LoopResult, list[tuple[str, dict[str, Any]]], list[tuple[str, list[dict[str, Any]]]]]:
    """The loop's result, the files whose chunks match the question's words best
    (`files_by_words`) and the files of the past commits whose messages match the
    question (`files_by_history`). Both rankings need only the question: the history's
    runs beside the words' and the loop, the words' before the loop, whose first search
    asks the same words for fewer rows and is answered from it (`IndexLookups.lexical`)."""
    config = loop or LoopConfig()
    analysis = searcher.analyze(question)
    read = loop_analysis(searcher, question, analysis)
    with ThreadPoolExecutor(max_workers=1) as pool:
        history = pool.submit(
            files_by_history,
            searcher.lookups,
            analysis,
            keep=PathFilter(config.include, config.exclude),
            languages=config.languages,
            config=searcher.file_ranking,
        )
        by_words = files_by_words(
            searcher.lookups,
            read,
            keep=PathFilter(config.include, config.exclude),
            languages=config.languages,
            config=searcher.file_ranking,
        )
        result = run_loop(searcher, question, config=loop, evaluator=evaluator, analysis=read)
        return result, by_words, history.result()


class _Ranked(NamedTuple):
    """The files ranked for the question, and what packing needs to know of them."""

    files: list[FileResult]
    order: dict[str, int]
    """Each ranked file's place."""
    unevaluated: dict[str, tuple[dict[str, Any], str]]
    """The files only the word or closeness ranking found (`_unevaluated`), inside the root."""
    stale: Collection[str]
    """Those of them changed since indexing."""
    symbols: dict[str, list[dict[str, Any]]]
    """The definitions of the items' files and of those (`definitions_of`)."""


def _rank_files(
    searcher: HybridSearcher,
    result: LoopResult,
    items: list[ContextItem],
    by_words: Sequence[tuple[str, dict[str, Any]]],
    by_history: Sequence[tuple[str, list[dict[str, Any]]]],
    config: LoopConfig,
    fusion: FileFusion,
) -> _Ranked:
    """The files of the loop's items fused with the whole-file rankings (`_files`), and
    the definitions and staleness of the files to pack."""
    keep = PathFilter(config.include, config.exclude)
    ranking = searcher.file_ranking
    by_closeness = files_by_closeness(
        searcher.lookups,
        searcher.questions,
        result.analysis,
        keep=keep,
        languages=config.languages,
        config=ranking,
    )
    files = _files(items, by_words, by_closeness, by_history, fusion, result.searched)
    files = _relatives_up(searcher.lookups, files, fusion)
    unevaluated = _unevaluated(by_words, by_closeness, {it.hit.path for it in items})
    for path in searcher.lookups.outside_paths(unevaluated):  # now a link out of the root
        del unevaluated[path]
    stale = searcher.lookups.stale_paths(unevaluated)
    symbols = definitions_of(searcher, {it.hit.path for it in items} | set(unevaluated))
    return _Ranked(
        files=files,
        order={f.path: i for i, f in enumerate(files)},
        unevaluated=unevaluated,
        stale=stale,
        symbols=symbols,
    )


def _relatives_up(
    lookups: IndexLookups, files: list[FileResult], fusion: FileFusion
) -> list[FileResult]:
    """`files` with the first files' listed relatives moved up to them (`relatives`):
    the sibling classes (`FileFusion.siblings`), then the first file's module root
    (`FileFusion.module_root`), each moved file saying why in its reason."""
    files, bases = siblings_up(lookups, files, lambda f: f.path, top=fusion.siblings)
    files, roots = module_root_up(lookups, files, lambda f: f.path, top=fusion.module_root)

    def why(f: FileResult) -> str:
        if f.path in bases:
            return SIBLING_REASON.format(reason=f.reason, base=bases[f.path])
        return MODULE_ROOT_REASON.format(reason=f.reason, first=roots[f.path])

    return [
        f.model_copy(update={"reason": why(f)}) if f.path in bases or f.path in roots else f
        for f in files
    ]


def _source_room(
    question: str, files: Sequence[FileResult], budget: int | None, frame: Frame
) -> int:
    """The tokens the source may take: the budget less the printed frame around the
    blocks (title, summary, the files list without its evidence: printing trims that
    first, `fit_result`)."""
    taken = (
        frame.head_tokens
        + estimate_tokens(title(question, frame))
        + sum(
            estimate_tokens(_file_line(slim_file(f), scores=frame.rank_scores)) + 1
            for f in files[: frame.listed(budget)]
        )
    )
    return max((budget if budget is not None else DEFAULT_BUDGET) - taken, 0)


def _definitions_room(
    ranked: _Ranked, ranking: DefinitionRanking, frame: Frame, budget: int | None
) -> int:
    """The tokens the lines of the ranked definitions that keep their room take
    (`Frame.kept_definitions`), with their heading. They are not ranked yet: each costs
    the median line of the first files' definitions the packing knows (a 40-character
    path and a 24-character name when it knows none)."""
    lines = min(frame.kept_definitions(budget), ranking.limit)
    if not lines:
        return 0
    costs = sorted(
        estimate_tokens(_definition_line(RankedDefinition(**_line_of(d), score=0, file_rank=0)))
        for f in ranked.files[: ranking.files]
        for d in ranked.symbols.get(f.path, ())
        if d.get("kind") not in VALUE_KINDS
    )
    line = costs[len(costs) // 2] if costs else estimate_tokens(f"- `{'x' * 40}:1-9` `{'x' * 24}`")
    return estimate_tokens("## Definitions") + 2 + lines * (line + 1)


def _line_of(d: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "path": d["path"],
        "start_line": int(d["start_line"]),
        "end_line": int(d["end_line"]),
        "qualified_name": d["qualified_name"],
    }


def _definition_line(d: RankedDefinition) -> str:
    return f"- {code_span(d.citation)} {code_span(d.qualified_name)}"


_Left = tuple[ContextItem, int, int, str | None, str | None]
"""An item that did not fit whole: (item, its widest range's start and end, symbol, kind)."""
_Line = tuple[str, int, int, str | None, float, str, str, int, bool]
"""A signature line to place: (path, start, end, symbol, relevance, reason, text, its
first line's number, stale)."""


def _signature_lines(rest: Sequence[_Left], ranked: _Ranked, shown: Collection[str]) -> list[_Line]:
    """The signature lines to place, in order: the items that did not fit whole, then the
    files only the whole-file rankings found; first one for each file that has no block
    yet (not in `shown`), in the files' order, then the others."""
    lines: list[_Line] = [
        (
            it.hit.path,
            start,
            end,
            symbol,
            it.relevance,
            it.reason,
            it.hit.text or "",
            it.hit.start_line,
            it.hit.stale,
        )
        for it, start, end, symbol, _ in rest
    ]
    lines += [
        (
            path,
            row["start_line"],
            row["end_line"],
            row["symbol"],
            0.0,
            reason,
            row["text"] or "",
            row["start_line"],
            path in ranked.stale,
        )
        for path, (row, reason) in ranked.unevaluated.items()
    ]
    firsts: dict[str, _Line] = {}
    others = []
    for entry in lines:
        if entry[0] in shown or entry[0] in firsts:
            others.append(entry)
        else:
            firsts[entry[0]] = entry
    order = ranked.order
    return sorted(firsts.values(), key=lambda e: order.get(e[0], len(order))) + others


def _placing_order(
    leads_by_file: list[list[ContextItem]], items: Sequence[ContextItem], packing: Packing
) -> tuple[list[ContextItem], list[ContextItem], list[ContextItem], list[ContextItem]]:
    """The items the first pass places before the loop's own, in order, by role: (the
    first files' best parts; those with, in the first `Packing.paired_leads` files, the
    loop's best item in that file and, after the first file's, its next
    `Packing.first_file_leads - 1` parts; those early parts alone; the first file's other
    next parts)."""
    lead = [mine[0] for mine in leads_by_file]
    first: list[ContextItem] = []
    early: list[ContextItem] = []  # the first file's parts placed right after its own two
    for n, it in enumerate(lead):
        first.append(it)
        if n < packing.paired_leads:
            first += [o for o in items if o.hit.path == it.hit.path and o is not it][:1]
        if n == 0:
            parts = leads_by_file[0][1 : packing.first_file_leads]
            early = [o for o in parts if all(o is not f for f in first)]
            first += early
    more = [it for mine in leads_by_file for it in mine[1:]]
    more = [it for it in more if all(it is not f for f in first)]
    return lead, first, early, more


class _Pack:
    """The context as it is packed: its blocks and the tokens they use. The source gets
    `room`; a small share of it (`Packing.signature_share`) stays for the signature lines
    of what did not fit whole, the rest (`whole`) is for whole blocks."""

    def __init__(
        self,
        searcher: HybridSearcher,
        packing: Packing,
        symbols: dict[str, list[dict[str, Any]]],
        room: int,
        cost: Callable[[ContextBlock], int],
        entry: Callable[[str], int],
    ) -> None:
        self.searcher = searcher
        self.cost = cost
        self.entry = entry
        self.packing = packing
        self.symbols = symbols
        self.room = room
        self.whole = room - math.floor(room * packing.signature_share)
        self.blocks: list[ContextBlock] = []
        self.used = 0

    def _put(
        self, it: ContextItem, start: int, end: int, symbol: str | None, kind: str | None, cap: int
    ) -> bool:
        """Whether lines `start`..`end` of the item's file were added whole (`_place`),
        the blocks then using at most `cap` tokens."""
        placed = _place(
            self.blocks,
            self.searcher,
            it,
            start,
            end,
            symbol,
            kind,
            self.used,
            cap,
            self.cost,
            self.entry,
        )
        if placed is None:
            return False
        self.blocks, self.used = placed
        return True

    def place_items(
        self, leads_by_file: list[list[ContextItem]], items: Sequence[ContextItem]
    ) -> list[_Left]:
        """Place the first files' parts and the loop's items whole; return those that did
        not fit.

        Three passes: first, file by file, the best part of each of the first files (the
        file ranking is the strongest evidence there is, and it often rests on a part the
        loop did not evaluate) and, in the first `Packing.paired_leads`, the loop's best
        item in that file (and right after the first file's two, its next
        `Packing.first_file_leads - 1` parts, their room added to the leads' share), then
        the first file's other next parts in their rank (those the loop evaluated too)
        within its share; then every item's own lines, in the loop's order, while they
        fit; then each delivered item grows to its whole definition while that fits. The
        second and third files' best parts come before the first file's other next parts:
        most fixes outside Python change several files (placing all of them after cost 24
        Multi-SWE-bench instances a quarter of their shown changed lines). The lines that
        scored relevant come before completing any one definition: widening the first item
        to a 120-line function must not push the next items' lines out."""
        lead, first, early, more = _placing_order(leads_by_file, items, self.packing)
        leads = {id(it) for it in lead}
        nexts = {id(it) for it in [*early, *more]}
        early_ids = {id(it) for it in early}
        early_used = 0  # the tokens the first file's early parts took: not the leads' share
        placed_keys: set[tuple[str, int]] = set()
        delivered = []
        rest: list[_Left] = []
        for it, ranges, symbol, kind in _widen([*first, *more, *items], self.symbols):
            key = (it.hit.path, it.hit.start_line)
            if key in placed_keys:
                continue
            if id(it) in nexts:
                nexts.discard(id(it))  # once: met again among the loop's items, it is one
                took = self._next_part(it, ranges, symbol, kind)
                if took is not None:
                    placed_keys.add(key)
                    if id(it) in early_ids:
                        early_used += took
                continue
            placed_keys.add(key)
            # A first file's best part is shown as its whole definition at once, while the
            # first files' take at most half the room (`Packing.lead_share`): its body is
            # what the reader came for, and the other half stays for the loop's other items.
            if id(it) in leads and len(ranges) > 1:
                share = math.floor(self.whole * self.packing.lead_share) + early_used
                if self._put(it, *ranges[0], symbol, kind, share):
                    continue
            if not self._put(it, *ranges[-1], symbol, kind, self.whole):
                rest.append((it, *ranges[0], symbol, kind))
                continue
            if len(ranges) > 1:
                delivered.append((it, ranges[0], symbol, kind))
        for it, (start, end), symbol, kind in delivered:
            self._put(it, start, end, symbol, kind, self.whole)
        return rest

    def _next_part(
        self,
        it: ContextItem,
        ranges: list[tuple[int, int]],
        symbol: str | None,
        kind: str | None,
    ) -> int | None:
        """Place one of the first file's next parts, its whole definition first, while
        that file holds at most `Packing.first_file_share` of the room; the tokens it
        took, or None when it does not fit (it is left to the loop's order)."""
        held = sum(b.tokens for b in self.blocks if b.path == it.hit.path)
        cap = self.used - held + math.floor(self.whole * self.packing.first_file_share)
        before = self.used
        for start, end in (ranges[0], ranges[-1]):
            if self._put(it, start, end, symbol, kind, min(cap, self.whole)):
                return self.used - before
        return None

    def add_signature_lines(self, lines: Sequence[_Line]) -> None:
        """Add each of `lines` as its definition's line (`_signature_line`) while the
        whole room allows, unless that definition is shown already."""
        printed = {(b.path, b.start_line) for b in self.blocks}
        for path, start, end, symbol, relevance, reason, text, text_at, is_stale in lines:
            found = _signature_line(path, start, end, symbol, text, text_at, self.symbols)
            if found is None:
                continue
            line, at, last, name, what = found
            if (path, at) in printed or any(
                b.path == path and b.start_line <= at <= b.end_line
                for b in self.blocks
                if b.form == "full"
            ):
                continue  # that definition is already shown, in a block or on a line of its own
            block = ContextBlock(
                path=path,
                start_line=at,
                end_line=last,
                symbol=name,
                kind=what,
                relevance=relevance,
                reason=reason,
                form="signature",
                text=line,
                stale=is_stale,
                tokens=0,
            )
            block.tokens = self.cost(block)
            listed = 0 if any(b.path == path for b in self.blocks) else self.entry(path)
            if self.used + block.tokens + listed > self.room:
                continue
            self.used += block.tokens + listed
            printed.add((path, at))
            self.blocks.append(block)


def _listed_already(path: str) -> int:
    """A markdown answer's files list is in its frame (`_source_room`): a block's file
    costs nothing more."""
    return 0


def _cost(block: ContextBlock, listed: str = "", *, reasons: bool = True) -> int:
    """What a block costs printed: its markdown section (the JSON record costs more;
    `fit_result` measures that exactly)."""
    return estimate_tokens("\n".join(_block_lines(block, listed, reasons=reasons))) + 1


def _file_line(f: FileResult, *, scores: bool = True) -> str:
    rank = f", rank score {f.score:.2f}" if scores else ""
    line = f"- {code_span(f.path)} (relevance {f.relevance:.2f}{rank})"
    if f.reason:
        line += f": {one_line(f.reason)}"
    if f.commits:
        line += f"; changed by {one_line(f.commits[0])}"
    return line


def _block_lines(b: ContextBlock, listed: str = "", *, reasons: bool = True) -> list[str]:
    """A block's markdown section; its reason is left out when it is `listed`, the
    reason its file already has in the files list, and without `reasons`
    (`Frame.block_reasons`). A signature line is one item: its
    citation, relevance and line (a pointer to where to read next; as a section with a
    heading and a reason it cost twice the tokens, which the budget took from code)."""
    stale = " **(stale: file changed since indexing)**" if b.stale else ""
    if b.form == "signature":
        return [
            f"- {code_span(b.citation)} ({b.relevance:.2f}){stale}: {code_span(one_line(b.text))}"
        ]
    what = f" {b.kind} {code_span(b.symbol)}" if b.kind and b.symbol else ""
    lines = [f"### {code_span(b.citation)}{what} ({b.relevance:.2f}){stale}"]
    if reasons and b.reason and b.reason != listed:
        lines.append(one_line(b.reason))
    return [*lines, "", *fence(b.text), ""]


def _cycle_line(c: Cycle) -> str:
    return one_line(
        f"- cycle {c.n}: keywords {', '.join(c.keywords[:12])}; "
        f"{len(c.candidates)} candidates, {c.high_hits} high; "
        f"excluded {len(c.excluded)}; gaps {', '.join(c.gaps) or '-'}; "
        f"critical {', '.join(c.critical_gaps) or '-'}"
        + (f"; targeted {', '.join(c.targeted)}" if c.targeted else "")
        + (f"; stop: {c.stop}" if c.stop else "")
    )


def title(question: str, frame: Frame = Frame()) -> str:  # noqa: B008 - frozen
    """The question as a one-line title of at most `Frame.title_chars` characters, its
    line breaks and runs of spaces read as one space."""
    line = one_line(" ".join(question.split()))
    chars = frame.title_chars
    return line if len(line) <= chars else line[: chars - 1].rstrip() + "…"


def render_markdown(
    result: AskResult,
    *,
    trace: bool = False,
    frame: Frame = Frame(),  # noqa: B008 - frozen
) -> str:
    lines = [f"# {title(result.question, frame)}", ""]
    lines.append(
        f"_{len(result.files)} files, {len(result.context)} blocks, "
        f"~{result.tokens} tokens"
        + (f" of {result.budget}" if result.budget else "")
        + f"; {result.cycles} cycle(s): {one_line(result.stop_reason)}_"
    )
    lines += ["", "## Files", ""]
    shown = result.files[: frame.listed(result.budget)]
    lines += [_file_line(f, scores=frame.rank_scores) for f in shown]
    if result.definitions:
        lines += ["", "## Definitions", ""]
        lines += [_definition_line(d) for d in result.definitions]
    lines += ["", "## Context", ""]
    listed = {f.path: f.reason for f in shown}
    for b in result.context:
        if b.form == "full" and lines[-1].startswith("- "):
            lines.append("")  # a section after signature lines' items
        lines += _block_lines(b, listed.get(b.path, ""), reasons=frame.block_reasons)
    if trace:
        lines += ["## Trace", ""]
        lines += [_cycle_line(c) for c in result.trace]
        if len(result.trace) < result.cycles:
            left = result.cycles - len(result.trace)
            lines.append(f"_{left} cycle(s) left out to fit the budget_")
    return "\n".join(lines).rstrip() + "\n"


def render_json(result: AskResult) -> str:
    """The result as printed by `--json`: indented, with its final newline."""
    return result.model_dump_json(indent=2) + "\n"


R = TypeVar("R", bound=AskResult)
Group = tuple[Sequence[Entry], Callable[[Any, list[Any]], None]]
"""More records to fit beside a result's own: (entries, put the kept forms in a copy)."""


def slim_file(f: FileResult) -> FileResult:
    """A file's entry without its ranking evidence and reason: path, relevance, score."""
    return f.model_copy(
        update={
            "reason": "",
            "citations": [],
            "words_rank": None,
            "closeness_rank": None,
            "history_rank": None,
            "commits": [],
        }
    )


def signature_block(block: ContextBlock) -> ContextBlock | None:
    """A whole block cut to its definition's line: the first that declares one, else the
    first that can stand for it (`is_signature`). None: it is a line already."""
    if block.form == "signature":
        return None
    lines = [ln.strip() for ln in block.text.split("\n")]
    n = next(
        (n for n, ln in enumerate(lines) if is_signature(ln) and _DEFINITION_LINE.match(ln)),
        next((n for n, ln in enumerate(lines) if is_signature(ln)), None),
    )
    text = "" if n is None else lines[n].removesuffix("{").rstrip()[:160]
    at = block.start_line + (n or 0)
    cut = block.model_copy(update={"form": "signature", "text": text, "start_line": at})
    cut.end_line = max(cut.end_line, at)
    cut.tokens = _cost(cut)
    return cut


def block_plan(
    blocks_group: int,
    blocks: Sequence[Entry],
    files_group: int,
    files: Sequence[Entry],
    *,
    lines_first: bool = False,
    between: Sequence[Step] = (),
) -> list[Step]:
    """The steps that shrink the context, in order: the blocks of files no part of which
    scored relevant are left out, then whole blocks are cut to their signature, then
    the rest are left out; all from the lowest-ranked up, and a file's entry leaves
    with its last block (a file listed without code costs what a line of code would).

    `lines_first` is for answers whose every record carries metadata (JSON): after the
    unscored blocks, the signature lines go (the files list says where those files
    are), then the steps `between` (another group's records: worth less than code,
    more than a pointer), then from the lowest-ranked up a file's later blocks go whole
    and its first is cut to its line; the files' entries stay until last."""
    left = Counter(b.path for b, _ in blocks)
    index = {f.path: i for i, (f, _) in enumerate(files)}

    def drops(picked: list[int], *, with_files: bool = True) -> list[Step]:
        out: list[Step] = []
        for i in picked:
            path = blocks[i][0].path
            out.append((blocks_group, i, 2))
            left[path] -= 1
            if with_files and not left[path] and path in index:
                out.append((files_group, index[path], 2))
        return out

    last_first = list(reversed(range(len(blocks))))
    unscored = [i for i in last_first if blocks[i][0].relevance == 0.0]
    if not lines_first:
        return (
            drops(unscored)
            + steps(blocks_group, blocks, 1)
            + drops([i for i in last_first if i not in set(unscored)])
        )
    lines = [i for i in last_first if i not in unscored and blocks[i][0].form == "signature"]
    plan = drops(unscored) + drops(lines, with_files=False) + list(between)
    # A file's second and later blocks go whole; its first is cut to its line, so every
    # file that had code still says where its definition is.
    first_of: dict[str, int] = {}
    for i, (b, _) in enumerate(blocks):
        if b.form == "full":
            first_of.setdefault(b.path, i)
    whole = [i for i in last_first if blocks[i][0].form == "full"]
    for i in whole:
        if first_of[blocks[i][0].path] == i and blocks[i][1] is not None:
            plan.append((blocks_group, i, 1))
        else:
            plan += drops([i], with_files=False)
    return plan + drops([i for i in whole if first_of[blocks[i][0].path] == i])


def fit_result(
    result: R,
    budget: int,
    render: Callable[[R], str],
    *,
    more: Sequence[Group] = (),
    last: Sequence[Group] = (),
    cut: Callable[[ContextBlock], ContextBlock | None] = signature_block,
    lines_first: bool = False,
    kept_definitions: int = 0,
    trace_last: bool = False,
) -> R:
    """A copy of `result` whose rendering is at most `budget` tokens, and whose `tokens`
    is that rendering's count. What goes first: the trace (last cycle first), then the
    ranked definitions (the lowest-ranked first), then each
    file's ranking evidence and reason (lowest-ranked first), the `more` groups' records,
    the files that have no block, the blocks of files no part of which scored relevant;
    only then are whole blocks cut to their signature line, lowest-ranked first, and
    lines left out (`lines_first`, for JSON: see `block_plan`); the `last` groups'
    records go after all of those, so that any budget the frame fits in holds an answer.
    The first `kept_definitions` ranked definitions go only after the signature lines,
    before a whole block is cut (`Frame.definition_lines`: the packing left them room).
    With `trace_last` (the caller asked to see the trace) the trace goes only before the
    `last` groups, after the code."""
    in_context = {b.path for b in result.context}
    # Before any whole block is cut, the signature lines go and then their files (the
    # lowest-ranked first): at a tight budget the best files' code beats a long list of
    # one-line pointers.
    whole = {b.path for b in result.context if b.form == "full"}

    trace: list[Entry] = [(c, None) for c in result.trace]
    files: list[Entry] = [(f, slim_file(f)) for f in result.files]
    context: list[Entry] = [(b, cut(b)) for b in result.context]
    # The ranked definitions take the room the rest leaves: the lowest-ranked go first,
    # before anything that was printed without them.
    defined: list[Entry] = [(d, None) for d in result.definitions]
    groups: list[Sequence[Entry]] = [
        trace,
        files,
        context,
        defined,
        *(g for g, _ in [*more, *last]),
    ]
    kept = {id(d) for d in result.definitions[:kept_definitions]}
    plan = [] if trace_last else steps(0, trace, 2)
    plan += steps(3, defined, 2, only=lambda d: id(d) not in kept)
    plan += steps(1, files, 1)
    for g in range(len(more)):
        plan += steps(4 + g, groups[4 + g], 2)
    plan += steps(1, files, 2, only=lambda f: f.path not in in_context)
    plan += steps(2, context, 2, only=lambda b: b.form != "full")
    plan += steps(1, files, 2, only=lambda f: f.path not in whole)
    plan += steps(3, defined, 2, only=lambda d: id(d) in kept)
    plan += block_plan(2, context, 1, files, lines_first=lines_first) + steps(1, files, 2)
    if trace_last:
        plan += steps(0, trace, 2)
    for g in range(len(more), len(more) + len(last)):
        plan += steps(4 + g, groups[4 + g], 2)

    def build(levels: Levels, claimed: int) -> R:
        kept = forms(groups, levels)
        out = result.model_copy(
            update={
                "trace": kept[0],
                "files": kept[1],
                "context": kept[2],
                "definitions": kept[3],
                "tokens": claimed,
            }
        )
        for (_, put), records in zip([*more, *last], kept[4:], strict=True):
            put(out, records)
        return out

    return fit(build, groups, plan, lambda r: estimate_tokens(render(r)), budget)
