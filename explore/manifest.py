"""The manifest explorer: dependencies, scripts and entry points from dependency manifests.

Thirteen formats, each read by its parser in explore.manifest_formats; this module finds
the manifests, runs their parsers and assembles the report.

Output ``dependencies``: a `ManifestReport` over the manifests in scope or, when the scope
holds none, the nearest ones in the directories above it (up to the root). Supported:
``pyproject.toml`` (PEP 621, PEP 735 groups, Poetry), ``setup.cfg``, ``setup.py`` (by
pattern, never executed), ``requirements*.txt``, ``package.json``, ``tsconfig*.json``,
``deno.json(c)``, ``go.mod``, ``Cargo.toml``, ``pom.xml``, ``build.gradle(.kts)``,
``Gemfile`` and ``composer.json``.

Invariants:

- Parsing is structured where the format allows (tomllib, json, configparser,
  xml.etree); line numbers always come from the text: each declaration is looked up after
  the line of its table or key, so a name declared twice gets the line in the right section.
- The project's manifests come first, shallowest first; those of examples, tests,
  benchmarks and docs (``ManifestReport.examples``, by the path below the explored scope)
  after them, so a budget or the manifest cap drops theirs first.
- A dependency's ``line`` is None only when the text did not show where it is declared.
- A manifest that does not parse is a gap (``"<path>: could not parse: ..."``; a
  conclusion for an example's or a test's, often a parser's fixture), never an exception;
  the other manifests are still reported.
- Script and entry-point names are unique across manifests: a repeated name is suffixed
  with its manifest (``"test (web/package.json)"``).
"""

from __future__ import annotations

from posixpath import dirname

from dowse.explore.manifest_formats import Parsed, Src, parser_for, tests_own_requirements
from dowse.explore.records import Dependency, ManifestReport, TrackSpec
from dowse.explore.tracks import Context, Track, TrackState, cite, plural
from dowse.languages import is_benchmark_path, is_example_path, is_test_path

__all__ = ["MAX_MANIFESTS", "manifest_track"]

MAX_MANIFESTS = 40
"""Manifests parsed per scope, shallowest first."""
_CLAIM_RUNTIME = 30
_CLAIM_OTHER = 20
_CLAIM_SCRIPTS = 20


# -- finding the manifests ------------------------------------------------------------------


def _manifests(ctx: Context) -> tuple[list[str], bool]:
    """The manifests in scope; else the nearest ones above it. True when they are above."""
    files = ctx.files()
    found = [p for p in files if parser_for(p) is not None]
    if found or not ctx.scope:
        return found, False
    by_dir: dict[str, list[str]] = {}
    for p in ctx.all_files():
        if parser_for(p) is not None:
            by_dir.setdefault(dirname(p), []).append(p)
    d = ctx.scope
    while d:
        d = dirname(d)
        if d in by_dir:
            return by_dir[d], True
    return [], False


def _claim_text(dep: Dependency) -> str:
    spec = f" {dep.spec}" if dep.spec else ""
    return f"{dep.manifest} declares the {dep.group} dependency {dep.name}{spec}"


def _record(state: TrackState, parsed: list[Parsed], report: ManifestReport) -> None:
    """Fill the report and claim what the manifests declare (within the claim budgets)."""
    ctx = state.ctx
    budget = {"runtime": _CLAIM_RUNTIME, "other": _CLAIM_OTHER}
    named = 0
    for p in parsed:
        path = p.src.path
        if p.ident is not None:
            state.claim(f"{path} declares {p.what}", cite(ctx, path, *p.ident), topic="manifests")
        elif not (p.deps or p.scripts or p.entries) and (first := p.src.find(r"\S")):
            state.claim(
                f"{path} declares no dependencies, scripts or entry points",
                cite(ctx, path, first),
                topic="manifests",
            )
        if p.name and not _aside(ctx, path) and p.name not in report.names:
            report.names.append(p.name)
        for dep in p.deps:
            report.dependencies.append(dep)
            kind = "runtime" if dep.group == "runtime" else "other"
            if dep.line is not None and budget[kind] > 0:
                budget[kind] -= state.claim(
                    _claim_text(dep), cite(ctx, path, dep.line), topic="dependencies"
                )
        for items, target, what in (
            (p.scripts, report.scripts, "script"),
            (p.entries, report.entry_points, "entry point"),
        ):
            for item in items:
                key = item.name if item.name not in target else f"{item.name} ({path})"
                target[key] = item.value
                if item.line is not None and named < 2 * _CLAIM_SCRIPTS:
                    named += state.claim(
                        f"{path} declares the {what} {item.name}: {item.value}",
                        cite(ctx, item.path, item.line),
                        topic=what + "s",
                    )


def _summary(report: ManifestReport) -> str:
    groups: dict[str, int] = {}
    for d in report.dependencies:
        groups[d.group] = groups.get(d.group, 0) + 1
    by_group = ", ".join(
        f"{g} {n}"
        for g, n in sorted(groups.items(), key=lambda kv: (kv[0] != "runtime", -kv[1], kv[0]))
    )
    return (
        f"{len(report.manifests)} manifests: {len(report.dependencies)} dependencies"
        + (f" ({by_group})" if by_group else "")
        + f", {len(report.scripts)} scripts, {len(report.entry_points)} entry points"
    )


def manifest_track(ctx: Context) -> Track:
    """The manifest explorer for `ctx`'s scope."""
    spec = TrackSpec(
        name="manifest",
        focus=ctx.scope or ".",
        approach=(
            "parse the dependency manifests in scope (or the nearest above it): "
            "dependencies with their groups, scripts and entry points, each located "
            "at its declaring line"
        ),
        gates=[
            "understood: at least one dependency manifest in scope or above it",
            "evidence: each dependency, script and entry point claim cites its declaring line",
            "complete: every manifest was parsed or its failure is a stated gap, and at "
            "least one parsed",
        ],
        deliverable="dependencies (ManifestReport: manifests, dependencies, scripts, entry points)",
    )

    failures: list[int] = []  # manifests that could not be read or parsed

    def understand(state: TrackState) -> tuple[bool, str]:
        failures.clear()
        paths = _chosen_manifests(ctx, state)
        if not paths:
            return False, "no manifests found"
        report = _new_report(state, paths)
        parsed, failed = _parse_manifests(ctx, state, paths)
        _record(state, parsed, report)
        state.output["dependencies"] = report
        failures.append(failed)
        state.conclusions.insert(0, _summary(report))
        return True, _summary(report)

    def complete(state: TrackState) -> tuple[bool, str]:
        report = state.output.get("dependencies")
        if not isinstance(report, ManifestReport):
            return False, "no manifest report"
        failed = sum(failures)
        if failed >= len(report.manifests):
            return False, "no manifest could be parsed"
        return True, (
            f"{len(report.manifests) - failed} of {len(report.manifests)} manifests parsed"
        )

    # No split: a sub-scope without manifests would only repeat the nearest ones above.
    return Track(spec=spec, understand=understand, complete=complete, make=manifest_track)


# -- the phases: which manifests, the report, parsing them ----------------------------------


def _chosen_manifests(ctx: Context, state: TrackState) -> list[str]:
    """The manifests to parse: in scope (else the nearest above it), the project's own
    first, at most MAX_MANIFESTS; [] (and a gap) when there is none."""
    paths, above = _manifests(ctx)
    if not paths:
        state.gaps.append(f"no dependency manifest in {ctx.scope or '.'} or above it")
        return []
    # The project's own first: an example's manifest declares the example's needs.
    paths.sort(key=lambda p: (_aside(ctx, p), p.count("/"), p))
    if len(paths) > MAX_MANIFESTS:
        state.gaps.append(f"parsed {MAX_MANIFESTS} of {len(paths)} manifests (the shallowest)")
        paths = paths[:MAX_MANIFESTS]
    if above:
        state.conclusions.append(
            f"no manifest in {ctx.scope}; using the nearest above: " + ", ".join(paths)
        )
    return paths


def _aside(ctx: Context, path: str) -> bool:
    """A manifest of the examples, the docs, the benchmarks or the tests, by its path below
    the explored scope: another package's (an example's, a benchmark's, a test's fixture or
    crate), not the project's. A test directory's own pip requirements are the project's:
    its tests' needs."""
    below = ctx.below(path)
    if is_example_path(below) or is_benchmark_path(below):
        return True
    return is_test_path(below) and not tests_own_requirements(below)


def _new_report(state: TrackState, paths: list[str]) -> ManifestReport:
    """The report of `paths`, its examples' manifests named as such."""
    examples = [p for p in paths if _aside(state.ctx, p)]
    report = ManifestReport(manifests=paths, examples=examples)
    if report.examples and len(report.examples) < len(paths):
        state.conclusions.append(
            f"{plural(len(report.examples), 'manifest')} of examples, tests, benchmarks and "
            "docs, listed after the project's: " + ", ".join(report.examples[:5])
        )
    return report


def _parse_manifests(ctx: Context, state: TrackState, paths: list[str]) -> tuple[list[Parsed], int]:
    """Each manifest parsed, and how many could not be read or parsed (each a gap)."""
    parsed: list[Parsed] = []
    failed = 0
    for path in paths:
        lines = ctx.lines(path)
        parser = parser_for(path)
        if lines is None or parser is None:
            state.gaps.append(f"{path}: could not be read")
            failed += 1
            continue
        out = Parsed(Src(path, lines), ctx)
        try:
            parser(out)
        except Exception as exc:  # any malformed manifest is a gap, never a crash
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            # A test's or an example's malformed manifest is often the point (a parser's
            # fixture): no open question about the project.
            said = state.conclusions if _aside(ctx, path) else state.gaps
            said.append(f"{path}: could not parse: {why}")
            failed += 1
            continue
        parsed.append(out)
        state.conclusions.extend(f"{path}: {note}" for note in out.notes)
        state.gaps.extend(f"{path}: {gap}" for gap in out.gaps)
        unplaced = [d.name for d in out.deps if d.line is None]
        if unplaced:
            state.gaps.append(
                f"{path}: could not find the declaring line of " + ", ".join(unplaced[:5])
            )
    return parsed, failed
