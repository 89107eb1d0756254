"""The JSON Schemas of dowse's output records, for tools that validate what they consume.

Every record `--json` prints, and every MCP tool's request and answer, is a pydantic model;
its schema comes from that model (`model_json_schema()`), so it cannot drift from what is
printed. Records are named as the classes are; the modules are imported on first use so
that naming them costs nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import BaseModel

from dowse.errors import UnknownRecord

__all__ = ["RECORDS", "json_schema", "record"]

# name -> (module, what prints it). Output records first, then the MCP server's records.
RECORDS: dict[str, tuple[str, str]] = {
    "IndexStats": ("dowse.indexer.build", "dowse index --json"),
    "StatusReport": ("dowse.indexer.status", "dowse status --json"),
    "Hit": ("dowse.retrieval.records", "dowse search --json (a list of them)"),
    "SymbolMatch": ("dowse.retrieval.symbols", "dowse symbol --json (a list of them)"),
    "AskReport": ("dowse.explore.handoff", "dowse ask --json"),
    "ExploreResult": ("dowse.explore.records", "dowse explore --json"),
    **{
        name: ("dowse.server.records", f"the MCP {tool} tool's {part}")
        for tool in ("search", "ask", "explore", "symbol", "status", "reindex")
        for name, part in (
            (f"{tool.capitalize()}Request", "input"),
            (f"{tool.capitalize()}Answer", "output"),
        )
    },
}


def record(name: str) -> type[BaseModel]:
    """The model named `name` (exactly as in RECORDS)."""
    if name not in RECORDS:
        raise UnknownRecord(f"no record {name!r}; known: {', '.join(RECORDS)}")
    model = getattr(importlib.import_module(RECORDS[name][0]), name)
    assert isinstance(model, type) and issubclass(model, BaseModel)
    return model


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12, as pydantic writes it) of the record `name`."""
    schema = record(name).model_json_schema()
    schema.setdefault("$schema", "https://json-schema.org/draft/2020-12/schema")
    return schema
