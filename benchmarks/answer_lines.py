"""Do the lines that answer a coding agent's question arrive? `ask` on labelled questions.

    python benchmarks/answer_lines.py run benchmarks/answers/answers.jsonl --repos CLONES \
        --work WORK --out PRED.jsonl [--repo OWNER/NAME ...] [--id ID ...] [--index-only]
    python benchmarks/answer_lines.py score benchmarks/answers/answers.jsonl PRED.jsonl \
        [--misses]

The questions (`benchmarks/answers/answers.jsonl`) are the kind an agent asks before it
changes code in a repository it has not read ("where is X decided", "how does Y handle
Z", "what happens when W"), over nine repositories in seven languages, each pinned to a
commit. Each was labelled by reading the code before `ask` ran on its repository: the
answering definition(s) (`path`, `symbol`) and the line span of the decisive lines (a
function's body, or the 3-20 lines inside it that answer; 1-based, inclusive). A
question with two answers is answered by either.

`run` exports each repository's pinned commit into `WORK/<owner>__<name>/tree` (git
archive of the clone under CLONES), indexes it once with the default settings (file
vectors on, as `dowse eval swebench` indexes), then asks every question three ways: the
CLI's markdown answer at `--budget 2000` and `4000` (`investigate` and `fit_report` as
`dowse ask` calls them) and the MCP `ask` tool at `max_tokens` 4000 (the server's tool
function, in process). One line per (question, channel): the files best first, the
context blocks (path, lines, form, symbol), the lines they show (a full block its range,
a signature block its signature line) and the tokens printed.

`score` prints, per language and overall and per channel: answer file first, among the
first five files, the decisive lines shown whole (every line of one answer's span inside
the shown lines), shown partly, mean tokens. `--misses` lists each question whose lines
were not shown whole at a channel, classified: `file not found` (no answer file among
the first five), `signature only` (a block of the answering definition printed as its
signature), `cut` (part of the span shown), `other part` (the file has blocks, none shows
the span), `file without block` (ranked, nothing of it shown).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any

CHANNELS = ("cli-2000", "cli-4000", "mcp-4000")


class _Shown:
    """An answer's context blocks, as `_ask_spans` reads them (a CLI report or an MCP
    answer)."""

    def __init__(self, context: Any) -> None:
        self.context = context


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run(args: argparse.Namespace) -> None:
    from dowse.evaluation.gittree import clone_for, sync_tree
    from dowse.evaluation.swebench import MethodRunner, _ask_spans, no_progress
    from dowse.explore.handoff import (
        CONTEXT_SHARE,
        fit_report,
        investigate,
        render_report,
    )
    from dowse.indexer.commits import HistorySource
    from dowse.indexer.embed import get_embedder
    from dowse.retrieval.budget import estimate_tokens
    from dowse.retrieval.loop import LoopConfig
    from dowse.server.records import AskRequest
    from dowse.server.workspace import ServedRoot, Workspace

    questions = [
        q
        for q in load(args.labels)
        if (not args.repo or q["repo"] in args.repo) and (not args.id or q["id"] in args.id)
    ]
    done: set[tuple[str, str]] = set()
    if args.out.exists():
        done = {(p["id"], p["channel"]) for p in load(args.out)}
    by_repo: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for q in questions:
        by_repo[q["repo"]].append(q)
    embedder = get_embedder()
    with open(args.out, "a", encoding="utf-8") as out:
        for repo, todo in by_repo.items():
            git_dir = clone_for(args.repos, repo)
            commit = todo[0]["commit"]
            home = args.work / repo.replace("/", "__")
            runner = MethodRunner(
                home / "tree",
                home / ".dowse-index",
                methods=["ask"],
                embedder=embedder,
                embed=True,
                embed_chunks=False,
                budget=4000,
                found_limit=20,
                workers=1,
                progress=no_progress,
            )
            files = sync_tree(git_dir, commit, home / "tree")
            runner.prepare(files, ["ask"], HistorySource(git_dir, commit))
            print(f"{repo}: indexed at {commit[:12]}", file=sys.stderr)
            if args.index_only:
                continue
            workspace = Workspace([ServedRoot(home / "tree", home / ".dowse-index")])
            for q in todo:
                for channel in CHANNELS:
                    if (q["id"], channel) in done:
                        continue
                    budget = int(channel.split("-")[1])
                    if channel.startswith("cli"):
                        report = investigate(
                            runner.searcher,
                            q["question"],
                            budget=budget,
                            loop=LoopConfig(),
                            context_share=CONTEXT_SHARE,
                        )
                        printed = fit_report(report, budget, "markdown")
                        ranked = [f.path for f in report.files]
                        context = printed.context
                        tokens = estimate_tokens(render_report(printed))
                        mode = report.mode
                    else:
                        request = AskRequest(question=q["question"], max_tokens=budget)
                        answer = workspace.ask(request)
                        ranked = [f.path for f in answer.files]
                        context = answer.context
                        tokens = estimate_tokens(answer.model_dump_json())
                        mode = answer.mode
                    spans = _ask_spans(home / "tree", _Shown(context))
                    line = {
                        "id": q["id"],
                        "channel": channel,
                        "files": ranked[:20],
                        "blocks": [
                            {
                                "path": b.path,
                                "start": b.start_line,
                                "end": b.end_line,
                                "form": b.form,
                                "symbol": b.symbol,
                            }
                            for b in context
                        ],
                        "spans": [s.model_dump() for s in spans],
                        "tokens": tokens,
                        "mode": mode,
                    }
                    out.write(json.dumps(line) + "\n")
                    out.flush()
                print(f"  {q['id']}", file=sys.stderr)


def judge(q: dict[str, Any], pred: dict[str, Any]) -> dict[str, Any]:
    """One question at one channel: where its files ranked, whether its lines were shown."""
    paths = {a["path"] for a in q["answers"]}
    files = pred["files"]
    shown: dict[str, set[int]] = collections.defaultdict(set)
    for s in pred["spans"]:
        shown[s["path"]].update(range(s["start"], s["end"] + 1))
    whole = part = False
    for a in q["answers"]:
        want = set(range(a["start"], a["end"] + 1))
        got = want & shown[a["path"]]
        whole |= got == want
        part |= bool(got)
    if whole:
        miss = ""
    elif not paths & set(files[:5]):
        miss = "file not found"
    elif any(
        b["form"] == "signature"
        and b["path"] == a["path"]
        and b["start"] <= a["end"]
        and b["end"] >= a["start"]
        for a in q["answers"]
        for b in pred["blocks"]
    ):
        miss = "signature only"
    elif part:
        miss = "cut"
    elif any(b["path"] in paths for b in pred["blocks"]):
        miss = "other part"
    else:
        miss = "file without block"
    return {
        "first": bool(files) and files[0] in paths,
        "top5": bool(paths & set(files[:5])),
        "whole": whole,
        "part": part and not whole,
        "tokens": pred["tokens"],
        "miss": miss,
    }


def score(args: argparse.Namespace) -> None:
    questions = {q["id"]: q for q in load(args.labels)}
    preds = {(p["id"], p["channel"]): p for p in load(args.pred)}
    for channel in CHANNELS:
        rows: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        for qid, q in questions.items():
            pred = preds.get((qid, channel))
            if pred is None:
                continue
            j = judge(q, pred)
            rows[q["language"]].append(j)
            rows["all"].append(j)
        if not rows:
            continue
        print(f"\n{channel}")
        print(
            "| language | questions | file first | file in 5 | lines whole | lines partly"
            " | tokens (mean) |"
        )
        print("|---|---|---|---|---|---|---|")
        for lang in sorted(rows, key=lambda k: (k == "all", k)):
            js = rows[lang]
            n = len(js)
            print(
                f"| {lang} | {n} | {sum(j['first'] for j in js)} | {sum(j['top5'] for j in js)}"
                f" | {sum(j['whole'] for j in js)} | {sum(j['part'] for j in js)}"
                f" | {sum(j['tokens'] for j in js) / n:.0f} |"
            )
        misses = collections.Counter(j["miss"] for j in rows["all"] if j["miss"])
        print("misses: " + ", ".join(f"{k} {v}" for k, v in misses.most_common()))
        if args.misses:
            for qid, q in questions.items():
                pred = preds.get((qid, channel))
                if pred is None:
                    continue
                j = judge(q, pred)
                if j["miss"]:
                    a = q["answers"][0]
                    print(
                        f"  {qid}: {j['miss']}; want {a['path']}:{a['start']}-{a['end']}"
                        f" {a['symbol']}; files {pred['files'][:3]}"
                    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("labels", type=Path)
    r.add_argument("--repos", type=Path, required=True)
    r.add_argument("--work", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--repo", action="append", default=[])
    r.add_argument("--id", action="append", default=[])
    r.add_argument("--index-only", action="store_true")
    s = sub.add_parser("score")
    s.add_argument("labels", type=Path)
    s.add_argument("pred", type=Path)
    s.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    if args.command == "run":
        run(args)
    else:
        score(args)


if __name__ == "__main__":
    main()
