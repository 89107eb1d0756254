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
    ├── EngineError            the index engine asked for is not installed, cannot be
    │                          reached, or failed (`dowse index --engine ray`)
    ├── EvalError              a dataset, clone or commit an evaluation cannot use
    ├── GitError               git is missing, failed, took too long, or cannot be made safe
    ├── UnknownRecord          `dowse schema` asked for a record dowse does not have
    └── ConfigError            a config file or DOWSE_* variable dowse cannot use, or that
                               sets what only the user may (settings.py)
"""

from __future__ import annotations

__all__ = [
    "BudgetTooSmall",
    "ConfigError",
    "DowseError",
    "EmbedderError",
    "EngineError",
    "EvalError",
    "GitError",
    "IndexCorrupt",
    "IndexLocked",
    "IndexNotFound",
    "IndexVersionMismatch",
    "IndexWriteError",
    "InvalidPath",
    "InvalidQuery",
    "UnknownRecord",
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


class EngineError(DowseError):
    """The index engine asked for is not installed, cannot be reached, or failed."""


class EvalError(DowseError):
    """A dataset, clone or commit the evaluation cannot use."""


class GitError(DowseError):
    """git is missing, exited non-zero (`returncode`), took too long, or was asked to read
    a repository whose config it cannot be stopped from executing."""

    def __init__(self, message: str, *, returncode: int | None = None) -> None:
        super().__init__(message)
        self.returncode = returncode


class UnknownRecord(DowseError):
    pass


class ConfigError(DowseError):
    pass
