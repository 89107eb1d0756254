"""Indexing: walk a repository, parse it with tree-sitter, chunk, embed, store in LanceDB."""

from dowse.errors import DowseError
from dowse.indexer.build import IndexConfig, IndexStats, build_index, default_index_dir
from dowse.indexer.records import Chunk, File, Import, SkippedFile, Symbol
from dowse.indexer.store import Store

__all__ = [
    "Chunk",
    "DowseError",
    "File",
    "Import",
    "IndexConfig",
    "IndexStats",
    "SkippedFile",
    "Store",
    "Symbol",
    "build_index",
    "default_index_dir",
]
