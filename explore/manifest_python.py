"""The Python manifest parsers: ``pyproject.toml`` (PEP 621, PEP 735 groups, Poetry),
``setup.cfg``, ``setup.py`` (by pattern, never executed) and ``requirements*.txt``.

Each fills a `Parsed` (explore.manifest_parsing); explore.manifest picks the parser by file
name and runs it.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from posixpath import basename, dirname
from typing import Any

from dowse.explore.manifest_parsing import (
    Parsed,
    as_dict,
    as_strs,
    quoted_forms,
    toml_key,
    toml_table,
)

__all__ = ["pyproject", "requirements", "setup_cfg", "setup_py"]


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
            f"the Python project {name} {version}".rstrip(), toml_key(src, "name", at) or at
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
        out.identify(
            f"the Poetry project {poetry.get('name', '?')}", toml_key(src, "name", at) or at
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
        out.identify(f"the Python project {m.group(1)}", src.line_at(m.start()))

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
