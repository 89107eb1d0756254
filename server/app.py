"""`dowse serve`: the MCP skin over the library, for coding agents (stdio, official SDK).

Like cli.py it only translates: a tool call is validated into a request record, one
library function answers it, and the answer record is sent back. The MCP SDK is imported
only by `build_server` and `serve`; what the CLI shares with the tools (`ask_for_agent`,
the refresh before a query) is library code in `workspace`, re-exported here.

Layout: `server.records` holds the request and answer records and fits an answer into
its budget; `server.roots` the served roots; `server.workspace` the `Workspace` that
answers each tool; this module registers the tools with the SDK and runs the server. The
public names of all four are importable from here.

Started, a server answers the handshake (`initialize`, `tools/list`) with what that
needs: the records and the SDK's server, without its client (`mcp`'s `__init__` imports
both) and with the SDK's wire models built on first use. The `Workspace`, with the
searcher's imports (numpy, pyarrow, LanceDB), is opened and warmed on a thread of its own
once the server is built; a tool call that comes first waits for it.

Invariants:
- Records are the contract. Each tool's input schema is its request model's fields
  (`SearchRequest`, ...), its output schema the answer model (`SearchAnswer`, ...). An
  answer is sent as structuredContent and, identically, as compact JSON text.
- The request record is the only validator of a call's arguments: the SDK's own argument
  model would drop an unknown field silently (a misspelt `max_token` would run with the
  default budget), so it hands every argument through, and the record refuses unknown
  fields and out-of-bounds values with one line naming the field.
- Budgeted, and a request record's bounds: see `server.records`.
- Fresh, Confined, Warm, Concurrent: see `server.workspace`.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from dowse.errors import DowseError
from dowse.indexer.embed import DEFAULT_EMBEDDER
from dowse.indexer.options import DEFAULT_EMBED_SCOPE, embed_flags
from dowse.lazy import deferred_models, exports, unrun_package
from dowse.quote import one_line
from dowse.server.records import MAX_TOKENS_LIMIT as MAX_TOKENS_LIMIT  # tests read the bound here
from dowse.server.records import (
    AskAnswer,
    AskRequest,
    Budget,
    Definition,
    ExploreAnswer,
    ExploreRequest,
    Freshness,
    ReferencesAnswer,
    ReferencesRequest,
    ReindexAnswer,
    ReindexRequest,
    SearchAnswer,
    SearchRequest,
    StatusAnswer,
    StatusRequest,
    SymbolAnswer,
    SymbolRequest,
    invalid_request,
)
from dowse.server.roots import ServedRoot

if TYPE_CHECKING:
    from dowse.server.workspace import Workspace, ask_for_agent

__all__ = [
    "TOOLS",
    "AskAnswer",
    "AskRequest",
    "Budget",
    "Definition",
    "ExploreAnswer",
    "ExploreRequest",
    "Freshness",
    "ReindexAnswer",
    "ReindexRequest",
    "SearchAnswer",
    "SearchRequest",
    "ServedRoot",
    "StatusAnswer",
    "StatusRequest",
    "SymbolAnswer",
    "SymbolRequest",
    "ToolSpec",
    "Workspace",
    "ask_for_agent",
    "build_server",
    "serve",
    "start",
]


# -- the MCP server ----------------------------------------------------------------------

_BUDGETED = (
    " The answer is one JSON record (structuredContent, and the same JSON as text) of at "
    "most max_tokens tokens: when the full answer is larger, the lowest-ranked records are "
    "first cut to signature and citation, then left out, never cut mid-record (`budget` "
    "counts both)."
)
_CITED = " Citations are `path:start-end`, paths relative to the root."
_FRESH = (
    " Changed files are indexed before answering (`freshness` says when that was not possible)."
)


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: its request and answer records and the Workspace method behind it."""

    name: str
    request: type[BaseModel]
    answer: type[BaseModel]
    method: str
    """The Workspace method that answers it, by name (the workspace module is imported
    after the handshake)."""
    description: str
    read_only: bool = True


TOOLS: list[ToolSpec] = [
    ToolSpec(
        "search",
        SearchRequest,
        SearchAnswer,
        "search",
        "Hybrid code search (BM25 over code-aware tokens, vectors when the index has "
        "them, symbol-name and path evidence): ranked chunks, definitions or files "
        "for identifiers, strings, paths or plain words." + _BUDGETED + _CITED + _FRESH,
    ),
    ToolSpec(
        "ask",
        AskRequest,
        AskAnswer,
        "ask",
        "Answer 'where and how is X done here?': runs the iterative retrieval loop "
        "(search, score every candidate's relevance with a reason, refine, at most 3 "
        "cycles) and returns the ranked files and the cited source that answer it."
        + _BUDGETED
        + _CITED
        + _FRESH,
    ),
    ToolSpec(
        "explore",
        ExploreRequest,
        ExploreAnswer,
        "explore",
        "Structured, cited understanding of a directory or file in one call: tree and "
        "key files, dependency manifests, coding patterns, a focus question answered "
        "with the retrieval loop, and (deep) the import graph, git history and module "
        "specialists. Explorers run in parallel on gated tracks; every claim cites "
        "file:line, checked against the file." + _BUDGETED,
    ),
    ToolSpec(
        "symbol",
        SymbolRequest,
        SymbolAnswer,
        "symbol",
        "Definitions by name (exact, then prefix, then fuzzy) with kind, signature, "
        "docstring, exact start and end lines, and the source of those lines."
        + _BUDGETED
        + _CITED
        + _FRESH,
    ),
    ToolSpec(
        "references",
        ReferencesRequest,
        ReferencesAnswer,
        "references",
        "Who calls or references a definition (each caller's definition and the lines, "
        "`path:line`) and which definitions of the index it references, from the index's "
        "references resolved through imports; `via` says on what evidence (same-file, "
        "import, package, name)." + _BUDGETED + _FRESH,
    ),
    ToolSpec(
        "status",
        StatusRequest,
        StatusAnswer,
        "status",
        "What each served index holds (files, symbols, chunks per language, model, "
        "vectors) and how many files changed since it was built. Reads only." + _BUDGETED,
    ),
    ToolSpec(
        "reindex",
        ReindexRequest,
        ReindexAnswer,
        "reindex",
        "Bring the index up to date now (incremental; rebuild=true starts over), or "
        "build the first index of a served root that has none. Only one process "
        "writes an index at a time; this waits up to 30 s for another one." + _BUDGETED,
        read_only=False,
    ),
]
"""The tools `build_server` registers. Adding one: a request and an answer record, a
Workspace method from one to the other, and a line here."""


_ANNOTATED: Any = Annotated  # subscripted with a tuple built at run time


def _signature(request: type[BaseModel], answer: type[BaseModel]) -> inspect.Signature:
    """The request model's fields as keyword parameters, for the SDK to build the input
    schema from; the answer model as the return annotation, for the output schema."""
    params = []
    for name, f in request.model_fields.items():
        default = (
            inspect.Parameter.empty if f.is_required() else f.get_default(call_default_factory=True)
        )
        annotation = _ANNOTATED[(f.annotation, Field(description=f.description), *f.metadata)]
        params.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )
    return inspect.Signature(params, return_annotation=answer)


class _Opening:
    """The Workspace over `roots`, opened by `open` on a thread of its own; `get` waits
    for it (and raises what opening it raised)."""

    def __init__(self, roots: Sequence[ServedRoot]) -> None:
        self.roots = list(roots)
        self._done: Future[Workspace] = Future()

    def open(self, warn: Callable[[str], None], **options: Any) -> None:
        try:
            from dowse.server.workspace import Workspace

            workspace = Workspace(self.roots, **options)
            for problem in workspace.problems():
                warn(problem)
        except BaseException as exc:
            self._done.set_exception(exc)
            return
        self._done.set_result(workspace)
        workspace.warm()

    def get(self) -> Workspace:
        return self._done.result()


def _tool_function(spec: ToolSpec, workspace: Workspace | _Opening) -> Callable[..., Any]:
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, TextContent

    def call(**arguments: Any) -> CallToolResult:
        try:
            request = spec.request(**arguments)
        except ValidationError as exc:
            known = ", ".join(spec.request.model_fields)
            message = invalid_request(exc)
            if message.endswith(": unknown field"):
                message += f" (the fields of {spec.name} are: {known})"
            raise ToolError(one_line(message)) from None
        try:
            ready = workspace.get() if isinstance(workspace, _Opening) else workspace
            answer = getattr(ready, spec.method)(request)
        except DowseError as exc:  # the store's own, for a damaged index file too
            # One line, as the CLI's seam makes it: a message can name a path of the
            # repository, and a path can hold a newline.
            raise ToolError(one_line(str(exc))) from None
        text = answer.model_dump_json()
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=json.loads(text)
        )

    call.__signature__ = _signature(spec.request, spec.answer)  # type: ignore[attr-defined]
    call.__name__ = spec.name
    return call


def _passing_through(tool: Any) -> Any:
    """`tool` with an argument model that hands every argument to the tool function
    unchecked, for the request record to validate (module invariants), and an input
    schema that says unknown fields are refused."""
    base = tool.fn_metadata.arg_model

    class Arguments(base):  # type: ignore[misc, valid-type]
        model_config = cast(ConfigDict, {**base.model_config, "extra": "allow"})
        _given: dict[str, Any] = PrivateAttr(default_factory=dict)

        @classmethod
        def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Any:
            made = cls.model_construct()
            made._given = dict(obj)
            return made

        def model_dump_one_level(self) -> dict[str, Any]:
            return dict(self._given)

    Arguments.__name__ = base.__name__
    tool.fn_metadata.arg_model = Arguments
    tool.parameters = {**tool.parameters, "additionalProperties": False}
    return tool


def _import_sdk() -> None:
    """Import the SDK's server: without its client, which the `mcp` package's `__init__`
    imports too, and with the wire models (two protocol eras' ~300 pydantic models) built
    when a message first needs one."""
    if "mcp.server.mcpserver" in sys.modules:
        return
    unrun_package("mcp")
    with deferred_models():
        importlib.import_module("mcp.server.mcpserver")


def build_server(workspace: Workspace | _Opening) -> Any:
    """An MCPServer with the TOOLS over `workspace` (or the one being opened)."""
    import importlib.metadata

    _import_sdk()
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool
    from mcp.types import ToolAnnotations

    roots = ", ".join(dict.fromkeys(str(r.path) for r in workspace.roots))
    tools = [
        _passing_through(
            Tool.from_function(
                _tool_function(spec, workspace),
                name=spec.name,
                description=spec.description,
                annotations=ToolAnnotations(
                    read_only_hint=spec.read_only, idempotent_hint=True, open_world_hint=False
                ),
            )
        )
        for spec in TOOLS
    ]
    app: Any = MCPServer(
        "dowse",
        version=importlib.metadata.version("dowse"),
        log_level="WARNING",
        instructions=(
            f"dowse: offline code retrieval over the indexed repositories {roots}. Use ask "
            "for 'where/how is X done?' questions, search for identifiers, strings and "
            "paths, symbol for a definition's exact lines, references for its callers and "
            "callees. Every answer fits its max_tokens "
            "and cites path:start-end; paths are relative to the root."
        ),
        tools=tools,
    )
    return app


def start(
    roots: Sequence[Path | ServedRoot],
    *,
    embedder: str = DEFAULT_EMBEDDER,
    embed: bool = True,
    embed_chunks: bool = embed_flags(DEFAULT_EMBED_SCOPE)[1],
    warn: Callable[[str], None] = lambda message: None,
) -> Any:
    """The MCP server over `roots`, its workspace opening meanwhile in a thread of its
    own: `serve` runs it on stdio; a client in this process may connect to it as it is
    (the SDK's `Client(server)`).

    `embedder`, `embed` and `embed_chunks` apply to indexes the server builds from
    scratch (the reindex tool on a root without an index), unless a root's options say
    otherwise; an existing index keeps its model and embed scope. `warn` is called, from
    the thread that opens the workspace, for each root that cannot be queried yet.
    """
    served = [r if isinstance(r, ServedRoot) else ServedRoot(r) for r in roots]
    if not served:
        raise DowseError("no root to serve")
    workspace = _Opening(served)
    server = build_server(workspace)
    options = {"embedder": embedder, "embed": embed, "embed_chunks": embed_chunks}
    threading.Thread(
        target=workspace.open, args=(warn,), kwargs=options, name="dowse-warm", daemon=True
    ).start()
    return server


def serve(
    roots: Sequence[Path | ServedRoot],
    *,
    embedder: str = DEFAULT_EMBEDDER,
    embed: bool = True,
    embed_chunks: bool = embed_flags(DEFAULT_EMBED_SCOPE)[1],
    warn: Callable[[str], None] = lambda message: None,
) -> None:
    """Serve `roots` over stdio until the client closes the connection (`start`'s
    server)."""
    server = start(roots, embedder=embedder, embed=embed, embed_chunks=embed_chunks, warn=warn)
    server.run("stdio")


exports(__name__, dict.fromkeys(["Workspace", "ask_for_agent"], "dowse.server.workspace"))
