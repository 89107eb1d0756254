"""The tree explorer: the scope's directory structure and its key files by convention.

Outputs, by `ExploreResult` field:

- ``tree``: a `TreeNode` rooted at the scope, three levels deep, built from the walked files
  (so ignores, secrets and size limits already apply). A directory's ``files`` counts every
  file below it; children are directories first, then files by name; at most
  `MAX_CHILDREN` are listed and ``truncated`` counts the rest. A directory at the depth
  limit lists no children: its ``truncated`` is the number it has. Directories come by
  `tree_rank` (source, then tests and hidden configuration directories, then docs,
  examples and benchmarks), then most files first, then by name; a budget keeps the
  tree's nodes in the same rank order (explore.render), so a tight one shows the source
  package before the docs pages.
- ``key_files``: up to `MAX_KEY_FILES` `KeyFile` records (entry points, package roots,
  readmes, configs, CI), most important first: shallower before deeper, then by kind, then
  by path. Each one comes with a claim citing the line that justifies its role; a file with
  nothing to quote (an empty ``__init__.py``) is listed without a claim. Beside the files
  named by convention, the `CORE_FILES` source files with the most code in functions
  (`_core_files`), ranked with the repository-level files and cited at their largest
  definition: where most of the code a reader must know lives is named by no convention
  (ky's ``source/core/Ky.ts``, 1,140 of its 4,001 source lines, was in no part of its
  report; its key files were its configs).

Only ``.py`` and ``.go`` files are read in full (for ``if __name__ == "__main__":`` and
``func main()``), at most `MAX_SCANNED` of them, shallowest first, and the `_CORE_SCAN`
largest source files (parsed); every other role comes from the file's name and one
located line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from posixpath import basename, dirname

from dowse.explore.records import KeyFile, TrackSpec, TreeNode
from dowse.explore.tracks import Context, Track, TrackState, cite, largest_subdirs
from dowse.indexer.parse import parse_source
from dowse.indexer.records import Symbol
from dowse.languages import (
    CODE_LANGUAGES,
    is_benchmark_path,
    is_example_path,
    is_generated_path,
    is_test_attribute,
    is_test_code,
    is_test_path,
    is_test_support_path,
    is_vendored_path,
    language_for,
)

__all__ = [
    "CORE_FILES",
    "MAX_CHILDREN",
    "MAX_KEY_FILES",
    "MAX_LEVELS",
    "MAX_SCANNED",
    "NO_ENTRY_POINT",
    "tree_rank",
    "tree_track",
]

MAX_LEVELS = 3
CORE_FILES = 3
"""The source files with the most lines of behaviour listed as key files (core modules)."""
_CORE_SCAN = 12
"""The largest files on disk read for `CORE_FILES` (a parse each)."""
_CORE_MIN_LINES = 100
"""Lines in functions that make a core module: below it a file is read at a glance, and in
a small project every file is as much its core as any other."""
_BEHAVIOUR_KINDS = frozenset({"function", "method", "constructor"})
MAX_CHILDREN = 25
MAX_KEY_FILES = 30
MAX_SCANNED = 3000
"""Python and Go files read to find scripts and `func main` (shallowest first)."""
_PER_KIND = 8
"""At most this many key files of one kind, so 40 CI workflows cannot crowd out the rest."""
_SPLIT_MIN_FILES = 1500
NO_ENTRY_POINT = "no entry point found by convention (main files, __main__ guards, func main, bin/)"
"""The tree's gap when no file's name and lines make it an entry point; a manifest's
declared entry points answer it (the synthesis leaves it out then)."""

# Kinds, most important first; the number is the kind's rank in the key-file order.
(
    _README,
    _AGENTS,
    _MANIFEST,
    _ENTRY,
    _CORE,
    _PACKAGE,
    _CONFIG,
    _CI,
    _GUIDE,
    _SUBREADME,
    _INDEX,
    _SCRIPT,
) = range(12)
_TEST_DIRS = {"tests", "test", "__tests__", "testdata", "fixtures"}
_TEST_PENALTY = 2
"""Key files under a test directory sort as if this many levels deeper."""

_MAIN_GUARD = re.compile(r"""^if\s+__name__\s*==\s*['"]__main__['"]""", re.MULTILINE)
_GO_MAIN = re.compile(r"^func\s+main\s*\(", re.MULTILINE)
_RS_MAIN = re.compile(r"^\s*(pub\s+)?(async\s+)?fn\s+main\s*\(")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_RST_RULE = re.compile(r"""^\s*([=\-`:'"~^_*+#<>.])\1+\s*$""")
_CI_DIRS = (".github/", ".circleci/", ".gitlab/", ".buildkite/")


@dataclass(frozen=True)
class _Rule:
    kind: int
    role: str
    line: str | None = None
    """A regex for the line that justifies the role; None = the first non-blank line."""
    strict: bool = False
    """The name alone is not enough: without a line matching `line` it is no key file."""


_PY_ENTRY = r"""^if\s+__name__\s*==|^def\s+main\s*\("""
_PY_APP = _PY_ENTRY + r"|^app\s*=|^application\s*="
_NAMED: dict[str, _Rule] = {
    "agents.md": _Rule(_AGENTS, "instructions for coding agents"),
    "claude.md": _Rule(_AGENTS, "instructions for coding agents"),
    "pyproject.toml": _Rule(
        _MANIFEST,
        "Python project config (pyproject)",
        r"^\s*\[(project|tool\.poetry|build-system)\]",
    ),
    "setup.py": _Rule(_MANIFEST, "setuptools build script", r"\bsetup\s*\("),
    "setup.cfg": _Rule(_MANIFEST, "setuptools config", r"^\s*\[(metadata|options)\]"),
    "package.json": _Rule(_MANIFEST, "npm package manifest", r'^\s*"name"\s*:'),
    "cargo.toml": _Rule(_MANIFEST, "Rust crate manifest (Cargo)", r"^\s*\[(package|workspace)\]"),
    "go.mod": _Rule(_MANIFEST, "Go module definition", r"^module\s"),
    "pom.xml": _Rule(_MANIFEST, "Maven project", r"<project\b"),
    "build.gradle": _Rule(_MANIFEST, "Gradle build script"),
    "build.gradle.kts": _Rule(_MANIFEST, "Gradle build script (Kotlin)"),
    "gemfile": _Rule(_MANIFEST, "Ruby dependencies (Bundler)", r"^\s*(source|gem|gemspec)\b"),
    "composer.json": _Rule(_MANIFEST, "PHP package manifest (Composer)", r'^\s*"name"\s*:'),
    "deno.json": _Rule(_MANIFEST, "Deno config"),
    "deno.jsonc": _Rule(_MANIFEST, "Deno config"),
    "requirements.txt": _Rule(_MANIFEST, "pip requirements", r"^\s*[A-Za-z0-9-]"),
    "cmakelists.txt": _Rule(_MANIFEST, "CMake build", r"^\s*project\s*\("),
    "__main__.py": _Rule(_ENTRY, "entry point: python -m {package}", _PY_ENTRY),
    "manage.py": _Rule(_ENTRY, "Django management script", _PY_ENTRY),
    "main.py": _Rule(_ENTRY, "program entry point", _PY_APP, strict=True),
    "cli.py": _Rule(
        _ENTRY, "command-line interface", _PY_ENTRY + r"|^\s*@click\.|argparse|typer", strict=True
    ),
    "app.py": _Rule(_ENTRY, "application entry point", _PY_APP, strict=True),
    "wsgi.py": _Rule(_ENTRY, "WSGI application", r"^application\s*=", strict=True),
    "asgi.py": _Rule(_ENTRY, "ASGI application", r"^application\s*=", strict=True),
    "main.go": _Rule(_ENTRY, "Go program entry (func main)", _GO_MAIN.pattern),
    "main.rs": _Rule(_ENTRY, "Rust binary entry (fn main)", _RS_MAIN.pattern),
    "lib.rs": _Rule(_ENTRY, "Rust library crate root"),
    "build.rs": _Rule(_CONFIG, "Cargo build script", _RS_MAIN.pattern),
    "tsconfig.json": _Rule(_CONFIG, "TypeScript compiler config", r'"compilerOptions"'),
    "dockerfile": _Rule(_CONFIG, "container image build (Docker)", r"^\s*FROM\s"),
    "docker-compose.yml": _Rule(_CONFIG, "container services (Compose)", r"^services\s*:"),
    "docker-compose.yaml": _Rule(_CONFIG, "container services (Compose)", r"^services\s*:"),
    "compose.yml": _Rule(_CONFIG, "container services (Compose)", r"^services\s*:"),
    "compose.yaml": _Rule(_CONFIG, "container services (Compose)", r"^services\s*:"),
    "makefile": _Rule(_CONFIG, "build tasks (make)", r"^[A-Za-z0-9_.%/-]+\s*:(?!=)"),
    "gnumakefile": _Rule(_CONFIG, "build tasks (make)", r"^[A-Za-z0-9_.%/-]+\s*:(?!=)"),
    "justfile": _Rule(_CONFIG, "build tasks (just)"),
    "tox.ini": _Rule(_CONFIG, "test environments (tox)", r"^\s*\[(tox|testenv)"),
    "noxfile.py": _Rule(_CONFIG, "test sessions (nox)", r"^\s*@nox\.session"),
    ".pre-commit-config.yaml": _Rule(_CONFIG, "pre-commit hooks", r"^repos\s*:"),
    ".gitlab-ci.yml": _Rule(_CI, "CI pipeline (GitLab)"),
    ".travis.yml": _Rule(_CI, "CI pipeline (Travis)"),
    "azure-pipelines.yml": _Rule(_CI, "CI pipeline (Azure)"),
    "jenkinsfile": _Rule(_CI, "CI pipeline (Jenkins)", r"^\s*(pipeline|node)\b"),
}
_JS = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
_README_RULE = _Rule(_README, "readme")
_SUBREADME_RULE = _Rule(_SUBREADME, "readme")
_GUIDE_RULE = _Rule(_GUIDE, "contributing guide")
_WORKFLOW_RULE = _Rule(_CI, "CI workflow (GitHub Actions)", r"^jobs\s*:")
_CIRCLE_RULE = _Rule(_CI, "CI pipeline (CircleCI)", r"^jobs\s*:")
_MOD_RS_RULE = _Rule(_INDEX, "Rust module root")
_JS_ENTRY = (
    r"^#!|\.listen\s*\(|\bcreateServer\s*\(|\b(Deno|Bun)\.serve\s*\("
    r"|^(render|hydrate)\s*\(|\bReactDOM\.(render|hydrate)\s*\(|\b(createRoot|hydrateRoot)\s*\("
    r"|\bcreateApp\s*\(.*\)\s*\.mount\s*\(|^new\s+Vue\s*\(|\bbootstrapApplication\s*\("
    r"|\bbootstrapModule\s*\(|\bapp\.(whenReady|on)\s*\(|\brequire\.main\s*===?\s*module"
    r"|\bimport\.meta\.main\b|\bprocess\.argv\b|addEventListener\s*\(\s*[\"']DOMContentLoaded"
    r"|^(const|let|var)\s+(app|server)\s*=\s*(express|fastify|Fastify|new\s+(Koa|Hono|Elysia))\b"
    r"|^(await\s+)?main\s*\(\s*\)"
)
"""A line of a JS/TS `main`, `app` or `server` file that starts the program: it listens,
serves, mounts or renders, builds the framework's app, runs as a script or calls its `main`.
Without one such a file is a module like any other (a browser client's `app.js` that only
exports functions is no entry point)."""
_JS_RULES = {
    "index": _Rule(_INDEX, "module index"),
    **{
        stem: _Rule(_ENTRY, "application entry point", _JS_ENTRY, strict=True)
        for stem in ("main", "app", "server")
    },
}
_BIN_RULE = _Rule(_ENTRY, "executable script", r"^#!|" + _PY_ENTRY)
_PACKAGE_RULE = _Rule(_PACKAGE, "package root: {package}")


def _rule(path: str, name: str) -> _Rule | None:
    """The key-file rule for a path by its name and place alone, or None."""
    low = name.lower()
    if (rule := _NAMED.get(low)) is not None:
        if low == "main.rs" and not (path.endswith("src/main.rs") or "/bin/" in path):
            return None
        return rule
    stem, _, ext = low.partition(".")
    if stem == "readme":
        return _README_RULE
    if name.startswith("CONTRIBUTING"):
        return _GUIDE_RULE
    if low.startswith("dockerfile") or low.endswith(".dockerfile"):
        return _NAMED["dockerfile"]
    if low.startswith("tsconfig") and low.endswith(".json"):
        return _NAMED["tsconfig.json"]
    if (
        "requirements" in low
        and low.endswith((".txt", ".in"))
        and (low.startswith("requirements") or low.endswith("requirements.txt"))
    ):
        return _NAMED["requirements.txt"]
    if path.startswith(".github/workflows/") and low.endswith((".yml", ".yaml")):
        return _WORKFLOW_RULE
    if path.endswith(".circleci/config.yml"):
        return _CIRCLE_RULE
    if low == "mod.rs":
        return _MOD_RS_RULE
    if stem in _JS_RULES and "." + ext in _JS:
        return _JS_RULES[stem]
    if path.startswith("bin/") or "/bin/" in path:
        parts = path.rsplit("/", 2)
        if parts[-2] == "bin":
            return _BIN_RULE
    return None


@dataclass
class _Dir:
    files: int = 0
    dirs: dict[str, _Dir] = field(default_factory=dict)
    leaves: list[str] = field(default_factory=list)


def _build(files: list[str], base: str) -> _Dir:
    top = _Dir()
    for path in files:
        parts = path[len(base) :].split("/")
        node = top
        node.files += 1
        for part in parts[:-1]:
            node = node.dirs.setdefault(part, _Dir())
            node.files += 1
        node.leaves.append(parts[-1])
    return top


_NOTES_DIR = re.compile(
    r"(^|/)(changelog|changelog\.d|changes|news|newsfragments|release-?notes)/", re.IGNORECASE
)
"""Release-note fragments (pytest's changelog/ of 52 `10128.bugfix.rst`): docs."""


def tree_rank(path: str, kind: str = "file") -> int:
    """How far a tree node is from the source: 0 for source packages and top-level files,
    1 for tests and hidden (configuration) directories, 2 for docs, release notes,
    examples and benchmarks."""
    p = path + "/" if kind == "dir" else path
    if is_example_path(p) or is_benchmark_path(p) or _NOTES_DIR.search(p):
        return 2
    if is_test_path(p) or any(part.startswith(".") for part in p.split("/")[:-1]):
        return 1
    return 0


def _node(d: _Dir, path: str, level: int) -> TreeNode:
    """`d` as a TreeNode at `path`, `level` levels below the scope."""
    count = len(d.dirs) + len(d.leaves)
    if level >= MAX_LEVELS:
        return TreeNode(path=path, kind="dir", files=d.files, truncated=count)
    prefix = "" if path == "." else path + "/"
    subdirs = sorted(
        d.dirs.items(),
        key=lambda kv: (tree_rank(prefix + kv[0], "dir"), -kv[1].files, kv[0]),
    )
    children = [_node(sub, prefix + name, level + 1) for name, sub in subdirs[:MAX_CHILDREN]]
    room = MAX_CHILDREN - len(children)
    children += [TreeNode(path=prefix + name, kind="file") for name in sorted(d.leaves)[:room]]
    return TreeNode(
        path=path, kind="dir", files=d.files, children=children, truncated=count - len(children)
    )


def _build_tree(ctx: Context, files: list[str]) -> tuple[TreeNode, _Dir]:
    """The scope's tree (a single-file scope is a lone file node), and its directories."""
    if files == [ctx.scope]:
        return TreeNode(path=ctx.scope, kind="file"), _Dir(files=1)
    top = _build(files, ctx.scope + "/" if ctx.scope else "")
    return _node(top, ctx.scope or ".", 0), top


def _first_text(lines: list[str]) -> int | None:
    return next((i + 1 for i, ln in enumerate(lines) if ln.strip()), None)


def _justifying_line(lines: list[str], rule: _Rule) -> int | None:
    """The line that shows the file plays its role: its heading for a readme, else the first
    match of the rule's pattern, else (unless the rule is strict) its first non-blank line."""
    if rule.kind in (_README, _SUBREADME):
        for i, ln in enumerate(lines):
            if _MD_HEADING.match(ln):
                return i + 1
        # reStructuredText and plain text: the first line that is not an adornment
        return next(
            (i + 1 for i, ln in enumerate(lines) if ln.strip() and not _RST_RULE.match(ln)), None
        )
    if rule.line is not None:
        pattern = re.compile(rule.line)
        for i, ln in enumerate(lines):
            if pattern.search(ln):
                return i + 1
        if rule.strict:
            return None
    return _first_text(lines)


@dataclass
class _Key:
    path: str
    kind: int
    role: str
    line: int | None
    depth: int
    weight: int = 0
    """Files below the key file's directory (0 at the top): within a depth and a kind,
    bigger directories and packages first."""


def _package(path: str, known: set[str]) -> str:
    """The dotted Python package of the directory holding `path`."""
    parts: list[str] = []
    d = dirname(path)
    while d and f"{d}/__init__.py" in known:
        parts.append(basename(d))
        d = dirname(d)
    return ".".join(reversed(parts))


def _rank_depth(ctx: Context, path: str) -> tuple[int, bool]:
    """How deep `path` lies below the scope for ranking, and whether it is test code."""
    if path.startswith(_CI_DIRS):
        return 0, False  # repository-level configuration, wherever it lives
    rest = path[len(ctx.scope) + 1 :] if ctx.scope and path != ctx.scope else path
    parts = rest.split("/")
    in_tests = any(p.lower() in _TEST_DIRS for p in parts[:-1])
    return len(parts) - 1 + (_TEST_PENALTY if in_tests else 0), in_tests


def _size(top: _Dir, rel: str) -> int:
    """Files below directory `rel` (relative to the scope) of the built tree."""
    node = top
    for part in rel.split("/") if rel else []:
        node = node.dirs.get(part, _Dir())
    return node.files


def _first_match(lines: list[str], needle: str, pattern: re.Pattern[str]) -> int | None:
    """The first line where the MULTILINE `pattern` matches, for files holding `needle`: a
    substring test and one search per file, not a Python loop over thousands of files'
    lines."""
    text = "\n".join(lines)
    m = pattern.search(text) if needle in text else None
    return None if m is None else text.count("\n", 0, m.start()) + 1


def _find_key_files(ctx: Context, files: list[str], top: _Dir, state: TrackState) -> list[_Key]:
    """Every key file in `files`, most important first (not capped)."""
    known = set(ctx.all_files())
    base = len(ctx.scope) + 1 if ctx.scope else 0
    keys: list[_Key] = []
    scan: list[str] = []
    for path in files:
        name = path.rpartition("/")[2]
        rule = _rule(path, name)
        if rule is None and name != "__init__.py":
            if name.endswith((".py", ".go")):
                scan.append(path)
            continue
        depth, in_tests = _rank_depth(ctx, path)
        if rule is not None and rule.kind != _CI and path.startswith(_CI_DIRS):
            # A readme or script kept beside the CI's files is no repository-level CI file
            # (tokio's .github/buildomat/README.md listed before its README.md).
            depth = path[base:].count("/")
        if rule is _README_RULE and depth > 0:
            rule = _SUBREADME_RULE
        # Below the top, a bigger directory's key files first: tokio's own crate (tokio/)
        # before its benches' and examples' manifests, a big package before a small one.
        weight = _size(top, dirname(path)[base:]) if depth > 0 else 0
        if rule is None and not in_tests:
            # a top-level package of the scope: its parent is no package inside the scope
            parent = dirname(dirname(path))
            if not (parent and f"{parent}/__init__.py" in known and ctx.in_scope(parent)):
                rule = _PACKAGE_RULE
                weight = _size(top, dirname(path)[base:])
        if rule is None:
            scan.append(path)
            continue
        line = _justifying_line(ctx.lines(path) or [], rule)
        if line is None and rule.strict:
            continue
        role = rule.role.format(package=_package(path, known) or ctx.root.name)
        keys.append(_Key(path, rule.kind, role, line, depth, weight))

    scan.sort(key=lambda p: (p.count("/"), p))
    if len(scan) > MAX_SCANNED:
        state.gaps.append(
            f"read {MAX_SCANNED} of {len(scan)} Python/Go files for scripts and "
            "func main; deeper ones were not checked"
        )
    for path in scan[:MAX_SCANNED]:
        go = path.endswith(".go")
        needle, pattern = ("func main", _GO_MAIN) if go else ("__main__", _MAIN_GUARD)
        hit = _first_match(ctx.lines(path) or [], needle, pattern)
        if hit is not None:
            kind, role = (
                (_ENTRY, "Go program entry (func main)")
                if go
                else (_SCRIPT, "script (runs under __main__)")
            )
            keys.append(_Key(path, kind, role, hit, _rank_depth(ctx, path)[0]))
    keys.extend(_core_files(ctx, files, {k.path for k in keys}))
    keys.sort(key=lambda k: (k.depth, k.kind, -k.weight, k.path))
    return keys


def _core_file(path: str) -> bool:
    """Source code of the project itself: not tests, benchmarks, examples, docs,
    generated or vendored code, nor declarations only (`.d.ts`, `.pyi`)."""
    return (
        language_for(path) in CODE_LANGUAGES
        and not path.endswith((".d.ts", ".pyi"))
        and not is_test_path(path)
        and not is_test_support_path(path)
        and not is_benchmark_path(path)
        and not is_example_path(path)
        and not is_generated_path(path)
        and not is_vendored_path(path)
    )


def _core_files(ctx: Context, files: list[str], named: set[str]) -> list[_Key]:
    """The `CORE_FILES` source files with the most lines of behaviour (lines inside
    functions and methods, tests beside the code left out; `_CORE_MIN_LINES` at least)
    among the `_CORE_SCAN` largest on disk, not named by a convention; repository-level
    key files cited at their largest definition. A project's code is in few files: the
    one that holds its main type or loop is as much a key file as its manifest; a file of
    type declarations and their doc comments is large and does nothing."""
    sized: list[tuple[int, str]] = []
    for path in files:
        if path in named or not _core_file(path):
            continue
        try:
            sized.append((os.lstat(ctx.root / path).st_size, path))
        except OSError:
            continue
    if len(sized) < 2:  # the one source file of a scope is its subject, not a finding
        return []
    ranked: list[tuple[int, str, Symbol, int]] = []
    for _, path in sorted(sized, key=lambda t: (-t[0], t[1]))[:_CORE_SCAN]:
        lines = ctx.lines(path)
        if not lines:
            continue
        language = language_for(path) or ""
        symbols = parse_source(path, "\n".join(lines).encode(), language).symbols
        tests = [s for s in symbols if _is_test(s, language)]
        kept = [s for s in symbols if not any(_within(s, t) for t in tests)]
        inside = {
            n
            for s in kept
            if s.kind in _BEHAVIOUR_KINDS
            for n in range(s.name_line, s.end_line + 1)
        }
        if len(inside) < _CORE_MIN_LINES:
            continue  # and so `kept` holds a definition
        main = max(kept, key=lambda s: (s.end_line - s.start_line, -s.start_line))
        ranked.append((len(inside), path, main, len(lines)))
    ranked.sort(key=lambda t: (-t[0], t[1]))
    out: list[_Key] = []
    for weight, path, main, n_lines in ranked[:CORE_FILES]:
        span = main.end_line - main.start_line + 1
        role = (
            f"core module: {n_lines:,} lines, {weight:,} of them in functions; "
            f"its largest definition `{main.qualified_name}` ({span:,} lines)"
        )
        out.append(_Key(path, _CORE, role, main.name_line, 0, weight))
    return out


def _is_test(sym: Symbol, language: str) -> bool:
    return any(is_test_attribute(d) for d in sym.decorators) or is_test_code(
        language, sym.qualified_name, ""
    )


def _within(sym: Symbol, outer: Symbol) -> bool:
    return outer.start_line <= sym.start_line and sym.end_line <= outer.end_line


def _cap(keys: list[_Key]) -> list[_Key]:
    per_kind: dict[int, int] = {}
    kept: list[_Key] = []
    for k in keys:
        per_kind[k.kind] = per_kind.get(k.kind, 0) + 1
        if per_kind[k.kind] <= _PER_KIND and len(kept) < MAX_KEY_FILES:
            kept.append(k)
    return kept


def _describe(node: TreeNode) -> str:
    dirs = [c for c in node.children if c.kind == "dir"]
    shown = ", ".join(f"{c.path} ({c.files})" for c in dirs[:5])
    text = f"{node.path}: {node.files} files"
    if dirs:
        text += f"; largest directories: {shown}"
    return text


def _count_truncated(node: TreeNode) -> int:
    own = 1 if node.truncated and node.children else 0
    return own + sum(_count_truncated(c) for c in node.children)


def _claim_samples(state: TrackState, tree: TreeNode, most: int = 3) -> None:
    """Without key files, the tree's claims are that some of its files exist: the first
    files in tree order that have a line to quote."""
    stack, claimed = [tree], 0
    while stack and claimed < most:
        node = stack.pop()
        if node.kind == "dir":
            stack.extend(reversed(node.children))
            continue
        lines = state.ctx.lines(node.path) or []
        if (first := _first_text(lines)) is None:
            continue
        text = (
            f"the scope is the single file {node.path}"
            if node is tree
            else f"{node.path} is one of the {tree.files} files under {tree.path}"
        )
        claimed += state.claim(text, cite(state.ctx, node.path, first), topic="tree")


def _split(ctx: Context) -> list[str]:
    return largest_subdirs(ctx, min_files=_SPLIT_MIN_FILES)


def tree_track(ctx: Context) -> Track:
    """The tree explorer for `ctx`'s scope."""
    spec = TrackSpec(
        name="tree",
        focus=ctx.scope or ".",
        approach=(
            f"lay out the walked files {MAX_LEVELS} levels deep with file counts; "
            "pick key files by name and convention (entry points, package roots, "
            "readmes, configs, CI) and cite the line that shows each role"
        ),
        gates=[
            "understood: the scope holds at least one walked file",
            "evidence: each key file's role cites a line of that file that shows it",
            "complete: the tree accounts for every file in scope and key files were found "
            "(or their absence is a stated gap)",
        ],
        deliverable=f"tree (TreeNode, {MAX_LEVELS} levels) and key_files (path + role)",
    )

    def understand(state: TrackState) -> tuple[bool, str]:
        files = ctx.files()
        if not files:
            state.gaps.append(f"no indexable files under {ctx.scope or '.'}")
            return False, "no files in scope"
        tree, top = _build_tree(ctx, files)
        state.output["tree"] = tree
        found = _find_key_files(ctx, files, top, state)
        kept = _cap(found)
        state.output["key_files"] = [KeyFile(path=k.path, role=k.role) for k in kept]
        _claim_key_files(ctx, state, tree, kept)
        _conclude(state, tree, files, kept)
        _state_gaps(ctx, state, tree, files, found, kept)
        return True, f"{len(files)} files; {len(kept)} key files"

    def complete(state: TrackState) -> tuple[bool, str]:
        tree = state.output.get("tree")
        if not isinstance(tree, TreeNode) or tree.files != len(ctx.files()):
            return False, "the tree does not account for every file in scope"
        keys = state.output.get("key_files", [])
        if not keys and not state.gaps:
            return False, "no key files, and no gap says why"
        return True, f"tree of {tree.files} files; {len(keys)} key files"

    return Track(spec=spec, understand=understand, complete=complete, split=_split, make=tree_track)


# -- the phases: the key files' claims, the conclusions, the gaps ----------------------------


def _claim_key_files(ctx: Context, state: TrackState, tree: TreeNode, kept: list[_Key]) -> None:
    """A claim per key file at the line that shows its role; samples when none cites."""
    for k in kept:
        if k.line is not None:
            state.claim(f"{k.path}: {k.role}", cite(ctx, k.path, k.line), topic="key_files")
    if not state.findings:  # nothing citable yet (e.g. only empty __init__.py files)
        _claim_samples(state, tree)


def _conclude(state: TrackState, tree: TreeNode, files: list[str], kept: list[_Key]) -> None:
    """The tree described, the files by extension, the key files."""
    state.conclusions.append(_describe(tree))
    exts: dict[str, int] = {}
    for p in files:
        name = basename(p)
        ext = name.rpartition(".")[2].lower() if "." in name.lstrip(".") else "(none)"
        exts[ext] = exts.get(ext, 0) + 1
    common = sorted(exts.items(), key=lambda kv: (-kv[1], kv[0]))[:6]
    state.conclusions.append("files by extension: " + ", ".join(f"{e} {n}" for e, n in common))
    if kept:
        state.conclusions.append(
            "key files: " + ", ".join(f"{k.path} ({k.role})" for k in kept[:8])
        )


def _state_gaps(
    ctx: Context,
    state: TrackState,
    tree: TreeNode,
    files: list[str],
    found: list[_Key],
    kept: list[_Key],
) -> None:
    """What the tree leaves open: key files left out, no README or entry point, long
    directories cut."""
    if len(found) > len(kept):
        state.gaps.append(f"listed {len(kept)} of {len(found)} key files by convention")
    single = files == [ctx.scope]
    if not found:
        state.gaps.append("no key files by convention in scope")
    if found and not single:
        if not any(k.kind in (_README, _SUBREADME) for k in found):
            state.gaps.append("no README in scope")
        if not any(k.kind in (_ENTRY, _SCRIPT) for k in found):
            state.gaps.append(NO_ENTRY_POINT)
    if n := _count_truncated(tree):
        state.gaps.append(
            f"{n} directories list only their first {MAX_CHILDREN} children"
            if n > 1
            else f"1 directory lists only its first {MAX_CHILDREN} children"
        )
