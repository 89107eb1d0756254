"""The `dowse` command line: parse options, call one library function, render.

Library errors (`DowseError`) become a one-line `Error: ...` and exit code 1 here, and
only here. Heavy modules (lancedb, sentence-transformers) are imported inside commands so
that `--help` stays instant.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str, code: int = 1) -> click.ClickException:
    exc = click.ClickException(message)
    exc.exit_code = code
    return exc


def seam(fn: F) -> F:
    """Turn library errors into one-line CLI errors (never a traceback for user mistakes)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from indexer.errors import DowseError

        try:
            return fn(*args, **kwargs)
        except DowseError as exc:
            raise _fail(str(exc)) from None
        except KeyboardInterrupt:
            raise _fail("interrupted; the last complete index is intact", 130) from None
        except Exception as exc:
            # A damaged index file surfaces inside a query as LanceDB's RuntimeError.
            from indexer.store import storage_error

            error = storage_error(exc)
            if error is None:
                raise
            raise _fail(str(error)) from None

    return wrapper  # type: ignore[return-value]


def index_dir_option(fn: F) -> F:
    return click.option(
        "--index-dir", type=click.Path(file_okay=False, path_type=Path), envvar="DOWSE_INDEX_DIR",
        help="Where the index lives (default: <repo>/.dowse; env DOWSE_INDEX_DIR).",
    )(fn)


def embed_options(fn: F) -> F:
    """--embed, --no-embed, --embedder and --quiet, shared by the commands that build
    indexes."""
    fn = click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")(fn)
    fn = click.option(
        "--embedder", default="minilm-onnx", envvar="DOWSE_EMBEDDER", show_default=True,
        help="Embedding backend: minilm-onnx (fast) or minilm (sentence-transformers, the "
             "reference); both give the same model's vectors.")(fn)
    fn = click.option(
        # indexer.build.EMBED_SCOPES, written out: importing indexer.build here would add
        # a quarter second to every command (tests/test_summary.py keeps them equal).
        "--embed", "embed_scope", type=click.Choice(["all", "files", "none"]), default=None,
        help="What gets vectors: files (one summary per file: fast), all (chunks too: "
             "slow), none (lexical and symbol index). Default: what the index was built "
             "with, else files.")(fn)
    return click.option("--no-embed", is_flag=True, help="Same as --embed none.")(fn)


def _embed_scope(embed_scope: str | None, no_embed: bool) -> str | None:
    if no_embed and embed_scope not in (None, "none"):
        raise _fail(f"--no-embed contradicts --embed {embed_scope}")
    return "none" if no_embed else embed_scope


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")(fn)


def _root_arg(path: str) -> Path:
    root = Path(path)
    if not root.exists():
        raise _fail(f"no such directory: {path}")
    if not root.is_dir():
        raise _fail(f"not a directory: {path}")
    return root.resolve()


def _locate(path: Path, index_dir: Path | None) -> Path:
    """The index for `path`: --index-dir, or the nearest `.dowse` at or above path."""
    if index_dir is not None:
        return index_dir.resolve()
    start = path.resolve()
    for d in (start, *start.parents):
        if (d / ".dowse" / "manifest.json").is_file():
            return d / ".dowse"
    return start / ".dowse"


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


def _embedder_factory(name: str) -> Callable[[], Any]:
    def make() -> Any:
        from indexer.embed import get_embedder

        return get_embedder(name)

    return make


@contextmanager
def _progress(quiet: bool) -> Iterator[Callable[[str, int, int], None]]:
    if quiet:
        yield lambda stage, done, total: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(f"{task.speed:>7,.0f}/s" if task.speed else " " * 9)

    labels = {"walk": "walking files", "parse": "parsing", "write": "writing index",
              "embed": "embedding chunks"}
    console = Console(stderr=True)
    with Progress(TextColumn("{task.description:<16}"), BarColumn(), MofNCompleteColumn(),
                  Rate(), TimeElapsedColumn(), TimeRemainingColumn(), console=console,
                  transient=False) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(labels.get(stage, stage), total=total or 1)
            bar.update(tasks[stage], completed=done, total=total or 1)

        yield update


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dowse")
def cli() -> None:
    """dowse: find the code that matters, offline.

    \b
    Example:
        dowse index .
        dowse ask "where are index writes committed?"
    """


@cli.command()
@click.argument("path", default=".", type=click.Path(file_okay=False))
@index_dir_option
@click.option("--rebuild", is_flag=True, help="Discard the index and build it anew.")
@click.option("--max-file-size", type=click.IntRange(min=1), default=None,
              help="Skip files larger than this many bytes (default 1000000).")
@click.option("--exclude", multiple=True, metavar="PATTERN",
              help="Extra gitignore-style pattern to leave out (repeatable).")
@click.option("--include-secrets/--no-include-secrets", default=None,
              help="Also index files that look like secrets (.env, keys). Not recommended.")
@embed_options
@json_option
@seam
def index(path: str, index_dir: Path | None, rebuild: bool, embed_scope: str | None,
          no_embed: bool, max_file_size: int | None, exclude: tuple[str, ...],
          include_secrets: bool | None, embedder: str, quiet: bool, as_json: bool) -> None:
    """Index a repository (incremental: unchanged content is never redone).

    Walk options (--exclude, --max-file-size, --include-secrets) and --embed are
    remembered: a later run without them uses the same ones.

    \b
    Example:
        dowse index ~/src/django
        dowse index . --embed files --exclude 'docs/'
    """
    from indexer.build import (
        IndexConfig,
        build_index,
        default_index_dir,
        resolve_embed_scope,
        resolve_walk_config,
    )
    from indexer.embed import get_embedder

    root = _root_arg(path)
    target = index_dir.resolve() if index_dir else default_index_dir(root)
    walk_config = resolve_walk_config(
        target, max_file_bytes=max_file_size, exclude=exclude or None,
        include_secrets=include_secrets)
    embed, embed_chunks = resolve_embed_scope(target, _embed_scope(embed_scope, no_embed))
    config = IndexConfig(walk=walk_config, embed=embed, embed_chunks=embed_chunks,
                         rebuild=rebuild)

    def waiting(holder: str) -> None:
        if not quiet:
            click.echo(f"waiting for another dowse index{holder} to finish...", err=True)

    backend = get_embedder(embedder)
    with _progress(quiet) as progress:
        stats = build_index(root, index_dir=target, config=config, embedder=backend,
                            progress=progress, on_wait=waiting)
    if as_json:
        click.echo(stats.model_dump_json(indent=2))
        return
    secs = sum(stats.seconds.values())
    click.echo(
        f"indexed {stats.files} files ({stats.parsed} parsed, {stats.unchanged} unchanged, "
        f"{stats.deleted} deleted, {stats.renamed} renamed, {stats.skipped} skipped): "
        f"{stats.symbols} symbols, {stats.chunks} chunks, {stats.embedded} embedded "
        f"in {secs:.1f}s -> {stats.index_dir}")


@cli.command()
@click.argument("path", default=".", type=click.Path(file_okay=False))
@index_dir_option
@click.option("--skipped", is_flag=True, help="List every skipped file with its reason.")
@json_option
@seam
def status(path: str, index_dir: Path | None, skipped: bool, as_json: bool) -> None:
    """Show what the index holds and how the tree changed since it was built.

    \b
    Example:
        dowse status
        dowse status --skipped
    """
    from indexer.status import index_status

    root = _root_arg(path)
    report = index_status(_locate(root, index_dir), with_skipped=skipped)
    if as_json:
        click.echo(report.model_dump_json(indent=2))
        return
    click.echo(report.render(with_skipped=skipped))


@cli.command()
@click.argument("query")
@click.option("--path", "path", default=".", type=click.Path(file_okay=False),
              help="Repository (default: the current directory).")
@index_dir_option
@click.option("-n", "--limit", type=click.IntRange(1, 1000), default=10, show_default=True)
@click.option("--grain", type=click.Choice(["chunk", "symbol", "file"]), default="chunk",
              show_default=True, help="Return chunks, enclosing definitions, or files.")
@click.option("--include", multiple=True, metavar="GLOB", help="Only paths matching GLOB.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Leave out paths matching GLOB.")
@click.option("--lang", "languages", multiple=True, help="Only these languages.")
@click.option("--kind", "kinds", multiple=True, help="Only these symbol kinds (symbol grain).")
@json_option
@seam
def search(query: str, path: str, index_dir: Path | None, limit: int, grain: str,
           include: tuple[str, ...], exclude: tuple[str, ...], languages: tuple[str, ...],
           kinds: tuple[str, ...], as_json: bool) -> None:
    """Hybrid search (full-text + vectors + symbol and path evidence).

    \b
    Example:
        dowse search "parse_file timeout" --grain symbol --exclude 'tests/'
    """
    from retrieval.hybrid import HybridSearcher
    from retrieval.records import SearchOptions
    from retrieval.render import render_hits

    options = SearchOptions(limit=limit, grain=grain, include=list(include),  # type: ignore[arg-type]
                            exclude=list(exclude), languages=list(languages), kinds=list(kinds))
    searcher = HybridSearcher.open(_locate(_root_arg(path), index_dir))
    hits = searcher.search(query, options)
    if as_json:
        _echo_json([h.model_dump() for h in hits])
        return
    click.echo(render_hits(hits, color=sys.stdout.isatty()))


@cli.command()
@click.argument("name")
@click.option("--path", "path", default=".", type=click.Path(file_okay=False))
@index_dir_option
@click.option("-n", "--limit", type=click.IntRange(1, 1000), default=10, show_default=True)
@json_option
@seam
def symbol(name: str, path: str, index_dir: Path | None, limit: int, as_json: bool) -> None:
    """Find definitions by name: exact, then prefix, then fuzzy.

    \b
    Example:
        dowse symbol build_index
        dowse symbol Store.open
    """
    from indexer.store import Store
    from retrieval.symbols import find_symbols

    store = Store.open(_locate(_root_arg(path), index_dir))
    found = find_symbols(store, name, limit=limit)
    if as_json:
        _echo_json([s.model_dump() for s in found])
        return
    if not found:
        raise _fail(f"no symbol named {name!r}")
    for s in found:
        click.echo(f"{s.path}:{s.start_line}-{s.end_line}  {s.kind} {s.qualified_name}"
                   f"  ({s.match})\n    {s.signature}")


@cli.command()
@click.argument("question")
@click.option("--path", "path", default=".", type=click.Path(file_okay=False),
              help="Repository (default: the current directory).")
@index_dir_option
@click.option("--budget", type=click.IntRange(min=50), default=None, metavar="TOKENS",
              help="Pack the best context into this many tokens (default 8000).")
@click.option("--include", multiple=True, metavar="GLOB", help="Only paths matching GLOB.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Leave out paths matching GLOB.")
@click.option("--trace", is_flag=True, help="Show each cycle of the retrieval loop.")
@click.option("--evaluator", "evaluator_name", type=click.Choice(["offline", "llm"]),
              default="offline", show_default=True,
              help="Score candidates offline, or with the chat model in DOWSE_LLM_* variables.")
@click.option("--mode", type=click.Choice(["auto", "retrieval", "exploration"]), default="auto",
              show_default=True,
              help="auto: explore broad questions in parallel tracks, one loop otherwise; "
                   "or force either.")
@click.option("--format", "output_format", type=click.Choice(["markdown", "json", "agent"]),
              default=None,
              help="markdown (default); json (as --json); agent: what the MCP ask tool "
                   "returns (changed files indexed first, the whole JSON within --budget, "
                   "default 8000).")
@json_option
@seam
def ask(question: str, path: str, index_dir: Path | None, budget: int | None,
        include: tuple[str, ...], exclude: tuple[str, ...], trace: bool, evaluator_name: str,
        output_format: str | None, mode: str, as_json: bool) -> None:
    """Find the code that answers a question, with citations and relevance.

    Runs the iterative retrieval loop (at most 3 cycles) and prints the curated context
    as markdown, or JSON with --json. A broad question (architecture, several parts, a bug
    with several possible causes, a cross-cutting pattern) is split into 3-6 tracks that
    run in parallel with the explorers that fit, and their cited findings are merged; the
    report says which mode ran and why. --format agent prints the MCP ask tool's answer,
    for agents that shell out instead of connecting to `dowse serve`.

    \b
    Example:
        dowse ask "where are expired session tokens rejected?" --budget 2000
        dowse ask "how does authentication work?" --budget 4000
        dowse ask "how are discounts applied?" --evaluator llm --mode retrieval
    """
    from explore.handoff import investigate, render_report
    from retrieval.hybrid import HybridSearcher
    from retrieval.loop import LoopConfig

    if not question.strip():
        raise _fail("the question is empty")
    if as_json and output_format not in (None, "json"):
        raise _fail(f"--json and --format {output_format} cannot be combined")
    as_json = as_json or output_format == "json"
    # --evaluator llm: the only place the environment is read for it (the program's edge).
    evaluator = None
    if evaluator_name == "llm":
        from retrieval.llm_evaluator import LLMEvaluator, LLMEvaluatorConfig

        llm_config = LLMEvaluatorConfig.from_env(os.environ)
        if llm_config is None:
            raise _fail("--evaluator llm needs DOWSE_LLM_BASE_URL and DOWSE_LLM_MODEL "
                        "(and DOWSE_LLM_API_KEY or OPENAI_API_KEY if the endpoint wants a key)")
        evaluator = LLMEvaluator(llm_config, warn=lambda m: click.echo(f"warning: {m}", err=True))
    if output_format == "agent":
        from server import ask_for_agent

        answer = ask_for_agent(_locate(_root_arg(path), index_dir), question, max_tokens=budget,
                               include=include, exclude=exclude, evaluator=evaluator)
        click.echo(answer.model_dump_json())
        return
    searcher = HybridSearcher.open(_locate(_root_arg(path), index_dir))
    report = investigate(searcher, question, budget=budget,
                         loop=LoopConfig(include=list(include), exclude=list(exclude)),
                         evaluator=evaluator, with_trace=trace or as_json,
                         force=None if mode == "auto" else mode)  # type: ignore[arg-type]
    if as_json:
        click.echo(report.model_dump_json(indent=2))
        return
    click.echo(render_report(report, trace=trace), nl=False)


@cli.command(name="explore")
@click.argument("path", default=".", type=click.Path())
@click.option("--focus", default=None, metavar="TEXT",
              help="A question to answer inside PATH with the retrieval loop (needs an index).")
@click.option("--depth", type=click.Choice(["shallow", "standard", "deep"]), default="standard",
              show_default=True,
              help="shallow: tree, manifest; standard: + patterns, focus; "
                   "deep: + imports, git, module specialists.")
@click.option("--deepen", is_flag=True,
              help="Split tracks whose scope is too large into per-package subtracks.")
@click.option("--budget", type=click.IntRange(min=200), default=None, metavar="TOKENS",
              help="Fit the report into TOKENS, dividing them across sections.")
@index_dir_option
@json_option
@seam
def explore_cmd(path: str, focus: str | None, depth: str, deepen: bool, budget: int | None,
                index_dir: Path | None, as_json: bool) -> None:
    """Explore a directory or file: structure, dependencies, patterns, imports, history.

    Explorers run in parallel, each on its own gated track; every claim cites file:line
    and is checked against the file. Read-only: nothing is written, not even an index.

    \b
    Example:
        dowse explore .
        dowse explore src/auth --focus "how are tokens refreshed?" --depth deep
        dowse explore . --depth deep --budget 3000 --json
    """
    from explore.render import fit_budget, render_markdown
    from explore.run import explore

    if focus is not None and not focus.strip():
        raise _fail("the focus is empty")
    result = explore(Path(path), focus=focus, depth=depth, deepen=deepen,  # type: ignore[arg-type]
                     index_dir=index_dir)
    if budget is not None:
        result = fit_budget(result, budget, "json" if as_json else "markdown")
    if as_json:
        click.echo(result.model_dump_json(indent=2))
        return
    click.echo(render_markdown(result), nl=False)


# -- dowse eval ------------------------------------------------------------------------


def _methods_option(fn: F) -> F:
    return click.option(
        "--methods", default=None, metavar="LIST",
        help="Comma-separated: bm25, lexical, dense, hybrid, ask (default: all that apply; "
             "dense and hybrid need embeddings).")(fn)


def _split_methods(methods: str | None) -> list[str] | None:
    if methods is None:
        return None
    from retrieval.evaluation import METHODS

    names = [m.strip() for m in methods.split(",") if m.strip()]
    unknown = [m for m in names if m not in METHODS]
    if unknown or not names:
        raise _fail(f"unknown method(s) {', '.join(unknown) or '(none)'}; "
                    f"choose from {', '.join(METHODS)}")
    return names


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _render_scores(report: Any) -> str:
    """One row per method and subset: Acc@k, MRR, in-context share, medians."""
    head = (f"{'method':<8} {'subset':<14} {'n':>4} {'Acc@1':>6} {'Acc@3':>6} {'Acc@5':>6} "
            f"{'Acc@10':>6} {'MRR':>6} {'in-ctx':>6} {'tokens':>7} {'sec':>7} {'index s':>7}")
    lines = [head, "-" * len(head)]
    for method, subsets in report.scores.items():
        for subset, s in subsets.items():
            if not s.n:
                continue  # an empty subset (kept in the JSON)
            lines.append(
                f"{method:<8} {subset:<14} {s.n:>4} {s.acc[1]:>6.1f} {s.acc[3]:>6.1f} "
                f"{s.acc[5]:>6.1f} {s.acc[10]:>6.1f} {s.mrr:>6.3f} "
                f"{_fmt(s.in_context, '>6.1f')} {_fmt(s.tokens_median, '>7.0f')} "
                f"{_fmt(s.seconds_median, '>7.3f')} {_fmt(s.index_seconds_median, '>7.2f')}")
    missing = max((s.missing_predictions for subs in report.scores.values()
                   for s in subs.values()), default=0)
    if missing:
        lines.append(f"({missing} instance(s) without a prediction score 0)")
    return "\n".join(lines)


@cli.group(name="eval")
def eval_group() -> None:
    """Measure retrieval: SWE-bench file localization, or a repository's own history.

    \b
    Example:
        dowse eval swebench --dataset swebench_lite_dev.jsonl --repos ~/clones
        dowse eval history ~/src/myrepo -n 20 --no-embed
    """


@eval_group.command(name="swebench")
@click.option("--dataset", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="SWE-bench-style JSONL (instance_id, repo, base_commit, problem_statement, "
                   "gold_files).")
@click.option("--repos", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory of git clones named <owner>__<name> (bare or not).")
@click.option("--instances", multiple=True, metavar="ID",
              help="Only these instances (repeatable, or comma-separated).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Only the first N selected instances.")
@click.option("--repo", default=None, metavar="OWNER/NAME", help="Only this repository.")
@_methods_option
@click.option("--budget", type=click.IntRange(min=50), default=4000, show_default=True,
              metavar="TOKENS", help="Context budget for context_files and tokens.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("dowse-eval.jsonl"), show_default=True,
              help="Predictions JSONL; a rerun skips what it already holds.")
@click.option("--work", type=click.Path(file_okay=False, path_type=Path),
              default=Path(".dowse-eval"), show_default=True,
              help="Where trees and indexes are kept between runs.")
@embed_options
@json_option
@seam
def eval_swebench(dataset: Path, repos: Path, instances: tuple[str, ...], limit: int | None,
                  repo: str | None, methods: str | None, budget: int, out: Path, work: Path,
                  embed_scope: str | None, no_embed: bool, embedder: str, quiet: bool,
                  as_json: bool) -> None:
    """File localization on a SWE-bench-style dataset.

    Each instance's repository is synced to its base commit and indexed incrementally;
    every method ranks files for the issue text. Prints Acc@1/3/5/10 (all gold files in
    the top k), MRR, the share of instances whose gold file is in the delivered context,
    and median context tokens, query seconds and index seconds, per method, overall and
    on the locagent274 and not_mentioned subsets. The table is also written as JSON next
    to --out (PRED.scores.json).

    \b
    Example:
        dowse eval swebench --dataset swebench_lite_dev.jsonl --repos ~/clones \\
            --repo psf/requests --methods bm25,lexical,ask --no-embed --out pred.jsonl
    """
    from indexer.build import DEFAULT_EMBED_SCOPE, embed_flags
    from indexer.embed import get_embedder
    from retrieval.evaluation import EvalConfig, run_swebench

    ids = [i.strip() for arg in instances for i in arg.split(",") if i.strip()]
    embed, embed_chunks = embed_flags(_embed_scope(embed_scope, no_embed) or DEFAULT_EMBED_SCOPE)
    config = EvalConfig(dataset=dataset, repos=repos, out=out, work=work, instances=ids,
                        repo=repo, limit=limit, methods=_split_methods(methods),  # type: ignore[arg-type]
                        budget=budget, embed=embed, embed_chunks=embed_chunks)
    with _progress(quiet) as progress:
        report = run_swebench(config, embedder=get_embedder(embedder), progress=progress)
    target = out.with_suffix(".scores.json")
    target.write_text(report.model_dump_json(indent=2) + "\n")
    if as_json:
        click.echo(report.model_dump_json(indent=2))
    else:
        click.echo(_render_scores(report))
    if not quiet:
        click.echo(f"{report.new_predictions} new predictions in {out}; scores in {target}",
                   err=True)


@eval_group.command(name="history")
@click.argument("path", default=".", type=click.Path(file_okay=False))
@click.option("-n", "--commits", type=click.IntRange(min=1), default=50, show_default=True,
              help="How many recent commits to replay.")
@_methods_option
@click.option("--budget", type=click.IntRange(min=50), default=4000, show_default=True,
              metavar="TOKENS")
@click.option("--work", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the tree and index here (default: a temporary directory).")
@embed_options
@json_option
@seam
def eval_history(path: str, commits: int, methods: str | None, budget: int, work: Path | None,
                 embed_scope: str | None, no_embed: bool, embedder: str, quiet: bool,
                 as_json: bool) -> None:
    """Replay a repository's recent commits as retrieval tasks.

    For each of the last N non-merge commits that modify source files, the tree at its
    parent is indexed and queried with the commit message; Recall@1/5/10 and MRR of the
    modified source files are reported per method.

    \b
    Example:
        dowse eval history ~/src/myrepo -n 20 --no-embed
    """
    import tempfile

    from indexer.build import DEFAULT_EMBED_SCOPE, embed_flags
    from indexer.embed import get_embedder
    from retrieval.history import HistoryConfig, run_history

    root = _root_arg(path)
    embed, embed_chunks = embed_flags(_embed_scope(embed_scope, no_embed) or DEFAULT_EMBED_SCOPE)
    with tempfile.TemporaryDirectory(prefix="dowse-history-") as tmp:
        config = HistoryConfig(repo=root, work=work or Path(tmp), commits=commits,
                               methods=_split_methods(methods),  # type: ignore[arg-type]
                               budget=budget, embed=embed, embed_chunks=embed_chunks)
        with _progress(quiet) as progress:
            report = run_history(config, embedder=get_embedder(embedder), progress=progress)
    if as_json:
        click.echo(report.model_dump_json(indent=2))
        return
    head = f"{'method':<8} {'n':>4} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'sec':>7}"
    click.echo(head + "\n" + "-" * len(head))
    for method, s in report.scores.items():
        click.echo(f"{method:<8} {s.n:>4} {s.recall[1]:>6.1f} {s.recall[5]:>6.1f} "
                   f"{s.recall[10]:>6.1f} {s.mrr:>6.3f} {_fmt(s.seconds_median, '>7.3f')}")


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(file_okay=False))
@embed_options
@seam
def serve(paths: tuple[str, ...], embed_scope: str | None, no_embed: bool, embedder: str,
          quiet: bool) -> None:
    """Run an MCP server on stdio for coding agents, over one or more indexed roots.

    Tools: search, ask, symbol, status, reindex. Each root's index is <root>/.dowse; a
    root without one is served too, and the reindex tool builds it (--embed and
    --embedder apply to such new indexes). Stdout carries the protocol only.

    \b
    Example:
        dowse serve
        dowse serve ~/src/api ~/src/web
        claude mcp add dowse -- dowse serve ~/src/api
    """
    from indexer.build import DEFAULT_EMBED_SCOPE, embed_flags
    from server import serve as run_server

    roots = [_root_arg(p) for p in paths or (".",)]
    embed, embed_chunks = embed_flags(_embed_scope(embed_scope, no_embed) or DEFAULT_EMBED_SCOPE)
    run_server(roots, embedder=embedder, embed=embed, embed_chunks=embed_chunks,
               warn=lambda m: None if quiet else click.echo(f"warning: {m}", err=True))


def main() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    cli(prog_name="dowse")


if __name__ == "__main__":
    main()
