"""The errors dowse raises on purpose.

Every error a user can cause derives from `DowseError`; `cli.py` converts them into a
one-line `Error: ...` and exit code 1 at a single seam. Anything else is a bug.

    DowseError
    ├── IndexNotFound          no index at the location asked for
    ├── IndexVersionMismatch   index written by another format version or model
    ├── IndexCorrupt           index files missing or unreadable
    ├── IndexLocked            another process holds the writer lock
    ├── IndexWriteError        the index directory cannot be written (read-only, disk full)
    ├── InvalidPath            a path that does not exist or lies outside the root
    ├── UnsupportedLanguage    no grammar for the language asked for
    ├── InvalidQuery           an empty query, or a filter naming no kind of symbol
    ├── BudgetTooSmall         a token budget that cannot hold even an empty answer
    ├── EmbedderError          the embedding model cannot be loaded
    └── EvalError              a dataset, clone or commit an evaluation cannot use
"""

from __future__ import annotations

__all__ = [
    "BudgetTooSmall",
    "DowseError",
    "EmbedderError",
    "EvalError",
    "IndexCorrupt",
    "IndexLocked",
    "IndexNotFound",
    "IndexVersionMismatch",
    "IndexWriteError",
    "InvalidPath",
    "InvalidQuery",
    "UnsupportedLanguage",
]


class DowseError(Exception):
    """Base class for errors a user can cause or fix."""


class IndexNotFound(DowseError):
    pass


class IndexVersionMismatch(DowseError):
    pass


class IndexCorrupt(DowseError):
    pass


class IndexLocked(DowseError):
    pass


class IndexWriteError(DowseError):
    pass


class InvalidPath(DowseError):
    pass


class InvalidQuery(DowseError):
    pass


class BudgetTooSmall(DowseError):
    pass


class UnsupportedLanguage(DowseError):
    pass


class EmbedderError(DowseError):
    pass


class EvalError(DowseError):
    """A dataset, clone or commit the evaluation cannot use."""
