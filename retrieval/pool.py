"""The candidate pool of one query: the chunks its evidence brings in, each with its
signals in 0..1 and its fused score (retrieval/fusion.py `fuse`).

- `lexical`: BM25 over the code-aware token column, divided by the best score;
- `dense`: cosine similarity of the query and chunk embeddings, divided by the best
  (`cosine` keeps the raw similarity, an absolute measure the evaluator uses);
- `symbol`: the chunk holds a definition the query names (1.0 qualified, 0.8 bare name);
- `path`: the chunk's file is named by the query (1.0 path, 0.6 file stem);
- `literal`: the chunk holds verbatim a message the query quotes
  (`QueryAnalysis.literals`), held by few files: 1 over the number of code files
  holding it; or it defines or reads a flag the query names (`flag_site_rows`): 1
  over the number of flags the query names;
- `summary`: how close the query is to the chunk's file: the larger of its summary's
  cosine (path, docstring, names defined) and its closest definition's (its name and
  signature, and docstring), divided by the best (`file_cosine` keeps the
  raw cosine). The best files by it bring their best-matching chunk for the query's words
  and their closest definition's chunk into the pool when nothing else did.

Gathering runs in phases (`gather`): the semantic look-ups start in the background, the
full-text search runs, the named definitions and files are looked up, then the vectors'
evidence and the files' closeness join, and every candidate is scored. Everything is
deterministic for a given index.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dowse.flag_rules import flag_forms, flag_sites
from dowse.indexer.store import all_of, where_in
from dowse.languages import is_documentation
from dowse.retrieval.fusion import FusionWeights, fuse, lexical_share
from dowse.retrieval.lookups import SYMBOL_COLUMNS, IndexLookups
from dowse.retrieval.query import QUERY_NOISE, QueryAnalysis, base_tokens, title_tokens
from dowse.retrieval.questions import QuestionVectors

__all__ = [
    "Candidate",
    "PoolLimits",
    "flag_site_rows",
    "gather",
    "in_modules",
    "literal_rows",
    "rust_modules",
]


class PoolLimits(BaseModel):
    """How many chunks each kind of evidence brings into the pool."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    few_definitions: int = Field(
        default=3,
        gt=0,
        description=(
            "a name defined in more places than this gives each definition a weaker symbol "
            "signal: a name defined in many places (`clean`, `simplify`) says little about "
            "where"
        ),
    )
    named_file_chunks: int = Field(
        default=3,
        gt=0,
        description="the best chunks by full-text score each file the query names brings in",
    )
    few_named: int = Field(
        default=3,
        gt=0,
        description=(
            "a path that names more files than this (`models.py` alone names 192 of "
            "django's, a pasted `app/migrations/0001_initial.py` 23) names none: on the "
            "SWE-bench dev split no such path named the fixed file, and their chunks "
            "crowded the pool"
        ),
    )
    max_frames: int = Field(
        default=12,
        gt=0,
        description="the chunks at the lines of at most this many stack-trace frames join",
    )
    summary_files: int = Field(
        default=10, gt=0, description="the best files by summary similarity that bring a chunk in"
    )
    few_holding: int = Field(
        default=3,
        gt=0,
        description=(
            "a flag or message the query quotes that more code files than this hold names "
            "none of them (`--version`, `unsigned long long`); tests, documentation and "
            "copies the query is not about do not count"
        ),
    )
    literal_chunks: int = Field(
        default=2, gt=0, description="the chunks of each file holding a quoted literal that join"
    )
    flag_chunks: int = Field(
        default=400,
        gt=0,
        description=(
            'the chunks holding a quoted flag\'s name (`"paging"`, `max_count`) read for '
            "where it is defined or read"
        ),
    )


@dataclass
class Candidate:
    row: dict[str, Any]
    signals: dict[str, float] = field(default_factory=dict)
    score: float = 0.0

    @property
    def id(self) -> str:
        return str(self.row["id"])


Found = dict[str, list[dict[str, Any]]]
"""By path, the chunks a file found by its closeness would bring into the pool."""


def gather(
    lookups: IndexLookups,
    questions: QuestionVectors,
    analysis: QueryAnalysis,
    *,
    k: int = 60,
    keep: Callable[[str], bool] = lambda p: True,
    languages: Sequence[str] = (),
    extra_tokens: Sequence[str] = (),
    memo: dict[str, Any] | None = None,
    limits: PoolLimits = PoolLimits(),  # noqa: B008 - frozen
    weights: FusionWeights = FusionWeights(),  # noqa: B008 - frozen
) -> dict[str, Candidate]:
    """Collect and score candidate chunks for a query.

    `memo` keeps what depends on the task text alone (definitions of the names it
    mentions, the chunks of the files it names, the nearest chunks and file summaries,
    the best chunk of a file found by its summary, the full-text results of each set of
    words asked) across calls for one task: the loop passes the same dict every cycle."""
    memo = {} if memo is None else memo
    pool = _Pool(keep, languages)
    base = base_tokens(analysis)
    tokens = list(dict.fromkeys([*base, *(t for t in extra_tokens if t not in QUERY_NOISE)]))
    tokens += title_tokens(analysis)
    # Embedding the query and the vector scan overlap the full-text search (both
    # release the GIL).
    if "dense" not in memo:
        memo["dense"] = _THREADS.submit(
            _semantic,
            lookups,
            questions,
            analysis.text,
            k,
            base,
            keep,
            languages,
            memo.setdefault("summary", {}),
            limits,
        )
    where = where_in("language", languages) if languages else None
    # A cycle that adds no new words asks the full-text index what an earlier one did
    # (on a 20k-file tree the query of a task's ~500 words costs ~30 ms).
    asked: dict[tuple[tuple[str, ...], int, str | None], Any] = memo.setdefault("lexical", {})
    key = (tuple(tokens), k, where)
    if key not in asked:
        asked[key] = lookups.lexical(tokens, k, where)
    _lexical_signal(pool, asked[key])
    # The named definitions and files do not depend on the vector: look them up
    # while the query is embedded.
    if "symbol" not in memo:
        memo["symbol"] = _symbol_rows(lookups, analysis, limits)
    if "path" not in memo:
        memo["path"] = _path_rows(lookups, analysis, base, limits)
    if "literal" not in memo:
        memo["literal"] = literal_rows(lookups, analysis, limits)
    dense, file_dense = memo["dense"].result()
    if dense is not None:
        _dense_signal(pool, lookups, dense)
    raised = _named_signals(pool, memo["symbol"], memo["literal"], memo["path"])
    _summary_signal(pool, file_dense, keep, memo["summary"], limits)
    if raised:
        _raised_signal(pool, raised)
    _score(
        pool,
        analysis,
        chunk_vectors=dense is not None,
        file_vectors=bool(file_dense),
        weights=weights,
    )
    return pool.cands


class _Pool:
    """The candidates so far, by chunk id; `add` admits a row kept by the filters."""

    def __init__(self, keep: Callable[[str], bool], languages: Sequence[str]) -> None:
        self.keep = keep
        self.languages = languages
        self.cands: dict[str, Candidate] = {}

    def add(self, row: dict[str, Any]) -> Candidate | None:
        if not self.keep(row["path"]):
            return None
        if self.languages and row["language"] not in self.languages:
            return None
        cand = self.cands.get(row["id"])
        if cand is None:
            cand = self.cands[row["id"]] = Candidate(row)
        return cand


def _lexical_signal(pool: _Pool, lexical: list[tuple[dict[str, Any], float]]) -> None:
    best = max((s for _, s in lexical), default=0.0) or 1.0
    for row, score in lexical:
        if (cand := pool.add(row)) is not None:
            cand.signals["lexical"] = round(score / best, 4)


def _dense_signal(pool: _Pool, lookups: IndexLookups, dense: list[tuple[str, float]]) -> None:
    best = max((s for _, s in dense), default=0.0) or 1.0
    cands = pool.cands
    rows = lookups.chunks_by_id(i for i, _ in dense if i not in cands)
    for cid, sim in dense:
        found = cands[cid].row if cid in cands else rows.get(cid)
        if found is not None and (cand := pool.add(found)) is not None:
            cand.signals["dense"] = round(max(sim, 0.0) / best, 4)
            cand.signals["cosine"] = round(max(sim, 0.0), 4)


def _named_signals(
    pool: _Pool,
    symbols: list[tuple[dict[str, Any], float]],
    literals: list[tuple[dict[str, Any], float]],
    paths: tuple[list[dict[str, Any]], str | None],
) -> str | None:
    """The chunks defining the names the task mentions (`_symbol_rows`, with their
    strength), those holding a flag or message it quotes (`literal_rows`) and those of
    the files it names (`_path_rows`) join with their signals; the file where the task's
    error was raised, if any."""
    for row, strength in symbols:
        if (cand := pool.add(row)) is not None:
            cand.signals["symbol"] = max(cand.signals.get("symbol", 0.0), strength)
    for row, strength in literals:
        if (cand := pool.add(row)) is not None:
            cand.signals["literal"] = max(cand.signals.get("literal", 0.0), strength)
    rows, raised = paths
    for row in rows:
        if (cand := pool.add(row)) is not None:
            cand.signals["path"] = 1.0
    return raised


def _raised_signal(pool: _Pool, raised: str) -> None:
    """Every candidate of the file where the task's error was raised is marked so."""
    for cand in pool.cands.values():
        if cand.row["path"] == raised:
            cand.signals["raised"] = 1.0


def _score(
    pool: _Pool,
    analysis: QueryAnalysis,
    *,
    chunk_vectors: bool,
    file_vectors: bool,
    weights: FusionWeights,
) -> None:
    lex_w = lexical_share(
        analysis.lexical_weight,
        chunk_vectors=chunk_vectors,
        file_vectors=file_vectors,
        weights=weights,
    )
    wants_docs = analysis.mentions_docs
    for cand in pool.cands.values():
        path = cand.row["path"]
        cand.score = fuse(
            cand.signals,
            lexical_weight=lex_w,
            unasked_test=analysis.unasked_test(path),
            unasked_doc=not wants_docs and is_documentation(path, cand.row["language"]),
            weights=weights,
        )


def _semantic(
    lookups: IndexLookups,
    questions: QuestionVectors,
    text: str,
    k: int,
    tokens: Sequence[str],
    keep: Callable[[str], bool],
    languages: Sequence[str],
    found: Found,
    limits: PoolLimits,
) -> tuple[list[tuple[str, float]] | None, list[tuple[str, float]]]:
    """The query's nearest chunks ((id, cosine), None without chunk vectors) and its
    nearest files ((path, closeness), `file_dense`); and into `found`, the chunks
    the best files would bring into the pool (`summary_chunks`). All of it runs
    beside the full-text and named look-ups."""
    vector = questions.embed_query(text)
    if vector is None:
        return None, []
    chunks = lookups.dense(vector, k) if questions.has_vectors else None
    cosines = questions.question_cosines(text)
    if cosines is None:
        return chunks, []
    files = cosines.nearest(k)
    wanted = [p for p, _ in files[: limits.summary_files] if keep(p)]
    summary_chunks(
        lookups,
        wanted,
        tokens,
        languages,
        found,
        cosines.held.closest_definitions(cosines.sims, wanted),
    )
    return chunks, files


def _symbol_rows(
    lookups: IndexLookups, analysis: QueryAnalysis, limits: PoolLimits
) -> list[tuple[dict[str, Any], float]]:
    """The chunks defining the names the task mentions, with the match's strength: 1
    when a qualified name (`Cart.total`) matches too, or the definition lies in a module
    a Rust path puts the name in (`QueryAnalysis.scopes`), else 0.8."""
    wanted: dict[str, str] = {}
    for ident in analysis.identifiers:
        parts = ident.split(".")
        if len(parts[-1]) < 3:
            continue  # one- and two-letter names match too much to be evidence
        if len(parts) == 1 and parts[0].startswith("__"):
            continue  # `__eq__` alone: every class has one
        wanted.setdefault(parts[-1].lower(), ".".join(parts[-2:]) if len(parts) > 1 else "")
    symbols = lookups.symbols_named(wanted)
    if analysis.scopes:
        # The definitions in a Rust path's modules, however common their name (`Ready`,
        # `ERROR`: beyond the rarest names' look-up limit).
        have = {(s["path"], s["start_line"]) for s in symbols}
        symbols += [
            s
            for s in lookups.rows_in("symbols", SYMBOL_COLUMNS, "name_lower", analysis.scopes)
            if (s["path"], s["start_line"]) not in have
            and s["name_lower"] in wanted
            and in_modules(s, analysis.scopes[s["name_lower"]])
        ]
    rows = lookups.definition_chunks(symbols)
    # A name defined in many places (`clean`, `simplify`) says little about where:
    # the strength falls with the number of definitions beyond a few.
    strengths = [
        1.0
        if wanted[s["name_lower"]]
        and s["qualified_name"].endswith(wanted[s["name_lower"]])
        or in_modules(s, analysis.scopes.get(s["name_lower"], ()))
        else 0.8
        for s in symbols
    ]
    defined = Counter((s["name_lower"], st) for s, st in zip(symbols, strengths, strict=True))
    out = []
    for sym, strength in zip(symbols, strengths, strict=True):
        row = rows.get((sym["path"], sym["start_line"]))
        if row is not None:
            many = defined[(sym["name_lower"], strength)]
            out.append((row, round(strength * min(1.0, limits.few_definitions / many), 4)))
    return out


def rust_modules(path: str, qualified_name: str = "") -> tuple[str, ...]:
    """The Rust module path of a definition in `path`: its directories and file stem,
    `src/` and a module root's stem (`mod`, `lib`, `main`) left out, `-` read as `_` (a
    crate's directory is spelled as its name), then the modules and types the
    definition is nested in (`qualified_name`): `tokio-util/src/sync/mod.rs` is
    (tokio_util, sync)."""
    parts = path.removesuffix(".rs").replace("-", "_").split("/")
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    nested = qualified_name.split(".")[:-1]
    return tuple(p for p in [*parts, *nested] if p != "src")


def in_modules(symbol: dict[str, Any], scopes: Sequence[tuple[str, ...]]) -> bool:
    """Whether a Rust `symbol` (a symbols row) lies in one of the modules (or types) of
    `scopes` (or below it: a module re-exports what its submodules define), each a run
    of its module path (`rust_modules`). A path's first part may be its crate, named
    otherwise than its directory (`grep_regex` of ripgrep's `crates/regex/`): the rest
    counts too when a module follows it."""
    if not scopes or not symbol["path"].endswith(".rs"):
        return False
    held = rust_modules(symbol["path"], symbol["qualified_name"] or "")
    for modules in scopes:
        crate = len(modules) > 1 and modules[1][:1].islower()
        for run in (modules, modules[1:]) if crate else (modules,):
            if any(held[i : i + len(run)] == run for i in range(len(held) - len(run) + 1)):
                return True
    return False


def literal_rows(
    lookups: IndexLookups,
    analysis: QueryAnalysis,
    limits: PoolLimits = PoolLimits(),  # noqa: B008
) -> list[tuple[dict[str, Any], float]]:
    """The chunks holding a flag or message the task quotes (`QueryAnalysis.literals`),
    each with 1 over the number of code files holding it: a message printed by one
    function names it as surely as its name would. A flag names the files that define
    or read it (`flag_site_rows`), however many others hold its word (bat's
    `#[cfg(feature = "paging")]`); a flag no code is seen to define or read is looked
    for verbatim and as its name in quotes (`--smart-case` as `"smart-case"`). A task
    naming several flags gives each a share: a pasted command line of eight flags (how
    the bug was seen) is about none of them in particular. A literal held by more than
    `few_holding` code files names none; tests, documentation and copies the task is
    not about are passed over."""
    wants_docs = analysis.mentions_docs
    flags = sum(1 for literal in analysis.literals if literal.startswith("--"))
    out: list[tuple[dict[str, Any], float]] = []
    for literal in analysis.literals:
        flag = literal.startswith("--")
        name = literal[2:] if flag and _LONG_FLAG.fullmatch(literal) else ""
        if name and (sites := flag_site_rows(lookups, analysis, name, limits)):
            strength = round(1 / flags, 4)
            out.extend((row, strength) for rows in sites.values() for row in rows)
            continue
        forms = [literal]
        if flag and len(literal) > 5:
            forms.append(f'"{literal[2:]}"')
        by_path: dict[str, list[dict[str, Any]]] = {}
        for form in forms:
            for row in lookups.chunks_holding(form):
                path = row["path"]
                if analysis.unasked_test(path) or (
                    not wants_docs and is_documentation(path, row["language"])
                ):
                    continue
                held = by_path.setdefault(path, [])
                if len(held) < limits.literal_chunks and row not in held:
                    held.append(row)
        if not by_path or len(by_path) > limits.few_holding:
            continue
        strength = round(1 / len(by_path) / (flags if flag else 1), 4)
        out.extend((row, strength) for rows in by_path.values() for row in rows)
    return out


_LONG_FLAG = re.compile(r"--[A-Za-z0-9][\w-]*")
"""A literal that is one long flag (`--paging`), not a quoted command line."""


def flag_site_rows(
    lookups: IndexLookups, analysis: QueryAnalysis, flag: str, limits: PoolLimits
) -> dict[str, list[dict[str, Any]]]:
    """By path, the chunks that define or read `flag` (its long name) by their
    language's rules (`flag_rules.flag_sites`), at most `literal_chunks` a file; none
    when more than `few_holding` files do (a flag defined in more is no one place), tests and
    documentation the task is not about passed over."""
    by_path: dict[str, list[dict[str, Any]]] = {}
    seen: set[str] = set()
    for form in flag_forms(flag):
        for row in lookups.chunks_holding(form, limit=limits.flag_chunks):
            path = row["path"]
            if row["id"] in seen or analysis.unasked_test(path):
                continue
            seen.add(row["id"])
            if is_documentation(path, row["language"]):
                continue
            held = by_path.setdefault(path, [])
            if len(held) < limits.literal_chunks and flag_sites(row["text"], row["language"], flag):
                held.append(row)
    sites = {path: rows for path, rows in by_path.items() if rows}
    return sites if len(sites) <= limits.few_holding else {}


def _summary_signal(
    pool: _Pool,
    file_dense: list[tuple[str, float]],
    keep: Callable[[str], bool],
    found: Found,
    limits: PoolLimits,
) -> None:
    """Mark every candidate with its file's closeness; the best files by it that have
    no candidate yet bring in their chunks from `found` (their best chunk for the
    query's words and their closest definition's, fetched by `summary_chunks` beside
    the embedding; the loop's later cycles only exclude more files, so they need no
    other)."""
    if not file_dense:
        return
    best = max((sim for _, sim in file_dense), default=0.0) or 1.0
    by_path = {p: sim for p, sim in file_dense}
    have = {c.row["path"] for c in pool.cands.values()}
    absent = [p for p, _ in file_dense[: limits.summary_files] if p not in have and keep(p)]
    for path in absent:
        for row in found.get(path, ()):
            pool.add(row)
    for cand in pool.cands.values():
        sim = by_path.get(cand.row["path"])
        if sim is not None:
            cand.signals["summary"] = round(max(sim, 0.0) / best, 4)
            cand.signals["file_cosine"] = round(max(sim, 0.0), 4)


def summary_chunks(
    lookups: IndexLookups,
    paths: Sequence[str],
    tokens: Sequence[str],
    languages: Sequence[str],
    found: Found,
    closest: dict[str, tuple[str, int]] | None = None,
) -> None:
    """Into `found`, for each of `paths` it lacks: the file's best chunk for the
    query's words, else its first chunk; and the chunk of its definition `closest`
    names (qualified name, start line), when that is another."""
    wanted = [p for p in paths if p not in found]
    if not wanted:
        return
    where = all_of(where_in("path", wanted), where_in("language", languages) if languages else None)
    best: dict[str, dict[str, Any]] = {}
    for row, _ in lookups.lexical(tokens, 4 * len(wanted), where):
        best.setdefault(row["path"], row)
    best.update(lookups.first_chunks(p for p in wanted if p not in best))
    definition = lookups.chunks_of_definitions(
        {p: named for p, named in (closest or {}).items() if p in wanted}
    )
    for path in wanted:
        rows = [r for r in (best.get(path), definition.get(path)) if r is not None]
        if len(rows) == 2 and rows[0]["id"] == rows[1]["id"]:
            rows.pop()
        if rows:
            found[path] = rows


def _path_rows(
    lookups: IndexLookups, analysis: QueryAnalysis, tokens: Sequence[str], limits: PoolLimits
) -> tuple[list[dict[str, Any]], str | None]:
    """Chunks of the files the task names (by path, or as a dotted module name; a path
    naming more than `few_named` files names none): the best few of each by full-text
    score (its first when no word matches), and those holding a stack-trace frame's
    line.
    Also the file of the innermost frame that names one file of the repository: where
    the error was raised."""
    by_name = {
        p: found
        for p, found in lookups.files_named([*analysis.paths, *analysis.modules]).items()
        if len(found) <= limits.few_named
    }
    named = sorted({f for found in by_name.values() for f in found})
    if not named:
        return [], None
    per_file = limits.named_file_chunks
    best: dict[str, list[dict[str, Any]]] = {}
    for row, _ in lookups.lexical(tokens, 4 * per_file * len(named), where_in("path", named)):
        got = best.setdefault(row["path"], [])
        if len(got) < per_file:
            got.append(row)
    frames = analysis.frames[-limits.max_frames :]
    spots = [(path, line) for frame_path, line, _ in frames for path in by_name.get(frame_path, ())]
    innermost = [by_name.get(frame_path, []) for frame_path, _, _ in reversed(frames)]
    raised = next((found[0] for found in innermost if len(found) == 1), None)
    unmatched = [p for p in named if p not in best]
    # One query for the first chunks of the files no word matched and the frames'.
    spans = lookups.spans_of([*unmatched, *(p for p, _ in spots)])
    chosen = lookups.rows_of(
        {
            **{("first", p): r for p, r in lookups.first_spans(unmatched, spans).items()},
            **{("frame", *spot): r for spot, r in lookups.spans_at(spots, spans).items()},
        }
    )
    return ([*(r for got in best.values() for r in got), *chosen.values()], raised)


_THREADS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="dowse-search")
