"""The manifest formats: how each of the thirteen is read, and which file is which.

`parser_for` names the parser of a file (by its name: ``pyproject.toml``, ``setup.cfg``,
``setup.py``, ``requirements*.txt``, ``package.json``, ``tsconfig*.json``, ``deno.json(c)``,
``composer.json``, ``go.mod``, ``Cargo.toml``, ``pom.xml``, ``build.gradle(.kts)``,
``Gemfile``). A parser fills a `Parsed` from the manifest's `Src`: the dependencies, scripts
and entry points it declares, each with the line the text shows it on, found with the
look-ups below (after the line of its table or key, as explore.manifest's invariants
require). Parsers are grouped by ecosystem: Python, JavaScript and TypeScript, PHP, Go,
Rust, the JVM, Ruby. explore.manifest finds the manifests, runs their parsers and
assembles the report; explore.commands reads the same formats for build and test commands
through `Src` and the TOML look-ups.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from posixpath import basename, dirname
from typing import Any

from dowse.explore.records import Dependency
from dowse.explore.tracks import Context, find_line

__all__ = [
    "Parsed",
    "Src",
    "as_dict",
    "as_strs",
    "parser_for",
    "quoted_forms",
    "tests_own_requirements",
    "toml_key",
    "toml_table",
]


# -- locating declarations in the text ------------------------------------------------------


class Src:
    """A manifest's lines, and the look-ups every parser uses to find declaration lines."""

    def __init__(self, path: str, lines: list[str]) -> None:
        self.path = path
        self.lines = lines
        self.text = "\n".join(lines)

    def find(self, pattern: str, start: int | None = 1, stop: str | None = None) -> int | None:
        """The first line from `start` (1-based) where the regex `pattern` matches, before
        the first later line matching `stop`."""
        rx, end = re.compile(pattern), re.compile(stop) if stop else None
        for i in range(max(start or 1, 1) - 1, len(self.lines)):
            if rx.search(self.lines[i]):
                return i + 1
            if end is not None and i + 1 != start and end.search(self.lines[i]):
                return None
        return None

    def find_text(self, needles: Iterable[str], start: int | None = 1) -> int | None:
        """The first line from `start` holding any of `needles`; else the first anywhere."""
        wanted = [n for n in needles if n]
        for begin in (max(start or 1, 1), 1):
            for i in range(begin - 1, len(self.lines)):
                if any(n in self.lines[i] for n in wanted):
                    return i + 1
        return None

    def line_at(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1


def _tq(part: str) -> str:
    """A TOML key part as a regex: bare, "double-quoted" or 'single-quoted'."""
    e = re.escape(part)
    return f"(?:\"{e}\"|'{e}'|{e})"


def toml_key(src: Src, key: str, start: int | None) -> int | None:
    """`key = ...` (or a dotted `key.sub = ...`) in the table whose header is at `start`."""
    return src.find(r"^\s*" + _tq(key) + r"\s*[=.]", start, stop=r"^\s*\[")


def toml_table(src: Src, *parts: str) -> int | None:
    """The line of table `[a.b.c]`, or of key `c` inside `[a.b]` (an inline table)."""
    line = src.find(r"^\s*\[\s*" + r"\s*\.\s*".join(_tq(p) for p in parts) + r"\s*\]")
    if line is None and len(parts) > 1 and (parent := toml_table(src, *parts[:-1])):
        line = toml_key(src, parts[-1], parent)
    return line


def quoted_forms(value: str) -> list[str]:
    return [f'"{value}"', f"'{value}'"]


# -- what a parser returns --------------------------------------------------------------------


@dataclass
class _Named:
    name: str
    value: str
    path: str
    """The file to cite (the manifest, or a file it points to)."""
    line: int | None


@dataclass
class Parsed:
    src: Src
    ctx: Context
    deps: list[Dependency] = field(default_factory=list)
    scripts: list[_Named] = field(default_factory=list)
    entries: list[_Named] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Conclusions about the manifest (Python version, workspaces, included files)."""
    gaps: list[str] = field(default_factory=list)
    ident: tuple[int, int] | None = None
    """The lines that identify the manifest (its name, its compiler options), for a claim."""
    what: str = ""
    name: str = ""
    """The package the manifest makes (an npm package, a Python project, a crate, a Go
    module): the project's own name, which its code may import."""

    def dep(self, name: str, spec: str, group: str, line: int | None) -> None:
        self.deps.append(
            Dependency(name=name, spec=spec.strip(), manifest=self.src.path, line=line, group=group)
        )

    def script(self, name: str, command: str, line: int | None) -> None:
        self.scripts.append(_Named(name, command, self.src.path, line))

    def entry(self, name: str, target: str, line: int | None, path: str = "") -> None:
        self.entries.append(_Named(name, target, path or self.src.path, line))

    def identify(
        self, what: str, line: int | None, end: int | None = None, *, name: str = ""
    ) -> None:
        self.what = what
        self.name = name or self.name
        if line is not None:
            self.ident = (line, max(end or line, line))


def as_dict(value: Any) -> dict[str, Any]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def as_strs(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


# -- Python ------------------------------------------------------------------------------------

_PEP508 = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(.*?)\s*$")


def _pep508(requirement: str) -> tuple[str, str]:
    m = _PEP508.match(requirement)
    return (m.group(1), m.group(2)) if m else (requirement.strip(), "")


def _group(name: str) -> str:
    return "dev" if name.lower() in {"dev", "develop", "development"} else f"group:{name}"


def _pep508_list(
    out: Parsed, values: list[str], group: str, start: int | None, *, quoted: bool = True
) -> None:
    pos = start
    for value in values:
        line = out.src.find_text(quoted_forms(value) if quoted else [value], pos)
        pos = line or pos
        name, spec = _pep508(value)
        out.dep(name, spec, group, line)


def pyproject(out: Parsed) -> None:
    src = out.src
    data = tomllib.loads(src.text)
    project = as_dict(data.get("project"))
    at = toml_table(src, "project")
    if project:
        name, version = project.get("name", "?"), project.get("version", "")
        out.identify(
            f"the Python project {name} {version}".rstrip(),
            toml_key(src, "name", at) or at,
            name=name if isinstance(name, str) and name != "?" else "",
        )
        if isinstance(rp := project.get("requires-python"), str):
            out.notes.append(f"requires Python {rp}")
    _pep508_list(
        out, as_strs(project.get("dependencies")), "runtime", toml_key(src, "dependencies", at)
    )
    extras_at = toml_table(src, "project", "optional-dependencies")
    for extra, values in as_dict(project.get("optional-dependencies")).items():
        _pep508_list(out, as_strs(values), f"optional:{extra}", toml_key(src, extra, extras_at))
    groups_at = toml_table(src, "dependency-groups")
    for name, values in as_dict(data.get("dependency-groups")).items():
        _pep508_list(out, as_strs(values), _group(name), toml_key(src, name, groups_at))
    build = as_dict(data.get("build-system"))
    _pep508_list(
        out,
        as_strs(build.get("requires")),
        "build",
        toml_key(src, "requires", toml_table(src, "build-system")),
    )
    for table in ("scripts", "gui-scripts"):
        table_at = toml_table(src, "project", table)
        for name, target in as_dict(project.get(table)).items():
            out.entry(name, str(target), toml_key(src, name, table_at))
    for group, points in as_dict(project.get("entry-points")).items():
        group_at = toml_table(src, "project", "entry-points", group)
        for name, target in as_dict(points).items():
            out.entry(f"{name} ({group})", str(target), toml_key(src, name, group_at))
    _poetry(out, as_dict(as_dict(data.get("tool")).get("poetry")))


def _poetry_spec(value: Any) -> str:
    if isinstance(value, str):
        return value
    info = as_dict(value)
    for key in ("version", "git", "path", "url"):
        if isinstance(info.get(key), str):
            return info[key] if key == "version" else f"{key} {info[key]}"
    return "several constraints" if isinstance(value, list) else ""


def _poetry(out: Parsed, poetry: dict[str, Any]) -> None:
    if not poetry:
        return
    src = out.src
    at = toml_table(src, "tool", "poetry")
    if out.ident is None:
        name = poetry.get("name")
        out.identify(
            f"the Poetry project {name or '?'}",
            toml_key(src, "name", at) or at,
            name=name if isinstance(name, str) else "",
        )
    sections: list[tuple[tuple[str, ...], dict[str, Any], str]] = [
        (("dependencies",), as_dict(poetry.get("dependencies")), "runtime"),
        (("dev-dependencies",), as_dict(poetry.get("dev-dependencies")), "dev"),
    ]
    for name, group in as_dict(poetry.get("group")).items():
        sections.append(
            (
                ("group", name, "dependencies"),
                as_dict(as_dict(group).get("dependencies")),
                _group(name),
            )
        )
    for parts, deps, group in sections:
        table_at = toml_table(src, "tool", "poetry", *parts)
        for name, value in deps.items():
            if name.lower() == "python":
                out.notes.append(f"requires Python {_poetry_spec(value)}")
                continue
            out.dep(name, _poetry_spec(value), group, toml_key(src, name, table_at))
    scripts_at = toml_table(src, "tool", "poetry", "scripts")
    for name, target in as_dict(poetry.get("scripts")).items():
        ref = target if isinstance(target, str) else str(as_dict(target).get("reference", target))
        out.entry(name, ref, toml_key(src, name, scripts_at))


class _CaseConfig(configparser.ConfigParser):
    def optionxform(self, optionstr: str) -> str:
        return optionstr  # extras and script names keep their case


def _cfg_values(raw: str) -> list[str]:
    return [v.strip() for v in raw.splitlines() if v.strip() and not v.strip().startswith("#")]


def setup_cfg(out: Parsed) -> None:
    src = out.src
    cfg = _CaseConfig(interpolation=None)
    cfg.read_string(src.text, source=src.path)
    meta_at = src.find(r"^\s*\[metadata\]")
    if cfg.has_option("metadata", "name"):
        out.identify(
            f"the Python project {cfg.get('metadata', 'name')}", src.find(r"^\s*name\s*=", meta_at)
        )
    elif meta_at is not None:
        out.identify("setuptools metadata", meta_at)
    options_at = src.find(r"^\s*\[options\]")
    for key, group in (("install_requires", "runtime"), ("setup_requires", "build")):
        if cfg.has_option("options", key):
            _pep508_list(
                out,
                _cfg_values(cfg.get("options", key)),
                group,
                src.find(rf"^\s*{key}\s*=", options_at),
                quoted=False,
            )
    if cfg.has_option("options", "python_requires"):
        out.notes.append(f"requires Python {cfg.get('options', 'python_requires')}")
    if cfg.has_section("options.extras_require"):
        extras_at = src.find(r"^\s*\[options\.extras_require\]")
        for extra, raw in cfg.items("options.extras_require"):
            _pep508_list(
                out,
                _cfg_values(raw),
                f"optional:{extra}",
                src.find(rf"^\s*{re.escape(extra)}\s*=", extras_at),
                quoted=False,
            )
    if cfg.has_section("options.entry_points"):
        points_at = src.find(r"^\s*\[options\.entry_points\]")
        for group, raw in cfg.items("options.entry_points"):
            group_at = src.find(rf"^\s*{re.escape(group)}\s*=", points_at)
            for item in _cfg_values(raw):
                name, _, target = item.partition("=")
                label = (
                    name.strip()
                    if group in ("console_scripts", "gui_scripts")
                    else (f"{name.strip()} ({group})")
                )
                out.entry(
                    label, target.strip(), src.find(rf"^\s*{re.escape(name.strip())}\s*=", group_at)
                )


_STRING = re.compile(r"""(['"])(.*?)(?<!\\)\1""")


def _bracketed(text: str, start: int) -> str:
    """The text from the bracket at `start` to its match (strings skipped; best effort)."""
    pairs = {"[": "]", "{": "}", "(": ")"}
    depth, i, quote = 0, start, ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in pairs:
            depth += 1
        elif ch in pairs.values():
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        i += 1
    return text[start:]


def setup_py(out: Parsed) -> None:
    """setup.py by pattern: literal lists only; the script is never run."""
    src, text = out.src, out.src.text
    if m := re.search(r"\bname\s*=\s*['\"]([^'\"]+)['\"]", text):
        out.identify(f"the Python project {m.group(1)}", src.line_at(m.start()), name=m.group(1))

    def literal(key: str) -> tuple[str, int] | None:
        m = re.search(rf"\b{key}\s*=\s*([\[{{])", text)
        if m is None:
            if re.search(rf"\b{key}\s*=", text):
                out.gaps.append(f"{key} is computed, not a literal: not evaluated")
            return None
        return _bracketed(text, m.start(1)), m.start(1)

    for key, group in (("install_requires", "runtime"), ("setup_requires", "build")):
        if found := literal(key):
            body, offset = found
            for s in _STRING.finditer(body):
                name, spec = _pep508(s.group(2))
                out.dep(name, spec, group, src.line_at(offset + s.start()))
    if found := literal("extras_require"):
        body, offset = found
        for m in re.finditer(r"""(['"])([^'"]+)\1\s*:\s*\[""", body):
            values = _bracketed(body, m.end() - 1)
            for s in _STRING.finditer(values):
                name, spec = _pep508(s.group(2))
                out.dep(
                    name,
                    spec,
                    f"optional:{m.group(2)}",
                    src.line_at(offset + m.end() - 1 + s.start()),
                )
    if m := re.search(r"""['"](console_scripts|gui_scripts)['"]\s*:\s*\[""", text):
        for s in _STRING.finditer(_bracketed(text, m.end() - 1)):
            name, _, target = s.group(2).partition("=")
            out.entry(name.strip(), target.strip(), src.line_at(m.end() - 1 + s.start()))
    if found := literal("scripts"):
        body, offset = found
        for s in _STRING.finditer(body):
            out.entry(basename(s.group(2)), s.group(2), src.line_at(offset + s.start()))


_TEST_DIRS = {"tests", "test", "testing"}


def _requirements_group(path: str) -> str:
    """`requirements.txt` → runtime, `requirements-dev.txt` or `requirements/dev.txt` → dev,
    `requirements/docs.txt` → docs; any requirements file inside a test directory → test."""
    if any(part.lower() in _TEST_DIRS for part in path.split("/")[:-1]):
        return "test"
    stem = basename(path).rsplit(".", 1)[0].lower()
    if basename(dirname(path)).lower() != "requirements":
        stem = stem.replace("requirements", "")
    word = stem.strip("-_.")
    if word in ("", "base", "main", "prod", "production", "runtime", "common", "install"):
        return "runtime"
    if word in ("tests", "testing"):
        return "test"
    return "dev" if word in ("dev", "develop", "development") else word


def tests_own_requirements(path: str) -> bool:
    """A pip requirements file of a test directory itself (`tests/requirements.txt`,
    `test/requirements/ci.txt`): the project's tests' needs, not a fixture deeper down
    (`tests/syntax-tests/source/requirements.txt`, a file to highlight)."""
    if parser_for(path) is not requirements:
        return False
    where = dirname(path)
    if basename(where).lower() == "requirements":
        where = dirname(where)
    return basename(where).lower() in _TEST_DIRS


def requirements(out: Parsed) -> None:
    group = _requirements_group(out.src.path)
    lines = out.src.lines
    i = 0
    while i < len(lines):
        number, text = i + 1, lines[i]
        while text.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text.rstrip()[:-1] + " " + lines[i]
        i += 1
        text = re.sub(r"(^|\s)#.*$", "", text).strip()
        if not text:
            continue
        option, _, rest = text.partition(" ")
        if option in ("-r", "--requirement", "-c", "--constraint") or text.startswith(
            ("-r", "--requirement=", "-c", "--constraint=")
        ):
            target = rest.strip() or text[2:].lstrip("=").strip()
            out.notes.append(f"includes {target} (line {number})")
            continue
        if option in ("-e", "--editable"):
            target = rest.strip()
            egg = re.search(r"#egg=([\w.-]+)", lines[number - 1])
            out.dep(
                egg.group(1) if egg else basename(target.rstrip("/")) or target,
                f"-e {target}",
                group,
                number,
            )
        elif text.startswith("-"):
            continue  # --index-url, --hash-only lines and other pip options
        elif "://" in text.split(" ", 1)[0]:
            egg = re.search(r"#egg=([\w.-]+)", lines[number - 1])
            out.dep(egg.group(1) if egg else text, text, group, number)
        else:
            name, spec = _pep508(re.sub(r"\s--hash=\S+", "", text))
            out.dep(name, spec, group, number)


# -- JavaScript and TypeScript -----------------------------------------------------------------


def _json_key(src: Src, key: str, start: int | None) -> int | None:
    return src.find(re.escape(json.dumps(key)) + r"\s*:", start)


def _loads_jsonc(text: str) -> Any:
    """JSON with comments and trailing commas, as tsconfig and deno.jsonc allow."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            if ch in "}]":
                k = len(out) - 1
                while k >= 0 and out[k].isspace():
                    k -= 1
                if k >= 0 and out[k] == ",":
                    del out[k]
            out.append(ch)
            i += 1
    return json.loads("".join(out))


def _json_object(text: str, tolerant: bool) -> dict[str, Any]:
    data = _loads_jsonc(text) if tolerant else json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("the top level is not an object")
    return {str(k): v for k, v in data.items()}


def _json_section(out: Parsed, data: dict[str, Any], key: str, group: str) -> None:
    at = _json_key(out.src, key, 1)
    for name, spec in as_dict(data.get(key)).items():
        out.dep(
            name,
            spec if isinstance(spec, str) else json.dumps(spec),
            group,
            _json_key(out.src, name, at),
        )


def _json_scripts(out: Parsed, data: dict[str, Any], key: str) -> None:
    at = _json_key(out.src, key, 1)
    for name, command in as_dict(data.get(key)).items():
        if isinstance(command, list):
            command = " && ".join(str(c) for c in command)
        elif isinstance(command, dict):  # deno: {"command": ..., "description": ...}
            command = command.get("command", "")
        out.script(name, str(command), _json_key(out.src, name, at))


def _json_identity(out: Parsed, data: dict[str, Any], kind: str) -> None:
    name = data.get("name")
    if isinstance(name, str):
        out.identify(f"the {kind} {name}", _json_key(out.src, "name", 1), name=name)


def package_json(out: Parsed) -> None:
    src = out.src
    data = _json_object(src.text, tolerant=False)
    _json_identity(out, data, "npm package")
    for key, group in (
        ("dependencies", "runtime"),
        ("devDependencies", "dev"),
        ("peerDependencies", "peer"),
        ("optionalDependencies", "optional"),
    ):
        _json_section(out, data, key, group)
    _json_scripts(out, data, "scripts")
    package = str(data.get("name", "")) or "bin"
    bin_at = _json_key(src, "bin", 1)
    if isinstance(data.get("bin"), str):
        out.entry(basename(package), data["bin"], bin_at)
    for name, target in as_dict(data.get("bin")).items():
        out.entry(name, str(target), _json_key(src, name, bin_at))
    if isinstance(data.get("main"), str):
        out.entry("main", data["main"], _json_key(src, "main", 1))
    if workspaces := as_strs(data.get("workspaces")):
        out.notes.append("workspaces: " + ", ".join(workspaces))


_TS_OPTIONS = (
    "target",
    "module",
    "moduleResolution",
    "strict",
    "jsx",
    "lib",
    "outDir",
    "rootDir",
    "baseUrl",
    "paths",
    "allowJs",
    "noEmit",
    "declaration",
)


def tsconfig(out: Parsed) -> None:
    src = out.src
    data = _json_object(src.text, tolerant=True)
    options = as_dict(data.get("compilerOptions"))
    at = _json_key(src, "compilerOptions", 1)
    shown: list[str] = []
    lines: list[int] = []
    for key in _TS_OPTIONS:
        if key in options:
            value = options[key]
            paths = key == "paths" and isinstance(value, dict)
            shown.append(f"{key}={len(value)} aliases" if paths else f"{key}={json.dumps(value)}")
            lines += [n] if (n := _json_key(src, key, at)) else []
    if at is not None:
        out.identify(
            " ".join(["TypeScript compiler options", ", ".join(shown[:4])]).strip(),
            at,
            max([at, *lines]),
        )
    if isinstance(data.get("extends"), (str, list)):
        shown.append(f"extends {json.dumps(data['extends'])}")
    if isinstance(data.get("references"), list):
        shown.append(f"{len(data['references'])} project references")
    out.notes.append("compilerOptions " + ", ".join(shown) if shown else "no compilerOptions")


def deno(out: Parsed) -> None:
    src = out.src
    data = _json_object(src.text, tolerant=True)
    _json_identity(out, data, "Deno config")
    _json_section(out, data, "imports", "runtime")
    _json_scripts(out, data, "tasks")
    if isinstance(data.get("exports"), str):
        out.entry("exports", data["exports"], _json_key(src, "exports", 1))
    for name, target in as_dict(data.get("exports")).items():
        out.entry(name, str(target), _json_key(src, name, _json_key(src, "exports", 1)))


def composer(out: Parsed) -> None:
    data = _json_object(out.src.text, tolerant=False)
    _json_identity(out, data, "Composer package")
    for key, group in (("require", "runtime"), ("require-dev", "dev")):
        at = _json_key(out.src, key, 1)
        for name, spec in as_dict(data.get(key)).items():
            if name == "php":
                out.notes.append(f"requires PHP {spec}")
            else:
                out.dep(name, str(spec), group, _json_key(out.src, name, at))
    _json_scripts(out, data, "scripts")
    for target in as_strs(data.get("bin")):
        out.entry(basename(target), target, out.src.find_text(quoted_forms(target)))


# -- Go, Rust, JVM, Ruby -----------------------------------------------------------------------


def go_mod(out: Parsed) -> None:
    block = ""  # the directive of the `( ... )` block we are in
    for number, raw in enumerate(out.src.lines, 1):
        code, _, comment = raw.partition("//")
        words = code.split()
        if not words:
            continue
        if block and words == [")"]:
            block = ""
            continue
        if not block and words[1:] == ["("]:
            block = words[0]
            continue
        directive, args = (block, words) if block else (words[0], words[1:])
        if directive == "module" and args:
            out.identify(f"the Go module {args[0]}", number, name=args[0])
        elif directive == "go" and args:
            out.notes.append(f"go {args[0]}")
        elif directive == "require" and len(args) >= 2:
            group = "indirect" if "indirect" in comment else "runtime"
            out.dep(args[0], args[1], group, number)


def _cargo_spec(value: Any) -> str:
    if isinstance(value, str):
        return value
    info = as_dict(value)
    if info.get("workspace") is True:
        return "workspace"
    for key in ("version", "git", "path"):
        if isinstance(info.get(key), str):
            return info[key] if key == "version" else f"{key} {info[key]}"
    return ""


def cargo(out: Parsed) -> None:
    src = out.src
    data = tomllib.loads(src.text)
    package = as_dict(data.get("package"))
    workspace = as_dict(data.get("workspace"))
    at = toml_table(src, "package")
    if package:
        crate = package.get("name")
        out.identify(
            f"the Rust crate {crate or '?'}",
            toml_key(src, "name", at) or at,
            name=crate if isinstance(crate, str) else "",
        )
    elif workspace:
        out.identify("a Cargo workspace", toml_table(src, "workspace"))
        if members := as_strs(workspace.get("members")):
            out.notes.append("workspace members: " + ", ".join(members))
    tables: list[tuple[tuple[str, ...], dict[str, Any]]] = [((), data)]
    tables += [(("target", cfg), as_dict(t)) for cfg, t in as_dict(data.get("target")).items()]
    for prefix, table in tables:
        for key, group in (
            ("dependencies", "runtime"),
            ("dev-dependencies", "dev"),
            ("build-dependencies", "build"),
        ):
            table_at = toml_table(src, *prefix, key)
            for name, value in as_dict(table.get(key)).items():
                line = toml_key(src, name, table_at) or toml_table(src, *prefix, key, name)
                optional = group == "runtime" and as_dict(value).get("optional") is True
                out.dep(name, _cargo_spec(value), "optional" if optional else group, line)
    ws_at = toml_table(src, "workspace", "dependencies")
    for name, value in as_dict(workspace.get("dependencies")).items():
        out.dep(name, _cargo_spec(value), "workspace", toml_key(src, name, ws_at))
    bins = data.get("bin")
    pos: int | None = 1
    for item in bins if isinstance(bins, list) else []:
        info = as_dict(item)
        pos = src.find(r"^\s*\[\[\s*bin\s*\]\]", pos) or pos
        name = str(info.get("name", package.get("name", "?")))
        out.entry(name, str(info.get("path", f"src/bin/{name}.rs")), toml_key(src, "name", pos))
        pos = (pos or 0) + 1
    main_rs = (dirname(src.path) + "/src/main.rs").lstrip("/")
    if not bins and package and main_rs in out.ctx.all_files():
        out.entry(
            str(package.get("name", "main")),
            "src/main.rs",
            find_line(out.ctx, main_rs, re.compile(r"^\s*(pub\s+)?(async\s+)?fn\s+main\b")),
            path=main_rs,
        )


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(node: ET.Element, name: str) -> ET.Element | None:
    return next((c for c in node if _local(c.tag) == name), None)


def _child_text(node: ET.Element, name: str) -> str:
    child = _child(node, name)
    return (child.text or "").strip() if child is not None else ""


def pom(out: Parsed) -> None:
    src = out.src
    project = ET.fromstring(src.text)
    artifact = _child_text(project, "artifactId")
    packaging = _child_text(project, "packaging") or "jar"
    out.identify(
        f"the Maven project {_child_text(project, 'groupId')}:{artifact}".rstrip(":"),
        src.find(rf"<artifactId>\s*{re.escape(artifact)}\s*</artifactId>")
        if artifact
        else src.find(r"<project\b"),
        # an aggregator (`pom`) makes no package of its own
        name=artifact if packaging != "pom" else "",
    )
    modules = _child(project, "modules")
    if modules is not None:
        out.notes.append("modules: " + ", ".join((m.text or "").strip() for m in modules))
    # the project's own <dependencies>, not those under dependencyManagement, build or profiles
    start, nested = None, 0
    for number, text in enumerate(src.lines, 1):
        nested += len(re.findall(r"<(dependencyManagement|build|profiles)>", text))
        nested -= len(re.findall(r"</(dependencyManagement|build|profiles)>", text))
        if nested == 0 and "<dependencies>" in text:
            start = number
            break
    deps = _child(project, "dependencies")
    pos = start
    for dep in deps if deps is not None else []:
        if _local(dep.tag) != "dependency":
            continue
        name = f"{_child_text(dep, 'groupId')}:{_child_text(dep, 'artifactId')}"
        scope = _child_text(dep, "scope") or "compile"
        line = src.find(rf"<artifactId>\s*{re.escape(_child_text(dep, 'artifactId'))}\s*<", pos)
        pos = line or pos
        out.dep(name, _child_text(dep, "version"), "runtime" if scope == "compile" else scope, line)
    if m := re.search(r"<mainClass>\s*([\w.$]+)\s*</mainClass>", src.text):
        out.entry("mainClass", m.group(1), src.line_at(m.start()))


_GRADLE_GROUPS = {
    "implementation": "runtime",
    "api": "runtime",
    "compile": "runtime",
    "runtimeOnly": "runtime",
    "runtime": "runtime",
    "compileOnly": "provided",
    "compileOnlyApi": "provided",
    "providedCompile": "provided",
    "testImplementation": "test",
    "testRuntimeOnly": "test",
    "testCompileOnly": "test",
    "testCompile": "test",
    "androidTestImplementation": "test",
    "testFixturesImplementation": "test",
    "debugImplementation": "dev",
    "annotationProcessor": "build",
    "kapt": "build",
    "ksp": "build",
    "classpath": "build",
}
_GRADLE_LINE = re.compile(r"^\s*(" + "|".join(_GRADLE_GROUPS) + r")\b\s*\(?\s*(.*)$")


def gradle(out: Parsed) -> None:
    src = out.src
    for number, line in enumerate(src.lines, 1):
        m = _GRADLE_LINE.match(line)
        if m is None:
            continue
        group, rest = _GRADLE_GROUPS[m.group(1)], m.group(2)
        if proj := re.match(r"""project\s*\(\s*(?:path\s*[:=]\s*)?['"]([^'"]+)['"]""", rest):
            out.dep(proj.group(1), "project", group, number)
        elif mapped := re.search(
            r"""group\s*[:=]\s*['"]([^'"]+)['"]\s*,\s*name\s*[:=]\s*"""
            r"""['"]([^'"]+)['"](?:\s*,\s*version\s*[:=]\s*"""
            r"""['"]([^'"]+)['"])?""",
            rest,
        ):
            out.dep(f"{mapped.group(1)}:{mapped.group(2)}", mapped.group(3) or "", group, number)
        elif coord := re.search(r"""['"]([^'"\s]+:[^'"\s]+)['"]""", rest):
            parts = coord.group(1).split(":")
            out.dep(":".join(parts[:2]), ":".join(parts[2:]), group, number)
        elif alias := re.match(r"(libs\.[\w.]+)", rest):
            out.dep(alias.group(1), "version catalog", group, number)
    if m := re.search(r"""mainClass(?:Name)?\s*(?:=|\.set\s*\()\s*['"]([^'"]+)['"]""", src.text):
        out.entry("application", m.group(1), src.line_at(m.start()))
    out.identify("a Gradle build", src.find(r"^\s*(plugins|dependencies)\s*\{") or src.find(r"\S"))


_RUBY_NAME = re.compile(r""":(\w+)|['"](\w+)['"]""")


def _ruby_groups(text: str) -> list[str]:
    """The group names in `:test, :development` or `["test"]`, development spelled dev."""
    names = [a or b for a, b in _RUBY_NAME.findall(text)]
    return ["dev" if n == "development" else n for n in names]


def gemfile(out: Parsed) -> None:
    stack: list[list[str]] = []  # the groups of each open `do` block ([] for other blocks)
    for number, line in enumerate(out.src.lines, 1):
        code = line.split("#", 1)[0].strip()
        if m := re.match(r"group\s*\(?(.*?)\)?\s+do\b", code):
            stack.append(_ruby_groups(m.group(1)))
        elif re.search(r"\bdo\s*(\|[^|]*\|)?$", code) or re.match(
            r"(if|unless|case|while|until|begin)\b", code
        ):
            stack.append([])  # a block that ends with `end` but names no group
        elif re.match(r"end\b", code):
            if stack:
                stack.pop()
        elif m := re.match(r"""gem\s*\(?\s*['"]([^'"]+)['"](.*)$""", code):
            rest, versions = m.group(2), []
            while arg := re.match(r"""\s*,\s*['"]([^'"]+)['"]""", rest):
                versions.append(arg.group(1))
                rest = rest[arg.end() :]
            groups = [g for frame in stack for g in frame]
            if inline := re.search(r"""groups?\s*(?::|=>)\s*(\[[^\]]*\]|:\w+|['"]\w+['"])""", rest):
                groups += _ruby_groups(inline.group(1))
            out.dep(m.group(1), ", ".join(versions), ",".join(groups) or "runtime", number)
        elif code == "gemspec" or code.startswith("gemspec "):
            out.notes.append(f"takes dependencies from the gemspec (line {number})")
        elif m := re.match(r"""ruby\s+['"]([^'"]+)['"]""", code):
            out.notes.append(f"requires Ruby {m.group(1)}")
    out.identify("Ruby gem dependencies", out.src.find(r"^\s*(source|gem)\b"))


# -- which parser reads a file ----------------------------------------------------------------

_Parser = Callable[[Parsed], None]
_BY_NAME: dict[str, _Parser] = {
    "pyproject.toml": pyproject,
    "setup.cfg": setup_cfg,
    "setup.py": setup_py,
    "package.json": package_json,
    "deno.json": deno,
    "deno.jsonc": deno,
    "composer.json": composer,
    "go.mod": go_mod,
    "Cargo.toml": cargo,
    "pom.xml": pom,
    "build.gradle": gradle,
    "build.gradle.kts": gradle,
    "Gemfile": gemfile,
}


def parser_for(path: str) -> _Parser | None:
    name = basename(path)
    if (parser := _BY_NAME.get(name)) is not None:
        return parser
    low = name.lower()
    if low.startswith("tsconfig") and low.endswith(".json"):
        return tsconfig
    in_requirements_dir = basename(dirname(path)).lower() == "requirements"
    if low.endswith((".txt", ".in")) and ("requirements" in low or in_requirements_dir):
        return requirements
    return None
