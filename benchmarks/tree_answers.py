"""A tree's lexical index built in row order, and its answers, to compare two codes.

Usage:
    python benchmarks/tree_answers.py --repo TREE --questions FILE --out DIR

Builds TREE's index (`--no-embed --no-history`, `--rebuild`) in this process with one
parser (`IndexConfig.workers=1`): a pool's files come back in the order its workers
finish them, and the tables keep that order, which decides ties among equal scores; one
parser writes them in the walk's order, so two builds of the same tree hold the same rows
in the same order. Then writes `dowse search --json` and `dowse ask --json` for each
question of FILE (one a line) into DIR (`search-N.json`, `ask-N.json`, their `timings`
left out). Run it with the old and the new code on PYTHONPATH and diff the two
directories:

    PYTHONPATH=<old> python benchmarks/tree_answers.py --repo T --questions Q --out /tmp/a
    PYTHONPATH=<new> python benchmarks/tree_answers.py --repo T --questions Q --out /tmp/b
    diff -r /tmp/a /tmp/b && echo identical
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from dowse.cli import cli
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.embed import get_embedder


def untimed(value: Any) -> Any:
    """An answer without its timings, which differ from run to run."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k != "timings"}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    repo = args.repo.resolve()
    config = IndexConfig(embed=False, history=False, rebuild=True, workers=1)
    build_index(repo, config=config, embedder=get_embedder())
    args.out.mkdir(parents=True, exist_ok=True)
    runner = CliRunner()
    questions = [q for q in args.questions.read_text().splitlines() if q.strip()]
    for n, question in enumerate(questions, 1):
        for command in ("search", "ask"):
            result = runner.invoke(
                cli, [command, question, "--path", str(repo), "--json", "--no-refresh"]
            )
            if result.exit_code != 0:
                raise SystemExit(f"{command} {question!r}: {result.output}")
            answer = untimed(json.loads(result.output))
            (args.out / f"{command}-{n}.json").write_text(json.dumps(answer, indent=1) + "\n")
    print(f"{len(questions)} questions answered into {args.out}")


if __name__ == "__main__":
    main()
