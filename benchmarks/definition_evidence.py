"""What a definition's own body says of the behaviour a question asks about, measured on
the ranked definitions' records (`benchmarks/function_ranking.py record`).

Usage:
    python benchmarks/definition_evidence.py RECORD.jsonl [RECORD.jsonl ...]
        --dataset DEV.jsonl [--dataset MORE.jsonl] --repos CLONES [--folds 5] [--seed 0]
        [--fit-on RECORD.jsonl ...] [--shipped] [--weight W]
        [--fixed NAME,WEIGHT,PENALTY]

Each recorded candidate (every behaviour definition of an answer's first ten files, with
its places in the seven rankings) is read at the instance's base commit from the bare
clone (`CLONES/<owner>__<name>`), its own lines (not a nested definition's) split by
`retrieval.behaviour.behaviour_words`. Evidence measured, each as one more ranking fused
like the others (`1 / (RRF_K + place)`, ties sharing the mean of their places; a
definition with none of it is not in the ranking), or as a penalty:

- `decides`: the question's words (stemmed) on its lines that branch, fail or handle a
  failure (raise / throw / panic / error returns, `if` / `match` / `case` / `except`),
  each word weighted by its rarity among the ranked files' definitions (idf);
  (`decides_count`: counting the words alike);
- `strings`: the same inside its string literals (an error message);
- `both`: the two together (`both_count`: counting the words alike);
- `lines`: `decides` summed line by line (three branches about it count three times;
  `lines_log`: each word's rarity times `1 + ln(the lines holding it)`);
- `calls`: it calls a function the question names (a caller of it);
- `gate_decides`, `gate_both`: not a ranking but a factor: the score of a definition
  without `decides` (`both`) evidence scaled by `1 - weight`;
- `declaration`: a penalty for a type with no code but its signature (an exception
  class, a class header: `definitions.is_declaration`).

The replay is function_ranking.py's (its `found` with the shipped parameters is checked
first). For each variant the weight (and the fit's two parameters: files ranked, the
context's weight; the file's weight stays 0) is chosen per fold on the other folds by
FuncAcc@5 then @10 then @1 and scored on the held-out fold; `--fit-on` fits on other
records instead (scoring the given ones outside), and prints the instances up / down.
"""

from __future__ import annotations

import argparse
import functools
import math
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dowse.evaluation.swebench import _function_rank, load_dataset
from dowse.retrieval.definitions import is_declaration, own_behaviour, question_stems
from dowse.retrieval.file_parts import RRF_K
from dowse.retrieval.query import analyze

sys.path.insert(0, str(Path(__file__).parent))
from crossval import folds_of  # noqa: E402
from function_ranking import FILES, Task, load, metrics  # noqa: E402
from function_ranking import found as fr_found  # noqa: E402

EVIDENCE = (
    "decides",
    "decides_count",
    "strings",
    "both",
    "both_count",
    "lines",
    "lines_log",
    "calls",
)
GATES = ("gate_decides", "gate_both")


@functools.lru_cache(maxsize=4096)
def _source(git_dir: str, commit: str, path: str) -> list[str]:
    out = subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
        capture_output=True,
        check=False,
    )
    return out.stdout.decode("utf-8", "replace").split("\n")


def question_words(text: str) -> tuple[frozenset[str], set[str]]:
    """The question's stemmed words (`definitions.question_stems`) and the names it
    writes as code (their last parts: functions a definition may call)."""
    analysis = analyze(text)
    names = {i.split(".")[-1] for i in analysis.identifiers}
    return question_stems(analysis), {n for n in names if len(n) >= 3}


@dataclass
class Body:
    deciding: tuple[frozenset[str], ...]
    strings: frozenset[str]
    code_lines: int
    calls: frozenset[str]


def bodies(record: dict[str, Any], commit: str, git_dir: Path, names: set[str]) -> list[Body]:
    """Each candidate's `behaviour_words` of its own lines, in the record's order."""
    cands = record["candidates"]
    by_path: dict[str, list[int]] = {}
    for i, c in enumerate(cands):
        by_path.setdefault(c["path"], []).append(i)
    out: list[Body] = [Body((), frozenset(), 0, frozenset())] * len(cands)
    for path, idx in by_path.items():
        lines = _source(str(git_dir), commit, path)
        for i in idx:
            c = cands[i]
            lo, hi = int(c["start_line"]), int(c["end_line"])
            inside = [cands[j] for j in idx if j != i]
            words = own_behaviour(lines, c, inside)
            skip = {
                n
                for o in inside
                if lo <= o["start_line"]
                and o["end_line"] <= hi
                and (o["start_line"], o["end_line"]) != (lo, hi)
                for n in range(o["start_line"], o["end_line"] + 1)
            }
            own = "\n".join(  # its own lines, without the signature's
                lines[n - 1] for n in range(lo + 1, min(hi, len(lines)) + 1) if n not in skip
            )
            own_name = c["qualified_name"].split(".")[-1]
            calls = frozenset(
                n for n in names if n != own_name and re.search(rf"\b{re.escape(n)}\s*\(", own)
            )
            out[i] = Body(words.deciding, words.strings, words.code_lines, calls)
    return out


@dataclass
class Evidence:
    task: Task
    terms: dict[str, dict[int, np.ndarray]]
    """Each evidence's ranking term `1 / (RRF_K + place)` per candidate, by files ranked."""
    declaration: np.ndarray


def _places(scores: np.ndarray) -> np.ndarray:
    """`1 / (RRF_K + place)` of each positive score's place (ties sharing the mean), 0
    for no evidence."""
    out = np.zeros(len(scores))
    before = 0
    for value in sorted({s for s in scores if s > 0}, reverse=True):
        group = np.flatnonzero(scores == value)
        out[group] = 1 / (RRF_K + before + (len(group) - 1) / 2)
        before += len(group)
    return out


def evidence_of(task: Task, record: dict[str, Any], inst: Any, git_dir: Path) -> Evidence:
    words, names = question_words(inst.problem_statement)
    found = bodies(record, inst.base_commit, git_dir, names)
    file_rank = task.file_rank
    terms: dict[str, dict[int, np.ndarray]] = {e: {} for e in EVIDENCE}
    for files in FILES:
        mine = file_rank < files
        sets = {
            "decides": [frozenset().union(*b.deciding) & words for b in found],
            "strings": [b.strings & words for b in found],
            "both": [(frozenset().union(*b.deciding) | b.strings) & words for b in found],
        }
        terms["decides_count"][files] = _places(
            np.array([len(sets["decides"][i]) if mine[i] else 0 for i in range(len(found))], float)
        )
        both = sets["both"]
        terms["both_count"][files] = _places(
            np.array([len(both[i]) if mine[i] else 0 for i in range(len(found))], float)
        )
        for name, held in sets.items():
            df: dict[str, int] = {}
            for i in np.flatnonzero(mine):
                for w in held[i]:
                    df[w] = df.get(w, 0) + 1
            n = int(mine.sum())
            idf = {w: math.log((n + 1) / (d + 0.5)) for w, d in df.items()}
            scores = np.array(
                [sum(idf[w] for w in held[i]) if mine[i] else 0.0 for i in range(len(found))]
            )
            terms[name][files] = _places(np.round(scores, 6))
            if name == "decides":  # each deciding line's words, line by line
                per_line = np.array(
                    [
                        sum(idf.get(w, 0.0) for line in b.deciding for w in line & words)
                        if mine[i]
                        else 0.0
                        for i, b in enumerate(found)
                    ]
                )
                terms["lines"][files] = _places(np.round(per_line, 6))
                damped = np.array(
                    [
                        sum(
                            idf.get(w, 0.0) * (1 + math.log(sum(w in line for line in b.deciding)))
                            for w in held[i]
                        )
                        if mine[i]
                        else 0.0
                        for i, b in enumerate(found)
                    ]
                )
                terms["lines_log"][files] = _places(np.round(damped, 6))
        calls = np.array([len(b.calls) if mine[i] else 0 for i, b in enumerate(found)], float)
        terms["calls"][files] = _places(calls)
    declaration = np.array(
        [
            is_declaration(c["kind"], b.code_lines)
            for c, b in zip(record["candidates"], found, strict=True)
        ],
        dtype=float,
    )
    for name in GATES:  # whether it holds any of the question's words, by files (all alike)
        held = sets["decides" if name == "gate_decides" else "both"]
        has = np.array([bool(h) for h in held], dtype=float)
        terms[name] = {files: has for files in FILES}
    return Evidence(task, terms, declaration)


Params = tuple[int, float, str, float, float]
"""(files ranked, context weight, evidence, its weight, the declaration's penalty)."""


def found(ev: Evidence, params: Params) -> list[str]:
    files, context_weight, name, weight, penalty = params
    t = ev.task
    score = t.fused[files] + context_weight * t.context[files]
    if weight and name in GATES:  # no such evidence: the score scaled down by `weight`
        score = score * np.where(ev.terms[name][files] > 0, 1.0, 1.0 - weight)
    elif weight:
        score = score + weight * ev.terms[name][files]
    if penalty:
        score = score - penalty * ev.declaration
    score = np.round(score, 4)
    keep = np.flatnonzero(t.file_rank < files)
    order = keep[np.lexsort((keep, t.file_rank[keep], -score[keep]))]
    return list(dict.fromkeys(t.names[i] for i in order))[:50]


def alone_of(ev: Evidence, name: str) -> list[str]:
    """The definitions the evidence `name` ranks among the first five files', in order."""
    term = ev.terms[name][5]
    order = sorted(np.flatnonzero(term > 0), key=lambda i: (-term[i], i))
    return list(dict.fromkeys(ev.task.names[i] for i in order))


def score_of(evs: Sequence[Evidence], params: Params) -> dict[str, float]:
    return metrics([e.task for e in evs], [found(e, params) for e in evs])


WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)
GATE_WEIGHTS = (0.0, 0.1, 0.25, 0.5)
PENALTIES = (0.0, 0.1, 0.2, 0.5)


def grid(
    name: str, penalty: bool, shipped: bool = False, weight: float | None = None
) -> list[Params]:
    """The grid of a variant; `shipped`: the files ranked and the context's weight kept
    at the shipped 5 and 1, only the evidence's weight (and the penalty) fitted;
    `weight`: the evidence's weight fixed (the other rankings' 1: no new parameter)."""
    weights = GATE_WEIGHTS if name in GATES else WEIGHTS if name != "none" else (0.0,)
    if weight is not None and name != "none":
        weights = (weight,)
    return [
        (files, cw, name, w, p)
        for files in ((5,) if shipped else FILES)
        for cw in ((1.0,) if shipped else (0.0, 0.5, 1.0, 2.0, 4.0))
        for w in weights
        for p in (PENALTIES if penalty else (0.0,))
    ]


def best_of(evs: Sequence[Evidence], params: Sequence[Params]) -> Params:
    def key(p: Params) -> tuple[float, float, float]:
        m = score_of(evs, p)
        return m["f5"], m["f10"], m["f1"]

    return max(params, key=key)


def crossvalidate(
    evs: Sequence[Evidence], fitter: Callable[[Sequence[Evidence]], Params], k: int, seed: int
) -> tuple[dict[str, float], list[Params], list[list[str]]]:
    fold = folds_of([e.task for e in evs], k, seed, "stratified")
    lists: list[list[str]] = [[] for _ in evs]
    fitted = []
    for f in range(k):
        params = fitter([e for e, g in zip(evs, fold, strict=True) if g != f])
        fitted.append(params)
        for i, e in enumerate(evs):
            if fold[i] == f:
                lists[i] = found(e, params)
    return metrics([e.task for e in evs], lists), fitted, lists


def load_evidence(records: Sequence[Path], datasets: Sequence[Path], repos: Path) -> list[Evidence]:
    insts = {i.instance_id: i for d in datasets for i in load_dataset(d)}
    lines = {}
    for path in records:
        for line in path.read_text().splitlines():
            r = __import__("json").loads(line)
            lines[r["instance_id"]] = r
    out = []
    for task in load(records):
        r, inst = lines[task.id], insts[task.id]
        out.append(evidence_of(task, r, inst, repos / inst.repo.replace("/", "__")))
    return out


def ranks(evs: Sequence[Evidence], lists: Sequence[Sequence[str]]) -> dict[str, int]:
    return {e.task.id: _function_rank(e.task.gold, f) for e, f in zip(evs, lists, strict=True)}


def moved(before: dict[str, int], after: dict[str, int]) -> str:
    """Instances whose last gold function moved, among those it was or is among the first
    ten of."""

    def fmt(i: str) -> str:
        b, a = (r if r <= 50 else "-" for r in (before[i], after[i]))
        return f"{i.split('-')[-1]} {b}->{a}"

    near = [i for i in after if min(before[i], after[i]) <= 10]
    up = [fmt(i) for i in near if after[i] < before[i]]
    down = [fmt(i) for i in near if after[i] > before[i]]
    return f"up {len(up)} ({', '.join(up)}); down {len(down)} ({', '.join(down)})"


def row(label: str, m: dict[str, float]) -> None:
    print(f"| {label} | {m['f1']:.1f} | {m['f5']:.1f} | {m['f10']:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("records", type=Path, nargs="+")
    parser.add_argument("--dataset", type=Path, action="append", required=True)
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fit-on", type=Path, nargs="+")
    parser.add_argument(
        "--shipped", action="store_true", help="fit the evidence's weight only (5 files, 1)"
    )
    parser.add_argument("--weight", type=float, help="the evidence's weight, not fitted")
    parser.add_argument("--fixed", help="score this variant only: NAME,WEIGHT,PENALTY")
    args = parser.parse_args()
    evs = load_evidence(args.records, args.dataset, args.repos)
    print(f"{len(evs)} instances with gold functions")
    print("| evidence | FuncAcc@1 | FuncAcc@5 | FuncAcc@10 |\n|---|---|---|---|")
    shipped: Params = (5, 1.0, "none", 0.0, 0.0)
    base = [found(e, shipped) for e in evs]
    row("shipped (5 files, context weight 1)", score_of(evs, shipped))
    assert base == [fr_found(e.task, (5, 0.0, 1.0, False)) for e in evs]  # the replay's
    for name in EVIDENCE:  # the evidence alone, as a ranking of the five files'
        alone = [alone_of(e, name) for e in evs]
        row(f"{name} alone", metrics([e.task for e in evs], alone))
    if args.fixed:
        name, w, p = args.fixed.split(",")
        params: Params = (5, 1.0, name, float(w), float(p))
        row(f"{params}", score_of(evs, params))
        print(moved(ranks(evs, base), ranks(evs, [found(e, params) for e in evs])))
        return
    variants = [("none", False), *((e, False) for e in (*EVIDENCE, *GATES)), ("none", True)]
    variants += [(e, True) for e in (*EVIDENCE, *GATES)]
    if args.fit_on:
        train = load_evidence(args.fit_on, args.dataset, args.repos)
        for name, pen in variants:
            params = best_of(train, grid(name, pen, args.shipped, args.weight))
            lists = [found(e, params) for e in evs]
            row(
                f"{name}{' + declaration' if pen else ''}: fitted outside {params}",
                metrics([e.task for e in evs], lists),
            )
            print(moved(ranks(evs, base), ranks(evs, lists)))
        return
    for name, pen in variants:
        held, fitted, lists = crossvalidate(
            evs,
            functools.partial(best_of, params=grid(name, pen, args.shipped, args.weight)),
            args.folds,
            args.seed,
        )
        label = f"{name}{' + declaration' if pen else ''}"
        row(f"{label}: held out, per fold {sorted(set(fitted))}", held)
        print(f"    {moved(ranks(evs, base), ranks(evs, lists))}")


if __name__ == "__main__":
    main()
