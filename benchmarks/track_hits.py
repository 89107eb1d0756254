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

Also counts, per tree, how much the synthesis trusts itself: the reports by confidence
and the findings supported by two independent tracks or more (`support_counts`); and
how the tests track labels test support (`languages.is_test_support_path`: conftest.py,
helper apps, testdata/; and test files other test files import, `tested.imported_support`):
its findings at support files said to be support or passed as
tests, support listed before a test, and the statement's "is tested at" naming support
(`support_labels`).
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter
from pathlib import Path

from dowse.explore.handoff import AskReport, investigate
from dowse.explore.tested import SUPPORT, imported_support
from dowse.languages import is_test_support_path
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


_SOURCES = re.compile(r"supported by (\d+) independent track")
_TESTED_AT = re.compile(r"is tested at (.*?)(?:;|, and |$)")


def support_counts(report: AskReport) -> Counter[str]:
    """The report's confidence (1 under its name) and its findings: all, and those
    supported by two independent tracks or more."""
    out: Counter[str] = Counter()
    s = report.synthesis
    if s is None:
        return out
    out[s.confidence] += 1
    for line in s.unified:
        m = _SOURCES.search(line)
        out["findings"] += 1
        out["2+ sources"] += m is not None and int(m.group(1)) >= 2
    return out


def support_labels(report: AskReport, searcher: HybridSearcher | None = None) -> Counter[str]:
    """The tests track's findings at test support files (by their path, and, given the
    searcher, by other test files importing them: `tested.imported_support`): said to be
    support, or passed as tests; those listed before a test of the same track; and the
    statement's "is tested at" references that are support."""
    out: Counter[str] = Counter()
    cited = {
        f.citations[0].path for t in report.tracks if t.track.role == "tests" for f in t.findings
    }
    statement = report.synthesis.statement if report.synthesis else ""
    tested_at = [_REF.findall(m.group(1)) for m in _TESTED_AT.finditer(statement)]
    cited |= {path for refs in tested_at for path, _, _ in refs}
    imported = imported_support(searcher, cited) if searcher is not None else set()

    def is_support(path: str) -> bool:
        return is_test_support_path(path) or path in imported

    for t in report.tracks:
        if t.track.role != "tests":
            continue
        seen_support = False
        for f in t.findings:
            support = is_support(f.citations[0].path)
            if support:
                said = f.claim.startswith(SUPPORT)
                out["support said support" if said else "support as test"] += 1
            elif seen_support:
                out["support before a test"] += 1
            seen_support |= support
    for refs in tested_at:
        out["tested at"] += len(refs)
        out["tested at support"] += sum(is_support(path) for path, _, _ in refs)
    return out


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
            checks += support_counts(report) + support_labels(report, searcher)
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
        print(
            f"  synthesis: confidence High {checks['High']}, Moderate {checks['Moderate']}, "
            f"Low {checks['Low']}; findings with 2+ independent sources "
            f"{checks['2+ sources']}/{checks['findings']}"
        )
        print(
            f"  test support: said support {checks['support said support']}, passed as tests "
            f"{checks['support as test']}, listed before a test "
            f"{checks['support before a test']}; statement 'is tested at' refs at support "
            f"{checks['tested at support']}/{checks['tested at']}"
        )


if __name__ == "__main__":
    main()
