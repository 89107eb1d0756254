"""`dowse explore`: pick the tracks for a depth, run them in parallel, gate and merge them.

| depth    | tracks                                                              |
|----------|---------------------------------------------------------------------|
| shallow  | commands, tree, manifest                                            |
| standard | shallow + patterns + configuration, + focus when a focus is given   |
| deep     | standard + imports + git + module specialists                       |

Read-only: exploring never writes, not even an index. The root is the indexed root when an
index serves PATH (`indexer.locate`: never a root that only a manifest names; then the
focus track can use it), else the enclosing git work tree, else PATH itself. The files are
walked once, with the index's walk options when there is one, and shared by every track.
The git track waits for the focus track when both run, so that
co-change coupling is computed for the files that answer the focus.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from dowse.errors import InvalidPath
from dowse.explore.commands import commands_track
from dowse.explore.config import config_track
from dowse.explore.focus import focus_track
from dowse.explore.git import git_track
from dowse.explore.imports import import_graph, imports_track
from dowse.explore.manifest import manifest_track
from dowse.explore.patterns import patterns_track
from dowse.explore.records import Depth, ExploreResult, ImportGraph, TrackFindings
from dowse.explore.specialists import specialist_tracks
from dowse.explore.synthesis import synthesize
from dowse.explore.tracks import Context, Track, plural, run_track
from dowse.explore.tree import tree_track
from dowse.indexer.walk import WalkConfig
from dowse.retrieval.records import check_query

__all__ = ["DEEPEN_LEVELS", "context", "explore", "locate"]

DEEPEN_LEVELS = 2
"""How many times a too-large track may split into subtracks under `--deepen`."""


def locate(
    path: Path, index_dir: Path | None = None, warn: Callable[[str], None] | None = None
) -> tuple[Path, str, Path | None]:
    """(root, scope relative to root, index directory or None) for an explored path.

    The index is the one `indexer.locate` finds for the path; an index it passes over
    (built for another root) is named through `warn` and is not used."""
    target = Path(os.path.abspath(path))
    if not target.exists():
        raise InvalidPath(f"cannot explore {path}: no such file or directory")
    from dowse.indexer.locate import locate_index

    location = locate_index(target, index_dir)
    if warn is not None:
        for note in location.passed_over:
            warn(note)
    root = location.root
    found = location.index_dir if root is not None else None
    if root is None:
        for d in (target, *target.parents):
            if (d / ".git").exists():
                root = d
                break
    if root is None:
        root = target if target.is_dir() else target.parent
    real_root, real_target = root.resolve(), target.resolve()
    if real_target != real_root and real_root not in real_target.parents:
        raise InvalidPath(f"cannot explore {path}: it is outside the root {root}")
    scope = real_target.relative_to(real_root).as_posix()
    return real_root, "" if scope == "." else scope, found


def _walk_config(
    root: Path, index_dir: Path | None, warn: Callable[[str], None] | None
) -> WalkConfig:
    if index_dir is None:
        return WalkConfig()
    from dowse.indexer.build import resolve_walk_config

    return resolve_walk_config(index_dir, root=root, warn=warn)


def context(
    path: Path,
    *,
    focus: str | None = None,
    depth: Depth = "standard",
    deepen: bool = False,
    index_dir: Path | None = None,
    warn: Callable[[str], None] | None = None,
) -> Context:
    """The context explorers read for `path`: its root, scope, walk options and index
    (`warn` as for `explore`)."""
    root, scope, index_dir = locate(path, index_dir, warn)
    return Context(
        root=root,
        scope=scope,
        focus=focus,
        depth=depth,
        walk_config=_walk_config(root, index_dir, warn),
        index_dir=index_dir,
        deepen=DEEPEN_LEVELS if deepen else 0,
    )


def _summary(result: ExploreResult, ctx: Context) -> str:
    files = ctx.files()
    parts = [f"{result.path}: {len(files)} indexable files"]
    test = next((c for c in result.commands if c.kind == "test"), None)
    if test is not None:
        parts.append(f"test with `{test.command}` ({test.citation.ref})")
    if result.key_files:
        parts.append("key files " + ", ".join(f"{k.path} ({k.role})" for k in result.key_files[:4]))
    deps = result.dependencies
    if deps.manifests:
        own = [d for d in deps.dependencies if d.manifest not in deps.examples]
        theirs = [m for m in deps.manifests if m in deps.examples]
        where = [m for m in deps.manifests if m not in deps.examples][:3]
        # The project's own count and manifests; an example's needs are not the project's.
        said = plural(len(own), "dependency", "dependencies") + " declared in "
        said += ", ".join(where) or "no manifest"
        if theirs:
            said += (
                f" (and {plural(len(theirs), 'manifest')} of examples, tests, benchmarks and docs)"
            )
        parts.append(said)
    if result.patterns:
        parts.append("patterns: " + "; ".join(p.name for p in result.patterns[:5]))
    if result.imports is not None and result.imports.central:
        parts.append(f"most central module {result.imports.central[0][0]}")
        if result.imports.cycles:
            parts.append(f"{len(result.imports.cycles)} import cycle(s)")
    if result.git is not None and result.git.branch:
        parts.append(
            f"on branch {result.git.branch}"
            + (
                f", {len(result.git.uncommitted)} uncommitted change(s)"
                if result.git.uncommitted
                else ""
            )
        )
    if result.focus is not None:
        if result.focus_findings:
            best = result.focus_findings[0].citations[0].ref
            parts.append(
                f"focus {result.focus!r}: {len(result.focus_findings)} cited "
                f"findings, best at {best}"
            )
        else:
            parts.append(f"focus {result.focus!r}: nothing relevant found")
    return "; ".join(parts) + "."


def _run_made(ctx: Context, make: Callable[[], Track]) -> tuple[TrackFindings, dict[str, Any]]:
    return run_track(ctx, make())


def explore(
    path: Path,
    *,
    focus: str | None = None,
    depth: Depth = "standard",
    deepen: bool = False,
    index_dir: Path | None = None,
    searcher: Any = None,
    warn: Callable[[str], None] | None = None,
    on_graph: Callable[[ImportGraph], None] | None = None,
) -> ExploreResult:
    """Explore `path` (a directory or a file) with the tracks its depth calls for.

    `searcher` (a HybridSearcher on the same index) lets a long-lived caller, such as the
    MCP server, reuse its warm index and query embedder. `warn` hears of an index passed
    over and of a remembered walk option left off (`indexer.locate`, `indexer.trust`).
    `on_graph` is given the whole import graph (`import_graph`): at depth deep the one the
    imports track built, from the same walk and parse; at other depths built beside the
    tracks.
    """
    if focus and focus.strip():  # a blank focus means none, as before
        check_query(focus, "focus")
    ctx = context(path, focus=focus, depth=depth, deepen=deepen, index_dir=index_dir, warn=warn)
    root, scope = ctx.root, ctx.scope
    if searcher is not None:
        ctx.use_searcher(searcher)
    t0 = time.perf_counter()
    ctx.all_files()  # walk once, before the tracks share it
    walked = time.perf_counter() - t0

    makers: list[Callable[[], Track]] = [
        lambda: commands_track(ctx),
        lambda: tree_track(ctx),
        lambda: manifest_track(ctx),
    ]
    if depth in ("standard", "deep"):
        makers.append(lambda: patterns_track(ctx))
        makers.append(lambda: config_track(ctx))
    with ThreadPoolExecutor(max_workers=8) as pool:
        futures: list[Future[tuple[TrackFindings, dict[str, Any]]]] = []
        focus_future: Future[tuple[TrackFindings, dict[str, Any]]] | None = None
        if focus and depth != "shallow":
            focus_future = pool.submit(run_track, ctx, focus_track(ctx))
            futures.append(focus_future)
        if depth == "deep":
            makers.append(lambda: imports_track(ctx, keep_graph=on_graph is not None))
            makers.extend(lambda t=t: t for t in specialist_tracks(ctx))  # type: ignore[misc]

            def git_after_focus() -> tuple[TrackFindings, dict[str, Any]]:
                focus_files: list[str] = []
                if focus_future is not None:
                    found, _ = focus_future.result()
                    focus_files = list(
                        dict.fromkeys(c.path for f in found.findings for c in f.citations)
                    )
                return run_track(ctx, git_track(ctx, focus_files=focus_files[:5]))

            futures.append(pool.submit(git_after_focus))
        futures.extend(pool.submit(_run_made, ctx, m) for m in makers)
        graph_future = (
            pool.submit(import_graph, ctx) if on_graph is not None and depth != "deep" else None
        )
        done = [f.result() for f in futures]
        if on_graph is not None:
            kept = next((out["graph"] for _, out in done if "graph" in out), None)
            # The imports track keeps no graph when its scope has none to summarize.
            on_graph(
                kept
                if kept is not None
                else (graph_future.result() if graph_future else import_graph(ctx))
            )
    wall = time.perf_counter() - t0

    # A configuration track that found nothing has nothing to cite; its empty report says so.
    kept = [t for t, out in done if not ("config" in out and not t.findings)]
    tracks = sorted(kept, key=lambda t: _ORDER.get(t.track.name, 99))
    result = ExploreResult(
        path=scope or ".", root=str(root), depth=depth, focus=focus, tracks=tracks
    )
    for _, out in done:
        for name in (
            "commands",
            "instructions",
            "tree",
            "key_files",
            "patterns",
            "dependencies",
            "imports",
            "git",
            "config",
        ):
            if name in out:
                setattr(result, name, out[name])
    # The focus findings are the claims that passed the evidence gate, not all it made.
    result.focus_findings = next((t.findings for t in tracks if t.track.name == "focus"), [])
    result.synthesis = synthesize(result)
    result.summary = _summary(result, ctx)
    result.timings = {t.track.name: t.seconds for t in tracks}
    result.timings.update(
        walk=round(walked, 4), wall=round(wall, 4), sum=round(sum(t.seconds for t in tracks), 4)
    )
    return result


_ORDER = {
    "commands": -1,
    "tree": 0,
    "manifest": 1,
    "patterns": 2,
    "focus": 3,
    "imports": 4,
    "git": 5,
    "configuration": 6,
}
