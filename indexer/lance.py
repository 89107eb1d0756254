"""How dowse talks to LanceDB: importing it, quoting filter values, reading its failures.

Invariants:
- LanceDB's own failures become `IndexWriteError` (the disk refused a write) or
  `IndexCorrupt` (a file is missing or damaged) through `storage_error`; any other
  exception is a bug and keeps its traceback.
- `import lancedb` goes through `import_lancedb`, which leaves out the REST client a
  local index never calls, and LanceDB's Rust-side log stays quiet below errors.
- LanceDB cannot open a directory whose path holds an ASCII control character (a
  newline, a tab: its object-store paths refuse them, with a ValueError). Such an index
  location is refused up front, before anything is written, by `check_location`, in one
  line that names the way out (`--index-dir`); the files of such a root index fine.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dowse.errors import DowseError, IndexCorrupt, IndexWriteError, InvalidPath
from dowse.quote import one_line

__all__ = ["check_location", "import_lancedb", "lance_detail", "quote_list", "storage_error"]

os.environ.setdefault("LANCE_LOG", "error")  # keep Rust-side deprecation chatter off stderr


_NAMESPACE_CLIENT = "lance_namespace_urllib3_client"


def import_lancedb() -> Any:
    """`import lancedb`, without the second it spends on a REST client a local index
    never calls.

    lancedb imports lance_namespace, which needs only the models of the generated REST
    client package; that package's `__init__` also imports its ten API modules (about
    1.3 s of a 2 s import, which every CLI query pays). The package is registered
    without running its `__init__` (its submodules import as usual) and runs it on the
    first attribute anything asks of it, so nothing that does use it breaks.
    """
    if _NAMESPACE_CLIENT not in sys.modules:
        spec = importlib.util.find_spec(_NAMESPACE_CLIENT)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            loader = spec.loader

            def __getattr__(name: str) -> Any:
                delattr(module, "__getattr__")
                loader.exec_module(module)
                return getattr(module, name)

            setattr(module, "__getattr__", __getattr__)  # noqa: B010
            sys.modules[_NAMESPACE_CLIENT] = module
    import lancedb

    return lancedb


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_location(index_dir: Path) -> None:
    """InvalidPath when LanceDB cannot open an index at `index_dir`."""
    if _CONTROL.search(str(index_dir)):
        raise InvalidPath(
            f"cannot keep an index at {one_line(str(index_dir))}: its path holds a control "
            "character, which LanceDB refuses; put the index elsewhere with --index-dir"
        )


def quote_list(values: Iterable[str]) -> str:
    """A SQL list literal for a `col IN (...)` filter."""
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


_WRITE_ERRNOS = frozenset(
    {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
)
_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_RUST_LOCATION = re.compile(r",? /\S+\.rs:\d+:\d+")
_LANCE_PREFIX = re.compile(r"^(?:lance error: )?(?:LanceError\(\w+\): )?")


def lance_detail(exc: BaseException) -> str | None:
    """What a LanceDB storage failure says, without its Rust source locations; None for
    any other exception."""
    text = str(exc)
    if not isinstance(exc, (RuntimeError, OSError, ValueError)) or not (
        "lance error" in text
        or "LanceError" in text
        # A data file overwritten with other bytes: its magic number is not Lance's.
        or "does not appear to be a Lance file" in text
        or re.search(r"Table '\w+' was not found", text)
    ):
        return None
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return _LANCE_PREFIX.sub("", _RUST_LOCATION.sub("", first))[:200]


def storage_error(exc: BaseException, index_dir: Path | None = None) -> DowseError | None:
    """The one-line error for a failure inside LanceDB's storage layer, or None when `exc`
    is anything else (a bug, which keeps its traceback).

    A write the operating system refused (read-only, permission, disk full, file size
    limit) is an `IndexWriteError`; anything else (a missing, truncated or garbled file)
    an `IndexCorrupt` that names the fix.
    """
    if isinstance(exc, DowseError):
        return exc
    detail = lance_detail(exc)
    if detail is None:
        return None
    where = f" at {index_dir}" if index_dir is not None else ""
    code = _OS_ERROR.search(str(exc))
    if code and int(code.group(1)) in _WRITE_ERRNOS:
        return IndexWriteError(f"cannot write the index{where}: {os.strerror(int(code.group(1)))}")
    return IndexCorrupt(f"the index{where} is damaged ({detail}); run `dowse index --rebuild`")
