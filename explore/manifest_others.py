"""The manifest parsers of the other ecosystems: JavaScript and TypeScript
(``package.json``, ``tsconfig*.json``, ``deno.json(c)``), PHP (``composer.json``), Go
(``go.mod``), Rust (``Cargo.toml``), the JVM (``pom.xml``, ``build.gradle(.kts)``) and Ruby
(``Gemfile``).

Each fills a `Parsed` (explore.manifest_parsing); explore.manifest picks the parser by file
name and runs it.
"""

from __future__ import annotations

import json
import re
import tomllib
import xml.etree.ElementTree as ET
from posixpath import basename, dirname
from typing import Any

from dowse.explore.manifest_parsing import (
    Parsed,
    Src,
    as_dict,
    as_strs,
    quoted_forms,
    toml_key,
    toml_table,
)
from dowse.explore.tracks import find_line

__all__ = [
    "cargo",
    "composer",
    "deno",
    "gemfile",
    "go_mod",
    "gradle",
    "package_json",
    "pom",
    "tsconfig",
]


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
        out.identify(f"the {kind} {name}", _json_key(out.src, "name", 1))


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
            out.identify(f"the Go module {args[0]}", number)
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
        out.identify(f"the Rust crate {package.get('name', '?')}", toml_key(src, "name", at) or at)
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
    out.identify(
        f"the Maven project {_child_text(project, 'groupId')}:{artifact}".rstrip(":"),
        src.find(rf"<artifactId>\s*{re.escape(artifact)}\s*</artifactId>")
        if artifact
        else src.find(r"<project\b"),
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
