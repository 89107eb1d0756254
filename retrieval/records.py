"""Records the retrieval layer returns: hits at three grains, and the options that shape them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Grain", "Hit", "SearchOptions"]

Grain = Literal["chunk", "symbol", "file"]


class SearchOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=10, gt=0, le=1000)
    grain: Grain = "chunk"
    include: list[str] = Field(default_factory=list, description="globs a path must match")
    exclude: list[str] = Field(default_factory=list, description="globs or paths to leave out")
    languages: list[str] = Field(default_factory=list)
    kinds: list[str] = Field(default_factory=list, description="symbol kinds (symbol grain)")


class Hit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    grain: Grain
    path: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    score: float
    signals: dict[str, float] = Field(
        default_factory=dict, description="the evidence behind the score, each in 0..1")
    language: str = ""
    symbol: str | None = Field(default=None, description="qualified name of the definition")
    kind: str | None = None
    signature: str = ""
    text: str | None = Field(default=None, description="the cited source lines")
    stale: bool = Field(default=False, description="the file changed since it was indexed")

    @property
    def citation(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"
