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

from indexer.languages import is_test_path
from indexer.tokens import stem, tokenize
from retrieval.hybrid import Candidate
from retrieval.query import QueryAnalysis

__all__ = ["CALL", "Evaluation", "Evaluator", "OfflineEvaluator", "defined_in"]

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
        if not candidates:
            return []
        wants_tests = analysis.mentions_tests
        idents = {i.split(".")[-1].lower() for i in analysis.identifiers}
        # Sub-words of a named identifier are not separate terms: the identifier counts.
        parts = {t for i in analysis.identifiers for t in tokenize(i)}
        terms = set(analysis.terms) - idents - parts
        order = sorted(range(len(candidates)), key=lambda i: -candidates[i].score)
        rank = {i: r for r, i in enumerate(order)}
        return [self._one(c, rank[i], idents, terms, wants_tests, known_symbols, in_context)
                for i, c in enumerate(candidates)]

    def _one(self, cand: Candidate, rank: int, idents: set[str], terms: set[str],
             wants_tests: bool, known_symbols: Collection[str],
             in_context: Collection[str]) -> Evaluation:
        text = cand.row["text"]
        path = cand.row["path"]
        tokens = set(tokenize(f"{path} {cand.row['symbol'] or ''} {text}"))
        stems = {stem(t) for t in tokens}
        id_hit = sorted(i for i in idents if i in tokens)
        term_hit = sorted(t for t in terms if t in tokens or stem(t) in stems)
        wanted = 2 * len(idents) + len(terms)
        coverage = (2 * len(id_hit) + len(term_hit)) / wanted if wanted else 0.0
        s = cand.signals
        closeness = min(max((s.get("cosine", 0.0) - 0.25) / 0.45, 0.0), 1.0)
        relevance = (0.45 * coverage + 0.40 * s.get("symbol", 0.0) + 0.25 * s.get("path", 0.0)
                     + 0.30 * closeness + 0.10 / (1 + rank / 3))
        if s.get("symbol"):
            # Defining a name the task mentions is implementing the target itself.
            relevance = max(relevance, 0.6 + 0.25 * s["symbol"] + 0.1 * coverage)
        if "gap" in s:
            relevance = max(relevance, 0.5 + 0.2 * coverage)
        test = is_test_path(path) and not wants_tests
        if test:
            relevance *= 0.6
        relevance = round(min(max(relevance, 0.0), 1.0), 3)

        reasons: list[str] = []
        if s.get("symbol"):
            reasons.append("defines a name the task mentions")
        if "gap" in s:
            reasons.append("defines a name relevant code uses")
        if s.get("path"):
            reasons.append("in a file the task names")
        if id_hit:
            reasons.append("uses " + ", ".join(f"`{i}`" for i in id_hit[:4]))
        if term_hit:
            reasons.append(f"covers {len(term_hit)}/{len(terms)} task terms")
        if closeness >= 0.6:
            reasons.append("close in meaning")
        if test:
            reasons.append("a test")
        if not reasons:
            reasons.append("weak lexical or semantic match")

        missing: list[str] = []
        for name in dict.fromkeys(CALL.findall(text)):
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
