"""What the `dowse` commands share: the error seam, shared options, argument checks and
the progress display.

Library errors (`DowseError`) become a one-line `Error: ...` and exit code 1 in `seam`,
and only there. Imported by `cli.py` and `cli_eval.py` (never the other way round), so it
stays as light as they are: heavy modules are imported inside the helpers that need them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from dowse.indexer.locate import IndexLocation
    from dowse.retrieval.hybrid import HybridSearcher
    from dowse.server.query_embedders import QueryEmbedders
    from dowse.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = 1) -> click.ClickException:
    from dowse.quote import one_line

    # One line, whatever paths or names it quotes (a file name may hold a newline).
    exc = click.ClickException(one_line(message))
    exc.exit_code = code  # type: ignore[misc]  # click declares it a class variable
    return exc


def seam(fn: F) -> F:
    """Turn library errors into one-line CLI errors (never a traceback for user mistakes)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from dowse.errors import DowseError

        try:
            return fn(*args, **kwargs)
        except DowseError as exc:
            raise fail(str(exc)) from None
        except KeyboardInterrupt:
            raise fail("interrupted; the last complete index is intact", 130) from None

    return wrapper  # type: ignore[return-value]


def index_dir_option(fn: F) -> F:
    return click.option(
        "--index-dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="Where the index lives (default: <repo>/.dowse; env DOWSE_INDEX_DIR, "
        "config index_dir).",
    )(fn)


def embed_options(fn: F) -> F:
    """--embed, --no-embed, --embedder and --quiet, shared by the commands that build
    indexes."""
    fn = click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")(fn)
    fn = click.option(
        "--embedder",
        default=None,
        help="Embedding backend: minilm-onnx (fast, the default) or minilm "
        "(sentence-transformers, the reference); both give the same model's vectors "
        "(env DOWSE_EMBEDDER, config embedder).",
    )(fn)
    fn = click.option(
        # indexer.build.EMBED_SCOPES, written out: importing indexer.build here would add
        # a quarter second to every command (tests/test_summary.py keeps them equal).
        "--embed",
        "embed_scope",
        type=click.Choice(["all", "files", "none"]),
        default=None,
        help="What gets vectors: files (a summary per file and each "
        "definition: fast), all (chunks too: slow), none (lexical and symbol index). "
        "Default: what the index was built with, else files.",
    )(fn)
    return click.option("--no-embed", is_flag=True, help="Same as --embed none.")(fn)


def requested_scope(embed_scope: str | None, no_embed: bool) -> str | None:
    if no_embed and embed_scope not in (None, "none"):
        raise fail(f"--no-embed contradicts --embed {embed_scope}")
    return "none" if no_embed else embed_scope


def refresh_option(fn: F) -> F:
    """--refresh/--no-refresh, shared by the commands that answer from an index."""
    return click.option(
        "--refresh/--no-refresh",
        default=True,
        help="Index the files changed since the last run before answering, as the MCP "
        "server does (default; only a stat walk when nothing changed). --no-refresh "
        "answers from the index as it is (changed files are then marked stale).",
    )(fn)


def prepared_embedders(location: IndexLocation, question: str) -> QueryEmbedders:
    """The process's query embedders, the located index's already loading what
    `question` will be embedded with, on a thread of its own (`QueryEmbedders.prepare`).
    Called before the imports the answer needs, so that the load overlaps them."""
    from dowse.server.query_embedders import QueryEmbedders

    embedders = QueryEmbedders()
    root, index_dir = location.require()
    embedders.prepare(root, index_dir, question)
    return embedders


def open_searcher(
    location: IndexLocation, refresh: bool, *, question: str | None = None
) -> HybridSearcher:
    """The HybridSearcher on the located index, refreshed first unless told not to; what
    the refresh could not do is said on stderr. The `question` to come, when given, has
    its embedder start loading before the searcher's modules are imported and the index
    opens (`prepared_embedders`)."""
    root, index_dir = location.require()
    if not refresh:
        from dowse.retrieval.hybrid import HybridSearcher

        return HybridSearcher.open(index_dir)
    embedders = None if question is None else prepared_embedders(location, question)
    from dowse.server.workspace import fresh_searcher

    searcher, fresh = fresh_searcher(root, index_dir, query_embedders=embedders)
    if fresh.reindexed:
        click.echo(f"indexed {fresh.reindexed} changed file(s) first", err=True)
    if fresh.note:
        click.echo(f"warning: {fresh.note}", err=True)
    return searcher


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")(fn)


def root_arg(path: str) -> Path:
    root = Path(path)
    if not root.exists():
        raise fail(f"no such directory: {path}")
    if not root.is_dir():
        raise fail(f"not a directory: {path}")
    return root.resolve()


def warn(message: str) -> None:
    from dowse.quote import one_line

    click.echo(f"warning: {one_line(message)}", err=True)


def settings_at(path: Path | None) -> Settings:
    """The settings for `path` (`dowse.settings`: flags go on top with `pick`/`value`)."""
    from dowse.settings import load_settings

    return load_settings(path)


def index_dir_of(settings: Settings, flag: Path | None) -> Path | None:
    """--index-dir, else DOWSE_INDEX_DIR, else the repository's index_dir; None: the
    default, <root>/.dowse."""
    value = settings.given("index_dir", flag)
    return None if value is None else Path(value)


def locate(path: Path, index_dir: Path | None) -> IndexLocation:
    """The index that serves `path` (`indexer.locate`); an index passed over on the way
    is a warning on stderr, and IndexNotFound says it when none serves."""
    from dowse.indexer.locate import locate_index

    location = locate_index(path, index_dir)
    location.require()
    for note in location.passed_over:
        warn(note)
    return location


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


@contextmanager
def progress_bars(quiet: bool) -> Iterator[Callable[[str, int, int], None]]:
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

    labels = {
        "walk": "walking files",
        "parse": "parsing",
        "write": "writing index",
        "embed": "embedding texts",
    }
    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description:<16}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(labels.get(stage, stage), total=total or 1)
            bar.update(tasks[stage], completed=done, total=total or 1)

        yield update
