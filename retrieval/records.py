"""Records the retrieval layer returns: hits at three grains, the options that shape them,
and the files and blocks of source an answer is made of."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from dowse.errors import InvalidQuery, UnsupportedLanguage
from dowse.indexer.records import SymbolKind
from dowse.languages import CODE_LANGUAGES, TEXT_LANGUAGES

__all__ = [
    "MAX_QUERY_CHARS",
    "ContextBlock",
    "FileResult",
    "Grain",
    "Hit",
    "OmitsEmptyDefinitions",
    "SearchOptions",
    "check_query",
]

Grain = Literal["chunk", "symbol", "file"]


class OmitsEmptyDefinitions(BaseModel):
    """An answer (`AskResult`, MCP's `AskAnswer`) whose `definitions` field is left out of
    its serialized form when empty: an answer whose definitions gave way to the budget
    prints as it did before they were listed, without tokens for an empty list."""

    @model_serializer(mode="wrap")
    def _without_empty_definitions(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and not data.get("definitions", True):
            del data["definitions"]
        return data


MAX_QUERY_CHARS = 20_000
"""The longest query, question, symbol name or focus accepted, in characters. Room for
a pasted traceback or a function with the question around it (a few thousand tokens);
longer text only slows every stage (a 20 MB query held a served root for 47 s) while the
query embedder reads its first 256 tokens (~1,000 characters) and the ranking its words."""


def check_query(text: str, what: str = "query") -> None:
    """InvalidQuery when `text` cannot be a query: empty, over MAX_QUERY_CHARS, or not
    text (a lone surrogate: a byte that was not UTF-8 on the command line, or a ``\\ud800``
    escape in JSON)."""
    if not text.strip():
        raise InvalidQuery(f"the {what} is empty")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidQuery(
            f"the {what} is {len(text):,} characters long; at most {MAX_QUERY_CHARS:,}"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        char = ord(text[exc.start])
        # Python decodes a command line's undecodable byte 0xNN as the surrogate U+DCNN.
        shown = f"byte 0x{char - 0xDC00:02x}" if 0xDC80 <= char <= 0xDCFF else f"U+{char:04X}"
        raise InvalidQuery(
            f"the {what} is not valid UTF-8 text ({shown} at character {exc.start + 1})"
        ) from None


class SearchOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=10, gt=0, le=1000)
    grain: Grain = "chunk"
    include: list[str] = Field(default_factory=list, description="globs a path must match")
    exclude: list[str] = Field(default_factory=list, description="globs or paths to leave out")
    languages: list[str] = Field(default_factory=list)
    kinds: list[str] = Field(default_factory=list, description="symbol kinds (symbol grain)")

    def checked(self, query: str) -> SearchOptions:
        """These options with languages and kinds in lower case, for `query`;
        InvalidQuery for an empty query or an unknown kind, UnsupportedLanguage for an
        unknown language (a filter nothing can match would only answer "no results")."""
        check_query(query)
        languages = [name.lower() for name in self.languages]
        known = CODE_LANGUAGES | TEXT_LANGUAGES
        if unknown := [name for name in languages if name not in known]:
            raise UnsupportedLanguage(
                f"unknown language {unknown[0]!r}; the languages are: {', '.join(sorted(known))}"
            )
        kinds = [name.lower() for name in self.kinds]
        if unknown := [name for name in kinds if name not in get_args(SymbolKind)]:
            raise InvalidQuery(
                f"unknown symbol kind {unknown[0]!r}; the kinds are: "
                f"{', '.join(get_args(SymbolKind))}"
            )
        return self.model_copy(update={"languages": languages, "kinds": kinds})


class _Cited:
    """A record of a file's lines (`path`, `start_line`, `end_line`) and its citation."""

    if TYPE_CHECKING:
        path: str
        start_line: int
        end_line: int

    @property
    def citation(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


class Hit(_Cited, BaseModel):
    model_config = ConfigDict(extra="forbid")

    grain: Grain
    path: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    score: float
    signals: dict[str, float] = Field(
        default_factory=dict, description="the evidence behind the score, each in 0..1"
    )
    language: str = ""
    symbol: str | None = Field(default=None, description="qualified name of the definition")
    kind: str | None = None
    signature: str = ""
    text: str | None = Field(default=None, description="the cited source lines")
    stale: bool = Field(default=False, description="the file changed since it was indexed")


# -- what `ask` answers with (`retrieval.ask.AskResult`) ---------------------------------


class ContextBlock(_Cited, BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    start_line: int
    end_line: int
    symbol: str | None = None
    kind: str | None = None
    relevance: float
    reason: str
    form: Literal["full", "signature"] = Field(
        description="full source lines, or only the signature and citation"
    )
    text: str
    stale: bool = False
    tokens: int


class FileResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    relevance: float
    score: float = Field(description="ranking score: relevance and retrieval evidence")
    reason: str
    citations: list[str]
    words_rank: int | None = Field(
        default=None,
        description=(
            "its place (0 first) among the files whose chunks match the question's words best "
            "taken together, when among the first few"
        ),
    )
    closeness_rank: int | None = Field(
        default=None,
        description=(
            "its place (0 first) among the files closest to the question in meaning, when "
            "among the first few"
        ),
    )
    history_rank: int | None = Field(
        default=None,
        description=(
            "its place (0 first) among the files changed by the past commits whose messages "
            "match the question best, when among the first few"
        ),
    )
    commits: list[str] = Field(
        default_factory=list,
        description=("the best of those commits that changed it: short hash and subject"),
    )
