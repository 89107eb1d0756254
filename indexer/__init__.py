"""Indexing: walk a repository, parse it with tree-sitter, chunk, embed, store in LanceDB.

The public names are imported on first use (`dowse.lazy`): importing one submodule, say
`dowse.indexer.walk`, must not import LanceDB and every other stage with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dowse.lazy import exports

if TYPE_CHECKING:
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

exports(
    __name__,
    {
        "DowseError": "dowse.errors",
        **dict.fromkeys(
            ["IndexConfig", "IndexStats", "build_index", "default_index_dir"],
            "dowse.indexer.build",
        ),
        **dict.fromkeys(
            ["Chunk", "File", "Import", "SkippedFile", "Symbol"], "dowse.indexer.records"
        ),
        "Store": "dowse.indexer.store",
    },
)
