"""The one hybrid score: how a candidate chunk's evidence (full-text, vectors, named
symbols and paths, its file's closeness) adds up, and how a file's rankings add up in
`ask`. Plain numbers in, a number out: nothing here reads an index.

A chunk's signals are each in 0..1 (see retrieval/pool.py): `fuse` weighs lexical
against dense by the query's lexical share (`lexical_share`) and adds the symbol, path
and summary evidence on top; a test or documentation the question is not about ranks
lower. A file's place in `ask` is the sum of reciprocal ranks (`file_place`).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FileFusion", "FusionWeights", "file_place", "fuse", "lexical_share"]


class FusionWeights(BaseModel):
    """The weights of a chunk's signals in its fused score."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    symbol: float = Field(
        default=0.5, ge=0, description="a definition the query names (1.0 qualified, 0.8 bare)"
    )
    path: float = Field(default=0.25, ge=0, description="the chunk's file is named by the query")
    literal: float = Field(
        default=0.5,
        ge=0,
        description=(
            "the chunk holds a message the query quotes, which few files hold (1 over their "
            "number), or defines or reads a flag it names: as strong as a definition the "
            "query names"
        ),
    )
    summary: float = Field(
        default=1.0,
        ge=0,
        description=(
            "the chunk's file's closeness to the question (its summary or closest "
            "definition), divided by the best"
        ),
    )
    chunk_dense_with_summaries: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description=(
            "the most chunk vectors weigh against full-text where file summaries are "
            "searched too: the summaries carry the semantic evidence better than chunk "
            "vectors do (RESULTS-eval.md section 8)"
        ),
    )
    test_factor: float = Field(
        default=0.8, gt=0, le=1, description="test files rank a little lower unless asked about"
    )
    doc_factor: float = Field(
        default=0.7,
        gt=0,
        le=1,
        description=(
            "documentation (text, example or tutorial scripts) ranks lower unless the query "
            "is about docs: a question about behaviour is answered by the code that "
            "implements it, and prose and examples repeat the words of every question"
        ),
    )


def lexical_share(
    query_weight: float,
    *,
    chunk_vectors: bool,
    file_vectors: bool,
    weights: FusionWeights = FusionWeights(),  # noqa: B008 - frozen
) -> float:
    """Full-text's share against chunk vectors: the query's own (`QueryAnalysis.
    lexical_weight`: identifier, path and traceback text leans lexical, plain language
    dense), all of it without chunk vectors, at least 1 - `chunk_dense_with_summaries`
    where file vectors were searched too."""
    share = query_weight if chunk_vectors else 1.0
    if file_vectors:
        share = max(share, 1.0 - weights.chunk_dense_with_summaries)
    return share


def fuse(
    signals: Mapping[str, float],
    *,
    lexical_weight: float,
    unasked_test: bool = False,
    unasked_doc: bool = False,
    weights: FusionWeights = FusionWeights(),  # noqa: B008 - frozen
) -> float:
    """A chunk's fused score from its signals (`lexical`, `dense`, `symbol`, `path`,
    `literal`, `summary`; absent ones count 0), `lexical_weight` the lexical share
    (`lexical_share`), lowered for a test or a document the question is not about;
    rounded to 4 places."""
    score = (
        lexical_weight * signals.get("lexical", 0.0)
        + (1 - lexical_weight) * signals.get("dense", 0.0)
        + weights.symbol * signals.get("symbol", 0.0)
        + weights.path * signals.get("path", 0.0)
        + weights.literal * signals.get("literal", 0.0)
        + weights.summary * signals.get("summary", 0.0)
    )
    if unasked_test:
        score *= weights.test_factor
    if unasked_doc:
        score *= weights.doc_factor
    return round(score, 4)


class FileFusion(BaseModel):
    """How `ask` ranks files: the evaluated ranking fused by reciprocal rank with the
    whole-file rankings, and how an item's relevance and retrieval score make its file's
    evaluated rank."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    relevance: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description=(
            "the evaluator's relevance's share of an item's rank score, beside its fused "
            "retrieval score: the relevance says what a chunk is, the score how strongly "
            "the query points at it"
        ),
    )
    part_bonus: float = Field(
        default=0.05,
        ge=0,
        description=(
            "what each relevant part of a file beyond its first adds to the file's "
            "relevance and rank score, so that a file with several relevant parts ranks a "
            "little above one with a single part (set with the first retrieval loop, not "
            "tuned since)"
        ),
    )
    part_bonus_cap: float = Field(
        default=0.1, ge=0, description="the most a file's further parts add together"
    )
    words: float = Field(
        default=0.2,
        ge=0,
        description=(
            "the whole-file word ranking's weight (`files_by_words`, close to a whole-file "
            "BM25) beside the evaluated ranking (RESULTS-eval.md section 11)"
        ),
    )
    closeness: float = Field(
        default=0.3,
        ge=0,
        description=(
            "the ranking by closeness in meaning (`files_by_closeness`: a file's summary or "
            "its closest definition; RESULTS-eval.md section 15: with every definition "
            "embedded it ranks the fixed file in its top 10 for 79 % of the dev tasks)"
        ),
    )
    history: float = Field(
        default=0.5,
        ge=0,
        description=(
            "the ranking by the past commits whose messages match the question "
            "(`files_by_history`, RESULTS-eval.md section 17); it only reorders files the "
            "other rankings found: a commit message is a hint about a file, not evidence "
            "of what its code does"
        ),
    )
    module_root: int = Field(
        default=5,
        ge=0,
        description=(
            "the nearest listed module root of a Rust first file (the file declaring its "
            "`mod`) is moved to this place when listed below it "
            '(`relatives.with_module_root`; RESULTS-multi.md, "module roots and sibling '
            'classes"); 0: off'
        ),
    )
    siblings: int = Field(
        default=5,
        ge=0,
        description=(
            "when two of this many first files define classes extending the same "
            "superclass of the index, the listed files whose classes extend it too follow "
            'the last of them (`relatives.with_siblings`; RESULTS-multi.md, "module roots '
            'and sibling classes"); below 2: off'
        ),
    )
    search_first: float | None = Field(
        default=0.0,
        ge=-1,
        le=1,
        description=(
            "the search's first file (`dowse search --grain file`) stays first unless the "
            "fused ranking's first file's relevance is at least its relevance plus this "
            "margin (0: at least as relevant); None: the fused ranking alone. The evaluator "
            "and the weights above were fitted on the dev split, and outside it their "
            "reordering of the first file lost to the search it started from; the margin "
            "was chosen by 5-fold cross-validation (RESULTS-eval.md section 18)"
        ),
    )


def file_place(
    evaluated_rank: int | None,
    words_rank: int | None,
    closeness_rank: int | None,
    history_rank: int | None,
    fusion: FileFusion = FileFusion(),  # noqa: B008 - frozen
) -> float:
    """A file's place in `ask`'s ranking (larger first): 1/(1 + its evaluated rank) +
    words/(1 + its word rank) + closeness/(1 + its closeness rank) + history/(1 + its
    history rank), each term only where the file is ranked (ranks from 0)."""
    place = 1 / (1 + evaluated_rank) if evaluated_rank is not None else 0.0
    return place + sum(
        weight / (1 + rank)
        for weight, rank in (
            (fusion.words, words_rank),
            (fusion.closeness, closeness_rank),
            (fusion.history, history_rank),
        )
        if rank is not None
    )
