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
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from indexer.tokens import tokenize
from retrieval.hybrid import Candidate
from retrieval.query import QueryAnalysis, is_test_path

__all__ = ["Evaluation", "Evaluator", "OfflineEvaluator", "is_test_path"]

_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
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


class Evaluator(Protocol):
    def evaluate(self, analysis: QueryAnalysis, candidates: Sequence[Candidate],
                 known_symbols: Collection[str], in_context: Collection[str]
                 ) -> list[Evaluation]:
        """One Evaluation per candidate, in order."""
        ...


class OfflineEvaluator:
    """Deterministic scoring from retrieval evidence and vocabulary coverage."""

    def evaluate(self, analysis: QueryAnalysis, candidates: Sequence[Candidate],
                 known_symbols: Collection[str], in_context: Collection[str]
                 ) -> list[Evaluation]:
        if not candidates:
            return []
        best = max(c.score for c in candidates) or 1.0
        wants_tests = analysis.mentions_tests
        idents = {i.split(".")[-1].lower() for i in analysis.identifiers}
        terms = set(analysis.terms) - idents
        return [self._one(c, best, idents, terms, wants_tests, known_symbols, in_context)
                for c in candidates]

    def _one(self, cand: Candidate, best: float, idents: set[str], terms: set[str],
             wants_tests: bool, known_symbols: Collection[str],
             in_context: Collection[str]) -> Evaluation:
        text = cand.row["text"]
        path = cand.row["path"]
        tokens = set(tokenize(f"{path} {cand.row['symbol'] or ''} {text}"))
        id_hit = sorted(i for i in idents if i in tokens)
        term_hit = sorted(t for t in terms if t in tokens)
        wanted = 2 * len(idents) + len(terms)
        coverage = (2 * len(id_hit) + len(term_hit)) / wanted if wanted else 0.0
        s = cand.signals
        retrieval = cand.score / best
        relevance = (0.40 * retrieval + 0.35 * coverage + 0.25 * s.get("symbol", 0.0)
                     + 0.15 * s.get("path", 0.0) + 0.10 * s.get("dense", 0.0))
        test = is_test_path(path) and not wants_tests
        if test:
            relevance *= 0.6
        relevance = round(min(max(relevance, 0.0), 1.0), 3)

        reasons: list[str] = []
        if s.get("symbol"):
            reasons.append("defines a name the task mentions")
        if s.get("path"):
            reasons.append("in a file the task names")
        if id_hit:
            reasons.append("uses " + ", ".join(f"`{i}`" for i in id_hit[:4]))
        if term_hit:
            reasons.append(f"covers {len(term_hit)}/{len(terms)} task terms")
        if s.get("dense", 0) >= 0.9:
            reasons.append("close in meaning")
        if test:
            reasons.append("a test")
        if not reasons:
            reasons.append("weak lexical or semantic match")

        defined_here = {cand.row["symbol"].split(".")[-1]} if cand.row["symbol"] else set()
        missing: list[str] = []
        for name in dict.fromkeys(_CALL.findall(text)):
            if (name in _BUILTIN_CALLS or name in defined_here or name in in_context
                    or name not in known_symbols):
                continue
            missing.append(name)
        return Evaluation(relevance=relevance, reason="; ".join(reasons),
                          missing_context=missing[:5])
