"""Aggregation across tracks: what they agree on, where they diverge, what stays open, and
how much to trust the whole.

- unified: a file that several tracks cite independently (a key file that is also central
  in the import graph, changes often and answers the focus) — each with the tracks and a
  citation.
- nuances: cross-checks between tracks that disagree or qualify each other: a conventional
  entry point that other modules import, a package imported in code but declared in no
  manifest of the project, focus results in files with uncommitted changes, failed gates,
  dropped claims. A package counts as declared when a distribution that provides its
  import name is (explore.distributions: `dotenv` is `python-dotenv`); manifests of
  examples and docs declare nothing for the project; a package no module needs to run
  (imported only under TYPE_CHECKING, in try/except ImportError, in tests or in examples:
  `ImportReport.conditional`) is never undeclared.
- open questions: the union of every track's gaps about the repository; gaps that state
  an explorer's own limits (sampling, caps, languages it has no rules for, what static
  import parsing cannot see: `_OWN_LIMITS`) stay in their tracks.
- confidence: High when every track passed every gate, nothing was dropped and at least two
  tracks corroborate each other; Low when most tracks failed; Moderate otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from dowse.explore.distributions import distributions, normalize
from dowse.explore.records import (
    ExploreResult,
    Synthesis,
    TrackFindings,
)
from dowse.explore.tracks import STDLIB
from dowse.languages import is_example_path

__all__ = ["synthesize"]

MAX_ITEMS = 12


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
        )
    )
)
"""Gaps that describe how an explorer works, not the repository: not open questions."""


def _about_the_repository(gap: str) -> bool:
    return not _OWN_LIMITS.search(gap)


def synthesize(result: ExploreResult) -> Synthesis:
    tracks = _flatten(result.tracks)
    unified: list[str] = []
    nuances: list[str] = []

    # Files cited by several independent tracks.
    cited: dict[str, dict[str, str]] = {}
    for t in tracks:
        for f in t.findings:
            for c in f.citations:
                cited.setdefault(c.path, {}).setdefault(_track_group(t.track.name), c.ref)
    agreements = sorted(
        ((p, by) for p, by in cited.items() if len(by) >= 2), key=lambda kv: (-len(kv[1]), kv[0])
    )
    for path, by in agreements[:MAX_ITEMS]:
        names = ", ".join(sorted(by))
        unified.append(f"`{path}` matters to {len(by)} tracks ({names}); see {by[sorted(by)[0]]}")

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
                nuances.append(
                    f"`{path}` is an entry point by convention ({role}) but other modules import it"
                )
        declared = {
            normalize(d.name)
            for d in result.dependencies.dependencies
            if not is_example_path(d.manifest)
        }
        needed = [
            (package, users)
            for package, users in result.imports.external
            if package not in STDLIB and package not in result.imports.conditional
        ]
        if declared:
            for package, users in needed:
                if users >= 2 and not distributions(package) & declared:
                    nuances.append(
                        f"`{package}` is imported by {users} files but no manifest "
                        "declares it under that name"
                    )
        for cycle in result.imports.cycles[:3]:
            nuances.append(f"import cycle: {' → '.join(cycle + cycle[:1])}")
    if result.git is not None and result.focus_findings:
        dirty = {line.split(maxsplit=1)[-1] for line in result.git.uncommitted}
        for path in sorted({c.path for f in result.focus_findings for c in f.citations} & dirty):
            nuances.append(
                f"`{path}` answers the focus and has uncommitted changes: its lines may move"
            )
    for t in tracks:
        for g in t.gates:
            if not g.passed and g.ran:
                nuances.append(f"{t.track.name}: the {g.name} gate failed ({g.detail})")
        if t.dropped:
            nuances.append(
                f"{t.track.name}: {len(t.dropped)} claim(s) dropped for a "
                "citation that did not hold"
            )

    open_questions = []
    for t in tracks:
        for gap in t.gaps:
            if gap not in open_questions and _about_the_repository(gap):
                open_questions.append(gap)

    passed = sum(t.passed for t in tracks)
    dropped = sum(len(t.dropped) for t in tracks)
    basis = (
        f"{passed}/{len(tracks)} tracks passed all gates; {len(agreements)} files "
        f"corroborated by several tracks; {dropped} claims dropped"
    )
    confidence: Literal["High", "Moderate", "Low"]
    if tracks and passed == len(tracks) and not dropped and (agreements or len(tracks) == 1):
        confidence = "High"
    elif not tracks or passed * 2 < len(tracks):
        confidence = "Low"
    else:
        confidence = "Moderate"
    return Synthesis(
        unified=unified,
        nuances=nuances[: MAX_ITEMS * 2],
        open_questions=open_questions,
        confidence=confidence,
        basis=basis,
    )
