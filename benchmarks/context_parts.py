"""Where `dowse ask`'s printed markdown spends its tokens, part by part, and what its
context shows, under `Packing` variants, one index per repository walked in commit order.

Usage:
    python benchmarks/context_parts.py --dataset DEV.jsonl --repos CLONES --work DIR
        --out OUTDIR [--repo OWNER/NAME] [--instances ID,...] [--limit N]
        [--budgets 4000,2000] [--placing] VARIANT [VARIANT ...]
    python benchmarks/context_parts.py --table OUTDIR/NAME-BUDGET.parts.jsonl [...]
    python benchmarks/context_parts.py --dataset DEV.jsonl --compare BASE.jsonl OTHER.jsonl
    python benchmarks/context_parts.py --dataset DEV.jsonl --misses OUTDIR/NAME-BUDGET.placing.jsonl

A VARIANT is `NAME` or `NAME:field=value,...` over the fields of `Packing` and `Frame`
(`dowse.retrieval.ask`; `base` with no fields is the shipped answer), and `without=A+B`:
the within-file rankings (`file_parts.RANKINGS`) `ask`'s best parts leave out. Each
instance's repository is synced and indexed as `dowse eval swebench` does (the same
work directory layout), then `ask` answers once per variant and budget, as `dowse eval
swebench --methods ask` answers (the markdown fitted into the budget; the loop, which
neither changes, runs once per question). Writes OUTDIR/NAME-BUDGET.jsonl
(predictions, for `score.py`) and OUTDIR/NAME-BUDGET.parts.jsonl: per instance, the
printed markdown's tokens by part (`PARTS`), counted by the one counter on each line and
its line break, and the CPU seconds `ask` spent ranking the files' parts
(`best_parts_cpu`). `--table` prints each parts file's mean tokens per part and its share;
`--compare` the instances whose share of the fix's changed lines shown rose or fell
between two predictions files. `--placing` writes OUTDIR/NAME-BUDGET.placing.jsonl too:
per instance, every range the packing tried to add whole (`ask._place`), in order, with
its role, the tokens it would take, the room then used and whether it fitted;
`--misses` counts, over such a file, the tried ranges holding changed lines that did not
fit and the answer does not show, and how many of them would have fitted had one block
placed before them (holding no changed line) been left out.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dowse.errors import EvalError
from dowse.evaluation.swebench import (
    Answer,
    _ask_spans,
    _files_of,
    _line_cover,
    load_dataset,
    load_predictions,
    prepared_runs,
    select_instances,
    unrecorded,
)
from dowse.explore.handoff import fit_report, investigate, render_report
from dowse.indexer.embed import get_embedder
from dowse.retrieval.ask import Frame, Packing
from dowse.retrieval.budget import estimate_tokens
from dowse.retrieval.file_parts import RANKINGS, best_parts

ask_module = importlib.import_module("dowse.retrieval.ask")  # the package's `ask` is the function


@dataclass(frozen=True)
class Variant:
    name: str
    packing: Packing
    frame: Frame
    without: frozenset[str] = frozenset()  # the within-file rankings left out


def parse_variant(text: str) -> Variant:
    """`NAME:field=value,...` -> the variant with those fields (`without=A+B`: the
    within-file rankings left out)."""
    name, _, fields = text.partition(":")
    packing: dict[str, Any] = {}
    frame: dict[str, Any] = {}
    without: frozenset[str] = frozenset()
    for pair in filter(None, fields.split(",")):
        key, sep, value = pair.partition("=")
        if key == "without":
            without = frozenset(value.split("+"))
            if not without <= RANKINGS:
                raise SystemExit(f"context_parts: no within-file ranking in {pair!r}")
            continue
        into = packing if key in Packing.model_fields else frame
        if not sep or key not in {*Packing.model_fields, *Frame.model_fields}:
            raise SystemExit(f"context_parts: no Packing or Frame field in {pair!r}")
        into[key] = json.loads(value)
    return Variant(name, Packing(**packing), Frame(**frame), without)


_PARTS_CPU = [0.0]
"""The calling thread's CPU seconds in `best_parts` since the last answer."""


def use_rankings(without: frozenset[str]) -> None:
    """Make `ask`'s best parts fuse every within-file ranking but `without`, their CPU
    time counted in `_PARTS_CPU`."""
    ranked = functools.partial(best_parts, rankings=RANKINGS - without)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return ranked(*args, **kwargs)
        finally:
            _PARTS_CPU[0] += time.thread_time() - start

    ask_module.best_parts = timed


def use_frame(frame: Frame) -> None:
    """Make `frame` the one `ask` packs beside and its markdown prints (what `dowse ask`
    does with the default frame): the functions' default."""
    for fn in (ask_module.ask, ask_module.render_markdown):
        assert fn.__kwdefaults__ is not None
        fn.__kwdefaults__["frame"] = frame


PARTS = (
    "title and summary",  # the `# question` title and the `_..._` summary line
    "headings",  # `## Files`, `## Definitions`, `## Context`, ...
    "files: paths and scores",  # a files list item up to its reason
    "files: reasons",  # the rest of a files list item
    "definitions",  # the ranked definitions' lines
    "block headings",  # `### path:lines kind name (relevance)`
    "block reasons",  # the line under a block's heading
    "fences",  # the code fences' lines
    "source: leading imports",  # import lines of a block's leading run (before its code)
    "source: other imports",  # import lines elsewhere in a block
    "source: cut marker",  # a line citing a block's imports left out (measured, not kept)
    "source: code",  # every other line of a block
    "signature lines",  # one-item lines pointing at a definition
    "blank lines",
    "other",  # an explored answer's own sections
)

_IMPORT = re.compile(
    r"""^\s*(?:from\s+\S+\s+import\b|import\s|import\(|\#\s*include\b|use\s|using\s|package\s|
    (?:const|let|var)\s+[\w{}\s,]+=\s*require\(|require\(|extern\s+crate\s)""",
    re.X,
)
_COMMENT_OR_DOC = re.compile(r"""^\s*(?:\#(?!\s*include)|//|/\*|\*|[rbuRBU]?["']{3}|--)""")
_CUT = re.compile(r"^\s*\S{0,2}\s*lines \d+-\d+: imports, not shown$")


def _import_lines(source: list[str]) -> tuple[set[int], set[int]]:
    """(the lines of the leading run's imports, the other import lines) of a fenced
    block's source, by index: the leading run is the block's lines up to its first line of
    code (imports, comments, docstrings and blank lines); an import's continuation lines
    (inside its parentheses or braces) count as import lines."""
    leading: set[int] = set()
    other: set[int] = set()
    in_code = False
    depth = 0
    for n, line in enumerate(source):
        if depth > 0 or _IMPORT.match(line):
            (other if in_code else leading).add(n)
            depth = max(
                depth + line.count("(") + line.count("{") - line.count(")") - line.count("}"), 0
            )
            continue
        if line.strip() and not _COMMENT_OR_DOC.match(line):
            in_code = True
    return leading, other


def parts_of(markdown: str) -> Counter[str]:
    """The printed markdown's tokens by part (`PARTS`): each line with its line break."""
    out: Counter[str] = Counter()
    lines = markdown.split("\n")
    section = ""
    fence: list[str] | None = None
    after_heading = False
    for n, line in enumerate(lines):
        cost = (len(line) + 1) / 3
        if fence is not None:
            if line.startswith("```"):
                leading, other = _import_lines(fence)
                for i, src in enumerate(fence):
                    part = (
                        "source: cut marker"
                        if _CUT.match(src)
                        else "source: leading imports"
                        if i in leading
                        else "source: other imports"
                        if i in other
                        else "source: code"
                    )
                    out[part] += (len(src) + 1) / 3
                out["fences"] += cost
                fence = None
            else:
                fence.append(line)
            continue
        if n == 0 or (line.startswith("_") and line.endswith("_")):
            out["title and summary"] += cost
        elif line.startswith("## "):
            section = line[3:].strip()
            out["headings"] += cost
        elif line.startswith("### "):
            out["block headings"] += cost
            after_heading = True
            continue
        elif line.startswith("```"):
            out["fences"] += cost
            fence = []
        elif not line.strip():
            out["blank lines"] += cost
        elif section == "Files" and line.startswith("- "):
            head, sep, _ = line.partition("): ")
            out["files: paths and scores"] += (len(head) + len(sep) + 1) / 3
            out["files: reasons"] += (len(line) - len(head) - len(sep)) / 3
        elif section == "Definitions" and line.startswith("- "):
            out["definitions"] += cost
        elif section == "Context" and line.startswith("- "):
            out["signature lines"] += cost
        elif section == "Context" and after_heading:
            out["block reasons"] += cost
        else:
            out["other"] += cost
        after_heading = False
    return out


class Placing:
    """Records every range `ask._place` tries while one answer is packed (`--placing`)."""

    def __init__(self) -> None:
        self.tries: list[dict[str, Any]] = []
        self.roles: dict[int, str] = {}
        place, order = ask_module._place, ask_module._placing_order

        def placing_order(leads_by_file: Any, items: Any, packing: Any) -> Any:
            lead, first, early, more = order(leads_by_file, items, packing)
            self.roles = {id(it): "item" for it in items}
            self.roles.update({id(it): "paired" for it in first})
            self.roles.update({id(it): "next" for it in [*early, *more]})
            self.roles.update({id(it): "lead" for it in lead})
            return lead, first, early, more

        def recorded(blocks: Any, searcher: Any, it: Any, start: int, end: int, *rest: Any) -> Any:
            symbol, kind, used, whole, cost, entry = rest
            out = place(blocks, searcher, it, start, end, symbol, kind, used, whole, cost, entry)
            wide = out or place(
                blocks, searcher, it, start, end, symbol, kind, used, 10**9, cost, entry
            )
            self.tries.append(
                {
                    "path": it.hit.path,
                    "start": start,
                    "end": end,
                    "role": self.roles.get(id(it), "item"),
                    "relevance": it.relevance,
                    "used": used,
                    "cap": whole,
                    "after": wide[1] if wide else None,
                    "fit": out is not None,
                }
            )
            return out

        ask_module._place, ask_module._placing_order = recorded, placing_order


def misses(dataset: Path, path: Path) -> None:
    """Over a `--placing` file: the tried ranges that hold changed lines, did not fit and
    are not shown, and those of them an earlier placed block (holding no changed line)
    kept out: left out, it would have freed the tokens they lacked."""
    gold = {i.instance_id: i.gold_lines for i in load_dataset(dataset) if i.gold_lines}
    preds = {p.instance_id: p for p in load_predictions(path.with_suffix("").with_suffix(".jsonl"))}
    lost = displaced = instances = roomy = 0
    for line in path.read_text().splitlines():
        row = json.loads(line)
        iid = row["instance_id"]
        lines = gold.get(iid, {})
        shown: dict[str, set[int]] = {}
        for s in preds[iid].context_spans or []:
            shown.setdefault(s.path, set()).update(range(s.start, s.end + 1))

        def golden(t: dict[str, Any], lines: Any = lines) -> set[int]:
            return {
                n
                for a, b in lines.get(t["path"], [])
                for n in range(max(a, t["start"]), min(b, t["end"]) + 1)
            }

        placed: list[dict[str, Any]] = []
        found: dict[tuple[str, int, int], bool] = {}
        for t in row["tries"]:
            if t["fit"]:
                placed.append(t)
                continue
            missing = golden(t) - shown.get(t["path"], set())
            key = (t["path"], t["start"], t["end"])
            if not missing or t["after"] is None or key in found:
                continue
            lack = t["after"] - t["cap"]
            cut = [
                p
                for p in placed
                if not golden(p)
                and p["after"] - p["used"] >= lack
                and not (
                    p["path"] == t["path"]
                    and p["start"] <= t["end"] + 1
                    and t["start"] <= p["end"] + 1
                )
            ]
            found[key] = bool(cut)
            print(
                f"  {iid} {t['path']}:{t['start']}-{t['end']} {t['role']} lacks {lack}"
                + (f", {len(cut)} earlier could give it room: " if cut else "")
                + ", ".join(f"{p['path']}:{p['start']}-{p['end']} {p['role']}" for p in cut[:3])
            )
        lost += len(found)
        displaced += sum(found.values())
        instances += bool(found)
        roomy += any(found.values())
    print(
        f"{path.name}: {lost} tried ranges with changed lines not shown ({instances} instances); "
        f"{displaced} ({roomy} instances) would have fitted without one earlier block"
    )


def table(paths: list[Path]) -> None:
    for path in paths:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        total = statistics.mean(sum(r["parts"].values()) for r in rows)
        cpu = [r["best_parts_cpu"] for r in rows if "best_parts_cpu" in r]
        timing = f", best parts {statistics.mean(cpu) * 1000:.1f} ms CPU on average" if cpu else ""
        print(f"{path.name}: {len(rows)} answers, {total:.0f} tokens on average{timing}")
        for part in PARTS:
            mean = statistics.mean(r["parts"].get(part, 0.0) for r in rows)
            if mean:
                print(f"  {part:<26} {mean:7.1f}  {mean / total:6.1%}")


def compare(dataset: Path, base: Path, other: Path) -> None:
    """The instances whose share of the fix's changed lines shown rose or fell from
    `base`'s predictions to `other`'s (those both hold)."""
    gold = {i.instance_id: i.gold_lines for i in load_dataset(dataset) if i.gold_lines}
    before = {p.instance_id: p for p in load_predictions(base)}
    after = {p.instance_id: p for p in load_predictions(other)}
    up, down = [], []
    for iid in sorted(set(before) & set(after) & set(gold)):
        a = _line_cover(gold[iid], before[iid].context_spans or [])[0]
        b = _line_cover(gold[iid], after[iid].context_spans or [])[0]
        if b > a:
            up.append(f"{iid} {a:.2f} -> {b:.2f}")
        elif b < a:
            down.append(f"{iid} {a:.2f} -> {b:.2f}")
    print(f"{other.name} against {base.name}: {len(up)} up, {len(down)} down")
    for line in up:
        print("  up  ", line)
    for line in down:
        print("  down", line)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--table", type=Path, nargs="+")
    ap.add_argument("--compare", type=Path, nargs=2, metavar=("BASE", "OTHER"))
    ap.add_argument("--misses", type=Path)
    ap.add_argument("--placing", action="store_true")
    ap.add_argument("--dataset", type=Path)
    ap.add_argument("--repos", type=Path)
    ap.add_argument("--work", type=Path)
    ap.add_argument("--out", type=Path, help="directory of predictions and parts")
    ap.add_argument("--repo")
    ap.add_argument("--instances", default="")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--budgets", default="4000,2000")
    ap.add_argument("variants", nargs="*")
    args = ap.parse_args(argv)
    if args.table:
        table(args.table)
        return 0
    if args.compare:
        if not args.dataset:
            ap.error("--compare needs --dataset")
        compare(args.dataset, *args.compare)
        return 0
    if args.misses:
        if not args.dataset:
            ap.error("--misses needs --dataset")
        misses(args.dataset, args.misses)
        return 0
    if not (args.dataset and args.repos and args.work and args.out and args.variants):
        ap.error("--dataset, --repos, --work, --out and a VARIANT are needed")
    variants = [parse_variant(v) for v in args.variants]
    budgets = [int(b) for b in args.budgets.split(",")]
    try:
        chosen = select_instances(
            load_dataset(args.dataset),
            instances=[i for i in args.instances.split(",") if i],
            repo=args.repo,
            limit=args.limit,
            source=args.dataset,
        )
    except EvalError as e:
        raise SystemExit(f"context_parts: {e}") from None
    args.out.mkdir(parents=True, exist_ok=True)
    outs = {(v.name, b): args.out / f"{v.name}-{b}.jsonl" for v in variants for b in budgets}
    pending = {key: {i.instance_id for i in unrecorded(chosen, path)} for key, path in outs.items()}
    todo = [i for i in chosen if any(i.instance_id in ids for ids in pending.values())]
    runs = prepared_runs(todo, args.repos, args.work, embedder=get_embedder(), budget=budgets[0])
    # The loop does not depend on the budget or the packing: run it once per question.
    loop_of = ask_module._loop_and_history
    memo: dict[tuple[int, str], Any] = {}

    def memo_loop(searcher: Any, question: str, *rest: Any) -> Any:
        key = (id(searcher), question)
        if key not in memo:
            memo[key] = loop_of(searcher, question, *rest)
        return memo[key]

    ask_module._loop_and_history = memo_loop
    placing = Placing() if args.placing else None
    for inst, run, seconds in runs:
        memo.clear()
        for variant in variants:
            name, packing = variant.name, variant.packing
            use_frame(variant.frame)
            use_rankings(variant.without)
            for budget in budgets:
                if inst.instance_id not in pending[(name, budget)]:
                    continue
                _PARTS_CPU[0] = 0.0
                if placing is not None:
                    placing.tries = []
                # What `MethodRunner.query("ask", ...)` delivers, with the markdown kept.
                report = investigate(
                    run.searcher, inst.problem_statement, budget=budget, packing=packing
                )
                printed = fit_report(report, budget, "markdown")
                markdown = render_report(printed)
                spans = _ask_spans(run.tree, printed)
                answer = Answer(
                    found=[f.path for f in report.files][: run.found_limit],
                    context=_files_of(spans),
                    tokens=estimate_tokens(markdown),
                    seconds=0.0,
                    functions=list(
                        dict.fromkeys(f"{d.path}::{d.qualified_name}" for d in report.definitions)
                    ),
                    spans=spans,
                )
                pred = answer.prediction(inst.instance_id, "ask", seconds["dowse"])
                with outs[(name, budget)].open("a", encoding="utf-8") as out:
                    out.write(pred.model_dump_json() + "\n")
                record = {
                    "instance_id": inst.instance_id,
                    "mode": printed.mode,
                    "tokens": estimate_tokens(markdown),
                    "parts": dict(parts_of(markdown)),
                    "best_parts_cpu": round(_PARTS_CPU[0], 4),
                }
                with outs[(name, budget)].with_suffix(".parts.jsonl").open("a") as out:
                    out.write(json.dumps(record) + "\n")
                if placing is not None:
                    tries = {"instance_id": inst.instance_id, "tries": placing.tries}
                    with outs[(name, budget)].with_suffix(".placing.jsonl").open("a") as out:
                        out.write(json.dumps(tries) + "\n")
        print(inst.instance_id, file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
