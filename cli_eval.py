"""`dowse eval`: measure retrieval (SWE-bench file localization, a repository's own
history) and render the score tables.

Registered on the main group by `cli.py`; like it, this module only translates: parse,
call `evaluation.swebench` or `evaluation.history`, render. Heavy modules are imported
inside the commands so that `--help` stays instant.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dowse.budgets import EVAL_BUDGET
from dowse.cli_common import (
    F,
    embed_options,
    fail,
    json_option,
    progress_bars,
    requested_scope,
    root_arg,
    seam,
    settings_at,
)


def _methods_option(fn: F) -> F:
    return click.option(
        "--methods",
        default=None,
        metavar="LIST",
        help="Comma-separated: bm25, lexical, dense, hybrid, ask (default: all that apply; "
        "dense and hybrid need embeddings).",
    )(fn)


def _split_methods(methods: str | None) -> list[str] | None:
    if methods is None:
        return None
    from dowse.evaluation.swebench import METHODS

    names = [m.strip() for m in methods.split(",") if m.strip()]
    unknown = [m for m in names if m not in METHODS]
    if unknown or not names:
        raise fail(
            f"unknown method(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(METHODS)}"
        )
    return names


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _render_scores(report: Any) -> str:
    """One row per method and subset: Acc@k, MRR, in-context share, function and line
    level (blank where the predictions lack them), medians."""
    head = (
        f"{'method':<8} {'subset':<16} {'n':>4} {'Acc@1':>6} {'Acc@3':>6} {'Acc@5':>6} "
        f"{'Acc@10':>6} {'MRR':>6} {'in-ctx':>6} {'F@5':>6} {'F@10':>6} {'L-rec':>6} "
        f"{'hunks':>6} {'lines':>6} {'tokens':>7} {'sec':>7} {'index s':>7}"
    )
    lines = [head, "-" * len(head)]
    for method, subsets in report.scores.items():
        for subset, s in subsets.items():
            if not s.n:
                continue  # an empty subset (kept in the JSON)
            func = s.func_acc or {}
            lines.append(
                f"{method:<8} {subset:<16} {s.n:>4} {s.acc[1]:>6.1f} {s.acc[3]:>6.1f} "
                f"{s.acc[5]:>6.1f} {s.acc[10]:>6.1f} {s.mrr:>6.3f} "
                f"{_fmt(s.in_context, '>6.1f')} {_fmt(func.get(5), '>6.1f')} "
                f"{_fmt(func.get(10), '>6.1f')} {_fmt(s.line_recall, '>6.1f')} "
                f"{_fmt(s.hunks_in_context, '>6.1f')} {_fmt(s.context_lines_median, '>6.0f')} "
                f"{_fmt(s.tokens_median, '>7.0f')} "
                f"{_fmt(s.seconds_median, '>7.3f')} {_fmt(s.index_seconds_median, '>7.2f')}"
            )
    missing = max(
        (s.missing_predictions for subs in report.scores.values() for s in subs.values()), default=0
    )
    if missing:
        lines.append(f"({missing} instance(s) without a prediction score 0)")
    if report.skipped:
        lines.append(
            f"({len(report.skipped)} instance(s) skipped, their base commit missing from the "
            f"clone: {', '.join(report.skipped)})"
        )
    return "\n".join(lines)


@click.group(name="eval")
def eval_group() -> None:
    """Measure retrieval: SWE-bench file localization, or a repository's own history.

    \b
    Example:
        dowse eval swebench --dataset swebench_lite_dev.jsonl --repos ~/clones
        dowse eval history . -n 20 --no-embed
    """


@eval_group.command(name="swebench")
@click.option(
    "--dataset",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="SWE-bench-style JSONL (instance_id, repo, base_commit, problem_statement, gold_files).",
)
@click.option(
    "--repos",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory of git clones named <owner>__<name> (bare or not).",
)
@click.option(
    "--instances",
    multiple=True,
    metavar="ID",
    help="Only these instances (repeatable, or comma-separated).",
)
@click.option(
    "--limit", type=click.IntRange(min=1), default=None, help="Only the first N selected instances."
)
@click.option("--repo", default=None, metavar="OWNER/NAME", help="Only this repository.")
@_methods_option
@click.option(
    "--budget",
    type=click.IntRange(min=50),
    default=EVAL_BUDGET,
    show_default=True,
    metavar="TOKENS",
    help="Context budget for context_files and tokens.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("dowse-eval.jsonl"),
    show_default=True,
    help="Predictions JSONL; a rerun skips what it already holds.",
)
@click.option(
    "--work",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".dowse-eval"),
    show_default=True,
    help="Where trees and indexes are kept between runs.",
)
@embed_options
@json_option
@seam
def eval_swebench(
    dataset: Path,
    repos: Path,
    instances: tuple[str, ...],
    limit: int | None,
    repo: str | None,
    methods: str | None,
    budget: int,
    out: Path,
    work: Path,
    embed_scope: str | None,
    no_embed: bool,
    embedder: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """File localization on a SWE-bench-style dataset.

    Each instance's repository is synced to its base commit and indexed incrementally;
    every method ranks files and definitions for the issue text. Prints Acc@1/3/5/10
    (all gold files in the top k), MRR, the share of instances whose gold file is in the
    delivered context, FuncAcc@5/10 (every gold function in the top k definitions), the
    share of the fix's changed lines the context shows (L-rec), the share of instances
    where it shows all of them (hunks), median lines shown, and median context tokens,
    query seconds and index seconds, per method, overall, on the locagent274 and
    not_mentioned subsets and per language (lang:NAME) when the dataset has one. An
    instance whose base commit its clone lacks is skipped and counted. The table is also
    written as JSON next to --out (PRED.scores.json).

    \b
    Example:
        dowse eval swebench --dataset swebench_lite_dev.jsonl --repos ~/clones \\
            --repo psf/requests --methods bm25,lexical,ask --no-embed --out pred.jsonl
    """
    from dowse.evaluation.swebench import EvalConfig, run_swebench
    from dowse.indexer.build import DEFAULT_EMBED_SCOPE, embed_flags
    from dowse.indexer.embed import get_embedder

    ids = [i.strip() for arg in instances for i in arg.split(",") if i.strip()]
    embed, embed_chunks = embed_flags(requested_scope(embed_scope, no_embed) or DEFAULT_EMBED_SCOPE)
    config = EvalConfig(
        dataset=dataset,
        repos=repos,
        out=out,
        work=work,
        instances=ids,
        repo=repo,
        limit=limit,
        methods=_split_methods(methods),  # type: ignore[arg-type]
        budget=budget,
        embed=embed,
        embed_chunks=embed_chunks,
    )
    with progress_bars(quiet) as progress:
        report = run_swebench(
            config,
            embedder=get_embedder(settings_at(None).value("embedder", embedder)),
            progress=progress,
        )
    target = out.with_suffix(".scores.json")
    target.write_text(report.model_dump_json(indent=2) + "\n")
    if as_json:
        click.echo(report.model_dump_json(indent=2))
    else:
        click.echo(_render_scores(report))
    if not quiet:
        click.echo(
            f"{report.new_predictions} new predictions in {out}; scores in {target}", err=True
        )


@eval_group.command(name="history")
@click.argument("path", default=".", type=click.Path(file_okay=False))
@click.option(
    "-n",
    "--commits",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="How many recent commits to replay.",
)
@_methods_option
@click.option(
    "--budget",
    type=click.IntRange(min=50),
    default=EVAL_BUDGET,
    show_default=True,
    metavar="TOKENS",
)
@click.option(
    "--work",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the tree and index here (default: a temporary directory).",
)
@embed_options
@json_option
@seam
def eval_history(
    path: str,
    commits: int,
    methods: str | None,
    budget: int,
    work: Path | None,
    embed_scope: str | None,
    no_embed: bool,
    embedder: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Replay a repository's recent commits as retrieval tasks.

    For each of the last N non-merge commits that modify source files, the tree at its
    parent is indexed and queried with the commit message; Recall@1/5/10 and MRR of the
    modified source files are reported per method.

    \b
    Example:
        dowse eval history . -n 20 --no-embed
    """
    import tempfile

    from dowse.evaluation.history import HistoryConfig, run_history
    from dowse.indexer.build import DEFAULT_EMBED_SCOPE, embed_flags
    from dowse.indexer.embed import get_embedder

    root = root_arg(path)
    embed, embed_chunks = embed_flags(requested_scope(embed_scope, no_embed) or DEFAULT_EMBED_SCOPE)
    with tempfile.TemporaryDirectory(prefix="dowse-history-") as tmp:
        config = HistoryConfig(
            repo=root,
            work=work or Path(tmp),
            commits=commits,
            methods=_split_methods(methods),  # type: ignore[arg-type]
            budget=budget,
            embed=embed,
            embed_chunks=embed_chunks,
        )
        with progress_bars(quiet) as progress:
            report = run_history(
                config,
                embedder=get_embedder(settings_at(None).value("embedder", embedder)),
                progress=progress,
            )
    if as_json:
        click.echo(report.model_dump_json(indent=2))
        return
    head = f"{'method':<8} {'n':>4} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'sec':>7}"
    click.echo(head + "\n" + "-" * len(head))
    for method, s in report.scores.items():
        click.echo(
            f"{method:<8} {s.n:>4} {s.recall[1]:>6.1f} {s.recall[5]:>6.1f} "
            f"{s.recall[10]:>6.1f} {s.mrr:>6.3f} {_fmt(s.seconds_median, '>7.3f')}"
        )
