"""The definitions that answer a question, ranked: what a function-level localizer gives.

`ask`'s context shows a few blocks; the definitions they show are a handful, and the one a
fix changes is often beside them in a file the answer ranks first (django's 56 SWE-bench
Lite dev instances: the fixed file among the first five in 91 %, every fixed function
among the context's first five definitions in 35.7 %; benchmarks/RESULTS-context.md).
`rank_definitions` ranks every definition of the first
files of an answer (`DefinitionRanking.files`) from what the index already holds, by
reciprocal-rank fusion of up to eight rankings of those files' definitions:

- `names`: the question names it (`query.naming`: its class beside it first);
- `closeness`: its vector's cosine to the question (an index with file vectors embeds
  every definition);
- `words`: each file's best chunks for the question's words (full-text search), by
  score, each chunk standing for the definitions it shows (`shown_definitions`);
- `behaviour`: its own lines that branch, raise, throw, panic or return an error
  (`behaviour.behaviour_words`, by lexical rules in every language) hold the question's
  words (stemmed: `expired` ~ `expire`), the most of them first: the branch that raises
  `TokenError("token expired")` answers "where are expired tokens rejected?";
- `frames`, `links`: it holds a line a stack-trace frame of the question or a link in it
  points at, innermost frame first;
- `evaluated`: the loop's evaluations of its chunks, by relevance;
- `context`: the blocks the answer's context shows, by relevance.

A definition scores `1 / (RRF_K + place)` for each ranking it is in (its place among all
the files' definitions that ranking counts, 0 first), the `context` ranking weighted by
`DefinitionRanking.context_weight`, plus `file_weight / (1 + file rank)` for its file's
place in the answer (0: places counted over all the files carry the files' order, the
full-text search's scores and the loop's relevance among them). A place counted among
the file's own definitions alone (`DefinitionRanking.places` "file") made a file's only
definition first in every ranking that counts it, however weak its evidence, and needed
the file's weight (2) to order the files (benchmarks/RESULTS-context.md). The two
weights, the number of files and the declaration's penalty are the only parameters
(cross-validated by benchmarks/function_ranking.py and definition_evidence.py); the
rankings count alike, so their order holds on repositories nobody tuned it on. Values
(variables, fields, properties, constants) are not ranked: a fix is a behaviour's. A
type declared with no code of its own (an exception class, a class header:
`is_declaration`) scores `declaration_penalty` less: it names a behaviour that other
code holds.
"""

from __future__ import annotations

import functools
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dowse.indexer.store import where_in
from dowse.languages import language_for
from dowse.retrieval.behaviour import VALUE_KINDS, BehaviourWords, code_lines, words_on
from dowse.retrieval.file_parts import (
    POOL_PER_FILE,
    RRF_K,
    closest_definitions,
    frame_spots,
    link_spots,
)
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.query import STOPWORDS, QueryAnalysis, base_tokens, naming, title_tokens
from dowse.tokens import stem, tokenize

__all__ = [
    "RANKINGS",
    "DefinitionRanking",
    "RankedDefinition",
    "is_declaration",
    "own_behaviour",
    "own_behaviours",
    "question_stems",
    "rank_definitions",
    "ranked_definitions",
    "shown_definitions",
]

RANKINGS = (
    "names",
    "frames",
    "links",
    "closeness",
    "words",
    "behaviour",
    "evaluated",
    "context",
)
"""The rankings fused, in the order a reason names them."""
_WHY = {
    "names": "the question names it",
    "frames": "a stack-trace frame is in it",
    "links": "the question links to its lines",
    "closeness": "closest in meaning",
    "words": "matches the question's words best",
    "behaviour": "its branches or errors hold the question's words",
    "evaluated": "scored most relevant",
    "context": "the context shows it first",
}


class DefinitionRanking(BaseModel):
    """How `ask` ranks the definitions of its first files."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    files: int = Field(default=5, ge=0, description="the answer's first files ranked")
    limit: int = Field(default=10, ge=0, description="the definitions an answer lists")
    file_weight: float = Field(
        default=0.0,
        ge=0,
        description="weight of the file's place, `file_weight / (1 + rank)`, beside the "
        "rankings: 0, the rankings over all the files' definitions carry it (2 while the "
        "places were counted inside each file; benchmarks/function_ranking.py)",
    )
    context_weight: float = Field(
        default=1.0,
        ge=0,
        description="weight of the context's blocks as a ranking, beside the other rankings' 1",
    )
    declaration_penalty: float = Field(
        default=0.5,
        ge=0,
        description="taken off the score of a type declared with no code of its own "
        "(`is_declaration`: an exception class, a class header): the code that raises or "
        "fills it holds the behaviour",
    )
    places: Literal["answer", "file"] = Field(
        default="answer",
        description="where a ranking counts a definition's place: among all the ranked "
        "files' definitions (`answer`), or among its own file's (`file`: a file's only "
        "definition is first in every ranking that counts it)",
    )


class RankedDefinition(BaseModel):
    """One definition of an answer's first files, with why it ranks where it does."""

    model_config = ConfigDict(extra="forbid")

    path: str
    start_line: int
    end_line: int
    qualified_name: str
    kind: str = ""
    score: float = Field(description="the fused rankings' score and the file's place")
    file_rank: int = Field(description="its file's place among the answer's files, 0 first")
    rankings: dict[str, float] = Field(
        default_factory=dict,
        description="its place among the ranked files' definitions (among its own file's: "
        "`DefinitionRanking.places`; 0 first, those tied sharing the mean of their places) "
        "in each ranking that counts it: names, frames, links, closeness, words, "
        "behaviour, evaluated, context",
    )
    declaration: bool = Field(
        default=False, description="a type with no code of its own (`is_declaration`)"
    )
    reason: str = ""

    @property
    def citation(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


Definition = Mapping[str, Any]
"""A symbol row: path, qualified_name, kind, start_line, end_line (name_line optional)."""


def shown_definitions(
    definitions: Sequence[Definition],
    start: int,
    end: int,
    named: Callable[[str], int] | None = None,
) -> list[Definition]:
    """The definitions lines `start`..`end` show: first those whose name line they show,
    those the question names first (`named`: the most of their qualified name first),
    then outermost first and in line order (a method before the helper nested in it),
    then those they lie inside, innermost first. Module-level code between definitions
    shows none. A block of six short methods shows them at once; the one the question
    names is what it is shown for, not the first in line order."""

    def name_line(d: Definition) -> int:
        return int(d.get("name_line") or d["start_line"])

    spans = tuple((int(d["start_line"]), int(d["end_line"])) for d in definitions)
    depth = _depths(spans)
    rank = named or (lambda _: 0)
    order = range(len(definitions))
    headed = sorted(
        (i for i in order if start <= name_line(definitions[i]) <= end),
        key=lambda i: (-rank(definitions[i]["qualified_name"]), depth[i], spans[i][0]),
    )
    around = sorted(
        (
            i
            for i in order
            if spans[i][0] <= start
            and end <= spans[i][1]
            and not start <= name_line(definitions[i]) <= end
        ),
        key=lambda i: -depth[i],
    )
    return [definitions[i] for i in [*headed, *around]]


@functools.lru_cache(maxsize=64)
def _depths(spans: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """How many of `spans` enclose each one: once per file's definitions, however many of
    its chunks are asked about (a ranking asks about dozens)."""
    return tuple(
        sum(j != i and o[0] <= s[0] and s[1] <= o[1] for j, o in enumerate(spans))
        for i, s in enumerate(spans)
    )


def _by_words(
    words: Iterable[tuple[dict[str, Any], float]],
    defs: Mapping[str, Sequence[Definition]],
    tokens: set[str],
    named: Callable[[str], int],
) -> Iterable[Placed]:
    """The full-text search's chunks, best first, as the definitions they show. Of the
    definitions one chunk shows (a class's header and its short methods), those whose own
    lines (not those of a definition nested in them) hold the most of the question's
    words take the chunk's place, the others the place after it."""
    for row, _ in words:
        path = row["path"]
        if path not in defs:
            continue
        start, end = int(row["start_line"]), int(row["end_line"])
        shown = shown_definitions(defs[path], start, end, named)
        if len(shown) < 2:
            yield path, shown
            continue
        text = (row.get("text") or "").split("\n")
        hits = [len(tokens.intersection(tokenize(_own_text(d, shown, text, start)))) for d in shown]
        most = max(hits)
        yield path, [d for d, n in zip(shown, hits, strict=True) if n == most]
        yield path, [d for d, n in zip(shown, hits, strict=True) if n < most]


def _own_text(d: Definition, shown: Sequence[Definition], text: Sequence[str], first: int) -> str:
    """The lines of chunk `text` (its first line `first`) that are `d`'s own: inside it,
    outside the other definitions of `shown` nested in it."""
    lo, hi = int(d["start_line"]), int(d["end_line"])
    nested = [
        (int(o["start_line"]), int(o["end_line"]))
        for o in shown
        if o is not d and lo <= o["start_line"] and o["end_line"] <= hi
    ]
    return "\n".join(
        line
        for n, line in enumerate(text, first)
        if lo <= n <= hi and not any(a <= n <= b for a, b in nested)
    )


SHARED_POOL = 4
"""One full-text search of all the ranked files asks for this many times each file's
`POOL_PER_FILE` chunks."""


def _each_files_best(
    searcher: HybridSearcher, tokens: Sequence[str], paths: Sequence[str]
) -> list[tuple[dict[str, Any], float]]:
    """Each of `paths`' `POOL_PER_FILE` best chunks for `tokens` with their scores, file
    by file, best first: those of one search of all the files, the search of a file
    alone only for a file of which that search holds fewer while more may have been cut
    (it was cut at its `k`). A file's best chunks are among the search's when it holds
    that many of the file's, and all of them when the search was not cut."""
    k = POOL_PER_FILE * SHARED_POOL * len(paths)
    hits = searcher.lookups.lexical(tokens, k, where_in("path", paths)) if paths else []
    by_path: dict[str, list[tuple[dict[str, Any], float]]] = {}
    for hit in hits:
        by_path.setdefault(hit[0]["path"], []).append(hit)
    out = []
    for p in paths:
        mine = by_path.get(p, [])
        if len(mine) < POOL_PER_FILE and len(hits) >= k:
            mine = searcher.lookups.lexical(tokens, POOL_PER_FILE, where_in("path", [p]))
        out += mine[:POOL_PER_FILE]
    return out


def question_stems(analysis: QueryAnalysis) -> frozenset[str]:
    """The question's plain words (its names' parts among them), stemmed (`expired` and
    `expire` alike), leaving out stop words and the project's names."""
    skip = STOPWORDS.union(analysis.project)
    return frozenset(s for t in analysis.terms if t not in skip and len(s := stem(t.lower())) >= 3)


_BODY_KINDS = frozenset({"function", "method", "constructor"})


def is_declaration(kind: str, code_lines: int) -> bool:
    """A type declared with no code of its own but its signature (`class
    TokenError(Exception):` and a docstring, an empty struct): it names a behaviour, the
    code that raises it or fills it holds it. A one-line function is behaviour."""
    return code_lines <= 1 and kind not in _BODY_KINDS


def own_behaviour(
    lines: Sequence[str], d: Definition, inside: Iterable[Definition]
) -> BehaviourWords:
    """`behaviour_words` of definition `d`'s own lines of its file's `lines` (line 1
    first): the lines of the definitions of `inside` nested in it are theirs."""
    return own_behaviours(lines, [d, *inside], d["path"])[_key(d)]


def own_behaviours(
    lines: Sequence[str], defs: Sequence[Definition], path: str
) -> dict[tuple[str, int, str], BehaviourWords]:
    """`own_behaviour` of each of `defs`, the definitions of file `path` whose `lines`
    (line 1 first) are given: the file's lines read by kind once, not once for each
    definition (a class's are its whole file's), and the definitions nested in each
    found among those starting inside it."""
    code = code_lines(lines, language_for(path))
    spans = sorted({(int(d["start_line"]), int(d["end_line"])) for d in defs})
    starts = [lo for lo, _ in spans]
    out: dict[tuple[str, int, str], BehaviourWords] = {}
    for d in defs:
        lo, hi = int(d["start_line"]), int(d["end_line"])
        nested = {
            n - 1
            for start, end in spans[bisect_left(starts, lo) : bisect_right(starts, hi)]
            if end <= hi and (start, end) != (lo, hi)
            for n in range(start, end + 1)
        }
        own = code[bisect_left(code, lo - 1) : bisect_right(code, hi - 1)]
        out[_key(d)] = words_on(lines, (n for n in own if n not in nested))
    return out


def _by_behaviour(
    bodies: Mapping[tuple[str, int, str], BehaviourWords],
    defs: Mapping[str, Sequence[Definition]],
    stems: frozenset[str],
    by_file: bool,
) -> Iterable[Placed]:
    """The definitions whose own deciding lines (`behaviour_words`: a branch, a raise, an
    error returned, with their messages) hold the question's words, the most of its
    words first, those holding as many tied. The count, not the words' rarity or the
    lines': weighting rare words or every line put a long function's many branches about
    a common word first (benchmarks/RESULTS-context.md)."""
    scored: dict[tuple[str, int], list[Definition]] = {}
    for p in defs:
        for d in defs[p]:
            held = len(bodies[_key(d)].decides & stems)
            if held:
                scored.setdefault((p if by_file else "", held), []).append(d)
    for (_, _), group in sorted(scored.items(), key=lambda kv: -kv[0][1]):
        yield group[0]["path"], group


def _key(d: Definition) -> tuple[str, int, str]:
    return d["path"], int(d["start_line"]), d["qualified_name"]


def _file_lines(searcher: HybridSearcher, paths: Sequence[str]) -> dict[str, list[str]]:
    """Each file's lines as its chunks hold them (line 1 first; a line no chunk holds
    is empty)."""
    spans = searcher.lookups.spans_of(paths)
    rows = searcher.lookups.rows_of({r["id"]: r for p in paths for r in spans.get(p, ())})
    out: dict[str, list[str]] = {}
    for row in rows.values():
        lines = out.setdefault(row["path"], [])
        start = int(row["start_line"])
        text = (row.get("text") or "").split("\n")
        if len(lines) < start - 1 + len(text):
            lines.extend([""] * (start - 1 + len(text) - len(lines)))
        lines[start - 1 : start - 1 + len(text)] = text
    return out


def _innermost(definitions: Sequence[Definition], line: int) -> Definition | None:
    inside = [d for d in definitions if d["start_line"] <= line <= d["end_line"]]
    return min(inside, key=lambda d: d["end_line"] - d["start_line"], default=None)


Placed = tuple[str, Sequence[Definition]]
"""(path, definitions tied): one place of a ranking (`_evidence`)."""
Chunk = tuple[str, int, int]
"""(path, start line, end line) of a ranked piece of source."""


def ranked_definitions(
    searcher: HybridSearcher,
    analysis: QueryAnalysis,
    paths: Sequence[str],
    symbols: Mapping[str, Sequence[Definition]],
    *,
    evaluated: Sequence[Chunk] = (),
    context: Sequence[Chunk] = (),
    ranking: DefinitionRanking = DefinitionRanking(),  # noqa: B008 - frozen
) -> list[RankedDefinition]:
    """The definitions of `paths` (an answer's ranked files, best first), best first, at
    most `ranking.limit`. `symbols`: each path's definitions; `evaluated`: the loop's
    evaluated chunks, the most relevant first; `context`: the context's blocks, the most
    relevant first."""
    paths = list(dict.fromkeys(paths))[: ranking.files]
    found = rank_definitions(
        _evidence(
            searcher,
            analysis,
            paths,
            symbols,
            evaluated=evaluated,
            context=context,
            by_file=ranking.places == "file",
        ),
        ranking,
    )
    return found[: ranking.limit]


def rank_definitions(
    candidates: Iterable[RankedDefinition],
    ranking: DefinitionRanking = DefinitionRanking(),  # noqa: B008 - frozen
) -> list[RankedDefinition]:
    """`candidates` (with their `file_rank` and `rankings`) scored and sorted, best first;
    ties go to the better file, then to the earlier line."""
    out = []
    for c in candidates:
        score = ranking.file_weight / (1 + c.file_rank)
        if c.declaration:
            score -= ranking.declaration_penalty
        for name, place in c.rankings.items():
            weight = ranking.context_weight if name == "context" else 1.0
            score += weight / (RRF_K + place)
        why = [_WHY[n] for n in RANKINGS if c.rankings.get(n, 1) < 1]
        if c.declaration:
            why.append("declared without code of its own")
        why.append(f"in the answer's file {c.file_rank + 1}")
        out.append(c.model_copy(update={"score": round(score, 4), "reason": "; ".join(why)}))
    out.sort(key=lambda d: (-d.score, d.file_rank, d.start_line, d.qualified_name))
    return out


def _evidence(
    searcher: HybridSearcher,
    analysis: QueryAnalysis,
    paths: Sequence[str],
    symbols: Mapping[str, Sequence[Definition]],
    *,
    evaluated: Sequence[Chunk],
    context: Sequence[Chunk],
    by_file: bool = False,
) -> list[RankedDefinition]:
    """Every behaviour definition of `paths`, unscored, with its file's place and its
    place in each ranking: among all of `paths`' definitions, or (`by_file`) among its
    own file's."""
    named = naming(analysis)
    defs = {p: [d for d in symbols.get(p, ()) if d.get("kind") not in VALUE_KINDS] for p in paths}
    places: dict[tuple[str, int, str], dict[str, float]] = {}

    def rank(name: str, ranked: Iterable[Placed]) -> None:
        """`ranked`: (path, definitions tied) in rank order. A definition's place is the
        number of definitions placed before it (of its file's, `by_file`), ties taking
        the mean of the places they span (a chunk that shows ten short methods is ten
        places, not ten firsts), from the first group it is in."""
        counted: dict[str, int] = {}
        for path, found in ranked:
            found = [d for d in found if name not in places.setdefault(_key(d), {})]
            if not found:
                continue
            scope = path if by_file else ""
            before = counted.get(scope, 0)
            counted[scope] = before + len(found)
            for d in found:
                places[_key(d)][name] = before + (len(found) - 1) / 2

    def chunks(ranked: Iterable[Chunk]) -> Iterable[Placed]:
        for path, start, end in ranked:
            if path in defs:
                yield path, shown_definitions(defs[path], start, end, named)

    def lines(spots: Iterable[tuple[str, int]]) -> Iterable[Placed]:
        for path, line in spots:
            inner = _innermost(defs.get(path, ()), line)
            if inner is not None:
                yield path, [inner]

    # The deepest named first (a method named beside its class), those named alike tied.
    levels = (2, 1)
    rank(
        "names",
        (
            (p, [d for d in defs[p] if named(d["qualified_name"]) == n])
            for n in levels
            for p in paths
        ),
    )
    rank("frames", lines(frame_spots(searcher, analysis, paths)))
    rank("links", lines(link_spots(searcher, analysis, paths)))
    by_name = {(d["path"], d["qualified_name"]): d for p in paths for d in defs[p]}
    close = closest_definitions(searcher, analysis, paths, by_file=by_file)
    rank(
        "closeness",
        (
            (s["path"], [by_name[(s["path"], s["qualified_name"])]])
            for s in close
            if (s["path"], s["qualified_name"]) in by_name
        ),
    )
    tokens = list(dict.fromkeys([*base_tokens(analysis), *title_tokens(analysis)]))
    # Each file's own best chunks: a pool shared by the files would give the first file
    # fewer when another file matches the words better, and a definition's place would
    # hang on how many files are ranked.
    words = _each_files_best(searcher, tokens, paths)
    if not by_file:  # the best-scored chunks of all the files first
        words.sort(key=lambda hit: -hit[1])
    rank("words", _by_words(words, defs, set(tokens), named))
    text = _file_lines(searcher, paths)
    bodies = {k: b for p in paths for k, b in own_behaviours(text.get(p, []), defs[p], p).items()}
    rank("behaviour", _by_behaviour(bodies, defs, question_stems(analysis), by_file))
    rank("evaluated", chunks(evaluated))
    rank("context", chunks(context))
    file_rank = {p: i for i, p in enumerate(paths)}
    return [
        RankedDefinition(
            path=d["path"],
            start_line=int(d["start_line"]),
            end_line=int(d["end_line"]),
            qualified_name=d["qualified_name"],
            kind=d.get("kind") or "",
            score=0.0,
            file_rank=file_rank[d["path"]],
            rankings=places.get(_key(d), {}),
            declaration=is_declaration(d.get("kind") or "", bodies[_key(d)].code_lines),
        )
        for p in paths
        for d in defs[p]
    ]
