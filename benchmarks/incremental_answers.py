"""One tree indexed three ways, and whether they answer alike.

Usage:
    python benchmarks/incremental_answers.py --clone GIT --commit C --old-commit O \
        --dataset D.jsonl --repo OWNER/NAME --work DIR [--embed none|files] [--json]

Checks out GIT (a bare mirror or any clone) at C into DIR/tree and indexes it three
times, each index outside the tree: `fresh` (a rebuild, the parser pool), `one` (a
rebuild, one parser: rows in the walk's order), `incremental` (a rebuild at O, then the
tree checked out at C and indexed again, as a user's index and `dowse eval swebench`'s
work directories are). Then asks each question (the problem statements of D's instances
of OWNER/NAME, or `--questions FILE`, one a line) with `ask --json
--no-refresh` on each index and reports the questions whose answers differ from
`fresh`'s: the first differing field and the top five files of each, and each build's
CPU seconds (this process and the parser pool). docs/indexing.md
says an incremental run equals a fresh build; with it, every count is 0.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from dowse.cli import cli
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.embed import get_embedder

sys.path.insert(0, str(Path(__file__).parent))
from tree_answers import untimed  # noqa: E402


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the parser pool)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _checkout(clone: Path, tree: Path, commit: str) -> None:
    if not tree.exists():
        subprocess.run(["git", "clone", "-q", "--shared", str(clone), str(tree)], check=True)
    subprocess.run(["git", "-C", str(tree), "checkout", "-q", "-f", commit], check=True)
    subprocess.run(["git", "-C", str(tree), "clean", "-q", "-fdx"], check=True)


def _first_difference(a: Any, b: Any, where: str = "") -> str | None:
    if type(a) is not type(b):
        return where or "."
    if isinstance(a, dict):
        for key in list(a) + [k for k in b if k not in a]:
            found = _first_difference(a.get(key), b.get(key), f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        for n, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _first_difference(x, y, f"{where}[{n}]")
            if found:
                return found
        return None if len(a) == len(b) else f"{where} (length)"
    return None if a == b else (where or ".")


def _top_files(answer: dict[str, Any]) -> list[str]:
    files = answer.get("files") or answer.get("ranked_files") or []
    return [f["path"] if isinstance(f, dict) else str(f) for f in files[:5]]


def _questions(args: argparse.Namespace) -> list[tuple[str, str]]:
    if args.questions:
        lines = args.questions.read_text().splitlines()
        return [(f"q{n}", q) for n, q in enumerate(lines, 1) if q.strip()]
    rows = [json.loads(line) for line in args.dataset.read_text().splitlines() if line.strip()]
    return [
        (r["instance_id"], r["problem_statement"])
        for r in rows
        if r["repo"].lower() == args.repo.lower()
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clone", type=Path, required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--old-commit", required=True)
    ap.add_argument("--dataset", type=Path)
    ap.add_argument("--repo", default="")
    ap.add_argument("--questions", type=Path)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--embed", choices=["none", "files"], default="none")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = args.work.resolve()
    tree = work / "tree"
    embedder = get_embedder()
    embed = args.embed == "files"
    indexes = {name: work / f"index-{name}" for name in ("fresh", "one", "incremental")}

    cpu: dict[str, float] = {}

    def build(name: str, rebuild: bool, workers: int | None = None) -> None:
        config = IndexConfig(embed=embed, rebuild=rebuild, workers=workers)
        before = _cpu()
        build_index(tree, index_dir=indexes[name], config=config, embedder=embedder)
        cpu[name] = cpu.get(name, 0.0) + _cpu() - before

    _checkout(args.clone.resolve(), tree, args.old_commit)
    build("incremental", rebuild=True)
    _checkout(args.clone.resolve(), tree, args.commit)
    build("incremental", rebuild=False)
    build("fresh", rebuild=True)
    build("one", rebuild=True, workers=1)

    runner = CliRunner()
    report: list[dict[str, Any]] = []
    questions = _questions(args)
    for qid, question in questions:
        answers = {}
        for name, index in indexes.items():
            argv = ["ask", question, "--path", str(tree), "--index-dir", str(index)]
            result = runner.invoke(cli, [*argv, "--json", "--no-refresh"])
            if result.exit_code != 0:
                raise SystemExit(f"{qid} on {name}: {result.output}")
            answers[name] = untimed(json.loads(result.output))
        for name in ("one", "incremental"):
            found = _first_difference(answers["fresh"], answers[name])
            if found:
                report.append(
                    {
                        "question": qid,
                        "index": name,
                        "first_difference": found,
                        "fresh_top5": _top_files(answers["fresh"]),
                        "top5": _top_files(answers[name]),
                    }
                )
    summary = {
        "questions": len(questions),
        "differ_one": sum(r["index"] == "one" for r in report),
        "differ_incremental": sum(r["index"] == "incremental" for r in report),
        "build_cpu_s": {k: round(v, 1) for k, v in cpu.items()},
        "differences": report,
    }
    if args.json:
        print(json.dumps(summary, indent=1))
        return
    for r in report:
        print(f"{r['question']} {r['index']}: {r['first_difference']}")
        if r["fresh_top5"] != r["top5"]:
            print(f"  fresh {r['fresh_top5']}\n  {r['index']:>5} {r['top5']}")
    print(f"build CPU s: {summary['build_cpu_s']} (incremental: both runs)")
    print(
        f"{summary['questions']} questions: {summary['differ_one']} differ with one parser, "
        f"{summary['differ_incremental']} differ incrementally"
    )


if __name__ == "__main__":
    main()
