"""What joining overlapping tracks before they run saves, on broad questions about real trees.

Usage:
    python benchmarks/track_overlap.py INDEX_DIR QUESTIONS_FILE [INDEX_DIR QUESTIONS_FILE ...]

QUESTIONS_FILE holds one broad question a line (blank lines and `#` lines skipped). Each
question is answered by `ask`'s exploration route twice on the same warm searcher: with
every planned track run (`predict=False`) and with the tracks predicted to overlap joined
before running (`predict=True`, the default). Prints per question the tracks each run
ran, the joins made before running, the merges made after (the safety net), and the
largest remaining overlap; then the totals: track runs without and with the prediction
(runs saved), joins that the run without prediction confirms (its after-run merge put
the same two tracks together) and the after-run merges left with the prediction (what it
missed), the largest overlap left in any question, the synthesis' findings whose citation
holds the name they state (`explore_trees.holds`), the divergences, and the callers' and
callees' findings whose calling line names the callee or target (`holds` on their
topic). Wall times are loaded by other work; compare them only with each other.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from explore_trees import holds

from dowse.explore.handoff import AskReport, investigate
from dowse.retrieval.hybrid import HybridSearcher


def runs(report: AskReport) -> int:
    """Tracks run: one per retrieval loop and one per explorer."""
    return sum((tp.question is not None) + (tp.explorer is not None) for tp in report.plan)


def merged_pairs(report: AskReport) -> set[frozenset[str]]:
    """The pairs of planned track names put together after running."""
    out: set[frozenset[str]] = set()
    for note in report.merged:
        if " merged into " in note:
            b, a = note.split(" (overlap")[0].split(" merged into ")
            out.add(frozenset(p for side in (a, b) for p in side.split(" + ")))
    return out


def joined_pairs(report: AskReport) -> set[frozenset[str]]:
    out: set[frozenset[str]] = set()
    for note in report.merged:
        if " joined " in note:
            b, a = note.split(" before running")[0].split(" joined ")
            out.add(frozenset(p for side in (a, b) for p in side.split(" + ")))
    return out


def confirmed(join: frozenset[str], merges: set[frozenset[str]]) -> bool:
    return any(join <= m for m in merges)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pairs", nargs="+")
    args = ap.parse_args()
    if len(args.pairs) % 2:
        ap.error("give INDEX_DIR QUESTIONS_FILE pairs")
    total = {"plain": 0, "predicted": 0, "joins": 0, "confirmed": 0, "left": 0, "explored": 0}
    stated = {"findings": 0, "valid": 0, "divergences": 0}
    refs = {"callers": [0, 0], "callees": [0, 0]}
    worst = 0.0
    wall = {"plain": 0.0, "predicted": 0.0}
    for index_dir, qfile in zip(args.pairs[::2], args.pairs[1::2], strict=True):
        searcher = HybridSearcher.open(Path(index_dir))
        questions = [
            q.strip()
            for q in Path(qfile).read_text().splitlines()
            if q.strip() and not q.startswith("#")
        ]
        print(f"## {Path(searcher.root).name}")
        for q in questions:
            t0 = time.perf_counter()
            plain = investigate(searcher, q, budget=4000, predict=False)
            t1 = time.perf_counter()
            pred = investigate(searcher, q, budget=4000)
            t2 = time.perf_counter()
            if plain.mode != "exploration":
                print(f"- {q}: one loop ({plain.why})")
                continue
            total["explored"] += 1
            joins = joined_pairs(pred)
            ok = sum(confirmed(j, merged_pairs(plain)) for j in joins)
            left = [n for n in pred.merged if " merged into " in n]
            total["plain"] += runs(plain)
            total["predicted"] += runs(pred)
            total["joins"] += len(joins)
            total["confirmed"] += ok
            total["left"] += len(left)
            wall["plain"] += t1 - t0
            wall["predicted"] += t2 - t1
            worst = max(worst, pred.overlap)
            syn = pred.synthesis
            if syn is not None:
                stated["findings"] += len(syn.findings)
                stated["valid"] += sum(holds(Path(searcher.root), f) for f in syn.findings)
                stated["divergences"] += len(syn.divergences)
            roles = {tp.name: tp.explorer for tp in pred.plan}
            for track in pred.tracks:
                role = roles.get(track.track.name)
                if role in refs:
                    refs[role][0] += len(track.findings)
                    refs[role][1] += sum(holds(Path(searcher.root), f) for f in track.findings)
            print(f"- {q}")
            print(f"  without prediction: {runs(plain)} runs {[t.name for t in plain.plan]}")
            print(f"    merged after: {[n for n in plain.merged if ' merged into ' in n]}")
            print(f"    overlap {plain.overlap:.2f}, {t1 - t0:.2f} s")
            print(f"  with prediction: {runs(pred)} runs {[t.name for t in pred.plan]}")
            print(f"    joined before: {[n for n in pred.merged if ' joined ' in n]}")
            print(f"    merged after: {left}; overlap {pred.overlap:.2f}, {t2 - t1:.2f} s")
    print(
        f"\nquestions explored {total['explored']}; track runs {total['plain']} without the "
        f"prediction, {total['predicted']} with it ({total['plain'] - total['predicted']} "
        f"saved); joins {total['joins']}, confirmed by the after-run merge "
        f"{total['confirmed']}; after-run merges left {total['left']}; wall "
        f"{wall['plain']:.1f} s vs {wall['predicted']:.1f} s"
    )
    print(
        f"largest overlap left {worst:.2f}; synthesis findings {stated['findings']}, with a "
        f"valid citation {stated['valid']}; divergences {stated['divergences']}"
    )
    print(
        f"callers findings {refs['callers'][0]} ({refs['callers'][1]} hold), callees findings "
        f"{refs['callees'][0]} ({refs['callees'][1]} hold)"
    )


if __name__ == "__main__":
    main()
