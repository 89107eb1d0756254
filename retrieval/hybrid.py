"""Hybrid search: full-text, dense, symbol-name and path evidence, fused by query kind.

`HybridSearcher` is the façade over one index snapshot's parts, each with one job:
`.lookups` (retrieval/lookups.py: chunks, definitions and files by key, the full-text
and vector searches), `.questions` (retrieval/questions.py: the question-vector cache
and the cosines to the file vectors), the candidate pool (retrieval/pool.py: which
chunks each kind of evidence brings in, with their signals) and the one hybrid score
(retrieval/fusion.py `fuse`). The whole-file rankings are functions of the parts
(retrieval/file_ranking.py). Everything is deterministic for a given index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pathspec

from dowse.indexer.embed import Embedder, embedder_for_model
from dowse.indexer.store import Store
from dowse.retrieval.file_ranking import FileRankingConfig
from dowse.retrieval.fusion import FusionWeights
from dowse.retrieval.grains import to_hits
from dowse.retrieval.lookups import IndexLookups
from dowse.retrieval.pool import Candidate, PoolLimits, gather, in_modules, rust_modules
from dowse.retrieval.query import QueryAnalysis, analyze, rust_paths, with_rust_paths
from dowse.retrieval.questions import QuestionVectors
from dowse.retrieval.records import Hit, SearchOptions

__all__ = ["HybridSearcher", "PathFilter"]


class PathFilter:
    """Include/exclude globs with gitignore syntax (`tests/`, `*.md`, `src/**/x.py`)."""

    def __init__(self, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> None:
        self.include = pathspec.GitIgnoreSpec.from_lines(include) if include else None
        self.exclude = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None

    def __call__(self, path: str) -> bool:
        if self.include is not None and not self.include.match_file(path):
            return False
        return not (self.exclude is not None and self.exclude.match_file(path))


class HybridSearcher:
    """Searches one index snapshot. Cheap to create; the embedder loads on first use.

    The configuration (`weights`, `limits`, `file_ranking`) is fixed for the searcher's
    life; `lookups` and `questions` may be given (a test's, with other memory limits)."""

    def __init__(
        self,
        store: Store,
        embedder_factory: Callable[[], Embedder] | None = None,
        *,
        weights: FusionWeights | None = None,
        limits: PoolLimits | None = None,
        file_ranking: FileRankingConfig | None = None,
        lookups: IndexLookups | None = None,
        questions: QuestionVectors | None = None,
    ) -> None:
        self.store = store
        self.root = Path(store.manifest.root)
        self.lookups = lookups or IndexLookups(store)
        self.questions = questions or QuestionVectors(store, embedder_factory)
        self.weights = weights or FusionWeights()
        self.limits = limits or PoolLimits()
        self.file_ranking = file_ranking or FileRankingConfig()

    @classmethod
    def open(cls, index_dir: Path) -> HybridSearcher:
        """A searcher on the index's last snapshot, embedding queries with the model that
        built it (lexical only when no backend makes that model's vectors)."""
        store = Store.open(index_dir)
        return cls(store, embedder_for_model(store.manifest.model))

    def warm(self) -> None:
        """Read now what the searcher holds: the look-ups' rows and the file vectors
        (a searcher reads them on first need otherwise)."""
        self.lookups.warm()
        self.questions.warm()

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
        """The scored candidate chunks for a query (`pool.gather`, with this searcher's
        limits and weights); `memo` keeps the work that depends on the task text alone
        across the loop's cycles."""
        return gather(
            self.lookups,
            self.questions,
            analysis,
            k=k,
            keep=keep,
            languages=languages,
            extra_tokens=extra_tokens,
            memo=memo,
            limits=self.limits,
            weights=self.weights,
        )

    def analyze(self, text: str) -> QueryAnalysis:
        """`text`'s analysis for this index: with the language most of its code is in
        (`QueryAnalysis.main_language`, which tells a support script from the code) and
        the files that are test code by their module declaration (`test_modules`); in a
        Rust index, the items its Rust paths name (`with_rust_paths`)."""
        analysis = analyze(text)
        analysis.main_language = self.lookups.main_language()
        analysis.test_modules = self.lookups.test_modules()
        if analysis.main_language == "rust":
            with_rust_paths(analysis, self._rust_paths_defined(analysis.text))
        return analysis

    def _rust_paths_defined(self, text: str) -> list[tuple[str, tuple[str, ...]]]:
        """The Rust paths of `text` (`rust_paths`) whose item the index defines in the
        path's modules, or anywhere for a path without modules (`Interest::ERROR`): a
        path into another crate (`regex::Regex::new`, `mio::Interest`, `Option::None`)
        names none of the project's code, whatever the project calls the same. A path
        to a module (`grep_regex::literal`, a file `literal.rs` of that crate) names no
        definition either, though its name may be a function's or a field's."""
        paths = rust_paths(text)
        if not paths:
            return []
        rows = self.lookups.definitions_of({name.split(".")[0] for name, _ in paths})
        # The files of the modules a path may end in (its item written in snake_case).
        ends = {(name,) for name, _ in paths if "." not in name}
        files = [
            {"path": p, "qualified_name": ""}
            for p in self.lookups.file_stats()
            if p.endswith(".rs") and rust_modules(p)[-1:] in ends
        ]

        def module(name: str, modules: tuple[str, ...]) -> bool:
            return "." not in name and any(
                rust_modules(f["path"])[-1:] == (name,)
                and (not modules or in_modules(f, [modules]))
                for f in files
            )

        return [
            (name, modules)
            for name, modules in paths
            if any(
                r["name"] == name.split(".")[0] and (not modules or in_modules(r, [modules]))
                for r in rows
            )
            and not module(name, modules)
        ]

    def search(self, text: str, options: SearchOptions | None = None) -> list[Hit]:
        options = (options or SearchOptions()).checked(text)
        analysis = self.analyze(text)
        keep = PathFilter(options.include, options.exclude)
        k = max(60, options.limit * 4)
        cands = self.candidates(analysis, k=k, keep=keep, languages=options.languages)
        ranked = sorted(cands.values(), key=lambda c: (-c.score, c.id))
        hits = to_hits(self.lookups, ranked, options, text)
        outside = self.lookups.outside_paths(h.path for h in hits)
        hits = [h for h in hits if h.path not in outside]
        stale = self.lookups.stale_paths(h.path for h in hits)
        return [h.model_copy(update={"stale": h.path in stale}) for h in hits]
