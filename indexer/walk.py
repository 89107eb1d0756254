"""Walk a repository and decide which files the indexer may read.

`walk()` lists every regular file under a root that is worth indexing and, for everything
it leaves out, one `SkippedFile` saying why. `check_content()` makes the same kind of
decision from a file's bytes, once the indexer has read them.

Invariants:

- Paths are POSIX and relative to the root; a skipped directory is reported once, as
  ``"dir/"``, and never descended into. Both lists are sorted by path.
- A file is stat'ed once (for its size and mtime); no file content is read here, only the
  ignore files (``.gitignore``, ``.dowseignore``, ``.git/info/exclude``).
- Nothing under the walk raises: unreadable directories and files, files deleted during
  the walk, symlink loops, and undecodable names become `SkippedFile` records (a file that
  vanished is dropped silently; an undecodable name is shown with ``\\xNN`` escapes).
  Only a root that is missing, not a directory, or unlistable raises `InvalidPath`.
- Symlinks are followed only when their target lies inside the root, and are kept under
  the link's path. Each real directory is walked at most once: symlinked directories are
  followed after the plain walk, so a directory reachable both ways is listed under its
  real path, and a link back to an ancestor is a ``"symlink loop"``.

Ignore rules, in the order they are applied:

1. ``.git .hg .svn .bzr``, the index directory (``index_dir``, default
   ``<root>/.dowse``, wherever it lies in the tree) and any other dowse index (a
   directory holding ``manifest.json`` and a ``db/`` of ``*.lance`` tables, whatever its
   name) are always skipped: an index never indexes an index.
2. Git's rules, as git applies them: ``.gitignore`` at every level (patterns relative to
   their directory, the deepest file first, the last matching line within a file wins,
   ``!`` re-includes, nothing under an excluded directory can be re-included), then the
   repository's ``info/exclude``. When the root lies inside a git work tree, the
   ``.gitignore`` files between the work tree's top and the root apply too (to what is
   below the root: the root itself is walked even when git ignores it). The user's
   global ``core.excludesFile`` is not read: the result does not depend on who runs it.
   Symlinks match as files, as in git. Reason ``"gitignored"``.
3. ``WalkConfig.exclude`` patterns (gitignore syntax, relative to the root; reason
   ``"excluded by config"``), then ``.dowseignore`` files (same syntax and layering as
   ``.gitignore``; reason ``"dowseignored"``). They can only exclude more: a ``!`` line
   there cannot bring back a gitignored path, but it does override the defaults below.
4. Default excludes, for repositories without (or with an incomplete) ``.gitignore``:

   - directories named ``node_modules bower_components __pycache__ .venv .tox .nox .eggs
     .mypy_cache .pytest_cache .ruff_cache .hypothesis .cache .gradle .terraform .next
     .nuxt .dowse vendor third_party``, any ``*.egg-info``, any directory holding a
     ``pyvenv.cfg`` (a virtualenv, whatever its name) or a ``CACHEDIR.TAG``, and
     ``build/ dist/ target/`` unless they hold an ``__init__.py`` (pip ships its source in
     ``pip/_internal/operations/build/``). The root itself is never skipped this way.
     ``vendor/`` and ``third_party/`` hold other people's code; a ``!third_party/`` line
     in ``.dowseignore`` brings such a directory back. ``out/`` is not excluded: the name
     is too often real source.
   - lockfiles (``package-lock.json yarn.lock pnpm-lock.yaml poetry.lock Cargo.lock
     Gemfile.lock composer.lock uv.lock go.sum`` and a few more), minified files
     (``*.min.js *.min.css``) and source maps (``*.map``).
5. Secrets, unless ``include_secrets``: ``.env``, ``.env.*`` and ``*.env`` (but not the
   committed templates ``.env.example .env.sample .env.template .env.dist``), ``.envrc``,
   SSH keys (``id_rsa id_dsa id_ecdsa id_ed25519`` and ``*_sk``), key and certificate
   stores (``*.pem *.key *.p8 *.ppk *.p12 *.pfx *.jks *.keystore``), ``.netrc .npmrc
   .pypirc .pgpass .htpasswd .git-credentials .dockercfg``, files named ``credentials``
   (``.aws/credentials``) or ``credentials.json``, ``client_secret*.json``,
   ``*service-account*.json``, ``secrets.{json,yml,yaml,toml}``, ``.docker/config.json``,
   ``.kube/config``, kubeconfigs by name (``kubeconfig``, ``kubeconfig.y*ml``,
   ``*.kubeconfig``), Terraform state and password databases (``*.kdbx``); and the
   directories ``.ssh`` and ``.gnupg``. A symlink is judged by its target's path too.
   ``*.pem`` errs on the safe side: certificate bundles are skipped with the keys.
   `check_content` also finds private keys, kubeconfigs and Kubernetes Secret manifests
   by their content, wherever they are (`indexer.secrets`); a token or password inside
   an ordinary file does not skip it, the indexer redacts it. `check_content` also skips
   a tree-sitter grammar's generated ``parser.c`` (known by its first lines): it repeats
   the grammar.js beside it. Other generated and amalgamated code is indexed and ranks
   lower by its path (`languages.is_generated_path`).
6. Binary files by extension (images, archives, fonts, compiled objects, documents,
   media, model weights, databases): reason ``"binary (extension)"``. Files with an
   unknown extension are kept; the indexer decides by extension what to do with them.
7. Anything that is not a regular file (FIFOs, sockets, devices), files the process
   cannot read (judged from the mode bits of the one stat), and files over
   ``max_file_bytes``.

The ``.gitignore`` syntax is parsed by pathspec's `GitIgnoreSpec` and compiled in
`indexer.ignore`; the layering above is done here because a flat pathspec cannot express
git's per-directory precedence.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from dowse.errors import InvalidPath
from dowse.indexer.ignore import Rules, compile_rules, decide, git_context, read_text
from dowse.indexer.layout import INDEX_DIR_NAME
from dowse.indexer.records import SkippedFile
from dowse.indexer.secrets import file_secret
from dowse.indexer.walked import (
    KIND,
    LISTING,
    RACY_NS,
    STAT,
    TEXT,
    Seen,
    listing,
    stat_key,
    text_digest,
)

__all__ = ["WalkConfig", "WalkEntry", "WalkResult", "check_content", "walk"]


@dataclass(frozen=True)
class WalkConfig:
    max_file_bytes: int = 1_000_000
    exclude: tuple[str, ...] = ()
    """Extra gitignore-style patterns, relative to the root."""
    include_secrets: bool = False


@dataclass(frozen=True)
class WalkEntry:
    path: str
    """POSIX, relative to the root."""
    abspath: Path
    """What to open: the file itself, or a symlink's resolved target (the read does not
    follow symlinks, `indexer.reading`)."""
    size: int
    mtime_ns: int
    dev: int = 0
    ino: int = 0
    """The walked file's identity: the read refuses any other file found at `abspath`."""


@dataclass
class WalkResult:
    files: list[WalkEntry] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    """Every directory the walk listed, every file it stat'ed and every ignore file it
    read or looked for, with its stat: a walk that finds each of them as it was returns
    the same result (`indexer.walked`)."""
    digests: dict[str, str] = field(default_factory=dict)
    """Each ignore file read, and each directory listed whose mtime was within `RACY_NS`
    of `started_ns` (its path as in `seen`) -> the digest of what the walk found
    (`listing`, `text_digest`)."""
    started_ns: int = 0
    """When the walk began, before its first stat."""


# --- default excludes -------------------------------------------------------------------

_VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr"})


_DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        INDEX_DIR_NAME,  # another dowse index, when this one lives elsewhere
        "node_modules",
        "bower_components",
        "__pycache__",
        ".venv",
        ".tox",
        ".nox",
        ".eggs",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".cache",
        ".gradle",
        ".terraform",
        ".next",
        ".nuxt",
        "vendor",
        "third_party",
    }
)

# Build outputs, skipped unless the directory is a Python package: pip, for one, ships
# its source in `pip/_internal/operations/build/`.
_OUTPUT_DIRS = frozenset({"build", "dist", "target"})

_LOCKFILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "poetry.lock",
        "Pipfile.lock",
        "pdm.lock",
        "uv.lock",
        "Cargo.lock",
        "Gemfile.lock",
        "composer.lock",
        "go.sum",
        "mix.lock",
        "pubspec.lock",
        "Podfile.lock",
        "packages.lock.json",
        "flake.lock",
    }
)

_BINARY_EXTENSIONS = frozenset(
    """
    png jpg jpeg gif bmp ico icns tif tiff webp avif heic heif psd xcf
    zip tar gz tgz bz2 xz zst lz4 lzma 7z rar jar war ear whl egg apk ipa deb rpm dmg iso
    ttf otf woff woff2 eot
    pyc pyo pyd so dylib dll exe o a lib obj class dex wasm bin elf
    pdf doc docx xls xlsx ppt pptx odt ods odp epub
    mp3 mp4 m4a m4v wav ogg oga flac aac opus avi mov mkv webm wmv flv swf
    db sqlite sqlite3 parquet feather arrow npy npz pkl pickle pt pth ckpt onnx safetensors
    h5 hdf5 tflite pb gguf lance
    blend fbx glb
""".split()
)

_BINARY_NAMES = frozenset({".DS_Store"})

# --- secrets by name ---------------------------------------------------------------------

_ENV_TEMPLATES = frozenset({"example", "sample", "template", "dist"})

_SECRET_NAMES = {
    ".envrc": ".envrc file",
    "id_rsa": "SSH key",
    "id_dsa": "SSH key",
    "id_ecdsa": "SSH key",
    "id_ed25519": "SSH key",
    "id_ecdsa_sk": "SSH key",
    "id_ed25519_sk": "SSH key",
    ".netrc": ".netrc",
    "_netrc": ".netrc",
    ".npmrc": ".npmrc",
    ".pypirc": ".pypirc",
    ".pgpass": ".pgpass",
    ".htpasswd": ".htpasswd",
    ".git-credentials": ".git-credentials",
    ".dockercfg": "docker credentials",
    "credentials": "credentials file",
    "credentials.json": "credentials file",
    "secrets.json": "secrets file",
    "secrets.yml": "secrets file",
    "secrets.yaml": "secrets file",
    "secrets.toml": "secrets file",
    "terraform.tfstate": "terraform state",
    "kubeconfig": "kubeconfig",
    "kubeconfig.yaml": "kubeconfig",
    "kubeconfig.yml": "kubeconfig",
}

_SECRET_SUFFIXES = {
    "pem": "key file (*.pem)",
    "key": "key file (*.key)",
    "p8": "key file (*.p8)",
    "ppk": "key file (*.ppk)",
    "p12": "key store (*.p12)",
    "pfx": "key store (*.pfx)",
    "jks": "key store (*.jks)",
    "keystore": "key store (*.keystore)",
    "kdbx": "password database",
    "tfstate": "terraform state",
    "kubeconfig": "kubeconfig",
}

_SECRET_PATH_SUFFIXES = {".docker/config.json": "docker credentials", ".kube/config": "kubeconfig"}

_SECRET_DIRS = {".ssh": ".ssh directory", ".gnupg": ".gnupg directory"}


def _secret_name(name: str, ext: str, rel: str) -> str | None:
    """What kind of secret a file's name says it holds, or None. Called for every file,
    so the common case (no match) costs a few lookups."""
    what = _SECRET_NAMES.get(name) or _SECRET_SUFFIXES.get(ext)
    if what is not None:
        return what
    if "env" in name:
        if name == ".env" or ext == "env":
            return ".env file"
        if name.startswith(".env."):
            return None if ext in _ENV_TEMPLATES else ".env file"
    if ext == "json" and (
        name.startswith("client_secret") or "service-account" in name or "service_account" in name
    ):
        return "service account key"
    if ext == "backup" and name.endswith(".tfstate.backup"):
        return "terraform state"
    if name in ("config.json", "config"):
        for suffix, what in _SECRET_PATH_SUFFIXES.items():
            if rel == suffix or rel.endswith("/" + suffix):
                return what
    return None


def _extension(name: str) -> str:
    dot = name.rfind(".")
    return name[dot + 1 :].lower() if dot >= 0 else ""


def _secret_path(rel: str) -> str | None:
    """What kind of secret a root-relative path holds, from its name or a directory on the
    way (for symlink targets, which the walk did not reach by name)."""
    *dirs, name = rel.split("/")
    for part in dirs:
        if part in _SECRET_DIRS:
            return _SECRET_DIRS[part]
    return _secret_name(name, _extension(name), rel)


def _default_file_reason(name: str) -> str | None:
    """Reason a file is a default exclude (overridable by .dowseignore), or None."""
    if name in _LOCKFILES:
        return "lockfile"
    if name.endswith((".min.js", ".min.mjs", ".min.css")):
        return "minified"
    if name.endswith(".map"):
        return "source map"
    return None


# --- content checks ------------------------------------------------------------------------

_CONTROL_BYTES = bytes(set(range(32)) - {8, 9, 10, 12, 13, 27}) + b"\x7f"
_HIGH_BYTES = bytes(range(128, 256))
_MINIFIABLE = frozenset({"js", "mjs", "cjs", "css", "html", "htm", "json"})
_MINIFIED_MIN_BYTES = 4096
_MINIFIED_AVG_LINE = 200


def _looks_binary(data: bytes) -> bool:
    sample = data[:8192]
    if not sample:
        return False
    if b"\0" in sample:
        return True
    odd = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut by the 8 KiB boundary is not evidence of binary.
        if exc.start < len(sample) - 3:
            odd += len(sample) - len(sample.translate(None, _HIGH_BYTES))
    return odd > len(sample) * 0.3


# A tree-sitter grammar's generated parser: tables of numbers (often megabytes) that
# repeat its grammar.js, which is indexed. Known by its first lines, not by its name:
# many C projects write their own src/parser.c.
_TREE_SITTER_PARSER = (b'#include "tree_sitter/parser.h"', b"#define LANGUAGE_VERSION")


def _is_generated_parser(path: str, data: bytes) -> bool:
    head = data[:2048]
    return path.endswith(".c") and all(mark in head for mark in _TREE_SITTER_PARSER)


def check_content(path: str, data: bytes, config: WalkConfig = WalkConfig()) -> str | None:
    """Why a file should not be indexed, judged from its bytes; None when it is fine.

    Reasons: ``"binary"`` (a NUL byte in the first 8 KiB, or mostly control bytes),
    ``"secret: …"`` (a private key, a kubeconfig, a Kubernetes Secret: `secrets.file_secret`;
    not when ``config.include_secrets``), ``"generated parser"`` (a tree-sitter grammar's
    parser.c, by its first lines), ``"minified"`` (a web asset of 4 KiB or more whose
    lines average over 200 bytes). Secrets inside an otherwise ordinary file do not skip it:
    the indexer redacts them (`secrets.redact`).
    """
    if _looks_binary(data):
        return "binary"
    if not config.include_secrets:
        secret = file_secret(data, path)
        if secret is not None:
            return secret
    if _is_generated_parser(path, data):
        return "generated parser"
    if _extension(path.rpartition("/")[2]) in _MINIFIABLE and len(data) >= _MINIFIED_MIN_BYTES:
        lines = data.count(b"\n") + 1
        if len(data) / lines > _MINIFIED_AVG_LINE:
            return "minified"
    return None


# --- the walk --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Dir:
    path: str
    """Absolute path to scan, through symlinks as the walk reached it."""
    rel: str
    """Root-relative POSIX path, '' for the root."""
    real: str
    """Resolved path, for loop detection."""
    git: tuple[Rules, ...]
    dowse: tuple[Rules, ...]
    forced: bool
    """Re-included by a '!' in .dowseignore or the config: defaults do not apply."""


def _size(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    if n >= 1000:
        return f"{n / 1000:.1f} kB"
    return f"{n} B"


def _os_reason(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "unreadable: permission denied"
    return f"unreadable: {(exc.strerror or type(exc).__name__).lower()}"


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def _listed_dir_reason(name: str, names: set[str]) -> str | None:
    """Why a directory is skipped by default, judged from the names it holds, or None."""
    if "pyvenv.cfg" in names:
        return "default exclude: virtualenv"
    if "CACHEDIR.TAG" in names:
        return "default exclude: cache directory (CACHEDIR.TAG)"
    if name in _OUTPUT_DIRS and "__init__.py" not in names:
        return f"default exclude: {name}"
    return None


def _holds_index(path: str, names: set[str]) -> bool:
    """Whether the directory at `path`, holding `names`, is a dowse index (the one this
    run writes is skipped by its path; this finds the others, named as their users
    chose with --index-dir). Lists `db/` only for a directory that also holds a
    manifest.json, which few do."""
    if "manifest.json" not in names or "db" not in names:
        return False
    try:
        with os.scandir(os.path.join(path, "db")) as it:
            return any(e.name.endswith(".lance") for e in it)
    except OSError:
        return False


def _dir_reason(name: str, forced: bool, config: WalkConfig) -> str | None:
    """Why a directory that no ignore rule excluded is skipped by default, or None."""
    if not forced and name in _DEFAULT_EXCLUDED_DIRS:
        return f"default exclude: {name}"
    if not forced and name.endswith(".egg-info"):
        return "default exclude: *.egg-info"
    if not config.include_secrets and name in _SECRET_DIRS:
        return f"secret: {_SECRET_DIRS[name]}"
    return None


class _Walker:
    def __init__(self, root: str, root_real: str, config: WalkConfig, index_real: str) -> None:
        self.root_real = root_real
        self.config = config
        self.index_real = index_real
        self.files: list[WalkEntry] = []
        self.skipped: list[SkippedFile] = []
        self.seen: list[Seen] = []
        self.digests: dict[str, str] = {}
        self.started_ns = time.time_ns()
        self.racy_ns = self.started_ns - RACY_NS
        self.visited: set[str] = {root_real}
        outside = tuple(git_context(root_real, probe=self.probe, read=self.read))
        self.stack = [_Dir(root, "", root_real, outside, (), False)]
        self.deferred: list[tuple[_Dir, str]] = []
        """Symlinked directories with their parent's real path, walked once every real
        directory has been, so that a directory reachable both ways keeps its real path."""
        user = compile_rules("\n".join(config.exclude), strip=0, prepend="")
        self.user: tuple[Rules, ...] = (user,) if user is not None else ()
        # Readability is judged from the stat the walk needs anyway, not with an extra
        # access() call per file. Root reads everything.
        self.euid = os.geteuid() if hasattr(os, "geteuid") else 0
        self.groups = {os.getegid(), *os.getgroups()} if hasattr(os, "getgroups") else set()

    def run(self) -> None:
        while self.stack or self.deferred:
            while self.stack:
                self.scan(self.stack.pop())
            links, self.deferred = sorted(self.deferred, key=lambda item: item[0].rel), []
            for link, parent_real in links:
                if link.real not in self.visited:
                    self.visited.add(link.real)
                    self.stack.append(link)
                elif _inside(parent_real, link.real):
                    self.skip(link.rel + "/", "symlink loop")
                else:
                    self.skip(link.rel + "/", "symlink to a directory already walked")

    def skip(self, rel: str, reason: str) -> None:
        self.skipped.append(SkippedFile(path=rel, reason=reason))

    def probe(self, path: str) -> None:
        """Note a path whose kind alone counts, as it is now (a `.git` directory changes
        with every git command, which changes nothing the walk sees)."""
        try:
            st = os.lstat(path)
        except OSError:
            self.seen.append((path, KIND, None))
            return
        self.seen.append((path, KIND, (stat.S_IFMT(st.st_mode),)))

    def read(self, path: str) -> str | None:
        """An ignore file's text (or None), noted with its stat from before the read and
        the digest of what was read."""
        try:
            st = os.lstat(path)
        except OSError:
            self.seen.append((path, TEXT, None))
            return None
        self.seen.append((path, TEXT, stat_key(st)))
        text = read_text(path)
        self.digests[path] = text_digest(text)
        return text

    def load(self, levels: tuple[Rules, ...], path: str, strip: int) -> tuple[Rules, ...]:
        text = self.read(path)
        rules = compile_rules(text, strip=strip, prepend="") if text is not None else None
        return levels if rules is None else (*levels, rules)

    def scan(self, d: _Dir) -> None:
        try:
            # Before the listing: an entry added while it is read changes the mtime after.
            key = stat_key(os.stat(d.path))
            self.seen.append((d.path, LISTING, key))
            with os.scandir(d.path) as it:
                entries = list(it)
            if key[1] >= self.racy_ns:
                self.digests[d.path] = listing(entries)
        except (FileNotFoundError, NotADirectoryError):
            return  # removed during the walk
        except OSError as exc:
            if not d.rel:
                raise InvalidPath(f"cannot index {d.path}: {_os_reason(exc)}") from None
            self.skip(d.rel + "/", _os_reason(exc))
            return
        names = {e.name for e in entries}
        prefix = d.rel + "/" if d.rel else ""
        if d.rel and _holds_index(d.path, names):
            self.skip(prefix, "index directory (another dowse index)")
            return
        if d.rel and not d.forced:
            reason = _listed_dir_reason(d.rel.rpartition("/")[2], names)
            if reason is not None:
                self.skip(prefix, reason)
                return
        base = Path(d.path)
        git, dowse = d.git, d.dowse
        if ".gitignore" in names:
            git = self.load(git, os.path.join(d.path, ".gitignore"), len(prefix))
        if ".dowseignore" in names:
            dowse = self.load(dowse, os.path.join(d.path, ".dowseignore"), len(prefix))

        for entry in entries:
            name = entry.name
            rel = prefix + name
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                shown = os.fsencode(rel).decode("utf-8", "backslashreplace")
                self.skip(shown, "undecodable file name")
                continue
            try:
                is_link = entry.is_symlink()
                is_dir = not is_link and entry.is_dir(follow_symlinks=False)
            except OSError:
                continue  # removed during the walk
            shown = rel + "/" if is_dir else rel
            if name in _VCS_DIRS:
                self.skip(shown, f"default exclude: {name}")
                continue
            real = d.real + "/" + name
            if is_dir and real == self.index_real:
                self.skip(shown, "index directory")
                continue
            # Git matches a symlink as a file, even one that points to a directory.
            if decide(git, rel, is_dir):
                self.skip(shown, "gitignored")
                continue
            user = decide(self.user, rel, is_dir)
            if user:
                self.skip(shown, "excluded by config")
                continue
            mine = None if user is False else decide(dowse, rel, is_dir)
            if mine:
                self.skip(shown, "dowseignored")
                continue
            forced = user is False or mine is False

            if is_dir:
                reason = _dir_reason(name, forced, self.config)
                if reason is None and real in self.visited:
                    reason = "directory already walked"  # a bind mount
                if reason is not None:
                    self.skip(shown, reason)
                else:
                    self.visited.add(real)
                    self.stack.append(_Dir(entry.path, rel, real, git, dowse, forced))
            elif is_link:
                self.link(_Dir(entry.path, rel, real, git, dowse, forced), d.real)
            else:
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    self.skip(rel, _os_reason(exc))
                    continue
                self.file(rel, name, forced, st, base / name)

    def link(self, d: _Dir, parent_real: str) -> None:
        try:
            st = os.stat(d.path)
        except FileNotFoundError:
            self.skip(d.rel, "broken symlink")
            return
        except OSError as exc:
            self.skip(d.rel, "symlink loop" if exc.errno == errno.ELOOP else _os_reason(exc))
            return
        is_dir = stat.S_ISDIR(st.st_mode)
        shown = d.rel + "/" if is_dir else d.rel
        target = os.path.realpath(d.path)
        if not _inside(target, self.root_real):
            self.skip(shown, "symlink outside root")
            return
        if _inside(target, self.index_real):
            self.skip(shown, "symlink into index directory")
            return
        if not self.config.include_secrets:
            # A harmless name must not smuggle a secret in: judge the target's path too.
            secret = _secret_path(os.path.relpath(target, self.root_real).replace(os.sep, "/"))
            if secret is not None:
                self.skip(shown, f"secret: {secret} (symlink target)")
                return
        name = d.rel.rpartition("/")[2]
        if not is_dir:
            # The target itself, not the link, is what gets opened and compared: the link
            # may be changed later to lead elsewhere.
            try:
                st = os.stat(target, follow_symlinks=False)
            except OSError:
                return  # changed during the walk
            self.file(d.rel, name, d.forced, st, Path(target))
            return
        reason = _dir_reason(name, d.forced, self.config)
        if reason is not None:
            self.skip(shown, reason)
        else:
            self.deferred.append((replace(d, real=target), parent_real))

    def file(self, rel: str, name: str, forced: bool, st: os.stat_result, abspath: Path) -> None:
        self.seen.append((str(abspath), STAT, stat_key(st)))
        ext = _extension(name)
        reason = None if forced else _default_file_reason(name)
        if reason is None and not self.config.include_secrets:
            secret = _secret_name(name, ext, rel)
            reason = None if secret is None else f"secret: {secret}"
        if reason is None and (ext in _BINARY_EXTENSIONS or name in _BINARY_NAMES):
            reason = "binary (extension)"
        if reason is None and not stat.S_ISREG(st.st_mode):
            reason = "not a regular file"
        if reason is None and not self.readable(st):
            reason = "unreadable: permission denied"
        limit = self.config.max_file_bytes
        if reason is None and st.st_size > limit:
            reason = f"too large ({_size(st.st_size)} > {_size(limit)})"
        if reason is not None:
            self.skip(rel, reason)
        else:
            self.files.append(
                WalkEntry(rel, abspath, st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino)
            )

    def readable(self, st: os.stat_result) -> bool:
        if self.euid == 0:
            return True
        if st.st_uid == self.euid:
            return bool(st.st_mode & stat.S_IRUSR)
        if st.st_gid in self.groups:
            return bool(st.st_mode & stat.S_IRGRP)
        return bool(st.st_mode & stat.S_IROTH)


def walk(
    root: Path, config: WalkConfig = WalkConfig(), *, index_dir: Path | None = None
) -> WalkResult:
    """List the files under `root` to index, and every path left out with its reason.

    Raises `InvalidPath` when `root` does not exist, is not a directory, or cannot be
    listed.
    """
    root_str = os.path.abspath(root)
    try:
        is_dir = stat.S_ISDIR(os.stat(root_str).st_mode)
    except FileNotFoundError:
        raise InvalidPath(f"cannot index {root_str}: no such directory") from None
    except OSError as exc:
        raise InvalidPath(f"cannot index {root_str}: {_os_reason(exc)}") from None
    if not is_dir:
        raise InvalidPath(f"cannot index {root_str}: not a directory")
    root_real = os.path.realpath(root_str)
    index_real = os.path.realpath(
        index_dir if index_dir is not None else os.path.join(root_str, INDEX_DIR_NAME)
    )
    walker = _Walker(root_str, root_real, config, index_real)
    walker.run()
    return WalkResult(
        files=sorted(walker.files, key=lambda f: f.path),
        skipped=sorted(walker.skipped, key=lambda s: s.path),
        seen=walker.seen,
        digests=walker.digests,
        started_ns=walker.started_ns,
    )
