"""The Check of the exploration issue on one indexed tree: the test command found, the
share of the MCP `explore` answer that is tracks (`tracks` and `track_lines` whole) and
that is their bookkeeping (`track_lines`, and the tracks' records apart from their
findings, conclusions and evidence), the track names, the synthesis' findings with a
valid citation, and, per broad question of `ask`: the tracks, the
largest overlap left, the findings with a valid citation, the top finding's support and
the confidence (Low whenever the top finding has one source), the findings with two
independent sources or more, the tests track's findings at test support files passed as
tests, and the divergence detector's material: the code names two tracks both place, and
how many of them apart; then those counts over the questions.

Usage:
    python benchmarks/explore_check.py TREE [QUESTION ...] [--max-tokens 3000]

TREE must be indexed (`dowse index TREE --no-embed` is enough).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from explore_trees import holds
from track_hits import support_counts, support_labels

from dowse.explore.handoff import investigate
from dowse.explore.run import explore
from dowse.explore.synthesis import _apart, _placements
from dowse.retrieval.hybrid import HybridSearcher
from dowse.server.records import ExploreRequest
from dowse.server.workspace import ServedRoot, Workspace


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("questions", nargs="*")
    ap.add_argument("--max-tokens", type=int, default=3000)
    args = ap.parse_args()
    root = args.tree.resolve()
    r = explore(root, depth="deep")
    tests = [c for c in r.commands if c.kind == "test"]
    first = f"`{tests[0].command[:70]}` ({tests[0].citation.ref})" if tests else "-"
    syn = r.synthesis
    print(f"## {root.name}: {len(tests)} test commands, first {first}")
    valid = sum(holds(root, f) for f in syn.findings)
    print(
        f"explore deep: findings {len(syn.findings)}, valid {valid}, "
        f"confidence {syn.confidence}, divergences {len(syn.divergences)}"
    )
    for d in syn.divergences:
        print(f"  divergence: {d}")
    ws = Workspace([ServedRoot(root)], embed=False)
    answer = ws.explore(ExploreRequest(depth="deep", max_tokens=args.max_tokens))
    text = answer.model_dump_json()
    d = answer.result.model_dump(mode="json")
    gates = len(json.dumps(d["tracks"])) + len(json.dumps(d["track_lines"]))
    # Bookkeeping alone: the one-line tracks, and what a track with findings holds besides
    # its findings, conclusions and evidence (its name, focus, empty fields).
    content = ("findings", "conclusions", "evidence")
    kept = [{k: v for k, v in t.items() if k not in content} for t in d["tracks"]]
    bookkeeping = len(json.dumps(kept)) + len(json.dumps(d["track_lines"]))
    names = [line.split(":", 1)[0] for line in d["track_lines"]]
    print(
        f"MCP explore max_tokens {args.max_tokens}: {len(text) // 3} tokens, tracks "
        f"{gates / len(text):.1%}, bookkeeping {bookkeeping / len(text):.1%} "
        f"({len(d['track_lines'])} track lines, {len(d['tracks'])} tracks with findings); "
        f"tracks named: {names}"
    )
    searcher = HybridSearcher.open(root / ".dowse")
    total: Counter[str] = Counter()
    for q in args.questions:
        rep = investigate(searcher, q, budget=4000)
        counts = support_counts(rep) + support_labels(rep, searcher)
        total += counts
        s = rep.synthesis
        n = len(s.findings) if s else 0
        valid = sum(holds(root, f) for f in s.findings) if s else 0
        top = s.unified[0].rsplit("supported by ", 1)[-1].split(" ")[0] if s and s.unified else "-"
        placed = _placements(rep.tracks)
        shared = {k: v for k, v in placed.items() if len(v) >= 2}
        apart = sum(
            any(_apart(a, b) for a in v.values() for b in v.values() if a is not b)
            for v in shared.values()
        )
        print(
            f"ask {q!r}: tracks {[t.track.name for t in rep.tracks]}; empty {len(rep.empty)}; "
            f"overlap {rep.overlap:.2f}; findings {n} valid {valid}; top support {top}; "
            f"confidence {s.confidence if s else '-'}; 2+ sources {counts['2+ sources']}; "
            f"test support passed as tests {counts['support as test']}; "
            f"names placed by 2+ tracks {len(shared)}, "
            f"apart {apart}; divergences {len(s.divergences) if s else 0}"
        )
        for x in s.divergences if s else []:
            print(f"  divergence: {x}")
    if args.questions:
        print(
            f"asked {len(args.questions)}: High {total['High']}, Moderate {total['Moderate']}, "
            f"Low {total['Low']}; findings with 2+ sources {total['2+ sources']}/"
            f"{total['findings']}; test support passed as tests {total['support as test']}, "
            f"said support {total['support said support']}"
        )


if __name__ == "__main__":
    main()
