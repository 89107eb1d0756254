"""Resolve import statements to the indexed files they refer to.

Resolution is by path convention and the project's own manifests only (no interpreter, no
build system, no network):

- Python: dotted and relative modules (`pkg/mod.py`, `pkg/__init__.py`, or the same below
  a source directory).
- JavaScript/TypeScript: relative specifiers, the `paths` aliases and `baseUrl` of the
  nearest tsconfig.json/jsconfig.json (following a relative `extends`), `index` files, and
  `./x.js` written for the TypeScript file `x.ts`.
- Go: an import path inside a module that a go.mod declares names a directory; it resolves
  to that directory's `.go` files that are not tests (`vendor/` copies count too).
- Rust: `mod foo;` (as "mod foo") to `foo.rs` or `foo/mod.rs` beside the declaring module;
  `use` paths starting with `crate`, `self`, `super`, a crate of the workspace (its
  Cargo.toml name) or a module declared beside the importer, to the file of the longest
  prefix that is a module (a crate's own root when no module matches); in a package's
  `tests/`, whose files are integration test crates' roots, `crate::util` is
  `tests/util.rs`.
- Java/Kotlin/Scala: a class import to the file named after the class below any source
  root (`com/x/Foo.java`), a nested class or static member to its outer class's file, a
  package (`com.x.*`) to the package directory's files.
- C/C++: `#include` relative to the including file, then in each enclosing directory and
  its `include/`, `inc/`, `src/` or `lib/`, then the one file whose path ends with it
  (nearest the includer when several do; never for a C or POSIX header such as
  `stddef.h`). A header is followed by its implementation
  (`foo.h` -> `foo.c`/`foo.cc`/`foo.cpp` beside it, or in the `src/` matching its
  `include/`, or the only one of that name).

Invariants:
- `ImportResolver.resolve` returns indexed paths only, each once, never the importer: first
  the file(s) the import names, then their companions (a header's implementation files).
  An import with no convention here (standard libraries, third-party packages) resolves
  to nothing rather than to a guess.
- Manifests are read once, through the `read` callback given to `read_layout`; a
  manifest that cannot be read or parsed is ignored (its imports stay unresolved).
"""

from __future__ import annotations

import json
import posixpath
import re
import tomllib
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field

__all__ = ["ImportResolver", "Layout", "read_layout", "resolve_import", "suffix_map"]

_JS_LANGS = {"javascript", "typescript", "tsx"}
_JS_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_JVM_EXTS = {"java": ".java", "kotlin": ".kt", "scala": ".scala"}
_C_LANGS = {"c", "cpp"}
HEADER_EXTS = (".h", ".hh", ".hpp", ".hxx", ".h++")
IMPLEMENTATION_EXTS = (".c", ".cc", ".cpp", ".cxx", ".c++")
_INCLUDE_DIRS = ("", "include", "inc", "src", "lib")
_TS_CONFIGS = ("tsconfig.json", "jsconfig.json")
_GO_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?", re.MULTILINE)
_RUST_ROOTS = ("lib.rs", "main.rs", "mod.rs")
SYSTEM_HEADERS = frozenset(
    (
        "assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h "
        "locale.h math.h setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbool.h "
        "stddef.h stdint.h stdio.h stdlib.h stdnoreturn.h string.h tgmath.h threads.h "
        "time.h uchar.h wchar.h wctype.h unistd.h fcntl.h pthread.h dirent.h dlfcn.h "
        "poll.h sched.h semaphore.h strings.h syslog.h termios.h utime.h windows.h "
        "intrin.h immintrin.h emmintrin.h malloc.h io.h direct.h process.h"
    ).split()
)
"""C and POSIX headers an include means even where the tree has a file of that name."""
MAX_EXTENDS = 4
"""How many tsconfig `extends` hops are followed."""


def _python(
    module: str, importer: str, paths: Collection[str], suffixes: dict[str, str]
) -> str | None:
    level = len(module) - len(module.lstrip("."))
    dotted = module[level:]
    parts = [p for p in dotted.split(".") if p]
    if level:
        base = posixpath.dirname(importer)
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        stems = [posixpath.join(base, *parts) if parts else base]
    else:
        if not parts:
            return None
        stems = ["/".join(parts)]
    for stem in stems:
        for cand in (stem + ".py", stem + "/__init__.py", stem + ".pyi"):
            if cand in paths:
                return cand
    if not level:
        # A package under a source directory (src/pkg/mod.py) or a sub-project:
        # match the dotted path as a suffix of an indexed path.
        for tail in ("/".join(parts) + ".py", "/".join(parts) + "/__init__.py"):
            if tail in suffixes:
                return suffixes[tail]
    return None


def _js_file(stem: str, paths: Collection[str]) -> str | None:
    """The file a JS/TS specifier resolved to `stem` loads: as written, with an
    extension, as a directory's index file."""
    stem = posixpath.normpath(stem)
    if stem in paths:
        return stem
    for ext in _JS_EXTS:
        if stem + ext in paths:
            return stem + ext
    # TypeScript's ES-module convention: `import "./x.js"` written for x.ts.
    base, ext = posixpath.splitext(stem)
    if ext in (".js", ".jsx", ".mjs", ".cjs"):
        for ts in (".ts", ".tsx", ".mts", ".cts"):
            if base + ts in paths:
                return base + ts
    for ext in _JS_EXTS:
        if f"{stem}/index{ext}" in paths:
            return f"{stem}/index{ext}"
    return None


def _js(module: str, importer: str, paths: Collection[str]) -> str | None:
    if not module.startswith("."):
        return None
    return _js_file(posixpath.join(posixpath.dirname(importer), module), paths)


def suffix_map(paths: Collection[str]) -> dict[str, str]:
    """Path suffixes of the Python files below a source directory ('b/c.py' -> 'src/b/c.py'),
    shortest path wins.

    A suffix counts only where the directory before it is not itself a package: an
    absolute `import datetime` can mean `src/datetime.py` but never
    `pkg/functions/datetime.py`, which is only importable as `pkg.functions.datetime`.
    """
    packages = {
        posixpath.dirname(p)
        for p in paths
        if posixpath.basename(p) in ("__init__.py", "__init__.pyi")
    }
    out: dict[str, str] = {}
    for p in sorted(paths, key=lambda p: (p.count("/"), p)):
        if p.endswith((".py", ".pyi")):
            parts = p.split("/")
            for i in range(1, len(parts)):
                if "/".join(parts[:i]) not in packages:
                    out.setdefault("/".join(parts[i:]), p)
    return out


def resolve_import(
    module: str,
    importer: str,
    language: str,
    paths: Collection[str],
    suffixes: dict[str, str] | None = None,
) -> str | None:
    """The indexed Python or relative JS/TS file `module` (as written in `importer`)
    refers to, if any: the manifest-free part of `ImportResolver`, one file per import."""
    if not module:
        return None
    if language == "python":
        return _python(module, importer, paths, suffixes if suffixes is not None else {})
    if language in _JS_LANGS:
        return _js(module, importer, paths)
    return None


# -- manifests -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TsPaths:
    """The module aliases of one tsconfig.json: `paths` patterns relative to `base`."""

    base: str  # the directory `paths` and `baseUrl` resolve against ("" at the root)
    paths: tuple[tuple[str, tuple[str, ...]], ...] = ()
    base_url: bool = False  # whether bare specifiers resolve against `base` too


@dataclass(frozen=True)
class Layout:
    """What the project's manifests say about where modules live."""

    go_modules: dict[str, str] = field(default_factory=dict)
    """Go module path -> the directory of its go.mod ("" at the root)."""
    rust_crates: dict[str, str] = field(default_factory=dict)
    """Rust crate name as `use` writes it -> the directory of its root file."""
    rust_packages: frozenset[str] = frozenset()
    """Directories of a Cargo.toml with a package: each file directly in its `tests/` is
    the root of an integration test crate."""
    ts_configs: dict[str, TsPaths] = field(default_factory=dict)
    """Directory of a tsconfig.json/jsconfig.json that defines aliases -> the aliases."""


def _dirs_of(paths: Iterable[str]) -> set[str]:
    """Every directory holding one of `paths`, with all its ancestors ("" is the root)."""
    out: set[str] = set()
    for p in paths:
        d = posixpath.dirname(p)
        while d not in out:
            out.add(d)
            if not d:
                break
            d = posixpath.dirname(d)
    return out


def _join(directory: str, name: str) -> str:
    return posixpath.normpath(posixpath.join(directory, name)) if directory else name


def _decode(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")


def read_layout(paths: Collection[str], read: Callable[[str], bytes | None]) -> Layout:
    """The go.mod, Cargo.toml and tsconfig.json files above the code in `paths`, read with
    `read(relative path) -> bytes or None`."""
    go_dirs = _dirs_of(p for p in paths if p.endswith(".go"))
    rust_dirs = _dirs_of(p for p in paths if p.endswith(".rs"))
    js_dirs = _dirs_of(p for p in paths if p.endswith(_JS_EXTS))
    go_modules: dict[str, str] = {}
    for d in sorted(go_dirs):
        text = _decode(read(_join(d, "go.mod")))
        match = _GO_MODULE.search(text) if text else None
        if match:
            go_modules.setdefault(match.group(1), d)
    rust_crates: dict[str, str] = {}
    rust_packages: set[str] = set()
    for d in sorted(rust_dirs):
        crate = _cargo_crate(read, d)
        if crate is not None:
            rust_crates.setdefault(*crate)
            rust_packages.add(d)
    ts_configs: dict[str, TsPaths] = {}
    for d in sorted(js_dirs):
        for name in _TS_CONFIGS:
            aliases = _ts_paths(read, _join(d, name))
            if aliases is not None:
                ts_configs[d] = aliases
                break
    return Layout(
        go_modules=go_modules,
        rust_crates=rust_crates,
        rust_packages=frozenset(rust_packages),
        ts_configs=ts_configs,
    )


def _cargo_crate(read: Callable[[str], bytes | None], directory: str) -> tuple[str, str] | None:
    text = _decode(read(_join(directory, "Cargo.toml")))
    if not text:
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    package, lib = data.get("package"), data.get("lib")
    if not isinstance(package, dict) or not isinstance(package.get("name"), str):
        return None
    name = package["name"]
    root = "src/lib.rs"
    if isinstance(lib, dict):
        name = lib["name"] if isinstance(lib.get("name"), str) else name
        root = lib["path"] if isinstance(lib.get("path"), str) else root
    return name.replace("-", "_"), posixpath.dirname(_join(directory, root))


# Strings are matched first so that `//` inside "https://..." is not taken for a comment.
_JSONC = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def _jsonc(text: str) -> object:
    """JSON with comments and trailing commas, as tsconfig.json allows."""
    return json.loads(_JSONC.sub(lambda m: m.group(1) or "", text))


def _ts_paths(read: Callable[[str], bytes | None], path: str, depth: int = 0) -> TsPaths | None:
    text = _decode(read(path))
    if not text:
        return None
    try:
        data = _jsonc(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    here = posixpath.dirname(path)
    options = data.get("compilerOptions")
    options = options if isinstance(options, dict) else {}
    base_url = options.get("baseUrl")
    raw = options.get("paths")
    if isinstance(raw, dict) or isinstance(base_url, str):
        base = _join(here, base_url) if isinstance(base_url, str) else here
        base = "" if base == "." else base
        aliases = tuple(
            (pattern, tuple(t for t in targets if isinstance(t, str)))
            for pattern, targets in (raw or {}).items()
            if isinstance(pattern, str) and isinstance(targets, list)
        )
        return TsPaths(base=base, paths=aliases, base_url=isinstance(base_url, str))
    parent = data.get("extends")
    if isinstance(parent, str) and parent.startswith(".") and depth < MAX_EXTENDS:
        target = _join(here, parent)
        return _ts_paths(read, target if target.endswith(".json") else target + ".json", depth + 1)
    return None


# -- the resolver --------------------------------------------------------------------------


def _stem(path: str) -> str:
    return posixpath.splitext(posixpath.basename(path))[0]


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/"), b.split("/"), strict=False):
        if x != y:
            break
        n += 1
    return n


class ImportResolver:
    """Resolves imports of every language with a convention here against one file set.

    The look-up tables each language needs are built on first use, so resolving only
    Python imports costs what `resolve_import` does.
    """

    def __init__(self, paths: Collection[str], layout: Layout | None = None) -> None:
        self.paths = paths if isinstance(paths, (set, frozenset)) else set(paths)
        self.layout = layout or Layout()
        self._suffixes: dict[str, str] | None = None
        self._dir_files: dict[str, list[str]] | None = None
        self._tails: dict[str, list[str]] | None = None
        self._jvm_dirs: dict[str, list[str]] | None = None

    # -- tables ------------------------------------------------------------------------

    @property
    def suffixes(self) -> dict[str, str]:
        if self._suffixes is None:
            self._suffixes = suffix_map(self.paths)
        return self._suffixes

    @property
    def dir_files(self) -> dict[str, list[str]]:
        """Directory -> the files directly in it, sorted."""
        if self._dir_files is None:
            out: dict[str, list[str]] = defaultdict(list)
            for p in sorted(self.paths):
                out[posixpath.dirname(p)].append(p)
            self._dir_files = dict(out)
        return self._dir_files

    @property
    def tails(self) -> dict[str, list[str]]:
        """Path tail ('fmt/format.h', 'com/x/Foo.java') -> the C/C++ and JVM files ending so."""
        if self._tails is None:
            exts = (*HEADER_EXTS, *IMPLEMENTATION_EXTS, *_JVM_EXTS.values())
            out: dict[str, list[str]] = defaultdict(list)
            for p in sorted(self.paths):
                if p.endswith(exts):
                    parts = p.split("/")
                    for i in range(len(parts)):
                        out["/".join(parts[i:])].append(p)
            self._tails = dict(out)
        return self._tails

    @property
    def jvm_dirs(self) -> dict[str, list[str]]:
        """Package directory tail ('com/x') -> the directories ending so that hold JVM files."""
        if self._jvm_dirs is None:
            out: dict[str, list[str]] = defaultdict(list)
            dirs = {
                posixpath.dirname(p) for p in self.paths if p.endswith(tuple(_JVM_EXTS.values()))
            }
            for d in sorted(dirs):
                parts = d.split("/")
                for i in range(len(parts)):
                    out["/".join(parts[i:])].append(d)
            self._jvm_dirs = dict(out)
        return self._jvm_dirs

    # -- resolution --------------------------------------------------------------------

    def resolve(
        self, module: str, importer: str, language: str, names: Sequence[str] = ()
    ) -> list[str]:
        """The indexed files `module` (as written in `importer`) refers to; see the module doc."""
        if not module:
            return []
        found: list[str]
        if language == "python":
            one = _python(module, importer, self.paths, self.suffixes)
            found = [one] if one else []
        elif language in _JS_LANGS:
            one = _js(module, importer, self.paths) or self._ts_alias(module, importer)
            found = [one] if one else []
        elif language == "go":
            found = self._go(module)
        elif language == "rust":
            found = self._rust(module, importer, names)
        elif language in _JVM_EXTS:
            found = self._jvm(module)
        elif language in _C_LANGS:
            header = self._include(module, importer)
            found = [header, *self.implementations(header)] if header else []
        else:
            found = []
        return [p for p in dict.fromkeys(found) if p != importer]

    def _ts_alias(self, module: str, importer: str) -> str | None:
        configs = self.layout.ts_configs
        if not configs or module.startswith((".", "/")):
            return None
        d = posixpath.dirname(importer)
        while d not in configs:
            if not d:
                return None
            d = posixpath.dirname(d)
        config = configs[d]
        for pattern, targets in config.paths:
            star = _match_alias(pattern, module)
            if star is None:
                continue
            for target in targets:
                found = _js_file(_join(config.base, target.replace("*", star, 1)), self.paths)
                if found:
                    return found
        if config.base_url:
            return _js_file(_join(config.base, module), self.paths)
        return None

    def _go(self, module: str) -> list[str]:
        best = ""
        for path in self.layout.go_modules:
            if (module == path or module.startswith(path + "/")) and len(path) > len(best):
                best = path
        candidates: list[str] = []
        if best:
            directory = self.layout.go_modules[best]
            candidates.append(_join(directory, module[len(best) :].lstrip("/") or "."))
        # Vendored copies of dependencies sit under each module's vendor/.
        candidates += [_join(d, "vendor/" + module) for d in self.layout.go_modules.values()]
        for candidate in candidates:
            candidate = "" if candidate == "." else candidate
            files = [
                p
                for p in self.dir_files.get(candidate, [])
                if p.endswith(".go") and not p.endswith("_test.go")
            ]
            if files:
                return files
        return []

    def _rust(self, module: str, importer: str, names: Sequence[str]) -> list[str]:
        if module.startswith("mod "):
            name = module[4:].strip()
            found = self._rust_file(_join(self._rust_module_dir(importer), name)) if name else None
            return [found] if found else []
        parts = [p for p in module.split("::") if p]
        if not parts:
            return []
        found = self._rust_path(parts, importer)
        if not found:
            return []
        subs = [self._rust_path([*parts, n], importer) for n in names if n not in ("self", "*")]
        deeper = [s for s in subs if s and s != found]
        return deeper if names and len(deeper) == len(names) else [found, *deeper]

    def _rust_path(self, parts: list[str], importer: str) -> str | None:
        here = self._rust_module_dir(importer)
        base: str | None
        rest = parts[1:]
        if parts[0] == "crate":
            base = self._rust_crate_dir(importer)
        elif parts[0] in ("self", "super"):
            base, rest = here, parts if parts[0] == "super" else rest
            while rest and rest[0] == "super":
                base, rest = posixpath.dirname(base), rest[1:]
        elif parts[0] in self.layout.rust_crates:
            base = self.layout.rust_crates[parts[0]]
        elif self._rust_file(_join(here, parts[0])):
            # 2018 paths: `use util::x` where `mod util;` is declared beside the importer.
            base, rest = here, parts
        else:
            return None
        if base is None:
            return None
        for k in range(len(rest), 0, -1):
            found = self._rust_file(_join(base, "/".join(rest[:k])))
            if found:
                return found
        return self._rust_root(base)

    def _rust_file(self, stem: str) -> str | None:
        for candidate in (stem + ".rs", stem + "/mod.rs"):
            if candidate in self.paths:
                return candidate
        return None

    def _rust_root(self, directory: str) -> str | None:
        """The file of the module whose children live in `directory`."""
        for name in ("lib.rs", "main.rs", "mod.rs"):
            if _join(directory, name) in self.paths:
                return _join(directory, name)
        return directory + ".rs" if directory + ".rs" in self.paths else None

    def _rust_crate_dir(self, importer: str) -> str | None:
        d = posixpath.dirname(importer)
        while True:
            if any(_join(d, n) in self.paths for n in ("lib.rs", "main.rs")):
                return d
            if d in self.layout.rust_crates.values():
                return d
            if self._rust_tests_dir(d):
                # An integration test crate (ripgrep's tests/tests.rs, or each tests/x.rs):
                # its root is a file of tests/, and `crate::util` the module beside it.
                return d
            if not d:
                return None
            d = posixpath.dirname(d)

    def _rust_tests_dir(self, directory: str) -> bool:
        """Whether `directory` is a package's `tests/`, whose files are crate roots."""
        return (
            posixpath.basename(directory) == "tests"
            and posixpath.dirname(directory) in self.layout.rust_packages
        )

    def _rust_module_dir(self, path: str) -> str:
        """The directory holding the child modules of the module `path` defines: a
        crate root's own directory (an integration test's too), else the directory named
        after it."""
        d = posixpath.dirname(path)
        if posixpath.basename(path) in _RUST_ROOTS or self._rust_tests_dir(d):
            return d
        return _join(d, _stem(path))

    def _jvm(self, module: str) -> list[str]:
        parts = [p for p in module.split(".") if p and p != "*"]
        if len(parts) < 2:
            return []
        tail = "/".join(parts)
        for ext in _JVM_EXTS.values():
            if files := self.tails.get(tail + ext):
                return files[:1]
        # `import com.x.*` (written without the star here): the package's files.
        for directory in self.jvm_dirs.get(tail, [])[:1]:
            return [p for p in self.dir_files[directory] if p.endswith(tuple(_JVM_EXTS.values()))]
        # A nested class or a static member: the outer class's file.
        for k in range(len(parts) - 1, 1, -1):
            for ext in _JVM_EXTS.values():
                if files := self.tails.get("/".join(parts[:k]) + ext):
                    return files[:1]
        return []

    def _include(self, module: str, importer: str) -> str | None:
        if module.startswith("/"):
            return None
        d = posixpath.dirname(importer)
        direct = _join(d, module)
        if direct in self.paths:
            return direct
        while True:
            for sub in _INCLUDE_DIRS:
                candidate = _join(_join(d, sub) if sub else d, module)
                if candidate in self.paths and not candidate.startswith("../"):
                    return candidate
            if not d:
                break
            d = posixpath.dirname(d)
        ending = self.tails.get(posixpath.normpath(module), [])
        scored = sorted(ending, key=lambda p: -_common_prefix(p, importer))
        if not scored:
            return None
        near = _common_prefix(scored[0], importer)
        if len(scored) > 1 and near == _common_prefix(scored[1], importer):
            return None  # two equally near files: no guess
        if module in SYSTEM_HEADERS or module.startswith(("sys/", "linux/")):
            # `<stddef.h>` is the system's, not a same-named shim in another corner.
            return None
        return scored[0]

    def implementations(self, header: str) -> list[str]:
        """The implementation files of a C/C++ header (`foo.h` -> `foo.c`, `foo.cpp`)."""
        if not header.endswith(HEADER_EXTS):
            return []
        stem, d = _stem(header), posixpath.dirname(header)
        beside = [_join(d, stem + ext) for ext in IMPLEMENTATION_EXTS]
        found = [p for p in beside if p in self.paths]
        if found:
            return found
        parts = d.split("/") if d else []
        if "include" in parts:
            # include/fmt/format.h -> src/fmt/format.cc or src/format.cc
            i = len(parts) - 1 - parts[::-1].index("include")
            root, below = parts[:i], parts[i + 1 :]
            for sub in (below, []):
                src = "/".join([*root, "src", *sub])
                found = [_join(src, stem + e) for e in IMPLEMENTATION_EXTS]
                found = [p for p in found if p in self.paths]
                if found:
                    return found
        named = [p for ext in IMPLEMENTATION_EXTS for p in self.tails.get(stem + ext, [])]
        return named if len(named) == 1 else []


def _match_alias(pattern: str, module: str) -> str | None:
    """What `*` stands for when `module` matches a tsconfig `paths` pattern ("" if exact)."""
    if "*" not in pattern:
        return "" if pattern == module else None
    prefix, _, suffix = pattern.partition("*")
    if module.startswith(prefix) and module.endswith(suffix) and len(module) >= len(pattern) - 1:
        return module[len(prefix) : len(module) - len(suffix)]
    return None
