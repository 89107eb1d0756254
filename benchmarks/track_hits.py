"""Which of `ask`'s explorer tracks found something, per broad question: the tests, the
history (co-change) and the configuration tracks, with their findings' first citations.

Usage:
    python benchmarks/track_hits.py INDEX_DIR QUESTIONS_FILE [INDEX_DIR QUESTIONS_FILE ...]

QUESTIONS_FILE holds one question a line (blank and `#` lines skipped); each is answered
by `investigate` (the exploration route when the question decomposes). A track counts as
a hit when it is among the report's tracks (these tracks are named after what they found,
and one that found nothing is listed under `empty` instead); the findings printed are
those the budget kept. Prints each planned track's role,
name, findings and first three citations, then per tree and role: questions planned,
hits. For the history track's co-change claims, each commit a claim names is checked
with git (it exists and touched both files); the synthesis' one-sentence statement (where
there is one) is printed with how many of its `path:line` references name a line the file
has.
"""

from __future__ import annotations

import argparse
import re
import subprocess
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


def found(report: AskReport, name: str) -> list[object] | None:
    """The track's findings the budget kept; None when it is not among the tracks."""
    for t in report.tracks:
        if t.track.name == name or name in t.track.name.split(" + "):
            return list(t.findings)
    return None


_PAIR = re.compile(r"^(\S+) and (\S+) changed together in \d+ commits.*?, as in (.*)$")
_REF = re.compile(r"([\w./-]+\.\w+):(\d+)(?:-(\d+))?")


def commits_hold(root: Path, claim: str) -> tuple[int, int]:
    """(commits named, commits that exist and touched both files) of a co-change claim."""
    m = _PAIR.match(claim)
    if m is None:
        return 0, 0
    a, b, rest = m.groups()
    named = [part.split()[0] for part in rest.split("; ") if part.strip()]
    held = 0
    for sha in named:
        out = subprocess.run(
            ["git", "-C", str(root), "show", "--name-only", "--format=", sha],
            capture_output=True,
            text=True,
        )
        held += out.returncode == 0 and {a, b} <= set(out.stdout.split())
    return len(named), held


def refs_hold(root: Path, text: str) -> tuple[int, int]:
    """(references, references to lines the file has) in a statement."""
    refs = _REF.findall(text)
    held = 0
    for path, start, end in refs:
        f = root / path
        if f.is_file():
            n = len(f.read_bytes().split(b"\n"))
            held += int(end or start) <= n
    return len(refs), held


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pairs", nargs="+")
    args = ap.parse_args()
    for index_dir, qfile in zip(args.pairs[::2], args.pairs[1::2], strict=True):
        searcher = HybridSearcher.open(Path(index_dir))
        planned: Counter[str] = Counter()
        hits: Counter[str] = Counter()
        checks: Counter[str] = Counter()
        root = Path(searcher.root)
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
                kept = found(report, tp.name)
                hits[role] += kept is not None
                findings = kept or []
                cites = ", ".join(f.citations[0].ref for f in findings[:3])  # type: ignore[attr-defined]
                print(f"    {role}: {tp.name!r}: {len(findings)} findings {cites}")
                for f in findings[:2]:
                    print(f"      {f.claim[:160]}")  # type: ignore[attr-defined]
                if role == "history":
                    for f in findings:
                        n, held = commits_hold(root, f.claim)  # type: ignore[attr-defined]
                        checks["commits"] += n
                        checks["commits held"] += held
            for e in report.empty:
                print(f"    empty: {e[:160]}")
            statement = getattr(report.synthesis, "statement", "") if report.synthesis else ""
            if statement:
                n, held = refs_hold(root, statement)
                checks["statements"] += 1
                checks["refs"] += n
                checks["refs held"] += held
                print(f"    statement: {statement}")
        print(
            "  totals: "
            + "; ".join(f"{r} {hits[r]}/{planned[r]}" for r in ("tests", "history", "config"))
            + f"; co-change commits held {checks['commits held']}/{checks['commits']}"
            + f"; statements {checks['statements']}, refs held "
            + f"{checks['refs held']}/{checks['refs']}"
        )


if __name__ == "__main__":
    main()
