"""The patterns explorer: how the code in scope is written, measured on a sample.

It reports module structure, error handling, typing conventions, import style, naming,
test layout and assertion style, each as a `Pattern` whose description carries the
numbers it was measured from and whose examples are 1-3 cited lines that show it. Every
pattern is also a claim citing its examples.

Invariants:

- Module structure and test layout are measured on every file path in scope (no file is
  read for them but the few cited). Everything else is measured on a deterministic sample
  of at most `SAMPLE_SOURCE` + `SAMPLE_TESTS` files (`SAMPLE_TESTS` of them tests unless
  either kind runs short), spread across directories (one file per directory per round,
  evenly spaced when a round does not fit), so a large tree costs the same as a small one.
  The numbers are then estimates, and a gap says how much was sampled.
- Constructs are found by line-anchored regular expressions over the sampled files (a
  keyword inside a docstring rarely starts a line), symbols and imports by
  `indexer.parse.parse_source`. Python is measured most closely; JavaScript/TypeScript,
  Go, Rust and Java get the same topics with fewer details; other languages are counted
  in the structure only.
- A pattern without a citable example is not reported; its topic becomes a gap.

The rules (regexes and tables) live in `explore.pattern_rules`, the topics that turn a scan
into a `Pattern` in `explore.pattern_topics`; this module samples, scans and runs the track.
"""

from __future__ import annotations

import bisect
import hashlib
import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from dowse.explore.pattern_rules import FAMILY, FEATURES, LABEL, LAST_IN_DIR, TEST_NAMES, Scan
from dowse.explore.pattern_topics import (
    assertions_pattern,
    errors_pattern,
    imports_pattern,
    naming_pattern,
    plural,
    structure_pattern,
    test_layout_pattern,
    typing_pattern,
)
from dowse.explore.records import Pattern, TrackSpec
from dowse.explore.tracks import Context, Track, TrackState, largest_subdirs
from dowse.indexer.parse import parse_source
from dowse.languages import CODE_LANGUAGES, is_test_path, language_for

__all__ = ["patterns_track"]

SAMPLE_SOURCE = 30
SAMPLE_TESTS = 10
SPLIT_MIN_FILES = 400
_CORE = ("module structure", "error handling", "import style", "naming")


def patterns_track(ctx: Context) -> Track:
    """A track sampling the scope's code and reporting its coding patterns, with examples."""
    spec = TrackSpec(
        name="patterns",
        focus=ctx.scope or ".",
        approach=f"sample at most {SAMPLE_SOURCE + SAMPLE_TESTS} files ({SAMPLE_TESTS} of them "
        "tests) spread across directories; measure constructs with line-anchored "
        "regexes and tree-sitter symbols; structure and test layout from every path "
        "in scope",
        gates=[
            "understood: code files were sampled and at least one pattern was measured",
            "evidence: every pattern's examples are cited lines that show it",
            "complete: module structure, error handling, import style and naming are "
            "each reported or explained as a gap",
        ],
        deliverable="patterns (module structure, error handling, typing, imports, naming, "
        "tests, assertions), each with numbers and 1-3 file:line examples",
    )

    def understand(state: TrackState) -> tuple[bool, str]:
        patterns = _measure(ctx, state)
        state.output["patterns"] = patterns
        for p in patterns:
            state.claim(f"{p.name}: {p.description}", *p.examples, topic="patterns")
            state.conclusions.append(f"{p.name}: {p.description}")
        if not patterns:
            return False, "no code files with measurable patterns in scope"
        return True, f"{len(patterns)} patterns measured"

    def complete(state: TrackState) -> tuple[bool, str]:
        # A pattern whose claim lost a citation at the evidence gate is not reported.
        kept = {f.claim for f in state.findings}
        patterns: list[Pattern] = [
            p for p in state.output.get("patterns", []) if f"{p.name}: {p.description}" in kept
        ]
        state.output["patterns"] = patterns
        topics = {p.name.split(" (")[0] for p in patterns}
        unexplained = [
            t
            for t in _CORE
            if t not in topics and not any(g.startswith(f"{t}:") for g in state.gaps)
        ]
        if not patterns:
            return False, "no pattern survived the evidence gate"
        if unexplained:
            return False, "not reported and not explained: " + ", ".join(unexplained)
        return True, f"{len(patterns)} patterns over {len(topics)} topics"

    return Track(
        spec=spec,
        understand=understand,
        complete=complete,
        split=lambda c: largest_subdirs(c, min_files=SPLIT_MIN_FILES),
        make=patterns_track,
    )


# -- measuring ---------------------------------------------------------------------------


def _measure(ctx: Context, state: TrackState) -> list[Pattern]:
    code = [p for p in ctx.files() if language_for(p) in CODE_LANGUAGES]
    if not code:
        state.gaps.append("module structure: no code files in scope")
        return []
    tests = [p for p in code if is_test_path(p)]
    measured = [p for p in code if language_for(p) in FAMILY]
    source_pool = [p for p in measured if not is_test_path(p)]
    test_pool = [p for p in measured if is_test_path(p)]
    n_tests = min(
        len(test_pool), max(SAMPLE_TESTS, SAMPLE_SOURCE + SAMPLE_TESTS - len(source_pool))
    )
    n_source = min(len(source_pool), SAMPLE_SOURCE + SAMPLE_TESTS - n_tests)
    source = _scan_all(ctx, _sample(source_pool, n_source), parse=True)
    test = _scan_all(ctx, _sample(test_pool, n_tests, tests=True), parse=False)
    sampled = sum(len(s.files) for s in source.values()) + sum(len(s.files) for s in test.values())
    if sampled < len(measured):
        dirs = len({posixpath.dirname(p) for p in measured})
        state.gaps.append(
            f"measured on a sample of {sampled} of {len(measured)} files in "
            f"{dirs} directories: counts are estimates"
        )
    others = Counter(language_for(p) or "" for p in code if language_for(p) not in FAMILY)
    if others:
        state.gaps.append(
            "no pattern rules for "
            + ", ".join(f"{lang} ({plural(n, 'file')})" for lang, n in others.most_common())
            + ": structure only"
        )

    patterns: list[Pattern | None] = [structure_pattern(ctx, code, tests)]
    local = local_module_names(ctx.all_files())
    for family, scan in source.items():
        label = LABEL[family]
        patterns.append(errors_pattern(ctx, scan, family))
        patterns.append(typing_pattern(ctx, scan, family))
        patterns.append(imports_pattern(ctx, scan, family, local))
        patterns.append(naming_pattern(ctx, scan, family))
        for p in patterns[-4:]:
            if p is not None:
                p.name = f"{p.name} ({label})"
    patterns.append(test_layout_pattern(ctx, tests, test, source))
    patterns.append(assertions_pattern(ctx, test, source))
    found = [p for p in patterns if p is not None]
    topics = {p.name.split(" (")[0] for p in found}
    for topic in (*_CORE, "typing", "test layout", "assertion style"):
        if topic not in topics:
            if topic in ("test layout", "assertion style") and not tests:
                why = "no test files in scope"
            elif topic == "typing" and not {"python", "js"} & source.keys():
                why = "the sampled languages are statically typed: no annotation style to measure"
            else:
                why = "nothing to cite in the sampled files"
            state.gaps.append(f"{topic}: {why}")
    return found


def _sample(paths: Sequence[str], k: int, *, tests: bool = False) -> list[str]:
    """At most `k` of `paths`, one per directory per round, evenly spaced in a round.

    Test modules (test_*.py, *_test.go, ...) come first when sampling tests, since a tests/
    tree also holds models, settings and fixtures. Within a directory, package markers and
    boilerplate come last, otherwise a stable pseudo-random order."""
    if tests:
        named = [p for p in paths if _is_test_module(p)]
        first = _sample(named, k)
        rest = [p for p in paths if not _is_test_module(p)]
        return sorted(first + _sample(rest, k - len(first)))
    by_dir: dict[str, list[str]] = defaultdict(list)
    for p in paths:
        by_dir[posixpath.dirname(p)].append(p)

    def rank(path: str) -> tuple[bool, bytes]:
        return (
            posixpath.basename(path) in LAST_IN_DIR,
            hashlib.blake2b(path.encode(), digest_size=8).digest(),
        )

    queues = [sorted(ps, key=rank) for _, ps in sorted(by_dir.items())]
    chosen: list[str] = []
    depth = 0
    while len(chosen) < k:
        layer = [q[depth] for q in queues if len(q) > depth]
        if not layer:
            break
        room = k - len(chosen)
        if len(layer) > room:
            layer = [layer[i * len(layer) // room] for i in range(room)]
        chosen.extend(layer)
        depth += 1
    return sorted(chosen)


def _is_test_module(path: str) -> bool:
    name = posixpath.basename(path)
    return any(rx.search(name) for label, rx in TEST_NAMES if label != "conftest.py")


def _scan_all(ctx: Context, files: Iterable[str], *, parse: bool) -> dict[str, Scan]:
    scans: dict[str, Scan] = {}
    for path in files:
        language = language_for(path) or ""
        family = FAMILY[language]
        lines = ctx.lines(path)
        if lines is None:
            continue
        scan = scans.setdefault(family, Scan())
        scan.files.append(path)
        text = "\n".join(lines)
        starts: list[int] = []
        offset = 0
        for line in lines:
            starts.append(offset)
            offset += len(line) + 1
        for feature, rx in FEATURES[family].items():
            for m in rx.finditer(text):
                scan.hits[feature].append(
                    (path, bisect.bisect_right(starts, m.start()), m.groups())
                )
        if parse:
            parsed = parse_source(path, text.encode(), language)
            scan.symbols.extend(parsed.symbols)
            scan.imports.extend(parsed.imports)
    return dict(sorted(scans.items(), key=lambda kv: -len(kv[1].files)))


def local_module_names(paths: Iterable[str]) -> set[str]:
    """Names the repository itself provides as Python modules: every directory holding
    Python code and every .py file's stem, at any depth (tests/, src/ and nested projects
    put such directories on the import path). Shared with the specialists."""
    names: set[str] = set()
    for p in paths:
        if p.endswith(".py"):
            names.update(p[:-3].split("/"))
    return names
