"""The parts of the best-ranked files that answer the question: each file's chunks ranked.

The loop evaluates the chunks that the search over the whole index ranks highest, a few
per file. The file ranking then fuses evidence that no single chunk carries (the file's
words taken together, its summary's closeness in meaning, its history), so the first
files of an answer often hold the lines that matter in a chunk the loop never looked at:
on the SWE-bench Lite dev split, most instances whose fixed lines were missing from the
context had the fixed file listed and shown, but by another part of it
(benchmarks/RESULTS-context.md).

`best_parts` ranks the chunks of a few files, each file on its own, by reciprocal-rank
fusion of up to eight rankings inside the file (`RANKINGS`):

- the full-text score of the question's words, the search restricted to those files;
- the question's cosine to each definition's vector (an index with file vectors);
- the definitions the question names (an identifier it mentions);
- the chunks of the body of such a definition too long to show whole;
- the lines the question's stack-trace frames point at, innermost first;
- the lines the question links to (`QueryAnalysis.links`: a report's link to
  `.../blob/REF/PATH#L636`), in the question's order;
- the loop's own evaluations of the file's chunks, by relevance;
- the definitions that the chunks the loop scored directly relevant (of any file) call:
  a function that delegates (`is_hidden_path` calling `is_hidden_path_only`) scores
  high on the question's words, while the callee holds the lines that decide.

The rankings of definitions (`closeness`, `calls`) place a function too long to show whole
at the chunk of its body that the question's words rank highest and that is code
(`_body_chunks`), not at its name line's chunk, which holds its signature and docstring.
Each ranking counts `1 / (RRF_K + rank)`; a ranking a chunk is absent from adds nothing.
No weight is fitted: the rankings count alike, so the order holds on repositories nobody
tuned it on (one weight per ranking, fitted leaving each repository out, did no better on
the repository left out in most languages: benchmarks/part_weights.py, which scores any
weighting from each part's `places`). A module-level part that is mostly docstring,
comments or imports counts by its share of code (`behaviour_share`), as in the loop's
own order, unless it defines a value the question names (`defines_any`); a chunk cut from
inside a long definition is read with the definition's lines above it
(`grains.lines_above`), so the rest of a docstring is prose, not code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dowse.indexer.store import where_in
from dowse.retrieval.behaviour import (
    WHOLE_DEFINITION_LINES,
    behaviour_share,
    defines_any,
    documented_lines,
)
from dowse.retrieval.grains import definition_of, lines_above
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.loop import LoopConfig
from dowse.retrieval.query import QueryAnalysis, base_tokens, title_tokens
from dowse.retrieval.references import called_within

__all__ = [
    "POOL_PER_FILE",
    "RANKINGS",
    "RRF_K",
    "WHOLE_DEFINITION_LINES",
    "Part",
    "best_parts",
    "closest_definitions",
    "definition_of",
    "distinct_parts",
    "frame_spots",
    "link_spots",
    "printed_lines",
]

RRF_K = 1
"""The reciprocal-rank constant: a file has tens of chunks, not thousands of documents, so
the first place of a ranking should count clearly more than the third."""
POOL_PER_FILE = 25
"""Full-text hits asked for per file (the search is restricted to the files)."""
RANKINGS = frozenset(
    {"words", "closeness", "names", "bodies", "frames", "links", "evaluated", "calls"}
)
"""The rankings `best_parts` fuses, by name (benchmarks/part_ranking.py leaves each out in
turn to measure what it adds)."""


@dataclass
class Part:
    """One chunk of a file, with the within-file rankings that placed it."""

    row: dict[str, Any]
    score: float = 0.0
    why: list[str] = field(default_factory=list)
    places: dict[str, list[int]] = field(default_factory=dict)
    """Each ranking's (`RANKINGS`) 0-based places of the chunk in its file (a chunk
    holding two definitions can be placed twice by one ranking)."""
    share: float = 1.0
    """The factor its score was multiplied by for being mostly prose (`behaviour_share`)."""

    @property
    def key(self) -> tuple[str, int]:
        return self.row["path"], int(self.row["start_line"])


def best_parts(
    searcher: HybridSearcher,
    analysis: QueryAnalysis,
    paths: Sequence[str],
    *,
    evaluated: Mapping[str, Sequence[tuple[dict[str, Any], float]]] | None = None,
    symbols: Mapping[str, Sequence[dict[str, Any]]] | None = None,
    rankings: frozenset[str] = RANKINGS,
    high: float | None = None,
) -> dict[str, list[Part]]:
    """Each of `paths` with its chunks best first (files without chunks left out).

    `evaluated`: per path (any file's, not only `paths`'), the loop's (chunk row: path,
    start and end line, symbol; relevance) pairs; `symbols`: per path,
    its definitions (`qualified_name`, `start_line`, ...), for the names the question
    mentions; `rankings`: the names (`RANKINGS`) of the rankings to fuse; `high`: the
    relevance from which an evaluated chunk's calls count (`LoopConfig.high`, the
    loop's "directly relevant")."""
    paths = list(dict.fromkeys(paths))
    if not paths:
        return {}
    parts: dict[tuple[str, int], Part] = {}

    def rank(ranked: Iterable[dict[str, Any]], why: str, name: str) -> None:
        if name not in rankings:
            return
        seen: dict[str, int] = {}
        for row in ranked:
            place = seen.get(row["path"], 0)
            seen[row["path"]] = place + 1
            key = (row["path"], int(row["start_line"]))
            part = parts.get(key)
            if part is None:
                part = parts[key] = Part(row)
            part.score += 1 / (RRF_K + place)
            part.places.setdefault(name, []).append(place)
            if place == 0:
                part.why.append(why)

    file_symbols = symbols or {}
    sources: dict[str, list[str]] = {}
    shares: dict[tuple[str, int], float] = {}

    def too_long(row: Mapping[str, Any]) -> bool:
        sym = definition_of(row, file_symbols.get(row["path"], ()))
        lines = sym["end_line"] - sym["start_line"] if sym and "end_line" in sym else 0
        return lines >= WHOLE_DEFINITION_LINES

    def share_of(row: Mapping[str, Any]) -> float:
        """The chunk's share of code (`behaviour_share`), its definition's doc comments
        and the lines of it above the chunk read as such."""
        key = (row["path"], int(row["start_line"]))
        if key not in shares:
            text = row.get("text") or ""
            # A part only the loop's evaluations name (`evaluated`) carries no text: its
            # lines are counted from the text it has.
            first = int(row["start_line"])
            mine = file_symbols.get(row["path"], ())
            sym = definition_of(row, mine) if row.get("symbol") else None
            shares[key] = behaviour_share(
                text,
                row.get("language"),
                imports_are_code=analysis.mentions_imports,
                documented=documented_lines(first, first + text.count("\n"), mine),
                preceding=lines_above(searcher.root, row, sym, sources),
            )
        return shares[key]

    tokens = list(dict.fromkeys([*base_tokens(analysis), *title_tokens(analysis)]))
    where = where_in("path", paths)
    words = [row for row, _ in searcher.lookups.lexical(tokens, POOL_PER_FILE * len(paths), where)]
    rank(words, "matches the question's words best in its file", "words")

    # One look-up of the chunks that show the definitions both rankings name.
    close = closest_definitions(searcher, analysis, paths)
    named = _named_definitions(analysis, paths, symbols or {})
    rows = searcher.lookups.definition_chunks([*close, *named]) if close or named else {}
    body = _body_chunks(words, file_symbols, share_of)
    for definitions, why, ranking in (
        (close, "closest in meaning in its file", "closeness"),
        (named, "defines a name the question mentions", "names"),
    ):
        keys = ((s["path"], s["start_line"]) for s in definitions)
        found = (rows[key] for key in keys if key in rows)
        rank(found if ranking == "names" else map(body, found), why, ranking)
    shown = {(r["path"], int(r["start_line"])) for r in rows.values()}  # their name lines
    bodies = _bodies(searcher, named, words)
    rank(
        (r for r in bodies if (r["path"], int(r["start_line"])) not in shown),
        "in the body of a long definition the question names",
        "bodies",
    )

    # One look-up of the chunks holding the lines the frames and the links point at.
    spots = frame_spots(searcher, analysis, paths)
    linked = link_spots(searcher, analysis, paths)
    at = searcher.lookups.chunks_at([*spots, *linked]) if spots or linked else {}
    for pointed, why, ranking in (
        (spots, "a stack-trace frame of the question is in it", "frames"),
        (linked, "the question links to its lines", "links"),
    ):
        rank((at[s] for s in pointed if s in at), why, ranking)

    if evaluated:
        pairs = [(row, rel) for path in paths for row, rel in evaluated.get(path, ())]
        pairs.sort(key=lambda p: -p[1])
        rank((row for row, _ in pairs), "scored most relevant in its file", "evaluated")
        if "calls" in rankings:
            callers = high if high is not None else LoopConfig().high
            called = _called(searcher, evaluated, paths, callers)
            rank(map(body, called), "the code scored relevant calls it", "calls")

    # The code that acts before a module's header or docstring that only names it
    # (`behaviour_share`), as in the loop's own order. A definition's docstring chunk is
    # not demoted when the context can widen it to the whole definition, body included;
    # a longer definition's (a class of many methods) shows only its prose.
    for part in parts.values():
        if part.row.get("symbol") and not too_long(part.row):
            continue
        text = part.row.get("text") or ""
        share = share_of(part.row)
        # A value the question names, defined there, is the behaviour asked about.
        if share < 1 and not defines_any(text, analysis.identifiers):
            part.score *= share
            part.share = share
    out: dict[str, list[Part]] = {}
    for part in sorted(parts.values(), key=lambda p: (-p.score, p.key)):
        out.setdefault(part.row["path"], []).append(part)
    return out


def printed_lines(row: Mapping[str, Any], symbols: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """The lines the context shows for a chunk `row` when it has the room: the chunk,
    widened to its definition (`symbols`: its file's) when that is shorter than
    `WHOLE_DEFINITION_LINES`."""
    lo, hi = int(row["start_line"]), int(row["end_line"])
    sym = definition_of(row, symbols)
    if sym is not None and sym["end_line"] - sym["start_line"] < WHOLE_DEFINITION_LINES:
        return min(lo, int(sym["start_line"])), max(hi, int(sym["end_line"]))
    return lo, hi


def distinct_parts(parts: Sequence[Part], symbols: Sequence[Mapping[str, Any]]) -> list[Part]:
    """`parts` (one file's, best first) without those whose printed lines
    (`printed_lines`) an earlier part's hold: the chunks of one short function all print
    that function, and a second one shown adds nothing, while taking a next part's
    place."""
    kept: list[Part] = []
    spans: list[tuple[int, int]] = []
    for part in parts:
        lo, hi = printed_lines(part.row, symbols)
        if any(a <= lo and hi <= b for a, b in spans):
            continue
        kept.append(part)
        spans.append((lo, hi))
    return kept


_BODY_KINDS = frozenset({"function", "method", "constructor"})


def _body_chunks(
    words: Sequence[dict[str, Any]],
    symbols: Mapping[str, Sequence[Mapping[str, Any]]],
    share_of: Callable[[Mapping[str, Any]], float],
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """For the chunk `row` that holds a definition's name line, the chunk a ranking of
    definitions should place: a function too long to show whole (`WHOLE_DEFINITION_LINES`)
    is cut into chunks, and the one with its name line is its signature and docstring,
    the lines the context can least spare room for; the chunk of its body that the
    question's `words` rank highest and that is code, not the rest of its docstring
    (`share_of` 1), stands for it. `row` itself when no such chunk (a class, a short
    definition: the context widens those)."""
    inside: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for sym in (s for path_symbols in symbols.values() for s in path_symbols):
        if sym.get("kind") in _BODY_KINDS and sym.get("end_line") is not None:
            if sym["end_line"] - sym["start_line"] >= WHOLE_DEFINITION_LINES:
                inside[(sym["path"], int(sym["start_line"]))] = [
                    r
                    for r in words
                    if r["path"] == sym["path"]
                    and sym["start_line"] <= r["start_line"] <= sym["end_line"]
                ]

    def body(row: dict[str, Any]) -> dict[str, Any]:
        heads = [
            key
            for key in inside
            if key[0] == row["path"] and row["start_line"] <= key[1] <= row["end_line"]
        ]
        for key in heads:
            chunk = next((r for r in inside[key] if share_of(r) >= 1), None)
            if chunk is not None:
                return chunk
        return row

    return body


def _bodies(
    searcher: HybridSearcher, named: Sequence[dict[str, Any]], words: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The chunks inside the named functions too long to show whole
    (`WHOLE_DEFINITION_LINES`), each file's best by the question's words first, then in
    line order. The chunk holding a long function's name line is a few lines of its
    signature; the question is about its body, and the context cannot widen to all of
    it. A class's or namespace's chunks are many behaviours, not one body: naming the
    type (often the project's own, dayjs's `Dayjs`) says nothing of which."""
    long = [
        s
        for s in named
        if s.get("kind") in _BODY_KINDS
        and s.get("end_line") is not None
        and s["end_line"] - s["start_line"] >= WHOLE_DEFINITION_LINES
    ]
    if not long:
        return []
    spans = searcher.lookups.spans_of(dict.fromkeys(s["path"] for s in long))
    inside = {
        (r["path"], int(r["start_line"])): r
        for s in long
        for r in spans.get(s["path"], ())
        if s["start_line"] <= r["start_line"] and r["end_line"] <= s["end_line"]
    }
    place = {(r["path"], int(r["start_line"])): i for i, r in enumerate(words)}
    order = sorted(inside, key=lambda k: (k[0], place.get(k, len(place)), k[1]))
    rows = searcher.lookups.rows_of({k: inside[k] for k in order})
    return [rows[k] for k in order if k in rows]


def _called(
    searcher: HybridSearcher,
    evaluated: Mapping[str, Sequence[tuple[dict[str, Any], float]]],
    paths: Sequence[str],
    high: float,
) -> list[dict[str, Any]]:
    """The chunks of `paths` showing the definitions that the loop's chunks of at least
    `high` relevance (of any file) call, the callers by relevance: the code that scored
    relevant often hands the decision to a function whose own words match the question
    less (`config.rs`'s `get_pager_executable` calls `pager.rs`'s `get_pager`)."""
    pairs = sorted(
        ((row, rel) for rows in evaluated.values() for row, rel in rows if rel >= high),
        key=lambda p: -p[1],
    )
    spans = [
        (r["path"], int(r["start_line"]), int(r.get("end_line", r["start_line"])), r.get("symbol"))
        for r, _ in pairs
    ]
    called = called_within(searcher.store, spans, paths, lookups=searcher.lookups)
    if not called:
        return []
    wanted = [
        {"path": d.path, "start_line": d.start_line, "qualified_name": d.qualified_name}
        for d in called
    ]
    rows = searcher.lookups.definition_chunks(wanted)
    return [rows[key] for key in ((d.path, d.start_line) for d in called) if key in rows]


def frame_spots(
    searcher: HybridSearcher, analysis: QueryAnalysis, paths: Sequence[str]
) -> list[tuple[str, int]]:
    """The (path, line) of each stack-trace frame of the question inside `paths`,
    innermost first: the call that failed, then the calls that led to it. A frame names
    the installed copy (`site-packages/_pytest/assertion/rewrite.py`); it points into the
    repository's file its path ends with (`IndexLookups.files_named`)."""
    if not analysis.frames:
        return []
    wanted = set(paths)
    named = searcher.lookups.files_named(dict.fromkeys(f[0] for f in analysis.frames))
    spots: list[tuple[str, int]] = []
    for frame_path, line, _ in reversed(analysis.frames):
        found = [p for p in named.get(frame_path, ()) if p in wanted]
        if len(found) == 1 and (found[0], line) not in spots:
            spots.append((found[0], line))
    return spots


def link_spots(
    searcher: HybridSearcher, analysis: QueryAnalysis, paths: Sequence[str]
) -> list[tuple[str, int]]:
    """The (path, line) of each line range the question links to inside `paths`: its
    first line and, for a range, its last (the range may span two chunks). A link names
    the file from the repository's root; a fork's or a mirror's link names the same
    path, and one into another repository names a file this one seldom has."""
    if not analysis.links:
        return []
    wanted = set(paths)
    named = searcher.lookups.files_named(dict.fromkeys(p for p, _, _ in analysis.links))
    spots: list[tuple[str, int]] = []
    for link_path, first, last in analysis.links:
        found = [link_path] if link_path in wanted else []
        if not found:
            found = [p for p in named.get(link_path, ()) if p in wanted]
        if len(found) != 1:
            continue
        for line in dict.fromkeys((first, last)):
            if (found[0], line) not in spots:
                spots.append((found[0], line))
    return spots


def closest_definitions(
    searcher: HybridSearcher,
    analysis: QueryAnalysis,
    paths: Sequence[str],
    *,
    by_file: bool = True,
) -> list[dict[str, Any]]:
    """The definitions of `paths`, each file's closest to the question first (none without
    file vectors or a model); `by_file` False: the closest of them all first."""
    cosines = searcher.questions.question_cosines(analysis.text)
    if cosines is None:
        return []
    held, sims = cosines.held, cosines.sims
    out: list[tuple[float, dict[str, Any]]] = []
    for path in paths:
        i = held.position.get(path)
        if i is None:
            continue
        lo, hi = int(held.starts[i]), int(held.starts[i + 1])
        for j in range(lo, hi):
            name, line = held.definitions[j]
            sim = float(sims[held.definition_rows[j]])
            out.append((sim, {"path": path, "start_line": line, "qualified_name": name}))
    out.sort(
        key=lambda x: (x[1]["path"] if by_file else "", -x[0], x[1]["path"], x[1]["start_line"])
    )
    return [sym for _, sym in out]


def _named_definitions(
    analysis: QueryAnalysis, paths: Sequence[str], symbols: Mapping[str, Sequence[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The definitions of `paths` whose name the question mentions, longest match first."""
    wanted = {i.split(".")[-1].lower() for i in analysis.identifiers}
    out = []
    for path in paths:
        for sym in symbols.get(path, ()):
            last = sym["qualified_name"].split(".")[-1].lower()
            if last in wanted and sym.get("kind") not in ("variable", "field", "property"):
                out.append(sym)
    out.sort(key=lambda s: (s["path"], -len(s["qualified_name"]), s["start_line"]))
    return out
