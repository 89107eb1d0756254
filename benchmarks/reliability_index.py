"""Looking at an index for benchmarks/reliability.py: a snapshot's content fingerprint
and its inconsistencies, the answers of fixed queries, and the tables' newest versions.
Indexes are read in-process with `indexer.store.Store`.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from reliability_proc import Ran

from dowse.errors import DowseError, IndexNotFound
from dowse.indexer.build import _content_hash
from dowse.indexer.store import SNAPSHOT_TABLES, Store

# -- looking at an index ----------------------------------------------------------------------


def inspect(index_dir: Path) -> tuple[str | None, list[str]]:
    """(fingerprint, problems) of the snapshot at `index_dir`, reading each table once.

    The fingerprint digests the snapshot's content (files, symbols, chunks, imports,
    skipped files; None: no index); vectors are checked, not digested. A file's hash is
    its content's, without the mark of a racily clean row (`indexer.build._RACY`): that
    mark depends on when a run read the file, so two builds of the same tree a few
    seconds apart would differ by it. Problems are what is inconsistent inside the
    snapshot: one that mixed two commits shows here, as per-file counts that disagree
    with the rows of the other tables.
    """
    try:
        store = Store.open(index_dir)
    except IndexNotFound:
        return None, []
    files = store.rows("files", ["path", "hash", "n_symbols", "n_chunks", "parser"])
    symbols = store.rows("symbols", ["path", "qualified_name", "kind", "start_line", "end_line"])
    chunks = store.rows("chunks", ["id", "path", "hash", "start_line", "end_line"])
    parts: list[Any] = [
        sorted(
            (r["path"], _content_hash(r["hash"]), r["n_symbols"], r["n_chunks"], r["parser"])
            for r in files
        ),
        sorted(
            (r["path"], r["qualified_name"], r["kind"], r["start_line"], r["end_line"])
            for r in symbols
        ),
        sorted((r["id"], r["hash"], r["start_line"], r["end_line"]) for r in chunks),
        sorted(
            (r["path"], r["module"], r["line"], r["resolved"] or "")
            for r in store.rows("imports", ["path", "module", "line", "resolved"])
        ),
        # The index directory is skipped under a different reason when it lies elsewhere.
        sorted(
            (r["path"], r["reason"])
            for r in store.rows("skipped")
            if not r["path"].startswith(".dowse")
        ),
    ]
    digest = hashlib.blake2b(json.dumps(parts).encode(), digest_size=12).hexdigest()
    problems = []
    per_symbol = Counter(r["path"] for r in symbols)
    per_chunk = Counter(r["path"] for r in chunks)
    known = {r["path"] for r in files}
    for r in files:
        if (
            per_symbol.get(r["path"], 0) != r["n_symbols"]
            or per_chunk.get(r["path"], 0) != r["n_chunks"]
        ):
            problems.append(f"{r['path']}: counts disagree")
    problems += [f"{p}: rows without a file" for p in (set(per_symbol) | set(per_chunk)) - known]
    hashes = {r["id"]: r["hash"] for r in chunks}
    if len(hashes) != len(chunks):
        problems.append("duplicate chunk ids")
    vectors = store.rows("vectors", ["id", "hash"])
    if any(hashes.get(r["id"]) != r["hash"] for r in vectors):
        problems.append("a vector without a chunk of its text")
    if store.manifest.embedded and store.manifest.embed_chunks and len(vectors) != len(chunks):
        problems.append("manifest says embedded, chunk vectors are missing")
    if store.manifest.embedded and store.table("file_vectors").count_rows("id = path") != len(
        files
    ):
        problems.append("manifest says embedded, file summary vectors are missing")
    return digest, problems[:5]


def fingerprint(index_dir: Path) -> str | None:
    return inspect(index_dir)[0]


def audit(index_dir: Path) -> list[str]:
    return inspect(index_dir)[1]


def answers(index_dir: Path, queries: tuple[list[str], list[str]]) -> Any:
    """The top hits of fixed lexical searches and symbol look-ups (None: no index)."""
    from dowse.retrieval.hybrid import HybridSearcher
    from dowse.retrieval.records import SearchOptions
    from dowse.retrieval.symbols import find_symbols

    try:
        store = Store.open(index_dir)
    except IndexNotFound:
        return None
    searcher = HybridSearcher(store)  # no embedder: lexical, as with --no-embed
    found: dict[str, Any] = {}
    for q in queries[0]:
        found[q] = [
            (h.path, h.start_line, h.end_line) for h in searcher.search(q, SearchOptions(limit=5))
        ]
    for name in queries[1]:
        found["symbol " + name] = [
            (m.path, m.start_line, m.end_line) for m in find_symbols(store, name, limit=5)
        ]
    return found


def cli_hits(ran: Ran) -> Any:
    """`dowse search --json` as comparable data; None for 'no index'."""
    if ran.code == 1 and "no index" in ran.err:
        return None
    if ran.code != 0:
        return ("error", ran.last_line)
    return [(h["path"], h["start_line"], h["end_line"]) for h in json.loads(ran.out)]


def table_heads(index_dir: Path) -> dict[str, int]:
    """The newest version of each snapshot table (ahead of the manifest mid-write), in
    the tables the manifest names (a rebuild writes a new generation under new names)."""
    import lancedb

    try:
        physical = Store.read_manifest(index_dir).tables
    except DowseError:
        physical = {}
    db = lancedb.connect(str(index_dir / "db"))
    have = set(db.list_tables().tables)
    names = {name: physical.get(name, name) for name in SNAPSHOT_TABLES}
    return {name: db.open_table(table).version for name, table in names.items() if table in have}
