"""The MCP server's records and how an answer is fitted into its token budget.

Holds the request records (a tool's input schema is its request model's fields), the
answer records (its output schema), and `fit_answer`, which every tool's answer goes
through. `server.app` re-exports the public ones.

Invariants:
- Budgeted: an answer's JSON never exceeds the call's `max_tokens`, counted with the
  one counter, `retrieval.budget.estimate_tokens` (3 characters a token; see its invariants).
  When the full answer is larger, records are cut to signature and citation from the
  lowest-ranked up, then the lowest-ranked are left out whole, in the order the tool
  plans (`fit_answer`); no record is ever cut mid-way. `budget` says how many were cut
  and left out.
- A request record forbids unknown fields, `max_tokens` lies between MIN_TOKENS and
  MAX_TOKENS_LIMIT, and a query, question, name or focus holds at most
  `retrieval.records.MAX_QUERY_CHARS` characters.

Every record builds its validator on first use (`defer_build`): a process serves one or
two of these tools, and a CLI `ask` in markdown makes only `Freshness`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dowse.budgets import DEFAULT_BUDGET
from dowse.explore.records import Depth, ExploreResult
from dowse.indexer.records import IndexStats
from dowse.indexer.status import StatusReport
from dowse.retrieval.budget import Entry, Levels, Step, estimate_tokens, fit, forms, steps
from dowse.retrieval.records import (
    MAX_QUERY_CHARS,
    ContextBlock,
    FileResult,
    Grain,
    Hit,
    left_out_when_empty,
)
from dowse.retrieval.references import Callee, Caller, DefinitionRef
from dowse.retrieval.symbols import SymbolMatch

__all__ = [
    "MAX_TOKENS_LIMIT",
    "MIN_TOKENS",
    "AskAnswer",
    "AskRequest",
    "AskSynthesis",
    "Budget",
    "Definition",
    "Entry",
    "ExploreAnswer",
    "ExploreRequest",
    "Freshness",
    "ReferencesAnswer",
    "ReferencesRequest",
    "ReindexAnswer",
    "ReindexRequest",
    "RootReindex",
    "RootStatus",
    "SearchAnswer",
    "SearchRequest",
    "StatusAnswer",
    "StatusRequest",
    "SymbolAnswer",
    "SymbolRequest",
    "cut_block",
    "cut_hit",
    "fit_answer",
    "invalid_request",
]

MAX_TOKENS_LIMIT = 20_000
"""Agents refuse tool results over about 25k tokens; no answer may come near that."""
MIN_TOKENS = 256
"""Room for an answer's envelope (root, freshness, budget) and a few citations."""

A = TypeVar("A", bound=BaseModel)


# -- records -----------------------------------------------------------------------------


def _max_tokens(default: int) -> Any:
    return Field(
        default=default,
        ge=MIN_TOKENS,
        le=MAX_TOKENS_LIMIT,
        description=f"Upper bound on the answer's size in tokens, estimated at 3 "
        f"characters a token (default {default}).",
    )


def _root_field() -> Any:
    return Field(
        default=None,
        description=(
            "The served root to use: its path or its directory name. Needed only when the "
            "server serves several roots."
        ),
    )


def _path_field() -> Any:
    return Field(
        default=None,
        description=(
            "Only results under this file or directory: relative to the root, or absolute "
            "inside it. Paths outside the root (absolute, `..`, through a symlink) are refused."
        ),
    )


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class SearchRequest(_Request):
    query: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description=(
            "What to find: identifiers (`validate_token`, `Store.open`), a path, an error "
            "message, or plain words."
        ),
    )
    root: str | None = _root_field()
    path: str | None = _path_field()
    grain: Grain = Field(
        default="chunk",
        description=(
            "chunk: ranked source chunks; symbol: the enclosing definitions; file: files only."
        ),
    )
    limit: int = Field(default=10, ge=1, le=100, description="How many results at most.")
    include: list[str] = Field(
        default=[],
        description=("gitignore-style globs a result's path must match (under `path` when given)."),
    )
    exclude: list[str] = Field(
        default=[], description="gitignore-style globs of paths to leave out."
    )
    languages: list[str] = Field(
        default=[], description="Only these languages (python, typescript, ...)."
    )
    kinds: list[str] = Field(
        default=[], description="Only these symbol kinds (symbol grain): function, ..."
    )
    max_tokens: int = _max_tokens(4000)


class AskRequest(_Request):
    question: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description=(
            "A question about the code, e.g. 'where are expired session tokens rejected?'."
        ),
    )
    root: str | None = _root_field()
    path: str | None = _path_field()
    include: list[str] = Field(
        default=[],
        description=("gitignore-style globs a path must match (under `path` when given)."),
    )
    exclude: list[str] = Field(
        default=[], description="gitignore-style globs of paths to leave out."
    )
    max_tokens: int = _max_tokens(DEFAULT_BUDGET)


class SymbolRequest(_Request):
    name: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description=(
            "A definition's name; a qualified name (`Store.open`, `auth.tokens.validate_token`) "
            "narrows it. Exact matches first, then prefix, then fuzzy."
        ),
    )
    root: str | None = _root_field()
    limit: int = Field(default=5, ge=1, le=50, description="How many definitions at most.")
    max_tokens: int = _max_tokens(4000)


class ReferencesRequest(_Request):
    name: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description=(
            "A definition's exact name; a qualified name (`Store.open`, `store.Store`) "
            "narrows it to the definitions it ends."
        ),
    )
    direction: Literal["callers", "callees", "both"] = Field(
        default="both",
        description="callers: who calls or references it (with each line); callees: "
        "the definitions of the index it references.",
    )
    root: str | None = _root_field()
    limit: int = Field(default=30, ge=1, le=200, description="Callers and callees, each.")
    max_tokens: int = _max_tokens(3000)


class StatusRequest(_Request):
    root: str | None = Field(default=None, description="One served root (default: all).")
    max_tokens: int = _max_tokens(2000)


class ReindexRequest(_Request):
    root: str | None = Field(default=None, description="One served root (default: all).")
    rebuild: bool = Field(default=False, description="Discard the index and build it anew (slow).")
    max_tokens: int = _max_tokens(2000)


class ExploreRequest(_Request):
    path: str | None = Field(
        default=None,
        description=(
            "The directory or file to explore, relative to the root or absolute inside it "
            "(default: the whole root). Paths outside the root are refused."
        ),
    )
    root: str | None = _root_field()
    focus: str | None = Field(
        default=None,
        max_length=MAX_QUERY_CHARS,
        description=(
            "A question to answer inside the path with the retrieval loop, e.g. 'how are "
            "tokens refreshed?'."
        ),
    )
    depth: Depth = Field(
        default="standard",
        description=(
            "shallow: tree and manifests; standard: + coding patterns and the focus; deep: + "
            "import graph, git history and module specialists."
        ),
    )
    max_tokens: int = _max_tokens(6000)


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    max_tokens: int
    tokens: int = Field(description="estimated tokens of this answer's JSON")
    cut: int = Field(default=0, description="records cut to signature and citation to fit")
    omitted: int = Field(default=0, description="lower-ranked records left out to fit")


class Freshness(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    snapshot: float = Field(description="commit time of the index snapshot that answered")
    reindexed: int = Field(default=0, description="changed files indexed before answering")
    pending: int = Field(default=0, description="changed files this answer does not reflect yet")
    note: str = ""
    warnings: list[str] = Field(
        default_factory=list,
        description="what the update before answering left out and why (a remembered walk "
        "option this machine did not sign, say), as `dowse index` prints on stderr",
    )


class SearchAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    root: str
    hits: list[Hit] = Field(description="best first; `text` is null when cut to fit")
    freshness: Freshness
    budget: Budget


class AskSynthesis(BaseModel):
    """What the tracks of an explored question found, together."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    statement: str = Field(
        description="the answer in a paragraph: where it is, its callers and callees, its "
        "tests and settings, each place cited"
    )
    confidence: Literal["High", "Moderate", "Low"]
    basis: str = Field(
        description="what the confidence rests on: the tracks' gates and how many "
        "independent tracks support the findings"
    )
    findings: list[str] = Field(
        default_factory=list,
        description="the findings, best first, each cited, with the tracks that support it",
    )
    tracks: list[str] = Field(
        default_factory=list,
        description="one line per track: its name, its gates and its claims",
    )


class AskAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    root: str
    mode: Literal["retrieval", "exploration"] = Field(
        default="retrieval",
        description="retrieval: one loop answered; exploration: a broad question, answered "
        "by tracks in parallel (callers, callees, tests, settings, history) and summed up "
        "in `synthesis`",
    )
    files: list[FileResult] = Field(description="the files that answer it, best first")
    context: list[ContextBlock] = Field(
        description="cited source, best first; form 'signature' when cut to fit"
    )
    definitions: list[str] = Field(
        default_factory=list,
        exclude_if=left_out_when_empty,
        description="the definitions of the first files that answer it, best first, each "
        "`path:start-end Qualified.name`, in the room the rest leaves; left out when none is",
    )
    synthesis: AskSynthesis | None = Field(
        default=None, description="an explored question's tracks summed up; null otherwise"
    )
    stop_reason: str
    cycles: int
    freshness: Freshness
    budget: Budget


class ExploreAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    root: str
    result: ExploreResult = Field(
        description=(
            "structure, key files, dependencies, patterns, imports, git, cited focus findings, "
            "per-track gates and the synthesis; `omitted` counts what the budget left out"
        )
    )
    freshness: Freshness
    budget: Budget


class Definition(SymbolMatch):
    text: str | None = Field(
        default=None,
        description=("the definition's source, lines start_line..end_line; null when cut to fit"),
    )
    stale: bool = Field(default=False, description="the file changed since it was indexed")


class SymbolAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    root: str
    definitions: list[Definition]
    freshness: Freshness
    budget: Budget


class ReferencesAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    root: str
    name: str
    definitions: list[DefinitionRef] = Field(description="the definitions the name means")
    callers: list[Caller] = Field(description="strongest evidence first (`via`)")
    callees: list[Callee] = Field(description="strongest evidence first (`via`)")
    indexed: bool = Field(description="false: the index predates references; reindex it")
    truncated: bool = Field(description="more than `limit` callers or callees")
    freshness: Freshness
    budget: Budget


class RootStatus(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    root: str
    report: StatusReport | None = None
    error: str | None = None


class StatusAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    roots: list[RootStatus]
    budget: Budget


class RootReindex(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    root: str
    stats: IndexStats | None = None
    error: str | None = None
    warnings: list[str] = Field(
        default_factory=list,
        description="what the run left out and why (a remembered walk option this machine "
        "did not sign, say), as `dowse index` prints on stderr",
    )


class ReindexAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    roots: list[RootReindex]
    budget: Budget


# -- fitting an answer into its budget ---------------------------------------------------


def fit_answer(
    make: Callable[[list[list[Any]], Budget], A],
    groups: Sequence[Sequence[Entry]],
    max_tokens: int,
    *,
    omitted: int = 0,
    plan: Iterable[Step] | None = None,
) -> A:
    """The answer `make` builds from the groups' records, at most `max_tokens` as JSON.

    Steps, in `plan`'s order (by default: for each group, cut its records from the last
    up, then leave them out from the last up), until it fits. The fewest steps that fit
    are found by bisection, each candidate serialised whole, so the count is exact.
    """
    if plan is None:
        plan = [
            step
            for g, entries in enumerate(groups)
            for step in steps(g, entries, 1) + steps(g, entries, 2)
        ]

    def build(levels: Levels, claimed: int) -> A:
        cut = sum(row.count(1) for row in levels)
        left_out = sum(row.count(2) for row in levels)
        budget = Budget(max_tokens=max_tokens, tokens=claimed, cut=cut, omitted=omitted + left_out)
        return make(forms(groups, levels), budget)

    return fit(build, groups, plan, lambda a: estimate_tokens(a.model_dump_json()), max_tokens)


def _first_line(text: str | None) -> str:
    return next((ln.strip() for ln in (text or "").split("\n") if ln.strip()), "")[:160]


def cut_hit(hit: Hit) -> Hit | None:
    if hit.text is None:
        return None
    return hit.model_copy(
        update={"text": None, "signature": hit.signature or _first_line(hit.text)}
    )


def cut_block(block: ContextBlock, signature: str) -> ContextBlock | None:
    """A whole block cut to its definition's signature (`signature`, from the index),
    else to the first line of it that declares something."""
    from dowse.retrieval.ask import signature_block  # imported by whatever made the block

    cut = signature_block(block)
    if cut is None or not signature:
        return cut
    return cut.model_copy(update={"text": signature, "start_line": block.start_line})


def invalid_request(exc: ValidationError) -> str:
    """A request record's first validation error in one line, naming the field."""
    err = exc.errors()[0]
    field = ".".join(map(str, err["loc"])) or "request"
    if err["type"] == "extra_forbidden":
        return f"{field}: unknown field"
    return f"{field}: {err['msg']}"
