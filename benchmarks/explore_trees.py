"""What `dowse explore --depth deep` tells an agent about trees the project did not write.

Usage:
    python benchmarks/explore_trees.py TREE [TREE ...] [--ask QUESTION ...]

For each TREE (a directory; no index is needed for explore) prints: the test commands
found (the first, with its source and citation), the synthesis findings and how many
have a valid citation (it verifies against the file and the cited lines hold the name
the finding states), the divergences, the open questions, and explore's wall time. With
`--ask` (repeatable), TREE must be indexed: it also runs `ask`'s broad-question route on
each QUESTION and prints the tracks (by name), the merges, the largest remaining overlap
of two tracks' best results, the synthesis' findings with a valid citation, the
divergences, and the callers' and callees' findings.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from dowse.explore.handoff import investigate
from dowse.explore.records import Finding
from dowse.explore.run import explore
from dowse.explore.tracks import verify_citation


def holds(root: Path, f: Finding) -> bool:
    """The citation verifies and its lines hold the last part of the name it states."""
    c = f.citations[0]
    if verify_citation(root, c) is not None or not f.topic:
        return False
    lines = (root / c.path).read_text(errors="replace").split("\n")[c.start_line - 1 : c.end_line]
    short = [p for p in re.split(r"\W+", f.topic) if p][-1]
    return any(re.search(rf"\b{re.escape(short)}\b", ln) for ln in lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trees", nargs="+", type=Path)
    ap.add_argument("--ask", action="append", default=[], metavar="QUESTION")
    args = ap.parse_args()
    for tree in args.trees:
        root = tree.resolve()
        t0 = time.perf_counter()
        r = explore(root, depth="deep")
        wall = time.perf_counter() - t0
        tests = [c for c in r.commands if c.kind == "test"]
        first = f"`{tests[0].command[:70]}` ({tests[0].source}, {tests[0].citation.ref})"
        valid = sum(holds(root, f) for f in r.synthesis.findings)
        print(f"## {root.name}")
        print(f"test commands: {len(tests)}; first: {first if tests else '-'}")
        print(f"findings: {len(r.synthesis.findings)}, valid citations: {valid}")
        print(f"confidence: {r.synthesis.confidence} ({r.synthesis.basis})")
        print(f"divergences: {len(r.synthesis.divergences)}")
        for d in r.synthesis.divergences:
            print(f"  - {d}")
        print(f"open questions: {len(r.synthesis.open_questions)}")
        for q in r.synthesis.open_questions:
            print(f"  - {q}")
        print(f"explore deep wall: {wall:.2f} s (tracks summed {r.timings['sum']:.2f} s)")
        if args.ask:
            from dowse.retrieval.hybrid import HybridSearcher

            searcher = HybridSearcher.open(root / ".dowse")
        for question in args.ask:
            t0 = time.perf_counter()
            rep = investigate(searcher, question, budget=4000)
            print(f"ask {question!r}: {rep.mode}, {time.perf_counter() - t0:.2f} s")
            print(f"  tracks: {[t.track.name for t in rep.tracks]}")
            print(f"  merged: {rep.merged}; overlap {rep.overlap:.2f}")
            syn = rep.synthesis
            valid = sum(holds(root, f) for f in syn.findings) if syn else 0
            n = len(syn.findings) if syn else 0
            print(f"  findings: {n}, valid citations: {valid}")
            print(f"  divergences: {len(syn.divergences) if syn else 0}")
            for d in syn.divergences if syn else []:
                print(f"    - {d}")
            by_role = {tp.name: tp.explorer for tp in rep.plan}
            for t in rep.tracks:
                role = by_role.get(t.track.name)
                if role in ("callers", "callees"):
                    print(f"  {role}: {len(t.findings)} findings ({t.track.name})")


if __name__ == "__main__":
    main()
