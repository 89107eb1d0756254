"""A module specialist's review: how the code in scope uses the module, judged by its `Docs`.

`specialist_track` builds the track that runs it: documented APIs used and their call sites
(an internal module's names matched as calls, a package's through the names its imports
bind), calls and literals the docs rule out (misuse), and functions or hand-written
literals re-implementing a documented helper (missed conveniences), each a claim citing
the code lines and, for an internal module, the doc line. Test files are not checked for
misuse or missed conveniences. Review only: nothing is changed. `python_imports` reads a
Python file's import statements, here and to find the heavily imported packages.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dowse.explore.records import Citation, TrackSpec
from dowse.explore.specialist_docs import (
    Api,
    Docs,
    DocSite,
    Rule,
    Site,
    def_names,
    definitions,
    read_package_docs,
)
from dowse.explore.tracks import Context, Track, TrackState, cite, plural
from dowse.indexer.parse import parse_source
from dowse.languages import CODE_LANGUAGES, is_test_path, language_for

__all__ = ["python_imports", "specialist_track"]

MAX_SITES = 3
MAX_USED_CLAIMS = 8

_GENERIC = frozenset(
    {
        "main",
        "run",
        "setup",
        "init",
        "start",
        "stop",
        "close",
        "open",
        "read",
        "write",
        "load",
        "save",
        "test",
        "call",
        "apply",
        "handle",
        "process",
        "execute",
        "update",
        "create",
        "delete",
        "render",
        "parse",
        "build",
        "check",
        "reset",
        "clear",
        "send",
        "fetch",
    }
)
_PREFIXES = ("my_", "custom_", "local_", "simple_", "_")
_SUFFIXES = ("_impl", "_helper", "_local", "_custom", "_manual", "_fallback", "2")
_PY_IMPORT = re.compile(
    r"^[ \t]*import[ \t]+([^\n#;]+)|^[ \t]*from[ \t]+([A-Za-z_][\w.]*)"
    r"[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)",
    re.MULTILINE,
)


# -- code --------------------------------------------------------------------------------


def python_imports(text: str) -> Iterator[tuple[str, str, list[tuple[str, str]]]]:
    """(top-level package, module, [(imported name, bound name)]) per import; for a plain
    `import a.b as c` the single pair is ("", "c") - the bound name stands for the module."""
    for m in _PY_IMPORT.finditer(text):
        if m.group(1):
            for part in m.group(1).split(","):
                words = part.split()
                if not words or not re.fullmatch(r"[A-Za-z_][\w.]*", words[0]):
                    continue
                bound = words[2] if len(words) == 3 and words[1] == "as" else words[0].split(".")[0]
                yield words[0].split(".")[0], words[0], [("", bound)]
        else:
            module = m.group(2)
            pairs = []
            for part in m.group(3).strip("() \t\n").split(","):
                words = part.split()
                if words and re.fullmatch(r"\w+", words[0]):
                    pairs.append((words[0], words[2] if len(words) == 3 else words[0]))
            yield module.split(".")[0], module, pairs


class _Spans:
    """Symbol line ranges per file, parsed on demand (only files with a candidate site)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.cache: dict[str, list[tuple[str, int, int]]] = {}

    def symbols(self, path: str) -> list[tuple[str, int, int]]:
        if path not in self.cache:
            language = language_for(path) or ""
            source = "\n".join(self.ctx.lines(path) or []).encode()
            parsed = parse_source(path, source, language)
            # From the name's line: a site is where the definition's name is written.
            self.cache[path] = [(s.name, s.name_line, s.end_line) for s in parsed.symbols]
        return self.cache[path]

    def inside(self, path: str, line: int, name: str) -> bool:
        """Whether `line` of `path` lies in a definition named `name`."""
        return any(n == name and a <= line <= b for n, a, b in self.symbols(path))

    def body(self, path: str, line: int, name: str) -> list[str]:
        """The lines after the definition of `name` starting at `line`, to its end."""
        end = next((b for n, a, b in self.symbols(path) if n == name and a == line), line)
        return (self.ctx.lines(path) or [])[line:end]


def _cite_all(ctx: Context, sites: Iterable[Site | DocSite | None]) -> list[Citation]:
    out = []
    for site in sites:
        if site is not None:
            c = cite(ctx, site[0], site[1], site[-1])
            if c is not None and c.quote:
                out.append(c)
    return out


def _ref(site: Site | DocSite) -> str:
    if len(site) == 3 and site[1] != site[-1]:
        return f"{site[0]}:{site[1]}-{site[-1]}"
    return f"{site[0]}:{site[1]}"


def _refs(sites: list[Site]) -> str:
    more = f" and {len(sites) - MAX_SITES} more" if len(sites) > MAX_SITES else ""
    return ", ".join(_ref(s) for s in sites[:MAX_SITES]) + more


def _resemblance(apis: Iterable[Api]) -> dict[str, Api]:
    """Local function names that would re-implement each API, lowercased: the API's name up
    to case and underscores ("loadconfig"), or with a my_/custom_/... prefix or an
    _impl/_helper/... suffix. Generic names (run, load, ...) and short ones are left out."""
    forms: dict[str, Api] = {}
    for api in apis:
        target = api.name.lower()
        if len(api.name) < 4 or target.strip("_") in _GENERIC:
            continue
        forms.setdefault("=" + target.replace("_", ""), api)
        for affixed in [*(p + target for p in _PREFIXES), *(target + x for x in _SUFFIXES)]:
            forms.setdefault(affixed, api)
    return forms


def _resembled(forms: dict[str, Api], local: str) -> Api | None:
    low = local.lower()
    return forms.get("=" + low.replace("_", "")) or forms.get(low)


# -- the review --------------------------------------------------------------------------


@dataclass
class _Review:
    used: int = 0
    missed: int = 0
    misuse: int = 0
    done: bool = False


def specialist_track(ctx: Context, given: Docs, notes: list[str]) -> Track:
    """A specialist for one module: `given` holds an internal module's documentation, or
    only a package's name and source file (its docstrings are read when the track runs)."""
    module, kind, sources = given.module, given.kind, given.sources
    where = "the module's directory" if kind == "internal" else "the installed package"
    spec = TrackSpec(
        name=f"specialist:{module}",
        focus=f"how {ctx.scope or '.'} uses {module}",
        approach=f"read only {module}'s documentation ("
        + (
            ", ".join(sources)
            if kind == "internal"
            else "docstrings of the installed package, parsed with ast, never imported"
        )
        + f"); find its documented APIs' call sites outside {where}, functions "
        "re-implementing documented helpers, and calls the documentation rules out; "
        "review only, nothing is changed",
        gates=[
            "understood: the documentation was read and names APIs or usage rules",
            "evidence: each use, missed convenience and misuse cites the code lines (and "
            "the documentation line for an internal module)",
            "complete: usage, missed conveniences and misuse were each checked",
        ],
        deliverable="documented APIs used and where; missed conveniences; misuse against the "
        "documentation with the idiomatic alternative",
    )
    review = _Review()

    def understand(state: TrackState) -> tuple[bool, str]:
        nonlocal review
        review = _Review()
        state.gaps.extend(notes)
        code = [
            p
            for p in ctx.files()
            if language_for(p) in CODE_LANGUAGES
            and not (kind == "internal" and p.startswith(module + "/"))
        ]
        if kind == "internal":
            docs = given
            calls = _internal_calls(ctx, code, docs)
        else:
            uses, imported_at = _package_uses(ctx, code, module)
            docs = Docs(module=module, kind="package", sources=sources)
            read_package_docs(docs, priority=set(uses))
            calls = {n: sites for n, sites in uses.items() if n in docs.apis}
        state.gaps.extend(docs.notes)
        if not docs.apis and not docs.rules:
            state.gaps.append(f"{module}: its documentation names none of its APIs")
            return False, "the documentation names no API of the module and no usage rule"
        topic = f"specialist:{module}"
        if kind == "internal":
            first = [a.doc for a in docs.apis.values() if a.doc][:MAX_SITES]
            state.claim(
                f"{module} documents {len(docs.apis)} of its APIs in "
                f"{', '.join(sources)}: {', '.join(sorted(docs.apis)) or 'none'}",
                *_cite_all(ctx, first or [r.doc for r in docs.rules][:1]),
                topic=topic,
            )
        else:
            state.claim(
                f"`{module}` is imported by {plural(len(imported_at), 'file')} in "
                f"scope: {_refs(imported_at)}",
                *_cite_all(ctx, imported_at[:MAX_SITES]),
                topic=topic,
            )
        spans = _Spans(ctx)
        _report_used(ctx, state, docs, calls, review, topic)
        flagged = _report_misuse(ctx, state, docs, code, calls, spans, review, topic)
        _report_missed(ctx, state, docs, code, spans, flagged, review, topic)
        review.done = True
        return True, (
            f"{len(docs.apis)} documented APIs, {len(docs.rules)} usage rules, "
            f"{len(docs.helpers)} helper descriptions"
        )

    def complete(state: TrackState) -> tuple[bool, str]:
        if not review.done:
            return False, "the review did not run"
        return True, (
            f"{review.used} documented APIs used, {review.missed} missed "
            f"conveniences, {review.misuse} misuses"
        )

    return Track(spec=spec, understand=understand, complete=complete)


def _report_used(
    ctx: Context,
    state: TrackState,
    docs: Docs,
    calls: dict[str, list[Site]],
    review: _Review,
    topic: str,
) -> None:
    unused = []
    for name in sorted(docs.apis, key=lambda n: (-len(calls.get(n, [])), n)):
        sites = calls.get(name, [])
        if not sites:
            unused.append(name)
            continue
        review.used += 1
        if review.used > MAX_USED_CLAIMS:
            continue
        api = docs.apis[name]
        doc = (
            f" (documented at {_ref(api.doc)})"
            if api.doc
            else f" (documented: {api.summary!r})"
            if api.summary
            else ""
        )
        files = len({p for p, _ in sites})
        state.claim(
            f"`{name}`{doc} is used at {plural(len(sites), 'site')} in "
            f"{plural(files, 'file')}: {_refs(sites)}",
            *_cite_all(ctx, sites[:MAX_SITES]),
            topic=topic,
        )
    if review.used > MAX_USED_CLAIMS:
        state.gaps.append(f"{review.used - MAX_USED_CLAIMS} more used APIs not itemized")
    outside = f" outside {docs.module}" if docs.kind == "internal" else ""
    if unused:
        state.conclusions.append(
            f"documented but not used{outside}: "
            + ", ".join(unused[:10])
            + ("…" if len(unused) > 10 else "")
        )
    state.conclusions.append(
        f"{docs.module}: {review.used} of {len(docs.apis)} documented APIs are used{outside}"
    )


def _report_misuse(
    ctx: Context,
    state: TrackState,
    docs: Docs,
    code: list[str],
    calls: dict[str, list[Site]],
    spans: _Spans,
    review: _Review,
    topic: str,
) -> set[Site]:
    flagged: set[Site] = set()
    for rule in docs.rules:
        if rule.call is None and rule.literal is None:
            state.gaps.append(f"rule not checkable by pattern: {rule.text!r}")
            continue
        if docs.kind == "package" and rule.call:
            # A package's names are matched through its imports, not by name alone.
            sites = [s for s in calls.get(rule.call, []) if not is_test_path(s[0])]
        else:
            sites = _rule_sites(ctx, code, rule, spans)
        if not sites:
            continue
        review.misuse += 1
        flagged.update(sites)
        what = f"`{rule.call}()` is called" if rule.call else f"{rule.literal!r} is used directly"
        said = f"{_ref(rule.doc)} says" if rule.doc else f"the documentation of `{rule.bad}` says"
        alternative = f"`{rule.good}`" if rule.good else "none named in the documentation"
        state.claim(
            f"Misuse of {docs.module}: {what} at {_refs(sites)}, but {said}: "
            f"{rule.text!r}; idiomatic alternative: {alternative}",
            *_cite_all(ctx, [*sites[:MAX_SITES], rule.doc]),
            topic=topic,
        )
        subject = f"`{rule.call}()`" if rule.call else repr(rule.literal)
        state.conclusions.append(
            f"misuse: {subject} at {plural(len(sites), 'site')}; "
            f"idiomatic alternative: {alternative}"
        )
    return flagged


def _report_missed(
    ctx: Context,
    state: TrackState,
    docs: Docs,
    code: list[str],
    spans: _Spans,
    flagged: set[Site],
    review: _Review,
    topic: str,
) -> None:
    # A package's helpers are its lowercase functions with specific enough names.
    forms = _resemblance(
        a
        for n, a in sorted(docs.apis.items())
        if docs.kind == "internal" or (len(n) >= 6 and n[:1].islower())
    )
    local = definitions(ctx, (p for p in code if not is_test_path(p)))
    for name, site in sorted(local.items(), key=lambda kv: kv[1]):
        api = _resembled(forms, name)
        if api is None or site in flagged:
            continue
        if any(
            re.search(rf"\b{re.escape(api.name)}\s*\(", ln)
            for ln in spans.body(site[0], site[1], name)
        ):
            continue  # a wrapper around the helper, not a re-implementation
        if docs.kind == "package" and not _imports_package(ctx, site[0], docs.module):
            continue
        if api.defined and language_for(api.defined[0]) != language_for(site[0]):
            continue  # a JavaScript slugify cannot call the Python one
        review.missed += 1
        where = f"documented at {_ref(api.doc)}" if api.doc else f"documented: {api.summary!r}"
        if api.defined:
            where = f"defined at {_ref(api.defined)}, {where}"
        state.claim(
            f"Missed convenience: {_ref(site)} defines `{name}`, re-implementing "
            f"{docs.module}'s `{api.name}` ({where}); idiomatic alternative: call "
            f"`{api.name}` from {docs.module}",
            *_cite_all(ctx, [site, api.doc]),
            topic=topic,
        )
    # A literal the docs say a helper handles, written out by hand.
    for api_name, literal, sentence, doc_site in docs.helpers:
        rule = Rule(
            kind="instead", text=sentence, bad=literal, good=api_name, doc=doc_site, literal=literal
        )
        sites = [s for s in _rule_sites(ctx, code, rule, spans) if s not in flagged]
        if not sites:
            continue
        review.missed += 1
        flagged.update(sites)
        state.claim(
            f"Missed convenience: {literal!r} is handled by hand at {_refs(sites)}, but "
            f"{_ref(doc_site)} says: {sentence!r}; idiomatic alternative: "
            f"`{api_name}()`",
            *_cite_all(ctx, [*sites[:MAX_SITES], doc_site]),
            topic=topic,
        )
    state.gaps.append(
        "missed conveniences are found by name and by documented literals "
        "only: a helper re-implemented under another name is not detected"
    )


def _internal_calls(ctx: Context, code: list[str], docs: Docs) -> dict[str, list[Site]]:
    names = sorted(docs.apis)
    if not names:
        return {}
    rx = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\s*\(")
    calls: dict[str, list[Site]] = defaultdict(list)
    for path in code:
        lines = ctx.lines(path) or []
        text = "\n".join(lines)
        if not any(n in text for n in names):
            continue
        for i, line in enumerate(lines, 1):
            defined = def_names(line) if rx.search(line) else set()
            for name in dict.fromkeys(m.group(1) for m in rx.finditer(line)):
                if name not in defined:
                    calls[name].append((path, i))
    return calls


def _package_uses(
    ctx: Context, code: list[str], package: str
) -> tuple[dict[str, list[Site]], list[Site]]:
    """Sites using each name of `package`, through the names its imports bind (`pkg.name`,
    `alias.name`, or `name` after `from pkg import name`); and each importing file's first
    import line."""
    uses: dict[str, list[Site]] = defaultdict(list)
    imported_at: list[Site] = []
    for path in code:
        if not path.endswith(".py"):
            continue
        lines = ctx.lines(path) or []
        text = "\n".join(lines)
        if package not in text:
            continue
        modules: set[str] = set()
        names: dict[str, str] = {}
        for top, _, pairs in python_imports(text):
            if top == package:
                for original, bound in pairs:
                    if original:
                        names[bound] = original
                    else:
                        modules.add(bound)
        if not modules and not names:
            continue
        attribute = (
            re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, sorted(modules))) + r")\.(\w+)")
            if modules
            else None
        )
        bare = (
            re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, sorted(names))) + r")\b")
            if names
            else None
        )
        first_import = True
        for i, line in enumerate(lines, 1):
            if line.lstrip().startswith(("import ", "from ")) and package in line:
                if first_import:
                    imported_at.append((path, i))
                    first_import = False
                continue
            used = {m.group(1) for m in attribute.finditer(line)} if attribute else set()
            if bare:
                used |= {names[m.group(1)] for m in bare.finditer(line)}
            for name in sorted(used):
                uses[name].append((path, i))
    return uses, imported_at


def _rule_sites(ctx: Context, code: list[str], rule: Rule, spans: _Spans) -> list[Site]:
    """Non-test code lines breaking `rule`, outside the definitions of the rule's subject
    and of its documented alternative."""
    if rule.call:
        rx = re.compile(rf"\b{re.escape(rule.call)}\s*\(")
        needle = rule.call
    elif rule.literal:
        rx = re.compile(rf"""(['"`])[^'"`\n]*{re.escape(rule.literal)}[^'"`\n]*\1""")
        needle = rule.literal
    else:
        return []
    good = (rule.good or "").split("(")[0].split(".")[-1]
    sites: list[Site] = []
    for path in code:
        if is_test_path(path):
            continue
        lines = ctx.lines(path) or []
        if needle not in "\n".join(lines):
            continue
        for i, line in enumerate(lines, 1):
            if not rx.search(line) or line.lstrip().startswith(("#", "//", "*")):
                continue
            if rule.call and rule.call in def_names(line):
                continue
            if (good and spans.inside(path, i, good)) or (
                rule.call and spans.inside(path, i, rule.call)
            ):
                continue
            sites.append((path, i))
    return sites


def _imports_package(ctx: Context, path: str, package: str) -> bool:
    text = "\n".join(ctx.lines(path) or [])
    return any(top == package for top, _, _ in python_imports(text))
