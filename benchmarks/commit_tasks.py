"""A SWE-bench-style dataset from a repository's own commits whose subject matches a pattern.

For each of the last `--scan` non-merge commits of CLONE whose subject matches
`--subject` (by default a long flag: `fix: --print0 now works with --exec`) and that
changes code files other than tests, one instance: the commit message is the question,
the parent the base commit, the changed code files the gold. For checking a ranking rule
outside the benchmark's split on the kind of question it is about (`dowse eval history`
replays every recent commit instead):

    python benchmarks/commit_tasks.py CLONE --repo OWNER/NAME [--subject REGEX] \\
        [--scan 400] [--limit 30] > TASKS.jsonl
    dowse eval swebench --dataset TASKS.jsonl --repos CLONES --methods ask --out PRED.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

from dowse.languages import is_documentation, is_test_path, language_for


def git(clone: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(clone), *args], capture_output=True, text=True, errors="replace"
    )
    if out.returncode != 0:
        raise SystemExit(f"error: git {args[0]}: {out.stderr.strip().splitlines()[-1:]}")
    return out.stdout


def is_code(path: str) -> bool:
    language = language_for(path)
    return language is not None and not is_documentation(path, language) and not is_test_path(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clone", type=Path)
    ap.add_argument("--repo", required=True, help="owner/name, as the dataset names it")
    ap.add_argument("--subject", default=r"(?<![\w-])--[a-z][a-z0-9-]+")
    ap.add_argument("--scan", type=int, default=400, help="how many recent commits to read")
    ap.add_argument("--limit", type=int, default=30)
    a = ap.parse_args()
    pattern = re.compile(a.subject)
    log = git(a.clone, "log", f"-{a.scan}", "--no-merges", "--format=%H%x00%P%x00%s")
    n = 0
    for line in log.splitlines():
        sha, parents, subject = line.split("\0")
        if " " in parents or not parents or not pattern.search(subject):
            continue
        changed = git(a.clone, "diff", "--name-only", parents, sha).split()
        gold = [p for p in changed if is_code(p)]
        if not gold:
            continue
        message = git(a.clone, "log", "-1", "--format=%B", sha).strip()
        row = {
            "instance_id": f"{a.repo.replace('/', '__')}-{sha[:10]}",
            "repo": a.repo,
            "base_commit": parents,
            "problem_statement": message,
            "gold_files": gold,
        }
        print(json.dumps(row))
        n += 1
        if n >= a.limit:
            break


if __name__ == "__main__":
    main()
