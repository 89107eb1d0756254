"""`dowse status`: what an index holds, and how far the tree has moved since.

The records build their validators on first use (`defer_build`): every query imports them
and only `dowse status` makes them.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from dowse.indexer.options import changed_since, walk_config_of
from dowse.indexer.records import SkippedFile
from dowse.indexer.store import Store
from dowse.quote import one_line
from dowse.setting_record import Setting

__all__ = ["LanguageCount", "StatusReport", "index_status"]


class LanguageCount(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    language: str
    files: int
    symbols: int
    chunks: int


class StatusReport(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    root: str
    index_dir: str
    model: str
    dim: int
    format: int
    embedded: bool = Field(description="every vector the embed scope asks for exists")
    no_embed: bool
    embed_chunks: bool = Field(description="chunks have vectors (not only file summaries)")
    updated: float
    files: int
    symbols: int
    chunks: int
    vectors: int
    file_vectors: int = Field(description="file summaries with a vector")
    definition_vectors: int = Field(description="definitions with a vector")
    commits: int = Field(description="past commits kept as search evidence")
    history: str = Field(description="the commit their history was read at ('' none)")
    index_bytes: int
    languages: list[LanguageCount]
    changed: dict[str, int] = Field(description="modified/added/deleted since the last index")
    skipped_count: int
    skipped: list[SkippedFile] = Field(default_factory=list)
    settings: list[Setting] = Field(
        default_factory=list,
        description="each setting's effective value and where it came from (dowse status)",
    )

    def render(self, *, with_skipped: bool = False) -> str:
        import datetime as dt

        when = dt.datetime.fromtimestamp(self.updated).strftime("%Y-%m-%d %H:%M:%S")
        chunks = (
            f"{self.vectors}/{self.chunks} chunks"
            if self.embed_chunks
            else "no chunks (--embed files)"
        )
        vec = (
            "off (--embed none)"
            if self.no_embed
            else f"{self.file_vectors}/{self.files} files, {self.definition_vectors} "
            f"definitions, {chunks}" + ("" if self.embedded else " (incomplete)")
        )
        lines = [
            f"root       {one_line(str(self.root))}",
            f"index      {one_line(str(self.index_dir))} ({self.index_bytes / 1e6:.1f} MB, "
            f"format {self.format}, updated {when})",
            f"model      {self.model} ({self.dim}-d), vectors {vec}",
            f"contents   {self.files} files, {self.symbols} symbols, {self.chunks} chunks",
            "history    "
            + (
                f"{self.commits} commits, read at {self.history[:12]}"
                if self.history
                else "none (no git repository, or --no-history)"
            ),
            "changed    "
            + ", ".join(f"{v} {k}" for k, v in self.changed.items())
            + ("" if not any(self.changed.values()) else "  (run `dowse index` to update)"),
            f"skipped    {self.skipped_count} files"
            + ("" if with_skipped or not self.skipped_count else "  (--skipped lists them)"),
            "",
            f"{'language':<12}{'files':>8}{'symbols':>10}{'chunks':>9}",
        ]
        lines += [
            f"{c.language:<12}{c.files:>8}{c.symbols:>10}{c.chunks:>9}" for c in self.languages
        ]
        if self.settings:
            lines += ["", f"{'setting':<17}{'value':<24}from"]
            for s in self.settings:
                value = "-" if s.value is None else s.value
                if isinstance(value, bool):
                    value = str(value).lower()
                if isinstance(value, list):
                    value = ", ".join(map(str, value)) or "-"
                lines.append(f"{s.name:<17}{str(value):<24}{s.source}")
        if with_skipped and self.skipped:
            lines += ["", "skipped files:"]
            lines += [f"  {one_line(s.path)}  ({one_line(s.reason)})" for s in self.skipped]
        return "\n".join(lines)


def index_status(index_dir: Path, *, with_skipped: bool = False) -> StatusReport:
    """What the index at `index_dir` holds. The whole snapshot is read first, so a damaged
    table file is reported (IndexCorrupt) here rather than by the next query."""
    store = Store.open(index_dir)
    store.verify()
    files = store.rows("files", ["path", "language", "n_symbols", "n_chunks"])
    by_lang: dict[str, Counter[str]] = {}
    for f in files:
        c = by_lang.setdefault(f["language"], Counter())
        c["files"] += 1
        c["symbols"] += f["n_symbols"]
        c["chunks"] += f["n_chunks"]
    languages = sorted(
        (
            LanguageCount(language=lang, files=c["files"], symbols=c["symbols"], chunks=c["chunks"])
            for lang, c in by_lang.items()
        ),
        key=lambda c: (-c.files, c.language),
    )
    skipped = [SkippedFile(**r) for r in store.rows("skipped", ["path", "reason"])]
    root = Path(store.manifest.root)
    walk_config = walk_config_of(store.manifest)
    changed = changed_since(store, root, walk_config) if root.is_dir() else {"root missing": 1}
    m = store.manifest
    summaries = store.count("file_vectors", "id = path")
    return StatusReport(
        root=m.root,
        index_dir=str(index_dir),
        model=m.model,
        dim=m.dim,
        format=m.format,
        embedded=m.embedded,
        no_embed=m.no_embed,
        embed_chunks=m.embed_chunks,
        updated=m.updated,
        files=len(files),
        symbols=store.count("symbols"),
        chunks=store.count("chunks"),
        vectors=store.count("vectors"),
        file_vectors=summaries,
        definition_vectors=store.count("file_vectors") - summaries,
        commits=store.count("commits") if store.has_table("commits") else 0,
        history=m.history,
        index_bytes=store.size_bytes(),
        languages=languages,
        changed=changed,
        skipped_count=len(skipped),
        skipped=sorted(skipped, key=lambda s: s.path) if with_skipped else [],
    )
