"""The commands explorer: how to install, build, test, lint and run the repository, and the
rules its instructions for agents and contributors state.

Sources, all read as text (nothing is run): the CI that runs the tests
(``.github/workflows/*.yml``: the ``run:`` lines and blocks; ``.gitlab-ci.yml``: the
``script:`` items), the instructions files (``AGENTS.md``, ``CLAUDE.md``,
``CONTRIBUTING*``: the commands in their code blocks and code spans, and the sentences
that state a rule), the task runners (tox envs in ``tox.ini``, ``tox.toml`` or
pyproject's ``[tool.tox]``, nox sessions, Makefile targets, package.json scripts, hatch
scripts) and what the manifests imply (``pytest`` for a configured pytest, ``cargo test``
for a Cargo.toml, ``go test ./...`` for a go.mod, ``ctest`` for a CMake build with tests,
``pytest`` for Python test files no runner is configured for, ``[project.scripts]`` to
run, the installer a lock file calls for).

Invariants:

- Every command and rule cites the line that states it (the ``run:`` line or the line in
  its block, a tox env's ``commands`` line, a Makefile target, a script's key, a
  pyproject table or key, a line of an instructions file); the evidence gate checks each.
- `ExploreResult.commands` is ordered by kind (install, build, test, lint, run), each kind
  best first: for test, what CI runs comes first (it is what the maintainers check), then
  the instructions files, the task runners and what the manifests imply; for the other
  kinds the instructions files come before CI; an install of the project before an
  install of a tool (`installs_project`); in a repository whose package.json sits
  beside another language's manifest, JavaScript commands come after the others of
  their kind (its JavaScript is an asset). Among CI workflows, those that test come
  before coverage, release and other chores, a tool before a repository script, and the
  shortest variant of a command first.
  A command stated twice keeps its best source; at most `MAX_PER_KIND` per kind.
- Build files are read in the scope's directory, else in the nearest directory above it
  that has any; CI and the instructions files at the root count for every scope.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from posixpath import basename, dirname, join
from typing import Any

from dowse.explore.manifest_formats import Src, as_dict, as_strs, toml_key, toml_table
from dowse.explore.records import Command, CommandKind, Finding, TrackSpec
from dowse.explore.tracks import Context, Track, TrackState, cite, find_line, plural
from dowse.languages import is_test_path

__all__ = ["MAX_PER_KIND", "MAX_RULES", "classify", "commands_track", "installs_project"]

MAX_PER_KIND = 5
MAX_RULES = 12
"""Rules quoted from the instructions files, AGENTS.md and CLAUDE.md first."""
_MAX_RULES_PER_FILE = 8
_MAX_RULE = 300
"""Characters of a rule's text; a longer paragraph is cut at its sentence that states it."""
_MAX_RUNS = 160
_PER_FILE = 3
"""Commands of one kind from one file, so that one CI workflow's variants of `cargo test`
leave room for the other sources."""
KINDS: tuple[CommandKind, ...] = ("install", "build", "test", "lint", "run")

# Where a command comes from, best first; `_rank` orders them per kind.
_CI, _GUIDE, _RUNNER, _IMPLIED = range(4)


@dataclass
class _Cmd:
    kind: CommandKind
    command: str
    source: str
    path: str
    line: int
    origin: int
    runs: str = ""

    @property
    def rank(self) -> int:
        if self.kind == "test":
            return self.origin
        return {_GUIDE: 0, _CI: 1}.get(self.origin, self.origin)


# -- telling what a command does ------------------------------------------------------------

_LINT_NAME = re.compile(
    r"lint|vet|fmt|format|style|typ(e|es|ing)\b|typecheck|mypy|pyright|ruff|flake8|pylint|"
    r"black|isort|clippy|pre-?commit|codespell|static|tidy"
)
_TEST_NAME = re.compile(
    r"(?:^|[^a-z])test|tests?(?:$|[^a-z])|spec\b|^check$|^checks$|coverage|^cov$|^unit|integration|e2e|race|"
    r"^py$|^py\d|^pypy"
)
_BUILD_NAME = re.compile(r"^(build|all|compile|dist|package|wheel|sdist|docs?|html|bundle)\b")
_INSTALL_NAME = re.compile(r"^(install|deps|dependencies|setup|bootstrap|develop|requirements)\b")
_CHORE = re.compile(r"^(update|upgrade|bump|release|publish|clean|deploy|prepare-release|generate)")
"""Tasks that maintain the repository rather than work in it (`tox -e update-actions`)."""
_RUN_NAME = re.compile(r"^(run|start|serve|server|dev|watch|up)$")


def kind_of_name(name: str) -> CommandKind | None:
    """The kind a task's name says (a make target, a script, a tox env, a nox session)."""
    n = name.lower().strip()
    if n.startswith(("pre", "post")) and n not in ("pre-commit", "precommit"):
        return None  # npm's lifecycle hooks run around the others
    if _LINT_NAME.search(n):
        return "lint"
    if _TEST_NAME.search(n):
        return "test"
    if _BUILD_NAME.match(n):
        return "build"
    if _INSTALL_NAME.match(n):
        return "install"
    if _RUN_NAME.match(n):
        return "run"
    return None


_TEST_TOOLS = frozenset(
    "pytest py.test ctest jest vitest mocha ava phpunit rspec unittest coverage nextest "
    "karma playwright cypress".split()
)
_LINT_TOOLS = frozenset(
    "ruff flake8 pylint mypy pyright black isort pre-commit prek eslint prettier biome "
    "golangci-lint staticcheck gofmt goimports shellcheck codespell rustfmt rubocop "
    "stylelint markdownlint yamllint actionlint govulncheck pyflakes pycodestyle".split()
)
_BUILD_TOOLS = frozenset(
    "cmake ninja meson webpack rollup esbuild sphinx-build mkdocs maturin bazel scons".split()
)
_INSTALL_TOOLS = frozenset({"apt-get", "apt", "brew", "dnf", "yum", "apk", "choco"})
_TWO: dict[tuple[str, str], CommandKind] = {
    **{
        (a, b): "test"
        for a, b in (
            ("go", "test"),
            ("cargo", "test"),
            ("cargo", "nextest"),
            ("npm", "test"),
            ("npm", "t"),
            ("yarn", "test"),
            ("pnpm", "test"),
            ("bun", "test"),
            ("deno", "test"),
            ("mvn", "test"),
            ("mvn", "verify"),
            ("gradle", "test"),
            ("gradle", "check"),
            ("dotnet", "test"),
            ("hatch", "test"),
            ("rake", "test"),
            ("rake", "spec"),
            ("mix", "test"),
            ("swift", "test"),
        )
    },
    **{
        (a, b): "lint"
        for a, b in (
            ("cargo", "fmt"),
            ("cargo", "clippy"),
            ("go", "vet"),
            ("hatch", "fmt"),
            ("deno", "lint"),
            ("deno", "fmt"),
        )
    },
    **{
        (a, b): "build"
        for a, b in (
            ("cargo", "build"),
            ("cargo", "check"),
            ("cargo", "doc"),
            ("go", "build"),
            ("go", "generate"),
            ("mvn", "package"),
            ("mvn", "install"),
            ("gradle", "build"),
            ("hatch", "build"),
            ("uv", "build"),
            ("flit", "build"),
            ("poetry", "build"),
            ("pdm", "build"),
            ("docker", "build"),
            ("dotnet", "build"),
            ("zig", "build"),
        )
    },
    **{
        (a, b): "install"
        for a, b in (
            ("pip", "install"),
            ("pip3", "install"),
            ("uv", "sync"),
            ("uv", "pip"),
            ("uv", "tool"),
            ("poetry", "install"),
            ("pdm", "install"),
            ("pipenv", "install"),
            ("npm", "ci"),
            ("npm", "install"),
            ("npm", "i"),
            ("yarn", "install"),
            ("pnpm", "install"),
            ("bun", "install"),
            ("bundle", "install"),
            ("go", "install"),
            ("go", "mod"),
            ("cargo", "install"),
            ("cargo", "fetch"),
            ("composer", "install"),
            ("rustup", "target"),
            ("rustup", "component"),
        )
    },
    **{
        (a, b): "run"
        for a, b in (
            ("cargo", "run"),
            ("go", "run"),
            ("npm", "start"),
            ("yarn", "start"),
            ("pnpm", "start"),
            ("flask", "run"),
            ("deno", "run"),
        )
    },
}
_RUNNERS = {
    ("uv", "run"),
    ("poetry", "run"),
    ("pdm", "run"),
    ("pipenv", "run"),
    ("python", "-m"),
    ("python3", "-m"),
    ("py", "-m"),
    ("pnpm", "exec"),
    ("bundle", "exec"),
    ("yarn", "dlx"),
}
_PYTHONS = frozenset({"python", "python3", "py", "{envpython}", "$python"})
_VALUE_FLAGS = frozenset(
    "--group --extra --python -p --with --package --directory --project --only-group "
    "--env -C".split()
)
_ENV = re.compile(r"\$\{\{\s*env\.(\w+)\s*\}\}|\$\{(\w+)\}|\$(\w+)")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _words(command: str) -> list[str]:
    """The command's words with wrappers dropped: `sudo`, `VAR=value`, `uv run [opts]`,
    `python -m`, `npx`; a CI variable naming a tool (`${{ env.CARGO }}`) as the tool."""
    text = _ENV.sub(lambda m: next(g for g in m.groups() if g).lower(), command)
    words = [w.strip("'\"") for w in text.split()]
    changed = True
    while words and changed:
        changed = False
        while words and (
            words[0] in ("sudo", "time", "exec", "env", "npx") or _ASSIGN.match(words[0])
        ):
            words, changed = words[1:], True
        if len(words) >= 2 and words[0] in _PYTHONS and words[1].endswith(".py"):
            words, changed = words[1:], True  # `python tests/runtests.py`: the script runs
        if len(words) >= 2 and (words[0], words[1]) in _RUNNERS:
            words, changed = words[2:], True
            while words and words[0].startswith("-"):
                words = words[2:] if words[0] in _VALUE_FLAGS else words[1:]
    return words


def _kind_of_task_runner(words: list[str]) -> CommandKind | None:
    """tox or nox: the kind of the envs/sessions it names (-e/-s), test when none; None
    when they are all chores (pytest's CI `tox -e update-plugin-list`)."""
    names: list[str] = []
    for i, w in enumerate(words):
        if w in ("-e", "-s", "--sessions", "--session", "-m") and i + 1 < len(words):
            names += words[i + 1].split(",")
        elif w.startswith(("-e", "-s")) and len(w) > 2 and not w.startswith("--"):
            names += w[2:].lstrip("=").split(",")
    if names and all(_CHORE.match(n.lower()) for n in names if n):
        return None
    kinds = {kind_of_name(n) for n in names if n}
    if kinds and kinds <= {"lint"}:
        return "lint"
    if kinds and kinds <= {"build"}:
        return "build"
    return "test"


def _classify_one(command: str) -> CommandKind | None:
    words = _words(command)
    if not words:
        return None
    tool = re.sub(r"(?<=.)@[^/]*$", "", words[0].lower())  # `npx prettier@3.5`
    tool = _WRAPPERS.get(basename(tool), tool)
    if tool in ("mvn", "gradle"):
        # Options come first and goals may be several: `./mvnw -B -ff clean verify`; a
        # Gradle task is named by the project (`./gradlew build integrationTest`).
        goals: list[CommandKind] = []
        for w in words[1:]:
            if w.startswith("-"):
                continue
            kind = _TWO.get((tool, w.lower()))
            if kind is None and tool == "gradle":
                kind = kind_of_name(w)
            if kind is not None:
                goals.append(kind)
        if not goals:
            return None
        weightiest: CommandKind = min(goals, key=_KIND_WEIGHT.__getitem__)
        return weightiest
    nxt = words[1].lower() if len(words) > 1 else ""
    if tool in ("tox", "nox"):
        return _kind_of_task_runner(words)
    if tool in ("make", "gmake", "just", "task"):
        target = next((w for w in words[1:] if not w.startswith("-") and "=" not in w), "")
        return kind_of_name(target) if target else "build"
    if tool in ("npm", "yarn", "pnpm", "bun") and nxt == "run" and len(words) > 2:
        return kind_of_name(words[2])
    if tool == "hatch" and nxt == "run" and len(words) > 2:
        return kind_of_name(words[2].rpartition(":")[2])
    if (kind := _TWO.get((tool, nxt))) is not None:
        return kind
    if tool in ("yarn", "pnpm", "bun") and nxt and not nxt.startswith("-"):
        return kind_of_name(nxt)
    if tool == "yarn" and not nxt:
        return "install"
    if tool in _TEST_TOOLS:
        return "test"
    if tool in _LINT_TOOLS:
        return "lint"
    if tool in _BUILD_TOOLS or tool == "build":  # `python -m build`
        return "build"
    if tool == "tsc":
        return "lint" if "--noEmit" in words else "build"
    if tool in _INSTALL_TOOLS and nxt == "install":
        return "install"
    if ("/" in tool or tool.endswith(".py")) and not tool.startswith(("/", "$")):  # a script
        stem = basename(tool).rsplit(".", 1)[0]
        in_tests = any(p in ("test", "tests") for p in tool.split("/")[:-1])
        return kind_of_name(stem) or ("test" if in_tests else None)
    return None


_WRAPPERS = {w: tool for tool in ("mvn", "gradle") for w in (f"{tool}w", f"{tool}w.cmd")}
_WRAPPERS |= {"gradlew.bat": "gradle"}
"""A build tool's wrapper script in the repository (`./mvnw`, `gradlew.bat`) is the tool."""
_SEGMENTS = re.compile(r"\s*(?:&&|\|\||;)\s*")
_KIND_WEIGHT: dict[str, int] = {"test": 0, "lint": 1, "build": 2, "run": 3, "install": 4}


def classify(command: str) -> CommandKind | None:
    """The kind of a shell command line, or None for one that installs, builds, tests,
    lints and runs nothing (`echo`, `cd`, `git ...`). A chain takes its weightiest part:
    `pip install -e . && pytest` tests."""
    kinds: list[CommandKind] = []
    for segment in _SEGMENTS.split(command):
        if (kind := _classify_one(segment)) is not None:
            kinds.append(kind)
    return sorted(kinds, key=_KIND_WEIGHT.__getitem__)[0] if kinds else None


# -- reading the sources ------------------------------------------------------------------


class _Sink:
    """What the sources found: commands and rules, in the order found."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.commands: list[_Cmd] = []
        self.rules: list[tuple[str, str, int, int]] = []  # (text, path, first, last line)
        self.read: list[str] = []

    def add(
        self,
        kind: CommandKind | None,
        command: str,
        source: str,
        path: str,
        line: int | None,
        origin: int,
        runs: str = "",
    ) -> None:
        command = " ".join(command.split())
        if kind is None or line is None or not command:
            return
        runs = " ".join(runs.split())
        if len(runs) > _MAX_RUNS:
            runs = runs[: _MAX_RUNS - 1].rstrip() + "…"
        self.commands.append(_Cmd(kind, command, source, path, line, origin, runs))


_READS_ON = ("\\", "&&", "||", "|")
"""How a shell line ends when the command goes on on the next line."""


def _block(lines: list[str], start: int, col: int) -> Iterator[tuple[int, str]]:
    """(line number, text) of the lines after `start` (0-based) indented deeper than `col`,
    continuation lines (ending in a backslash, or in `&&`, `||` or `|`: the shell reads on)
    joined onto their first line."""
    i = start + 1
    while i < len(lines):
        raw = lines[i]
        if raw.strip() and len(raw) - len(raw.lstrip()) <= col:
            return
        text, number = raw.strip(), i + 1
        while text.endswith(_READS_ON) and i + 1 < len(lines):
            i += 1
            text = text.removesuffix("\\").rstrip() + " " + lines[i].strip()
        i += 1
        if text and not text.startswith("#"):
            yield number, text


def _folded(lines: list[str], block: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """A folded block scalar's (`run: >`) lines as YAML reads them: the lines of a
    paragraph (up to a blank line) are one command, at its first line (sphinx's
    `npx prettier --check` over five lines is one lint command, not five)."""
    first, last = 0, 0
    parts: list[str] = []
    for number, text in block:
        if parts and any(not lines[n - 1].strip() for n in range(last + 1, number)):
            yield first, " ".join(parts)
            parts = []
        if not parts:
            first = number
        parts.append(text)
        last = number
    if parts:
        yield first, " ".join(parts)


_RUN_KEY = re.compile(r"^(\s*(?:-\s+)?)run\s*:\s*(.*?)\s*$")
_BLOCK_SCALAR = re.compile(r"^[|>][-+0-9]*\s*(#.*)?$")


def _unquote(value: str) -> str:
    value = re.sub(r"\s+#.*$", "", value) if not value.startswith(("'", '"')) else value
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _github_workflow(sink: _Sink, path: str, lines: list[str]) -> None:
    for i, raw in enumerate(lines):
        m = _RUN_KEY.match(raw)
        if m is None:
            continue
        value = m.group(2)
        if _BLOCK_SCALAR.match(value):
            block = _block(lines, i, len(m.group(1)))
            for number, text in _folded(lines, block) if value.startswith(">") else block:
                sink.add(classify(text), text, "CI", path, number, _CI)
        elif value:
            text = _unquote(value)
            sink.add(classify(text), text, "CI", path, i + 1, _CI)


_SCRIPT_KEY = re.compile(r"^(\s*)(?:before_script|script)\s*:\s*(.*?)\s*$")


def _gitlab_ci(sink: _Sink, path: str, lines: list[str]) -> None:
    for i, raw in enumerate(lines):
        m = _SCRIPT_KEY.match(raw)
        if m is None:
            continue
        col = len(m.group(1))
        if m.group(2) and not m.group(2).startswith(("[", "|", ">")):
            text = _unquote(m.group(2))
            sink.add(classify(text), text, "CI", path, i + 1, _CI)
            continue
        j = i + 1
        while j < len(lines):
            item = lines[j]
            indent = len(item) - len(item.lstrip())
            if item.strip() and (
                indent < col or (indent == col and not item.lstrip().startswith("-"))
            ):
                break
            if item.lstrip().startswith("- "):
                text = _unquote(item.lstrip()[2:].strip())
                sink.add(classify(text), text, "CI", path, j + 1, _CI)
            j += 1


# tox: tox.ini sections, pyproject's legacy_tox_ini string, or native TOML (tox 4).
_SECTION = re.compile(r"^\s*\[([^\]]+)\]")


def _tox_command(env: str | None) -> str:
    return "tox -e py" if env is None else f"tox -e {env}"


def _tox_kind(env: str | None, runs: str) -> CommandKind | None:
    """The env's kind by its name, else by what it runs; the base env tests. An env that
    is neither (`update-actions`) is no command to work with."""
    if env and _CHORE.match(env.lower()):
        return None
    by_name = kind_of_name(env) if env else None
    if by_name is not None:
        return by_name
    by_runs = classify(runs) if runs else None
    return "test" if env is None or by_runs == "test" else by_runs


def _tox_ini(sink: _Sink, path: str, lines: list[str], offset: int = 0) -> None:
    env: str | None = None
    in_env = False
    for i, raw in enumerate(lines):
        if m := _SECTION.match(raw):
            name = m.group(1).strip()
            in_env = name == "testenv" or name.startswith("testenv:")
            env = name.partition(":")[2] or None
            continue
        if not in_env or not (c := re.match(r"^commands\s*=\s*(.*)$", raw)):
            continue
        runs = [c.group(1)] if c.group(1).strip() else []
        runs += [text for _, text in _block(lines, i, 0)]
        joined = "; ".join(r.strip() for r in runs if r.strip())
        sink.add(
            _tox_kind(env, joined),
            _tox_command(env),
            "tox",
            path,
            offset + i + 1,
            _RUNNER,
            runs=joined,
        )


def _toml_commands(value: Any) -> str:
    """tox 4's `commands = [["pytest", "-v", {replace = "posargs"}]]` as a shell line."""
    parts = [
        " ".join(str(w) for w in cmd if isinstance(w, (str, int)))
        for cmd in (value if isinstance(value, list) else [])
        if isinstance(cmd, list)
    ]
    return "; ".join(p for p in parts if p)


def _tox_toml(sink: _Sink, src: Src, tox: dict[str, Any], prefix: tuple[str, ...]) -> None:
    base = as_dict(tox.get("env_run_base"))
    envs: list[tuple[str | None, dict[str, Any], tuple[str, ...]]] = [
        (None, base, (*prefix, "env_run_base"))
    ]
    envs += [(n, as_dict(e), (*prefix, "env", n)) for n, e in as_dict(tox.get("env")).items()]
    for env, table, parts in envs:
        if "commands" not in table:
            continue
        runs = _toml_commands(table["commands"])
        line = toml_key(src, "commands", toml_table(src, *parts))
        sink.add(_tox_kind(env, runs), _tox_command(env), "tox", src.path, line, _RUNNER, runs=runs)


def _nox(sink: _Sink, path: str, lines: list[str]) -> None:
    decorated = False
    session: tuple[str, int] | None = None
    runs: list[str] = []

    def flush() -> None:
        if session is not None:
            name, line = session
            joined = "; ".join(runs)
            kind = kind_of_name(name) or (classify(joined) if joined else None) or "test"
            sink.add(kind, f"nox -s {name}", "nox", path, line, _RUNNER, runs=joined)

    for i, raw in enumerate(lines):
        if re.match(r"^@(nox\.)?session\b", raw):
            flush()
            session, runs, decorated = None, [], True
            named = re.search(r"""name\s*=\s*['"]([^'"]+)['"]""", raw)
            if named:
                session = (named.group(1), i + 1)
        elif decorated and (d := re.match(r"^def\s+(\w+)\s*\(", raw)):
            session = session or (d.group(1), i + 1)
            decorated = False
        elif re.match(r"^\S", raw) and not raw.startswith(("@", "#")):
            flush()
            session, runs = None, []
        elif session is not None and "session.run(" in raw:
            args = re.findall(r"""['"]([^'"]*)['"]""", raw.split("session.run(", 1)[1])
            if args:
                runs.append(" ".join(args))
    flush()


_TARGET = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.\- ]*?)\s*:(?![=:])")


def _makefile(sink: _Sink, path: str, lines: list[str]) -> None:
    prefix = "" if dirname(path) in ("", sink.ctx.scope) else f"-C {dirname(path)} "
    for i, raw in enumerate(lines):
        if not (m := _TARGET.match(raw)) or "%" in raw.split(":", 1)[0]:
            continue
        recipe = []
        for line in lines[i + 1 : i + 4]:
            if not line.startswith("\t"):
                break
            recipe.append(line.strip().lstrip("@-").strip())
        for target in m.group(1).split():
            kind = kind_of_name(target)
            by_recipe = classify("; ".join(recipe)) if recipe else None
            if kind is None and target in ("all", "default"):
                kind = by_recipe or "build"
            sink.add(
                kind, f"make {prefix}{target}", "make", path, i + 1, _RUNNER, "; ".join(recipe)
            )


def _json_key_line(src: Src, key: str, start: int | None = 1) -> int | None:
    return src.find(re.escape(json.dumps(key)) + r"\s*:", start)


def _package_json(sink: _Sink, src: Src, where: str) -> None:
    data = json.loads(src.text)
    if not isinstance(data, dict):
        return
    exists = sink.ctx.root.joinpath
    tool = next(
        (
            t
            for t, lock in (("yarn", "yarn.lock"), ("pnpm", "pnpm-lock.yaml"), ("bun", "bun.lock"))
            if exists(where, lock).exists()
        ),
        "npm",
    )
    if data.get("dependencies") or data.get("devDependencies"):
        install = (
            "npm ci" if tool == "npm" and exists(where, "package-lock.json").exists() else None
        )
        line = _json_key_line(src, "dependencies") or _json_key_line(src, "devDependencies")
        sink.add("install", install or f"{tool} install", "npm", src.path, line, _IMPLIED)
    at = _json_key_line(src, "scripts")
    for name, value in as_dict(data.get("scripts")).items():
        value = str(value)
        kind = kind_of_name(name) or classify(value)
        direct = name in ("test", "start") or (tool != "npm" and name not in ("install",))
        command = f"{tool} {name}" if direct else f"{tool} run {name}"
        sink.add(kind, command, "npm", src.path, _json_key_line(src, name, at), _RUNNER, value)


def _pyproject(sink: _Sink, src: Src, where: str) -> None:
    data = tomllib.loads(src.text)
    tool = as_dict(data.get("tool"))
    project = as_dict(data.get("project"))
    exists = sink.ctx.root.joinpath
    # install
    project_at = toml_table(src, "project")
    if tool.get("poetry") or "poetry" in str(
        as_dict(data.get("build-system")).get("build-backend")
    ):
        sink.add(
            "install",
            "poetry install",
            "pyproject",
            src.path,
            toml_table(src, "tool", "poetry") or project_at,
            _IMPLIED,
        )
    elif exists(where, "uv.lock").exists() and project_at:
        sink.add("install", "uv sync", "pyproject (uv.lock)", src.path, project_at, _IMPLIED)
    elif exists(where, "pdm.lock").exists() and project_at:
        sink.add("install", "pdm install", "pyproject (pdm.lock)", src.path, project_at, _IMPLIED)
    elif project_at:
        groups = as_dict(data.get("dependency-groups"))
        extras = as_dict(project.get("optional-dependencies"))
        dev = next((g for g in ("dev", "test", "tests") if g in groups), None)
        extra = next((e for e in ("dev", "test", "tests") if e in extras), None)
        if dev:
            line = toml_key(src, dev, toml_table(src, "dependency-groups"))
            sink.add(
                "install", f"pip install -e . --group {dev}", "pyproject", src.path, line, _IMPLIED
            )
        elif extra:
            line = toml_key(src, extra, toml_table(src, "project", "optional-dependencies"))
            sink.add(
                "install", f'pip install -e ".[{extra}]"', "pyproject", src.path, line, _IMPLIED
            )
        else:
            sink.add("install", "pip install -e .", "pyproject", src.path, project_at, _IMPLIED)
    # test and lint settings
    pytest_at = toml_table(src, "tool", "pytest", "ini_options") or toml_table(
        src, "tool", "pytest"
    )
    if pytest_at:
        options = as_dict(as_dict(tool.get("pytest")).get("ini_options")) or as_dict(
            tool.get("pytest")
        )
        paths = " ".join(as_strs(options.get("testpaths")))
        sink.add(
            "test",
            "pytest",
            "pyproject",
            src.path,
            pytest_at,
            _IMPLIED,
            paths and f"testpaths {paths}",
        )
    for name, command in (
        ("ruff", "ruff check"),
        ("mypy", "mypy"),
        ("pyright", "pyright"),
        ("black", "black --check ."),
    ):
        if name in tool:
            sink.add(
                "lint", command, "pyproject", src.path, toml_table(src, "tool", name), _IMPLIED
            )
    # task runners kept in pyproject
    if isinstance(as_dict(tool.get("tox")).get("legacy_tox_ini"), str):
        at = toml_key(src, "legacy_tox_ini", toml_table(src, "tool", "tox")) or 1
        _tox_ini(sink, src.path, src.lines[at:], offset=at)
    elif tool.get("tox"):
        _tox_toml(sink, src, as_dict(tool.get("tox")), ("tool", "tox"))
    for env, table in as_dict(as_dict(tool.get("hatch")).get("envs")).items():
        scripts_at = toml_table(src, "tool", "hatch", "envs", env, "scripts")
        for name, value in as_dict(as_dict(table).get("scripts")).items():
            runs = "; ".join(as_strs(value)) if isinstance(value, list) else str(value)
            command = f"hatch run {name}" if env == "default" else f"hatch run {env}:{name}"
            kind = kind_of_name(name) or classify(runs)
            sink.add(
                kind, command, "hatch", src.path, toml_key(src, name, scripts_at), _RUNNER, runs
            )
    # run
    scripts_at = toml_table(src, "project", "scripts")
    for name, target in as_dict(project.get("scripts")).items():
        sink.add(
            "run",
            name,
            "pyproject",
            src.path,
            toml_key(src, name, scripts_at),
            _IMPLIED,
            str(target),
        )


def _cargo(sink: _Sink, src: Src, where: str) -> None:
    data = tomllib.loads(src.text)
    package, workspace = as_dict(data.get("package")), as_dict(data.get("workspace"))
    at = toml_table(src, "package") or toml_table(src, "workspace")
    flag = " --workspace" if workspace else ""
    sink.add("build", f"cargo build{flag}", "Cargo", src.path, at, _IMPLIED)
    sink.add("test", f"cargo test{flag}", "Cargo", src.path, at, _IMPLIED)
    main = join(where, "src/main.rs") if where else "src/main.rs"
    if package and (data.get("bin") or main in sink.ctx.all_files()):
        sink.add("run", "cargo run", "Cargo", src.path, at, _IMPLIED)


def _go_mod(sink: _Sink, src: Src, where: str) -> None:
    at = src.find(r"^module\s")
    sink.add("build", "go build ./...", "go.mod", src.path, at, _IMPLIED)
    sink.add("test", "go test ./...", "go.mod", src.path, at, _IMPLIED)
    sink.add("lint", "go vet ./...", "go.mod", src.path, at, _IMPLIED)


def _cmake(sink: _Sink, src: Src, where: str) -> None:
    at = src.find(r"^\s*project\s*\(") or src.find(r"\S")
    sink.add("build", "cmake -B build && cmake --build build", "CMake", src.path, at, _IMPLIED)
    if tests := src.find(r"^\s*(enable_testing|add_test|include\s*\(\s*CTest)\b"):
        sink.add("test", "ctest --test-dir build", "CMake", src.path, tests, _IMPLIED)


def _pytest_ini(sink: _Sink, src: Src, where: str) -> None:
    if at := src.find(r"^\s*\[(pytest|tool:pytest)\]"):
        sink.add("test", "pytest", basename(src.path), src.path, at, _IMPLIED)


def _requirements(sink: _Sink, src: Src, where: str) -> None:
    if at := src.find(r"^\s*[A-Za-z0-9-]"):
        sink.add("install", f"pip install -r {src.path}", "pip", src.path, at, _IMPLIED)


def _setup(sink: _Sink, src: Src, where: str) -> None:
    if at := src.find(r"\bsetup\s*\(|^\s*\[(metadata|options)\]"):
        sink.add("install", "pip install -e .", basename(src.path), src.path, at, _IMPLIED)


def _tox_file(sink: _Sink, src: Src, where: str) -> None:
    if src.path.endswith(".toml"):
        _tox_toml(sink, src, tomllib.loads(src.text), ())
    else:
        _tox_ini(sink, src.path, src.lines)


_BUILD_FILES: dict[str, Callable[[_Sink, Src, str], None]] = {
    "pyproject.toml": _pyproject,
    "tox.ini": _tox_file,
    "tox.toml": _tox_file,
    "noxfile.py": lambda sink, src, where: _nox(sink, src.path, src.lines),
    "makefile": lambda sink, src, where: _makefile(sink, src.path, src.lines),
    "gnumakefile": lambda sink, src, where: _makefile(sink, src.path, src.lines),
    "package.json": _package_json,
    "cargo.toml": _cargo,
    "go.mod": _go_mod,
    "cmakelists.txt": _cmake,
    "pytest.ini": _pytest_ini,
    "setup.cfg": _pytest_ini,
    "requirements.txt": _requirements,
    "requirements-dev.txt": _requirements,
    "setup.py": _setup,
}


# -- the instructions files ----------------------------------------------------------------

_RULE = re.compile(
    r"\b(must|never|always|do not|don't|should|shouldn't|prefer|avoid|required|make sure)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*])")
_FENCE = re.compile(r"^\s*(```+|~~~+)")
_SPAN = re.compile(r"``([^`]+)``|`([^`]+)`")
_RST_SPAN = re.compile(r"``([^`]+)``()")
"""reStructuredText's literals are double backquotes; a single pair is interpreted text
(`pre-commit <https://pre-commit.com>`_ is a link, not a command)."""
_RST_DIRECTIVE = re.compile(r"^\s*\.\.\s+[\w-]+::")
"""A directive (`.. note::`) whose content is prose: no literal block follows it, unless
it is a code directive (`_LITERAL`)."""
_PROMPT = re.compile(r"^\s*(?:\$|%|>|#)\s+")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#[.)])\s+")  # rst numbers `#.` items
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_RST_RULE = re.compile(r"""^\s*([=\-`:'"~^_*+#<>.])\1+\s*$""")
_LITERAL = re.compile(r"(::\s*$)|^\s*\.\.\s+(code-block|code|sourcecode)::")


def is_instructions(path: str) -> bool:
    """AGENTS.md, CLAUDE.md or a CONTRIBUTING guide, at the top, in .github/ or docs/."""
    name = basename(path).lower()
    if dirname(path) not in ("", ".github", "docs", "doc"):
        return False
    return name in ("agents.md", "claude.md", "copilot-instructions.md") or name.startswith(
        "contributing"
    )


def _rule_text(text: str) -> str | None:
    """The rule a paragraph or list item states: all of it when short, else its first
    sentence that states one; None when it states none."""
    if not _RULE.search(text):
        return None
    if len(text) <= _MAX_RULE:
        return text
    sentence = next((s for s in _SENTENCE.split(text) if _RULE.search(s)), text)
    return sentence if len(sentence) <= _MAX_RULE else sentence[: _MAX_RULE - 1] + "…"


_TRAILING_COMMENT = re.compile(r"\s+#(?:\s.*)?$")


def _instructions(sink: _Sink, path: str, lines: list[str]) -> None:
    source = basename(path)
    rst = path.lower().endswith((".rst", ".txt"))
    spans = _RST_SPAN if rst else _SPAN
    known = set(sink.ctx.all_files())
    fence: str | None = None
    literal_col: int | None = None  # reStructuredText: a literal block indented past this
    para: list[tuple[int, str]] = []  # the prose paragraph or list item being read
    rules = 0

    def end_paragraph() -> None:
        nonlocal rules
        if para and rules < _MAX_RULES_PER_FILE:
            body = " ".join(t for _, t in para)
            if (
                len(body) >= 12
                and not body.startswith(("#", "..", "|", "<", "!["))
                and (rule := _rule_text(body))
            ):
                sink.rules.append((rule, path, para[0][0], para[-1][0]))
                rules += 1
        para.clear()

    def command(number: int, text: str) -> None:
        text = _PROMPT.sub("", text)
        # A shell comment after the command (`pytest -n auto  # all tests`) is no part of it.
        m = _TRAILING_COMMENT.search(text)
        if m and text[: m.start()].count('"') % 2 == 0 and text[: m.start()].count("'") % 2 == 0:
            text = text[: m.start()]
        sink.add(classify(text), text, source, path, number, _GUIDE)

    for i, raw in enumerate(lines):
        number, text = i + 1, raw.strip()
        if fence is not None:
            if text.startswith(fence):
                fence = None
            elif text and not text.startswith("#"):
                command(number, text)
            continue
        # reStructuredText has no fences: its `~~~~` underlines a section.
        if not rst and (m := _FENCE.match(raw)):
            end_paragraph()
            fence = m.group(1)
            continue
        indent = len(raw) - len(raw.lstrip())
        if literal_col is not None:
            if not text:
                continue
            if indent > literal_col:
                command(number, text)
                continue
            literal_col = None
        if not text or _MD_HEADING.match(raw) or (_RST_RULE.match(raw) and text != "::"):
            end_paragraph()  # a lone `::` is no rule: it opens a literal block
            continue
        if _BULLET.match(raw):
            end_paragraph()
        for m in spans.finditer(raw):
            span = (m.group(1) or m.group(2)).strip()
            # A lone path in prose (pytest's ``doc/en/_build/html``, ``joedoe/pytest-xyz``)
            # names a place, not a command: a script is one the tree holds.
            if " " in span or "/" not in span or span.lstrip("./") in known:
                command(number, span)
        para.append((number, _BULLET.sub("", text)))
        if (m := _LITERAL.search(raw)) is not None:
            # `then::` ends its paragraph; the literal block follows (not after `.. note::`)
            end_paragraph()
            if m.group(2) or not _RST_DIRECTIVE.match(raw):
                # Indented past the paragraph's text: a list item's text starts after
                # its marker (`#. Install it::` then `     $ pip install ...`).
                bullet = _BULLET.match(raw)
                literal_col = len(bullet.group(0)) if bullet else indent
    end_paragraph()


# -- the track -----------------------------------------------------------------------------


def _nearest(ctx: Context, by_dir: dict[str, list[str]]) -> list[str]:
    """The build files of the scope's directory, else of the nearest one above it."""
    d = ctx.scope
    if d and d in ctx.all_files():  # a file scope: its directory
        d = dirname(d)
    while True:
        if d in by_dir:
            return by_dir[d]
        if not d:
            return []
        d = dirname(d)


def _gather(ctx: Context) -> _Sink:
    sink = _Sink(ctx)
    files = ctx.all_files()
    by_dir: dict[str, list[str]] = {}
    ci: list[str] = []
    guides: list[str] = []
    for path in files:
        name = basename(path).lower()
        if path.startswith(".github/workflows/") and name.endswith((".yml", ".yaml")):
            ci.append(path)
        elif path == ".gitlab-ci.yml":
            ci.append(path)
        elif is_instructions(path):
            guides.append(path)
        elif name in _BUILD_FILES:
            by_dir.setdefault(dirname(path), []).append(path)
    # AGENTS.md and CLAUDE.md before the contributing guides
    guides.sort(key=lambda p: (not basename(p).lower().startswith(("agents", "claude")), p))
    for path in guides:
        if (lines := ctx.lines(path)) is not None:
            sink.read.append(path)
            _instructions(sink, path, lines)
    for path in ci:
        if (lines := ctx.lines(path)) is not None:
            sink.read.append(path)
            (_gitlab_ci if path == ".gitlab-ci.yml" else _github_workflow)(sink, path, lines)
    for path in _nearest(ctx, by_dir):
        lines = ctx.lines(path)
        if lines is None:
            continue
        sink.read.append(path)
        _BUILD_FILES[basename(path).lower()](sink, Src(path, lines), dirname(path))
    if not any(c.kind == "test" for c in sink.commands):
        _implied_tests(sink)
    return sink


_TEST_DEF = re.compile(r"^\s*(async\s+)?def\s+test\w*\s*\(")


def _implied_tests(sink: _Sink) -> None:
    """Python tests without a configured runner: pytest collects `test_*` functions (and
    unittest classes), so `pytest`, cited at the first test function of the shallowest
    test file in scope."""
    ctx = sink.ctx
    tests = sorted(
        (p for p in ctx.files() if p.endswith(".py") and is_test_path(p)),
        key=lambda p: (p.count("/"), p),
    )
    for path in tests[:50]:
        if (line := find_line(ctx, path, _TEST_DEF)) is not None:
            sink.read.append(path)
            sink.add("test", "pytest", "test files", path, line, _IMPLIED)
            return


_CI_AUX = re.compile(r"coverage|release|publish|deploy|nightly|bench|docs|lock|stale|label")


_PROJECT_INSTALL = re.compile(
    r"\binstall\b.*(?:\s(?:-e\s+)?\.(?:\[[^\]]*\])?(?:\s|$)|\s-r\s|--group|--extra)|\bsync\b"
    r"|^(?:npm|yarn|pnpm|bun)\s+(?:ci|install)\b|^cargo\s+(?:build|fetch)|^go\s+mod\s+download"
)


def installs_project(command: str) -> bool:
    """Whether an install command installs the project and its dependencies (`pip
    install -e . --group dev`, `uv sync`, `pip install -r requirements.txt`, `npm ci`)
    rather than a tool (`pip install --user pre-commit`, `pip install tox`)."""
    return bool(_PROJECT_INSTALL.search(command))


_JS_TOOLS = frozenset(
    "npm yarn pnpm bun npx node jest vitest mocha ava karma playwright cypress grunt".split()
)
_OTHER_MANIFESTS = frozenset(
    "pyproject.toml setup.py setup.cfg Cargo.toml go.mod pom.xml build.gradle "
    "build.gradle.kts CMakeLists.txt".split()
)


def _js_aside(ctx: Context) -> bool:
    """Whether the root's package.json sits beside another language's manifest: then the
    project is that language's and its JavaScript (django's admin scripts, sphinx's
    search page) is an asset with tests of its own, not the project's test command."""
    top = {p for p in ctx.all_files() if "/" not in p}
    return "package.json" in top and bool(top & _OTHER_MANIFESTS)


def _sort_key(c: _Cmd, js_aside: bool = False) -> tuple[int, int, int, int, int, int]:
    """Kind; a JavaScript command after the others when the project is another
    language's (`_js_aside`); source rank; for CI, the workflow that tests before
    coverage, release and other chores, a tool's command before a repository script's,
    and the plainest (shortest) variant first: a matrix's extra features and flags make a
    command longer, not more typical."""
    words = _words(c.command)
    aside = int(js_aside and bool(words) and words[0].lower() in _JS_TOOLS)
    # The project's own install before a tool's (pytest's guide names pre-commit first).
    aside += int(c.kind == "install" and not installs_project(c.command))
    if c.origin != _CI:
        return KINDS.index(c.kind), aside, c.rank, 0, 0, 0
    name = basename(c.path).lower()
    chore = 2 if _CI_AUX.search(name) else 0 if re.search(r"test|^ci\.", name) else 1
    script = int(bool(words) and "/" in words[0])
    return KINDS.index(c.kind), aside, c.rank, chore, script, len(c.command)


def _ordered(found: list[_Cmd], js_aside: bool = False) -> tuple[list[_Cmd], dict[str, int]]:
    """By kind, best source first, each command once; at most MAX_PER_KIND per kind."""
    ranked = sorted(enumerate(found), key=lambda ic: (*_sort_key(ic[1], js_aside), ic[0]))
    seen: set[tuple[str, str]] = set()
    per_kind: dict[str, int] = {}
    per_file: dict[tuple[str, str], int] = {}
    left: dict[str, int] = {}
    out: list[_Cmd] = []
    first: dict[tuple[str, str], _Cmd] = {}
    for _, c in ranked:
        key = (c.kind, c.command.lower())
        if key in seen:
            # CI's `nox -s tests` says nothing of what it runs; the noxfile does
            if not first[key].runs and c.runs:
                first[key].runs = c.runs
            continue
        seen.add(key)
        first[key] = c
        n_file = per_file[c.kind, c.path] = per_file.get((c.kind, c.path), 0) + 1
        if per_kind.get(c.kind, 0) < MAX_PER_KIND and n_file <= _PER_FILE:
            per_kind[c.kind] = per_kind.get(c.kind, 0) + 1
            out.append(c)
        else:
            left[c.kind] = left.get(c.kind, 0) + 1
    return out, left


def _claim(c: _Cmd) -> str:
    runs = f" (runs {c.runs})" if c.runs and c.runs != c.command else ""
    return f"{c.kind}: {c.command}{runs} — {c.source}"


def commands_track(ctx: Context) -> Track:
    """The commands explorer for `ctx`'s scope."""
    spec = TrackSpec(
        name="commands",
        focus=ctx.scope or ".",
        approach=(
            "read the CI workflows, the instructions files (AGENTS.md, CLAUDE.md, "
            "CONTRIBUTING), the task runners (tox, nox, make, npm and hatch scripts) and "
            "the manifests for the commands to install, build, test, lint and run, and "
            "the instructions files for the rules they state"
        ),
        gates=[
            "understood: at least one command is stated or implied by a file",
            "evidence: each command and rule cites the line that states it",
            "complete: a test command was found",
        ],
        deliverable="commands (kind, command, what it runs, source, citation) and instructions",
    )

    pending: list[Command] = []

    def understand(state: TrackState) -> tuple[bool, str]:
        sink = _gather(ctx)
        commands, left = _ordered(sink.commands, _js_aside(ctx))
        pending.clear()
        for c in commands:
            citation = cite(ctx, c.path, c.line)
            if state.claim(_claim(c), citation, topic="commands") and citation is not None:
                pending.append(
                    Command(
                        kind=c.kind,
                        command=c.command,
                        runs=c.runs,
                        source=c.source,
                        citation=citation,
                    )
                )
        for text, path, first, last in sink.rules[:MAX_RULES]:
            state.claim(text, cite(ctx, path, first, last), topic="instructions")
        for kind, n in left.items():
            state.gaps.append(f"{plural(n, 'more ' + kind + ' command')} not listed")
        if sink.read:
            state.conclusions.append("read " + ", ".join(sink.read[:8]))
        if not commands:
            state.gaps.append(
                "no file states a command to install, build, test, lint or run "
                "(CI, instructions files, task runners, manifests)"
            )
            return False, "no commands found"
        counts = ", ".join(f"{k} {n}" for k in KINDS if (n := sum(c.kind == k for c in commands)))
        return True, f"{len(commands)} commands ({counts}) from {plural(len(sink.read), 'file')}"

    def complete(state: TrackState) -> tuple[bool, str]:
        # Only what passed the evidence gate is reported.
        kept = {c.ref for f in state.findings if f.topic == "commands" for c in f.citations}
        records = [c for c in pending if c.citation.ref in kept]
        state.output["commands"] = records
        state.output["instructions"] = [
            Finding(claim=f.claim, citations=f.citations, topic=f.topic)
            for f in state.findings
            if f.topic == "instructions"
        ]
        test = next((c for c in records if c.kind == "test"), None)
        if test is None:
            state.gaps.append("no test command is stated or implied by any file read")
            return False, "no test command found"
        return True, f"test with `{test.command}` ({test.source}, {test.citation.ref})"

    return Track(spec=spec, understand=understand, complete=complete, make=commands_track)
