"""The configuration explorer: where and how the project is configured.

Four kinds of setting, each a claim citing the line that shows it:

    files     settings files in scope: settings/config modules (`settings.py`,
              `config.ts`), `*.conf`, `.env.example`, and TOML/YAML/JSON/INI files named
              config/settings or kept in a config/ directory; not the manifests, CI or
              the tools' own files (tox.ini, .pre-commit-config.yaml, ...)
    env       environment variables the code reads: os.environ/os.getenv, click's
              envvar=, process.env, os.Getenv/LookupEnv, env::var/env!, System.getenv,
              ENV[...], getenv(); and through the project's own readers: a function
              that passes its parameter to one of those (`func boolFromEnv(envVar
              string, ...)` reading `os.Getenv(envVar)`) reads the variable each call
              names (`boolFromEnv("GRPC_X", true)`, an UPPER_CASE literal)
    flags     command-line options the code defines: argparse/click/commander
              `--name`, Go's flag package and cobra's Flags(), clap's .long("name"),
              picocli's @Option(names=...); and a flag system of the project's own: a
              method named for a flag's long name that returns a literal
              (`fn name_long(&self) -> &'static str { "context" }`)
    classes   configuration types: classes, structs and interfaces named *Config,
              *Settings, *Options (Rust and Go also *Args, *Opts), pydantic BaseSettings
    named     for a question (`named`), the settings it writes by name (UPPER_CASE or
              snake_case: a method it names is no setting): a constant of that name the
              index defines (`NUMBER_GROUPING = 0`, every definition counted, settings
              modules first), else an option registered with that name as a call's first
              argument (`parser.addini("tmp_path_retention_count", ...)`, a call named
              add/register/define/declare… first, else any call), else the name as a
              string literal (`const ENV_WORKER_THREADS: &str = "TOKIO_WORKER_THREADS"`)

Invariants:

- Found by line-anchored or call-shaped regular expressions over the code files in scope
  (tests left out: they set variables and pass flags to exercise the code); at most
  `MAX_SCAN` files, evenly spaced beyond that, and a gap says so.
- Each setting is reported once, at its first site (by path, then line), with the number
  of sites; claims cite that line, whose text names the setting.
- `relevant` (a broad question's words and the files that answer it) keeps the settings
  that sit in those files, whose name is a code name the question writes, or — when it
  writes none — whose name shares a word with it (a file's path is no setting's name: a
  `config.py`'s every variable does not answer "how is config loaded"; django's
  NUMBER_GROUPING question, which says "locale", is not about the `--locale` flag);
  when none is kept, nothing is reported and a gap says how many were passed over.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import partial

from dowse.explore.records import ConfigReport, Setting, TrackSpec
from dowse.explore.tracks import Context, Track, TrackState, cite, plural
from dowse.flag_rules import FAMILY, FLAG_NAME, definition_patterns
from dowse.languages import CODE_LANGUAGES, is_example_path, is_test_path, language_for
from dowse.tokens import tokenize

__all__ = ["config_track"]

MAX_SCAN = 3000
MAX_CLAIMS = {
    "constant": 4,
    "option": 4,
    "literal": 4,
    "file": 8,
    "env": 12,
    "flag": 12,
    "class": 8,
}
_NAMED = ("constant", "option", "literal")
"""The kinds of `ConfigReport.named`: a constant the question names, an option registered
by its name, the name as a string literal (a variable's name kept in a constant)."""
_SETTING_NAME = re.compile(
    r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{3,}[0-9]*|[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
)
"""A name written as a setting's: UPPER_CASE or snake_case (`NUMBER_GROUPING`,
`tmp_path_retention_count`), not a method (`Config.read`'s `read`) or a class."""

_NAME = r"([A-Za-z_][A-Za-z0-9_]*)"
_Q = r"[\"']"
_ENV = {
    "python": [
        rf"\benviron(?:\.get|\.setdefault|\.pop)?\s*[\[(]\s*{_Q}{_NAME}{_Q}",
        rf"\bgetenv\(\s*{_Q}{_NAME}{_Q}",
        rf"\benvvar\s*=\s*{_Q}{_NAME}{_Q}",
    ],
    "js": [
        rf"\bprocess\.env\.{_NAME}",
        rf"\bprocess\.env\[\s*{_Q}{_NAME}{_Q}",
        rf"\bimport\.meta\.env\.{_NAME}",
        rf"\bDeno\.env\.get\(\s*{_Q}{_NAME}{_Q}",
    ],
    "go": [rf"\bos\.(?:Getenv|LookupEnv)\(\s*\"{_NAME}\""],
    "rust": [
        rf"\benv::var(?:_os)?\(\s*\"{_NAME}\"",
        rf"\b(?:option_)?env!\(\s*\"{_NAME}\"",
        rf"\benv\s*=\s*\"{_NAME}\"",
    ],
    "java": [rf"\bSystem\.getenv\(\s*\"{_NAME}\""],
    "ruby": [rf"\bENV(?:\.fetch\(|\[)\s*{_Q}{_NAME}{_Q}"],
    "c": [rf"\bgetenv\(\s*\"{_NAME}\""],
}
_ENV_BY_VARIABLE = {
    "python": r"\b(?:environ(?:\.get|\.setdefault|\.pop)?\s*[\[(]|getenv\()"
    r"\s*([A-Za-z_]\w*)\s*[\]),]",
    "js": r"\bprocess\.env\[\s*([A-Za-z_$][\w$]*)\s*\]",
    "go": r"\bos\.(?:Getenv|LookupEnv)\(\s*([A-Za-z_]\w*)\s*\)",
    "rust": r"\benv::var(?:_os)?\(\s*&?([A-Za-z_]\w*)\s*\)",
    "java": r"\bSystem\.getenv\(\s*([A-Za-z_]\w*)\s*\)",
    "ruby": r"\bENV(?:\.fetch\(|\[)\s*([a-z_]\w*)\s*[\]),]",
    "c": r"\bgetenv\(\s*([A-Za-z_]\w*)\s*\)",
}
"""An environment read whose variable's name is a variable: a reader of the project's own."""
_DEFINES = {
    "python": r"^[ \t]*def\s+(\w+)\s*\(([^)]*)",
    "js": r"^[ \t]*(?:export\s+)?(?:async\s+)?function\s+(\w+)\s*\(([^)]*)",
    "go": r"^func\s+(?:\([^)]*\)\s*)?(\w+)\s*\(([^)]*)",
    "rust": r"^[ \t]*(?:pub(?:\([^)]*\))?\s+)?fn\s+(\w+)\s*(?:<[^>]*>)?\s*\(([^)]*)",
    "java": r"^[ \t]*(?:(?:public|private|protected|static|final)\s+)+[\w<>\[\]]+\s+"
    r"(\w+)\s*\(([^)]*)",
    "ruby": r"^[ \t]*def\s+(\w+)\s*\(?([^)\n]*)",
    "c": r"^[A-Za-z_][\w \t*]*?\b(\w+)\s*\(([^)]*)\)\s*\{?\s*$",
}
"""A function definition: its name and its parameters."""
_ENV_NAME = r"([A-Z][A-Z0-9_]*)"
MAX_READERS = 40
_CONFIG_WORDS = "Config|Configuration|Settings|Options"
_CLASSES = {
    "python": [
        rf"^[ \t]*class\s+(\w*(?:{_CONFIG_WORDS}))\b",
        r"^[ \t]*class\s+(\w+)\s*\([^)]*\bBaseSettings\b",
    ],
    "js": [rf"^[ \t]*(?:export\s+)?(?:class|interface|type)\s+(\w*(?:{_CONFIG_WORDS}))\b"],
    "go": [rf"^type\s+(\w*(?:{_CONFIG_WORDS}|Args|Opts))\s+struct\b"],
    "rust": [rf"^[ \t]*(?:pub(?:\([^)]*\))?\s+)?struct\s+(\w*(?:{_CONFIG_WORDS}|Args|Opts))\b"],
    "java": [
        rf"^[ \t]*(?:public\s+|final\s+|abstract\s+|data\s+)*(?:class|record|interface)\s+"
        rf"(\w*(?:{_CONFIG_WORDS}|Properties))\b"
    ],
}
_FLAGS = definition_patterns(FLAG_NAME)
_RULES: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    family: [
        (kind, re.compile(rx, re.M))
        for kind, table in (("env", _ENV), ("flag", _FLAGS), ("class", _CLASSES))
        for rx in table.get(family, [])
    ]
    for family in set(FAMILY.values())
}
_SETTINGS_MODULES = frozenset(
    {"settings", "config", "configuration", "conf", "defaults", "default_settings"}
)
_CONFIG_EXTS = (".toml", ".yaml", ".yml", ".json", ".ini", ".cfg", ".conf", ".properties")
_CONFIG_DIRS = frozenset({"config", "configs", "conf", "settings", "etc"})
_TOOL_FILES = frozenset(
    {
        "pyproject.toml",
        "setup.cfg",
        "tox.ini",
        "pytest.ini",
        "mypy.ini",
        ".editorconfig",
        ".pre-commit-config.yaml",
        ".readthedocs.yaml",
        ".readthedocs.yml",
        "codecov.yml",
        ".codecov.yml",
        "mkdocs.yml",
        ".golangci.yml",
        ".golangci.yaml",
        "package.json",
        "package-lock.json",
        "tsconfig.json",
        "cargo.toml",
        "rustfmt.toml",
        ".rustfmt.toml",
        "clippy.toml",
        "deny.toml",
        "renovate.json",
        ".eslintrc.json",
        "babel.config.json",
        "jest.config.json",
        "composer.json",
        "deno.json",
    }
)
_DOC_DIRS = re.compile(r"(^|/)(docs?|examples?|\.github|\.circleci|\.gitlab)(/|$)")


@dataclass
class _Found:
    kind: str
    name: str
    sites: list[tuple[str, int]] = field(default_factory=list)
    """(path, line), sorted; for a file, its first non-blank line."""


def config_track(
    ctx: Context,
    *,
    name: str = "configuration",
    relevant: Callable[[], tuple[Collection[str], Collection[str]]] | None = None,
    named: Collection[str] = (),
) -> Track:
    """Where the scope is configured: settings files, environment variables read,
    command-line flags, config classes. `relevant` returns (the question's words, the
    files that answer it), called when the track runs; None reports every setting.
    `named`: the code names a question writes, looked up as settings of their own."""
    focus = ctx.scope or "."
    spec = TrackSpec(
        name=name,
        focus=focus,
        approach="settings files by name; environment reads, flags and config types by "
        "regular expressions over the code",
        gates=[
            "understood: settings files, environment reads, flags or config types found",
            "evidence: each setting cites its line",
            "complete: each kind found was claimed",
        ],
        deliverable="ConfigReport: files, environment variables, flags, config types",
        role="config",
    )

    def understand(state: TrackState) -> tuple[bool, str]:
        scanned = _scan_paths(ctx, state)
        found = _settings_files(ctx) + _code_settings(ctx, scanned, _env_readers(ctx, scanned))
        if relevant is not None:
            found = _keep_relevant(state, found, *relevant(), named=named)
        found = _named_settings(ctx, scanned, named, found) + found
        report = ConfigReport(
            named=[_setting(f) for f in found if f.kind in _NAMED],
            files=[f.name for f in found if f.kind == "file"],
            env=[_setting(f) for f in found if f.kind == "env"],
            flags=[_setting(f) for f in found if f.kind == "flag"],
            classes=[_setting(f) for f in found if f.kind == "class"],
        )
        state.output["config"] = report
        if not found:
            # Callers leave a track that found nothing out of their report (nothing to cite).
            return False, f"no settings files, environment reads, flags or config types in {focus}"
        _claim(ctx, state, found)
        _conclude(state, report, focus)
        return True, (
            f"{plural(len(report.files), 'settings file')}, "
            f"{plural(len(report.env), 'environment variable')}, "
            f"{plural(len(report.flags), 'flag')}, "
            f"{plural(len(report.classes), 'config class', 'config classes')}"
        )

    def complete(state: TrackState) -> tuple[bool, str]:
        report = state.output.get("config")
        if not isinstance(report, ConfigReport):
            return False, "no configuration report"
        kinds = {f.topic for f in state.findings}
        if any(f"config {k}" in kinds for k in _NAMED):
            kinds.add("config named")
        lost = [
            k
            for k, items in (
                ("named", report.named),
                ("file", report.files),
                ("env", report.env),
                ("flag", report.flags),
                ("class", report.classes),
            )
            if items and f"config {k}" not in kinds
        ]
        if lost:
            return False, "no claim kept its evidence for: " + ", ".join(lost)
        return True, f"{len(state.findings)} settings cited"

    return Track(spec=spec, understand=understand, complete=complete)


# -- the phases: what to scan, what is there, what is relevant, the claims -----------------


def _scan_paths(ctx: Context, state: TrackState) -> list[str]:
    """The code files to scan: not tests, at most MAX_SCAN."""
    code = [
        p
        for p in ctx.files()
        if language_for(p) in CODE_LANGUAGES
        and FAMILY.get(language_for(p) or "")
        and not is_test_path(p)
    ]
    if len(code) > MAX_SCAN:
        step = len(code) / MAX_SCAN
        code = [code[int(i * step)] for i in range(MAX_SCAN)]
        state.gaps.append(
            f"{MAX_SCAN} of the code files scanned for environment reads, flags and config "
            "classes (evenly spaced): counts are lower bounds"
        )
    return code


def _settings_files(ctx: Context) -> list[_Found]:
    out = []
    for p in ctx.files():
        base = posixpath.basename(p)
        low = base.lower()
        if low in _TOOL_FILES or _DOC_DIRS.search(p) or is_test_path(p):
            continue
        stem, ext = posixpath.splitext(low)
        parts = p.lower().split("/")[:-1]
        settings_module = stem in _SETTINGS_MODULES and language_for(p) in CODE_LANGUAGES
        named = ext in _CONFIG_EXTS and (
            re.search(r"(^|[._-])(config|settings|conf)([._-]|$)", stem) is not None
            or ext == ".conf"
            or any(d in _CONFIG_DIRS for d in parts)
        )
        example_env = low.startswith(".env.") and low.endswith((".example", ".sample", ".template"))
        if settings_module or named or example_env:
            lines = ctx.lines(p) or []
            first = next((i + 1 for i, ln in enumerate(lines) if ln.strip()), None)
            if first is not None:
                out.append(_Found("file", p, [(p, first)]))
    return out


def _env_readers(ctx: Context, paths: list[str]) -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    """By language family, a rule for the calls of the project's own environment readers:
    the functions that pass one of their parameters to an environment read."""
    readers: dict[str, set[str]] = {}
    for p in paths:
        family = FAMILY.get(language_for(p) or "", "")
        read, define = _ENV_BY_VARIABLE.get(family), _DEFINES.get(family)
        lines = ctx.lines(p)
        if read is None or define is None or not lines:
            continue
        text = "\n".join(lines)
        reads = list(re.finditer(read, text))
        if not reads:
            continue
        defs = list(re.finditer(define, text, re.M))
        starts = [d.start() for d in defs]
        for m in reads:
            i = bisect.bisect_right(starts, m.start()) - 1
            if i < 0:
                continue
            name, params = defs[i].group(1), defs[i].group(2)
            if re.search(rf"(?<![\w$]){re.escape(m.group(1))}(?![\w$])", params):
                readers.setdefault(family, set()).add(name)
    out: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for family, names in readers.items():
        called = "|".join(map(re.escape, sorted(names)[:MAX_READERS]))
        rx = re.compile(rf"(?<![\w.])(?:\w+\.)?(?:{called})\(\s*{_Q}{_ENV_NAME}{_Q}")
        out[family] = [("env", rx)]
    return out


def _code_settings(
    ctx: Context,
    paths: list[str],
    extra: dict[str, list[tuple[str, re.Pattern[str]]]] | None = None,
) -> list[_Found]:
    """The environment reads, flags and config types in `paths`, by `_RULES` and the
    `extra` rules of their language family."""
    found: dict[tuple[str, str], _Found] = {}
    for p in sorted(paths):
        family = FAMILY.get(language_for(p) or "", "")
        rules = _RULES.get(family, []) + (extra or {}).get(family, [])
        lines = ctx.lines(p)
        if not rules or not lines:
            continue
        text = "\n".join(lines)
        starts = [0]
        for ln in lines[:-1]:
            starts.append(starts[-1] + len(ln) + 1)
        for kind, rx in rules:
            for m in rx.finditer(text):
                group = next(i for i, g in enumerate(m.groups(), 1) if g)
                line = bisect.bisect_right(starts, m.start(group))
                setting = m.group(group)
                found.setdefault((kind, setting), _Found(kind, setting)).sites.append((p, line))
    # Each setting cited first where its kind is defined most: the project's own parser of
    # flags (zstd's programs/zstdcli.c) before a contribution's (contrib/pzstd/Options.cpp).
    defined = Counter((f.kind, path) for f in found.values() for path in {p for p, _ in f.sites})

    def first_where_most(kind: str, site: tuple[str, int]) -> tuple[int, str, int]:
        return -defined[kind, site[0]], site[0], site[1]

    for f in found.values():
        f.sites = sorted(set(f.sites), key=partial(first_where_most, f.kind))
    order = {"env": 0, "flag": 1, "class": 2}
    # The project's own settings before its examples' and benchmarks' (grpc-go's example
    # clients define --addr thirty times).
    return sorted(
        found.values(),
        key=lambda f: (order[f.kind], is_example_path(f.sites[0][0]), -len(f.sites), f.name),
    )


def _keep_relevant(
    state: TrackState,
    found: list[_Found],
    words: Collection[str],
    answer: Collection[str],
    *,
    named: Collection[str] = (),
) -> list[_Found]:
    wanted = {w.lower() for w in words if len(w) >= 3}
    names = {_key(n.rsplit(".", 1)[-1]) for n in named}

    def shares(f: _Found) -> bool:
        if any(path in answer for path, _ in f.sites):
            return True
        if _key(f.name if f.kind != "file" else posixpath.basename(f.name)) in names:
            return True
        # A question that writes code names is about them: its other words name nothing.
        return not names and f.kind != "file" and bool(wanted & set(tokenize(f.name)))

    kept = [f for f in found if shares(f)]
    if found and not kept:
        state.gaps.append(
            f"none of the {plural(len(found), 'setting')} found shares a word with the "
            "question or sits in the files that answer it"
        )
    return kept


def _key(name: str) -> str:
    """A setting's name as a question may write it (`--max-size`, `MAX_SIZE`, `max_size`)."""
    return name.lstrip("-").replace("-", "_").lower()


_CONSTANT_KINDS = frozenset({"constant", "variable"})
_REGISTERS = r"(?:add|register|define|declare)\w*"


def _named_settings(
    ctx: Context, scanned: list[str], named: Collection[str], found: list[_Found]
) -> list[_Found]:
    """The settings the question writes by name that the other kinds did not find: a
    constant of that name the index defines (every definition a site, settings modules
    first), else a call that registers an option by that name (a call named
    add/register/define/declare… first), else any call taking it as its first argument."""
    have = {_key(f.name) for f in found if f.kind != "file"}
    wanted = [n for n in dict.fromkeys(named) if _SETTING_NAME.fullmatch(n) and _key(n) not in have]
    if not wanted:
        return []
    out: list[_Found] = []
    searcher = ctx.searcher()
    constants: dict[str, list[tuple[str, int]]] = {}
    if searcher is not None:
        from dowse.indexer.store import where_in

        rows = searcher.store.rows(
            "symbols", ["name", "kind", "path", "start_line"], where=where_in("name", wanted)
        )
        for r in rows:
            if (
                r["kind"] in _CONSTANT_KINDS
                and ctx.in_scope(r["path"])
                and not is_test_path(r["path"])
                and not is_example_path(r["path"])
            ):
                constants.setdefault(r["name"], []).append((r["path"], r["start_line"]))
    for n in wanted:
        sites = constants.get(n)
        if sites:
            # A settings module's (django's global_settings.py) before the others' (the
            # locales' formats.py set it too).
            sites.sort(key=lambda s: (not _is_settings_module(s[0]), s))
            out.append(_Found("constant", n, sites))
            continue
        calls, literals = _registrations(ctx, scanned, n)
        if calls:
            out.append(_Found("option", n, calls))
        elif literals:
            out.append(_Found("literal", n, literals))
    return out


def _is_settings_module(path: str) -> bool:
    stem = posixpath.splitext(posixpath.basename(path))[0].lower()
    return stem in _SETTINGS_MODULES or "settings" in stem or stem in ("conf", "config")


def _registrations(
    ctx: Context, paths: list[str], name: str
) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """(path, line) of the calls taking `name` as a string first argument, the registering
    calls (add…, register…) first; and of the string literals `name` elsewhere (tokio's
    `const ENV_WORKER_THREADS: &str = "TOKIO_WORKER_THREADS";`). The line is the string's."""
    call = re.compile(rf"(\b{_REGISTERS})?(\(\s*)?{_Q}{re.escape(name)}{_Q}")
    registers: list[tuple[str, int]] = []
    others: list[tuple[str, int]] = []
    literals: list[tuple[str, int]] = []
    for p in paths:
        lines = ctx.lines(p)
        if not lines:
            continue
        text = "\n".join(lines)
        if name not in text:
            continue
        for m in call.finditer(text):
            line = text.count("\n", 0, m.end()) + 1
            if m.group(2) is None:
                literals.append((p, line))
            else:
                (registers if m.group(1) else others).append((p, line))
    return registers or others, literals


def _setting(f: _Found) -> Setting:
    path, line = f.sites[0]
    return Setting(name=f.name, path=path, line=line, sites=len(f.sites))


_WHAT = {
    "constant": "`{name}` is set",
    "option": "the option `{name}` is registered",
    "literal": "the setting `{name}` is named",
    "env": "the environment variable `{name}` is used",
    "flag": "the command-line flag `--{name}` is defined",
    "class": "`{name}` is a configuration type",
}


def _claim(ctx: Context, state: TrackState, found: list[_Found]) -> None:
    shown: dict[str, int] = {}
    for f in found:
        if shown.get(f.kind, 0) == MAX_CLAIMS[f.kind]:
            continue
        path, line = f.sites[0]
        if f.kind == "file":
            text = f"{path} is a settings file"
        else:
            unit = (
                ("definition", "definitions")
                if f.kind in ("class", "constant")
                else ("site", "sites")
            )
            more = f" ({plural(len(f.sites), *unit)})" if len(f.sites) > 1 else ""
            text = f"{_WHAT[f.kind].format(name=f.name)} at {path}:{line}{more}"
        shown[f.kind] = shown.get(f.kind, 0) + state.claim(
            text, cite(ctx, path, line), topic=f"config {f.kind}"
        )


def _conclude(state: TrackState, report: ConfigReport, focus: str) -> None:
    if report.named:
        state.conclusions.append(
            "settings the question names: "
            + ", ".join(f"{s.name} ({s.path}:{s.line})" for s in report.named[:6])
        )
    if report.files:
        state.conclusions.append(f"settings files in {focus}: " + ", ".join(report.files[:6]))
    if report.env:
        state.conclusions.append(
            f"{plural(len(report.env), 'environment variable')} read, most used: "
            + ", ".join(f"{s.name} ({s.sites})" for s in report.env[:6])
        )
    if report.flags:
        state.conclusions.append(
            f"{plural(len(report.flags), 'command-line flag')} defined: "
            + ", ".join(f"--{s.name}" for s in report.flags[:8])
        )
    if report.classes:
        state.conclusions.append(
            "configuration types: " + ", ".join(f"{s.name} ({s.path})" for s in report.classes[:6])
        )
    state.gaps.append(
        "settings read through a framework's own loader (a dict of defaults, a config "
        "object filled from a file by name) are found only as the files and types above"
    )
