"""One setting's effective value and where it came from: the record `dowse status` shows
for each key (`dowse.settings` resolves them).

Apart from `dowse.settings` because it is a pydantic model: reading the settings is the
first thing every command does, and a command that needs no record (a no-op `dowse
index`, `indexer.noop`) imports no pydantic.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Setting"]


class Setting(BaseModel):
    """One setting's effective value and where it came from."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="the key, as config files spell it")
    value: Any = Field(description="the effective value (null: unset)")
    source: str = Field(
        description="where the value came from: the flag, the variable, 'FILE:LINE', "
        "'the index' (remembered from its last run) or 'default'"
    )
