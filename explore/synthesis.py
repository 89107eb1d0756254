"""Aggregation across tracks: what they agree on, where they diverge, what stays open, and
how much to trust the whole.

- findings (and `unified`, the same as lines): statements about the code drawn from the
  tracks' verified claims — a definition that answers the question, who calls it, a
  cycle, an entry point — each kept only when its citation's quoted line holds the code
  name the statement is about (`topic`), so a reader can check it at `path:start-end`.
  A track supports a finding when its own hit — a line range it cites, a callee it
  found — points at the finding's place (`_points_at`): in the same file, overlapping
  its lines or within `WIDER` lines of them, where a range up to `DEFINITION_LINES`
  long is one place (a function, a chunk of one) and a longer one (a 1,500-line class,
  a module's lines) points only at its own head. Citing the same file elsewhere is no
  support, nor is the definition the callers or the tests place (`a` (a.py:10-30): where
  the index says the name they were given is). Tracks that share their hits,
  placements included (`SHARED`: two searches that returned the same chunks), or are
  drawn from one source (the callers and the callees of the same definitions) are one
  source.
  Findings are ordered by their independent sources, every track's best first; a
  finding with one source says so.
- statement: the findings composed into one sentence, each part at its citation: where
  the answer's definitions are, who calls them, what they call, the tests that reference
  them (never test support: a conftest fixture is no test of what it calls), the
  settings and the files that change with the answer (`_statement`).
- divergences: where two tracks disagree, each side cited: two tracks answering the same
  question (the same focus, or one's question holding the other's: a sub-question and the
  whole question) whose top findings place one code name at locations that do not overlap
  (`X` at a.py:10-20 by one, `X` (b.py:5) by another: different definitions, or lines that
  moved), or two names that are one (a class and its method, one name qualified two ways:
  `Template` and `Template.render`, `block_on` and `LocalSet.block_on`; two classes'
  methods of one name only when the question writes one of them) in two files (a
  type and its method in two files of a Go package or a Rust crate are one type:
  `languages.methods_apart`); lines two tracks cite that give one setting two literal
  values (`os.getenv("PORT", "5000")` and `PORT = 8000`); a conventional entry point (the
  tree, at the line that shows its role) that other modules import (the import graph, at
  an import of it); a package the code imports (at an import of it) that no manifest of
  the project declares (the manifest, at the line its declared dependencies start); focus
  results (the index, at the answer's lines) in files with uncommitted changes (git, at
  the first changed line). A disagreement one side of which has no citation is not stated.
  Empty when the tracks agree or cover different ground (two sub-questions naming two
  `Parser`s): failed gates and dropped claims are the basis' and the tracks' own, an
  import cycle is the import graph's finding, neither is a disagreement. A package counts
  as declared when a distribution that provides its import name is (explore.distributions:
  `dotenv` is `python-dotenv`), or an extra of a declared one is named after it
  (`h5netcdf[h5py]`); manifests of examples, tests, benchmarks and docs declare nothing
  for the project; a package no module needs to run (imported only under TYPE_CHECKING,
  in try/except ImportError, in tests or in examples: `ImportReport.conditional`) is never
  undeclared.
- open questions: what an agent would need and the explorers could not determine: every
  track's gaps about the repository (a name the focus uses that is not found, a
  relative import naming no file, a definition with no caller), a package the code
  imports that is not installed here (its API could not be checked; the install command
  that settles it), a CI test command whose values come from the CI matrix. Gaps that
  state an explorer's own limits (sampling, caps, languages it has no rules for, what static
  import parsing cannot see: `_OWN_LIMITS`) stay in their tracks.
- confidence: Low when the top finding has one independent source, or most tracks
  failed; High when every track passed every gate, nothing was dropped and the top
  finding has two independent sources or more; Moderate otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from dowse.explore.commands import installs_project
from dowse.explore.distributions import distributions, normalize
from dowse.explore.records import (
    ExploreResult,
    Finding,
    Synthesis,
    TrackFindings,
)
from dowse.explore.tested import SUPPORT
from dowse.explore.tracks import STDLIB, plural
from dowse.explore.tree import NO_ENTRY_POINT
from dowse.languages import methods_apart

__all__ = ["synthesize"]

MAX_ITEMS = 12
_LISTINGS = frozenset({"commands", "tree", "manifest", "patterns"})
"""Tracks whose claims list or count (commands, key files, dependencies, conventions:
their own sections): they support findings, they do not state them."""
_CODE = re.compile(r"`([^`]+)`")
_PLACED = re.compile(r"`([^`]+)`( at | \()([^\s:()`]+):(\d+)(?:-(\d+))?")
"""A claim's statement of where a code name is: "`X` at a.py:10-20" (a retrieved part of
its definition), "`X` (a.py:5-9)" (its definition, from the references)."""
_NAME_PARTS = re.compile(r"[^\w]+")
_EXTRAS = re.compile(r"\s*\[([^\]]+)\]")


def _flatten(tracks: Sequence[TrackFindings]) -> list[TrackFindings]:
    out = []
    for t in tracks:
        out.append(t)
        out.extend(_flatten(t.subtracks))
    return out


def _groups(tracks: Sequence[TrackFindings]) -> dict[int, str]:
    """Each track (by id) and subtrack -> its group: the name of the top-level track it
    is part of (a track's subtracks are parts of it, not second opinions). Names may hold
    a slash (`uses of crates/core`): the group comes from the structure, not the name."""
    return {id(sub): t.track.name for t in tracks for sub in _flatten([t])}


_OWN_LIMITS = re.compile(
    "|".join(
        (
            r"^measured on a sample of",
            r"^no pattern rules for ",
            r"^typing: the sampled languages",
            r"^without an index, ",
            r"^imports are not resolved to files for ",
            r"^edges follow import statements only",
            r"no specialist$",
            r"more complex modules than specialists",
            r"read \d+ of its source files",
            r"^missed conveniences are found",
            r"^listed \d+ of \d+ key files",
            r"list only their first \d+ children$",
            r"^read \d+ of \d+ .*files",
            r"^parsed \d+ of \d+ manifests",
            r"more \w+ commands? not listed$",
            r"^settings read through a framework's own loader",
        )
    )
)
"""Gaps that describe how an explorer works, not the repository: not open questions."""


_NOT_INSTALLED = re.compile(r" but is not installed here as Python source: .*$")
_PLACEHOLDER = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


def _not_installed(result: ExploreResult) -> str:
    """What a package missing here leaves open, and the command that would settle it."""
    installs = [c for c in result.commands if c.kind == "install"]
    # One that installs the project (`pip install -e .`, `uv sync`, `-r requirements`), not
    # a tool (pytest's CONTRIBUTING names `pip install --user pre-commit` first).
    install = next((c for c in installs if installs_project(c.command)), None) or next(
        iter(installs), None
    )
    how = (
        f"`{install.command}` ({install.citation.ref}) installs the dependencies"
        if install is not None
        else "no install command was found"
    )
    return (
        " but is not installed here: its API could not be read, so whether the code "
        f"calls it as documented is not known; {how}"
    )


def _typing_only(result: ExploreResult, gap: str) -> bool:
    """Whether the gap's package is one no module needs to run (type stubs, TYPE_CHECKING)."""
    package = next(iter(_CODE.findall(gap)), "")
    conditional = result.imports.conditional if result.imports is not None else {}
    return package.startswith("_typeshed") or package in conditional


def _ci_placeholders(result: ExploreResult) -> list[str]:
    """The test commands that take their values from CI (`${{ matrix.x }}`): what to pass
    when running them locally is not stated."""
    out, seen = [], set()
    for c in result.commands:
        names = list(dict.fromkeys(_PLACEHOLDER.findall(c.command)))
        if c.kind == "test" and names and tuple(names) not in seen:
            seen.add(tuple(names))
            out.append(
                f"the test command at {c.citation.ref} takes "
                + ", ".join(f"`{n}`" for n in names[:3])
                + " from CI: the values to run it with locally are not stated"
            )
    return out[:2]


def _about_the_repository(gap: str) -> bool:
    return not _OWN_LIMITS.search(gap)


def named_in(f: Finding) -> str | None:
    """The code name the claim states (between backquotes) whose last part its first
    citation's quote holds, or None."""
    quote = f.citations[0].quote
    name: str
    for name in _CODE.findall(f.claim):
        parts = [p for p in _NAME_PARTS.split(name) if p]
        if parts and re.search(rf"(?<!\w){re.escape(parts[-1])}(?!\w)", quote):
            return name
    return None


def _stated(
    tracks: Sequence[TrackFindings],
    group_of: dict[int, str],
    hits: dict[str, set[_Hit]],
    drawn: dict[str, str],
) -> list[tuple[Finding, list[list[str]]]]:
    """The tracks' claims that name code their citation holds, each with its independent
    sources: the tracks that cite a location pointing at its citation (`_points_at`),
    those that share their hits counted as one (`_sources`). The best supported first,
    round-robin over the tracks within a level (every track's best before any track's
    second)."""
    # A track's own hits are the lines it cites, and the definitions the callees found
    # (`a` calls `h` (c.py:1-3): `h` is what the track found `a` calls). The definitions
    # the callers and the tests place are the names they looked up (often the answer's
    # own, handed to them as seeds): they say which tracks found the same things
    # (`_sources`), they point at nothing themselves.
    cited: dict[str, set[_Hit]] = {}
    for t in tracks:
        own = cited.setdefault(group_of[id(t)], set())
        for f in t.findings:
            own.update((c.path, c.start_line, c.end_line) for c in f.citations)
            if t.track.role == "callees":
                own.update(_place(m)[:3] for m in _PLACED.finditer(f.claim))
    candidates: list[tuple[int, int, int, Finding, list[list[str]]]] = []
    for order, t in enumerate(tracks):
        group = group_of[id(t)]
        if group in _LISTINGS:
            continue
        rank = 0
        for f in t.findings:
            name = named_in(f)
            if name is None:
                continue
            c = f.citations[0]
            at = (c.path, c.start_line, c.end_line)
            support = {g for g, hs in cited.items() if any(_points_at(h, at) for h in hs)}
            sources = _sources(support | {group}, hits, drawn)
            stated = Finding(claim=f.claim, citations=f.citations[:1], topic=name)
            candidates.append((-len(sources), rank, order, stated, sources))
            rank += 1
    candidates.sort(key=lambda c: c[:3])
    out: list[tuple[Finding, list[list[str]]]] = []
    seen: set[str] = set()
    for *_, f, sources in candidates:
        if f.citations[0].ref not in seen:
            seen.add(f.citations[0].ref)
            out.append((f, sources))
    return out[:MAX_ITEMS]


_Place = tuple[str, int, int, bool]
"""path, start, end, and whether it is a retrieved part (a chunk) rather than the whole."""
_Hit = tuple[str, int, int]
"""A location a track cites or places: path, first and last line."""
SHARED = 0.5
"""Two tracks are one source when at least this share of one's hits (two or more) are
the other's too: they found the same places (two searches that returned the same
chunks, a track and the tests track of the same words)."""
_SCOPE = re.compile(r"\s*\(in [^()]*\)\s*$")
_FOCUS_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9]+")
_NOT_ASKED = frozenset(
    """how does do is are what where when why which who the and for with work works its
    they them this that from into are was were been has have""".split()
)
_ENV_DEFAULT = re.compile(
    r"""\b(?:getenv|environ\.get|environ\.setdefault|\w*[Ff]rom[Ee]nv\w*)\(\s*["']"""
    r"""([A-Za-z_][A-Za-z0-9_]*)["']\s*,\s*([^,()]+?)\s*[,)]"""
)
_CONSTANT = re.compile(
    r"""^\s*(?:(?:pub\s+)?(?:const|static|final|let|var)\s+)?([A-Z][A-Z0-9_]{2,})"""
    r"""\s*(?::\s*[\w\[\]&' .]+?)?\s*:?=\s*([^=].*?)\s*;?\s*(?:#.*|//.*)?$"""
)
_LITERAL = re.compile(
    r"""^(?:-?\d+(?:\.\d+)?(?:_\d+)*[a-z]*|"[^"]*"|'[^']*'|true|false|True|False|None|nil)$"""
)


def _placements(tracks: Sequence[TrackFindings]) -> dict[str, dict[str, _Place]]:
    """code name -> track group -> the first location that track states for it."""
    out: dict[str, dict[str, _Place]] = {}
    group_of = _groups(tracks)
    for t in _flatten(tracks):
        group = group_of[id(t)]
        for f in t.findings:
            for m in _PLACED.finditer(f.claim):
                out.setdefault(m.group(1), {}).setdefault(group, _place(m))
    return out


def _place(m: re.Match[str]) -> _Place:
    start = int(m.group(4))
    return m.group(3), start, int(m.group(5) or start), m.group(2) == " at "


def _apart(a: _Place, b: _Place) -> bool:
    """Two locations of one name that cannot be one definition: in two files, or lines
    that do not overlap — unless both are retrieved parts of a file, which may be two
    chunks of one long class (flask's `Flask` at app.py:178-204 and app.py:248-252)."""
    if a[0] != b[0]:
        return True
    if a[3] and b[3]:
        return False
    return a[2] < b[1] or b[2] < a[1]


def _where(at: _Place) -> str:
    path, start, end, _ = at
    return f"{path}:{start}" + (f"-{end}" if end != start else "")


def _path_declared(package: str, declared: set[str]) -> bool:
    """Whether a module path (Go's `google.golang.org/protobuf/types`) is declared by a
    module that holds it, or names a part of one (`github.com/cncf/xds` of the module
    `github.com/cncf/xds/go`): a path's packages are declared by their module."""
    if "/" not in package:
        return False
    p = normalize(package)
    return any(p == m or p.startswith(m + "/") or m.startswith(p + "/") for m in declared)


def _asked(focus: str) -> frozenset[str]:
    """The words of a track's question (its focus), for telling whether two tracks
    answer the same one."""
    asked = _SCOPE.sub("", focus)  # a retrieval track's "(in .)" is where, not what
    return frozenset(w.lower() for w in _FOCUS_WORDS.findall(asked) if w.lower() not in _NOT_ASKED)


def _same_question(a: TrackFindings, b: TrackFindings) -> bool:
    """Two tracks answer the same question when they were given the same focus, or one
    track's question holds the other's (a sub-question and the whole question); two
    sub-questions of one question cover different ground."""
    if a.track.focus == b.track.focus:
        return True
    wa, wb = _asked(a.track.focus), _asked(b.track.focus)
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def _one_source(a: TrackFindings, b: TrackFindings) -> bool:
    """Two tracks drawn from one look-up (the callers and the callees of the same
    definitions: a callee's `Config` is not a second answer to the callers' `Config`)."""
    return bool(a.track.source) and a.track.source == b.track.source


def _answer(t: TrackFindings) -> tuple[str, _Place, str] | None:
    """A track's top finding that places a code name: the name, where, the citation."""
    for f in t.findings:
        m = _PLACED.search(f.claim)
        if m is not None:
            return m.group(1), _place(m), f.citations[0].ref
    return None


def _other_definitions(groups: dict[str, TrackFindings]) -> list[str]:
    """Two tracks answering the same question, not drawn from one source, whose top
    findings name one code name at two different definitions."""
    out = []
    answers = {g: ans for g, t in groups.items() if (ans := _answer(t)) is not None}
    by_name: dict[str, list[str]] = {}
    for g in sorted(answers):
        by_name.setdefault(answers[g][0], []).append(g)
    for name, named in sorted(by_name.items()):
        pair = next(
            (
                (a, b)
                for i, a in enumerate(named)
                for b in named[i + 1 :]
                if _apart(answers[a][1], answers[b][1])
                and _same_question(groups[a], groups[b])
                and not _one_source(groups[a], groups[b])
            ),
            None,
        )
        if pair is not None:
            (a, b), (at_a, ref_a), (at_b, ref_b) = pair, answers[pair[0]][1:], answers[pair[1]][1:]
            out.append(
                f"`{name}`: {a} answers with the definition at {_where(at_a)} "
                f"(cited at {ref_a}), {b} with the one at {_where(at_b)} (cited at {ref_b}): "
                "two definitions of the name, or lines that moved"
            )
    return out


def _related(a: str, b: str, asked: str = "") -> str | None:
    """The name two different code names both are, or None: a class and its method
    (`Template`, `Template.render`: the method's name), or one name qualified two ways
    (`block_on`, `LocalSet.block_on`: the shared last part). Two owners' methods of one
    name (xarray's `Variable.chunk` and `DataArray.chunk`) are two definitions, each
    answering for its class, unless the question (`asked`) writes one of them: then a
    track answering with the other's is a disagreement."""
    if b.startswith(a + "."):
        return b
    if a.startswith(b + "."):
        return a
    last_a, last_b = a.rsplit(".", 1)[-1], b.rsplit(".", 1)[-1]
    # Every class has its `__init__`: two of them are two classes, not one name's answers.
    if last_a != last_b or last_a.startswith("__"):
        return None
    if "." in a and "." in b and not re.search(rf"\b(?:{re.escape(a)}|{re.escape(b)})\b", asked):
        return None
    return last_a


def _one_type(name_a: str, at_a: _Place, name_b: str, at_b: _Place) -> bool:
    """Whether two names are a type and its method in two files its language lets one
    type's definition span (`languages.methods_apart`: a Go package's files, a Rust
    crate's modules): one definition, not two."""
    if name_b.startswith(name_a + "."):
        return methods_apart(at_a[0], at_b[0])
    if name_a.startswith(name_b + "."):
        return methods_apart(at_b[0], at_a[0])
    return False


def _related_definitions(groups: dict[str, TrackFindings]) -> list[str]:
    """Two tracks answering the same question, not drawn from one source, whose top
    findings name two code names that are one name (`_related`) in two files: django's
    "who calls Template.render?" answered with the `Template` of template/base.py by the
    retrieval and with `Template.render` of template/backends/django.py by the callers.
    One file is left out: a class's chunk and its method there may be one definition; so
    are two files of one type by the language's rule (`_one_type`: cobra's `Command` of
    command.go and `Command.enforceFlagGroupsForCompletion` of flag_groups.go)."""
    out = []
    answers = {g: ans for g, t in groups.items() if (ans := _answer(t)) is not None}
    named = sorted(answers)
    seen: set[str] = set()
    for i, a in enumerate(named):
        for b in named[i + 1 :]:
            (name_a, at_a, ref_a), (name_b, at_b, ref_b) = answers[a], answers[b]
            asked = f"{groups[a].track.focus}\n{groups[b].track.focus}"
            name = _related(name_a, name_b, asked) if name_a != name_b else None
            if (
                name is None
                or name in seen
                or at_a[0] == at_b[0]
                or _one_type(name_a, at_a, name_b, at_b)
                or not _same_question(groups[a], groups[b])
                or _one_source(groups[a], groups[b])
            ):
                continue
            seen.add(name)
            out.append(
                f"`{name}`: {a} answers with `{name_a}` at {_where(at_a)} (cited at {ref_a}), "
                f"{b} with `{name_b}` at {_where(at_b)} (cited at {ref_b}): two definitions "
                "of the name in two files"
            )
    return out


def _setting_values(t: TrackFindings) -> list[tuple[str, str, str]]:
    """(setting, value, citation) for each literal value a track's cited lines give a
    setting: the default of an environment read (`os.getenv("X", "0")`,
    `boolFromEnv("GRPC_X", true)`) or an UPPER_CASE constant (`TIMEOUT = 30`)."""
    out = []
    for f in t.findings:
        for c in f.citations:
            found = _ENV_DEFAULT.findall(c.quote) or _CONSTANT.findall(c.quote)
            out += [(n, v.strip(), c.ref) for n, v in found if _LITERAL.match(v.strip())]
    return out


def _other_values(groups: dict[str, TrackFindings]) -> list[str]:
    """One setting given different literal values in lines two tracks cite."""
    values: dict[str, dict[str, tuple[str, str]]] = {}
    for g, t in groups.items():
        for name, value, ref in _setting_values(t):
            values.setdefault(name, {}).setdefault(g, (value, ref))
    out = []
    for name, by in sorted(values.items()):
        groups_ = sorted(by)
        pair = next(
            (
                (a, b)
                for i, a in enumerate(groups_)
                for b in groups_[i + 1 :]
                if _unquoted(by[a][0]) != _unquoted(by[b][0]) and by[a][1] != by[b][1]
            ),
            None,
        )
        if pair is not None:
            a, b = pair
            out.append(
                f"`{name}`: {a} cites the value {by[a][0]} ({by[a][1]}), {b} the value "
                f"{by[b][0]} ({by[b][1]}): two values of one setting"
            )
    return out


def _unquoted(value: str) -> str:
    return value.strip("\"'").lower()


def _disagreements(tracks: Sequence[TrackFindings]) -> list[str]:
    """Where two tracks disagree, each side cited: their top findings for the same
    question name two definitions of one name, or the lines they cite give one setting
    two values. Tracks that agree, or answer different questions, give none."""
    groups = {t.track.name: t for t in reversed(tracks)}  # the first of a name
    return _other_definitions(groups) + _related_definitions(groups) + _other_values(groups)


def _hits(t: TrackFindings) -> set[_Hit]:
    """The locations a track cites, and those its claims place a name at."""
    out: set[_Hit] = set()
    for f in t.findings:
        out |= {(c.path, c.start_line, c.end_line) for c in f.citations}
        out |= {_place(m)[:3] for m in _PLACED.finditer(f.claim)}
    return out


WIDER = 1
"""Lines either side of a place that still point at it: a call on the line after a
chunk's last, a decorator above a definition's first line. Not more: two methods one
blank line apart are two places."""
DEFINITION_LINES = 60
"""A location up to this many lines is one place (a function, a retrieved chunk of one):
a track citing any of its lines points at all of it. A longer one is a region (flask's
`Flask` class at app.py:109-1625, a module's first 300 lines): citing it says the
region matters, not that a method or a line inside it does, so it points only at a
location that starts where it does (within `WIDER`), the head of the same definition."""


def _points_at(hit: _Hit, at: _Hit) -> bool:
    """Whether a location a track cites (`hit`) points at a finding's citation
    (`at`): the same file, and either both are places (`DEFINITION_LINES`) whose lines
    overlap or lie within `WIDER` lines of each other, or one is a region and both start
    within `WIDER` lines (a chunk that opens a class, and the class). Being in the same
    file, or inside the same long class, is not pointing at the finding."""
    if hit[0] != at[0]:
        return False
    if max(hit[2] - hit[1], at[2] - at[1]) + 1 <= DEFINITION_LINES:
        return hit[1] - WIDER <= at[2] and at[1] - WIDER <= hit[2]
    return abs(hit[1] - at[1]) <= WIDER


def _dependent(a: set[_Hit], b: set[_Hit]) -> bool:
    """Whether two tracks share their hits: at least two of one track's locations, and
    `SHARED` of them, are the other's too. Two tracks that meet at one location
    corroborate it; two that meet at most of theirs found the same things."""
    same = len(a & b)
    return same >= 2 and same >= SHARED * min(len(a), len(b))


def _sources(
    support: set[str], hits: dict[str, set[_Hit]], drawn: dict[str, str]
) -> list[list[str]]:
    """The supporting tracks grouped into independent sources: tracks that share their
    hits (`SHARED`), or that are drawn from one source (`TrackSpec.source`: the callers
    and callees of the same definitions), are one source."""
    names = sorted(support)
    parent = {n: n for n in names}

    def root(n: str) -> str:
        while parent[n] != n:
            n = parent[n]
        return n

    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            one = bool(drawn.get(a)) and drawn.get(a) == drawn.get(b)
            if root(a) != root(b) and (one or _dependent(hits.get(a, set()), hits.get(b, set()))):
                parent[root(b)] = root(a)
    out: dict[str, list[str]] = {}
    for n in names:
        out.setdefault(root(n), []).append(n)
    return list(out.values())


def _cited(
    tracks: Sequence[TrackFindings], topic: str, holds: str, *, first: bool = False
) -> str | None:
    """The citation of the first finding of `topic` whose claim holds `holds` (with
    `first`, begins with it: `auth.py has …` is not `lib/auth.py has …`), or None."""
    return next(
        (
            f.citations[0].ref
            for t in tracks
            for f in t.findings
            if f.topic == topic and (f.claim.startswith(holds) if first else holds in f.claim)
        ),
        None,
    )


def _imported_entry_points(result: ExploreResult, tracks: Sequence[TrackFindings]) -> list[str]:
    """A file the tree calls an entry point by convention that the import graph has other
    modules import: the tree's line that shows the role, and an import of it."""
    if result.imports is None:
        return []
    central = dict(result.imports.central)
    out = []
    for k in result.key_files:
        if (
            "entry" in k.role.lower()
            and k.path in central
            and k.path not in result.imports.entry_points
            and (role_at := _cited(tracks, "key_files", f"{k.path}: {k.role}", first=True))
            is not None
            and (imported_at := _cited(tracks, "central", f"({k.path})")) is not None
        ):
            out.append(
                f"`{k.path}` is an entry point by convention ({k.role}, {role_at}) but other "
                f"modules import it (as at {imported_at})"
            )
    return out


def _undeclared(result: ExploreResult) -> list[str]:
    """A package the code needs (imported by two files or more, not only under guards or in
    tests) that no manifest of the project declares: an import of it, and the line where
    the project's manifest declares its dependencies."""
    if result.imports is None:
        return []
    deps = result.dependencies
    project = [d for d in deps.dependencies if d.manifest not in deps.examples]
    declared = {normalize(d.name) for d in project}
    # The project's own package (`import dayjs` in dayjs' plugins and tests) is no dependency.
    declared |= {normalize(n) for n in result.dependencies.names}
    # An extra named after a package pulls it in: `h5netcdf[h5py]` declares h5py.
    declared |= {
        normalize(x.strip())
        for d in project
        if (m := _EXTRAS.match(d.spec))
        for x in m.group(1).split(",")
        if x.strip()
    }
    # The project's manifest side: its first runtime dependency, else its first one.
    listed = sorted((d for d in project if d.line is not None), key=lambda d: d.group != "runtime")
    if not declared or not listed:
        return []
    manifest = listed[0]
    out = []
    for package, users in result.imports.external:
        if (
            package not in STDLIB
            and package not in result.imports.conditional
            and users >= 2
            and not distributions(package) & declared
            and not _path_declared(package, declared)
            and (site := result.imports.sites.get(package)) is not None
        ):
            out.append(
                f"`{package}` is imported by {users} files (as at {site.ref}) but no manifest "
                f"declares it under that name ({manifest.manifest} declares the "
                f"{manifest.group} dependencies from {manifest.manifest}:{manifest.line}, "
                f"`{manifest.name}` first)"
            )
    return out


def _moving(result: ExploreResult, tracks: Sequence[TrackFindings]) -> list[str]:
    """A file that answers the focus (the index) and that git lists with uncommitted
    changes: the answer's lines, and git's finding about the file."""
    if result.git is None or not result.focus_findings:
        return []
    dirty = {line.split(maxsplit=1)[-1] for line in result.git.uncommitted}
    answers: dict[str, str] = {}
    for f in result.focus_findings:
        for c in f.citations:
            answers.setdefault(c.path, c.ref)
    out = []
    for path in sorted(answers.keys() & dirty):
        changed = _cited(tracks, "uncommitted", f"{path} has uncommitted changes", first=True)
        if changed is not None:
            out.append(
                f"`{path}` answers the focus ({answers[path]}) and has uncommitted changes "
                f"(git, {changed}): its lines may move"
            )
    return out


_ANSWER = re.compile(r"`([^`]+)` (?:at|in) ([^\s:()`]+:\d+(?:-\d+)?)")
"""A retrieval claim's statement of where the answer is: "`X` at a.py:10-20" (a part of
its definition), "`X` in a.py:1-30" (a module's lines that set it)."""
_PAIR = re.compile(r"^(\S+) and (\S+) changed together in (\d+) commits.*?, as in (\w+)")
STATED_NAMES = 3
"""Definitions the statement names."""
STATED_EACH = 2
"""Callers, callees, tests, settings and co-change pairs the statement names, each."""


def _and(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _same_name(a: str, b: str) -> bool:
    """One definition's name written two ways (`getini`, `Config.getini`)."""
    return a == b or a.endswith("." + b) or b.endswith("." + a)


class _Stated:
    """What the tracks say about one definition, for the statement."""

    def __init__(self, name: str, at: str) -> None:
        self.name, self.at = name, at
        self.callers: list[str] = []
        self.callees: list[str] = []
        self.tests: list[str] = []

    def sentence(self) -> str:
        said = [f"`{self.name}` is at {self.at}"]
        if self.callers:
            said.append(f"is called from {_and(self.callers[:STATED_EACH])}")
            if len(self.callers) > STATED_EACH:
                said[-1] += f" (and {plural(len(self.callers) - STATED_EACH, 'more caller')})"
        if self.callees:
            said.append(f"calls {_and(self.callees[:STATED_EACH])}")
        if self.tests:
            said.append(f"is tested at {_and(self.tests[:STATED_EACH])}")
        if len(said) <= 2:
            return " and ".join(said)
        return ", ".join(said[:-1]) + ", and " + said[-1]


def _statement(tracks: Sequence[TrackFindings]) -> str:
    """The tracks' findings composed into one sentence, each part at its citation: where
    the answer's definitions are (the retrieval tracks' top findings, then the
    definitions the references looked up), who calls them, what they call and the tests
    that reference them, then the settings and the files that change with the answer
    ("`validate_token` is at tokens.py:30-42, is called from routes.py:22, and is tested
    at test_tokens.py:8; set by `TOKEN_TTL` at settings.py:5; tokens.py changes with
    routes.py (3 commits, as in 1a2b3c4)"). Empty when no track places a definition."""
    flat = _flatten(tracks)
    by_role = {
        role: [f for t in flat if t.track.role == role for f in t.findings]
        for role in ("answer", "callers", "callees", "tests", "config", "history")
    }
    # A fixture or a helper the tests use that references a definition is no test of it
    # (the tests track says which: by its path, or because other tests import it).
    by_role["tests"] = [f for f in by_role["tests"] if not f.claim.startswith(SUPPORT)]
    stated: list[_Stated] = []

    def entry(name: str, at: str) -> _Stated:
        found = next((e for e in stated if _same_name(e.name, name)), None)
        if found is None:
            found = _Stated(name, at)
            stated.append(found)
        return found

    asked = " ".join(t.track.focus for t in flat if t.track.role == "answer")

    def written(name: str) -> bool:
        """Whether the question writes the name: its last part as a word that qualifies
        nothing (`getini` of `Config.getini`; not `Config`)."""
        last = re.escape(name.rsplit(".", 1)[-1])
        return re.search(rf"(?<!\w){last}(?![\w.])", asked) is not None

    for t in flat:
        if t.track.role != "answer":
            continue
        placed = [m for f in t.findings if (m := _ANSWER.search(f.claim))]
        # The definition the question writes, when the track found it; else its top one.
        top = next((m for m in placed if written(m.group(1))), placed[0] if placed else None)
        if top is not None:
            entry(top.group(1), top.group(2))
    for role in ("callers", "callees", "tests"):
        for f in by_role[role]:
            # The location the claim states for the definition it is about (its topic).
            at = next((m for m in _PLACED.finditer(f.claim) if m.group(1) == f.topic), None)
            ref = f.citations[0].ref
            if role == "callees":
                # "`A` calls `B` (b.py:1-9) at a.py:12": A is the definition, B its callee.
                names = _CODE.findall(f.claim)
                if len(names) < 2:
                    continue
                e = next((x for x in stated if _same_name(x.name, names[0])), None)
                callee = f"`{names[1]}` ({ref})"
                if e is not None and callee not in e.callees:
                    e.callees.append(callee)
                continue
            if at is None or not f.topic:
                continue
            where = f"{at.group(3)}:{at.group(4)}" + (f"-{at.group(5)}" if at.group(5) else "")
            e = entry(f.topic, where)
            (e.callers if role == "callers" else e.tests).append(ref)
    stated.sort(key=lambda e: not written(e.name))  # what the question names first
    parts = [e.sentence() for e in stated[:STATED_NAMES]]
    if not parts:
        return ""
    named_tests = [
        f.citations[0].ref
        for f in by_role["tests"]
        if not any(m.group(1) == f.topic for m in _PLACED.finditer(f.claim))
    ]
    if named_tests:
        parts.append(f"test files named after its files: {_and(named_tests[:STATED_EACH])}")
    settings = []
    for f in by_role["config"]:
        names = _CODE.findall(f.claim)
        what = f"`{names[0]}`" if names else f.citations[0].path
        settings.append(f"{what} at {f.citations[0].ref}")
    if settings:
        parts.append(f"set by {_and(settings[:STATED_EACH])}")
    for f in by_role["history"][:STATED_EACH]:
        m = _PAIR.match(f.claim)
        if m is not None:
            a, b, n, commit = m.groups()
            parts.append(f"{a} changes with {b} ({n} commits, as in {commit})")
    return "; ".join(parts)


def synthesize(result: ExploreResult) -> Synthesis:
    group_of = _groups(result.tracks)
    tracks = _flatten(result.tracks)
    unified: list[str] = []
    divergences: list[str] = _disagreements(result.tracks)

    # What each track cites or places, by track group (a track and its subtracks).
    hits: dict[str, set[_Hit]] = {}
    drawn: dict[str, str] = {}
    for t in tracks:
        hits.setdefault(group_of[id(t)], set()).update(_hits(t))
        drawn.setdefault(group_of[id(t)], t.track.source)
    findings = _stated(tracks, group_of, hits, drawn)
    for f, sources in findings:
        ref = f.citations[0].ref
        where = "" if ref in f.claim else f" ({ref})"
        # A track's name may hold commas; tracks that share their hits are joined by "&".
        named = "; ".join(" & ".join(s) for s in sources)
        n = len(sources)
        unified.append(
            f"{f.claim}{where} — supported by {n} independent "
            f"track{'s' if n != 1 else ''} ({named})"
        )

    divergences += _imported_entry_points(result, tracks)
    divergences += _undeclared(result)
    divergences += _moving(result, tracks)

    open_questions = []
    for t in tracks:
        for gap in t.gaps:
            if gap == NO_ENTRY_POINT and (
                result.dependencies.entry_points or result.dependencies.names
            ):
                # The manifests declare what no file's name shows, or make a package:
                # a library is entered through its API, which the other sections show.
                continue
            if _NOT_INSTALLED.search(gap):
                if _typing_only(result, gap):
                    continue
                gap = _NOT_INSTALLED.sub(_not_installed(result), gap)
            if gap not in open_questions and _about_the_repository(gap):
                open_questions.append(gap)
    open_questions += [q for q in _ci_placeholders(result) if q not in open_questions]

    passed = sum(t.passed for t in tracks)
    dropped = sum(len(t.dropped) for t in tracks)
    corroborated = sum(len(sources) >= 2 for _, sources in findings)
    basis = (
        f"{passed}/{len(tracks)} tracks passed all gates; {corroborated} of "
        f"{len(findings)} findings supported by several independent tracks; "
        f"{dropped} claims dropped"
    )
    confidence: Literal["High", "Moderate", "Low"]
    top = len(findings[0][1]) if findings else 0
    if not tracks or passed * 2 < len(tracks) or top == 1:
        confidence = "Low"
    elif passed == len(tracks) and not dropped and top >= 2:
        confidence = "High"
    else:
        confidence = "Moderate"
    if findings:
        basis += f"; the top finding has {plural(top, 'independent source')}"
    return Synthesis(
        unified=unified,
        findings=[f for f, _ in findings],
        divergences=divergences[: MAX_ITEMS * 2],
        open_questions=open_questions,
        statement=_statement(result.tracks),
        confidence=confidence,
        basis=basis,
    )
