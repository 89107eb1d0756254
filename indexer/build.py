"""`dowse index`: walk → read → parse → chunk → store → embed, incrementally.

Invariants:
- A file whose size and mtime match the snapshot is not read, unless its row is racy
  (`_RACY`: its mtime was within `RACY_NS` of the walk of the run that read it, so an
  edit within the same timestamp tick would not show in its stat): that one is read
  again by every run, and its row marked so, until a run finds its mtime safely older
  than its walk (git's "racily clean" entries). One whose content hash matches is not
  parsed; a chunk or file summary whose text was embedded before (by
  hash, in any snapshot) is not embedded again; a renamed file takes its vectors along.
- Embed scope: "all" gives every chunk, every file summary and every definition
  outside tests and examples a vector; "files" only the file summaries and those
  definitions (short texts), and keeps no chunk vectors; `embed=False` none.
  Both kinds of short text live in `file_vectors`: a summary's row has the file's path as
  its id, a definition's the symbol's id.
- Two commits per run at most: the lexical and symbol snapshot (queryable at once), then
  the vectors (besides those that record the same rows compacted, `Store`). An
  interrupted run (a rebuild too) leaves the previous snapshot; the next run finishes
  the work, reusing every vector that reached the embedding cache.
- Parsed files are held one batch at a time (`Batches.write_every_rows`): their rows go to the
  tables as they come, past the manifest's versions and so invisible to readers until
  the lexical commit; an interrupted run's are undone by the next writer.
- One writer at a time (WriteLock); readers are never blocked.
- An index that is damaged (a data file cut short, confirmed by reading the snapshot),
  was built for another root or was not signed by this user's dowse (indexer.trust) is
  built anew before the run, which says so
  (`IndexStats.notes`): a run never reports success and leaves the damage.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dowse.errors import (
    DowseError,
    IndexCorrupt,
    IndexVersionMismatch,
    IndexWriteError,
    InvalidPath,
)
from dowse.indexer import noop, settled
from dowse.indexer.chunk import ChunkConfig
from dowse.indexer.commits import HistorySource, source_of
from dowse.indexer.commits import update as update_history
from dowse.indexer.embed import Embedder
from dowse.indexer.engine import Engine, LocalEngine
from dowse.indexer.extract import ExtractConfig, FileJob, FileOutcome, in_worker_startup
from dowse.indexer.lance import LANCE_ERRORS, check_location
from dowse.indexer.locate import is_index_of, names_root, why_not
from dowse.indexer.options import (
    DEFAULT_EMBED_SCOPE,
    EMBED_SCOPES,
    changed_since,
    default_index_dir,
    embed_flags,
    remembered_options,
    resolve_embed_scope,
    resolve_walk_config,
    walk_config_from,
    walk_config_of,
    walk_record,
)
from dowse.indexer.reading import read_inside
from dowse.indexer.records import IndexStats, SkippedFile, content_hash
from dowse.indexer.resolve import ImportResolver, read_layout
from dowse.indexer.secrets import SCANNER
from dowse.indexer.store import (
    CACHE_TABLE,
    SNAPSHOT_TABLES,
    Manifest,
    Retention,
    Store,
    WriteLock,
    quote_list,
    storage_error,
)
from dowse.indexer.summary import DEFINITION_KINDS, definition_text
from dowse.indexer.walk import WalkConfig, WalkResult, walk
from dowse.indexer.walked import RACY_NS
from dowse.indexer.walked import record as record_walk
from dowse.indexer.walked import unchanged as tree_unchanged
from dowse.languages import (
    TEXT_LANGUAGES,
    header_language,
    is_documentation,
    is_test_path,
    language_for,
)

__all__ = [
    "DEFAULT_EMBED_SCOPE",
    "EMBED_SCOPES",
    "Batches",
    "IndexConfig",
    "IndexStats",
    "Progress",
    "build_index",
    "changed_since",
    "default_index_dir",
    "embed_flags",
    "remembered_options",
    "resolve_embed_scope",
    "resolve_walk_config",
    "walk_config_from",
    "walk_config_of",
]


@dataclass(frozen=True)
class Batches:
    """How much a run holds, writes and commits at a time. The index a run makes is the
    same at any of these (tests make them small to see the batches)."""

    write_every_rows: int = 20_000
    """Parsed files are written to the tables (uncommitted) once their rows (symbols,
    chunks, references, imports) reach this many, so a run holds one batch of them at a
    time whatever the tree's size; the commit still makes them visible all at once. At
    20,000 a 20k-file tree peaked at 0.86 GB instead of 2.3 GB holding it all, and a 1k
    tree's write took 4.2 s in 6 batches against 1.6 s in one (benchmarks/RESULTS.md,
    "Growth"); larger batches would write faster and hold more, not measured."""
    embed_commit_every: int = 2048
    """Vectors are committed every this many embedded chunks, so that a long run is
    searchable early, source first: django's 16.9k chunks take about 15 minutes to
    embed here, 2,048 about two (benchmarks/RESULTS.md)."""
    scalar_index_min_rows: int = 10_000
    """A table's scalar (BTree) indexes, for the look-ups by path, id, name or hash, are
    made once it holds this many rows; below, a filtered scan finds the same rows about
    as fast (5 paths among 1k-10k rows: 1.3-2.5 ms of CPU, within 0.5 ms of the indexed
    scan; 20k rows: 2.3 against 1.5 ms, 100k: 6.0 against 1.8 ms;
    `benchmarks/scalar_index.py`), and each index would cost a small tree's build some
    4 ms of CPU and its later runs an update in every `optimize`. Full-text indexes are
    made at any size: a full-text query needs one."""
    vector_index_min_rows: int = 50_000
    """Past this many vectors an ANN index (IVF_FLAT) is built and kept current; below,
    a flat scan of float16 vectors is exact and fast enough (16.9k vectors: 48-77 ms a
    scan, benchmarks/RESULTS.md). Whether an ANN index wins below 50k is not measured."""


_RACY = "racy:"
"""The prefix of a `files` row's hash when the file's mtime was not safely older than the
walk of the run that read it (at or after `RACY_NS` before the walk began, which is
before the read): the file could have changed again within its timestamp tick without
its size or mtime showing it. The next run reads such a file again whatever its stat, and
parses it only when its content hash differs. The stat columns stay the file's own: what
compares them (`changed_since`, the stale-file check of the answers) is not misled."""


def _racy_hash(digest: str, mtime_ns: int, since_ns: int) -> str:
    """`digest` as a `files` row of a file read with mtime `mtime_ns` holds it, in a run
    whose racy stats are those at `since_ns` or later."""
    return _RACY + digest if mtime_ns >= since_ns else digest


def _content_hash(row_hash: str) -> str:
    """The content hash a `files` row's hash holds (`_RACY`)."""
    return row_hash.removeprefix(_RACY)


def _embed_priority(path: str) -> int:
    """0 source, 1 docs and other text, 2 tests: the order in which chunks are embedded."""
    if is_test_path(path):
        return 2
    return 1 if language_for(path) in TEXT_LANGUAGES else 0


Progress = Callable[[str, int, int], None]
"""progress(stage, done, total): stages are 'walk', 'parse', 'embed', 'write'."""


@dataclass(frozen=True)
class IndexConfig:
    walk: WalkConfig = field(default_factory=WalkConfig)
    chunk: ChunkConfig = field(default_factory=ChunkConfig)
    embed: bool = True
    embed_chunks: bool = embed_flags(DEFAULT_EMBED_SCOPE)[1]
    """With `embed`: chunk vectors too, not only one vector per file summary."""
    rebuild: bool = False
    parse_timeout_s: float = 2.0
    lock_timeout_s: float | None = 600.0
    embed_batch: int = 128
    batches: Batches = field(default_factory=Batches)
    retention: Retention = field(default_factory=Retention)
    """How long what a commit replaced is kept for readers (`store.Retention`)."""
    workers: int | None = None
    """Parser processes for large runs (default: the CPU count, at most 4)."""
    history: bool = True
    """Keep the commits table: the history's messages and the files each commit changed."""
    history_source: HistorySource | None = None
    """Where the history comes from (default: the repository the root lies in, at HEAD)."""


@dataclass
class _Walked:
    """The walk phase's finding: the files it admits, the snapshot's record of each."""

    result: WalkResult
    old: dict[str, dict[str, Any]]
    """path -> the snapshot's `files` row (stat, hash, counts)."""
    scan: str
    """The secret rules this run stores text under (`Manifest.secret_scan`)."""
    rescan: bool
    """The snapshot's text was stored under other rules: every file is read again."""

    @property
    def racy_since(self) -> int:
        """A file read this run with an mtime at this or later is racy (`_RACY`)."""
        return self.result.started_ns - RACY_NS


@dataclass(frozen=True)
class _Parsed:
    """What the plan and the commit need of a file extracted this run, whose rows are
    already written (uncommitted) to the tables."""

    path: str
    hash: str
    redacted: bool


@dataclass
class _Read:
    """The per-file phases' finding: each walked file is in exactly one list."""

    unchanged: list[str] = field(default_factory=list)
    """Same stat as in the snapshot: not read (or read being racy, and the same row)."""
    touched_paths: list[str] = field(default_factory=list)
    """Read, same content: only the stat changes."""
    touched: list[dict[str, Any]] = field(default_factory=list)
    """Their `files` rows, with the stat of what was read."""
    parsed: list[_Parsed] = field(default_factory=list)
    """Extracted, their rows written in batches as they came (`_Run._write_parsed`)."""
    skipped: list[SkippedFile] = field(default_factory=list)
    reused: int = 0
    """Chunk vectors the written rows took from the cache."""
    missing: list[dict[str, Any]] = field(default_factory=list)
    """Texts of the written rows that no cached vector has, to embed."""
    moved: bool = False
    """A file read had another stat than the walk's: the tree moved during the run."""


@dataclass
class _Plan:
    """What the commit changes beside the files read."""

    live: set[str]
    deleted: list[str]
    renames: dict[str, str]
    """new path -> the deleted path whose content it has."""
    skipped_changed: bool
    stats: dict[str, int]
    drop_chunk_vectors: bool
    history: tuple[str, list[dict[str, Any]], bool] | None
    """`commits.update`'s (head, rows, replace), or None when the history is current."""
    purge: bool
    """Rows replaced may hold a secret: old versions leave the directory now."""
    catch_up: bool
    scan: str
    idle: bool
    """Nothing to write: the run only reports (and records it as `settled`)."""


class _Run:
    def __init__(
        self,
        root: Path,
        store: Store,
        cfg: IndexConfig,
        embedder: Embedder,
        progress: Progress,
        engine: Engine,
    ) -> None:
        self.root, self.store, self.cfg, self.embedder = root, store, cfg, embedder
        self.engine = engine
        self.progress = progress
        self.fresh = [n for n in SNAPSHOT_TABLES if n not in store.manifest.versions]
        """The tables no commit named before this run: none of their versions but the
        last is ever read (`Store.forget_drafts`)."""
        self.seconds: dict[str, float] = {
            "walk": 0.0,
            "parse": 0.0,
            "write": 0.0,
            "embed": 0.0,
            "history": 0.0,
        }

    def _timed(self, stage: str, start: float) -> None:
        self.seconds[stage] += time.perf_counter() - start

    def run(self) -> IndexStats:
        """The phases of a run, in order; each hands the next what it found."""
        walked = self._walk()
        read = self._read(walked)
        plan = self._plan(walked, read)
        if plan.idle:
            return self._settle(walked, read, plan)
        reused, missing = self._commit_rows(read, plan)
        embedded = self._commit_vectors(missing, catch_up=plan.catch_up)
        if plan.purge:
            self.store.forget_versions()
        self.store.cleanup()
        self.store.forget_drafts(self.fresh)
        done = self._stats(len(plan.live), plan.stats, embedded=embedded, reused=reused)
        if not read.moved:
            self._record_walk(walked)
            self._record_committed(read, done)
        return done

    # -- walk --------------------------------------------------------------------------

    def _walk(self) -> _Walked:
        """The files the walk admits, and the snapshot's record of each file."""
        t = time.perf_counter()
        result = walk(self.root, self.cfg.walk, index_dir=self.store.index_dir)
        old = {
            r["path"]: r
            for r in self.store.rows(
                "files", ["path", "size", "mtime_ns", "hash", "n_symbols", "n_chunks"]
            )
        }
        self._timed("walk", t)
        self.progress("walk", len(result.files), len(result.files))
        # Text stored under other secret rules (another dowse, --include-secrets) is read
        # again whole, and the history with it, so that none of it outlives this run.
        scan = "included" if self.cfg.walk.include_secrets else SCANNER
        return _Walked(result, old, scan=scan, rescan=self.store.manifest.secret_scan != scan)

    def _record_walk(self, walked: _Walked) -> None:
        """What the walk saw, for the snapshot now committed, whose files have the stats
        it found (not called when a file read had another): a query's check for changes
        then stats those paths instead of walking (`indexer.walked`)."""
        record_walk(
            self.store.index_dir,
            self.store.manifest,
            self.root,
            self.cfg.walk,
            walked.result,
        )

    # -- read, parse, chunk, summarise (per file) --------------------------------------

    def _read(self, walked: _Walked) -> _Read:
        """Every walked file whose stat changed, read and (when its content did) parsed,
        chunked and summarised (`indexer.extract`); the others are left unread."""
        # An index from before the refs table has none for its unchanged files: each file
        # is parsed again once (its vectors come from the cache).
        versions = self.store.manifest.versions
        no_refs = bool(versions) and "refs" not in versions
        t = time.perf_counter()
        written = self.seconds["write"]
        read = _Read(skipped=list(walked.result.skipped))
        todo: list[FileJob] = []
        for e in walked.result.files:
            o = walked.old.get(e.path)
            if walked.rescan or no_refs:
                o = None
            if (
                o
                and o["size"] == e.size
                and o["mtime_ns"] == e.mtime_ns
                and not o["hash"].startswith(_RACY)
            ):
                read.unchanged.append(e.path)
            elif language_for(e.path) is None:
                read.skipped.append(SkippedFile(path=e.path, reason="not a known text file type"))
            else:
                todo.append(
                    FileJob(
                        e.path,
                        str(e.abspath),
                        e.size,
                        e.mtime_ns,
                        _content_hash(o["hash"]) if o else None,
                        dev=e.dev,
                        ino=e.ino,
                    )
                )
        extract_cfg = ExtractConfig(
            walk=self.cfg.walk,
            chunk=self.cfg.chunk,
            parse_timeout_s=self.cfg.parse_timeout_s,
            root=os.path.realpath(self.root),
            header_language=header_language(e.path for e in walked.result.files),
        )
        read_stat: dict[str, tuple[int, int, str]] = {}  # size, mtime_ns, row hash
        batch: list[FileOutcome] = []
        held = 0
        walked_stat = {j.path: (j.size, j.mtime_ns) for j in todo}
        racy_since = walked.racy_since
        for out in self.engine.extract(
            todo,
            extract_cfg,
            progress=lambda d, n: self.progress("parse", d, n),
            workers=self.cfg.workers,
        ):
            if not out.skipped and (out.size, out.mtime_ns) != walked_stat[out.path]:
                read.moved = True
            if out.skipped:
                read.skipped.append(SkippedFile(path=out.path, reason=out.skipped))
            elif out.touched:
                row = (out.size, out.mtime_ns, _racy_hash(out.hash, out.mtime_ns, racy_since))
                o = walked.old[out.path]
                if row == (o["size"], o["mtime_ns"], o["hash"]):
                    read.unchanged.append(out.path)  # a racy file read again: as it was
                else:
                    read.touched_paths.append(out.path)
                    read_stat[out.path] = row
            else:
                batch.append(out)
                held += len(out.symbols) + len(out.chunks) + len(out.references)
                held += len(out.imports) + 1
                if held >= self.cfg.batches.write_every_rows:
                    self._write_parsed(batch, walked, read)
                    batch, held = [], 0
        self._write_parsed(batch, walked, read)
        if read.touched_paths:
            rows = self.store.rows("files", where=f"path IN ({quote_list(read.touched_paths)})")
            # The stat of what was read, not the walk's: a write in between must leave
            # the file looking changed to the next run.
            read.touched = [
                {**r, **dict(zip(("size", "mtime_ns", "hash"), read_stat[r["path"]], strict=True))}
                for r in rows
            ]
        # The batches' writes are counted as "write", not "parse".
        self.seconds["parse"] += time.perf_counter() - t - (self.seconds["write"] - written)
        return read

    def _write_parsed(self, batch: list[FileOutcome], walked: _Walked, read: _Read) -> None:
        """Replace the rows of the files in `batch` with theirs and give them the vectors
        already cached, before the commit: the tables move past the manifest's versions,
        which readers keep using, and an interrupted run's rows are undone by the next
        writer (`Store._recover`). Only the batch is held, not the tree's rows."""
        if not batch:
            return
        t = time.perf_counter()
        indexed = [o.path for o in batch if o.path in walked.old]  # no rows for new files
        for name in ("symbols", "chunks", "imports", "refs", "vectors", "file_vectors", "files"):
            self.store.delete_paths(name, indexed)
        since = walked.racy_since
        self.store.add(
            "files",
            [{**o.file, "hash": _racy_hash(o.hash, o.mtime_ns, since)} for o in batch],
        )
        self.store.add("symbols", [s for o in batch for s in o.symbols])
        self.store.add("refs", [r for o in batch for r in o.references])
        chunk_rows = [c for o in batch for c in o.chunks]
        self.store.add("chunks", chunk_rows)
        # Resolved against the whole file set at the commit (`_write_imports`).
        self.store.add("imports", [{**i, "resolved": None} for o in batch for i in o.imports])
        if self.cfg.embed_chunks:
            reused, missing = self._attach_vectors(chunk_rows)
            read.reused += reused
            read.missing += missing
        if self.cfg.embed:  # (a lexical index keeps no vectors: no texts to make)
            read.missing += self._attach_file_vectors(
                [_summary_row(o.file) for o in batch]
                + _definition_rows(s for o in batch for s in o.symbols)
            )
        read.parsed += [_Parsed(o.path, o.hash, o.redacted) for o in batch]
        self._timed("write", t)

    # -- plan: what the commit changes -------------------------------------------------

    def _plan(self, walked: _Walked, read: _Read) -> _Plan:
        """What this run's commit must change beside the files read: deleted and renamed
        files, the skipped list, options, the history, vectors owed."""
        old = walked.old
        live = set(read.unchanged) | set(read.touched_paths) | {p.path for p in read.parsed}
        deleted = [p for p in old if p not in live]
        renames = self._renames(read.parsed, deleted, old)
        old_skipped = self.store.rows("skipped", ["path", "reason"])
        skipped_changed = sorted((s.path, s.reason) for s in read.skipped) != sorted(
            (r["path"], r["reason"]) for r in old_skipped
        )
        stats = dict(
            parsed=len(read.parsed),
            unchanged=len(read.unchanged) + len(read.touched),
            deleted=len(deleted) - len(renames),
            renamed=len(renames),
            skipped=len(read.skipped),
        )
        walk_changed = self.store.manifest.walk != walk_record(self.cfg.walk)
        drop_chunk_vectors = (
            self.cfg.embed and not self.cfg.embed_chunks and self.store.count("vectors") > 0
        )
        t = time.perf_counter()
        source = (self.cfg.history_source or source_of(self.root)) if self.cfg.history else None
        history = update_history("" if walked.rescan else self.store.manifest.history, source)
        self._timed("history", t)
        history_flag = self.store.manifest.no_history == self.cfg.history  # to be recorded
        # An earlier run stopped before its vectors, or asked for fewer of them.
        catch_up = self._needs_vectors()
        return _Plan(
            live=live,
            deleted=deleted,
            renames=renames,
            skipped_changed=skipped_changed,
            stats=stats,
            drop_chunk_vectors=drop_chunk_vectors,
            history=history,
            purge=bool(old)
            and (walked.rescan or _holds_secret(read.parsed, read.skipped, deleted, old)),
            catch_up=catch_up,
            scan=walked.scan,
            idle=not (
                read.parsed
                or walked.rescan
                or deleted
                or read.touched
                or skipped_changed
                or walk_changed
                or catch_up
                or drop_chunk_vectors
                or history
                or history_flag
            ),
        )

    def _settle(self, walked: _Walked, read: _Read, plan: _Plan) -> IndexStats:
        """A run with nothing to write: its report, and the `settled` record that lets
        the next such run skip opening the tables."""
        done = self._stats(len(walked.old), plan.stats, embedded=0, reused=0)
        self._record_walk(walked)
        self._record_settled(list(walked.old.values()), read, done)
        return done

    def _record_committed(self, read: _Read, done: IndexStats) -> None:
        """After a run that committed, the `settled` record a run finding nothing to do
        would leave, when the next run would find nothing to do (its walk and history are
        checked when the record is used): no vectors owed, every table at the committed
        version (none restored by the next writer's start). Then the first no-op run
        after an index opens no table either."""
        store = self.store
        if self._needs_vectors() or done.vectors_pending:
            return
        if any(store.table(name).version != v for name, v in store.manifest.versions.items()):
            return
        files = store.rows("files", ["path", "size", "mtime_ns", "hash"])
        self._record_settled(files, read, done)

    def _record_settled(self, files: list[dict[str, Any]], read: _Read, done: IndexStats) -> None:
        """The `settled` record of the snapshot whose `files` rows these are, and of what
        `read` skipped, reporting as `done`."""
        if any(r["hash"].startswith(_RACY) for r in files):
            # The settled and no-op records answer by stat alone: a racy file must be
            # read again, by a run that opens the index, until it is safely old.
            return
        settled.record(
            self.store.index_dir,
            self.store.manifest,
            options=_options(self.cfg, self.embedder),
            files={r["path"]: (r["size"], r["mtime_ns"]) for r in files},
            skipped=[(s.path, s.reason) for s in read.skipped],
            vectors=self.store.count("vectors"),
            checked=self.store.maintained,
            counts={
                "symbols": done.symbols,
                "chunks": done.chunks,
                "vectors_pending": done.vectors_pending,
            },
        )

    # -- commit 1: the lexical and symbol snapshot -------------------------------------

    def _commit_rows(self, read: _Read, plan: _Plan) -> tuple[int, list[dict[str, Any]]]:
        """Drop the rows of every deleted or renamed file (the files read are written
        already), resolve the imports, build the indexes, and commit: the index answers
        from here on. Returns (chunk vectors reused, texts still to embed)."""
        t = time.perf_counter()
        deleted, renames = plan.deleted, plan.renames
        self.progress("write", 0, 1)
        changed = [p.path for p in read.parsed]
        reused, missing = read.reused, read.missing
        if renames and self.cfg.embed_chunks:
            found, missing = self._renamed_vectors(missing, renames)
            reused += found
        for name in ("symbols", "chunks", "imports", "refs", "vectors", "file_vectors"):
            self.store.delete_paths(name, deleted)
        if plan.drop_chunk_vectors:
            self.store.overwrite("vectors", [])
        self.store.delete_paths("files", deleted + [r["path"] for r in read.touched])
        self.store.add("files", read.touched)
        if plan.skipped_changed:
            self.store.overwrite("skipped", [s.model_dump() for s in read.skipped])
        if changed or deleted:
            self._write_imports(plan.live)
        if plan.history:
            head, rows, replace = plan.history
            (self.store.overwrite if replace else self.store.add)("commits", rows)
        if plan.purge:
            self.store.rewrite()
        self._ensure_indexes()
        if reused or deleted or changed or plan.purge:
            self._ensure_vector_index()
        self.store.commit(
            embedded=not missing and not plan.catch_up and self.cfg.embed,
            no_embed=not self.cfg.embed,
            definitions=True,
            undocumented=True,
            embed_chunks=self.cfg.embed and self.cfg.embed_chunks,
            walk=walk_record(self.cfg.walk),
            no_history=not self.cfg.history,
            secret_scan=plan.scan,
            **({"history": plan.history[0]} if plan.history else {}),
        )
        self._timed("write", t)
        self.progress("write", 1, 1)
        return reused, missing

    # -- commit 2: the vectors ---------------------------------------------------------

    def _commit_vectors(self, missing: list[dict[str, Any]], *, catch_up: bool) -> int:
        """Embed what the first commit left without a vector (and, catching up, what
        an earlier run did), committing as vectors come; returns the texts embedded."""
        embedded = 0
        if self.cfg.embed:
            if catch_up:
                missing = self._pending()
            if missing:
                embedded = self._embed(missing)
            if missing or catch_up:
                self.store.commit(embedded=True, no_embed=False)
        return embedded

    # -- helpers ---------------------------------------------------------------------

    def _renames(
        self, parsed: list[_Parsed], deleted: list[str], old: dict[str, dict[str, Any]]
    ) -> dict[str, str]:
        """new path -> deleted path with the same content."""
        by_hash = {_content_hash(old[p]["hash"]): p for p in deleted}
        return {p.path: by_hash[p.hash] for p in parsed if p.hash in by_hash}

    # -- writing -----------------------------------------------------------------------

    def _write_imports(self, live: set[str]) -> None:
        """Resolve every import against the current file set (it may have grown): one row
        per file an import resolves to (a Go package is several files, a header brings its
        implementation), one row with no `resolved` for an import that resolves to none.
        The rows of the files read this run are in the table already, unresolved."""
        kept = self.store.rows("imports", ["path", "module", "names", "line"])
        languages = {
            r["path"]: r["language"] for r in self.store.rows("files", ["path", "language"])
        }
        statements: dict[tuple[str, str, int, tuple[str, ...]], dict[str, Any]] = {}
        for row in kept:
            names = tuple(row["names"] or ())
            statements.setdefault((row["path"], row["module"], int(row["line"]), names), row)
        resolver = ImportResolver(live, read_layout(live, lambda p: read_inside(self.root, p)))
        rows: list[dict[str, Any]] = []
        for row in statements.values():
            targets = resolver.resolve(
                row["module"], row["path"], languages.get(row["path"], ""), row["names"] or ()
            )
            rows += [{**row, "resolved": t} for t in targets] or [{**row, "resolved": None}]
        self.store.overwrite("imports", rows)

    def _ensure_indexes(self) -> None:
        from lancedb.index import FTS, BTree

        fts = FTS(
            base_tokenizer="whitespace",
            lower_case=False,
            stem=False,
            remove_stop_words=False,
            ascii_folding=False,
            with_position=False,
            max_token_length=64,
        )
        for name, columns in (
            ("chunks", ("tokens", "path", "id")),
            ("symbols", ("tokens", "path", "name_lower")),
            ("files", ("path",)),
            ("commits", ("tokens",)),
            ("refs", ("name", "path")),
        ):
            table = self.store.table(name)
            rows = table.count_rows()
            if name in ("commits", "refs") and not rows:
                continue  # an FTS index wants rows; no history needs none
            have = {tuple(ix.columns) for ix in table.list_indices()}
            for col in columns:
                if (col,) in have:
                    continue
                if col == "tokens":
                    table.create_index(col, config=fts)
                elif self._scalar_indexed(rows):
                    table.create_index(col, config=BTree())
        for name in ("chunks", "symbols", "files", "commits", "refs"):
            if self.store.written(name):  # (a table this run left alone has nothing new)
                self.store.optimize(name)

    def _scalar_indexed(self, rows: int) -> bool:
        """Whether a table of `rows` rows gets its scalar indexes (`Batches`): a table
        that grows past the threshold gets them in the run that finds it there."""
        return rows > 0 and rows >= self.cfg.batches.scalar_index_min_rows

    def _vectors_of(self, paths: Sequence[str]) -> dict[str, list[float]]:
        rows = self.store.rows("vectors", ["id", "vector"], where=f"path IN ({quote_list(paths)})")
        return {r["id"]: r["vector"] for r in rows}

    def _needs_vectors(self) -> bool:
        m = self.store.manifest
        return self.cfg.embed and (
            not m.embedded
            or not m.definitions
            or not m.undocumented
            or (self.cfg.embed_chunks and not m.embed_chunks)
        )

    def _pending(self) -> list[dict[str, Any]]:
        """Every chunk (in scope), file summary and definition still without
        a vector."""
        pending: list[dict[str, Any]] = []
        if self.cfg.embed_chunks:
            have = {r["id"] for r in self.store.rows("vectors", ["id"])}
            pending += [
                {**r, "table": "vectors"}
                for r in self.store.rows("chunks", ["id", "path", "hash", "header", "text"])
                if r["id"] not in have
            ]
        have = {r["id"] for r in self.store.rows("file_vectors", ["id"])}
        pending += [
            _summary_row(r)
            for r in self.store.rows("files", ["path", "summary", "summary_hash"])
            if r["path"] not in have
        ]
        pending += [
            r
            for r in _definition_rows(
                self.store.rows("symbols", _DEFINITION_COLUMNS, where=_DEFINED)
            )
            if r["id"] not in have
        ]
        return pending

    def _attach_file_vectors(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Give new files' summaries and definitions the vectors already cached; return
        those still missing (only when embedding: a lexical index keeps no vectors)."""
        if not rows or not self.cfg.embed:
            return []
        cached = self._cache_lookup(sorted({r["hash"] for r in rows}))
        self._add_vectors([r for r in rows if r["hash"] in cached], cached)
        return [r for r in rows if r["hash"] not in cached]

    def _attach_vectors(self, chunk_rows: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
        """Give new chunks the vectors already cached; return (reused, still missing)."""
        if not chunk_rows:
            return 0, []
        cached = self._cache_lookup(sorted({r["hash"] for r in chunk_rows}))
        rows: list[dict[str, Any]] = []
        missing: list[dict[str, Any]] = []
        for r in chunk_rows:
            vec = cached.get(r["hash"])
            if vec is None:
                missing.append({**r, "table": "vectors"})
            else:
                rows.append({"id": r["id"], "path": r["path"], "hash": r["hash"], "vector": vec})
        self.store.add("vectors", rows)
        return len(rows), missing

    def _renamed_vectors(
        self, missing: list[dict[str, Any]], renames: dict[str, str]
    ) -> tuple[int, list[dict[str, Any]]]:
        """Give the chunks of renamed files that the cache lacks the vectors of the same
        chunks under their old path (whose rows are still in the tables), and cache them;
        returns (how many, the rows still missing)."""
        renamed_vectors = self._vectors_of(list(renames.values()))
        rows: list[dict[str, Any]] = []
        still: list[dict[str, Any]] = []
        for r in missing:
            vec = None
            if r.get("table") == "vectors" and r["path"] in renames:
                vec = renamed_vectors.get(renames[r["path"]] + r["id"][len(r["path"]) :])
            if vec is None:
                still.append(r)
            else:
                rows.append({"id": r["id"], "path": r["path"], "hash": r["hash"], "vector": vec})
        self.store.add("vectors", rows)
        self.store.add(CACHE_TABLE, [{"hash": r["hash"], "vector": r["vector"]} for r in rows])
        return len(rows), still

    def _cache_lookup(self, hashes: Sequence[str]) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        table = self.store.table(CACHE_TABLE)
        if not table.count_rows():
            return out
        for start in range(0, len(hashes), 1000):
            batch = hashes[start : start + 1000]
            rows = self.store.rows(
                CACHE_TABLE, ["hash", "vector"], where=f"hash IN ({quote_list(batch)})"
            )
            out.update((r["hash"], r["vector"]) for r in rows)
        return out

    def _embed(self, missing: list[dict[str, Any]]) -> int:
        """Embed what the cache lacks — file summaries, then source code, docs, tests —
        committing vectors as they come: an interrupted run leaves a partly embedded index
        that already ranks with them."""
        t = time.perf_counter()
        by_hash: dict[str, dict[str, Any]] = {}
        for r in missing:
            by_hash.setdefault(r["hash"], r)
        vectors: dict[str, Any] = self._cache_lookup(sorted(by_hash))
        # Summaries (one short text per file) first, then definitions, then
        # chunks; within each, source before docs before tests, and shortest first
        # (batches of similar length pad less).
        todo = sorted(
            (r for h, r in by_hash.items() if h not in vectors),
            key=lambda r: (
                r["table"] == "vectors",
                r["id"] != r["path"],
                _embed_priority(r["path"]),
                len(r["text"]),
            ),
        )
        waiting = [r for r in missing if r["hash"] in vectors]
        blocked = [r for r in missing if r["hash"] not in vectors]
        texts = [f"{r['header']}\n{r['text']}" if r["header"] else r["text"] for r in todo]
        since_commit = done = 0
        for positions, vecs in self.engine.embed(texts, self.embedder, batch=self.cfg.embed_batch):
            part = [todo[i] for i in positions]
            self.store.add(
                CACHE_TABLE,
                [{"hash": r["hash"], "vector": v} for r, v in zip(part, vecs, strict=True)],
            )
            vectors.update((r["hash"], v) for r, v in zip(part, vecs, strict=True))
            since_commit += len(part)
            done += len(part)
            self.progress("embed", done, len(todo))
            if since_commit >= self.cfg.batches.embed_commit_every and done < len(todo):
                ready = [r for r in blocked if r["hash"] in vectors]
                blocked = [r for r in blocked if r["hash"] not in vectors]
                self._add_vectors(waiting + ready, vectors)
                waiting = []
                self.store.commit(embedded=False, no_embed=False)
                since_commit = 0
        self._add_vectors(waiting + blocked, vectors)
        self._ensure_vector_index()
        self._timed("embed", t)
        return len(todo)

    def _add_vectors(self, rows: list[dict[str, Any]], vectors: dict[str, Any]) -> None:
        """Store each row's vector in its table (`vectors` for chunks, `file_vectors`)."""
        for name in ("vectors", "file_vectors"):
            self.store.add(
                name,
                [
                    {
                        "id": r["id"],
                        "path": r["path"],
                        "hash": r["hash"],
                        "vector": vectors[r["hash"]],
                    }
                    for r in rows
                    if r.get("table", "vectors") == name
                ],
            )

    def _ensure_vector_index(self) -> None:
        """Scalar indexes for the vector look-ups, and an ANN index once a flat scan gets
        slow (below `Batches.vector_index_min_rows` a flat scan of float16 vectors is faster than
        probing partitions, and exact)."""
        from lancedb.index import BTree, IvfFlat

        files = self.store.table("file_vectors")
        if self._scalar_indexed(files.count_rows()) and ("path",) not in {
            tuple(ix.columns) for ix in files.list_indices()
        }:
            files.create_index("path", config=BTree())
        table = self.store.table("vectors")
        n = table.count_rows()
        have = {tuple(ix.columns) for ix in table.list_indices()}
        if self._scalar_indexed(n) and ("path",) not in have:
            table.create_index("path", config=BTree())
        if ("vector",) in have:
            if self.store.written("vectors"):
                self.store.optimize("vectors")  # folds new rows into the ANN index
        elif n >= self.cfg.batches.vector_index_min_rows:
            table.create_index(
                "vector",
                config=IvfFlat(distance_type="cosine", num_partitions=max(16, int(n**0.5))),
            )
        cache = self.store.table(CACHE_TABLE)
        if self._scalar_indexed(cache.count_rows()) and ("hash",) not in {
            tuple(ix.columns) for ix in cache.list_indices()
        }:
            cache.create_index("hash", config=BTree())

    def _stats(
        self, files: int, stats: dict[str, int], *, embedded: int, reused: int
    ) -> IndexStats:
        pending = 0
        m = self.store.manifest
        if self.cfg.embed and not (m.embedded and m.definitions and m.undocumented):
            # (Counting the definitions reads a column of the symbols: ~50 ms
            # on django, which a complete index's no-op run need not spend.)
            defined = sum(
                _embeds_definitions(r["path"])
                for r in self.store.rows("symbols", ["path"], where=_DEFINED)
            )
            pending = self.store.count("files") + defined - self.store.count("file_vectors")
        if self.cfg.embed and self.cfg.embed_chunks:
            pending += self.store.count("chunks") - self.store.count("vectors")
        return IndexStats(
            root=str(self.root),
            index_dir=str(self.store.index_dir),
            files=files,
            symbols=self.store.count("symbols"),
            chunks=self.store.count("chunks"),
            embedded=embedded,
            reused_vectors=reused,
            vectors_pending=max(pending, 0),
            seconds={k: round(v, 3) for k, v in self.seconds.items()},
            notes=[],  # build_index adds them
            **stats,
        )


def _summary_row(file: dict[str, Any]) -> dict[str, Any]:
    """A file's summary in the shape the embedder takes (a chunk-like row)."""
    return {
        "id": file["path"],
        "path": file["path"],
        "hash": file["summary_hash"],
        "header": "",
        "text": file["summary"],
        "table": "file_vectors",
    }


def _holds_secret(
    parsed: list[_Parsed],
    skipped: list[SkippedFile],
    deleted: list[str],
    old: dict[str, Any],
) -> bool:
    """Whether rows this run replaces or drops may hold a secret: a file indexed before
    whose text is now redacted, or one now skipped as a secret (itself or its directory).
    Such rows must leave the index directory now, not after `Retention.grace`."""
    if any(p.redacted and p.path in old for p in parsed):
        return True
    secret = [s.path for s in skipped if s.reason.startswith("secret")]
    gone = set(deleted)
    return any(
        path in gone or (path.endswith("/") and any(g.startswith(path) for g in gone))
        for path in secret
    )


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


def build_index(
    root: Path,
    *,
    index_dir: Path | None = None,
    config: IndexConfig = IndexConfig(),
    embedder: Embedder,
    progress: Progress = _no_progress,
    on_wait: Callable[[str], None] | None = None,
    engine: Engine | None = None,
    clock: Callable[[], float] = time.time,
    request: Mapping[str, Any] | None = None,
) -> IndexStats:
    """Index `root` into `index_dir` (default `<root>/.dowse`), incrementally. `engine`
    runs the per-file stages and the embedding (`indexer.engine`; default: this
    machine's processes); this process walks, plans and commits whichever it is.
    `clock` dates what the run's commits replace, for `config.retention` (`Store.create`).
    `request`, what the caller was asked (JSON values) from which `config` follows: a run
    that finds nothing to do records it, so that `noop.answer` can answer the same
    request next time without this module."""
    if in_worker_startup():
        # A worker re-running an unguarded script: indexing here would wait on the
        # parent's write lock. The worker ends without a word; the parent sees that its
        # workers cannot start and reports it once (indexer/extract.py).
        os._exit(1)
    root = Path(root).resolve()
    if not root.is_dir():
        raise InvalidPath(f"not a directory: {root}")
    index_dir = Path(index_dir).resolve() if index_dir else default_index_dir(root)
    check_location(index_dir)  # before the lock: nothing is written where no index can be
    lock = WriteLock(index_dir)
    lock.acquire(config.lock_timeout_s, on_wait)
    outdated: list[str] = []
    try:  # a run that fails leaves a readable snapshot as it was, a rebuild too
        old: Manifest | None = Store.read_manifest(index_dir)
    except IndexVersionMismatch as exc:
        old = None
        # `root`'s own index, written by another dowse in a format this one cannot read:
        # no reader of this version can use it, so it is built anew (an index elsewhere
        # may be another tree's: only --rebuild replaces it).
        if index_dir == default_index_dir(root):
            outdated = [f"{str(exc).removesuffix(_REBUILD_HINT)}: building it anew"]
    except DowseError:
        old = None
    had_index = old is not None
    try:
        notes = outdated or ([] if config.rebuild or old is None else _mend(root, index_dir, old))
        if old is not None and not config.rebuild and not notes:
            quiet = _unchanged(
                root, index_dir, old, config, embedder, progress, request, clock=clock
            )
            if quiet is not None:
                return quiet
        store = Store.create(
            index_dir,
            root=root,
            model=embedder.name,
            dim=embedder.dim,
            rebuild=config.rebuild or bool(notes),
            # Only this root's own index vouches for its cache: a shipped one (another
            # root's, or a cache without a manifest) may hold planted vectors. A manifest
            # that is there but unreadable is this index's own damage: its cache stays; an
            # outdated one's signature cannot be read, so its cache is not trusted.
            trust_cache=is_index_of(old, root)
            if old is not None
            else (index_dir / "manifest.json").exists() and not outdated,
            clock=clock,
            retention=config.retention,
        )
        stats = _Run(root, store, config, embedder, progress, engine or LocalEngine()).run()
        return stats.model_copy(update={"notes": notes}) if notes else stats
    except LANCE_ERRORS as exc:
        # LanceDB reports a full disk, a read-only directory or a damaged table file as a
        # RuntimeError with a Rust backtrace location: say which it was, in one line.
        error = storage_error(exc, index_dir)
        if error is None and isinstance(exc, OSError):
            error = IndexWriteError(f"cannot write the index at {index_dir}: {exc}")
        if error is None:
            raise
        if isinstance(error, IndexWriteError) and had_index:
            error = IndexWriteError(f"{error}; the last complete index is unchanged")
        raise error from None
    finally:
        lock.release()


def _options(config: IndexConfig, embedder: Embedder) -> dict[str, Any]:
    """What a run is asked to index, as far as a run that found nothing to do depends
    on it (`settled`): the same files under other options may need work."""
    return {
        "model": embedder.name,
        "dim": embedder.dim,
        "walk": walk_record(config.walk),
        "scan": "included" if config.walk.include_secrets else SCANNER,
        "embed": config.embed,
        "embed_chunks": config.embed_chunks,
        "history": config.history,
    }


def _unchanged(
    root: Path,
    index_dir: Path,
    manifest: Manifest,
    config: IndexConfig,
    embedder: Embedder,
    progress: Progress,
    request: Mapping[str, Any] | None = None,
    *,
    clock: Callable[[], float] = time.time,
) -> IndexStats | None:
    """The report of a run with nothing to do, from the `settled` record of the last such
    run and a walk, without opening a table; None when the run must open the index (no
    usable record, or anything differs: a file's stat, the skipped files, the history).
    The checks are `_Run.run`'s for a run that writes nothing, on the recorded rows. With
    a `request`, the answer is recorded for `noop` when the walk's record is current,
    usable as long as the settled record is (`settled.until`)."""
    grace = config.retention.grace
    now = clock()
    record = settled.load(index_dir, manifest, _options(config, embedder), now=now, grace=grace)
    if record is None:
        return None
    t = time.perf_counter()
    walk_recorded = tree_unchanged(index_dir, manifest, root, config.walk)
    if walk_recorded:
        # The tree stats as the walk of the last run found it, whose files had the
        # snapshot's stats, which this record holds: no walk tells more.
        unchanged, skipped_count = len(record.files), len(record.skipped)
    else:
        result = walk(root, config.walk, index_dir=index_dir)
        skipped = [(s.path, s.reason) for s in result.skipped]
        unchanged = 0
        for e in result.files:
            if record.files.get(e.path) == (e.size, e.mtime_ns):
                unchanged += 1
            elif language_for(e.path) is None:
                skipped.append((e.path, "not a known text file type"))
            else:
                return None  # to be read
        if unchanged != len(record.files) or sorted(skipped) != record.skipped:
            return None  # deleted files, or other files skipped
        walk_recorded = record_walk(index_dir, manifest, root, config.walk, result)
        skipped_count = len(skipped)
    walked = time.perf_counter() - t
    progress("walk", unchanged, unchanged)
    t = time.perf_counter()
    source = (config.history_source or source_of(root)) if config.history else None
    if update_history(manifest.history, source) is not None:
        return None
    stats = IndexStats(
        root=str(root),
        index_dir=str(index_dir),
        files=unchanged,
        parsed=0,
        unchanged=unchanged,
        deleted=0,
        renamed=0,
        skipped=skipped_count,
        symbols=record.counts["symbols"],
        chunks=record.counts["chunks"],
        embedded=0,
        reused_vectors=0,
        vectors_pending=record.counts["vectors_pending"],
        seconds={
            "walk": round(walked, 3),
            "parse": 0.0,
            "write": 0.0,
            "embed": 0.0,
            "history": round(time.perf_counter() - t, 3),
        },
    )
    # A history read from elsewhere than the root's repository is no request's.
    if request is not None and walk_recorded and config.history_source is None:
        noop.record(
            root,
            index_dir,
            request,
            history=config.history,
            head=manifest.history,
            report=stats.model_dump(mode="json", exclude={"seconds"}),
            until=settled.until(manifest, grace, record.checked),
        )
    return stats


_REBUILD_HINT = "; run `dowse index --rebuild`"


def _mend(root: Path, index_dir: Path, manifest: Manifest) -> list[str]:
    """Why the index at `index_dir` must be built anew before this run ([] when it need
    not); the caller holds the WriteLock.

    - Built for another root (shipped with the files, or the directory moved), or for
      this root by someone else (not signed by this user's dowse: `indexer.trust`): its
      rows are not `root`'s. Replaced where `root`'s own index belongs (`<root>/.dowse`),
      or wherever it names `root`; anywhere else it may be another tree's good index, so
      only `--rebuild` replaces it.
    - Damaged: a data file cut short (`Store.cut_short`, a few bytes read per file, so
      every run can afford it) that the whole snapshot, read, confirms (`Store.verify`):
      an interrupted write can leave a partial file that no version names. A run that
      reads only what changed would otherwise report success on it and leave it damaged.
    """
    if not is_index_of(manifest, root):
        why = why_not(manifest, root)
        # Elsewhere than `<root>/.dowse` an index naming another root may be that tree's
        # good index; one naming this root, unsigned, is this root's or nobody's.
        if index_dir != default_index_dir(root) and not names_root(manifest, root):
            raise InvalidPath(
                f"the index at {index_dir}: {why}; pass --rebuild to replace it with an "
                f"index of {root}"
            )
        return [f"the index at {index_dir}: {why}; building it anew for {root}"]
    if Store.cut_short(index_dir, manifest) is None:
        return []
    try:
        Store.open(index_dir).verify()
    except IndexCorrupt as exc:
        return [f"{str(exc).removesuffix(_REBUILD_HINT)}: building it anew"]
    return []


_DEFINITION_COLUMNS = ["id", "path", "qualified_name", "kind", "signature", "docstring"]
_DEFINED = f"kind IN ({quote_list(sorted(DEFINITION_KINDS))})"


def _embeds_definitions(path: str) -> bool:
    """Whether the definitions of `path` get vectors: not in tests or examples.
    A test's docstring tells the scenario it checks, which reads like every bug report
    about it (4.8k of django's 8.7k documented definitions are tests'), and neither kind
    of file is where a question's answer lives unless it asks for them; their summaries
    still have vectors."""
    return not is_test_path(path) and not is_documentation(path, language_for(path))


def _definition_rows(symbols: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The definitions among `symbols` that get vectors (`_embeds_definitions`),
    in the shape the embedder takes."""
    rows = []
    for sym in symbols:
        if sym["kind"] not in DEFINITION_KINDS or not _embeds_definitions(sym["path"]):
            continue
        text = definition_text(
            sym["path"], sym["qualified_name"], sym["signature"], sym["docstring"]
        )
        rows.append(
            {
                "id": sym["id"],
                "path": sym["path"],
                "hash": content_hash(text.encode()),
                "header": "",
                "text": text,
                "table": "file_vectors",
            }
        )
    return rows
