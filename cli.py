"""The `dowse` command line: parse options, call one library function, render.

Library errors (`DowseError`) become a one-line `Error: ...` and exit code 1 at one
seam, `cli_common.seam`; the `dowse eval` group lives in `cli_eval.py`. Heavy modules
(lancedb, sentence-transformers) are imported inside commands so that `--help` stays
instant.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from dowse.budgets import DEFAULT_BUDGET
from dowse.cli_common import (
    echo_json,
    embed_options,
    fail,
    index_dir_of,
    index_dir_option,
    json_option,
    locate,
    open_searcher,
    prepared_embedders,
    progress_bars,
    refresh_option,
    requested_scope,
    root_arg,
    seam,
    settings_at,
    warn,
)
from dowse.cli_eval import eval_group


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
@click.option(
    "--max-file-size",
    type=click.IntRange(min=1),
    default=None,
    help="Skip files larger than this many bytes (default 1000000).",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="PATTERN",
    help="Extra gitignore-style pattern to leave out (repeatable).",
)
@click.option(
    "--include-secrets/--no-include-secrets",
    default=None,
    help="Also index files that look like secrets (.env, keys). Not recommended.",
)
@click.option(
    "--history/--no-history",
    default=None,
    help="Keep the git history's commit messages and changed files as search "
    "evidence (default: on).",
)
@click.option(
    # indexer.engine.ENGINES, written out (importing it here would slow every command).
    "--engine",
    type=click.Choice(["local", "ray"]),
    default=None,
    help="Where the files are parsed and embedded: local (this machine's processes, "
    "the default) or ray (a Ray cluster: pip install 'dowse[ray]'); the index is the same.",
)
@click.option(
    "--address",
    default=None,
    metavar="ADDRESS",
    help="With --engine ray: the Ray cluster to run on (e.g. ray://head:10001); "
    "default: a local Ray started for the run.",
)
@embed_options
@json_option
@seam
def index(
    path: str,
    index_dir: Path | None,
    rebuild: bool,
    embed_scope: str | None,
    no_embed: bool,
    max_file_size: int | None,
    exclude: tuple[str, ...],
    include_secrets: bool | None,
    history: bool | None,
    engine: str | None,
    address: str | None,
    embedder: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Index a repository (incremental: unchanged content is never redone).

    Inside a git repository the history is kept too: each small commit's message and
    the files it changed, so that `ask` can rank the files of past changes that read
    like the question.

    Walk options (--exclude, --max-file-size, --include-secrets), --embed and
    --no-history are remembered: a later run without them uses the same ones. A
    .dowse.toml or [tool.dowse] in pyproject.toml sets them too (see `dowse status`).

    \b
    Example:
        dowse index fixtures/example
        dowse index . --embed files --exclude 'docs/'
    """
    from dowse.indexer.layout import INDEX_DIR_NAME

    root = root_arg(path)
    settings = settings_at(root)
    index_dir = index_dir_of(settings, index_dir)
    target = index_dir.resolve() if index_dir else root / INDEX_DIR_NAME
    engine = settings.value("engine", engine)
    if address is not None and engine != "ray":
        raise fail("--address names a Ray cluster: pass it with --engine ray")
    # The options as given; with the index's manifest they decide the run's (`resolve_*`).
    request = {
        "index_dir": str(target),
        "max_file_size": settings.given("max_file_size", max_file_size),
        "exclude": settings.given("exclude", list(exclude) or None),
        "include_secrets": settings.given("include_secrets", include_secrets),
        "embed": settings.given("embed", requested_scope(embed_scope, no_embed)),
        "history": settings.given("history", history),
        "embedder": settings.value("embedder", embedder),
    }
    if not rebuild and not as_json and engine == "local":
        # Nothing changed since a run that found nothing to do: its report, before the
        # writer, pydantic and tree-sitter are imported (`indexer.noop`).
        from dowse.indexer.noop import answer

        report = answer(root, target, request)
        if report is not None:
            click.echo(_indexed(report))
            return

    from dowse.indexer.build import IndexConfig, build_index
    from dowse.indexer.embed import get_embedder
    from dowse.indexer.engine import load_engine
    from dowse.indexer.options import resolve_embed_scope, resolve_history, resolve_walk_config

    warned = []

    def warn_of_options(message: str) -> None:
        warned.append(message)
        warn(message)

    walk_config = resolve_walk_config(
        target,
        root=root,
        warn=warn_of_options,
        max_file_bytes=request["max_file_size"],
        exclude=request["exclude"],
        include_secrets=request["include_secrets"],
    )
    embed, embed_chunks = resolve_embed_scope(target, request["embed"], root=root)
    config = IndexConfig(
        walk=walk_config,
        embed=embed,
        embed_chunks=embed_chunks,
        rebuild=rebuild,
        history=resolve_history(target, request["history"], root=root),
    )

    def waiting(holder: str) -> None:
        if not quiet:
            click.echo(f"waiting for another dowse index{holder} to finish...", err=True)

    backend = get_embedder(request["embedder"])
    runner = load_engine(
        engine,
        embedder=functools.partial(get_embedder, request["embedder"]),
        address=settings.value("ray_address", address),
    )
    with progress_bars(quiet) as progress, contextlib.closing(runner):
        stats = build_index(
            root,
            index_dir=target,
            config=config,
            embedder=backend,
            progress=progress,
            on_wait=waiting,
            engine=runner,
            # A request whose options drew a warning is never answered without the run,
            # which says it again.
            request=None if warned or engine != "local" else request,
        )
    for note in stats.notes:
        warn(note)
    if as_json:
        click.echo(stats.model_dump_json(indent=2))
        return
    click.echo(_indexed(stats.model_dump()))


def _indexed(stats: Mapping[str, Any]) -> str:
    """The line `dowse index` prints, of an `IndexStats`' values."""
    from dowse.quote import one_line

    secs = sum(stats["seconds"].values())
    return (
        f"indexed {stats['files']} files ({stats['parsed']} parsed, {stats['unchanged']} "
        f"unchanged, {stats['deleted']} deleted, {stats['renamed']} renamed, "
        f"{stats['skipped']} skipped): {stats['symbols']} symbols, {stats['chunks']} chunks, "
        f"{stats['embedded']} embedded in {secs:.1f}s -> {one_line(str(stats['index_dir']))}"
    )


@cli.command()
@click.argument("path", default=".", type=click.Path(file_okay=False))
@index_dir_option
@click.option("--skipped", is_flag=True, help="List every skipped file with its reason.")
@json_option
@seam
def status(path: str, index_dir: Path | None, skipped: bool, as_json: bool) -> None:
    """Show what the index holds and how the tree changed since it was built.

    Also every setting's effective value and where it came from: a flag, a DOWSE_*
    variable, .dowse.toml, pyproject.toml's [tool.dowse], your config file, what the
    index remembers, or the default.

    \b
    Example:
        dowse status fixtures/example
        dowse status fixtures/example --skipped
    """
    from dowse.indexer.build import remembered_options
    from dowse.indexer.status import index_status

    root = root_arg(path)
    settings = settings_at(root)
    served, found = locate(root, index_dir_of(settings, index_dir)).require()
    report = index_status(found, with_skipped=skipped)
    shown = [
        s.model_copy(update={"value": found}) if s.name == "index_dir" and s.value is None else s
        for s in settings.report({"index_dir": index_dir}, remembered_options(found, served))
    ]
    report = report.model_copy(update={"settings": shown})
    if as_json:
        click.echo(report.model_dump_json(indent=2))
        return
    click.echo(report.render(with_skipped=skipped))


@cli.command()
@click.argument("query")
@click.option(
    "--path",
    "path",
    default=".",
    type=click.Path(file_okay=False),
    help="Repository (default: the current directory).",
)
@index_dir_option
@click.option("-n", "--limit", type=click.IntRange(1, 1000), default=10, show_default=True)
@click.option(
    "--grain",
    type=click.Choice(["chunk", "symbol", "file"]),
    default="chunk",
    show_default=True,
    help="Return chunks, enclosing definitions, or files.",
)
@click.option("--include", multiple=True, metavar="GLOB", help="Only paths matching GLOB.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Leave out paths matching GLOB.")
@click.option("--lang", "languages", multiple=True, help="Only these languages.")
@click.option("--kind", "kinds", multiple=True, help="Only these symbol kinds (symbol grain).")
@refresh_option
@json_option
@seam
def search(
    query: str,
    path: str,
    index_dir: Path | None,
    limit: int,
    grain: str,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    languages: tuple[str, ...],
    kinds: tuple[str, ...],
    refresh: bool,
    as_json: bool,
) -> None:
    """Hybrid search (full-text + vectors + symbol and path evidence).

    Files changed since the last index run are indexed first (--no-refresh skips it).

    \b
    Example:
        dowse search "validate_token expired" --path fixtures/example
        dowse search "token signature" --grain symbol --exclude 'tests/' --path fixtures/example
    """
    from dowse.retrieval.records import SearchOptions
    from dowse.retrieval.render import render_hits

    options = SearchOptions(
        limit=limit,
        grain=grain,  # type: ignore[arg-type]
        include=list(include),
        exclude=list(exclude),
        languages=list(languages),
        kinds=list(kinds),
    )
    root = root_arg(path)
    location = locate(root, index_dir_of(settings_at(root), index_dir))
    searcher = open_searcher(location, refresh, question=query)
    hits = searcher.search(query, options)
    if as_json:
        echo_json([h.model_dump() for h in hits])
        return
    click.echo(render_hits(hits, color=sys.stdout.isatty()))


@cli.command()
@click.argument("name")
@click.option("--path", "path", default=".", type=click.Path(file_okay=False))
@index_dir_option
@click.option("-n", "--limit", type=click.IntRange(1, 1000), default=10, show_default=True)
@click.option(
    "--callers", is_flag=True, help="The definitions that call or reference NAME, with lines."
)
@click.option("--callees", is_flag=True, help="The definitions of the index NAME references.")
@json_option
@seam
def symbol(
    name: str,
    path: str,
    index_dir: Path | None,
    limit: int,
    callers: bool,
    callees: bool,
    as_json: bool,
) -> None:
    """Find definitions by name: exact, then prefix, then fuzzy.

    With --callers or --callees, the definitions named exactly NAME and who references
    them, or what they reference, from the index's references.

    \b
    Example:
        dowse symbol validate_token --path fixtures/example
        dowse symbol BulkDiscount.discount --path fixtures/example
        dowse symbol validate_token --callers --path fixtures/example
    """
    from dowse.indexer.store import Store
    from dowse.quote import one_line
    from dowse.retrieval.symbols import find_symbols

    root = root_arg(path)
    store = Store.open(locate(root, index_dir_of(settings_at(root), index_dir)).index_dir)
    if callers or callees:
        from dowse.retrieval.references import find_references, render_references

        refs = find_references(store, name, callers=callers, callees=callees, limit=limit)
        if as_json:
            click.echo(refs.model_dump_json(indent=2))
            return
        if not refs.definitions:
            raise fail(f"no symbol named exactly {name!r}")
        if not refs.indexed:
            warn("this index has no references yet; run `dowse index` to add them")
        click.echo(render_references(refs, callers=callers, callees=callees))
        return
    found = find_symbols(store, name, limit=limit)
    if as_json:
        echo_json([s.model_dump() for s in found])
        return
    if not found:
        raise fail(f"no symbol named {name!r}")
    for s in found:
        # The decorators are the behaviour too: a route's path, a command's options.
        # Every name is the repository's: escaped, so none can start a line of its own.
        head = "".join(f"\n    {one_line(d)}" for d in s.decorators)
        click.echo(
            f"{one_line(s.path)}:{s.start_line}-{s.end_line}  {s.kind} "
            f"{one_line(s.qualified_name)}  ({s.match}){head}\n    {one_line(s.signature)}"
        )


@cli.command()
@click.argument("question")
@click.option(
    "--path",
    "path",
    default=".",
    type=click.Path(file_okay=False),
    help="Repository (default: the current directory).",
)
@index_dir_option
@click.option(
    "--budget",
    type=click.IntRange(min=50),
    default=None,
    metavar="TOKENS",
    help=f"Pack the best context into this many tokens (default {DEFAULT_BUDGET}; config budget).",
)
@click.option("--include", multiple=True, metavar="GLOB", help="Only paths matching GLOB.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Leave out paths matching GLOB.")
@click.option("--trace", is_flag=True, help="Show each cycle of the retrieval loop.")
@click.option(
    "--evaluator",
    "evaluator_name",
    type=click.Choice(["offline", "llm"]),
    default=None,
    help="Score candidates offline (default), or with the chat model named by "
    "DOWSE_LLM_* variables or llm_* settings in your config file.",
)
@click.option(
    "--mode",
    type=click.Choice(["auto", "retrieval", "exploration"]),
    default="auto",
    show_default=True,
    help="auto: explore broad questions in parallel tracks, one loop otherwise; or force either.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["markdown", "json", "agent"]),
    default=None,
    help="markdown (default); json (as --json); agent: what the MCP ask tool "
    f"returns (the whole JSON within --budget, default {DEFAULT_BUDGET}).",
)
@refresh_option
@json_option
@seam
def ask(
    question: str,
    path: str,
    index_dir: Path | None,
    budget: int | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    trace: bool,
    evaluator_name: str | None,
    output_format: str | None,
    mode: str,
    refresh: bool,
    as_json: bool,
) -> None:
    """Find the code that answers a question, with citations and relevance.

    Runs the iterative retrieval loop (at most 3 cycles) and prints the curated context
    as markdown, or JSON with --json. A broad question (architecture, several parts, a bug
    with several possible causes, a cross-cutting pattern) is split into 3-6 tracks that
    run in parallel with the explorers that fit, and their cited findings are merged; the
    report says which mode ran and why. --format agent prints the MCP ask tool's answer,
    for agents that shell out instead of connecting to `dowse serve`. Files changed since
    the last index run are indexed first, in every format (--no-refresh skips it).

    \b
    Example:
        dowse ask "where are expired session tokens rejected?" --path fixtures/example --budget 2000
        dowse ask "how does authentication work?" --path fixtures/example --budget 4000
        dowse ask "how are discounts applied?" --path fixtures/example --evaluator llm
    """
    if not question.strip():
        raise fail("the question is empty")
    if as_json and output_format not in (None, "json"):
        raise fail(f"--json and --format {output_format} cannot be combined")
    as_json = as_json or output_format == "json"
    root = root_arg(path)
    settings = settings_at(root)
    index_dir = index_dir_of(settings, index_dir)
    budget = settings.given("budget", budget)
    # --evaluator llm: the endpoint from the settings, the key from the environment only
    # (the program's edge).
    evaluator = None
    if settings.value("evaluator", evaluator_name) == "llm":
        from pydantic import SecretStr

        from dowse.retrieval.llm_evaluator import LLMEvaluator, LLMEvaluatorConfig

        base_url, model = settings.value("llm_base_url"), settings.value("llm_model")
        if base_url is None or model is None:
            raise fail(
                "--evaluator llm needs DOWSE_LLM_BASE_URL and DOWSE_LLM_MODEL, or llm_base_url "
                "and llm_model in your config file (and DOWSE_LLM_API_KEY or OPENAI_API_KEY "
                "if the endpoint wants a key)"
            )
        key = os.environ.get("DOWSE_LLM_API_KEY", "").strip()
        key = key or os.environ.get("OPENAI_API_KEY", "").strip()
        llm_config = LLMEvaluatorConfig(
            base_url=base_url, model=model, api_key=SecretStr(key) if key else None
        )
        evaluator = LLMEvaluator(llm_config, warn=lambda m: click.echo(f"warning: {m}", err=True))
    location = locate(root, index_dir)
    if output_format == "agent":
        # The question's embedder starts loading before the answer's modules are imported.
        embedders = prepared_embedders(location, question)
        from dowse.server.workspace import ask_for_agent

        served, index = location.require()
        answer = ask_for_agent(
            served,
            index,
            question,
            max_tokens=budget,
            include=include,
            exclude=exclude,
            evaluator=evaluator,
            refresh=refresh,
            query_embedders=embedders,
        )
        click.echo(answer.model_dump_json())
        return
    searcher = open_searcher(location, refresh, question=question)
    # Below the agent's answer: it needs neither the explorers nor the hand-off to them.
    from dowse.explore.handoff import (
        CONTEXT_SHARE,
        JSON_CONTEXT_SHARE,
        fit_report,
        investigate,
        render_report,
        report_json,
        report_records,
    )
    from dowse.retrieval.loop import LoopConfig

    report = investigate(
        searcher,
        question,
        budget=budget,
        loop=LoopConfig(include=list(include), exclude=list(exclude)),
        evaluator=evaluator,
        with_trace=trace or as_json,
        force=None if mode == "auto" else mode,  # type: ignore[arg-type]
        records=report_records(question) if as_json else None,
        context_share=JSON_CONTEXT_SHARE if as_json else CONTEXT_SHARE,
    )
    # Everything printed, not only the source, is held to the budget.
    report = fit_report(
        report, budget or DEFAULT_BUDGET, "json" if as_json else "markdown", trace=trace
    )
    click.echo(report_json(report) if as_json else render_report(report, trace=trace), nl=False)


@cli.command(name="explore")
@click.argument("path", default=".", type=click.Path())
@click.option(
    "--focus",
    default=None,
    metavar="TEXT",
    help="A question to answer inside PATH with the retrieval loop (needs an index).",
)
@click.option(
    "--depth",
    type=click.Choice(["shallow", "standard", "deep"]),
    default="standard",
    show_default=True,
    help="shallow: tree, manifest; standard: + patterns, configuration, focus; "
    "deep: + imports, git, module specialists.",
)
@click.option(
    "--deepen",
    is_flag=True,
    help="Split tracks whose scope is too large into per-package subtracks.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=200),
    default=None,
    metavar="TOKENS",
    help="Fit the report into TOKENS, dividing them across sections.",
)
@click.option(
    "--graph",
    "graph_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Also write PATH's import graph to FILE: a self-contained page (.html, .htm) "
    "or Mermaid (.mmd, .mermaid), by its suffix.",
)
@index_dir_option
@json_option
@seam
def explore_cmd(
    path: str,
    focus: str | None,
    depth: str,
    deepen: bool,
    budget: int | None,
    graph_file: Path | None,
    index_dir: Path | None,
    as_json: bool,
) -> None:
    """Explore a directory or file: structure, dependencies, patterns, imports, history.

    Explorers run in parallel, each on its own gated track; every claim cites file:line
    and is checked against the file. Read-only: nothing is written, not even an index,
    except the --graph file.

    \b
    Example:
        dowse explore .
        dowse explore fixtures/example/shop/auth --focus "how are tokens validated?" --depth deep
        dowse explore . --depth deep --budget 3000 --json
        dowse explore . --graph imports.html
    """
    from dowse.explore.graph import graph_format, write_graph
    from dowse.explore.records import ImportGraph
    from dowse.explore.render import fit_budget, render_json, render_markdown
    from dowse.explore.run import explore
    from dowse.explore.tracks import plural

    if focus is not None and not focus.strip():
        raise fail("the focus is empty")
    if graph_file is not None:
        graph_format(graph_file)  # a bad suffix fails before the exploring
    index_dir = index_dir_of(settings_at(Path(path)), index_dir)
    graphs: list[ImportGraph] = []
    result = explore(
        Path(path),
        focus=focus,
        depth=depth,  # type: ignore[arg-type]
        deepen=deepen,
        index_dir=index_dir,
        warn=warn,
        on_graph=None if graph_file is None else graphs.append,
    )
    if graph_file is not None:
        graph = graphs[0]  # from explore's own walk and parse, not a second one
        write_graph(graph, graph_file)
        click.echo(
            f"wrote the import graph ({plural(len(graph.nodes), 'module')}, "
            f"{plural(len(graph.edges), 'edge')}, {plural(len(graph.cycles), 'cycle')}) "
            f"to {graph_file}",
            err=True,
        )
    if budget is not None:
        result = fit_budget(result, budget, "json" if as_json else "markdown")
    click.echo(render_json(result) if as_json else render_markdown(result), nl=False)


# -- dowse eval ------------------------------------------------------------------------

# Registered here, between explore and serve, to keep the commands' order.
cli.add_command(eval_group)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(file_okay=False))
@embed_options
@seam
def serve(
    paths: tuple[str, ...],
    embed_scope: str | None,
    no_embed: bool,
    embedder: str | None,
    quiet: bool,
) -> None:
    """Run an MCP server on stdio for coding agents, over one or more indexed roots.

    Tools: search, ask, explore, symbol, references, status, reindex. Each root's index
    is <root>/.dowse (or its config's index_dir); a root without one is served too, and
    the reindex tool builds it (--embed and --embedder, else the root's settings, apply to
    such new indexes); each root's config sets its walk options. Stdout carries the protocol only.

    \b
    Example:
        dowse serve
        dowse serve . fixtures/example
        claude mcp add dowse -- dowse serve "$PWD"
    """
    from dowse.indexer.options import DEFAULT_EMBED_SCOPE, embed_flags
    from dowse.server.app import serve as run_server
    from dowse.server.roots import RootOptions, ServedRoot

    scope = requested_scope(embed_scope, no_embed)
    roots = []
    for given in paths or (".",):
        # Each root with its own settings (flags first): its index_dir, walk options, ...
        root = root_arg(given)
        settings = settings_at(root)
        options = RootOptions(
            walk={
                "max_file_bytes": settings.given("max_file_size"),
                "exclude": settings.given("exclude"),
                "include_secrets": settings.given("include_secrets"),
            },
            history=settings.given("history"),
            embed_scope=settings.given("embed", scope),
            embedder=settings.given("embedder", embedder),
        )
        roots.append(ServedRoot(root, index_dir_of(settings, None), options))
    embed, embed_chunks = embed_flags(scope or DEFAULT_EMBED_SCOPE)
    run_server(
        roots,
        embedder=embedder or "minilm-onnx",
        embed=embed,
        embed_chunks=embed_chunks,
        warn=lambda m: None if quiet else click.echo(f"warning: {m}", err=True),
    )


@cli.command()
@click.argument("record", required=False)
@click.option("--list", "list_only", is_flag=True, help="Only name the records, one a line.")
@seam
def schema(record: str | None, list_only: bool) -> None:
    """Print the JSON Schema of an output record, or of every record.

    The records are what --json prints (IndexStats, StatusReport, Hit, SymbolMatch,
    AskReport, ExploreResult) and the MCP tools' requests and answers. Without RECORD,
    one JSON object maps every record's name to its schema.

    \b
    Example:
        dowse schema AskReport
        dowse schema --list
        dowse schema > dowse-schemas.json
    """
    from dowse.schema import RECORDS, json_schema

    if list_only:
        for name, (_, printed_by) in RECORDS.items():
            click.echo(f"{name}\t{printed_by}")
        return
    echo_json(json_schema(record) if record else {name: json_schema(name) for name in RECORDS})


GC_YOUNG_THRESHOLD = 50_000
"""The `dowse` process's first cyclic-GC threshold (Python's default: 700). A cold `ask`
makes ~75k objects that live to its end (modules, models, held rows): at the default
the collector ran ~280 times over them, two of them full passes, ~0.1 s of the main
thread's ~0.8 s of CPU on django (benchmarks/RESULTS.md); cycles are still collected."""


ARROW_ALLOCATOR_ENV = {"MIMALLOC_ALLOW_THP": "0"}
"""The `dowse` process's setting for Arrow's allocator (mimalloc, linked into pyarrow),
read when pyarrow loads: no transparent huge pages. mimalloc allows them by default, so
on a kernel that gives them on request (`madvise`, most distributions' default) the
first touch of each 2 MB of its arenas, however little of it is used, zeroes the whole
page: on django a cold `ask` spent ~0.2-0.5 s of system CPU there, a fifth of its CPU
(benchmarks/RESULTS.md). A value the user set is kept."""


def main() -> None:
    for name, value in ARROW_ALLOCATOR_ENV.items():  # before anything imports pyarrow
        os.environ.setdefault(name, value)
    from dowse.indexer.lance import leave_out_pandas
    from dowse.lazy import leave_out_pydantic_plugins

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    leave_out_pandas()
    leave_out_pydantic_plugins()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    # Registered first, so run last of the exit handlers: the interpreter's collections
    # at its end then skip what the command kept to its end (see `GC_YOUNG_THRESHOLD`).
    atexit.register(gc.freeze)
    cli(prog_name="dowse")


if __name__ == "__main__":
    main()
