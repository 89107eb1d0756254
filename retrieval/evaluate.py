"""EVALUATE: score each candidate's relevance to the task, with a reason and its gaps.

The offline evaluator is deterministic. Its relevance combines the fused retrieval score,
how much of the task's vocabulary the chunk covers, whether it defines a name the task
mentions, whether the task names its file, and whether it is a test the task did not ask
for. The bands follow the rubric:

    0.8-1.0  directly implements the target      0.5-0.7  related patterns or types
    0.2-0.4  indirectly related                   < 0.2   irrelevant (excluded)

`missing_context` lists names the chunk calls or uses that are defined elsewhere in the
index and not yet in the context: the gaps REFINE looks up next.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from indexer.languages import is_test_path
from indexer.tokens import stem, tokenize
from retrieval.hybrid import Candidate
from retrieval.query import QueryAnalysis

__all__ = ["CALL", "Evaluation", "Evaluator", "Features", "OfflineEvaluator", "defined_in"]

CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_BUILTIN_CALLS = frozenset("""
print len range str int float bool list dict set tuple isinstance issubclass super type
getattr setattr hasattr sorted reversed enumerate zip map filter min max sum any all open
repr format iter next hash id abs round object callable vars dir
""".split())


class Evaluation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    relevance: float = Field(ge=0, le=1)
    reason: str
    missing_context: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class Features:
    """What the offline evaluator knows about one candidate, each in 0..1 or a flag."""

    coverage: float  # share of the task's names (counted twice) and terms it contains
    symbol: float  # it defines a name the task mentions (1.0 qualified, 0.8 bare)
    path: float  # it lies in a file the task names
    closeness: float  # semantic closeness: cosine 0.25 -> 0, 0.70 -> 1
    rank_prior: float  # 1 at the top of the retrieval ranking, falling with rank
    gap: bool  # looked up as the definition of a name relevant code uses
    test: bool  # a test file, and the task is not about tests
    id_hit: list[str] = field(default_factory=list)
    term_hit: list[str] = field(default_factory=list)
    terms: int = 0


class Evaluator(Protocol):
    def evaluate(self, analysis: QueryAnalysis, candidates: Sequence[Candidate],
                 known_symbols: Collection[str], in_context: Collection[str]
                 ) -> list[Evaluation]:
        """One Evaluation per candidate, in order."""
        ...


class OfflineEvaluator:
    """Deterministic scoring from absolute evidence, so a weak best match stays weak.

    relevance = 0.45 coverage of the task's names and terms (identifiers count double)
              + 0.40 defines a name the task mentions (0.8 bare name, 1.0 qualified)
              + 0.25 lies in a file the task names
              + 0.30 semantic closeness (cosine 0.25 -> 0, 0.70 -> 1)
              + 0.10 retrieval rank prior (1 at the top, falling with rank)
    and at least 0.8 (0.85 when qualified) + 0.1 coverage for a chunk that defines a name
    the task mentions; clamped to 0..1; tests count 0.6 of that unless the task is about
    tests. A definition looked up for a gap (a name a relevant chunk uses) is at least
    related: 0.5 + 0.2 coverage.
    """

    def evaluate(self, analysis: QueryAnalysis, candidates: Sequence[Candidate],
                 known_symbols: Collection[str], in_context: Collection[str]
                 ) -> list[Evaluation]:
        return [self._one(c, f, known_symbols, in_context)
                for c, f in zip(candidates, self.features(analysis, candidates), strict=True)]

    def features(self, analysis: QueryAnalysis, candidates: Sequence[Candidate]
                 ) -> list[Features]:
        """The evidence behind each candidate's relevance (also what calibration fits)."""
        if not candidates:
            return []
        wants_tests = analysis.mentions_tests
        idents = {i.split(".")[-1].lower() for i in analysis.identifiers}
        # Sub-words of a named identifier are not separate terms: the identifier counts.
        parts = {t for i in analysis.identifiers for t in tokenize(i)}
        terms = set(analysis.terms) - idents - parts
        order = sorted(range(len(candidates)), key=lambda i: -candidates[i].score)
        rank = {i: r for r, i in enumerate(order)}
        out = []
        for i, cand in enumerate(candidates):
            path = cand.row["path"]
            tokens = set(tokenize(f"{path} {cand.row['symbol'] or ''} {cand.row['text']}"))
            stems = {stem(t) for t in tokens}
            id_hit = sorted(x for x in idents if x in tokens)
            term_hit = sorted(t for t in terms if t in tokens or stem(t) in stems)
            wanted = 2 * len(idents) + len(terms)
            s = cand.signals
            out.append(Features(
                coverage=(2 * len(id_hit) + len(term_hit)) / wanted if wanted else 0.0,
                symbol=s.get("symbol", 0.0), path=s.get("path", 0.0),
                closeness=min(max((s.get("cosine", 0.0) - 0.25) / 0.45, 0.0), 1.0),
                rank_prior=1 / (1 + rank[i] / 3), gap="gap" in s,
                test=is_test_path(path) and not wants_tests,
                id_hit=id_hit, term_hit=term_hit, terms=len(terms)))
        return out

    def _one(self, cand: Candidate, f: Features, known_symbols: Collection[str],
             in_context: Collection[str]) -> Evaluation:
        relevance = (0.45 * f.coverage + 0.40 * f.symbol + 0.25 * f.path
                     + 0.30 * f.closeness + 0.10 * f.rank_prior)
        if f.symbol:
            # Defining a name the task mentions is implementing the target itself.
            relevance = max(relevance, 0.6 + 0.25 * f.symbol + 0.1 * f.coverage)
        if f.gap:
            relevance = max(relevance, 0.5 + 0.2 * f.coverage)
        if f.test:
            relevance *= 0.6
        relevance = round(min(max(relevance, 0.0), 1.0), 3)

        reasons: list[str] = []
        if f.symbol:
            reasons.append("defines a name the task mentions")
        if f.gap:
            reasons.append("defines a name relevant code uses")
        if f.path:
            reasons.append("in a file the task names")
        if f.id_hit:
            reasons.append("uses " + ", ".join(f"`{i}`" for i in f.id_hit[:4]))
        if f.term_hit:
            reasons.append(f"covers {len(f.term_hit)}/{f.terms} task terms")
        if f.closeness >= 0.6:
            reasons.append("close in meaning")
        if f.test:
            reasons.append("a test")
        if not reasons:
            reasons.append("weak lexical or semantic match")

        missing: list[str] = []
        for name in dict.fromkeys(CALL.findall(cand.row["text"])):
            if (name in _BUILTIN_CALLS or name in in_context or name not in known_symbols
                    or defined_in(name, cand.row, known_symbols)):
                continue
            missing.append(name)
        return Evaluation(relevance=relevance, reason="; ".join(reasons),
                          missing_context=missing[:5])


def defined_in(name: str, row: dict, known: Collection[str]) -> bool:
    """Whether `name` is defined inside the candidate's own lines."""
    spots = known.get(name, ()) if isinstance(known, dict) else ()
    return any(path == row["path"] and row["start_line"] <= line <= row["end_line"]
               for path, line in spots)
