"""Whole-file rankings of one index snapshot for a question: by its words taken together
(`files_by_words`, close to a whole-file BM25), by closeness in meaning (`files_by_closeness`,
`file_dense`) and by the past commits whose messages match it (`files_by_history`).

`ask` fuses them with the evaluated ranking (retrieval/fusion.py `FileFusion`). Each lists
a test or documentation file only when the question is about them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dowse.indexer.store import where_in
from dowse.languages import is_benchmark_path, is_documentation, is_test_path, language_for
from dowse.retrieval.lookups import IndexLookups
from dowse.retrieval.query import QueryAnalysis, file_query
from dowse.retrieval.questions import QuestionVectors

__all__ = [
    "FileRankingConfig",
    "file_dense",
    "files_by_closeness",
    "files_by_history",
    "files_by_words",
]


class FileRankingConfig(BaseModel):
    """How much each whole-file ranking reads, and how many files it returns."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    word_pool: int = Field(
        default=300, gt=0, description="chunks the whole-file word ranking reads"
    )
    word_chunks: int = Field(
        default=3, gt=0, description="each file's best chunk scores summed by the word ranking"
    )
    word_files: int = Field(default=10, gt=0, description="files the word ranking returns")
    close_files: int = Field(default=10, gt=0, description="files the closeness ranking returns")
    close_min: float = Field(
        default=0.2,
        ge=-1,
        le=1,
        description=(
            "the least closeness of a file the closeness ranking returns: below it a file is "
            "not close in meaning (the evaluator's summary feature starts there), only among "
            "the nearest of a small repository (on the dev split the 10th file is always "
            "closer, so a floor of up to 0.35 leaves every ranking as it was: "
            "RESULTS-eval.md section 15)"
        ),
    )
    history_commits: int = Field(
        default=50,
        gt=0,
        description="commits the history ranking reads: those whose messages match best",
    )
    history_files: int = Field(default=10, gt=0, description="files the history ranking returns")


DEFAULT = FileRankingConfig()


def wanted_files(
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


def files_by_words(
    lookups: IndexLookups,
    analysis: QueryAnalysis,
    *,
    keep: Callable[[str], bool] = lambda p: True,
    languages: Sequence[str] = (),
    limit: int | None = None,
    config: FileRankingConfig = DEFAULT,
) -> list[tuple[str, dict[str, Any]]]:
    """The files whose chunks match the question's words best taken together: the
    best `word_chunks` full-text scores of each file among the `word_pool` best
    chunks, summed (close to a whole-file BM25). Tests and documentation only when
    the question is about them. (path, its best chunk), best first; `limit` files
    (`word_files` when None)."""
    limit = config.word_files if limit is None else limit
    where = where_in("language", languages) if languages else None
    tokens = file_query(analysis)
    scores: dict[str, list[float]] = {}
    best: dict[str, dict[str, Any]] = {}
    for row, score in lookups.lexical(tokens, config.word_pool, where):
        path = row["path"]
        if not keep(path):
            continue
        if analysis.unasked_test(path):
            continue
        if is_documentation(path, row["language"]) and not analysis.mentions_docs:
            continue
        scores.setdefault(path, []).append(score)
        best.setdefault(path, row)
    total = {p: sum(sorted(v, reverse=True)[: config.word_chunks]) for p, v in scores.items()}
    ranked = sorted(total, key=lambda p: (-total[p], p))[:limit]
    return [(p, best[p]) for p in ranked]


def file_dense(
    questions: QuestionVectors, vector: Sequence[float], k: int
) -> list[tuple[str, float]]:
    """The `k` files closest to `vector`: (path, closeness), exact, where closeness is
    the larger of the file's summary cosine and its closest definition's
    (`FileVectors.closeness`)."""
    return questions.file_cosines(vector).nearest(k)


def files_by_closeness(
    lookups: IndexLookups,
    questions: QuestionVectors,
    analysis: QueryAnalysis,
    *,
    keep: Callable[[str], bool] = lambda p: True,
    languages: Sequence[str] = (),
    limit: int | None = None,
    config: FileRankingConfig = DEFAULT,
) -> list[tuple[str, dict[str, Any]]]:
    """The files closest to the question in meaning (`file_dense`: by their summary
    or a definition), tests and documentation only when the question is about them;
    (path, the chunk of its closest definition, else its first chunk), best first;
    none below `close_min`, and none without file vectors; `limit` files
    (`close_files` when None)."""
    limit = config.close_files if limit is None else limit
    cosines = questions.question_cosines(analysis.text)
    if cosines is None:
        return []
    wanted = wanted_files(analysis, keep, languages)
    # The nearest 4 x limit files first, more while too few of them are wanted (or
    # have a chunk to cite: an empty file has none).
    out: list[tuple[str, dict[str, Any]]] = []
    k, seen, total = 4 * limit, 0, len(cosines.held.paths)
    while len(out) < limit:
        nearest = cosines.nearest(k)
        ranked = [p for p, sim in nearest if sim >= config.close_min]
        fresh = [p for p in ranked[seen:] if wanted(p)]
        seen = len(ranked)
        rows = lookups.chunks_of_definitions(cosines.held.closest_definitions(cosines.sims, fresh))
        rows.update(lookups.first_chunks(p for p in fresh if p not in rows))
        out += [(p, rows[p]) for p in fresh if p in rows]
        if k >= total or len(ranked) < len(nearest):
            break
        k *= 4
    return out[:limit]


def files_by_history(
    lookups: IndexLookups,
    analysis: QueryAnalysis,
    *,
    keep: Callable[[str], bool] = lambda p: True,
    languages: Sequence[str] = (),
    limit: int | None = None,
    config: FileRankingConfig = DEFAULT,
) -> list[tuple[str, list[dict[str, Any]]]]:
    """The files that the past commits whose messages match the question best changed
    (`indexer.commits`): the `history_commits` best commits by full-text score, each
    adding its score over the square root of its file count to each indexed file it
    changed. Tests and documentation only when the question is about them; (path,
    the commits, best first), best first; none without a history; `limit` files
    (`history_files` when None)."""
    limit = config.history_files if limit is None else limit
    store = lookups.store
    if not store.has_table("commits") or not store.manifest.history or not store.count("commits"):
        return []  # no history, or none of its commits qualified (nothing is indexed)
    tokens = file_query(analysis)
    if not tokens:
        return []
    hits = store.full_text(
        "commits", " ".join(tokens), ["id", "subject", "files", "_score"], config.history_commits
    )
    indexed = lookups.file_stats()
    wanted = wanted_files(analysis, lambda p: p in indexed and keep(p), languages)
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
                commits.setdefault(path, []).append({"id": hit["id"], "subject": hit["subject"]})
    ranked = sorted(total, key=lambda p: (-total[p], p))[:limit]
    return [(p, commits[p]) for p in ranked]
