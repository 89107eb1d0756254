"""A ranking of candidate chunks as search results of one grain: the chunks themselves,
their files (each file's best chunk, a little credit for its others), or the definitions
behind them (a chunk's enclosing symbol, else the symbols inside it that share the most
words with the query).

Invariant: the ranking decides the order at every grain; a grain only groups or widens
what the ranking put first, it reads nothing but the symbols of the ranked files and
their source lines.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dowse.indexer.reading import read_inside
from dowse.indexer.secrets import file_secret, redact
from dowse.indexer.store import where_in
from dowse.retrieval.records import Hit, SearchOptions
from dowse.tokens import tokenize

if TYPE_CHECKING:
    from dowse.retrieval.lookups import IndexLookups
    from dowse.retrieval.pool import Candidate

__all__ = ["chunk_hit", "read_lines", "to_hits"]


def to_hits(
    lookups: IndexLookups, ranked: Sequence[Candidate], options: SearchOptions, query: str = ""
) -> list[Hit]:
    """The first `options.limit` results of `options.grain` from `ranked` (best first),
    with `lookups` for the definitions of the symbol grain."""
    if options.grain == "file":
        return _file_hits(ranked, options.limit)
    if options.grain == "symbol":
        return _symbol_hits(lookups, ranked, options, query)
    return [chunk_hit(c) for c in ranked[: options.limit]]


def _file_hits(ranked: Sequence[Candidate], limit: int) -> list[Hit]:
    by_file: dict[str, list[Candidate]] = {}
    for c in ranked:
        by_file.setdefault(c.row["path"], []).append(c)
    hits = []
    for path, cs in by_file.items():
        top = cs[0]
        score = top.score + 0.1 * min(sum(c.score for c in cs[1:]), 1.0)
        signals = {k: max(c.signals.get(k, 0.0) for c in cs) for c in cs for k in c.signals}
        hits.append(
            Hit(
                grain="file",
                path=path,
                start_line=top.row["start_line"],
                end_line=top.row["end_line"],
                score=round(score, 4),
                signals=signals,
                language=top.row["language"],
                symbol=top.row["symbol"],
                text=None,
            )
        )
    hits.sort(key=lambda h: (-h.score, h.path))
    return hits[:limit]


def _symbol_hits(
    lookups: IndexLookups, ranked: Sequence[Candidate], options: SearchOptions, query: str
) -> list[Hit]:
    """The definitions behind the ranked chunks: the chunk's enclosing symbol, or the
    symbols inside it that share the most words with the query."""
    paths = sorted({c.row["path"] for c in ranked[: options.limit * 4]})
    if not paths:
        return []
    by_path: dict[str, list[dict[str, Any]]] = {}
    for r in lookups.store.rows("symbols", where=where_in("path", paths)):
        by_path.setdefault(r["path"], []).append(r)
    query_tokens = set(tokenize(query))
    hits: list[Hit] = []
    seen: set[str] = set()
    for c in ranked:
        syms = by_path.get(c.row["path"], [])
        lo, hi = c.row["start_line"], c.row["end_line"]
        owner = [s for s in syms if s["qualified_name"] == c.row["symbol"]]
        inside = [s for s in syms if lo <= s["start_line"] and s["end_line"] <= hi]
        inside.sort(key=lambda s: (-len(query_tokens & set(s["tokens"].split())), s["start_line"]))
        for sym in owner or inside[:3]:
            if sym["id"] in seen or (options.kinds and sym["kind"] not in options.kinds):
                continue
            seen.add(sym["id"])
            text = read_lines(lookups.root, sym["path"], sym["start_line"], sym["end_line"])
            hits.append(
                Hit(
                    grain="symbol",
                    path=sym["path"],
                    start_line=sym["start_line"],
                    end_line=sym["end_line"],
                    score=c.score,
                    signals=c.signals,
                    language=sym["language"],
                    symbol=sym["qualified_name"],
                    kind=sym["kind"],
                    signature=sym["signature"],
                    text=text,
                )
            )
            if len(hits) >= options.limit:
                return hits
    return hits


def chunk_hit(c: Candidate) -> Hit:
    """The chunk-grain Hit of a candidate, as search returns it."""
    r = c.row
    return Hit(
        grain="chunk",
        path=r["path"],
        start_line=r["start_line"],
        end_line=r["end_line"],
        score=c.score,
        signals=c.signals,
        language=r["language"],
        symbol=r["symbol"],
        text=r["text"],
    )


def read_lines(root: Path, path: str, start: int, end: int) -> str | None:
    """Lines `start`..`end` (from 1) of the root-relative file `path` as it is now, in the
    text form the index read (`indexer.reading.text_bytes`, so line numbers agree) and
    redacted as the index is (`indexer.secrets`); None when it cannot be read, now leads
    outside `root`, or is a secret as a whole (it became one since it was indexed)."""
    data = read_inside(root, path)
    if data is None:
        return None
    name = posixpath.basename(path)
    if file_secret(data, name) is not None:
        return None
    lines = data.split(b"\n")[start - 1 : end]
    return redact(b"\n".join(lines).decode("utf-8", "replace"), name)


def lines_above(
    root: Path,
    row: Mapping[str, Any],
    definition: Mapping[str, Any] | None,
    sources: dict[str, list[str]],
) -> str:
    """The lines of `definition` (the chunk's, `start_line`, `end_line`) above the chunk
    `row` (`path`, `start_line`) cut from it, as the file under `root` holds them now;
    empty when the chunk starts with its definition. A chunk of a long definition can
    begin inside a docstring or block comment opened above it: whether it does is read
    from these lines (`behaviour.line_kinds`), never printed: the file is read as the
    index read it and not redacted (`read_lines` redacts what the context prints, at a
    cost that grows with the file). `sources`: the files read so far, by path, each read
    once."""
    first = int(row["start_line"])
    if definition is None or not int(definition["start_line"]) < first:
        return ""
    path = row["path"]
    if path not in sources:
        data = read_inside(root, path)
        sources[path] = data.decode("utf-8", "replace").split("\n") if data is not None else []
    return "\n".join(sources[path][int(definition["start_line"]) - 1 : first - 1])


def definition_of(
    row: Mapping[str, Any], symbols: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The definition a chunk `row` shows (its `symbol`, among `symbols`: its file's): of
    those so named, the one whose lines overlap the chunk's. One name can have several
    definitions in a file — a C function's prototype and its body (zstd declares its
    static functions at the top), C++ and Java overloads, a Python property's getter and
    setter — and the first of them is often not the chunk's: widening a chunk of a body
    to its prototype's lines spans everything between. The first so named when none
    overlaps (a chunk cut from a longer definition's text)."""
    name = row.get("symbol") or ""
    named = [s for s in symbols if s["qualified_name"] == name]
    lo, hi = int(row["start_line"]), int(row["end_line"])
    return next(
        (s for s in named if int(s["start_line"]) <= hi and lo <= int(s["end_line"])),
        named[0] if named else None,
    )
