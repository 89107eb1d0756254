"""Whether the part of a shown file that holds the fix has the question's words on its
deciding lines more often than the parts the context shows instead, on recorded answers.

Usage:
    python benchmarks/part_evidence.py --dataset DEV.jsonl --repos CLONES --pred PRED.jsonl
        [--pred MORE.jsonl ...] [--method ask] [--verbose]

For every gold code file among an answer's first five files (`found_files`) that the
context shows (`context_spans`), each fixed function (the innermost function or method of
the base file holding a hunk's first non-blank line, parsed as dowse parses it; as in
`gold_breakdown.py`) shorter than `WHOLE_DEFINITION_LINES` is one unit, classed *missed*
when none of its hunks is shown whole and the file's blocks do not touch it (the
within-file ranking chose other parts), *shown* when one of its hunks is shown whole.
A function's or a block's evidence is `behaviour.words_on` over its code lines (the
first is the signature): how many of the question's stemmed words
(`definitions.question_stems`) stand on its deciding lines (a branch, a raise, a throw, a
panic, an error returned). Printed per language, for each class: the units, the share
whose function holds any, the share holding more than every block shown of the file
(`wins`), as many (`ties`, above zero), fewer (`loses`), and the share first in its file
(no function of the file holding more; `first`, and `alone` without a tie).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dowse.indexer.parse import parse_source
from dowse.languages import HEADER, language_for
from dowse.retrieval.behaviour import WHOLE_DEFINITION_LINES, code_lines, words_on
from dowse.retrieval.definitions import question_stems
from dowse.retrieval.query import analyze

sys.path.insert(0, str(Path(__file__).parent))
from gold_breakdown import _header_language, base_lines, git_dir, is_code  # noqa: E402

_FUNCTIONS = frozenset({"function", "method", "constructor"})


def held(lines: Sequence[str], code: Sequence[int], lo: int, hi: int, stems: frozenset[str]) -> int:
    """The question's stems on the deciding lines of lines `lo`..`hi` (1-based)."""
    own = [n for n in code if lo - 1 <= n <= hi - 1]
    return len(words_on(lines, own).decides & stems)


def file_functions(git: str, commit: str, path: str) -> list[tuple[int, int]]:
    language = language_for(path)
    if path.lower().endswith(HEADER):
        language = _header_language(git, commit)
    source = "\n".join(base_lines(git, commit, path)).encode()
    parsed = parse_source(path, source, language or "text", timeout_s=20)
    return [(s.start_line, s.end_line) for s in parsed.symbols if s.kind in _FUNCTIONS]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--pred", type=Path, action="append", required=True)
    ap.add_argument("--method", default="ask")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    rows = {json.loads(x)["instance_id"]: json.loads(x) for x in args.dataset.open()}
    preds: dict[str, dict[str, Any]] = {}
    for f in args.pred:
        for line in f.open():
            p = json.loads(line)
            if p.get("method", args.method) == args.method and p["instance_id"] in rows:
                preds[p["instance_id"]] = p

    stats: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
        collections.Counter
    )
    for iid, p in sorted(preds.items()):
        d = rows[iid]
        language = d.get("language", "python")
        g = git_dir(args.repos, d["repo"])
        stems = question_stems(analyze(d["problem_statement"]))
        for path, hunks in d.get("gold_lines", {}).items():
            if path not in p["found_files"][:5] or not is_code(path):
                continue
            spans = [
                (s["start"], s["end"])
                for s in p["context_spans"]
                if s["path"] == path and s["end"] > s["start"]
            ]
            if not spans:
                continue
            lines = list(base_lines(g, d["base_commit"], path))
            code = code_lines(lines, language_for(path))
            fns = [
                f
                for f in file_functions(g, d["base_commit"], path)
                if f[1] - f[0] < WHOLE_DEFINITION_LINES
            ]
            units: dict[tuple[int, int], str] = {}
            for a, b in hunks:
                filled = [n for n in range(a, b + 1) if n <= len(lines) and lines[n - 1].strip()]
                if not filled:
                    continue
                inside = [f for f in fns if f[0] <= filled[0] <= f[1]]
                if not inside:
                    continue
                fn = min(inside, key=lambda f: f[1] - f[0])
                whole = all(any(s <= x <= e for s, e in spans) for x in range(a, b + 1))
                touched = any(s <= fn[1] and e >= fn[0] for s, e in spans)
                if whole:
                    units[fn] = "shown"
                elif not touched and units.get(fn) != "shown":
                    units[fn] = "missed"
            if not units:
                continue
            counts = {f: held(lines, code, f[0], f[1], stems) for f in fns}
            for fn, cls in units.items():
                mine = counts[fn]
                others = [
                    held(lines, code, s, e, stems)
                    for s, e in spans
                    if not (s <= fn[0] and fn[1] <= e)  # the blocks shown instead
                ]
                best_other = max(others, default=0)
                above = sum(c > mine for f, c in counts.items() if f != fn)
                level = sum(c == mine for f, c in counts.items() if f != fn)
                c = stats[(language, cls)]
                c["units"] += 1
                c["any"] += mine > 0
                c["blocks"] += len(others)
                c["blocks any"] += sum(o > 0 for o in others)
                c["wins"] += mine > best_other
                c["ties"] += mine == best_other > 0
                c["loses"] += mine < best_other
                c["first"] += mine > 0 and above == 0
                c["alone"] += mine > 0 and above == 0 and level == 0
                if args.verbose:
                    print(iid, path, fn, cls, mine, others, f"above {above}", file=sys.stderr)

    print(
        "| language | class | units | holds any | blocks instead holding any | wins | ties "
        "| loses | first in file | first alone |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (language, cls), c in sorted(stats.items()):
        n = c["units"]

        def pct(k: str, c: collections.Counter[str] = c, n: int = n) -> str:
            return f"{c[k]} ({100 * c[k] / max(n, 1):.0f} %)"

        share = 100 * c["blocks any"] / max(c["blocks"], 1)
        blocks = f"{c['blocks any']} of {c['blocks']} ({share:.0f} %)"
        print(
            f"| {language} | {cls} | {n} | {pct('any')} | {blocks} | {pct('wins')} | "
            f"{pct('ties')} | {pct('loses')} | {pct('first')} | {pct('alone')} |"
        )


if __name__ == "__main__":
    main()
