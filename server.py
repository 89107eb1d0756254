"""`dowse serve`: the MCP skin over the library, for coding agents (stdio, official SDK).

Like cli.py it only translates: a tool call is validated into a request record, one
library function answers it, and the answer record is sent back. The MCP SDK is imported
only by `build_server` and `serve`, so `dowse ask --format agent` (`ask_for_agent`)
stays as light as the rest of the CLI.

Invariants:
- Records are the contract. Each tool's input schema is its request model's fields
  (`SearchRequest`, ...), its output schema the answer model (`SearchAnswer`, ...). An
  answer is sent as structuredContent and, identically, as compact JSON text.
- Budgeted: an answer's JSON never exceeds the call's `max_tokens`, counted with
  `retrieval.ask.estimate_tokens` (3 characters a token, conservative). When the full
  answer is larger, records are cut to signature and citation from the lowest-ranked
  up, then the lowest-ranked are left out whole; no record is ever cut mid-way.
  `budget` says how many were cut and left out.
- Fresh: before a query the served tree is compared with the index by stat only
  (`indexer.build.changed_since`, no file read); changes are indexed incrementally
  (`build_index`) under the cross-process write lock. If another process holds the lock
  for more than a moment, the answer comes from the last complete snapshot and
  `freshness` says what it lacks. An index built without vectors stays lexical (the
  manifest remembers).
- Confined: a path a caller names must lie inside a served root (no absolute path
  elsewhere, no `..` escape, no symlink leading out); a record whose file now leads
  outside is left out, never returned. Nothing is written outside the index directory
  (the embedding model's compiled cache aside, made once, as by `dowse index`).
- Warm: a root keeps its Store and HybridSearcher while the manifest names the same
  snapshot, and each embedding backend is loaded once for the server's life.
- Concurrent: the SDK runs tool calls on worker threads; calls on one root take turns
  (a thread lock), so a refresh and the queries after it never interleave. Across
  processes, WriteLock keeps one writer; readers open the manifest's snapshot and retry
  once on the next one if a writer replaced theirs mid-query.
"""

from __future__ import annotations

import fcntl
import inspect
import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from explore.records import Depth, ExploreResult
from indexer.build import (
    IndexConfig,
    IndexStats,
    build_index,
    changed_since,
    default_index_dir,
    resolve_walk_config,
    walk_config_from,
)
from indexer.embed import DEFAULT_EMBEDDER, Embedder, embedder_for_model, get_embedder
from indexer.errors import DowseError, EmbedderError, IndexLocked, IndexNotFound, InvalidPath
from indexer.status import StatusReport, index_status
from indexer.store import Manifest, Store, WriteLock, quote_list, storage_error
from retrieval.ask import ContextBlock, FileResult, estimate_tokens
from retrieval.ask import ask as run_ask
from retrieval.evaluate import Evaluator
from retrieval.hybrid import HybridSearcher, read_lines
from retrieval.loop import LoopConfig
from retrieval.records import Grain, Hit, SearchOptions
from retrieval.symbols import SymbolMatch, find_symbols

__all__ = [
    "TOOLS", "AskAnswer", "AskRequest", "Budget", "Definition", "ExploreAnswer",
    "ExploreRequest", "Freshness", "ReindexAnswer",
    "ReindexRequest", "SearchAnswer", "SearchRequest", "ServedRoot", "StatusAnswer",
    "StatusRequest", "SymbolAnswer", "SymbolRequest", "ToolSpec", "Workspace", "ask_for_agent",
    "build_server", "serve",
]

MAX_TOKENS_LIMIT = 20_000
"""Agents refuse tool results over about 25k tokens; no answer may come near that."""
MIN_TOKENS = 256
"""Room for an answer's envelope (root, freshness, budget) and a few citations."""
FRESHNESS_LOCK_WAIT_S = 2.0
"""How long a query waits for another process's index run before answering without it."""
REINDEX_LOCK_WAIT_S = 30.0
ASK_CONTEXT_SHARE = 0.75
"""The share of max_tokens the retrieval loop packs with source; the rest is the JSON
around it (field names, escapes, the file list)."""
MAX_ASK_FILES = 10

T = TypeVar("T")
A = TypeVar("A", bound=BaseModel)


class _Located(Protocol):
    path: str


L = TypeVar("L", bound=_Located)


# -- records -----------------------------------------------------------------------------


def _max_tokens(default: int) -> Any:
    return Field(default=default, ge=MIN_TOKENS, le=MAX_TOKENS_LIMIT,
                 description=f"Upper bound on the answer's size in tokens, estimated at 3 "
                             f"characters a token (default {default}).")


def _root_field() -> Any:
    return Field(default=None, description=(
        "The served root to use: its path or its directory name. Needed only when the "
        "server serves several roots."))


def _path_field() -> Any:
    return Field(default=None, description=(
        "Only results under this file or directory: relative to the root, or absolute "
        "inside it. Paths outside the root (absolute, `..`, through a symlink) are refused."))


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchRequest(_Request):
    query: str = Field(min_length=1, description=(
        "What to find: identifiers (`validate_token`, `Store.open`), a path, an error "
        "message, or plain words."))
    root: str | None = _root_field()
    path: str | None = _path_field()
    grain: Grain = Field(default="chunk", description=(
        "chunk: ranked source chunks; symbol: the enclosing definitions; file: files only."))
    limit: int = Field(default=10, ge=1, le=100, description="How many results at most.")
    include: list[str] = Field(default=[], description=(
        "gitignore-style globs a result's path must match (under `path` when given)."))
    exclude: list[str] = Field(default=[],
                               description="gitignore-style globs of paths to leave out.")
    languages: list[str] = Field(default=[],
                                 description="Only these languages (python, typescript, ...).")
    kinds: list[str] = Field(default=[],
                             description="Only these symbol kinds (symbol grain): function, ...")
    max_tokens: int = _max_tokens(4000)


class AskRequest(_Request):
    question: str = Field(min_length=1, description=(
        "A question about the code, e.g. 'where are expired session tokens rejected?'."))
    root: str | None = _root_field()
    path: str | None = _path_field()
    include: list[str] = Field(default=[], description=(
        "gitignore-style globs a path must match (under `path` when given)."))
    exclude: list[str] = Field(default=[],
                               description="gitignore-style globs of paths to leave out.")
    max_tokens: int = _max_tokens(8000)


class SymbolRequest(_Request):
    name: str = Field(min_length=1, description=(
        "A definition's name; a qualified name (`Store.open`, `auth.tokens.validate_token`) "
        "narrows it. Exact matches first, then prefix, then fuzzy."))
    root: str | None = _root_field()
    limit: int = Field(default=5, ge=1, le=50, description="How many definitions at most.")
    max_tokens: int = _max_tokens(4000)


class StatusRequest(_Request):
    root: str | None = Field(default=None, description="One served root (default: all).")
    max_tokens: int = _max_tokens(2000)


class ReindexRequest(_Request):
    root: str | None = Field(default=None, description="One served root (default: all).")
    rebuild: bool = Field(default=False,
                          description="Discard the index and build it anew (slow).")
    max_tokens: int = _max_tokens(2000)


class ExploreRequest(_Request):
    path: str | None = Field(default=None, description=(
        "The directory or file to explore, relative to the root or absolute inside it "
        "(default: the whole root). Paths outside the root are refused."))
    root: str | None = _root_field()
    focus: str | None = Field(default=None, description=(
        "A question to answer inside the path with the retrieval loop, e.g. 'how are "
        "tokens refreshed?'."))
    depth: Depth = Field(default="standard", description=(
        "shallow: tree and manifests; standard: + coding patterns and the focus; deep: + "
        "import graph, git history and module specialists."))
    max_tokens: int = _max_tokens(6000)


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_tokens: int
    tokens: int = Field(description="estimated tokens of this answer's JSON")
    cut: int = Field(default=0, description="records cut to signature and citation to fit")
    omitted: int = Field(default=0, description="lower-ranked records left out to fit")


class Freshness(BaseModel):
    model_config = ConfigDict(extra="forbid")

    snapshot: float = Field(description="commit time of the index snapshot that answered")
    reindexed: int = Field(default=0, description="changed files indexed before answering")
    pending: int = Field(default=0,
                         description="changed files this answer does not reflect yet")
    note: str = ""


class SearchAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    root: str
    hits: list[Hit] = Field(description="best first; `text` is null when cut to fit")
    freshness: Freshness
    budget: Budget


class AskAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    root: str
    files: list[FileResult] = Field(description="the files that answer it, best first")
    context: list[ContextBlock] = Field(
        description="cited source, best first; form 'signature' when cut to fit")
    stop_reason: str
    cycles: int
    freshness: Freshness
    budget: Budget


class ExploreAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    root: str
    result: ExploreResult = Field(description=(
        "structure, key files, dependencies, patterns, imports, git, cited focus findings, "
        "per-track gates and the synthesis; `omitted` counts what the budget left out"))
    freshness: Freshness
    budget: Budget


class Definition(SymbolMatch):
    text: str | None = Field(default=None, description=(
        "the definition's source, lines start_line..end_line; null when cut to fit"))
    stale: bool = Field(default=False, description="the file changed since it was indexed")


class SymbolAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    root: str
    definitions: list[Definition]
    freshness: Freshness
    budget: Budget


class RootStatus(BaseModel):
    model_config = ConfigDict(extra="forbid")

    root: str
    report: StatusReport | None = None
    error: str | None = None


class StatusAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    roots: list[RootStatus]
    budget: Budget


class RootReindex(BaseModel):
    model_config = ConfigDict(extra="forbid")

    root: str
    stats: IndexStats | None = None
    error: str | None = None


class ReindexAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    roots: list[RootReindex]
    budget: Budget


# -- fitting an answer into its budget ---------------------------------------------------

Entry = tuple[Any, Any]
"""A record in its full form and its form cut to signature and citation (None: it cannot
be cut further, only left out)."""


def _fit(make: Callable[[list[list[Any]], Budget], A], groups: Sequence[Sequence[Entry]],
         max_tokens: int, *, omitted: int = 0) -> A:
    """The answer `make` builds from the groups' records, at most `max_tokens` as JSON.

    Steps, in order, until it fits: for each group, cut its records from the last (the
    lowest-ranked) up, then leave them out from the last up. The fewest steps that fit
    are found by bisection, each candidate serialised whole, so the count is exact.
    """
    plan: list[tuple[int, int, int]] = []
    for g, entries in enumerate(groups):
        plan += [(g, i, 1) for i in reversed(range(len(entries))) if entries[i][1] is not None]
        plan += [(g, i, 2) for i in reversed(range(len(entries)))]

    def build(steps: int, tokens: int) -> tuple[A, int]:
        level = [[0] * len(entries) for entries in groups]
        for g, i, lv in plan[:steps]:
            level[g][i] = lv
        forms = [[entries[i][min(level[g][i], 1)] for i in range(len(entries))
                  if level[g][i] < 2] for g, entries in enumerate(groups)]
        cut = sum(row.count(1) for row in level)
        left_out = sum(row.count(2) for row in level)
        answer = make(forms, Budget(max_tokens=max_tokens, tokens=tokens, cut=cut,
                                    omitted=omitted + left_out))
        return answer, estimate_tokens(answer.model_dump_json())

    lo, hi = 0, len(plan)
    if build(hi, max_tokens)[1] > max_tokens:
        raise DowseError(f"max_tokens={max_tokens} cannot hold even an empty answer here")
    while lo < hi:
        mid = (lo + hi) // 2
        if build(mid, max_tokens)[1] <= max_tokens:
            hi = mid
        else:
            lo = mid + 1
    claimed = max_tokens
    while True:  # the count is part of the answer: settle on the one that describes it
        answer, tokens = build(lo, claimed)
        if tokens == claimed:
            return answer
        claimed = tokens  # fewer digits never make the answer longer


def _first_line(text: str | None) -> str:
    return next((ln.strip() for ln in (text or "").split("\n") if ln.strip()), "")[:160]


def _cut_hit(hit: Hit) -> Hit | None:
    if hit.text is None:
        return None
    return hit.model_copy(update={"text": None,
                                  "signature": hit.signature or _first_line(hit.text)})


def _cut_block(block: ContextBlock, signature: str) -> ContextBlock | None:
    if block.form == "signature":
        return None
    line = signature or _first_line(block.text)
    return block.model_copy(update={
        "form": "signature", "text": line,
        "tokens": estimate_tokens(line) + estimate_tokens(block.citation) + 4})


# -- roots and confinement ---------------------------------------------------------------


def _stamp(manifest: Manifest) -> tuple[Any, ...]:
    return manifest.updated, tuple(sorted(manifest.versions.items()))


def _writer(index_dir: Path) -> str | None:
    """' (pid N)' when another process holds the index's write lock, else None. Only
    tests the lock (a shared flock, never granted while a writer holds it)."""
    lock = WriteLock(index_dir)
    try:
        fd = os.open(lock.path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return lock.holder()
    finally:
        os.close(fd)  # closing drops the shared lock, if it was granted
    return None


def _escape_glob(path: str) -> str:
    return "".join("\\" + c if c in "[]*?!#\\" else c for c in path)


class ServedRoot:
    """One served repository: where its index is, what lies inside it, its warm snapshot."""

    def __init__(self, path: Path, index_dir: Path | None = None) -> None:
        self.given = Path(os.path.abspath(path))
        self.path = Path(os.path.realpath(path))
        self.index_dir = (Path(os.path.abspath(index_dir)) if index_dir is not None
                          else default_index_dir(self.path))
        self.lock = threading.RLock()
        self.searcher: HybridSearcher | None = None
        self.stamp: tuple[Any, ...] | None = None

    @property
    def name(self) -> str:
        return self.path.name

    def confine(self, path: str) -> tuple[str, bool]:
        """`path` (relative to the root, or absolute) as a POSIX path relative to the
        root ('' for the root itself), and whether it is a directory. InvalidPath when it
        lies outside the root, lexically or through a symlink, or does not exist."""
        if not path.strip() or "\x00" in path:
            raise InvalidPath(f"not a usable path: {path!r}")
        raw = Path(path)
        base = self.path
        target = Path(os.path.normpath(raw if raw.is_absolute() else self.path / raw))
        if not target.is_relative_to(self.path) and target.is_relative_to(self.given):
            base = self.given  # an absolute path through the root's own symlinked name
        if not target.is_relative_to(base):
            raise InvalidPath(f"{path!r} is outside the served root {self.path}: "
                              "paths must lie inside it")
        real = Path(os.path.realpath(target))
        if not real.is_relative_to(self.path):
            raise InvalidPath(f"{path!r} leads outside the served root {self.path} through "
                              "a symlink: refused")
        if not real.exists():
            raise InvalidPath(f"no such file or directory in {self.path}: {path!r}")
        rel = target.relative_to(base).as_posix()
        return ("" if rel == "." else rel), real.is_dir()

    def contains(self, rel: str) -> bool:
        """Whether an indexed path still resolves inside the root (it may have become a
        symlink leading out since it was indexed)."""
        return Path(os.path.realpath(self.path / rel)).is_relative_to(self.path)


class _NoVectors:
    """The model of an index built without vectors: build_index checks its name and
    dimension against the manifest and never embeds with it."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise EmbedderError("this index is built without vectors")


# -- the tools ---------------------------------------------------------------------------


class Workspace:
    """The served roots and what the tools do with them; one per server process."""

    def __init__(self, roots: Sequence[ServedRoot], *, embedder: str = DEFAULT_EMBEDDER,
                 embed: bool = True, embed_chunks: bool = True,
                 lock_wait_s: float = FRESHNESS_LOCK_WAIT_S) -> None:
        unique: dict[Path, ServedRoot] = {}
        for r in roots:
            unique.setdefault(r.path, r)
        if not unique:
            raise DowseError("no root to serve")
        self.roots = list(unique.values())
        self.embedder_name = embedder
        self.embed, self.embed_chunks = embed, embed_chunks
        self.lock_wait_s = lock_wait_s
        self._by_name: dict[str, Embedder] = {}
        self._by_model: dict[str, Embedder | None] = {}
        self._embedders_lock = threading.Lock()

    # -- roots -------------------------------------------------------------------------

    def _root(self, name: str | None) -> ServedRoot:
        if name is None:
            if len(self.roots) == 1:
                return self.roots[0]
            raise InvalidPath(f"{len(self.roots)} roots are served ({self._names()}): "
                              "pass `root`")
        if os.path.isabs(name):
            real = Path(os.path.realpath(name))
            found = [r for r in self.roots if real == r.path]
        else:
            found = [r for r in self.roots if name.strip("/") == r.name]
        if len(found) == 1:
            return found[0]
        why = "names several served roots: pass its path" if found else "is not a served root"
        raise InvalidPath(f"{name!r} {why}; serving: {self._names()}")

    def _roots(self, name: str | None) -> list[ServedRoot]:
        return list(self.roots) if name is None else [self._root(name)]

    def _names(self) -> str:
        return ", ".join(str(r.path) for r in self.roots)

    def problems(self) -> list[str]:
        """One line for each root that cannot be queried yet."""
        out = []
        for root in self.roots:
            try:
                self._check_root(root, self._manifest(root))
            except DowseError as exc:
                out.append(str(exc))
        return out

    def warm(self) -> None:
        """Open every root's snapshot and load its query model ahead of the first call."""
        for root in self.roots:
            with root.lock:
                try:
                    searcher = self._searcher(root)
                    if searcher.has_vectors or searcher.has_file_vectors:
                        searcher.embed_query("warm up")
                except Exception:  # best effort: the first call reports what failed
                    pass

    # -- snapshots and freshness -------------------------------------------------------

    def _manifest(self, root: ServedRoot) -> Manifest:
        try:
            return Store.read_manifest(root.index_dir)
        except IndexNotFound:
            holder = _writer(root.index_dir)
            if holder is not None:  # a first build is under way (a rebuild keeps the old one)
                raise IndexLocked(f"another dowse process{holder} is building the index "
                                  f"for {root.path}; try again when it finishes") from None
            raise IndexNotFound(f"no index for {root.path} yet: call the reindex tool to "
                                f"build it, or run `dowse index {root.path}`") from None

    def _check_root(self, root: ServedRoot, manifest: Manifest) -> None:
        if Path(os.path.realpath(manifest.root)) != root.path:
            raise InvalidPath(f"the index at {root.index_dir} was built for {manifest.root}, "
                              f"not {root.path}: call reindex with rebuild=true")

    def _embedder(self, name: str) -> Embedder:
        """The backend that builds new indexes, made once."""
        with self._embedders_lock:
            if name not in self._by_name:
                self._by_name[name] = get_embedder(name)
            return self._by_name[name]

    def _embedder_for(self, model: str) -> Embedder | None:
        """An index's query embedder (`embedder_for_model`), loaded once per model."""
        with self._embedders_lock:
            if model not in self._by_model:
                factory = embedder_for_model(model)
                self._by_model[model] = None if factory is None else factory()
            return self._by_model[model]

    def _searcher(self, root: ServedRoot) -> HybridSearcher:
        """The root's searcher, reopened only when the manifest names a new snapshot."""
        stamp = _stamp(self._manifest(root))
        if root.searcher is None or root.stamp != stamp:
            store = Store.open(root.index_dir)
            self._check_root(root, store.manifest)
            embedder = self._embedder_for(store.manifest.model)
            factory = None if embedder is None else (lambda: embedder)
            root.searcher, root.stamp = HybridSearcher(store, factory), _stamp(store.manifest)
        return root.searcher

    def _build(self, root: ServedRoot, *, rebuild: bool, lock_wait_s: float) -> IndexStats:
        try:
            manifest: Manifest | None = Store.read_manifest(root.index_dir)
        except IndexNotFound:
            manifest = None
        except DowseError:
            if not rebuild:
                raise  # a damaged index or another format: only a rebuild mends it
            manifest = None
        embed = self.embed if manifest is None else not manifest.no_embed
        embed_chunks = self.embed_chunks if manifest is None else manifest.embed_chunks
        embedder: Embedder
        if manifest is None or rebuild:
            embedder = self._embedder(self.embedder_name)
        elif manifest.no_embed:
            embedder = _NoVectors(manifest.model, manifest.dim)
        else:
            found = self._embedder_for(manifest.model)
            if found is None:
                raise EmbedderError(f"the index at {root.index_dir} was built with "
                                    f"{manifest.model}, which this dowse cannot load: call "
                                    "reindex with rebuild=true")
            embedder = found
        config = IndexConfig(walk=resolve_walk_config(root.index_dir), embed=embed,
                             embed_chunks=embed_chunks, rebuild=rebuild,
                             lock_timeout_s=lock_wait_s)
        return build_index(root.path, index_dir=root.index_dir, config=config,
                           embedder=embedder)

    def _fresh(self, root: ServedRoot) -> tuple[HybridSearcher, Freshness]:
        """The root's searcher after indexing what changed since its snapshot, if it can."""
        searcher = self._searcher(root)
        manifest = searcher.store.manifest
        changes = sum(changed_since(searcher.store, root.path,
                                    walk_config_from(manifest.walk)).values())
        if not changes:
            return searcher, Freshness(snapshot=manifest.updated)
        missing = (f"this answer comes from the last complete index, without {changes} "
                   "changed file(s)")
        try:
            self._build(root, rebuild=False, lock_wait_s=self.lock_wait_s)
        except IndexLocked:
            holder = WriteLock(root.index_dir).holder()
            return searcher, Freshness(
                snapshot=manifest.updated, pending=changes,
                note=f"another dowse process{holder} is updating the index: {missing}")
        except DowseError as exc:
            return searcher, Freshness(snapshot=manifest.updated, pending=changes,
                                       note=f"the index cannot be updated ({exc}): {missing}")
        searcher = self._searcher(root)
        return searcher, Freshness(snapshot=searcher.store.manifest.updated, reindexed=changes)

    def _query(self, root: ServedRoot, run: Callable[[HybridSearcher], T]
               ) -> tuple[T, HybridSearcher, Freshness]:
        searcher, fresh = self._fresh(root)
        try:
            return run(searcher), searcher, fresh
        except DowseError:
            raise
        except Exception:
            # Another process may have committed and cleaned up the snapshot this query
            # was reading; then the query runs once more, on the new snapshot.
            if _stamp(self._manifest(root)) == root.stamp:
                raise
            searcher = self._searcher(root)
            return run(searcher), searcher, fresh

    def _scope(self, root: ServedRoot, path: str | None, include: list[str]) -> list[str]:
        """Include globs for `path`: the file itself, or the globs under the directory."""
        if path is None:
            return list(include)
        rel, is_dir = root.confine(path)
        if not rel:
            return list(include)
        anchor = "/" + _escape_glob(rel)
        if not is_dir:
            return [anchor]
        if not include:
            return [anchor + "/"]
        return [f"{anchor}/{g.lstrip('/')}" if "/" in g.strip("/")
                else f"{anchor}/**/{g.lstrip('/')}" for g in include]

    @staticmethod
    def _inside(root: ServedRoot, records: Sequence[L], fresh: Freshness) -> list[L]:
        kept = [r for r in records if root.contains(r.path)]
        if len(kept) < len(records):
            gone = len(records) - len(kept)
            fresh.note = "; ".join(filter(None, [
                fresh.note, f"{gone} result(s) left out: their files now lead outside the root"]))
        return kept

    # -- tools ---------------------------------------------------------------------------

    def search(self, req: SearchRequest) -> SearchAnswer:
        root = self._root(req.root)
        options = SearchOptions(limit=req.limit, grain=req.grain,
                                include=self._scope(root, req.path, req.include),
                                exclude=req.exclude, languages=req.languages, kinds=req.kinds)
        with root.lock:
            hits, _, fresh = self._query(root, lambda s: s.search(req.query, options))
        hits = self._inside(root, hits, fresh)
        return _fit(lambda forms, budget: SearchAnswer(
            root=str(root.path), hits=forms[0], freshness=fresh, budget=budget),
            [[(h, _cut_hit(h)) for h in hits]], req.max_tokens)

    def ask(self, req: AskRequest, *, evaluator: Evaluator | None = None) -> AskAnswer:
        root = self._root(req.root)
        loop = LoopConfig(include=self._scope(root, req.path, req.include),
                          exclude=req.exclude)
        budget = max(50, int(req.max_tokens * ASK_CONTEXT_SHARE))
        with root.lock:
            result, searcher, fresh = self._query(root, lambda s: run_ask(
                s, req.question, budget=budget, loop=loop, evaluator=evaluator,
                with_trace=False))
            signatures = _signatures(searcher, result.context)
        context = self._inside(root, result.context, fresh)
        files = self._inside(root, result.files, fresh)
        blocks = [(b, _cut_block(b, signatures.get((b.path, b.symbol or ""), "")))
                  for b in context]
        return _fit(lambda forms, budget: AskAnswer(
            root=str(root.path), files=forms[1], context=forms[0],
            stop_reason=result.stop_reason, cycles=result.cycles, freshness=fresh,
            budget=budget),
            [blocks, [(f, None) for f in files[:MAX_ASK_FILES]]], req.max_tokens,
            omitted=max(len(files) - MAX_ASK_FILES, 0))

    def explore(self, req: ExploreRequest) -> ExploreAnswer:
        from explore.render import fit_budget
        from explore.run import explore as run_explore

        root = self._root(req.root)
        target = root.path / root.confine(req.path)[0] if req.path else root.path
        with root.lock:
            result, _, fresh = self._query(root, lambda s: run_explore(
                target, focus=req.focus, depth=req.depth, index_dir=root.index_dir,
                searcher=s))
        # The report's sections share the budget (fit_budget); the envelope around it is
        # measured, and the sections' share shrinks until the whole answer fits.
        inner = req.max_tokens
        while True:
            fitted = fit_budget(result, inner, "json")
            probe = ExploreAnswer(root=str(root.path), result=fitted, freshness=fresh,
                                  budget=Budget(max_tokens=req.max_tokens,
                                                tokens=req.max_tokens))
            if estimate_tokens(probe.model_dump_json()) <= req.max_tokens:
                break
            if inner <= MIN_TOKENS:
                raise DowseError(f"max_tokens={req.max_tokens} cannot hold an explore report "
                                 "here; ask for more or a narrower path")
            inner = max(MIN_TOKENS, int(inner * 0.8))
        return _fit(lambda forms, budget: ExploreAnswer(
            root=str(root.path), result=fitted, freshness=fresh, budget=budget),
            [], req.max_tokens, omitted=sum(fitted.omitted.values()))

    def symbol(self, req: SymbolRequest) -> SymbolAnswer:
        root = self._root(req.root)
        with root.lock:
            found, searcher, fresh = self._query(
                root, lambda s: find_symbols(s.store, req.name, limit=req.limit))
            found = self._inside(root, found, fresh)
            stale = searcher.stale_paths(m.path for m in found)
            definitions = [Definition(**m.model_dump(), stale=m.path in stale,
                                      text=read_lines(root.path / m.path, m.start_line,
                                                      m.end_line)) for m in found]
        return _fit(lambda forms, budget: SymbolAnswer(
            root=str(root.path), definitions=forms[0], freshness=fresh, budget=budget),
            [[(d, None if d.text is None else d.model_copy(update={"text": None}))
              for d in definitions]], req.max_tokens)

    def status(self, req: StatusRequest) -> StatusAnswer:
        entries: list[Entry] = []
        for root in self._roots(req.root):
            with root.lock:
                try:
                    self._check_root(root, self._manifest(root))
                    report = index_status(root.index_dir)
                except DowseError as exc:
                    entries.append((RootStatus(root=str(root.path), error=str(exc)), None))
                    continue
            full = RootStatus(root=str(root.path), report=report)
            short = full.model_copy(update={"report": report.model_copy(
                update={"languages": []})})
            entries.append((full, short if report.languages else None))
        return _fit(lambda forms, budget: StatusAnswer(roots=forms[0], budget=budget),
                    [entries], req.max_tokens)

    def reindex(self, req: ReindexRequest) -> ReindexAnswer:
        done: list[RootReindex] = []
        for root in self._roots(req.root):
            with root.lock:
                try:
                    stats = self._build(root, rebuild=req.rebuild,
                                        lock_wait_s=REINDEX_LOCK_WAIT_S)
                    done.append(RootReindex(root=str(root.path), stats=stats))
                except DowseError as exc:
                    done.append(RootReindex(root=str(root.path), error=str(exc)))
        if all(r.error for r in done):
            raise DowseError("; ".join(r.error or "" for r in done))
        return _fit(lambda forms, budget: ReindexAnswer(roots=forms[0], budget=budget),
                    [[(r, None) for r in done]], req.max_tokens)


def _signatures(searcher: HybridSearcher, blocks: Sequence[ContextBlock]
                ) -> dict[tuple[str, str], str]:
    """(path, qualified name) -> signature, for the blocks that hold a definition."""
    paths = sorted({b.path for b in blocks if b.symbol})
    if not paths:
        return {}
    rows = searcher.store.rows("symbols", ["path", "qualified_name", "signature"],
                               where=f"path IN ({quote_list(paths)})")
    return {(r["path"], r["qualified_name"]): r["signature"] for r in rows}


# -- the MCP server ----------------------------------------------------------------------

_BUDGETED = (
    " The answer is one JSON record (structuredContent, and the same JSON as text) of at "
    "most max_tokens tokens: when the full answer is larger, the lowest-ranked records are "
    "first cut to signature and citation, then left out, never cut mid-record (`budget` "
    "counts both).")
_CITED = " Citations are `path:start-end`, paths relative to the root."
_FRESH = (" Changed files are indexed before answering (`freshness` says when that was not "
          "possible).")


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: its request and answer records and the Workspace method behind it."""

    name: str
    request: type[BaseModel]
    answer: type[BaseModel]
    run: Callable[[Workspace, Any], BaseModel]
    description: str
    read_only: bool = True


TOOLS: list[ToolSpec] = [
    ToolSpec("search", SearchRequest, SearchAnswer, Workspace.search,
             "Hybrid code search (BM25 over code-aware tokens, vectors when the index has "
             "them, symbol-name and path evidence): ranked chunks, definitions or files "
             "for identifiers, strings, paths or plain words." + _BUDGETED + _CITED + _FRESH),
    ToolSpec("ask", AskRequest, AskAnswer, Workspace.ask,
             "Answer 'where and how is X done here?': runs the iterative retrieval loop "
             "(search, score every candidate's relevance with a reason, refine, at most 3 "
             "cycles) and returns the ranked files and the cited source that answer it."
             + _BUDGETED + _CITED + _FRESH),
    ToolSpec("explore", ExploreRequest, ExploreAnswer, Workspace.explore,
             "Structured, cited understanding of a directory or file in one call: tree and "
             "key files, dependency manifests, coding patterns, a focus question answered "
             "with the retrieval loop, and (deep) the import graph, git history and module "
             "specialists. Explorers run in parallel on gated tracks; every claim cites "
             "file:line, checked against the file." + _BUDGETED),
    ToolSpec("symbol", SymbolRequest, SymbolAnswer, Workspace.symbol,
             "Definitions by name (exact, then prefix, then fuzzy) with kind, signature, "
             "docstring, exact start and end lines, and the source of those lines."
             + _BUDGETED + _CITED + _FRESH),
    ToolSpec("status", StatusRequest, StatusAnswer, Workspace.status,
             "What each served index holds (files, symbols, chunks per language, model, "
             "vectors) and how many files changed since it was built. Reads only." + _BUDGETED),
    ToolSpec("reindex", ReindexRequest, ReindexAnswer, Workspace.reindex,
             "Bring the index up to date now (incremental; rebuild=true starts over), or "
             "build the first index of a served root that has none. Only one process "
             "writes an index at a time; this waits up to 30 s for another one." + _BUDGETED,
             read_only=False),
]
"""The tools `build_server` registers. Adding one: a request and an answer record, a
Workspace method from one to the other, and a line here."""


_ANNOTATED: Any = Annotated  # subscripted with a tuple built at run time


def _signature(request: type[BaseModel], answer: type[BaseModel]) -> inspect.Signature:
    """The request model's fields as keyword parameters, for the SDK to build the input
    schema from; the answer model as the return annotation, for the output schema."""
    params = []
    for name, f in request.model_fields.items():
        default = (inspect.Parameter.empty if f.is_required()
                   else f.get_default(call_default_factory=True))
        annotation = _ANNOTATED[(f.annotation, Field(description=f.description), *f.metadata)]
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                        default=default, annotation=annotation))
    return inspect.Signature(params, return_annotation=answer)


def _tool_function(spec: ToolSpec, workspace: Workspace) -> Callable[..., Any]:
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, TextContent

    def call(**arguments: Any) -> CallToolResult:
        try:
            answer = spec.run(workspace, spec.request(**arguments))
        except DowseError as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:
            error = storage_error(exc)  # a damaged index file, met inside a query
            if error is None:
                raise
            raise ToolError(str(error)) from None
        text = answer.model_dump_json()
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=json.loads(text))

    call.__signature__ = _signature(spec.request, spec.answer)  # type: ignore[attr-defined]
    call.__name__ = spec.name
    return call


def build_server(workspace: Workspace) -> Any:
    """An MCPServer with the TOOLS over `workspace`."""
    import importlib.metadata

    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    roots = ", ".join(str(r.path) for r in workspace.roots)
    app: Any = MCPServer(
        "dowse", version=importlib.metadata.version("dowse"), log_level="WARNING",
        instructions=(
            f"dowse: offline code retrieval over the indexed repositories {roots}. Use ask "
            "for 'where/how is X done?' questions, search for identifiers, strings and "
            "paths, symbol for a definition's exact lines. Every answer fits its max_tokens "
            "and cites path:start-end; paths are relative to the root."))
    for spec in TOOLS:
        app.add_tool(_tool_function(spec, workspace), name=spec.name,
                     description=spec.description,
                     annotations=ToolAnnotations(read_only_hint=spec.read_only,
                                                 idempotent_hint=True, open_world_hint=False))
    return app


def serve(roots: Sequence[Path], *, embedder: str = DEFAULT_EMBEDDER, embed: bool = True,
          embed_chunks: bool = True,
          warn: Callable[[str], None] = lambda message: None) -> None:
    """Serve `roots` over stdio until the client closes the connection.

    `embedder`, `embed` and `embed_chunks` apply to indexes the server builds from
    scratch (the reindex tool on a root without an index); an existing index keeps its
    model and embed scope.
    """
    workspace = Workspace([ServedRoot(p) for p in roots], embedder=embedder, embed=embed,
                          embed_chunks=embed_chunks)
    for problem in workspace.problems():
        warn(problem)
    threading.Thread(target=workspace.warm, name="dowse-warm", daemon=True).start()
    build_server(workspace).run("stdio")


def ask_for_agent(index_dir: Path, question: str, *, max_tokens: int | None = None,
                  include: Sequence[str] = (), exclude: Sequence[str] = (),
                  evaluator: Evaluator | None = None) -> AskAnswer:
    """What the MCP `ask` tool answers, for agents that shell out to `dowse ask`."""
    manifest = Store.read_manifest(index_dir)
    workspace = Workspace([ServedRoot(Path(manifest.root), index_dir)])
    fields: dict[str, Any] = {"question": question, "include": list(include),
                              "exclude": list(exclude)}
    if max_tokens is not None:
        fields["max_tokens"] = max_tokens
    try:
        request = AskRequest(**fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise DowseError(f"{'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    return workspace.ask(request, evaluator=evaluator)

