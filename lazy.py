"""Lazy re-exports for the packages' `__init__` files.

A package's public names live in its modules; importing the package must not import
them all, or any `from dowse.indexer.walk import ...` would pay for LanceDB, numpy and
detect-secrets (the `__init__` runs first). `exports` makes a package import a name's
module on first access (PEP 562) and keep the value, so `from dowse.indexer import
Store` and `dowse.indexer.Store` work as they did when the package imported it eagerly.

Invariants:
- Every name in a package's `__all__` is in its table, so `getattr(package, name)` and
  `from package import *` always resolve (tests/test_exported_members.py).
- A name outside the table raises AttributeError, which `from package import submodule`
  relies on to fall back to importing the submodule.
- A public name spelled like a submodule (`dowse.retrieval.ask`, the function, from the
  module `ask`) stays the public name once that submodule is imported, as it did before.

The same holds for the libraries dowse imports whose import does work dowse never uses
(LanceDB's REST client, the MCP SDK's client): `unrun_package` registers a package
without running its `__init__` until something asks it for a name, and inside
`deferred_models` the pydantic models a library defines build their validators on first
use. `leave_out_pydantic_plugins` spares a command's process pydantic's search for
plugins.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

__all__ = ["deferred_models", "exports", "leave_out_pydantic_plugins", "unrun_package"]


class _Package(ModuleType):
    """A package whose public names (`_exports`: name -> module) are imported on use."""

    _exports: Mapping[str, str]

    def __getattr__(self, name: str) -> Any:
        module = self.__dict__["_exports"].get(name)
        if module is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        ModuleType.__setattr__(self, name, value)  # the next access skips this hook
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        # The import system binds a submodule to its package's attribute once it has
        # loaded; a public name of the same spelling must win over it.
        if (
            isinstance(value, ModuleType)
            and value.__name__ == f"{self.__name__}.{name}"
            and name in self.__dict__["_exports"]
        ):
            return
        ModuleType.__setattr__(self, name, value)

    def __dir__(self) -> list[str]:
        return sorted({*self.__dict__, *self.__dict__["_exports"]})


def exports(package: str, names: Mapping[str, str]) -> None:
    """Make the public `names` of `package` (name -> the module defining it) lazy."""
    module = sys.modules[package]
    module.__dict__["_exports"] = dict(names)
    module.__class__ = _Package


def unrun_package(name: str) -> None:
    """Put package `name` in `sys.modules` without running its `__init__`, which runs on
    the first attribute anything asks of the package (its submodules import as usual)."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def __getattr__(attr: str) -> Any:
        delattr(module, "__getattr__")
        loader.exec_module(module)
        return getattr(module, attr)

    setattr(module, "__getattr__", __getattr__)  # noqa: B010
    sys.modules[name] = module


@contextlib.contextmanager
def deferred_models() -> Iterator[None]:
    """Pydantic models defined inside build their validators on first use
    (`defer_build`), not as their class is made."""
    from pydantic import BaseModel

    config: dict[str, Any] = BaseModel.model_config  # type: ignore[assignment]
    before = dict(config)
    config["defer_build"] = True
    try:
        yield
    finally:
        config.clear()
        config.update(before)


_PLUGIN_LOADER = "pydantic.plugin._loader"


def leave_out_pydantic_plugins() -> None:
    """Build pydantic's validators without plugins from now on, in this process (the
    CLI's edge), as `PYDANTIC_DISABLE_PLUGINS=__all__` does, and without importing what
    looks for them.

    At the first validator a process builds, pydantic imports its plugin loader, which
    imports `importlib.metadata` and reads every installed distribution's entry points
    for plugins (hooks that observe validations, such as logfire's): 30-40 ms of a cold
    query's main thread, where the setting alone skips only the reading. A command's
    records are its own; a value of the setting the user gave is left to pydantic, and
    a library caller's process is left as it is.
    """
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ or _PLUGIN_LOADER in sys.modules:
        return
    loader = ModuleType(_PLUGIN_LOADER)
    loader.__dict__["get_plugins"] = _no_plugins
    sys.modules[_PLUGIN_LOADER] = loader


def _no_plugins() -> tuple[()]:
    return ()
