"""Per-file work of an index run: read → check → hash → redact → parse → chunk → rows.

`extract_files` runs it inline for a few files and in a pool of worker processes for
many (parsing and tokenizing are CPU-bound Python; threads would not help). Workers
return plain rows, ready for the store.

Invariants:
- What is read is what the walk checked (`indexer.reading.read_walked`): a file swapped
  since (for a symlink out of the root, another file, a FIFO) is skipped with the reason,
  and a file's recorded size and mtime are those of the bytes read. The bytes are then
  put in their text form (`text_bytes`: UTF-16 decoded, lone CRs as LFs) before any
  check, hash or parse, so every stage and every reader counts the same lines.
- File text enters the index here and only here, and it is redacted first
  (`secrets.redact`, unless the walk includes secrets): chunks, symbols' signatures and
  docstrings, summaries, full-text tokens and embedded texts are all made from the
  redacted bytes. Line numbers are those of the file (redaction stays within a line).
- A file's outcome is exactly one of: skipped (with a reason), touched (content hash
  unchanged; only its stat changed), or extracted (rows).
- A worker that dies (a grammar crashing the process) never loses a file: its batch is
  retried one file at a time, and a file that kills a worker again is indexed as text
  with the reason recorded.
- Workers never outlive the indexing process: killed with SIGKILL, it takes them along.
- Workers that cannot start at all (a script that indexes at import time, with no
  `if __name__ == "__main__":` guard, runs again in every worker) end the run with
  `IndexWriteError` saying so, instead of every file being retried and indexed as text.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from typing import Any

from dowse.errors import IndexWriteError
from dowse.indexer.chunk import ChunkConfig, chunk_file
from dowse.indexer.parse import parse_source
from dowse.indexer.reading import ReadRefused, read_walked, text_bytes
from dowse.indexer.records import content_hash
from dowse.indexer.secrets import redact_bytes
from dowse.indexer.summary import file_summary
from dowse.indexer.walk import WalkConfig, check_content
from dowse.languages import CODE_LANGUAGES, HEADER, language_for
from dowse.tokens import token_text

__all__ = [
    "ExtractConfig",
    "Pooling",
    "FileJob",
    "FileOutcome",
    "extract_files",
    "in_worker_startup",
    "process_batch",
    "process_file",
]

UNGUARDED_SCRIPT = (
    "the index's worker processes cannot start: the script that runs dowse is run again "
    'by each of them; put its top-level code under `if __name__ == "__main__":`'
)

TOKEN_REPEAT = 4
"""A token is kept at most this often per chunk in the full-text column."""


@dataclass(frozen=True)
class Pooling:
    """When `extract_files` reads the files in worker processes, and how many it hands a
    worker at a time. The outcomes are the same either way (tests make these small to
    run a pool on a few files)."""

    min_files: int = 64
    """Fewer files are read in this process: a pool's start (a forkserver and its
    workers, each importing the parsers) costs about what reading that many files does.
    Chosen with the pool (b4455a7); not measured since."""
    batch: int = 16
    """Files a worker is handed at a time (the Ray engine's batches too): large enough
    that handing them over costs little beside parsing them, small enough that the
    workers finish together and a crashed worker's files, read again one by one, are
    few. Not measured."""


@dataclass(frozen=True)
class ExtractConfig:
    walk: WalkConfig = field(default_factory=WalkConfig)
    chunk: ChunkConfig = field(default_factory=ChunkConfig)
    parse_timeout_s: float = 2.0
    root: str | None = None
    """The resolved root: a file whose open descriptor lies elsewhere is not read."""
    header_language: str = "c"
    """What `.h` files are parsed as (`languages.header_language` of the project)."""


@dataclass(frozen=True)
class FileJob:
    path: str
    abspath: str
    size: int
    mtime_ns: int
    old_hash: str | None = None
    dev: int = 0
    ino: int = 0
    """The walked file's identity (`WalkEntry`)."""


@dataclass
class FileOutcome:
    path: str
    skipped: str | None = None
    touched: bool = False
    hash: str = ""
    size: int = 0
    mtime_ns: int = 0
    """The stat of what was read (the walk's, when nothing was)."""
    file: dict[str, Any] = field(default_factory=dict)
    symbols: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    imports: list[dict[str, Any]] = field(default_factory=list)
    references: list[dict[str, Any]] = field(default_factory=list)
    redacted: bool = False
    """Secrets in the file were replaced by ``[REDACTED]`` in every row."""


def _rows(
    job: FileJob,
    data: bytes,
    language: str,
    digest: str,
    cfg: ExtractConfig,
    *,
    parse: bool = True,
    note: str = "",
) -> FileOutcome:
    tree, symbols, imports, references = None, [], [], []
    if parse and language in CODE_LANGUAGES:
        parsed = parse_source(job.path, data, language, timeout_s=cfg.parse_timeout_s)
        tree, symbols, imports, note = parsed.tree, parsed.symbols, parsed.imports, parsed.note
        references = parsed.references
    chunks = chunk_file(job.path, data, language, tree=tree, symbols=symbols, config=cfg.chunk)
    out = FileOutcome(path=job.path, hash=digest, size=job.size, mtime_ns=job.mtime_ns)
    summary = file_summary(job.path, data.decode("utf-8", "replace"), language, symbols)
    out.file = {
        "path": job.path,
        "language": language,
        "size": job.size,
        "hash": digest,
        "mtime_ns": job.mtime_ns,
        "parser": "tree-sitter" if tree is not None else "text",
        "note": note,
        "n_symbols": len(symbols),
        "n_chunks": len(chunks),
        "summary": summary,
        "summary_hash": content_hash(summary.encode()),
    }
    out.symbols = [
        {
            **s.model_dump(),
            "name_lower": s.name.lower(),
            "tokens": token_text(s.qualified_name, s.signature, s.path),
        }
        for s in symbols
    ]
    out.chunks = [
        {
            "id": c.id,
            "path": c.path,
            "language": c.language,
            "start_line": c.start_line,
            "end_line": c.end_line,
            "symbol": c.symbol,
            "text": c.text,
            "header": c.header,
            "hash": content_hash(c.embed_text.encode()),
            "tokens": token_text(c.path, c.symbol or "", c.text, max_repeat=TOKEN_REPEAT),
        }
        for c in chunks
    ]
    out.imports = [i.model_dump(exclude={"resolved"}) for i in imports]
    out.references = [r.model_dump() for r in references]
    return out


def process_file(
    job: FileJob, cfg: ExtractConfig, *, parse: bool = True, note: str = ""
) -> FileOutcome:
    language = language_for(job.path)
    if language == "c" and job.path.lower().endswith(HEADER):
        language = cfg.header_language
    if language is None:
        return FileOutcome(path=job.path, skipped="not a known text file type")
    try:
        raw, st = read_walked(
            job.abspath,
            dev=job.dev,
            ino=job.ino,
            limit=cfg.walk.max_file_bytes,
            root=cfg.root,
        )
    except ReadRefused as exc:
        return FileOutcome(path=job.path, skipped=str(exc))
    except OSError as exc:
        return FileOutcome(path=job.path, skipped=f"unreadable: {exc.strerror}")
    job = replace(job, size=st.st_size, mtime_ns=st.st_mtime_ns)
    data = text_bytes(raw)
    reason = check_content(job.path, data, cfg.walk)
    if reason:
        return FileOutcome(path=job.path, skipped=reason)
    # The hash is of the text form, not the redacted text: a file indexed before that
    # form existed (lone CRs) hashes differently now and is parsed again, an edit of a
    # secret alone re-reads the file, and everything stored is of the redacted text.
    digest = content_hash(data)
    if digest == job.old_hash:
        return FileOutcome(
            path=job.path, touched=True, hash=digest, size=job.size, mtime_ns=job.mtime_ns
        )
    text = data if cfg.walk.include_secrets else redact_bytes(data, job.path)
    out = _rows(job, text, language, digest, cfg, parse=parse, note=note)
    out.redacted = text is not data
    return out


def _safe(job: FileJob, cfg: ExtractConfig) -> FileOutcome:
    """process_file, and if it fails unexpectedly, the file as plain text with the cause:
    one bad file never stops a run."""
    try:
        return process_file(job, cfg)
    except Exception as exc:  # noqa: BLE001 - any bug here must not abort the index
        cause = f"extraction failed ({type(exc).__name__}: {exc})"[:200]
        try:
            return process_file(job, cfg, parse=False, note=cause)
        except Exception:  # noqa: BLE001
            return FileOutcome(path=job.path, skipped=cause)


def process_batch(jobs: Sequence[FileJob], cfg: ExtractConfig) -> list[FileOutcome]:
    return [_safe(job, cfg) for job in jobs]


def _exit_with_parent() -> None:
    """Worker initializer: exit as soon as the indexing process is gone.

    Without it a `kill -9` of `dowse index` leaves its workers (and the fork server and
    resource tracker they keep alive) behind for good: a worker waits on its task queue,
    whose write end its sibling workers hold too, so it never sees end-of-file.
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()  # returns when the parent's end of the sentinel pipe closes
        os._exit(1)

    threading.Thread(target=watch, name="dowse-parent-watch", daemon=True).start()


def in_worker_startup() -> bool:
    """Whether this process is a worker still importing its parent's main script (the
    forkserver and spawn start methods run it again, guards aside)."""
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


def _workers_start() -> bool:
    """Whether a worker process can start and run a task at all."""
    pool = _pool(1)
    try:
        return bool(pool.submit(os.getpid).result())
    except BrokenProcessPool:
        return False
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _pool(workers: int) -> ProcessPoolExecutor:
    # forkserver: never fork a process that already runs LanceDB's threads. The server
    # preloads this module, so a fresh worker starts in milliseconds.
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["dowse.indexer.extract"])
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_exit_with_parent)


def _isolated(job: FileJob, cfg: ExtractConfig) -> FileOutcome:
    """Process one file in a worker of its own; a crash marks only this file."""
    pool = _pool(1)
    try:
        return pool.submit(_safe, job, cfg).result()
    except BrokenProcessPool:
        return process_file(job, cfg, parse=False, note="the parser crashed on this file")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def extract_files(
    jobs: Sequence[FileJob],
    cfg: ExtractConfig,
    *,
    progress: Callable[[int, int], None] = lambda done, total: None,
    workers: int | None = None,
    pooling: Pooling = Pooling(),  # noqa: B008 - frozen
) -> Iterator[FileOutcome]:
    """Outcomes for all jobs, in completion order."""
    total = len(jobs)
    workers = workers if workers is not None else min(os.cpu_count() or 1, 4)
    if total < pooling.min_files or workers < 2:
        for i, job in enumerate(jobs, 1):
            yield _safe(job, cfg)
            progress(i, total)
        return
    done = 0
    failed: list[FileJob] = []
    pool = _pool(workers)
    try:
        size = pooling.batch
        pending: dict[Future[list[FileOutcome]], list[FileJob]] = {
            pool.submit(process_batch, jobs[i : i + size], cfg): list(jobs[i : i + size])
            for i in range(0, total, size)
        }
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                batch = pending.pop(fut)
                try:
                    outcomes = fut.result()
                except BrokenProcessPool:
                    failed.extend(batch)  # a worker died: every unfinished batch lands here
                    continue
                for out in outcomes:
                    done += 1
                    yield out
                progress(done, total)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if failed and done == 0 and not _workers_start():
        raise IndexWriteError(UNGUARDED_SCRIPT)
    for job in failed:
        done += 1
        yield _isolated(job, cfg)
        progress(done, total)
