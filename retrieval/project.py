"""The names a project goes by, read from the manifests at its root.

A question about a project names it ("`bat` prints ...", "ripgrep skips ...", "flask's
test client"), and every file of the project is about it: its own name says nothing of
which file a question is about. Scripts and docs that call the tool (`diagnostics/info.sh`
runs `bat --version`) repeat the name most, and would win on it. The evaluator leaves these
names out of a candidate's coverage (`retrieval.evaluate`).

The names come from the package metadata at the index root, not a list: Cargo.toml
(`[package]`, `[lib]` and `[[bin]]` names: ripgrep's binary is `rg`), package.json,
pyproject.toml, setup.cfg, setup.py, go.mod (the module path's last part, a `/vN` suffix
left out), CMakeLists.txt's `project(...)`, meson.build's `project(...)`, pom.xml's own
`artifactId`, Gradle's `rootProject.name` (settings.gradle or settings.gradle.kts) and
Package.swift's `Package(name: ...)`. A name is kept as written, lowercased, and with `-`
as `_` (how Rust code and Python imports spell it); a scope (`@scope/name`) is dropped.

A Cargo workspace root (`[workspace]`, no `[package]`) names no crate of its own; its
project's name is the member crate that its sibling crates are named after (tokio's
`tokio` beside `tokio-util` and `tokio-macros`, serde's `serde` beside `serde_derive`),
read from the members listed by path (globs are not expanded). A workspace whose members
share no such name (a crate of each tool) names nothing.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path

MANIFEST_MAX_BYTES = 256 * 1024
"""A manifest larger than this is not read (none of the usual ones comes near it)."""

_SETUP_NAME = re.compile(r"""\bname\s*=\s*["']([A-Za-z0-9][\w.-]*)["']""")
_GO_MODULE = re.compile(r"^\s*module\s+(\S+)", re.M)
_PROJECT_CALL = re.compile(r"^\s*project\s*\(\s*['\"]?([A-Za-z0-9][\w.-]*)", re.M | re.I)
_POM_PARENT = re.compile(r"<parent>.*?</parent>", re.S)
_POM_DEPENDENCIES = re.compile(r"<(dependencies|dependencyManagement|build|profiles)>.*", re.S)
_POM_ARTIFACT = re.compile(r"<artifactId>\s*([\w.-]+)\s*</artifactId>")
_GO_MAJOR = re.compile(r"^v\d+$")
_GRADLE_ROOT = re.compile(r"""^\s*rootProject\.name\s*=\s*["']([A-Za-z0-9][\w.-]*)["']""", re.M)
_SWIFT_PACKAGE = re.compile(r'\bPackage\s*\(\s*name\s*:\s*"([A-Za-z0-9][\w.-]*)"')
_CRATE_SEPARATORS = ("-", "_")
_LITERAL_MEMBER = re.compile(r"^(?!/)(?!.*\.\.)[\w./-]+$")
"""A workspace member given by a relative path inside the root (no glob, no `..`)."""


def _read(root: Path, name: str) -> str | None:
    path = root / name
    try:
        if not path.is_file() or path.stat().st_size > MANIFEST_MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _toml(text: str | None) -> dict[str, object]:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _named(table: object) -> list[str]:
    if isinstance(table, dict) and isinstance(table.get("name"), str):
        return [table["name"]]
    return []


def _cargo(text: str | None) -> list[str]:
    data = _toml(text)
    names = [*_named(data.get("package")), *_named(data.get("lib"))]
    bins = data.get("bin")
    if isinstance(bins, list):
        names.extend(n for b in bins for n in _named(b))
    return names


def _workspace(root: Path, text: str | None) -> list[str]:
    """A workspace root's name: the member crate the other members are named after."""
    data = _toml(text)
    workspace = data.get("workspace")
    if "package" in data or not isinstance(workspace, dict):
        return []
    members = workspace.get("members")
    if not isinstance(members, list):
        return []
    crates: list[str] = []
    for member in members:
        if not isinstance(member, str) or not _LITERAL_MEMBER.match(member):
            continue
        own = _named(_toml(_read(root / member, "Cargo.toml")).get("package"))
        crates.extend(own or [member.rstrip("/").rsplit("/", 1)[-1]])

    def extends(name: str, base: str) -> bool:
        return any(name.startswith(base + sep) for sep in _CRATE_SEPARATORS)

    # serde_derive is named after serde, and serde_derive_internals after it: only the
    # name no other member's extends is the project's.
    return [
        name
        for name in dict.fromkeys(crates)
        if any(extends(other, name) for other in crates)
        and not any(extends(name, other) for other in crates)
    ]


def _package_json(text: str | None) -> list[str]:
    if not text:
        return []
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    names = _named(data)
    bins = data.get("bin")
    if isinstance(bins, dict):
        names.extend(k for k in bins if isinstance(k, str))
    return names


def _pyproject(text: str | None) -> list[str]:
    data = _toml(text)
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    return [*_named(data.get("project")), *_named(poetry)]


def _setup_cfg(text: str | None) -> list[str]:
    if not text:
        return []
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    name = parser.get("metadata", "name", fallback="")
    return [name] if name else []


def _setup_py(text: str | None) -> list[str]:
    match = _SETUP_NAME.search(text) if text else None
    return [match.group(1)] if match else []


def _go_mod(text: str | None) -> list[str]:
    match = _GO_MODULE.search(text) if text else None
    if not match:
        return []
    parts = match.group(1).strip("/").split("/")
    if len(parts) > 1 and _GO_MAJOR.match(parts[-1]):
        parts.pop()
    return [parts[-1]]


def _project_call(text: str | None) -> list[str]:
    match = _PROJECT_CALL.search(text) if text else None
    return [match.group(1)] if match else []


def _gradle_settings(text: str | None) -> list[str]:
    match = _GRADLE_ROOT.search(text) if text else None
    return [match.group(1)] if match else []


def _package_swift(text: str | None) -> list[str]:
    match = _SWIFT_PACKAGE.search(text) if text else None
    return [match.group(1)] if match else []


def _pom(text: str | None) -> list[str]:
    if not text:
        return []
    own = _POM_DEPENDENCIES.sub("", _POM_PARENT.sub("", text))
    match = _POM_ARTIFACT.search(own)
    return [match.group(1)] if match else []


def _spellings(names: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for raw in names:
        name = raw.strip().lower().rsplit("/", 1)[-1]
        if len(name) < 2:
            continue
        out.update({name, name.replace("-", "_")})
    return out


def project_names(root: Path) -> frozenset[str]:
    """The names the project at `root` goes by (the module doc), lowercased; empty when
    no manifest names it."""
    cargo = _read(root, "Cargo.toml")
    names = [
        *_cargo(cargo),
        *_workspace(root, cargo),
        *_package_json(_read(root, "package.json")),
        *_pyproject(_read(root, "pyproject.toml")),
        *_setup_cfg(_read(root, "setup.cfg")),
        *_setup_py(_read(root, "setup.py")),
        *_go_mod(_read(root, "go.mod")),
        *_project_call(_read(root, "CMakeLists.txt")),
        *_project_call(_read(root, "meson.build")),
        *_pom(_read(root, "pom.xml")),
        *_gradle_settings(_read(root, "settings.gradle.kts")),
        *_gradle_settings(_read(root, "settings.gradle")),
        *_package_swift(_read(root, "Package.swift")),
    ]
    return frozenset(_spellings(names))
