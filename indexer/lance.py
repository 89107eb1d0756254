"""How dowse talks to LanceDB: importing it, quoting filter values, reading its failures.

Invariants:
- LanceDB's own failures become `IndexWriteError` (the disk refused a write) or
  `IndexCorrupt` (a file is missing or damaged) through `storage_error`; any other
  exception is a bug and keeps its traceback.
- `import lancedb` goes through `import_lancedb`, which leaves out the REST client a
  local index never calls (its API modules, and the request and response models
  `lance_namespace` re-exports until one is asked for) and the `@override` checks
  lancedb skips from Python 3.12 on; LanceDB's Rust-side log stays quiet below errors.
- In the `dowse` command's own process (`leave_out_pandas`), LanceDB and pyarrow are
  imported as if pandas were not installed: nothing dowse hands them is a DataFrame.
  A library caller's process keeps their pandas integration.
- LanceDB cannot open a directory whose path holds an ASCII control character (a
  newline, a tab: its object-store paths refuse them, with a ValueError). Such an index
  location is refused up front, before anything is written, by `check_location`, in one
  line that names the way out (`--index-dir`); the files of such a root index fine.
"""

from __future__ import annotations
import __future__

import ast
import contextlib
import errno
import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from dowse.errors import DowseError, IndexCorrupt, IndexWriteError, InvalidPath
from dowse.lazy import deferred_models, unrun_package
from dowse.quote import one_line

__all__ = [
    "LANCE_ERRORS",
    "check_location",
    "import_lancedb",
    "import_pyarrow",
    "lance_detail",
    "quote_list",
    "storage_error",
]

os.environ.setdefault("LANCE_LOG", "error")  # keep Rust-side deprecation chatter off stderr


_NAMESPACE_CLIENT = "lance_namespace_urllib3_client"
_WITHOUT_PANDAS = {"on": False}


class _NoPandas:
    """A finder that says pandas is not installed (Cython's imports, pyarrow's, take a
    None in sys.modules for a module). A finder is anything with `find_spec`: not an
    `importlib.abc.MetaPathFinder`, whose import (importlib.resources, tempfile) every
    command would pay at its start (`dowse.cli.main`)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


_NO_PANDAS = _NoPandas()


def leave_out_pandas() -> None:
    """Import LanceDB without pandas from now on, in this process (the CLI's edge).

    pyarrow's pandas shim imports pandas when its dataset module loads (about 0.2 s of
    CPU, a fifth of a cold `dowse ask`), and LanceDB checks once whether pandas is there.
    Both are asked while pandas cannot be imported, so both settle on "no pandas" for
    the process: a later `to_pandas()` still imports it, but a DataFrame handed to
    `pa.table` or a LanceDB write would not be recognised, which is why a library
    caller's process is left as it is.
    """
    _WITHOUT_PANDAS["on"] = True


def import_lancedb() -> Any:
    """`import lancedb`, without the work its import does for what a local index never
    uses (`lancedb` itself is imported once; later calls return it).

    - The REST client: lancedb imports lance_namespace, which needs only the models of
      the generated REST client package; that package's `__init__` also imports its ten
      API modules (about 1.3 s of a 2 s import, which every CLI query pays). The package
      is registered without running its `__init__` (its submodules import as usual) and
      runs it on the first attribute anything asks of it, so nothing that uses it breaks.
    - The `@override` checks: below Python 3.12 lancedb marks its methods with the
      `overrides` package's decorator, which disassembles each class body's bytecode
      and compares signatures as the class is made (about a quarter of the import's
      CPU); from 3.12 on lancedb uses `typing.override`, a marker. While lancedb
      imports, the package's decorator is that marker too.
    - pandas, in the CLI's process only (`leave_out_pandas`).
    """
    module = sys.modules.get("lancedb")
    if module is not None and "connect" in module.__dict__:
        return module
    unrun_package(_NAMESPACE_CLIENT)
    with _pandas_left_out():
        # lancedb's import defines some 170 pydantic models, the REST client's request
        # and response records among them, which a local index never makes.
        with _override_marker(), deferred_models():
            _lazy_namespace()
            import lancedb

            # A reader registered the package without running its `__init__`
            # (`lance_read`): it runs here, in the same conditions.
            lancedb.connect  # noqa: B018
        import_pyarrow()
    return lancedb


def import_pyarrow() -> Any:
    """`import pyarrow`, which in the CLI's process (`leave_out_pandas`) settles now on
    "no pandas": its Python shim tries once, its C++ layer once per process (on the first
    conversion to NumPy); either would otherwise import pandas later, on first use."""
    with _pandas_left_out() as hidden:
        import pyarrow.lib

        if hidden:
            pyarrow.lib._pandas_api.have_pandas  # noqa: B018  # its one try, now
            pyarrow.lib.array([0.0]).to_numpy(zero_copy_only=False)
    return sys.modules["pyarrow"]


@contextlib.contextmanager
def _pandas_left_out() -> Iterator[bool]:
    """pandas cannot be imported inside, in the CLI's process (whether it is left out)."""
    hidden = _WITHOUT_PANDAS["on"] and "pandas" not in sys.modules
    added = hidden and _NO_PANDAS not in sys.meta_path
    if added:
        sys.meta_path.insert(0, _NO_PANDAS)
    try:
        yield hidden
    finally:
        if added:
            sys.meta_path.remove(_NO_PANDAS)


_NAMESPACE = "lance_namespace"
_MODELS = f"{_NAMESPACE_CLIENT}.models"
_MODEL_LINE = re.compile(rf"^from {re.escape(_MODELS)}\.(\w+) import (\w+)$", re.MULTILINE)


def _lazy_namespace() -> None:
    """Import `lance_namespace` with the REST models it re-exports bound on first use.

    Its `__init__` imports ~110 of the REST client's pydantic models by name (for
    `LanceNamespace`'s annotations and as re-exports), and the models package's own
    `__init__` all 146 of them: about a tenth of a cold `dowse ask`, for records a local
    index never makes. Here the module runs from its own source with that one import
    statement (and the aliases of its names) taken out and its annotations left
    unevaluated (`from __future__ import annotations`); a module `__getattr__` imports a
    model's own submodule when a name is first asked for (lancedb asks for a dozen), and
    the models package runs its `__init__` only when asked for a name itself.

    Any other shape of source (another version, a model name used at import time or in
    a function's body) is imported as it is, as is the module if running it fails.
    """
    if _NAMESPACE in sys.modules:
        return
    try:
        prepared = _namespace_without_models()
        models = _model_modules() if prepared is not None else {}
    except (ImportError, OSError, SyntaxError, UnicodeDecodeError, ValueError):
        prepared = None
    if prepared is None:
        return
    spec, code, lazy = prepared
    unrun_package(_MODELS)
    module = importlib.util.module_from_spec(spec)

    def __getattr__(attr: str) -> Any:
        model = lazy.get(attr)
        if model is None:
            raise AttributeError(f"module {_NAMESPACE!r} has no attribute {attr!r}")
        home = models.get(model)
        source = importlib.import_module(f"{_MODELS}.{home}" if home else _MODELS)
        value = getattr(source, model)
        setattr(module, attr, value)
        return value

    setattr(module, "__getattr__", __getattr__)  # noqa: B010
    sys.modules[_NAMESPACE] = module
    try:
        exec(code, module.__dict__)  # noqa: S102  # the installed module's own source
    except Exception:
        sys.modules.pop(_NAMESPACE, None)  # `import lancedb` imports it as it is


def _model_modules() -> dict[str, str]:
    """Each REST model's name -> the submodule of the models package that defines it,
    read from that package's `__init__` (one `from .x import X` line each)."""
    spec = importlib.util.find_spec(_MODELS)
    if spec is None or spec.origin is None:
        return {}
    text = Path(spec.origin).read_text(encoding="utf-8")
    return {name: home for home, name in _MODEL_LINE.findall(text)}


def _namespace_without_models() -> tuple[Any, Any, dict[str, str]] | None:
    """(spec, code object, {name: model}) for `lance_namespace` without its import of the
    models, or None when its source is not of the shape this expects."""
    spec = importlib.util.find_spec(_NAMESPACE)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    tree = ast.parse(Path(spec.origin).read_bytes(), spec.origin)
    lazy: dict[str, str] = {}
    kept: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == _MODELS and not node.level:
            for alias in node.names:
                if alias.name == "*":
                    return None
                lazy[alias.asname or alias.name] = alias.name
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Name)
            and node.value.id in lazy
        ):
            lazy[node.targets[0].id] = lazy[node.value.id]
        else:
            kept.append(node)
    if not lazy or _uses_at_run_time(kept, set(lazy)):
        return None
    tree.body = kept
    flags = __future__.annotations.compiler_flag
    return spec, compile(tree, spec.origin, "exec", flags=flags, dont_inherit=True), lazy


def _uses_at_run_time(body: list[Any], names: set[str]) -> bool:
    """Whether `body` binds any of `names`, or reads one anywhere but in an annotation
    (which `from __future__ import annotations` leaves a string), or defines the
    module's own `__getattr__`."""
    import ast

    stack: list[Any] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and node.id in names:
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name in names or node.name == "__getattr__":
                return True
        if isinstance(node, ast.alias) and (node.asname or node.name) in names:
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # Its decorators, defaults and body; not its arguments' or return annotations.
            args = node.args
            stack.extend(node.decorator_list)
            stack.extend(d for d in [*args.defaults, *args.kw_defaults] if d is not None)
            stack.extend(node.body)
            continue
        if isinstance(node, ast.AnnAssign):
            stack.extend(n for n in (node.target, node.value) if n is not None)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_location(index_dir: Path) -> None:
    """InvalidPath when LanceDB cannot open an index at `index_dir`."""
    if _CONTROL.search(str(index_dir)):
        raise InvalidPath(
            f"cannot keep an index at {one_line(str(index_dir))}: its path holds a control "
            "character, which LanceDB refuses; put the index elsewhere with --index-dir"
        )


def _marker(method: Any = None, **_: Any) -> Any:
    """`typing.override` (3.12): marks `method` as an override, checks nothing."""
    if method is None:
        return _marker
    with contextlib.suppress(AttributeError, TypeError):
        method.__override__ = True
    return method


@contextlib.contextmanager
def _override_marker() -> Iterator[None]:
    """`overrides.override` is `_marker` inside (below Python 3.12, where lancedb uses it)."""
    overrides: Any = None
    if sys.version_info < (3, 12):
        with contextlib.suppress(ImportError):
            overrides = importlib.import_module("overrides")
    if overrides is None:
        yield
        return
    real = overrides.override
    overrides.override = _marker
    try:
        yield
    finally:
        overrides.override = real


def quote_list(values: Iterable[str]) -> str:
    """A SQL list literal for a `col IN (...)` filter."""
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


_WRITE_ERRNOS = frozenset(
    {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
)
_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_RUST_LOCATION = re.compile(r",? /\S+\.rs:\d+:\d+")
_LANCE_PREFIX = re.compile(r"^(?:lance error: )?(?:LanceError\(\w+\): )?")


LANCE_ERRORS: tuple[type[Exception], ...] = (RuntimeError, OSError, ValueError)
"""The exception types a LanceDB storage failure arrives as (its Rust errors, and Python
I/O errors under it): what a handler around a LanceDB call catches. Which of them is a
storage failure, and which a bug, `lance_detail` tells by the text."""


def lance_detail(exc: BaseException) -> str | None:
    """What a LanceDB storage failure says, without its Rust source locations; None for
    any other exception."""
    text = str(exc)
    if not isinstance(exc, LANCE_ERRORS) or not (
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
