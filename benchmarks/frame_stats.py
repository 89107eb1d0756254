"""Where a task's stack trace points: is the fixed file its innermost repository frame?

Usage:
    python benchmarks/frame_stats.py --dataset DEV.jsonl --repos CLONES [--paths]

For every task whose text holds stack-trace frames (as `retrieval.query.analyze` reads
them, innermost last), the frames' paths are resolved against the files of the task's
base commit (`git ls-tree`; a path names the files sharing its longest tail, at least two
components: `retrieval.lookups.tail_matches`, as search does; frames naming several files
are left out). It prints, per task, where the gold files lie — the innermost resolved frame's file
(`innermost`), the outermost one's (`outermost`), another frame's (`other`), none of them
(`none`) — and the counts. This measured the prior behind the evaluator's `raised`
feature (benchmarks/RESULTS-eval.md, section 9).

`--paths` counts instead every path and dotted module name a task's text holds (frames or
not) by how many files of its base commit it names (1, 2-3, 4-10, more), and how many of
each kind name the fixed file: the measure behind `PoolLimits.few_named` in retrieval/pool.py
(RESULTS-eval.md, section 12).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import Counter
from pathlib import Path

from dowse.retrieval.lookups import by_file_name, files_for  # noqa: E402
from dowse.retrieval.query import analyze  # noqa: E402


def repo_files(clone: Path, commit: str) -> dict[str, list[tuple[str, ...]]]:
    """The files of `commit` as path components, by file name."""
    out = subprocess.run(
        ["git", "-C", str(clone), "ls-tree", "-r", "--name-only", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return by_file_name(out.splitlines())


def resolve(path: str, by_name: dict[str, list[tuple[str, ...]]]) -> str | None:
    """The one file of the commit a frame's path names, else None."""
    found = files_for(path, by_name)
    return found[0] if len(found) == 1 else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument(
        "--repos", type=Path, required=True, help="directory of git clones named <owner>__<name>"
    )
    parser.add_argument(
        "--paths",
        action="store_true",
        help="how many files the tasks' paths name, and the fixed file",
    )
    args = parser.parse_args(argv)
    if args.paths:
        named_counts(args.dataset, args.repos)
        return
    counts: Counter[str] = Counter()
    for line in args.dataset.open():
        task = json.loads(line)
        frames = analyze(task["problem_statement"]).frames
        if not frames:
            continue
        by_name = repo_files(args.repos / task["repo"].replace("/", "__"), task["base_commit"])
        files = list(dict.fromkeys(f for p, _, _ in frames if (f := resolve(p, by_name))))
        if not files:
            continue
        gold = set(task["gold_files"])
        where = (
            "innermost"
            if files[-1] in gold
            else "outermost"
            if files[0] in gold
            else "other"
            if gold & set(files)
            else "none"
        )
        counts[where] += 1
        print(f"{task['instance_id']:40} {where:9} {len(files):2} frames' files")
    print(
        f"{sum(counts.values())} tasks with repository frames: "
        + ", ".join(f"{k} {counts[k]}" for k in ("innermost", "outermost", "other", "none"))
    )


def named_counts(dataset: Path, repos: Path) -> None:
    kinds = ("1", "2-3", "4-10", "more")
    paths: Counter[str] = Counter()
    gold_named: Counter[str] = Counter()
    for line in dataset.open():
        task = json.loads(line)
        analysis = analyze(task["problem_statement"])
        by_name = repo_files(repos / task["repo"].replace("/", "__"), task["base_commit"])
        for path in dict.fromkeys([*analysis.paths, *analysis.modules]):
            found = files_for(path, by_name)
            if not found:
                continue
            n = len(found)
            kind = kinds[0] if n == 1 else kinds[1] if n <= 3 else kinds[2] if n <= 10 else kinds[3]
            paths[kind] += 1
            gold_named[kind] += bool(set(task["gold_files"]) & set(found))
            if n > 3:
                print(f"{task['instance_id']:40} {path[-50:]:50} names {n:4} files")
    for kind in kinds:
        print(
            f"paths naming {kind:>4} files: {paths[kind]:4}, naming the fixed file "
            f"{gold_named[kind]}"
        )


if __name__ == "__main__":
    main()
