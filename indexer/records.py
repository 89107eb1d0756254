"""Records passed between the indexing stages and stored in the index.

Invariants: paths are POSIX, relative to the indexed root; line numbers are 1-based and
inclusive; content hashes carry their algorithm as a prefix (``b2:`` = blake2b-128).

The records build their validators on first use (`defer_build`): a query imports this
module for the names and makes none of them.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Chunk",
    "File",
    "Import",
    "IndexStats",
    "Reference",
    "ReferenceKind",
    "SkippedFile",
    "Symbol",
    "SymbolKind",
    "content_hash",
]

SymbolKind = Literal[
    "function",
    "method",
    "class",
    "interface",
    "struct",
    "enum",
    "trait",
    "module",
    "type",
    "constant",
    "variable",
    "macro",
    "field",
    "constructor",
    "heading",
]

ReferenceKind = Literal["call", "type", "import", "other", "macro"]
"""What a reference does with the name: calls it (or constructs it), names it as a type
(annotation, base class), imports it, passes it as a value, or invokes it as a macro
(Rust's `name!(...)`, which means a `macro_rules!` definition, never a function)."""


def content_hash(data: bytes) -> str:
    """A short, prefixed content hash: the identity of a file or chunk text."""
    return "b2:" + hashlib.blake2b(data, digest_size=16).hexdigest()


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class File(_Record):
    path: str = Field(description="POSIX path relative to the indexed root")
    language: str = Field(description="language name, or 'text' for plain text chunks")
    size: int = Field(ge=0, description="size in bytes")
    hash: str = Field(description="content hash, e.g. 'b2:…'")
    mtime_ns: int = Field(description="modification time in nanoseconds")
    parser: Literal["tree-sitter", "text"] = Field(
        default="tree-sitter", description="how the file was split into records"
    )
    note: str = Field(default="", description="why a code file fell back to text, if it did")


class SkippedFile(_Record):
    path: str
    reason: str = Field(description="short reason: 'gitignored', 'binary', 'secret: …', …")


class Symbol(_Record):
    id: str = Field(description="stable id: path#qualified_name@start_line")
    path: str
    name: str
    qualified_name: str = Field(description="name with its enclosing symbols, dot-separated")
    kind: SymbolKind
    signature: str = Field(
        default="",
        description="the declaration line(s) from the name's keyword on, body elided",
    )
    docstring: str = Field(default="")
    decorators: list[str] = Field(
        default_factory=list,
        description="the decorators, annotations and attributes in front of it, as written",
    )
    start_line: int = Field(
        ge=1, description="its first line: the first decorator or touching doc comment, if any"
    )
    end_line: int = Field(ge=1)
    name_line: int = Field(
        ge=1, description="the line its signature starts on, past decorators and doc comments"
    )
    parent: str | None = Field(default=None, description="qualified name of the enclosing symbol")
    language: str = ""


class Chunk(_Record):
    id: str = Field(description="stable id: path:start_line-end_line")
    path: str
    language: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    symbol: str | None = Field(
        default=None, description="qualified name of the innermost symbol enclosing the chunk"
    )
    text: str = Field(description="the source lines, sliced from bytes then decoded")
    header: str = Field(default="", description="short context line prepended when embedding")

    @property
    def embed_text(self) -> str:
        return f"{self.header}\n{self.text}" if self.header else self.text


class Import(_Record):
    path: str = Field(description="the importing file")
    module: str = Field(description="the imported module as written")
    names: list[str] = Field(default_factory=list, description="imported names, if any")
    line: int = Field(ge=1)
    resolved: str | None = Field(
        default=None, description="the indexed file the import resolves to, when it does"
    )


class Reference(_Record):
    path: str = Field(description="the file the reference is in")
    line: int = Field(ge=1)
    name: str = Field(
        description="the name referenced, as written (its last part; an import alias is "
        "replaced by the name it stands for)"
    )
    kind: ReferenceKind
    qualifier: str = Field(
        default="", description="what the name is reached through: `store` in `store.save()`"
    )
    from_id: str | None = Field(
        default=None,
        description="id of the innermost definition the reference is in, None at file level",
    )
    from_name: str = Field(default="", description="qualified name of that definition")


class IndexStats(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    root: str
    index_dir: str
    files: int = Field(description="files in the snapshot")
    parsed: int = Field(description="files read and parsed in this run")
    unchanged: int
    deleted: int
    renamed: int
    skipped: int
    symbols: int
    chunks: int
    embedded: int = Field(description="texts (chunks, file summaries) embedded in this run")
    reused_vectors: int = Field(description="chunk vectors taken from the cache")
    vectors_pending: int = Field(description="chunks and file summaries still without a vector")
    seconds: dict[str, float]
    notes: list[str] = Field(
        default_factory=list,
        description="what the run found and mended besides: a damaged index, or one built "
        "for another root, that it built anew",
    )
