"""The one way dowse runs git: read-only, on a repository it does not trust.

A repository dowse indexes or explores came from someone else, and its `.git/config` can
make git run commands (`core.fsmonitor` on `git status`, `gpg.program` on a `git log` with
`log.showSignature`, textconv and external diff drivers, clean/smudge filters, hooks, a
promisor remote's transport on a lazy fetch...). dowse's own environment can hold `GIT_*`
variables left by whatever started it (a git hook sets GIT_DIR and GIT_INDEX_FILE, `git -c`
passes GIT_CONFIG_PARAMETERS) that point git at another repository or inject config.

Invariants of every call through `run`:
- Environment: every `GIT_*` variable is dropped except the ones that choose the user's
  own config files and narrow discovery (`_KEPT`), then git is told: no prompt, no
  optional locks (`git status` does not rewrite the index), no pager, no lazy fetch,
  literal pathspecs, C locale (git's messages are matched in English). stdin is
  /dev/null unless input is given; a timeout bounds the call.
- Config: the user's global and system config are read as git reads them (they are the
  user's, and `safe.directory` there keeps git's ownership check working), but
  everything that executes is overridden on the command line, which beats every config
  file: `_OVERRIDES`, plus each filter, diff and merge driver and each `protocol.<name>`
  the config names (read first with `git config --get-regexp`, which runs nothing),
  whose commands become empty. An empty filter command means no filter; an empty diff
  command or textconv would fail rather than run, and the subcommands that take them get
  `--no-ext-diff` / `--no-textconv` so it is never consulted. git has no switch that
  turns off every driver: a driver is named by the repository (`filter=x` in its
  `.gitattributes`), so its name must be read from the config before it can be
  overridden.
- That read is kept per git directory in a `ConfigReads` (the process's, `READS`, unless
  the caller passes its own), with the state (`os.stat`) of every file it came from: the
  system's, the user's and the repository's config files, each file an include directive
  names (`include.path`, `includeIf.*.path`, read with the drivers) and HEAD when an
  include depends on the branch. A later call re-reads when any of them changed
  (created, deleted, rewritten, replaced), so one call costs one git process once the
  first has read the config. Nothing is kept from a read during which a file changed, or
  when a file changed within `ConfigReads.racy_s` (`RACY_S`) before it (a second change
  inside a file system's timestamp granularity could leave every stat field as it was).
- `git status` does not look inside submodules' work trees (`--ignore-submodules=dirty`):
  that runs git in the submodule, under the submodule's config, which was not read here.
- Location: with `cwd`, dowse finds the repository itself (the nearest `.git` at or
  above `cwd`, below any GIT_CEILING_DIRECTORIES) and names both its git directory and
  its work tree on the command line, so the config's `core.worktree` cannot move the
  work tree elsewhere. A `.git` file (`gitdir: ...`), a symlinked `.git` or a
  `commondir` may point outside the directory holding it only when the target points
  back (a linked worktree's `gitdir` file, a submodule's `core.worktree`): a shipped
  `gitdir: /home/you/other/.git` would otherwise read another repository's history and
  index. Such a redirect is a GitError.
- Objects: git reads objects only from inside the repository. Its object directory, and
  every directory `objects/info/alternates` names (recursively, as git follows them),
  must resolve into the work tree or the repository's own git directory: a shipped
  alternates file (or a symlinked `objects/`) naming `/home/you/private/.git/objects`
  would let refs the sender wrote reach another repository's commits and blobs. Such a
  repository is a GitError, as is an alternates file that is not a small regular file
  (a FIFO would block git). `objects/info/http-alternates` is read only by a fetch over
  HTTP, which never happens here (protocol.allow=never, no lazy fetch), and
  GIT_ALTERNATE_OBJECT_DIRECTORIES goes with the other `GIT_*` variables.
- Nothing here parses git's output: callers get bytes (`output`) or text decoded as UTF-8
  with replacement (`text`), or the finished process (`run`) when the exit code is the
  answer.

Verified with git 2.39: a repository configuring each vector to create a marker file leaves
no marker (tests/test_git_safety.py).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Generic, TypeVar

from dowse.errors import GitError

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "RACY_S",
    "READS",
    "ConfigReads",
    "no_repository_at",
    "output",
    "run",
    "text",
]

DEFAULT_TIMEOUT_S = 600.0
"""Long enough for the history reader's first `git log --name-only` over 100k commits of a
large repository; a git blocked for longer (a stalled network file system) is an error."""

_KEPT = frozenset(
    {
        # Which config files are the user's: never set by a parent git process, and
        # whatever they say that executes is overridden below.
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
        # Only stops repository discovery earlier.
        "GIT_CEILING_DIRECTORIES",
    }
)

_SET = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_LITERAL_PATHSPECS": "1",
    "LC_ALL": "C",
}

# `false` where git would run a program whose failure is the safe outcome (a signature
# that does not verify, a connection that fails), empty where empty means none.
_OVERRIDES = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("core.alternateRefsCommand", "true"),
    ("credential.helper", ""),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.x509.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.ssh.defaultKeyCommand", "false"),
    ("diff.external", ""),
    ("protocol.allow", "never"),
    # A protocol's own setting beats protocol.allow: each known one is closed too.
    *((f"protocol.{p}.allow", "never") for p in ("file", "git", "ssh", "http", "https", "ext")),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("color.ui", "false"),
    ("core.quotePath", "false"),
)

# What a driver named in the config runs, and the value that stops it.
_DRIVER_KEYS = {
    "filter": {"clean": "", "smudge": "", "process": "", "required": "false"},
    "diff": {"textconv": "", "command": ""},
    "merge": {"driver": ""},
    "protocol": {"allow": "never"},
}
_DRIVER_PATTERN = (
    r"^(filter|diff|merge|protocol)\..*\.(clean|smudge|process|textconv|command|driver|allow)$"
)
_DRIVER_KEY = re.compile(r"(filter|diff|merge|protocol)\.(.*)\.([a-z]+)", re.DOTALL)
# Read with the drivers: the files the config includes, which a cached read depends on.
_CONFIG_PATTERN = rf"{_DRIVER_PATTERN}|^include\.path$|^includeif\..*\.path$"
_INCLUDE_KEY = re.compile(r"include\.path|includeif\.(.*)\.path", re.DOTALL)

# Options that keep a subcommand from consulting a diff driver, or from running git in a
# submodule (whose config was not read).
_SUBCOMMAND_OPTIONS = {
    "log": ("--no-ext-diff", "--no-textconv"),
    "show": ("--no-ext-diff", "--no-textconv"),
    "whatchanged": ("--no-ext-diff", "--no-textconv"),
    "diff": ("--no-ext-diff", "--no-textconv"),
    "diff-tree": ("--no-ext-diff", "--no-textconv"),
    "diff-index": ("--no-ext-diff", "--no-textconv"),
    "diff-files": ("--no-ext-diff", "--no-textconv"),
    "blame": ("--no-textconv",),
    "annotate": ("--no-textconv",),
    "status": ("--ignore-submodules=dirty",),
}


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEPT}
    env.update(_SET)
    return env


def _flags(pairs: Iterable[tuple[str, str]]) -> list[str]:
    return [arg for key, value in pairs for arg in ("-c", f"{key}={value}")]


def _location(
    git_dir: Path | None, cwd: Path | None, env: dict[str, str], reads: ConfigReads
) -> tuple[list[str], Path | None]:
    """git's options naming the repository, and its git directory (None when there is
    no repository at `cwd`)."""
    if (git_dir is None) == (cwd is None):
        raise ValueError("give exactly one of git_dir and cwd")
    if git_dir is not None:
        _own_objects(Path(git_dir), ())
        return ["--git-dir", str(git_dir)], Path(git_dir)
    assert cwd is not None
    found = _repository(Path(cwd), env, reads)
    if found is None:  # git finds nothing either, and says so
        return ["-C", str(cwd)], None
    directory, work_tree = found
    _own_objects(directory, (work_tree,))
    location = ["-C", str(cwd), "--git-dir", str(directory), "--work-tree", str(work_tree)]
    return location, directory


_ALTERNATES_MAX_BYTES = 1 << 16
_ALTERNATES_MAX_DIRS = 64  # git follows chains 5 deep; a longer list is no repository's own


def _own_objects(git_dir: Path, tops: tuple[Path, ...]) -> None:
    """GitError unless every object directory git would read for `git_dir` lies inside
    its git directory (the shared one of a linked worktree) or one of `tops`."""
    base = _common(git_dir.resolve())
    allowed = (base, *(t.resolve() for t in tops))
    todo, seen = [(base / "objects", base / "objects")], set()
    while todo:
        named, where = todo.pop()
        directory = named.resolve()
        if not any(_inside(directory, top) for top in allowed):
            raise GitError(
                f"{where} makes git read objects outside the repository ({directory}); "
                "dowse reads no other repository's objects"
            )
        if directory in seen:
            continue
        seen.add(directory)
        if len(seen) > _ALTERNATES_MAX_DIRS:
            raise GitError(f"{where} names more object directories than a repository has")
        alternates = directory / "info" / "alternates"
        try:
            st = os.stat(alternates)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise GitError(f"cannot read {alternates}: {exc.strerror}") from None
        if not stat.S_ISREG(st.st_mode) or st.st_size > _ALTERNATES_MAX_BYTES:
            raise GitError(f"{alternates} is not a small regular file")
        with open(alternates, "rb") as fh:
            data = fh.read(_ALTERNATES_MAX_BYTES + 1).decode("utf-8", "surrogateescape")
        for line in data.split("\n"):
            if not line or line.startswith("#"):
                continue
            entry = _unquoted(line)
            todo.append(
                (directory / entry if not os.path.isabs(entry) else Path(entry), alternates)
            )


def _common(git_dir: Path) -> Path:
    """The directory a linked worktree's git directory shares (its `commondir`), else
    `git_dir` itself."""
    common = git_dir / "commondir"
    if common.is_file():
        return (git_dir / common.read_text("utf-8", "replace").strip()).resolve()
    return git_dir


def _unquoted(line: str) -> str:
    """An alternates entry as git reads it: C-style quoted when it starts with a quote."""
    if not line.startswith('"') or not line.endswith('"') or len(line) < 2:
        return line
    body = line[1:-1].encode("utf-8", "surrogateescape").decode("unicode_escape")
    return body.encode("latin-1", "surrogateescape").decode("utf-8", "surrogateescape")


def _inside(path: Path, top: Path) -> bool:
    return path == top or top in path.parents


def _ceilings(env: dict[str, str]) -> set[Path]:
    value = env.get("GIT_CEILING_DIRECTORIES", "")
    return {Path(p).resolve() for p in value.split(os.pathsep) if p}


def no_repository_at(cwd: Path) -> bool:
    """Whether git, run in `cwd`, can find no repository there, so that a caller need not
    start it to hear so: neither `cwd` nor any directory above it holds a `.git` (a
    directory, a file or a link) or is what git takes for a bare repository's git
    directory (it holds `HEAD`, `objects` and `refs`). The ceilings are not consulted: they
    only stop git's search earlier, and git's environment here names no repository
    (`_KEPT`). False, and git asked, wherever one of these is found."""
    here = Path(cwd).resolve()  # git searches from its working directory's real path
    for directory in (here, *here.parents):
        if os.path.lexists(directory / ".git"):
            return False
        if all(os.path.lexists(directory / name) for name in ("HEAD", "objects", "refs")):
            return False
    return True


def _repository(cwd: Path, env: dict[str, str], reads: ConfigReads) -> tuple[Path, Path] | None:
    """(git directory, work tree) of the repository `cwd` lies in, or None when there is
    none; GitError when its `.git` redirects outside the work tree without a link back."""
    ceilings = _ceilings(env)
    here = cwd.resolve()
    while True:
        dot = here / ".git"
        if dot.is_symlink() or dot.exists():
            return _checked(dot, here, env, reads), here
        if here.parent == here or here.parent in ceilings:
            return None
        here = here.parent


def _checked(dot: Path, work_tree: Path, env: dict[str, str], reads: ConfigReads) -> Path:
    """The git directory `dot` names, if it stays in `work_tree` or links back to it."""
    if dot.is_file() and not dot.is_symlink():
        line = dot.read_text("utf-8", "replace").strip()
        if not line.startswith("gitdir:"):
            raise GitError(f"{dot} is not a git directory nor a gitdir: file")
        target = (work_tree / line.removeprefix("gitdir:").strip()).resolve()
    else:
        target = dot.resolve()
    if not (_inside(target, work_tree) or _links_back(target, dot, work_tree, env, reads)):
        raise GitError(f"{dot} points outside the repository ({target})")
    common = target / "commondir"
    if common.is_file():
        shared = (target / common.read_text("utf-8", "replace").strip()).resolve()
        if not (_inside(shared, work_tree) or _links_back(target, dot, work_tree, env, reads)):
            raise GitError(f"{common} points outside the repository ({shared})")
    return target


def _links_back(
    target: Path, dot: Path, work_tree: Path, env: dict[str, str], reads: ConfigReads
) -> bool:
    """Whether the git directory `target` names `work_tree` as its own: a linked
    worktree's `gitdir` file names `dot`, a submodule's `core.worktree` the work tree."""
    back = target / "gitdir"
    if back.is_file():
        named = Path(back.read_text("utf-8", "replace").strip())
        if (target / named).resolve() == dot.resolve():
            return True
    config = target / "config"
    if not config.is_file():
        return False
    key = (str(config),)
    known = reads.work_trees.get(key)
    if known is not None and known.unchanged():
        named_tree = known.value
    else:
        before = {str(config): _stat(str(config))}
        started = time.time_ns()
        done = _spawn(
            ["git", "config", "--file", str(config), "--get", "core.worktree"], env, None, 30.0
        )
        named_tree = done.stdout.decode("utf-8", "surrogateescape").strip()
        reads.keep(reads.work_trees, key, named_tree, before, started)
    return bool(named_tree) and (target / named_tree).resolve() == work_tree


def _spawn(
    cmd: list[str], env: dict[str, str], input: bytes | None, timeout: float
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            cmd,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            env=env,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        sub = next((a for a in cmd[1:] if not a.startswith("-")), "")
        raise GitError(f"git {sub} took longer than {timeout:.0f}s") from None


RACY_S = 2.0
"""A config file changed less than this before it was read (or while it was read) is
read again by the next call: a second change within a file system's timestamp
granularity (a second on some, two on FAT) could leave every stat field as it was."""

_Stat = tuple[int, int, int, int, int, int] | None
_T = TypeVar("_T")
_KEPT_READS = 256  # repositories a ConfigReads keeps; beyond, its reads start over


def _stat(path: str) -> _Stat:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True)
class _Read(Generic[_T]):
    """What was read from config files, and their state when it was read."""

    value: _T
    files: tuple[tuple[str, _Stat], ...]

    def unchanged(self) -> bool:
        return all(_stat(path) == seen for path, seen in self.files)


class ConfigReads:
    """What the runner keeps of the repositories' config between calls: per git directory
    (and the variables choosing the user's config files) the driver overrides, per config
    file the work tree its core.worktree names (a submodule's), each with the state of the
    files it was read from. `READS` is the process's; a caller may keep its own.

    `racy_s`: a file changed less than this before its read (or while it was read) is read
    again by the next call (`RACY_S`)."""

    def __init__(self, racy_s: float = RACY_S) -> None:
        self.racy_s = racy_s
        self.drivers: dict[tuple[str, ...], _Read[list[tuple[str, str]]]] = {}
        self.work_trees: dict[tuple[str, ...], _Read[str]] = {}

    def keep(
        self,
        reads: dict[tuple[str, ...], _Read[_T]],
        key: tuple[str, ...],
        value: _T,
        before: dict[str, _Stat],
        started_ns: int,
        also: Iterable[str] = (),
    ) -> None:
        """Keep `value` in `reads` (`drivers` or `work_trees`), read from the files
        `before` (stat'ed before the read began at `started_ns`) and `also` (learnt from
        the read), unless one changed meanwhile or too recently to tell its next change by
        (`racy_s`)."""
        recent = started_ns - int(self.racy_s * 1e9)
        files = {path: _stat(path) for path in [*before, *also]}
        for path, now in files.items():
            if path in before and before[path] != now:
                return
            if now is not None and stat.S_ISREG(now[0]) and max(now[4], now[5]) >= recent:
                return
        if len(reads) >= _KEPT_READS:
            reads.clear()
        reads[key] = _Read(value, tuple(files.items()))


READS = ConfigReads()
"""The process's config reads: every call that is given no other keeps its reads here."""

_CONFIG_ENV = ("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM")
"""The variables naming the user's and the system's config files."""
_READ_ENV = ("GIT_CONFIG_NOSYSTEM", "PATH")  # PATH: which git, so which system config


@lru_cache(maxsize=8)
def _system_configs(path: str) -> tuple[str, ...]:
    """Where the git on `path` may keep its system config: /etc, or its prefix's etc."""
    found = shutil.which("git", path=path)
    prefix = Path(os.path.realpath(found)).parent.parent if found else None
    return ("/etc/gitconfig", *((str(prefix / "etc" / "gitconfig"),) if prefix else ()))


def _config_files(directory: Path, env: dict[str, str], here: Path) -> list[str]:
    """The files git, run in `here`, reads the config of the repository at `directory`
    from, includes aside (whichever of the system's and the user's git would skip is
    stat'ed too)."""
    home = env.get("HOME", "")
    xdg = env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
    git_dir = directory.resolve()
    common = _common(git_dir)
    files = [
        env.get("GIT_CONFIG_SYSTEM", ""),
        *_system_configs(env.get("PATH", os.defpath)),
        env.get("GIT_CONFIG_GLOBAL", ""),
        os.path.join(home, ".gitconfig") if home else "",
        os.path.join(xdg, "git", "config") if xdg else "",
        str(git_dir / "commondir"),
        str(common / "config"),
        str(git_dir / "config.worktree"),
    ]
    return list(dict.fromkeys(os.path.abspath(os.path.join(here, f)) for f in files if f))


def _included(value: str, origin: str, here: Path, env: dict[str, str]) -> str:
    """The file an include directive read from `origin` names, as git resolves it."""
    if value.startswith("~/") and env.get("HOME"):
        value = env["HOME"] + value[1:]
    elif value.startswith("~"):
        value = os.path.expanduser(value)
    return os.path.abspath(os.path.join(here, os.path.dirname(origin), value))


def _driver_overrides(
    base: list[str],
    directory: Path | None,
    env: dict[str, str],
    here: Path,
    timeout: float,
    reads: ConfigReads,
) -> list[tuple[str, str]] | subprocess.CompletedProcess[bytes]:
    """The overrides for every driver the config names, or git's failed process (the
    repository cannot be read, so neither can the command that was asked for). `here`
    is the directory git runs in."""
    key: tuple[str, ...] = ()
    if directory is not None:
        # A relative path in one of the variables names a file relative to `here`.
        chosen = (os.path.join(here, env[name]) if env.get(name) else "" for name in _CONFIG_ENV)
        key = (str(directory.resolve()), *chosen, *(env.get(name, "") for name in _READ_ENV))
        known = reads.drivers.get(key)
        if known is not None and known.unchanged():
            return known.value
    before = {f: _stat(f) for f in _config_files(directory, env, here)} if directory else {}
    started = time.time_ns()
    done = _spawn(
        [*base, "config", "-z", "--show-origin", "--get-regexp", _CONFIG_PATTERN],
        env,
        None,
        timeout,
    )
    if done.returncode not in (0, 1):  # 1: no such key
        return done
    pairs: list[tuple[str, str]] = []
    also: list[str] = []
    kept = directory is not None
    fields = done.stdout.split(b"\0")
    for where, entry in zip(fields[::2], fields[1::2], strict=False):
        origin = where.decode("utf-8", "surrogateescape")
        key_name, _, setting = entry.decode("utf-8", "surrogateescape").partition("\n")
        if origin.startswith("file:"):
            also.append(os.path.abspath(os.path.join(here, origin.removeprefix("file:"))))
        include = _INCLUDE_KEY.fullmatch(key_name)
        if include is not None:
            # `%(prefix)/` names git's install directory, which is not looked for here.
            kept = kept and origin.startswith("file:") and not setting.startswith("%(")
            if origin.startswith("file:"):
                also.append(_included(setting, origin.removeprefix("file:"), here, env))
            if (include.group(1) or "").startswith("onbranch:") and directory is not None:
                also.append(str(directory.resolve() / "HEAD"))
            continue
        match = _DRIVER_KEY.fullmatch(key_name)
        if not match:
            continue
        section, name, _ = match.groups()
        if "=" in name:
            # `-c` splits at the first "=": such a driver cannot be switched off.
            raise GitError(f"the repository's config names a {section} driver git cannot disable")
        pairs += [
            (f"{section}.{name}.{var}", value) for var, value in _DRIVER_KEYS[section].items()
        ]
    overrides = list(dict.fromkeys(pairs))
    if kept:
        reads.keep(reads.drivers, key, overrides, before, started, also)
    return overrides


def run(
    *args: str,
    git_dir: Path | None = None,
    cwd: Path | None = None,
    input: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    reads: ConfigReads | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run `git <args>` on the repository at `git_dir` (its git directory) or the one `cwd`
    lies in; the finished process whatever its exit code. GitError when git is missing,
    took longer than `timeout`, or the repository's config names a driver it cannot
    disable. The config reads are kept in `reads` (the process's `READS` when None)."""
    if not args:
        raise ValueError("no git subcommand")
    reads = READS if reads is None else reads
    env = _environment()
    location, directory = _location(git_dir, cwd, env, reads)
    base = ["git", "--no-pager", *location, *_flags(_OVERRIDES)]
    here = Path(cwd) if cwd is not None else Path.cwd()
    drivers = _driver_overrides(base, directory, env, here, timeout, reads)
    if isinstance(drivers, subprocess.CompletedProcess):
        return drivers
    sub, *rest = args
    cmd = [*base, *_flags(drivers), sub, *_SUBCOMMAND_OPTIONS.get(sub, ()), *rest]
    return _spawn(cmd, env, input, timeout)


def output(
    *args: str,
    git_dir: Path | None = None,
    cwd: Path | None = None,
    input: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    reads: ConfigReads | None = None,
) -> bytes:
    """git's stdout; GitError (git's last line of stderr) when it exits non-zero."""
    done = run(*args, git_dir=git_dir, cwd=cwd, input=input, timeout=timeout, reads=reads)
    if done.returncode:
        lines = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise GitError(
            lines[-1] if lines else f"git {args[0]} failed with exit code {done.returncode}",
            returncode=done.returncode,
        )
    return done.stdout


def text(
    *args: str,
    git_dir: Path | None = None,
    cwd: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    reads: ConfigReads | None = None,
) -> str:
    """`output` decoded as UTF-8, undecodable bytes replaced."""
    out = output(*args, git_dir=git_dir, cwd=cwd, timeout=timeout, reads=reads)
    return out.decode("utf-8", errors="replace")
