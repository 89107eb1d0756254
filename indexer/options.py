"""What an index remembers of the runs that made it, and how far the tree has moved since.

The options a run reuses (the walk's, the embed scope, the history), read from the
manifest of `root`'s own index (`indexer.locate`), and the stat-only comparison of the
tree with the snapshot that `dowse status` and every refresh before a query make. Kept
apart from `indexer.build` so that a process that only asks whether anything changed
imports none of the indexing stages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dowse.errors import DowseError
from dowse.indexer.layout import INDEX_DIR_NAME
from dowse.indexer.locate import is_index_of, names_root, own_manifest
from dowse.indexer.store import Manifest, Store
from dowse.indexer.trust import trusted_walk, widening
from dowse.indexer.walk import WalkConfig, walk
from dowse.languages import language_for

__all__ = [
    "DEFAULT_EMBED_SCOPE",
    "EMBED_SCOPES",
    "changed_since",
    "default_index_dir",
    "embed_flags",
    "remembered_options",
    "resolve_embed_scope",
    "resolve_history",
    "resolve_walk_config",
    "walk_config_from",
    "walk_config_of",
    "walk_record",
]

EMBED_SCOPES = ("all", "files", "none")
"""What gets a vector: chunks too, file summaries and definitions, nothing."""
DEFAULT_EMBED_SCOPE = "files"
"""File summaries and definitions: on the dev split summaries alone put as many gold
files in the top 5 as chunk vectors do (benchmarks/RESULTS-eval.md section 10),
definitions more (sections 14 and 15), and django embeds in under two minutes instead of
fifteen."""


def default_index_dir(root: Path) -> Path:
    return root / INDEX_DIR_NAME


def walk_config_from(stored: dict[str, Any], **overrides: Any) -> WalkConfig:
    """A WalkConfig from the options a manifest recorded, with the given ones (not None)
    on top; keys this version does not know are ignored."""
    merged = {**stored, **{k: v for k, v in overrides.items() if v is not None}}
    if "exclude" in merged:
        merged["exclude"] = tuple(merged["exclude"])
    known = {f.name for f in dataclasses.fields(WalkConfig)}
    return WalkConfig(**{k: v for k, v in merged.items() if k in known})


def walk_config_of(manifest: Manifest) -> WalkConfig:
    """The walk options `manifest` remembers: those that widen the walk only when this
    machine signed them (`indexer.trust`)."""
    return walk_config_from(trusted_walk(manifest.root, manifest.walk, manifest.signature)[0])


def walk_record(config: WalkConfig) -> dict[str, Any]:
    """The walk options as the manifest stores them (JSON: lists, not tuples), so that
    options read back from disk compare equal to the same options in memory."""
    return {**dataclasses.asdict(config), "exclude": list(config.exclude)}


def resolve_walk_config(
    index_dir: Path,
    *,
    root: Path,
    warn: Callable[[str], None] | None = None,
    **overrides: Any,
) -> WalkConfig:
    """The walk options of the index's last run, with the given ones (not None) on top, so
    `dowse index` after `dowse index --exclude X` keeps excluding X.

    Only this user's index of `root` remembers anything (`indexer.locate.is_index_of`):
    a widening option that another index of this root names is left out and named
    through `warn`, unless given again."""
    try:
        manifest = Store.read_manifest(index_dir)
    except DowseError:  # a damaged manifest remembers nothing a run could use
        return walk_config_from({}, **overrides)
    if is_index_of(manifest, root):
        return walk_config_from(dict(manifest.walk), **overrides)
    # Not this user's index of `root` (another root's, shipped, edited, from before
    # signing): nothing it remembers is reused, and a widening option it names for this
    # root is asked for again.
    dropped = widening(manifest.walk) if names_root(manifest, root) else {}
    flags = [
        _FLAGS[name].format(value)
        for name, value in dropped.items()
        if overrides.get(name) is None and name in _FLAGS
    ]
    if flags and warn is not None:
        warn(
            f"the index at {index_dir} remembers {' '.join(flags)}, but this machine's "
            "dowse did not sign it (an index from elsewhere, or from before dowse signed "
            f"its options), so it is off: pass {' '.join(flags)} again to keep it"
        )
    return walk_config_from({}, **overrides)


_FLAGS = {"include_secrets": "--include-secrets", "max_file_bytes": "--max-file-size {}"}
"""How `dowse index` spells each widening walk option, for the message asking for it."""


def _remembered(index_dir: Path, root: Path | None) -> Manifest | None:
    if root is not None:
        return own_manifest(index_dir, root)
    try:
        return Store.read_manifest(index_dir)
    except DowseError:
        return None


def embed_flags(scope: str) -> tuple[bool, bool]:
    """(embed, embed_chunks) of an EMBED_SCOPES value, as IndexConfig takes them."""
    if scope not in EMBED_SCOPES:
        raise ValueError(f"unknown embed scope {scope!r}")
    return scope != "none", scope == "all"


def resolve_embed_scope(
    index_dir: Path, requested: str | None, *, root: Path | None = None
) -> tuple[bool, bool]:
    """(embed, embed_chunks) for a run: the requested scope, else the one the index was
    built with (a `--embed all` index stays one), else DEFAULT_EMBED_SCOPE. With `root`,
    only an index of `root` counts."""
    scope = requested
    if scope is None:
        m = _remembered(index_dir, root)
        if m is None:
            scope = DEFAULT_EMBED_SCOPE
        else:
            scope = "none" if m.no_embed else "all" if m.embed_chunks else "files"
    return embed_flags(scope)


def resolve_history(index_dir: Path, requested: bool | None, *, root: Path | None = None) -> bool:
    """Whether to keep the commits table: as asked, else as the index was built. With
    `root`, only an index of `root` counts."""
    if requested is not None:
        return requested
    m = _remembered(index_dir, root)
    return True if m is None else not m.no_history


def remembered_options(index_dir: Path, root: Path) -> dict[str, Any]:
    """What a run without flags would reuse from `root`'s index, named as the command line
    names them (`exclude`, `max_file_size`, `include_secrets`, `embed`, `history`); empty
    without such an index. A widening option counts only when signed (`indexer.trust`)."""
    manifest = own_manifest(index_dir, root)
    if manifest is None:
        return {}
    walk = walk_config_of(manifest)
    return {
        "exclude": list(walk.exclude),
        "max_file_size": walk.max_file_bytes,
        "include_secrets": walk.include_secrets,
        "embed": "none" if manifest.no_embed else "all" if manifest.embed_chunks else "files",
        "history": not manifest.no_history,
    }


def changed_since(store: Store, root: Path, walk_config: WalkConfig) -> dict[str, int]:
    """How the tree differs from the snapshot, by stat only (no file is read)."""
    result = walk(root, walk_config, index_dir=store.index_dir)
    old = {
        r["path"]: (r["size"], r["mtime_ns"])
        for r in store.rows("files", ["path", "size", "mtime_ns"])
    }
    # A file the last run read and left out (binary or secret content) is not new: it
    # would count as added on every check.
    left_out = {r["path"] for r in store.rows("skipped", ["path"])}
    seen = {e.path for e in result.files}
    modified = sum(1 for e in result.files if e.path in old and old[e.path] != (e.size, e.mtime_ns))
    added = sum(
        1
        for e in result.files
        if e.path not in old and e.path not in left_out and language_for(e.path)
    )
    deleted = sum(1 for p in old if p not in seen)
    return {"modified": modified, "added": added, "deleted": deleted}
