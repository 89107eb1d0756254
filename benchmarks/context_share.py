"""How much of an MCP answer is source code: the share of the `ask` and `explore`
answers' characters that are cited source, at a few budgets, on indexed repositories.

    python benchmarks/context_share.py fixtures/example /path/to/repo \
        [--budget 2000 --budget 4000 --budget 8000] [--question "..."] [--embed] [--ask-only]
        [--cli-json]

Each path must hold an index (`dowse index PATH`, `--no-embed` is enough). For `ask`,
source is the text of the context blocks (whole blocks, and signature lines apart); for
`explore`, the report's sections (everything but the tracks' bookkeeping and the
envelope). Shares are of the compact JSON answer the tool returns, counted in characters;
tokens by the one counter (3 characters a token). Prints one line per (repository,
tool, budget): for `ask`, the mean and lowest source share, the median (source share,
share of the budget used), how many answers were explored. `--embed` answers with the
index's embedder (lexical otherwise); `--ask-only` leaves `explore` out; `--cli-json`
measures `dowse ask --json`'s answer (its fitted report, as the command prints it, with
the index's embedder) instead of the MCP tool's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from dowse.server.records import AskRequest, ExploreRequest
from dowse.server.workspace import ServedRoot, Workspace

try:
    from dowse.retrieval.budget import estimate_tokens
except ImportError:  # an older dowse, measured for comparison
    from dowse.retrieval.ask import estimate_tokens

QUESTIONS = {
    "example": [
        "where are expired session tokens rejected?",
        "how are discounts applied to a cart?",
        "what happens when the payment gateway is unavailable?",
    ],
    "dowse": [
        "how does ask pack the context into the token budget?",
        "where is the index manifest version checked?",
        "how are symlinks confined when serving MCP paths?",
    ],
}


def _questions(root: Path, asked: list[str]) -> list[str]:
    if asked:
        return asked
    if (root / "retrieval" / "ask.py").exists():
        return QUESTIONS["dowse"]
    return QUESTIONS["example"]


def ask_share(workspace: Workspace, question: str, max_tokens: int) -> dict[str, float]:
    answer = workspace.ask(AskRequest(question=question, max_tokens=max_tokens))
    text = answer.model_dump_json()
    full = sum(len(b.text) for b in answer.context if b.form == "full")
    lines = sum(len(b.text) for b in answer.context if b.form == "signature")
    return {
        "tokens": estimate_tokens(text),
        "used": estimate_tokens(text) / max_tokens,
        "explored": getattr(answer, "mode", "retrieval") == "exploration",
        "source": (full + lines) / len(text),
        "whole": full / len(text),
        "blocks": sum(b.form == "full" for b in answer.context),
        "lines": sum(b.form == "signature" for b in answer.context),
        "files": len(answer.files),
    }


def cli_json_share(root: Path, question: str, max_tokens: int) -> dict[str, float]:
    """What `dowse ask QUESTION --json --budget MAX_TOKENS` prints, measured as `ask_share`
    measures the MCP answer (the CLI's own steps, in process, with the index's embedder as
    the command uses it)."""
    from dowse.explore import handoff
    from dowse.server.workspace import fresh_searcher

    searcher, _ = fresh_searcher(root, root / ".dowse", question=question)
    records = getattr(handoff, "report_records", None)
    extra: dict[str, object] = {}
    if records is not None:
        extra = {"records": records(question), "context_share": handoff.JSON_CONTEXT_SHARE}
    report = handoff.investigate(searcher, question, budget=max_tokens, with_trace=True, **extra)
    fitted = handoff.fit_report(report, max_tokens, "json")
    text = handoff.report_json(fitted)
    full = sum(len(b.text) for b in fitted.context if b.form == "full")
    lines = sum(len(b.text) for b in fitted.context if b.form == "signature")
    return {
        "tokens": estimate_tokens(text),
        "used": estimate_tokens(text) / max_tokens,
        "explored": fitted.mode == "exploration",
        "source": (full + lines) / len(text),
        "whole": full / len(text),
        "blocks": sum(b.form == "full" for b in fitted.context),
        "lines": sum(b.form == "signature" for b in fitted.context),
        "files": len(fitted.files),
    }


def explore_share(workspace: Workspace, focus: str, max_tokens: int) -> dict[str, float]:
    answer = workspace.explore(ExploreRequest(focus=focus, depth="deep", max_tokens=max_tokens))
    text = answer.model_dump_json()
    tracks = len(json.dumps([t.model_dump(mode="json") for t in answer.result.tracks]))
    return {
        "tokens": estimate_tokens(text),
        "sections": (len(answer.result.model_dump_json()) - tracks) / len(text),
        "tracks": tracks / len(text),
        "omitted": sum(answer.result.omitted.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--budget", type=int, action="append", default=[])
    parser.add_argument("--question", action="append", default=[])
    parser.add_argument("--embed", action="store_true")
    parser.add_argument("--ask-only", action="store_true")
    parser.add_argument("--cli-json", action="store_true")
    args = parser.parse_args()
    budgets = args.budget or [2000, 4000, 8000]
    for path in args.paths:
        root = path.resolve()
        workspace = Workspace([ServedRoot(root)], embed=args.embed)
        questions = _questions(root, args.question)
        for budget in budgets:
            t0 = time.perf_counter()
            if args.cli_json:
                asks = [cli_json_share(root, q, budget) for q in questions]
            else:
                asks = [ask_share(workspace, q, budget) for q in questions]
            seconds = (time.perf_counter() - t0) / len(questions)
            print(
                f"{root.name:<12} {'ask-json' if args.cli_json else 'ask':<9}"
                f"max_tokens {budget:>5}: "
                f"source {statistics.mean(a['source'] for a in asks):6.1%} "
                f"(whole blocks {statistics.mean(a['whole'] for a in asks):6.1%}, "
                f"min {min(a['source'] for a in asks):6.1%}), "
                f"tokens {max(a['tokens'] for a in asks):>5} max, "
                f"{statistics.mean(a['blocks'] for a in asks):.1f} blocks "
                f"{statistics.mean(a['lines'] for a in asks):.1f} lines "
                f"{statistics.mean(a['files'] for a in asks):.1f} files, {seconds:.2f} s; "
                f"median source {statistics.median(a['source'] for a in asks):6.1%}, "
                f"budget used {statistics.median(a['used'] for a in asks):.2f}; "
                f"{sum(bool(a['explored']) for a in asks)} of {len(asks)} explored"
            )
        if args.ask_only:
            continue
        for budget in budgets:
            e = explore_share(workspace, questions[0], budget)
            print(
                f"{root.name:<12} explore max_tokens {budget:>5}: "
                f"sections {e['sections']:6.1%}, tracks {e['tracks']:6.1%}, "
                f"tokens {e['tokens']:>5}, {e['omitted']:.0f} items left out"
            )


if __name__ == "__main__":
    main()
