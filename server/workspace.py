"""The Workspace whose methods answer the MCP tools, over the served roots.

`ServedRoot` (`server.roots`) is one repository: its index, its confinement, its warm
snapshot. `Workspace` holds the roots, keeps each index fresh, and turns a request record into an
answer record (`server.records`); `server.app` registers its methods as tools. The CLI
uses the same refresh for one query (`fresh_searcher`, `ask_for_agent`).

Invariants:
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
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np
from pydantic import ValidationError

from dowse.errors import (
    BudgetTooSmall,
    DowseError,
    EmbedderError,
    IndexCorrupt,
    IndexLocked,
    IndexNotFound,
    InvalidPath,
)
from dowse.explore.records import ExploreResult
from dowse.indexer import walked
from dowse.indexer.embed import DEFAULT_EMBEDDER, Embedder, get_embedder
from dowse.indexer.locate import is_index_of, why_not
from dowse.indexer.options import (
    DEFAULT_EMBED_SCOPE,
    changed_since,
    embed_flags,
    resolve_history,
    resolve_walk_config,
    walk_config_of,
)
from dowse.indexer.records import IndexStats
from dowse.indexer.status import index_status
from dowse.indexer.store import Manifest, Store, WriteLock, where_in
from dowse.retrieval.ask import ContextBlock, JsonRecords, block_plan, slim_file
from dowse.retrieval.budget import Step, estimate_tokens, steps
from dowse.retrieval.evaluate import Evaluator
from dowse.retrieval.grains import read_lines
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.lookups import NARROW_ROWS, IndexLookups
from dowse.retrieval.loop import LoopConfig
from dowse.retrieval.records import SearchOptions
from dowse.retrieval.references import Callee, Caller, find_references
from dowse.retrieval.symbols import find_symbols
from dowse.server.query_embedders import QueryEmbedders
from dowse.server.records import (
    MAX_TOKENS_LIMIT,
    AskAnswer,
    AskRequest,
    AskSynthesis,
    Budget,
    Definition,
    Entry,
    ExploreAnswer,
    ExploreRequest,
    Freshness,
    ReferencesAnswer,
    ReferencesRequest,
    ReindexAnswer,
    ReindexRequest,
    RootReindex,
    RootStatus,
    SearchAnswer,
    SearchRequest,
    StatusAnswer,
    StatusRequest,
    SymbolAnswer,
    SymbolRequest,
    cut_block,
    cut_hit,
    fit_answer,
    invalid_request,
)
from dowse.server.roots import RootOptions, ServedRoot

if TYPE_CHECKING:
    from dowse.explore.handoff import AskReport

__all__ = [
    "RootOptions",
    "ServedRoot",
    "Workspace",
    "ask_for_agent",
    "ask_plan",
    "fresh_searcher",
]

FRESHNESS_LOCK_WAIT_S = 2.0
"""How long a query waits for another process's index run before answering without it."""
REINDEX_LOCK_WAIT_S = 30.0
MAX_ASK_FILES = 10
EXPLORED_CONTEXT_SHARE = 0.95
"""The share of the budget an explored question's curated context takes over MCP (`dowse
ask` prints 0.6 of it as markdown, beside the tracks' findings): the answer's code first,
and the synthesis in the rest (its statement about 300 tokens, its first clause, where the
answer is with its callers and callees, about 100). At 0.85 the source was 59-60 % of the
answer at 4,000 tokens on flask's and requests' broad questions, at 0.95 67-68 %, the
statement's first clause kept in every answer (benchmarks/RESULTS-context.md)."""


T = TypeVar("T")


class _Located(Protocol):
    path: str


L = TypeVar("L", bound=_Located)


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

    def __init__(
        self,
        roots: Sequence[ServedRoot],
        *,
        embedder: str = DEFAULT_EMBEDDER,
        embed: bool = True,
        embed_chunks: bool = embed_flags(DEFAULT_EMBED_SCOPE)[1],
        lock_wait_s: float = FRESHNESS_LOCK_WAIT_S,
        refresh: bool = True,
        query_embedders: QueryEmbedders | None = None,
    ) -> None:
        """`query_embedders`: the process's, when a command made them before this
        workspace (and prepared its question with them)."""
        unique: dict[Path, ServedRoot] = {}
        for r in roots:
            unique.setdefault(r.path, r)
        if not unique:
            raise DowseError("no root to serve")
        self.roots = list(unique.values())
        self.embedder_name = embedder
        self.embed, self.embed_chunks = embed, embed_chunks
        self.lock_wait_s = lock_wait_s
        self.refresh = refresh
        self._by_name: dict[str, Embedder] = {}
        self._query_embedders = query_embedders or QueryEmbedders()
        self._embedders_lock = threading.Lock()
        self._long_lived = False
        """Set by `warm` (a server's): every searcher then holds the tables without text
        up to `NARROW_ROWS` rows, which a one-shot query would read for a few look-ups."""

    # -- roots -------------------------------------------------------------------------

    def _root(self, name: str | None) -> ServedRoot:
        if name is None:
            if len(self.roots) == 1:
                return self.roots[0]
            raise InvalidPath(f"{len(self.roots)} roots are served ({self._names()}): pass `root`")
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
        """Open every root's snapshot and load its query model ahead of the first call;
        from now on each snapshot's searcher holds more of its rows (`NARROW_ROWS`)."""
        self._long_lived = True
        for root in self.roots:
            with root.lock:
                if root.searcher is not None and root.searcher.lookups.narrow_rows < NARROW_ROWS:
                    root.searcher = None  # a query's before the warm-up: reopened to hold more
                try:
                    searcher = self._searcher(root)
                    if searcher.questions.has_vectors or searcher.questions.has_file_vectors:
                        searcher.questions.embed_query("warm up")
                    searcher.warm()
                except DowseError:  # best effort: the first call reports it, as a tool error
                    pass

    # -- snapshots and freshness -------------------------------------------------------

    def _manifest(self, root: ServedRoot) -> Manifest:
        try:
            return Store.read_manifest(root.index_dir)
        except IndexNotFound:
            holder = _writer(root.index_dir)
            if holder is not None:  # a first build is under way (a rebuild keeps the old one)
                raise IndexLocked(
                    f"another dowse process{holder} is building the index "
                    f"for {root.path}; try again when it finishes"
                ) from None
            raise IndexNotFound(
                f"no index for {root.path} yet: call the reindex tool to "
                f"build it, or run `dowse index {root.path}`"
            ) from None

    def _check_root(self, root: ServedRoot, manifest: Manifest) -> None:
        if not is_index_of(manifest, root.path):
            raise InvalidPath(
                f"the index at {root.index_dir}: {why_not(manifest, root.path)}; call "
                "reindex with rebuild=true"
            )

    def _embedder(self, name: str) -> Embedder:
        """The backend that builds new indexes, made once."""
        with self._embedders_lock:
            if name not in self._by_name:
                self._by_name[name] = get_embedder(name)
            return self._by_name[name]

    def _embedder_for(self, model: str) -> Embedder | None:
        """An index's query embedder (`embedder_for_model`), loaded once per model."""
        return self._query_embedders.get(model)

    def _prepare(self, root: ServedRoot, question: str) -> None:
        """Before a root's first query: have its query embedder start loading what
        `question` will be embedded with, on a thread of its own, while this one opens
        the index and checks the tree (`QueryEmbedders.prepare`; nothing when the
        command that made this workspace started it already)."""
        if root.searcher is None:
            self._query_embedders.prepare(root.path, root.index_dir, question)

    def _searcher(self, root: ServedRoot) -> HybridSearcher:
        """The root's searcher, reopened only when the manifest names a new snapshot."""
        stamp = _stamp(self._manifest(root))
        if root.searcher is None or root.stamp != stamp:
            store = Store.open(root.index_dir)
            self._check_root(root, store.manifest)
            embedder = self._embedder_for(store.manifest.model)
            factory = None if embedder is None else (lambda: embedder)
            narrow = NARROW_ROWS if self._long_lived else None
            lookups = IndexLookups(store, narrow_rows=narrow)
            root.searcher = HybridSearcher(store, factory, lookups=lookups)
            root.stamp = _stamp(store.manifest)
            if embedder is not None and not store.manifest.no_embed and not self._long_lived:
                # A one-shot query's question needs them: read while the tree is checked.
                root.searcher.questions.prefetch()
        return root.searcher

    def _build(
        self, root: ServedRoot, *, rebuild: bool, lock_wait_s: float
    ) -> tuple[IndexStats, list[str]]:
        """The run's stats and its warnings (the server has no stderr: answers carry them)."""
        try:
            manifest: Manifest | None = Store.read_manifest(root.index_dir)
        except IndexNotFound:
            manifest = None
        except DowseError:
            if not rebuild:
                raise  # a damaged index or another format: only a rebuild mends it
            manifest = None
        if manifest is not None and not is_index_of(manifest, root.path):
            manifest = None  # another root's: build_index replaces it, with these defaults
        new_embed, new_chunks = (
            (self.embed, self.embed_chunks)
            if root.options.embed_scope is None
            else embed_flags(root.options.embed_scope)
        )
        embed = new_embed if manifest is None else not manifest.no_embed
        embed_chunks = new_chunks if manifest is None else manifest.embed_chunks
        embedder: Embedder
        if manifest is None or rebuild:
            embedder = self._embedder(root.options.embedder or self.embedder_name)
        elif manifest.no_embed:
            embedder = _NoVectors(manifest.model, manifest.dim)
        else:
            found = self._embedder_for(manifest.model)
            if found is None:
                raise EmbedderError(
                    f"the index at {root.index_dir} was built with "
                    f"{manifest.model}, which this dowse cannot load: call "
                    "reindex with rebuild=true"
                )
            embedder = found
        from dowse.indexer.build import IndexConfig, build_index  # only when there is work

        warnings: list[str] = []
        config = IndexConfig(
            walk=resolve_walk_config(
                root.index_dir, root=root.path, warn=warnings.append, **root.options.walk
            ),
            embed=embed,
            embed_chunks=embed_chunks,
            rebuild=rebuild,
            lock_timeout_s=lock_wait_s,
            history=resolve_history(root.index_dir, root.options.history, root=root.path),
        )
        stats = build_index(root.path, index_dir=root.index_dir, config=config, embedder=embedder)
        return stats, warnings

    def _fresh(self, root: ServedRoot) -> tuple[HybridSearcher, Freshness]:
        """The root's searcher after indexing what changed since its snapshot, if it can
        (as it is when `refresh` is off)."""
        searcher = self._searcher(root)
        manifest = searcher.store.manifest
        if not self.refresh:
            return searcher, Freshness(snapshot=manifest.updated)
        config = walk_config_of(manifest)
        # The paths the last run's walk depended on, stat'ed, when it left a record for
        # this snapshot (`indexer.walked`); else the walk.
        if walked.unchanged(root.index_dir, manifest, root.path, config):
            return searcher, Freshness(snapshot=manifest.updated)
        changes = sum(changed_since(searcher.store, root.path, config).values())
        if not changes:
            return searcher, Freshness(snapshot=manifest.updated)
        missing = (
            f"this answer comes from the last complete index, without {changes} changed file(s)"
        )
        try:
            stats, warnings = self._build(root, rebuild=False, lock_wait_s=self.lock_wait_s)
        except IndexLocked:
            holder = WriteLock(root.index_dir).holder()
            return searcher, Freshness(
                snapshot=manifest.updated,
                pending=changes,
                note=f"another dowse process{holder} is updating the index: {missing}",
            )
        except DowseError as exc:
            return searcher, Freshness(
                snapshot=manifest.updated,
                pending=changes,
                note=f"the index cannot be updated ({exc}): {missing}",
            )
        searcher = self._searcher(root)
        return searcher, Freshness(
            snapshot=searcher.store.manifest.updated,
            reindexed=changes,
            note="; ".join(stats.notes),  # a damaged index the run built anew, say
            warnings=warnings,
        )

    def _query(
        self, root: ServedRoot, run: Callable[[HybridSearcher], T]
    ) -> tuple[T, HybridSearcher, Freshness]:
        searcher, fresh = self._fresh(root)
        try:
            return run(searcher), searcher, fresh
        except IndexCorrupt:
            # The store's word for a LanceDB failure mid-query. Another process may have
            # committed and cleaned up the snapshot this query was reading; then the query
            # runs once more, on the new snapshot. On the same snapshot it is damage.
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
        return [
            f"{anchor}/{g.lstrip('/')}" if "/" in g.strip("/") else f"{anchor}/**/{g.lstrip('/')}"
            for g in include
        ]

    @staticmethod
    def _inside(root: ServedRoot, records: Sequence[L], fresh: Freshness) -> list[L]:
        kept = [r for r in records if root.contains(r.path)]
        if len(kept) < len(records):
            gone = len(records) - len(kept)
            fresh.note = "; ".join(
                filter(
                    None,
                    [
                        fresh.note,
                        f"{gone} result(s) left out: their files now lead outside the root",
                    ],
                )
            )
        return kept

    # -- tools ---------------------------------------------------------------------------

    def search(self, req: SearchRequest) -> SearchAnswer:
        root = self._root(req.root)
        options = SearchOptions(
            limit=req.limit,
            grain=req.grain,
            include=self._scope(root, req.path, req.include),
            exclude=req.exclude,
            languages=req.languages,
            kinds=req.kinds,
        )
        with root.lock:
            self._prepare(root, req.query)
            hits, _, fresh = self._query(root, lambda s: s.search(req.query, options))
        hits = self._inside(root, hits, fresh)
        return fit_answer(
            lambda forms, budget: SearchAnswer(
                root=str(root.path), hits=forms[0], freshness=fresh, budget=budget
            ),
            [[(h, cut_hit(h)) for h in hits]],
            req.max_tokens,
        )

    def ask(self, req: AskRequest, *, evaluator: Evaluator | None = None) -> AskAnswer:
        # Imported here: the hand-off imports only its records until a question is explored.
        from dowse.explore.handoff import investigate

        root = self._root(req.root)
        loop = LoopConfig(include=self._scope(root, req.path, req.include), exclude=req.exclude)
        # Packed as JSON records into the budget less the answer's envelope, then fitted
        # exactly (the estimate of which files a block shows can be short: signature
        # lines go first). A broad question is explored, as `dowse ask` explores it: its
        # tracks' synthesis takes the room the context leaves.
        budget = req.max_tokens
        frame = _envelope(root)
        with root.lock:
            self._prepare(root, req.question)
            result, searcher, fresh = self._query(
                root,
                lambda s: investigate(
                    s,
                    req.question,
                    budget=budget,
                    loop=loop,
                    evaluator=evaluator,
                    context_share=EXPLORED_CONTEXT_SHARE,
                    records=JsonRecords(frame=frame),
                ),
            )
            signatures = _signatures(searcher, result.context)
        context = self._inside(root, result.context, fresh)
        files = self._inside(root, result.files, fresh)
        listed = files[:MAX_ASK_FILES]
        shown = {b.path for b in context}
        blocks = [(b, cut_block(b, signatures.get((b.path, b.symbol or ""), ""))) for b in context]
        # A file a block shows is listed slim from the start: its blocks carry its
        # citations and their reasons, and the room goes to code.
        ranked = [(slim_file(f) if f.path in shown else f, slim_file(f)) for f in listed]
        summed = _synthesis(result)
        findings: list[Entry] = [(f, None) for f in summed.findings] if summed else []
        tracks: list[Entry] = [(t, None) for t in summed.tracks] if summed else []
        statement: list[Entry] = [(summed, _first_clause(summed))] if summed else []
        inside = {f.path for f in files}
        defined: list[Entry] = [
            (f"{d.citation} {d.qualified_name}", None)
            for d in result.definitions
            if d.path in inside
        ]
        # The ranked definitions take the room the rest leaves, the lowest-ranked first.
        plan = steps(5, defined, 2) + ask_plan(blocks, ranked, shown, findings, tracks, statement)

        def make(forms: list[list[Any]], budget: Budget) -> AskAnswer:
            kept = forms[4][0] if forms[4] else None
            return AskAnswer(
                root=str(root.path),
                mode=result.mode,
                files=forms[1],
                context=forms[0],
                definitions=forms[5],
                synthesis=(
                    kept.model_copy(update={"findings": forms[2], "tracks": forms[3]})
                    if kept is not None
                    else None
                ),
                stop_reason=result.stop_reason,
                cycles=result.cycles,
                freshness=fresh,
                budget=budget,
            )

        return fit_answer(
            make,
            [blocks, ranked, findings, tracks, statement, defined],
            req.max_tokens,
            omitted=max(len(files) - MAX_ASK_FILES, 0),
            plan=plan,
        )

    def explore(self, req: ExploreRequest) -> ExploreAnswer:
        from dowse.explore.run import explore as run_explore

        root = self._root(req.root)
        target = root.path / root.confine(req.path)[0] if req.path else root.path
        with root.lock:
            result, _, fresh = self._query(
                root,
                lambda s: run_explore(
                    target, focus=req.focus, depth=req.depth, index_dir=root.index_dir, searcher=s
                ),
            )

        return explore_answer(
            result,
            req.max_tokens,
            lambda fitted, budget: ExploreAnswer(
                root=str(root.path), result=fitted, freshness=fresh, budget=budget
            ),
        )

    def symbol(self, req: SymbolRequest) -> SymbolAnswer:
        root = self._root(req.root)
        with root.lock:
            found, searcher, fresh = self._query(
                root, lambda s: find_symbols(s.store, req.name, limit=req.limit)
            )
            found = self._inside(root, found, fresh)
            stale = searcher.lookups.stale_paths(m.path for m in found)
            definitions = [
                Definition(
                    **m.model_dump(),
                    stale=m.path in stale,
                    text=read_lines(root.path, m.path, m.start_line, m.end_line),
                )
                for m in found
            ]
        return fit_answer(
            lambda forms, budget: SymbolAnswer(
                root=str(root.path), definitions=forms[0], freshness=fresh, budget=budget
            ),
            [
                [
                    (d, None if d.text is None else d.model_copy(update={"text": None}))
                    for d in definitions
                ]
            ],
            req.max_tokens,
        )

    def references(self, req: ReferencesRequest) -> ReferencesAnswer:
        root = self._root(req.root)
        with root.lock:
            found, _, fresh = self._query(
                root,
                lambda s: find_references(
                    s.store,
                    req.name,
                    callers=req.direction != "callees",
                    callees=req.direction != "callers",
                    limit=req.limit,
                ),
            )
            callers = self._inside(root, found.callers, fresh)
            callees = [c for c in found.callees if root.contains(c.definition.path)]
        # Cut: a record without its definition's signature; then left out, the last first.
        return fit_answer(
            lambda forms, budget: ReferencesAnswer(
                root=str(root.path),
                name=found.name,
                definitions=found.definitions,
                callers=forms[0],
                callees=forms[1],
                indexed=found.indexed,
                truncated=found.truncated,
                freshness=fresh,
                budget=budget,
            ),
            [
                [(c, _unsigned(c)) for c in callers],
                [(c, _unsigned(c)) for c in callees],
            ],
            req.max_tokens,
        )

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
            short = full.model_copy(update={"report": report.model_copy(update={"languages": []})})
            entries.append((full, short if report.languages else None))
        return fit_answer(
            lambda forms, budget: StatusAnswer(roots=forms[0], budget=budget),
            [entries],
            req.max_tokens,
        )

    def reindex(self, req: ReindexRequest) -> ReindexAnswer:
        done: list[RootReindex] = []
        for root in self._roots(req.root):
            with root.lock:
                try:
                    stats, warnings = self._build(
                        root, rebuild=req.rebuild, lock_wait_s=REINDEX_LOCK_WAIT_S
                    )
                    done.append(RootReindex(root=str(root.path), stats=stats, warnings=warnings))
                except DowseError as exc:
                    done.append(RootReindex(root=str(root.path), error=str(exc)))
        if all(r.error for r in done):
            raise DowseError("; ".join(r.error or "" for r in done))
        return fit_answer(
            lambda forms, budget: ReindexAnswer(roots=forms[0], budget=budget),
            [[(r, None) for r in done]],
            req.max_tokens,
        )


def explore_answer(
    result: ExploreResult,
    max_tokens: int,
    answer: Callable[[ExploreResult, Budget], ExploreAnswer],
) -> ExploreAnswer:
    """The answer `answer` makes of `result` fitted to `max_tokens`: the report's sections
    share the budget (`fit_budget`), measured inside the whole answer, envelope included,
    with the budget record it will carry (its `omitted` count: xarray's 769 items left out
    are three characters the sections must leave room for)."""
    from dowse.explore.render import fit_budget

    try:
        fitted = fit_budget(
            result,
            max_tokens,
            "json",
            printed=lambda r: answer(
                r,
                Budget(max_tokens=max_tokens, tokens=max_tokens, omitted=sum(r.omitted.values())),
            ).model_dump_json(),
        )
    except BudgetTooSmall:
        raise BudgetTooSmall(
            f"max_tokens={max_tokens} cannot hold an explore report "
            "here; ask for more or a narrower path"
        ) from None
    return fit_answer(
        lambda forms, budget: answer(fitted, budget),
        [],
        max_tokens,
        omitted=sum(fitted.omitted.values()),
    )


def _synthesis(report: AskReport) -> AskSynthesis | None:
    """An explored answer's synthesis as the MCP answer carries it: the statement, the
    confidence and its basis, the findings as their markdown lines and a line per track."""
    syn = report.synthesis
    if report.mode != "exploration" or syn is None:
        return None
    # Imported here: an answer of one loop (most) needs none of explore's rendering.
    from dowse.explore.render import verdict

    return AskSynthesis(
        statement=syn.statement,
        confidence=syn.confidence,
        basis=syn.basis,
        findings=[
            *syn.unified,
            *(f"divergence: {x}" for x in syn.divergences),
            *(f"open: {x}" for x in syn.open_questions),
        ],
        tracks=[f"{t.track.name}: {verdict(t)}" for t in report.tracks],
    )


def _envelope(root: ServedRoot) -> int:
    """The tokens of an `ask` answer's JSON but its context, files and synthesis: the
    root, a stop reason of the usual length, a freshness without notes or warnings and
    the budget's counts (a note or warning beyond them is the fit's to make room for)."""
    skeleton = AskAnswer(
        root=str(root.path),
        mode="exploration",
        files=[],
        context=[],
        stop_reason="x" * 64,
        cycles=3,
        freshness=Freshness(snapshot=time.time(), reindexed=100, pending=100),
        budget=Budget(max_tokens=MAX_TOKENS_LIMIT, tokens=MAX_TOKENS_LIMIT, cut=99, omitted=99),
    )
    return estimate_tokens(skeleton.model_dump_json())


def ask_plan(
    blocks: Sequence[Entry],
    ranked: Sequence[Entry],
    shown: set[str],
    findings: Sequence[Entry],
    tracks: Sequence[Entry],
    statement: Sequence[Entry],
) -> list[Step]:
    """The order in which an `ask` answer shrinks to its budget; its groups are 0 the
    blocks, 1 the files, 2 the synthesis' findings, 3 its track lines, 4 its statement.

    The answer is the code: the files' ranking evidence and reasons go first, then the
    files no block shows, then an explored answer's track lines and findings (its
    statement says where the answer, its callers, tests and settings are; the context
    shows most of the findings' places), then the records of files no part of which
    scored relevant, then the signature lines (a record around one line is mostly
    metadata, and the files list already says where the next files are), then the
    statement's later clauses; only then are whole blocks cut to their signature,
    lowest-ranked first, and last of all the statement's first clause goes."""
    return (
        steps(1, ranked, 1)
        + steps(1, ranked, 2, only=lambda f: f.path not in shown)
        + steps(3, tracks, 2)
        + steps(2, findings, 2)
        + block_plan(0, blocks, 1, ranked, lines_first=True, between=steps(4, statement, 1))
        + steps(1, ranked, 2)
        + steps(4, statement, 2)
    )


def _first_clause(summed: AskSynthesis) -> AskSynthesis | None:
    """The synthesis with its statement cut to its first clause (the definition that
    answers, its callers and callees); None when it has one clause only."""
    first, sep, _ = summed.statement.partition("; ")
    return summed.model_copy(update={"statement": first}) if sep else None


def _signatures(
    searcher: HybridSearcher, blocks: Sequence[ContextBlock]
) -> dict[tuple[str, str], str]:
    """(path, qualified name) -> signature, for the blocks that hold a definition."""
    paths = sorted({b.path for b in blocks if b.symbol})
    if not paths:
        return {}
    rows = searcher.store.rows(
        "symbols", ["path", "qualified_name", "signature"], where=where_in("path", paths)
    )
    return {(r["path"], r["qualified_name"]): r["signature"] for r in rows}


# -- one-shot callers ----------------------------------------------------------------------


def _one_root(
    root: Path,
    index_dir: Path,
    *,
    refresh: bool = True,
    query_embedders: QueryEmbedders | None = None,
) -> Workspace:
    """A workspace serving `root` from the index at `index_dir`. `root` is the root the
    index was located for (`indexer.locate`), never read from the manifest: a manifest
    shipped with the files must not choose what gets indexed."""
    return Workspace(
        [ServedRoot(root, index_dir)], refresh=refresh, query_embedders=query_embedders
    )


def fresh_searcher(
    root: Path,
    index_dir: Path,
    *,
    question: str | None = None,
    query_embedders: QueryEmbedders | None = None,
) -> tuple[HybridSearcher, Freshness]:
    """A searcher on the index of `root` at `index_dir` after indexing what changed in
    the tree, as the MCP tools do before each query: a stat walk when nothing changed, an
    incremental run (under the write lock, waiting at most `FRESHNESS_LOCK_WAIT_S`)
    when something did, so no answer cites an edited file at its old line numbers.
    `Freshness` says what was indexed, or what the answer lacks when it could not be.
    With the `question` to come, its embedder loads meanwhile (`Workspace._prepare`);
    `query_embedders`: the process's, which the caller may have prepared already."""
    workspace = _one_root(root, index_dir, query_embedders=query_embedders)
    if question is not None:
        workspace._prepare(workspace.roots[0], question)
    return workspace._fresh(workspace.roots[0])


def _unsigned(record: Caller | Callee) -> Caller | Callee | None:
    """`record` without its definition's signature, or None when it has none to cut."""
    definition = record.definition
    if definition is None or not definition.signature:
        return None
    return record.model_copy(update={"definition": definition.model_copy(update={"signature": ""})})


def ask_for_agent(
    root: Path,
    index_dir: Path,
    question: str,
    *,
    max_tokens: int | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    evaluator: Evaluator | None = None,
    refresh: bool = True,
    query_embedders: QueryEmbedders | None = None,
) -> AskAnswer:
    """What the MCP `ask` tool answers, for agents that shell out to `dowse ask`
    (`query_embedders`: the process's, which the caller may have prepared already)."""
    fields: dict[str, Any] = {
        "question": question,
        "include": list(include),
        "exclude": list(exclude),
    }
    if max_tokens is not None:
        fields["max_tokens"] = max_tokens
    try:
        request = AskRequest(**fields)
    except ValidationError as exc:
        raise DowseError(invalid_request(exc)) from None
    workspace = _one_root(root, index_dir, refresh=refresh, query_embedders=query_embedders)
    return workspace.ask(request, evaluator=evaluator)
