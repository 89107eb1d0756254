"""Which of `ask`'s explorer tracks found something, per broad question: the tests, the
history (co-change) and the configuration tracks, with their findings' first citations.

Usage:
    python benchmarks/track_hits.py INDEX_DIR QUESTIONS_FILE [INDEX_DIR QUESTIONS_FILE ...]

QUESTIONS_FILE holds one question a line (blank and `#` lines skipped); each is answered
by `investigate` (the exploration route when the question decomposes). A track counts as
a hit when it is among the report's tracks with a finding; one the report lists under
`empty` (or that the plan has no place for) is a miss. Prints each planned track's role,
name, findings and first three citations, then per tree and role: questions planned,
hits.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from dowse.explore.handoff import AskReport, investigate
from dowse.retrieval.hybrid import HybridSearcher

ROLES = {"git": "history", "config": "config", "tests": "tests"}


def role_of(tp: object) -> str | None:
    explorer = getattr(tp, "explorer", None)
    if explorer in ROLES:
        return ROLES[explorer]
    if getattr(tp, "results_named", False):  # the tests track as a loop over tests/
        return "tests"
    return None


def found(report: AskReport, name: str) -> list[object]:
    for t in report.tracks:
        if t.track.name == name or name in t.track.name.split(" + "):
            return list(t.findings)
    return []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pairs", nargs="+")
    args = ap.parse_args()
    for index_dir, qfile in zip(args.pairs[::2], args.pairs[1::2], strict=True):
        searcher = HybridSearcher.open(Path(index_dir))
        planned: Counter[str] = Counter()
        hits: Counter[str] = Counter()
        print(f"## {Path(searcher.root).name}")
        for q in Path(qfile).read_text().splitlines():
            q = q.strip()
            if not q or q.startswith("#"):
                continue
            report = investigate(searcher, q, budget=4000)
            print(f"- {q} ({report.mode})")
            for tp in report.plan:
                role = role_of(tp)
                if role is None:
                    continue
                planned[role] += 1
                findings = found(report, tp.name)
                hits[role] += bool(findings)
                cites = ", ".join(f.citations[0].ref for f in findings[:3])  # type: ignore[attr-defined]
                print(f"    {role}: {tp.name!r}: {len(findings)} findings {cites}")
                for f in findings[:2]:
                    print(f"      {f.claim[:160]}")  # type: ignore[attr-defined]
            for e in report.empty:
                print(f"    empty: {e[:160]}")
        print(
            "  totals: "
            + "; ".join(f"{r} {hits[r]}/{planned[r]}" for r in ("tests", "history", "config"))
        )


if __name__ == "__main__":
    main()
