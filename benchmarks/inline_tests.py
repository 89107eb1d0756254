"""How much of a recorded answer's context is a code file's own tests: the lines of the
shown blocks inside definitions a test attribute marks (`languages.is_test_attribute`:
Rust's `#[cfg(test)]` modules and `#[test]` functions, JUnit's `@Test`), in files that are
not tests by their path.

Usage:
    python benchmarks/inline_tests.py --dataset DEV.jsonl --repos CLONES --pred PRED.jsonl
        [--pred MORE.jsonl ...] [--method ask]

Each file is read at the instance's base commit and parsed as dowse parses it. Printed
per repository: the instances, how many show any such line, the shown lines and the share
of them that are such tests.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

from dowse.indexer.parse import parse_source
from dowse.languages import is_test_attribute, is_test_path, language_for

sys.path.insert(0, str(Path(__file__).parent))
from gold_breakdown import base_lines, git_dir  # noqa: E402


def test_lines(lines: tuple[str, ...], path: str) -> set[int]:
    """The lines of definitions a test attribute marks, in the file `lines` at `path`."""
    language = language_for(path)
    if language is None or is_test_path(path):
        return set()
    parsed = parse_source(path, "\n".join(lines).encode(), language, timeout_s=20)
    out: set[int] = set()
    for s in parsed.symbols:
        if any(is_test_attribute(d) for d in s.decorators):
            out.update(range(s.start_line, s.end_line + 1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--pred", type=Path, action="append", required=True)
    ap.add_argument("--method", default="ask")
    args = ap.parse_args()
    tasks = {}
    for line in args.dataset.read_text().splitlines():
        if line.strip():
            t = json.loads(line)
            tasks[t["instance_id"]] = t
    count: collections.Counter[tuple[str, str]] = collections.Counter()
    for pred in args.pred:
        for line in pred.read_text().splitlines():
            p = json.loads(line)
            if p.get("method") != args.method or p["instance_id"] not in tasks:
                continue
            task = tasks[p["instance_id"]]
            repo, git = task["repo"], git_dir(args.repos, task["repo"])
            cache: dict[str, set[int]] = {}
            shown = tested = 0
            for span in p.get("context_spans", []):
                path = span["path"]
                if path not in cache:
                    cache[path] = test_lines(base_lines(git, task["base_commit"], path), path)
                lines = range(span["start"], span["end"] + 1)
                shown += len(lines)
                tested += sum(n in cache[path] for n in lines)
            count[repo, "instances"] += 1
            count[repo, "with tests"] += tested > 0
            count[repo, "lines"] += shown
            count[repo, "test lines"] += tested
    print("| repository | instances | showing test lines | lines shown | of them tests |")
    print("|---|---|---|---|---|")
    for repo in sorted({r for r, _ in count}):
        lines, tests = count[repo, "lines"], count[repo, "test lines"]
        print(
            f"| {repo} | {count[repo, 'instances']} | {count[repo, 'with tests']} | {lines} | "
            f"{tests} ({100 * tests / max(lines, 1):.1f} %) |"
        )


if __name__ == "__main__":
    main()
