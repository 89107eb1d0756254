"""Symbol lookup by name: exact, then prefix, then fuzzy.

A name may be qualified (`Store.open`, `indexer.store.Store`): the last part is matched
against symbol names and the rest must end the symbol's qualified name or path.
"""

from __future__ import annotations

import difflib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from dowse.indexer.store import Store, where_equals, where_in, where_prefix
from dowse.retrieval.records import check_query

__all__ = ["SymbolMatch", "find_symbols", "qualifies"]


class SymbolMatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    name: str
    qualified_name: str
    kind: str
    signature: str
    docstring: str
    decorators: list[str]
    start_line: int
    end_line: int
    name_line: int
    parent: str | None
    language: str
    match: Literal["exact", "prefix", "fuzzy"]


def qualifies(row: dict[str, Any], qualifier: str) -> bool:
    """Whether `qualifier` (`Store`, `indexer.store`) ends the row's parent or module."""
    if not qualifier:
        return True
    q = qualifier.lower()
    parent = (row["parent"] or "").lower()
    module = row["path"].rsplit(".", 1)[0].replace("/", ".").lower()
    return parent.endswith(q) or module.endswith(q) or f"{module}.{parent}".endswith(q)


def _match(row: dict[str, Any], how: Literal["exact", "prefix", "fuzzy"]) -> SymbolMatch:
    keep = {k: row[k] for k in SymbolMatch.model_fields if k != "match"}
    return SymbolMatch(**keep, match=how)


def find_symbols(store: Store, name: str, *, limit: int = 10) -> list[SymbolMatch]:
    if name.strip():
        check_query(name, "name")
    qualifier, _, last = name.strip().rpartition(".")
    low = last.lower()
    if not low:
        return []
    columns = [*SymbolMatch.model_fields.keys() - {"match"}, "name_lower"]
    out: list[SymbolMatch] = []
    seen: set[tuple[str, int]] = set()

    def take(rows: list[dict[str, Any]], how: Literal["exact", "prefix", "fuzzy"]) -> None:
        rows = sorted(rows, key=lambda r: (len(r["name"]), r["path"], r["start_line"]))
        for r in rows:
            key = (r["path"], r["start_line"])
            if key not in seen and qualifies(r, qualifier) and len(out) < limit:
                seen.add(key)
                out.append(_match(r, how))

    take(store.rows("symbols", columns, where_equals("name_lower", low), limit * 20), "exact")
    if len(out) < limit:
        prefix = where_prefix("name_lower", low)
        take(store.rows("symbols", columns, prefix, limit * 20), "prefix")
    if len(out) < limit:
        names = {r["name_lower"] for r in store.rows("symbols", ["name_lower"])}
        close = difflib.get_close_matches(low, names, n=limit, cutoff=0.75)
        if close:
            take(store.rows("symbols", columns, where_in("name_lower", close), limit * 20), "fuzzy")
    return out
