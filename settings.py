"""Settings: the options users set again and again, each with where its value came from.

A setting takes its value from the first of these that sets it:

    the command line              --budget 2000
    the environment               DOWSE_INDEX_DIR, DOWSE_EMBEDDER, DOWSE_LLM_BASE_URL, ...
    .dowse.toml                   at the repository root
    pyproject.toml [tool.dowse]   at the repository root
    the user's config file        DOWSE_CONFIG, else $XDG_CONFIG_HOME/dowse/config.toml,
                                  else ~/.config/dowse/config.toml
    what the index remembers      walk options, --embed, --history (`indexer.build`)
    the built-in default

The repository root of a path is the first directory at or above it that holds a
`.dowse.toml`, a `pyproject.toml` or a `.git`. Keys are named after the command-line
options (`max_file_size` for `--max-file-size`); `KEYS` lists them.

Files and variables are read here only, at the program's edge: `cli.py` (and `dowse
serve` for each root it serves) loads the settings once and passes typed values inward;
nothing below reads a config file or a `DOWSE_*` variable.

Invariants:
- A repository's files are as untrusted as its code (a tarball, a shared folder, a
  repository under review, issue 23): they may narrow what dowse reads, never widen it,
  send it anywhere or move where dowse writes. A key that would is refused in them with an
  error naming the file and line: `include_secrets` and a `max_file_size` above the default
  (the options `indexer.trust.widening` signs), `evaluator` and the `llm_*` keys (code
  would leave the machine for an endpoint the repository names), and an `index_dir` that
  is absolute or leads out of the root. Those belong to the user: the command line, the
  environment, or the user's file. Nothing in any file is run.
- No file holds a secret: `llm_api_key` is refused everywhere (DOWSE_LLM_API_KEY is
  the place).
- An unreadable file, an unknown key, a value of the wrong type or a refused key is one
  `ConfigError` naming the file (and the line, when the key is found in it): nothing is
  ignored silently.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dowse.budgets import DEFAULT_BUDGET
from dowse.errors import ConfigError

if TYPE_CHECKING:
    from dowse.setting_record import Setting

__all__ = [
    "KEYS",
    "REPO_FILE",
    "Settings",
    "load_settings",
    "repository_root",
    "user_config_path",
]

REPO_FILE = ".dowse.toml"
PYPROJECT = "pyproject.toml"
USER_CONFIG_ENV = "DOWSE_CONFIG"
DEFAULT_MAX_FILE_SIZE = 1_000_000
"""`indexer.walk.WalkConfig().max_file_bytes`, written out so that loading settings does not
import the indexer (tests/test_settings.py keeps them equal)."""


# -- the keys --------------------------------------------------------------------------


def _str(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty string")
    return value.strip()


def _url(value: Any) -> str:
    text = _str(value).rstrip("/")
    if not text.lower().startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    return text


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _int(low: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"must be a whole number of at least {low}")
        return value

    return check


def _choice(*choices: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(repr(c) for c in choices)}")
        return str(value)

    return check


def _patterns(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError("must be a list of non-empty strings")
    return list(value)


def _narrow_size(value: int) -> str | None:
    if value > DEFAULT_MAX_FILE_SIZE:
        return (
            f"above the default {DEFAULT_MAX_FILE_SIZE} it makes dowse read more; "
            "pass --max-file-size, or set it in your own config file"
        )
    return None


@dataclass(frozen=True)
class Key:
    """A setting: its flag, its check, its default, and who may set it."""

    flag: str
    """How the command line spells it (the variable, for a key without a flag)."""
    check: Callable[[Any], Any]
    default: Any
    help: str
    env: str | None = None
    in_repo: bool = True
    """Whether a repository's files may set it (else only flags, variables, the user)."""
    repo_check: Callable[[Any], str | None] | None = None
    """For a key a repository may set within bounds: why this value is refused, or None."""
    in_user: bool = True
    remembered: bool = False
    """The index remembers the value of its last run (`indexer.build`)."""


KEYS: dict[str, Key] = {
    "index_dir": Key(
        "--index-dir",
        _str,
        None,
        "where the index lives (a repository's file: a path inside the root)",
        env="DOWSE_INDEX_DIR",
        in_user=False,
    ),
    "exclude": Key(
        "--exclude",
        _patterns,
        [],
        "gitignore-style patterns `dowse index` leaves out",
        remembered=True,
    ),
    "max_file_size": Key(
        "--max-file-size",
        _int(1),
        DEFAULT_MAX_FILE_SIZE,
        "files larger than this many bytes are skipped",
        repo_check=_narrow_size,
        remembered=True,
    ),
    "include_secrets": Key(
        "--include-secrets",
        _bool,
        False,
        "index files that look like secrets",
        in_repo=False,
        remembered=True,
    ),
    "history": Key(
        "--history", _bool, True, "keep the git history as search evidence", remembered=True
    ),
    "embed": Key(
        "--embed",
        _choice("all", "files", "none"),
        "files",
        "what gets vectors: all, files or none",
        remembered=True,
    ),
    "embedder": Key(
        "--embedder",
        _str,
        "minilm-onnx",
        "embedding backend: minilm-onnx or minilm",
        env="DOWSE_EMBEDDER",
    ),
    "engine": Key(
        "--engine",
        _choice("local", "ray"),
        "local",
        "where `dowse index` computes: local (this machine) or ray (a Ray cluster)",
        in_repo=False,
    ),
    "ray_address": Key(
        "--address",
        _str,
        None,
        "the Ray cluster `dowse index --engine ray` connects to (default: a local Ray)",
        in_repo=False,
    ),
    "budget": Key("--budget", _int(50), DEFAULT_BUDGET, "`dowse ask`'s token budget"),
    "evaluator": Key(
        "--evaluator",
        _choice("offline", "llm"),
        "offline",
        "`dowse ask`'s candidate scorer: offline or llm",
        in_repo=False,
    ),
    "llm_base_url": Key(
        "DOWSE_LLM_BASE_URL",
        _url,
        None,
        "the LLM evaluator's OpenAI-compatible endpoint",
        env="DOWSE_LLM_BASE_URL",
        in_repo=False,
    ),
    "llm_model": Key(
        "DOWSE_LLM_MODEL",
        _str,
        None,
        "the LLM evaluator's model",
        env="DOWSE_LLM_MODEL",
        in_repo=False,
    ),
}
"""Every key a config file may hold, in the order `dowse status` shows them."""

_REFUSED_EVERYWHERE = {
    "llm_api_key": "a key never goes in a file: set DOWSE_LLM_API_KEY",
    "api_key": "a key never goes in a file: set DOWSE_LLM_API_KEY",
}


# -- where the files are ---------------------------------------------------------------


def repository_root(path: Path) -> Path:
    """The first directory at or above `path` holding .dowse.toml, pyproject.toml or .git;
    `path`'s own directory when none does."""
    real = Path(os.path.realpath(path))
    start = real if real.is_dir() else real.parent
    for d in (start, *start.parents):
        if any((d / name).exists() for name in (REPO_FILE, PYPROJECT, ".git")):
            return d
    return start


def user_config_path(environ: Mapping[str, str]) -> Path:
    if environ.get(USER_CONFIG_ENV):
        return Path(environ[USER_CONFIG_ENV]).expanduser()
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "dowse" / "config.toml"


# -- reading a file --------------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[\[?\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")


def _line(text: str, table: str | None, key: str) -> int | None:
    """The line (1-based) where `key` is set in `table` (None: the top level), if found."""
    quoted = re.escape(key)
    pattern = re.compile(rf"""^\s*(?:{quoted}|"{quoted}"|'{quoted}')\s*=""")
    current: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            current = re.sub(r"\s*\.\s*", ".", header.group(1)).replace('"', "")
            if current == (f"{table}.{key}" if table else key):  # a key that is a table
                return number
            continue
        if current == table and pattern.match(line):
            return number
    return None


@dataclass(frozen=True)
class _Layer:
    """The values one source sets: name -> (value, where)."""

    values: dict[str, tuple[Any, str]]


def _read_file(
    path: Path, *, table: tuple[str, ...], repo_root: Path | None, user_file: Path
) -> _Layer:
    """The settings in `path` (under `table`, e.g. ('tool', 'dowse')); a repository's file
    when `repo_root` is given (its keys held to the repository's bounds)."""
    try:
        text = path.read_text(encoding="utf-8")
        data: Any = tomllib.loads(text)
    except FileNotFoundError:
        return _Layer({})
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    for part in table:
        data = data.get(part) if isinstance(data, dict) else None
        if data is None:
            return _Layer({})
    dotted = ".".join(table) or None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: [{dotted}] must be a table")
    values: dict[str, tuple[Any, str]] = {}
    for name, raw in data.items():
        line = _line(text, dotted, name)
        where = f"{path}:{line}" if line else (f"{path} [{dotted}]" if dotted else str(path))

        def refuse(why: str, name: str = name, where: str = where) -> ConfigError:
            return ConfigError(f"{where}: {name} {why}")

        if name in _REFUSED_EVERYWHERE:
            raise refuse(f"is refused: {_REFUSED_EVERYWHERE[name]}")
        key = KEYS.get(name)
        if key is None:
            near = difflib.get_close_matches(name.replace("-", "_"), KEYS, n=1)
            hint = f" (did you mean {near[0]}?)" if near else f"; known: {', '.join(KEYS)}"
            raise refuse(f"is not a setting{hint}")
        try:
            value = key.check(raw)
        except ValueError as exc:
            raise refuse(f"{exc} (got {raw!r})") from None
        if repo_root is None:
            if not key.in_user:
                raise refuse(f"belongs to a repository: set it in its {REPO_FILE}")
        elif not key.in_repo:
            raise refuse(
                "cannot be set by a repository's own file, which may only narrow what "
                f"dowse reads: use {key.flag}, or set it in your config file "
                f"({user_file})"
            )
        elif key.repo_check is not None and (why := key.repo_check(value)):
            raise refuse(f"= {value!r} is refused in a repository's file: {why}")
        if name == "index_dir" and repo_root is not None:
            value = _inside(repo_root, value, refuse)
        values[name] = (value, where)
    return _Layer(values)


def _inside(root: Path, value: str, refuse: Callable[[str], ConfigError]) -> Path:
    """A repository's index_dir: relative to its root and inside it, links resolved."""
    if os.path.isabs(value) or value.startswith("~"):
        raise refuse(f"= {value!r} must be a path relative to the repository root")
    target = Path(os.path.realpath(root / value))
    if target == root or not target.is_relative_to(root):
        raise refuse(f"= {value!r} leads out of the repository root {root}")
    return target


# -- the resolver ----------------------------------------------------------------------


class Settings:
    """The layers below the command line, highest first; `pick` puts a flag on top."""

    def __init__(self, root: Path | None, layers: list[_Layer]) -> None:
        self.root = root
        self._layers = layers

    def pick(self, name: str, flag: Any = None) -> Setting:
        """The effective value of `name`: `flag` when given (not None), else the first
        layer that sets it, else the default."""
        from dowse.setting_record import Setting

        value, source = self._pick(name, flag)
        return Setting(name=name, value=value, source=source)

    def _pick(self, name: str, flag: Any) -> tuple[Any, str]:
        # (value, source) without the record: `value` and `given` build no pydantic model,
        # so that a command reading its options alone (a no-op `dowse index`) imports none.
        key = KEYS[name]
        if flag is not None:
            return flag, key.flag
        for layer in self._layers:
            if name in layer.values:
                value, where = layer.values[name]
                return value, where
        return key.default, "default"

    def value(self, name: str, flag: Any = None) -> Any:
        return self._pick(name, flag)[0]

    def given(self, name: str, flag: Any = None) -> Any:
        """The value when something sets it, None when it is the default: for the options
        an index remembers, which come before the default."""
        value, source = self._pick(name, flag)
        return None if source == "default" else value

    def report(
        self, flags: Mapping[str, Any] | None = None, remembered: Mapping[str, Any] | None = None
    ) -> list[Setting]:
        """Every key's effective value and source, `remembered` (what the index's last run
        used, by key) standing in for a default it differs from."""
        from dowse.setting_record import Setting

        out = []
        for name, key in KEYS.items():
            found = self.pick(name, (flags or {}).get(name))
            if found.source == "default" and remembered and key.remembered:
                if name in remembered and remembered[name] != key.default:
                    found = Setting(name=name, value=remembered[name], source="the index")
            out.append(found)
        return out


def _environment(environ: Mapping[str, str]) -> _Layer:
    values: dict[str, tuple[Any, str]] = {}
    for name, key in KEYS.items():
        raw = environ.get(key.env or "", "").strip()
        if key.env and raw:
            try:
                values[name] = (key.check(raw), key.env)
            except ValueError as exc:
                raise ConfigError(f"{key.env}={raw!r}: {exc}") from None
    return _Layer(values)


def load_settings(path: Path | None, environ: Mapping[str, str] | None = None) -> Settings:
    """The settings for `path` (a directory or file inside a repository; None: only the
    environment and the user's file). ConfigError on a bad file or variable."""
    env = os.environ if environ is None else environ
    user_file = user_config_path(env)
    layers = [_environment(env)]
    root = None
    if path is not None:
        root = repository_root(path)
        for name, table in ((REPO_FILE, ()), (PYPROJECT, ("tool", "dowse"))):
            layers.append(_read_file(root / name, table=table, repo_root=root, user_file=user_file))
    layers.append(_read_file(user_file, table=(), repo_root=None, user_file=user_file))
    return Settings(root, layers)
