"""Hybrid search: full-text, dense, symbol-name and path evidence, fused by query kind.

Each candidate chunk collects signals in 0..1:
- `lexical`: BM25 over the code-aware token column, divided by the best score;
- `dense`: cosine similarity of the query and chunk embeddings, divided by the best
  (`cosine` keeps the raw similarity, an absolute measure the evaluator uses);
- `symbol`: the chunk holds a definition the query names (1.0 qualified, 0.8 bare name);
- `path`: the chunk's file is named by the query (1.0 path, 0.6 file stem);
- `summary`: how close the query is to the chunk's file: the larger of its summary's
  cosine (path, docstring, names defined) and its closest definition's (its name and
  signature, and docstring), divided by the best (`file_cosine` keeps the
  raw cosine). The best files by it bring their best-matching chunk for the query's words
  and their closest definition's chunk into the pool when nothing else did.
The fused score weighs lexical against dense by `QueryAnalysis.lexical_weight` (identifier,
path and traceback text leans lexical; plain language leans dense) and adds the symbol,
path and summary evidence on top. Everything is deterministic for a given index.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pathspec

from dowse.indexer.embed import Embedder, embedder_for_model
from dowse.indexer.store import Store, quote_list
from dowse.languages import is_benchmark_path, is_documentation, is_test_path, language_for
from dowse.retrieval.file_vectors import FileCosines, FileVectors
from dowse.retrieval.grains import to_hits
from dowse.retrieval.lookups import CHUNK_COLUMNS, IndexLookups
from dowse.retrieval.query import (
    QUERY_NOISE,
    QueryAnalysis,
    analyze,
    base_tokens,
    file_query,
    question_vector,
    title_tokens,
)
from dowse.retrieval.records import Hit, SearchOptions

__all__ = ["Candidate", "HybridSearcher", "PathFilter"]

SYMBOL_WEIGHT = 0.5
FEW_DEFINITIONS = 3
"""A name defined in more places than this gives each definition a weaker symbol signal."""
PATH_WEIGHT = 0.25
NAMED_FILE_CHUNKS = 3
"""The best chunks by full-text score each file the query names brings into the pool."""
FEW_NAMED = 3
"""A path that names more files than this (`models.py` alone names 192 of django's, a
pasted `app/migrations/0001_initial.py` 23) names none: on the SWE-bench dev split no
such path named the fixed file, and their chunks crowded the pool."""
MAX_FRAMES = 12
"""The chunks at the lines of at most this many stack-trace frames join the candidates."""
SUMMARY_WEIGHT = 1.0
SUMMARY_FILES = 10
"""The best files by summary similarity that bring a chunk into the pool."""
CHUNK_DENSE_WITH_SUMMARIES = 0.2
"""The most chunk vectors weigh against full-text where file summaries are searched too."""
TEST_FACTOR = 0.8
"""Test files rank a little lower unless the query is about tests."""
DOC_FACTOR = 0.7
"""Documentation (text, and example or tutorial scripts) ranks lower unless the query is
about docs: a question about behaviour is answered by the code that implements it, and
prose and examples repeat the words of every question."""

FILE_MATRIX_ROWS = 100_000
"""Up to this many file summary and definition vectors are scanned in memory (100k x 384
float32: 154 MB; django has 14.5k)."""

WORD_FILE_POOL = 300
"""Chunks the whole-file word ranking (`files_by_words`) reads."""
WORD_FILE_CHUNKS = 3
"""Each file's best chunk scores summed by `files_by_words`."""
WORD_FILES = 10
"""Files `files_by_words` returns by default."""
CLOSE_FILES = 10
"""Files `files_by_closeness` returns by default."""
HISTORY_COMMITS = 50
"""Commits `files_by_history` reads: those whose messages match the question best."""
HISTORY_FILES = 10
"""Files `files_by_history` returns by default."""
CLOSE_MIN = 0.2
"""The least closeness of a file `files_by_closeness` returns: below it a file is not
close in meaning (the evaluator's summary feature starts there), only among the nearest
of a small repository. (On the dev split the 10th file is always closer, so a floor of up
to 0.35 leaves every ranking as it was: RESULTS-eval.md section 15.)"""


def _wanted_files(
    analysis: QueryAnalysis, keep: Callable[[str], bool], languages: Sequence[str]
) -> Callable[[str], bool]:
    """Whether a whole-file ranking lists a file: kept by `keep`, in `languages` (all when
    empty), and a test or documentation only when the question is about them."""

    def wanted(path: str) -> bool:
        language = language_for(path)
        return (
            keep(path)
            and (not languages or language in languages)
            and not analysis.unasked_test(path)
            and (analysis.mentions_docs or not is_documentation(path, language))
        )

    return wanted


class PathFilter:
    """Include/exclude globs with gitignore syntax (`tests/`, `*.md`, `src/**/x.py`)."""

    def __init__(self, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> None:
        self.include = pathspec.GitIgnoreSpec.from_lines(include) if include else None
        self.exclude = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None

    def __call__(self, path: str) -> bool:
        if self.include is not None and not self.include.match_file(path):
            return False
        return not (self.exclude is not None and self.exclude.match_file(path))


@dataclass
class Candidate:
    row: dict[str, Any]
    signals: dict[str, float] = field(default_factory=dict)
    score: float = 0.0

    @property
    def id(self) -> str:
        return str(self.row["id"])


class HybridSearcher(IndexLookups):
    """Searches one index snapshot. Cheap to create; the embedder loads on first use."""

    def __init__(
        self, store: Store, embedder_factory: Callable[[], Embedder] | None = None
    ) -> None:
        self.store = store
        self.root = Path(store.manifest.root)
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        self._searchable: dict[str, bool] = {}
        self._query_vectors: dict[str, list[float]] = {}
        self._cosines: dict[str, FileCosines] = {}
        self._file_vectors: FileVectors | None = None
        self._file_vectors_read = False
        self._lock = threading.Lock()

    @classmethod
    def open(cls, index_dir: Path) -> HybridSearcher:
        """A searcher on the index's last snapshot, embedding queries with the model that
        built it (lexical only when no backend makes that model's vectors)."""
        store = Store.open(index_dir)
        return cls(store, embedder_for_model(store.manifest.model))

    # -- primitives --------------------------------------------------------------------

    def lexical(
        self, tokens: Sequence[str], k: int, where: str | None = None
    ) -> list[tuple[dict[str, Any], float]]:
        if not tokens:
            return []
        query = self.store.table("chunks").search(" ".join(tokens), query_type="fts")
        if where:
            query = query.where(where, prefilter=True)
        if self.held("chunks") is None:
            rows = query.select([*CHUNK_COLUMNS, "_score"]).limit(k).to_arrow().to_pylist()
            return [(r, float(r.pop("_score"))) for r in rows]
        # The chunks are in memory: the query reads only ids and scores.
        hits = query.select(["id", "_score"]).limit(k).to_arrow().to_pylist()
        found = self.chunks_by_id(r["id"] for r in hits)
        return [(found[r["id"]], float(r["_score"])) for r in hits if r["id"] in found]

    @property
    def has_vectors(self) -> bool:
        """Chunk vectors, and a model to embed queries with."""
        return self._has_rows("vectors")

    @property
    def has_file_vectors(self) -> bool:
        """File summary vectors, and a model to embed queries with."""
        return self._has_rows("file_vectors")

    def _has_rows(self, table: str) -> bool:
        if table not in self._searchable:
            self._searchable[table] = (
                self._embedder_factory is not None and self.store.count(table) > 0
            )
        return self._searchable[table]

    def embed_query(self, text: str) -> list[float] | None:
        """The query's vector (cached: the loop asks for the same text every cycle). A
        question of several lines is embedded with its first line too (an issue's title,
        the gist its body elaborates), which takes `TITLE_WEIGHT` of the vector: cosines
        with the blend are the blend of the cosines."""
        if (
            not text.strip()
            or not (self.has_vectors or self.has_file_vectors)
            or self._embedder_factory is None
        ):
            return None
        with self._lock:
            cached = self._query_vectors.get(text)
            if cached is not None:
                return cached
            if self._embedder is None:
                self._embedder = self._embedder_factory()
            embedder = self._embedder
        vector = [float(x) for x in question_vector(embedder, text)]
        with self._lock:
            if len(self._query_vectors) >= 64:
                self._query_vectors.clear()
            self._query_vectors[text] = vector
        return vector

    def clear_query_cache(self) -> None:
        with self._lock:
            self._query_vectors.clear()
            self._cosines.clear()

    def _semantic(
        self,
        text: str,
        k: int,
        tokens: Sequence[str],
        keep: Callable[[str], bool],
        languages: Sequence[str],
        found: dict[str, list[dict[str, Any]]],
    ) -> tuple[list[tuple[str, float]] | None, list[tuple[str, float]]]:
        """The query's nearest chunks ((id, cosine), None without chunk vectors) and its
        nearest files ((path, closeness), `file_dense`); and into `found`, the chunks
        the best files would bring into the pool (`_summary_chunks`). All of it runs
        beside the full-text and named look-ups."""
        vector = self.embed_query(text)
        if vector is None:
            return None, []
        chunks = self.dense(vector, k) if self.has_vectors else None
        cosines = self.question_cosines(text)
        if cosines is None:
            return chunks, []
        files = cosines.nearest(k)
        wanted = [p for p, _ in files[:SUMMARY_FILES] if keep(p)]
        self._summary_chunks(
            wanted, tokens, languages, found, cosines.held.closest_definitions(cosines.sims, wanted)
        )
        return chunks, files

    def file_dense(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """The `k` files closest to `vector`: (path, closeness), exact, where closeness is
        the larger of the file's summary cosine and its closest definition's
        (`FileVectors.closeness`)."""
        return self.file_cosines(vector).nearest(k)

    def question_cosines(self, text: str) -> FileCosines | None:
        """The question's cosines to every file vector (None without file vectors or a
        model to embed it with). Cached: the loop's search and `ask`'s closeness ranking
        ask for the same question's."""
        with self._lock:
            cached = self._cosines.get(text)
        if cached is not None:
            return cached
        vector = self.embed_query(text)
        if vector is None or not self.has_file_vectors:
            return None
        cosines = self.file_cosines(vector)
        with self._lock:
            if len(self._cosines) >= 8:
                self._cosines.clear()
            self._cosines[text] = cosines
        return cosines

    def file_cosines(self, vector: Sequence[float]) -> FileCosines:
        """Every file summary and definition vector's cosine to `vector`. Up to
        `FILE_MATRIX_ROWS` vectors the scan is a matrix product over the snapshot's
        vectors, read once per searcher (a LanceDB scan costs ~10 ms of overhead per
        query on django; this ~1 ms); beyond, LanceDB scans them all."""
        query = np.asarray(vector, dtype=np.float32)
        query /= max(float(np.linalg.norm(query)), 1e-12)
        held = self._file_matrix()
        return held.cosines(query) if held is not None else FileVectors.scan(self.store, query)

    def warm(self) -> None:
        """Read now what the searcher holds: the look-ups' rows and the file vectors
        (django's 15k take ~0.1-0.4 s to read; a searcher reads them on first need
        otherwise)."""
        super().warm()
        if self.has_file_vectors:
            self._file_matrix()

    def _file_matrix(self) -> FileVectors | None:
        """The snapshot's file vectors held in memory, read once (None beyond
        `FILE_MATRIX_ROWS`)."""
        with self._lock:
            if not self._file_vectors_read:
                self._file_vectors_read = True
                self._file_vectors = FileVectors.read(self.store, FILE_MATRIX_ROWS)
            return self._file_vectors

    def dense(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        rows = (
            self.store.table("vectors")
            .search(list(vector), vector_column_name="vector")
            .distance_type("cosine")
            .select(["id", "_distance"])
            .limit(k)
            .to_arrow()
            .to_pylist()
        )
        return [(r["id"], 1.0 - float(r["_distance"])) for r in rows]

    # -- search ------------------------------------------------------------------------

    def files_by_words(
        self,
        analysis: QueryAnalysis,
        *,
        keep: Callable[[str], bool] = lambda p: True,
        languages: Sequence[str] = (),
        limit: int = WORD_FILES,
    ) -> list[tuple[str, dict[str, Any]]]:
        """The files whose chunks match the question's words best taken together: the
        best WORD_FILE_CHUNKS full-text scores of each file among the WORD_FILE_POOL best
        chunks, summed (close to a whole-file BM25). Tests and documentation only when
        the question is about them. (path, its best chunk), best first."""
        where = f"language IN ({quote_list(languages)})" if languages else None
        tokens = file_query(analysis)
        scores: dict[str, list[float]] = {}
        best: dict[str, dict[str, Any]] = {}
        for row, score in self.lexical(tokens, WORD_FILE_POOL, where):
            path = row["path"]
            if not keep(path):
                continue
            if analysis.unasked_test(path):
                continue
            if is_documentation(path, row["language"]) and not analysis.mentions_docs:
                continue
            scores.setdefault(path, []).append(score)
            best.setdefault(path, row)
        total = {p: sum(sorted(v, reverse=True)[:WORD_FILE_CHUNKS]) for p, v in scores.items()}
        ranked = sorted(total, key=lambda p: (-total[p], p))[:limit]
        return [(p, best[p]) for p in ranked]

    def files_by_closeness(
        self,
        analysis: QueryAnalysis,
        *,
        keep: Callable[[str], bool] = lambda p: True,
        languages: Sequence[str] = (),
        limit: int = CLOSE_FILES,
    ) -> list[tuple[str, dict[str, Any]]]:
        """The files closest to the question in meaning (`file_dense`: by their summary
        or a definition), tests and documentation only when the question is about them;
        (path, the chunk of its closest definition, else its first chunk), best first;
        none below CLOSE_MIN, and none without file vectors."""
        cosines = self.question_cosines(analysis.text)
        if cosines is None:
            return []
        wanted = _wanted_files(analysis, keep, languages)
        # The nearest 4 x limit files first, more while too few of them are wanted (or
        # have a chunk to cite: an empty file has none).
        out: list[tuple[str, dict[str, Any]]] = []
        k, seen, total = 4 * limit, 0, len(cosines.held.paths)
        while len(out) < limit:
            nearest = cosines.nearest(k)
            ranked = [p for p, sim in nearest if sim >= CLOSE_MIN]
            fresh = [p for p in ranked[seen:] if wanted(p)]
            seen = len(ranked)
            rows = self._chunks_of_definitions(
                cosines.held.closest_definitions(cosines.sims, fresh)
            )
            rows.update(self.first_chunks(p for p in fresh if p not in rows))
            out += [(p, rows[p]) for p in fresh if p in rows]
            if k >= total or len(ranked) < len(nearest):
                break
            k *= 4
        return out[:limit]

    def files_by_history(
        self,
        analysis: QueryAnalysis,
        *,
        keep: Callable[[str], bool] = lambda p: True,
        languages: Sequence[str] = (),
        limit: int = HISTORY_FILES,
    ) -> list[tuple[str, list[dict[str, Any]]]]:
        """The files that the past commits whose messages match the question best changed
        (`indexer.commits`): the HISTORY_COMMITS best commits by full-text score, each
        adding its score over the square root of its file count to each indexed file it
        changed. Tests and documentation only when the question is about them; (path,
        the commits, best first), best first; none without a history."""
        if (
            not self.store.has_table("commits")
            or not self.store.manifest.history
            or not self.store.count("commits")
        ):
            return []  # no history, or none of its commits qualified (nothing is indexed)
        tokens = file_query(analysis)
        if not tokens:
            return []
        hits = (
            self.store.table("commits")
            .search(" ".join(tokens), query_type="fts")
            .select(["id", "subject", "files", "_score"])
            .limit(HISTORY_COMMITS)
            .to_arrow()
            .to_pylist()
        )
        indexed = self.file_stats()
        wanted = _wanted_files(analysis, lambda p: p in indexed and keep(p), languages)
        total: dict[str, float] = {}
        commits: dict[str, list[dict[str, Any]]] = {}
        for hit in hits:
            code = [
                p
                for p in hit["files"]
                if not is_test_path(p)
                and not is_benchmark_path(p)
                and not is_documentation(p, language_for(p))
            ]
            share = float(hit["_score"]) / max(len(code), 1) ** 0.5
            for path in hit["files"]:
                if wanted(path):
                    total[path] = total.get(path, 0.0) + share
                    commits.setdefault(path, []).append(
                        {"id": hit["id"], "subject": hit["subject"]}
                    )
        ranked = sorted(total, key=lambda p: (-total[p], p))[:limit]
        return [(p, commits[p]) for p in ranked]

    def candidates(
        self,
        analysis: QueryAnalysis,
        *,
        k: int = 60,
        keep: Callable[[str], bool] = lambda p: True,
        languages: Sequence[str] = (),
        extra_tokens: Sequence[str] = (),
        memo: dict[str, Any] | None = None,
    ) -> dict[str, Candidate]:
        """Collect and score candidate chunks for a query.

        `memo` keeps what depends on the task text alone (definitions of the names it
        mentions, the chunks of the files it names, the nearest chunks and file summaries,
        the best chunk of a file found by its summary) across calls for one task: the loop
        passes the same dict every cycle."""
        memo = {} if memo is None else memo
        where = f"language IN ({quote_list(languages)})" if languages else None
        cands: dict[str, Candidate] = {}

        def add(row: dict[str, Any]) -> Candidate | None:
            if not keep(row["path"]):
                return None
            if languages and row["language"] not in languages:
                return None
            cand = cands.get(row["id"])
            if cand is None:
                cand = cands[row["id"]] = Candidate(row)
            return cand

        base = base_tokens(analysis)
        tokens = list(dict.fromkeys([*base, *(t for t in extra_tokens if t not in QUERY_NOISE)]))
        tokens += title_tokens(analysis)
        # Embedding the query and the vector scan overlap the full-text search (both
        # release the GIL).
        if "dense" not in memo:
            memo["dense"] = _POOL.submit(
                self._semantic,
                analysis.text,
                k,
                base,
                keep,
                languages,
                memo.setdefault("summary", {}),
            )
        lexical = self.lexical(tokens, k, where)
        best = max((s for _, s in lexical), default=0.0) or 1.0
        for row, score in lexical:
            if (cand := add(row)) is not None:
                cand.signals["lexical"] = round(score / best, 4)

        # The named definitions and files do not depend on the vector: look them up
        # while the query is embedded.
        if "symbol" not in memo:
            memo["symbol"] = self._symbol_rows(analysis)
        if "path" not in memo:
            memo["path"] = self._path_rows(analysis, base)

        dense, file_dense = memo["dense"].result()
        if dense is not None:
            best = max((s for _, s in dense), default=0.0) or 1.0
            rows = self.chunks_by_id(i for i, _ in dense if i not in cands)
            for cid, sim in dense:
                found = cands[cid].row if cid in cands else rows.get(cid)
                if found is not None and (cand := add(found)) is not None:
                    cand.signals["dense"] = round(max(sim, 0.0) / best, 4)
                    cand.signals["cosine"] = round(max(sim, 0.0), 4)

        for row, strength in memo["symbol"]:
            if (cand := add(row)) is not None:
                cand.signals["symbol"] = max(cand.signals.get("symbol", 0.0), strength)
        rows, raised = memo["path"]
        for row in rows:
            if (cand := add(row)) is not None:
                cand.signals["path"] = 1.0
        self._summary_signal(file_dense, cands, add, keep, memo["summary"])
        if raised:
            for cand in cands.values():
                if cand.row["path"] == raised:
                    cand.signals["raised"] = 1.0
        lex_w = analysis.lexical_weight if dense is not None else 1.0
        if file_dense:
            # The file summaries carry the semantic evidence better than chunk vectors
            # do (RESULTS-eval.md section 8): chunks' share stays small beside them.
            lex_w = max(lex_w, 1.0 - CHUNK_DENSE_WITH_SUMMARIES)
        wants_docs = analysis.mentions_docs
        for cand in cands.values():
            s = cand.signals
            score = (
                lex_w * s.get("lexical", 0.0)
                + (1 - lex_w) * s.get("dense", 0.0)
                + SYMBOL_WEIGHT * s.get("symbol", 0.0)
                + PATH_WEIGHT * s.get("path", 0.0)
                + SUMMARY_WEIGHT * s.get("summary", 0.0)
            )
            if analysis.unasked_test(cand.row["path"]):
                score *= TEST_FACTOR
            if not wants_docs and is_documentation(cand.row["path"], cand.row["language"]):
                score *= DOC_FACTOR
            cand.score = round(score, 4)
        return cands

    def _symbol_rows(self, analysis: QueryAnalysis) -> list[tuple[dict[str, Any], float]]:
        """The chunks defining the names the task mentions, with the match's strength: 1
        when a qualified name (`Cart.total`) matches too, else 0.8."""
        wanted: dict[str, str] = {}
        for ident in analysis.identifiers:
            parts = ident.split(".")
            if len(parts[-1]) < 3:
                continue  # one- and two-letter names match too much to be evidence
            if len(parts) == 1 and parts[0].startswith("__"):
                continue  # `__eq__` alone: every class has one
            wanted.setdefault(parts[-1].lower(), ".".join(parts[-2:]) if len(parts) > 1 else "")
        symbols = self.symbols_named(wanted)
        rows = self.definition_chunks(symbols)
        # A name defined in many places (`clean`, `simplify`) says little about where:
        # the strength falls with the number of definitions beyond a few.
        strengths = [
            1.0
            if wanted[s["name_lower"]] and s["qualified_name"].endswith(wanted[s["name_lower"]])
            else 0.8
            for s in symbols
        ]
        defined = Counter((s["name_lower"], st) for s, st in zip(symbols, strengths, strict=True))
        out = []
        for sym, strength in zip(symbols, strengths, strict=True):
            row = rows.get((sym["path"], sym["start_line"]))
            if row is not None:
                many = defined[(sym["name_lower"], strength)]
                out.append((row, round(strength * min(1.0, FEW_DEFINITIONS / many), 4)))
        return out

    def _summary_signal(
        self,
        file_dense: list[tuple[str, float]],
        cands: dict[str, Candidate],
        add: Callable[[dict[str, Any]], Candidate | None],
        keep: Callable[[str], bool],
        found: dict[str, list[dict[str, Any]]],
    ) -> None:
        """Mark every candidate with its file's closeness; the best files by it that have
        no candidate yet bring in their chunks from `found` (their best chunk for the
        query's words and their closest definition's, fetched by `_summary_chunks` beside
        the embedding; the loop's later cycles only exclude more files, so they need no
        other)."""
        if not file_dense:
            return
        best = max((sim for _, sim in file_dense), default=0.0) or 1.0
        by_path = {p: sim for p, sim in file_dense}
        have = {c.row["path"] for c in cands.values()}
        absent = [p for p, _ in file_dense[:SUMMARY_FILES] if p not in have and keep(p)]
        for path in absent:
            for row in found.get(path, ()):
                add(row)
        for cand in cands.values():
            sim = by_path.get(cand.row["path"])
            if sim is not None:
                cand.signals["summary"] = round(max(sim, 0.0) / best, 4)
                cand.signals["file_cosine"] = round(max(sim, 0.0), 4)

    def _summary_chunks(
        self,
        paths: Sequence[str],
        tokens: Sequence[str],
        languages: Sequence[str],
        found: dict[str, list[dict[str, Any]]],
        closest: dict[str, tuple[str, int]] | None = None,
    ) -> None:
        """Into `found`, for each of `paths` it lacks: the file's best chunk for the
        query's words, else its first chunk; and the chunk of its definition `closest`
        names (qualified name, start line), when that is another."""
        wanted = [p for p in paths if p not in found]
        if not wanted:
            return
        where = f"path IN ({quote_list(wanted)})"
        if languages:
            where += f" AND language IN ({quote_list(languages)})"
        best: dict[str, dict[str, Any]] = {}
        for row, _ in self.lexical(tokens, 4 * len(wanted), where):
            best.setdefault(row["path"], row)
        best.update(self.first_chunks(p for p in wanted if p not in best))
        definition = self._chunks_of_definitions(
            {p: named for p, named in (closest or {}).items() if p in wanted}
        )
        for path in wanted:
            rows = [r for r in (best.get(path), definition.get(path)) if r is not None]
            if len(rows) == 2 and rows[0]["id"] == rows[1]["id"]:
                rows.pop()
            if rows:
                found[path] = rows

    def _chunks_of_definitions(
        self, named: dict[str, tuple[str, int]]
    ) -> dict[str, dict[str, Any]]:
        """By path, the chunk that shows the definition `named` gives for it (qualified
        name, start line: `FileVectors.closest_definitions`)."""
        defined = self.definition_chunks(
            {"path": p, "qualified_name": name, "start_line": line}
            for p, (name, line) in named.items()
        )
        return {path: row for (path, _), row in defined.items()}

    def _path_rows(
        self, analysis: QueryAnalysis, tokens: Sequence[str]
    ) -> tuple[list[dict[str, Any]], str | None]:
        """Chunks of the files the task names (by path, or as a dotted module name; a path
        naming more than FEW_NAMED files names none): the best few of each by full-text
        score (its first when no word matches), and those holding a stack-trace frame's
        line.
        Also the file of the innermost frame that names one file of the repository: where
        the error was raised."""
        by_name = {
            p: found
            for p, found in self.files_named([*analysis.paths, *analysis.modules]).items()
            if len(found) <= FEW_NAMED
        }
        named = sorted({f for found in by_name.values() for f in found})
        if not named:
            return [], None
        best: dict[str, list[dict[str, Any]]] = {}
        for row, _ in self.lexical(
            tokens, 4 * NAMED_FILE_CHUNKS * len(named), f"path IN ({quote_list(named)})"
        ):
            got = best.setdefault(row["path"], [])
            if len(got) < NAMED_FILE_CHUNKS:
                got.append(row)
        frames = analysis.frames[-MAX_FRAMES:]
        spots = [
            (path, line) for frame_path, line, _ in frames for path in by_name.get(frame_path, ())
        ]
        innermost = [by_name.get(frame_path, []) for frame_path, _, _ in reversed(frames)]
        raised = next((found[0] for found in innermost if len(found) == 1), None)
        unmatched = [p for p in named if p not in best]
        # One query for the first chunks of the files no word matched and the frames'.
        spans = self._spans_of([*unmatched, *(p for p, _ in spots)])
        chosen = self._rows_of(
            {
                **{("first", p): r for p, r in self._first_spans(unmatched, spans).items()},
                **{("frame", *spot): r for spot, r in self._spans_at(spots, spans).items()},
            }
        )
        return ([*(r for got in best.values() for r in got), *chosen.values()], raised)

    def search(self, text: str, options: SearchOptions | None = None) -> list[Hit]:
        options = (options or SearchOptions()).checked(text)
        analysis = analyze(text)
        keep = PathFilter(options.include, options.exclude)
        k = max(60, options.limit * 4)
        cands = self.candidates(analysis, k=k, keep=keep, languages=options.languages)
        ranked = sorted(cands.values(), key=lambda c: (-c.score, c.id))
        hits = to_hits(self, ranked, options, text)
        outside = self.outside_paths(h.path for h in hits)
        hits = [h for h in hits if h.path not in outside]
        stale = self.stale_paths(h.path for h in hits)
        return [h.model_copy(update={"stale": h.path in stale}) for h in hits]


_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="dowse-search")
