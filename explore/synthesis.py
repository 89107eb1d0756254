"""Aggregation across tracks: what they agree on, where they diverge, what stays open, and
how much to trust the whole.

- findings (and `unified`, the same as lines): statements about the code drawn from the
  tracks' verified claims — a definition that answers the question, who calls it, a
  cycle, an entry point — each kept only when its citation's quoted line holds the code
  name the statement is about (`topic`), so a reader can check it at `path:start-end`.
  They are ordered by how many independent tracks cite the same file (support), every
  track's best first; a finding with one track's support says so.
- divergences: where two tracks disagree, each side cited: two tracks that state the
  same code name at locations that do not overlap (`X` at a.py:10-20 by one, `X`
  (b.py:5) by another: different definitions, or lines that moved); a conventional entry
  point (the tree) that other modules import (the import graph); a package the code
  imports (the import graph) that no manifest of the project declares (the manifests);
  focus results (the index) in files with uncommitted changes (git). Empty when the
  tracks agree: failed gates and dropped claims are the basis' and the tracks' own, an
  import cycle is the import graph's finding, neither is a disagreement. A package counts
  as declared when a distribution that provides its import name is
  (explore.distributions: `dotenv` is `python-dotenv`), or an extra of a declared one is
  named after it (`h5netcdf[h5py]`); manifests of examples and docs
  declare nothing for the project; a package no module needs to run (imported only under
  TYPE_CHECKING, in try/except ImportError, in tests or in examples:
  `ImportReport.conditional`) is never undeclared.
- open questions: what an agent would need and the explorers could not determine: every
  track's gaps about the repository (a name the focus uses that is not found, a
  relative import naming no file, a definition with no caller), a package the code
  imports that is not installed here (its API could not be checked; the install command
  that settles it), a CI test command whose values come from the CI matrix. Gaps that
  state an explorer's own limits (sampling, caps, languages it has no rules for, what static
  import parsing cannot see: `_OWN_LIMITS`) stay in their tracks.
- confidence: High when every track passed every gate, nothing was dropped and the top
  finding is supported by at least two tracks; Low when most tracks failed or the top
  finding has one source; Moderate otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from dowse.explore.distributions import distributions, normalize
from dowse.explore.records import (
    ExploreResult,
    Finding,
    Synthesis,
    TrackFindings,
)
from dowse.explore.tracks import STDLIB
from dowse.languages import is_example_path

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


def _track_group(name: str) -> str:
    return name.split("/", 1)[0]


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
    install = next((c for c in result.commands if c.kind == "install"), None)
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
    tracks: Sequence[TrackFindings], cited: dict[str, dict[str, str]]
) -> list[tuple[Finding, set[str]]]:
    """The tracks' claims that name code their citation holds, each with the tracks that
    cite its file: the most supported first, round-robin over the tracks within a level
    (every track's best before any track's second)."""
    candidates: list[tuple[int, int, int, Finding, set[str]]] = []
    for order, t in enumerate(tracks):
        if _track_group(t.track.name) in _LISTINGS:
            continue
        rank = 0
        for f in t.findings:
            name = named_in(f)
            if name is None:
                continue
            support = set(cited.get(f.citations[0].path, {})) | {_track_group(t.track.name)}
            stated = Finding(claim=f.claim, citations=f.citations[:1], topic=name)
            candidates.append((-len(support), rank, order, stated, support))
            rank += 1
    candidates.sort(key=lambda c: c[:3])
    out: list[tuple[Finding, set[str]]] = []
    seen: set[str] = set()
    for *_, f, support in candidates:
        if f.citations[0].ref not in seen:
            seen.add(f.citations[0].ref)
            out.append((f, support))
    return out[:MAX_ITEMS]


_Place = tuple[str, int, int, bool]
"""path, start, end, and whether it is a retrieved part (a chunk) rather than the whole."""


def _placements(tracks: Sequence[TrackFindings]) -> dict[str, dict[str, _Place]]:
    """code name -> track group -> the first location that track states for it."""
    out: dict[str, dict[str, _Place]] = {}
    for t in tracks:
        group = _track_group(t.track.name)
        for f in t.findings:
            for m in _PLACED.finditer(f.claim):
                name, part, path, start = m.group(1), m.group(2) == " at ", m.group(3), m.group(4)
                end = int(m.group(5) or start)
                out.setdefault(name, {}).setdefault(group, (path, int(start), end, part))
    return out


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


def _disagreements(tracks: Sequence[TrackFindings]) -> list[str]:
    """Code names that two tracks place at locations that do not overlap."""
    out = []
    for name, by in sorted(_placements(tracks).items()):
        groups = sorted(by)
        for i, a in enumerate(groups):
            other = next((b for b in groups[i + 1 :] if _apart(by[a], by[b])), None)
            if other is not None:
                out.append(
                    f"`{name}`: {a} places it at {_where(by[a])}, {other} at "
                    f"{_where(by[other])} (two definitions of the name, or lines that moved)"
                )
                break
    return out


def synthesize(result: ExploreResult) -> Synthesis:
    tracks = _flatten(result.tracks)
    unified: list[str] = []
    divergences: list[str] = _disagreements(tracks)

    # Files cited by several independent tracks.
    cited: dict[str, dict[str, str]] = {}
    for t in tracks:
        for f in t.findings:
            for c in f.citations:
                cited.setdefault(c.path, {}).setdefault(_track_group(t.track.name), c.ref)
    agreements = sorted(
        ((p, by) for p, by in cited.items() if len(by) >= 2), key=lambda kv: (-len(kv[1]), kv[0])
    )
    findings = _stated(tracks, cited)
    for f, support in findings:
        ref = f.citations[0].ref
        where = "" if ref in f.claim else f" ({ref})"
        tracks_named = "; ".join(sorted(support))  # a track's name may hold commas
        unified.append(
            f"{f.claim}{where} — supported by {len(support)} "
            f"track{'s' if len(support) != 1 else ''} ({tracks_named})"
        )

    # Cross-checks.
    key = {k.path: k.role for k in result.key_files}
    if result.imports is not None:
        central = dict(result.imports.central)
        for path, role in key.items():
            if (
                "entry" in role.lower()
                and path in central
                and path not in result.imports.entry_points
            ):
                divergences.append(
                    f"`{path}` is an entry point by convention ({role}) but other modules import it"
                )
        project = [d for d in result.dependencies.dependencies if not is_example_path(d.manifest)]
        declared = {normalize(d.name) for d in project}
        # An extra named after a package pulls it in: `h5netcdf[h5py]` declares h5py.
        declared |= {
            normalize(x.strip())
            for d in project
            if (m := _EXTRAS.match(d.spec))
            for x in m.group(1).split(",")
            if x.strip()
        }
        needed = [
            (package, users)
            for package, users in result.imports.external
            if package not in STDLIB and package not in result.imports.conditional
        ]
        if declared:
            for package, users in needed:
                if (
                    users >= 2
                    and not distributions(package) & declared
                    and not _path_declared(package, declared)
                ):
                    divergences.append(
                        f"`{package}` is imported by {users} files but no manifest "
                        "declares it under that name"
                    )
    if result.git is not None and result.focus_findings:
        dirty = {line.split(maxsplit=1)[-1] for line in result.git.uncommitted}
        for path in sorted({c.path for f in result.focus_findings for c in f.citations} & dirty):
            divergences.append(
                f"`{path}` answers the focus and has uncommitted changes: its lines may move"
            )

    open_questions = []
    for t in tracks:
        for gap in t.gaps:
            if _NOT_INSTALLED.search(gap):
                if _typing_only(result, gap):
                    continue
                gap = _NOT_INSTALLED.sub(_not_installed(result), gap)
            if gap not in open_questions and _about_the_repository(gap):
                open_questions.append(gap)
    open_questions += [q for q in _ci_placeholders(result) if q not in open_questions]

    passed = sum(t.passed for t in tracks)
    dropped = sum(len(t.dropped) for t in tracks)
    basis = (
        f"{passed}/{len(tracks)} tracks passed all gates; {len(agreements)} files "
        f"corroborated by several tracks; {dropped} claims dropped"
    )
    confidence: Literal["High", "Moderate", "Low"]
    top = len(findings[0][1]) if findings else 0
    if tracks and passed == len(tracks) and not dropped and (top >= 2 or len(tracks) == 1):
        confidence = "High"
    elif not tracks or passed * 2 < len(tracks) or (len(tracks) > 1 and top == 1):
        confidence = "Low"
    else:
        confidence = "Moderate"
    if findings:
        basis += f"; the top finding is supported by {len(findings[0][1])} track(s)"
    return Synthesis(
        unified=unified,
        findings=[f for f, _ in findings],
        divergences=divergences[: MAX_ITEMS * 2],
        open_questions=open_questions,
        confidence=confidence,
        basis=basis,
    )
