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

The rules (regexes and tables: what is looked for in each language family) live in
`explore.pattern_rules`; this module samples, scans, and turns each topic's scan into a
`Pattern` (one function per topic, below the sampling).
"""

from __future__ import annotations

import bisect
import hashlib
import posixpath
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence

from dowse.explore.pattern_rules import (
    ASSERTS,
    CASE,
    ERROR_CLASSES,
    ERROR_EXAMPLES,
    ERRORS,
    FAMILY,
    FEATURES,
    FRAMEWORKS,
    FUNCTION_KINDS,
    LABEL,
    LAST_IN_DIR,
    TEST_DEFS,
    TEST_DIR,
    TEST_NAMES,
    TYPE_KINDS,
    Hit,
    Scan,
)
from dowse.explore.records import Citation, Pattern, TrackSpec
from dowse.explore.tracks import (
    STDLIB,
    Context,
    Track,
    TrackState,
    cite,
    find_line,
    largest_subdirs,
    plural,
)
from dowse.indexer.parse import parse_source
from dowse.indexer.records import Import, Symbol
from dowse.languages import CODE_LANGUAGES, HEADER, header_language, is_test_path, language_for

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
    headers = header_language(ctx.all_files())

    def language(p: str) -> str | None:
        """The file's language, a `.h` header's the project's (C++ in fmt, C in zstd)."""
        return headers if p.lower().endswith(HEADER) else language_for(p)

    if not code:
        state.gaps.append("module structure: no code files in scope")
        return []
    # Test code under src/ (a Rust `#[cfg(test)] mod testutil;`) by the index, when the
    # scope holds such a language's files: opening the index costs the others nothing.
    modules = ctx.test_modules() if any(p.endswith(".rs") for p in code) else frozenset()

    def is_test(p: str) -> bool:
        return is_test_path(p) or p in modules

    tests = [p for p in code if is_test(p)]
    measured = [p for p in code if language(p) in FAMILY]
    source_pool = [p for p in measured if not is_test(p)]
    test_pool = [p for p in measured if is_test(p)]
    n_tests = min(
        len(test_pool), max(SAMPLE_TESTS, SAMPLE_SOURCE + SAMPLE_TESTS - len(source_pool))
    )
    n_source = min(len(source_pool), SAMPLE_SOURCE + SAMPLE_TESTS - n_tests)
    source = _scan_all(ctx, _sample(source_pool, n_source), language, parse=True)
    test = _scan_all(ctx, _sample(test_pool, n_tests, tests=True), language, parse=False)
    sampled = sum(len(s.files) for s in source.values()) + sum(len(s.files) for s in test.values())
    if sampled < len(measured):
        dirs = len({posixpath.dirname(p) for p in measured})
        state.gaps.append(
            f"measured on a sample of {sampled} of {len(measured)} files in "
            f"{dirs} directories: counts are estimates"
        )
    others = Counter(language(p) or "" for p in code if language(p) not in FAMILY)
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


def _scan_all(
    ctx: Context,
    files: Iterable[str],
    language_of: Callable[[str], str | None],
    *,
    parse: bool,
) -> dict[str, Scan]:
    scans: dict[str, Scan] = {}
    for path in files:
        language = language_of(path) or ""
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


# -- topics: what the sample showed, as a Pattern with cited examples ---------------------

MAX_EXAMPLES = 3


# -- citations and numbers ---------------------------------------------------------------


def _examples(
    ctx: Context, *groups: Sequence[tuple[str, int] | Hit], limit: int = MAX_EXAMPLES
) -> list[Citation]:
    """Up to `limit` citations, the first usable location of each group in turn,
    preferring files not cited yet."""
    out: list[Citation] = []
    seen: set[tuple[str, int]] = set()
    for group in groups:
        if len(out) >= limit:
            break
        paths = {c.path for c in out}
        ordered = sorted(group, key=lambda h: h[0] in paths)  # stable: first new file first
        for hit in ordered:
            where = (hit[0], hit[1])
            if where in seen:
                continue
            c = cite(ctx, where[0], where[1])
            if c is not None and c.quote:
                out.append(c)
                seen.add(where)
                break
    return out


def _pct(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "0%"


def _first_line(ctx: Context, path: str) -> list[tuple[str, int]]:
    lines = ctx.lines(path) or []
    return [(path, i + 1) for i, ln in enumerate(lines) if ln.strip()][:1]


def _case(name: str) -> str:
    # A JavaScript private member's `#` and a `$` prefix mark the name, not its case.
    bare = name.lstrip("#$").strip("_")
    for label, rx in CASE:
        if rx.match(bare):
            return label
    return "mixed"


def _name_prefix(functions: Sequence[Symbol]) -> str | None:
    """C's namespaces by convention: the prefix most functions' names share before their
    first underscore (zstd's `ZSTD_`, libgit2's `git_`), when a quarter of them do."""
    heads = Counter(
        f.name.split("_", 1)[0] + "_" for f in functions if "_" in f.name.strip("_")[1:]
    )
    if not heads:
        return None
    head, n = heads.most_common(1)[0]
    if len(head) < 3 or n * 4 < len(functions):
        return None
    return f"{_pct(n, len(functions))} share the prefix `{head}`"


def _sym_sites(symbols: Iterable[Symbol]) -> list[tuple[str, int]]:
    # The name's line, not a decorator or doc comment above it: the example shows the name.
    return [(s.path, s.name_line) for s in symbols]


# -- the patterns ------------------------------------------------------------------------


def structure_pattern(ctx: Context, code: list[str], tests: list[str]) -> Pattern | None:
    base = ctx.scope + "/" if ctx.scope and ctx.scope not in code else ""
    rel = {p: p[len(base) :] for p in code}
    dirs = Counter(posixpath.dirname(p) for p in code)
    biggest, most = max(dirs.items(), key=lambda kv: (kv[1], kv[0] == "", kv[0]))
    parts = [
        f"{plural(len(code), 'code file')} in "
        f"{plural(len(dirs), 'directory', 'directories')} (median "
        f"{statistics.median(dirs.values()):g} per directory; largest {biggest or '.'}/ "
        f"with {most})"
    ]
    sites: list[list[tuple[str, int]]] = []
    py = [p for p in code if p.endswith(".py")]
    if py:
        packages = {posixpath.dirname(p) for p in py if posixpath.basename(p) == "__init__.py"}
        top = sorted(d for d in packages if posixpath.dirname(d) not in packages)
        main = [d for d in top if not TEST_DIR.search(rel.get(d + "/__init__.py", d))]
        loose = {posixpath.dirname(p) for p in py} - packages - {""}
        loose = {d for d in loose if not TEST_DIR.search(d)}
        if packages:
            shown = main or top
            src = any(rel[f"{d}/__init__.py"].startswith("src/") for d in shown)
            text = (
                f"{plural(len(packages), 'Python package')} (with __init__.py); "
                f"top-level: {', '.join(shown[:4])}"
                f"{'…' if len(shown) > 4 else ''}"
            )
            if len(top) > len(main) and main:
                text += f" and {len(top) - len(main)} under test directories"
            parts.append(text + ("; src layout" if src else "; no src/ layout"))
            for d in shown[:2]:
                sites.append(_first_line(ctx, posixpath.join(d, "__init__.py")))
        if loose:
            parts.append(f"{len(loose)} non-test directories of Python files without __init__.py")
    markers = [
        ("package.json", "package.json manifest", "package.json manifests", '"name"'),
        ("go.mod", "Go module (go.mod)", "Go modules (go.mod)", "module "),
        ("Cargo.toml", "Cargo crate manifest", "Cargo crate manifests", "["),
    ]
    in_scope = ctx.files()
    for name, label, labels, needle in markers:
        found = [p for p in in_scope if posixpath.basename(p) == name]
        if found:
            parts.append(plural(len(found), label, labels))
            line = find_line(ctx, found[0], needle)
            sites.append([(found[0], line)] if line else _first_line(ctx, found[0]))
    layouts = [
        ("src/main/java/", "Maven/Gradle layout (src/main/java)"),
        ("cmd/", "Go cmd/ entry points"),
        ("internal/", "Go internal/ packages"),
    ]
    for prefix, label in layouts:
        hits = [p for p in code if f"/{prefix}" in f"/{rel[p]}"]
        if hits:
            parts.append(f"{label}: {plural(len(hits), 'file')}")
            sites.append(_first_line(ctx, hits[0]))
    if tests:
        in_dirs = sum(1 for p in tests if TEST_DIR.search(posixpath.dirname(rel[p])))
        parts.append(f"{plural(len(tests), 'test file')}, {in_dirs} under test directories")
    in_biggest = sorted(
        (p for p in code if posixpath.dirname(p) == biggest),
        key=lambda p: (posixpath.basename(p) in LAST_IN_DIR, p),
    )
    sites.append(_first_line(ctx, in_biggest[0]))
    examples = _examples(ctx, *sites)
    if not examples:
        return None
    return Pattern(name="module structure", description="; ".join(parts), examples=examples)


def errors_pattern(ctx: Context, s: Scan, family: str) -> Pattern | None:
    classes = s.get(ERROR_CLASSES[family])
    counts = [(feature, label, s.n(feature), always) for feature, label, always in ERRORS[family]]
    if not classes and not any(n for f, _, n, _a in counts if f != "bare_except"):
        return None
    first = counts[0]
    parts = [
        f"{first[1]}: {first[2]} (in {s.in_files(first[0])} of "
        f"{plural(len(s.files), 'sampled file')})"
    ]
    parts += [f"{label}: {n}" for _, label, n, always in counts[1:] if n or always]
    if classes:
        bases = (
            Counter((h[2][1] or "").split(",")[0].strip() for h in classes if len(h[2]) > 1)
            if family in ("python", "js", "java", "cpp")
            else Counter()
        )
        names = list(dict.fromkeys(h[2][0] or "" for h in classes))
        text = f"custom error types: {len(names)} ({', '.join(names[:5])}"
        text += "…)" if len(names) > 5 else ")"
        if bases:
            text += ", based on " + ", ".join(f"{b} ×{n}" for b, n in bases.most_common(3))
        parts.append(text)
    examples = _examples(ctx, classes, *(s.get(f) for f in ERROR_EXAMPLES[family]))
    if not examples:
        return None
    return Pattern(name="error handling", description="; ".join(parts), examples=examples)


def typing_pattern(ctx: Context, s: Scan, family: str) -> Pattern | None:
    if family == "python":
        return _typing_python(ctx, s)
    if family != "js":
        return None
    ts = [f for f in s.files if language_for(f) in ("typescript", "tsx")]
    if not ts:
        if not s.n("jsdoc_type"):
            return None
        examples = _examples(ctx, s.get("jsdoc_type"))
        return (
            Pattern(
                name="typing",
                description=(
                    "plain JavaScript; JSDoc type tags (`@param {…}`) in "
                    f"{s.in_files('jsdoc_type')} "
                    f"of {plural(len(s.files), 'sampled file')}"
                ),
                examples=examples,
            )
            if examples
            else None
        )
    functions = [
        sym
        for sym in s.symbols
        if sym.kind in FUNCTION_KINDS and language_for(sym.path) in ("typescript", "tsx")
    ]
    returns = [sym for sym in functions if re.search(r"\)\s*:\s*\S", sym.signature)]
    parts = [f"{len(ts)} of {plural(len(s.files), 'sampled file')} are TypeScript"]
    if functions:
        parts.append(
            f"{_pct(len(returns), len(functions))} of {len(functions)} TypeScript "
            "functions declare a return type"
        )
    parts.append(f"`any` {s.n('ts_any')} times in {plural(s.in_files('ts_any'), 'file')}")
    parts.append(f"{s.n('interface')} interfaces, {s.n('type_alias')} type aliases")
    if s.n("ts_ignore"):
        parts.append(f"{s.n('ts_ignore')} `@ts-ignore`/`@ts-expect-error`")
    examples = _examples(
        ctx, _sym_sites(returns), s.get("interface") or s.get("type_alias"), s.get("ts_any")
    )
    if not examples:
        return None
    return Pattern(name="typing", description="; ".join(parts), examples=examples)


def _typing_python(ctx: Context, s: Scan) -> Pattern | None:
    functions = [sym for sym in s.symbols if sym.kind in FUNCTION_KINDS]
    if not functions:
        return None
    returns = [f for f in functions if "->" in f.signature]
    params = annotated = 0
    for f in functions:
        for p in _parameters(f.signature):
            params += 1
            annotated += p
    parts = [
        f"{_pct(len(returns), len(functions))} of {len(functions)} sampled functions "
        "annotate their return type"
    ]
    if params:
        parts.append(f"{_pct(annotated, params)} of their {params} parameters are annotated")
    parts.append(
        f"`from __future__ import annotations` in {s.in_files('future_annotations')} "
        f"of {plural(len(s.files), 'file')}"
    )
    if s.n("pipe_none") or s.n("optional"):
        parts.append(f"`X | None` {s.n('pipe_none')} vs `Optional[X]` {s.n('optional')}")
    kinds = [
        ("dataclass", "@dataclass"),
        ("pydantic", "pydantic models"),
        ("attrs", "attrs classes"),
        ("typeddict", "TypedDict"),
        ("namedtuple", "NamedTuple"),
        ("protocol", "Protocol"),
        ("enum", "Enum"),
    ]
    records = [f"{s.n(k)} {label}" for k, label in kinds if s.n(k)]
    if records:
        parts.append("typed records: " + ", ".join(records))
    record_hits = next((s.get(k) for k, _ in kinds if s.n(k)), [])
    examples = _examples(ctx, _sym_sites(returns), s.get("future_annotations"), record_hits)
    if not examples:
        examples = _examples(ctx, _sym_sites(functions))
    return Pattern(name="typing", description="; ".join(parts), examples=examples)


def _parameters(signature: str) -> list[bool]:
    """Whether each parameter of a Python `def` signature is annotated (self/cls skipped)."""
    start = signature.find("(")
    if start < 0:
        return []
    depth, current, params = 0, "", []
    for ch in signature[start + 1 :]:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            params.append(current)
            current = ""
        else:
            current += ch
    params.append(current)
    out = []
    for p in (p.strip() for p in params):
        name = p.split(":")[0].split("=")[0].strip().lstrip("*")
        if not name or name in ("self", "cls", "/"):
            continue
        out.append(":" in p.split("=")[0])
    return out


def _python_import_kinds(
    ctx: Context, imports: Iterable[Import]
) -> dict[str, list[tuple[str, int]]]:
    """Import statements by kind (from, plain, relative, star, nested), `__future__` aside.

    Statements come from the parser, so an import quoted in a docstring does not count."""
    kinds: dict[str, list[tuple[str, int]]] = {
        k: [] for k in ("from", "plain", "relative", "star", "nested")
    }
    seen: set[tuple[str, int]] = set()
    for imp in imports:
        where = (imp.path, imp.line)
        lines = ctx.lines(imp.path) or []
        if where in seen or imp.module == "__future__" or imp.line > len(lines):
            continue
        seen.add(where)
        text = lines[imp.line - 1]
        if text[:1].isspace():
            kinds["nested"].append(where)
            continue
        kinds["from" if text.startswith("from") else "plain"].append(where)
        if imp.module.startswith("."):
            kinds["relative"].append(where)
        if imp.names == ["*"]:
            kinds["star"].append(where)
    return kinds


def imports_pattern(ctx: Context, s: Scan, family: str, local: set[str]) -> Pattern | None:
    parts: list[str] = []
    groups: list[Sequence[tuple[str, int] | Hit]] = []
    if family == "python":
        kinds = _python_import_kinds(ctx, s.imports)
        top = len(kinds["from"]) + len(kinds["plain"])
        if not top:
            return None
        parts.append(
            f"{_pct(len(kinds['from']), top)} of {top} top-level imports are "
            f"`from x import y`, {len(kinds['plain'])} `import x`"
        )
        parts.append(f"{len(kinds['relative'])} relative ({_pct(len(kinds['relative']), top)})")
        parts.append(f"{len(kinds['nested'])} imports inside functions or blocks")
        if kinds["star"]:
            parts.append(f"{len(kinds['star'])} star imports")
        origin: Counter[str] = Counter()
        third: Counter[str] = Counter()
        for imp in s.imports:
            head = imp.module.split(".")[0]
            if head == "__future__":
                continue
            # The standard library first: a local tokens.py does not make `import token` local.
            if head in STDLIB and not imp.module.startswith("."):
                origin["stdlib"] += 1
            elif imp.module.startswith(".") or head in local:
                origin["project"] += 1
            else:
                origin["third-party"] += 1
                third[head] += 1
        total = sum(origin.values())
        if total:
            parts.append(
                "origins: "
                + ", ".join(f"{_pct(n, total)} {k}" for k, n in origin.most_common())
                + (f" ({', '.join(n for n, _ in third.most_common(3))})" if third else "")
            )
        if s.n("dunder_all"):
            parts.append(f"`__all__` declared in {plural(s.in_files('dunder_all'), 'file')}")
        groups = [kinds["from"], kinds["plain"], kinds["relative"], kinds["nested"]]
    elif family == "js":
        esm, req = s.n("esm_import"), s.n("require")
        if not (esm or req):
            return None
        parts.append(f"{esm} ES module imports vs {req} `require(...)` calls")
        parts.append(
            f"{s.n('esm_export')} `export` statements vs {s.n('cjs_export')} `module.exports`"
        )
        if s.imports:
            relative = sum(1 for i in s.imports if i.module.startswith("."))
            parts.append(
                f"{_pct(relative, len(s.imports))} of {len(s.imports)} imports are relative paths"
            )
        groups = [s.get("esm_import"), s.get("require"), s.get("esm_export")]
    elif family == "go":
        if not s.imports:
            return None
        std = sum(1 for i in s.imports if "." not in i.module.split("/")[0])
        parts.append(
            f"{s.n('import_block')} grouped `import (...)` blocks, "
            f"{s.n('import_single')} single-line imports"
        )
        parts.append(
            f"{_pct(std, len(s.imports))} of {len(s.imports)} imports are standard "
            f"library, {s.n('import_alias')} aliased"
        )
        groups = [s.get("import_block"), s.get("import_single"), s.get("import_alias")]
    elif family == "rust":
        uses = s.n("use_any")
        if not uses:
            return None
        external = uses - s.n("use_crate") - s.n("use_std")
        parts.append(
            f"{uses} `use` declarations: {s.n('use_crate')} crate-local "
            f"(crate/super/self), {s.n('use_std')} std, {external} external crates"
        )
        parts.append(f"{s.n('use_group')} grouped `use a::{{b, c}}`")
        groups = [s.get("use_crate"), s.get("use_std"), s.get("use_group")]
    elif family == "java":
        total = s.n("import_any")
        if not total:
            return None
        parts.append(
            f"{total} imports: {s.n('import_wildcard')} wildcard (`.*`), "
            f"{s.n('import_static')} static"
        )
        groups = [s.get("import_any"), s.get("import_wildcard"), s.get("import_static")]
    elif family in ("c", "cpp"):
        system, own = s.n("include_system"), s.n("include_local")
        if not (system or own):
            return None
        parts.append(
            f'{system + own} `#include`s: {own} project (`"..."`), {system} system (`<...>`)'
        )
        headers = [f for f in s.files if f.lower().endswith((".h", ".hpp", ".hh", ".hxx"))]
        if headers:
            parts.append(
                f"of {plural(len(headers), 'sampled header')}, {s.in_files('pragma_once')} "
                f"use `#pragma once`, {s.in_files('include_guard')} `#ifndef` include guards"
            )
        groups = [
            s.get("include_local"),
            s.get("include_system"),
            s.get("pragma_once"),
            s.get("include_guard"),
        ]
    examples = _examples(ctx, *groups)
    if not examples:
        return None
    return Pattern(name="import style", description="; ".join(parts), examples=examples)


def naming_pattern(ctx: Context, s: Scan, family: str) -> Pattern | None:
    functions = [
        sym
        for sym in s.symbols
        if sym.kind in FUNCTION_KINDS
        and not (sym.name.startswith("__") and sym.name.endswith("__"))
    ]
    types = [sym for sym in s.symbols if sym.kind in TYPE_KINDS]
    constants = [sym for sym in s.symbols if sym.kind == "constant"]
    if not (functions or types):
        return None
    parts: list[str] = []
    fn_site: list[tuple[str, int]] = []
    if functions:
        cases = Counter(_case(f.name) for f in functions)
        if family == "go":
            exported = sum(1 for f in functions if f.name[:1].isupper())
            parts.append(
                f"{len(functions)} functions/methods: {_pct(exported, len(functions))} "
                f"exported (capitalized), {cases['snake_case']} with underscores"
            )
            fn_site = _sym_sites(functions)
        else:
            # A tie (one-word names only) goes to the language's own convention.
            snake = (cases["snake_case"], family in ("python", "rust", "c")) > (
                cases["camelCase"],
                False,
            )
            main = "snake_case" if snake else "camelCase"
            n_main = cases[main] + cases["lowercase"]
            parts.append(
                f"{_pct(n_main, len(functions))} of {len(functions)} functions/methods "
                f"are {main} (incl. one-word lowercase)"
                + "".join(
                    f", {n} {c}" for c, n in cases.most_common() if c not in (main, "lowercase")
                )
            )
            fn_site = _sym_sites(f for f in functions if _case(f.name) in (main, "lowercase"))
        if family in ("c", "cpp") and (prefix := _name_prefix(functions)):
            parts.append(prefix)
        private = sum(1 for f in functions if f.name.startswith("_"))
        if family == "python" and private:
            parts.append(f"{_pct(private, len(functions))} private (`_name`)")
        hashed = sum(1 for f in functions if f.name.startswith("#"))
        if family == "js" and hashed:
            parts.append(f"{_pct(hashed, len(functions))} private (`#name`)")
    if types and family == "go":
        # Go's case is its visibility: an unexported type is camelCase by the convention.
        exported = sum(1 for t in types if t.name[:1].isupper())
        parts.append(f"{_pct(exported, len(types))} of {len(types)} types exported (capitalized)")
    elif types:
        pascal = sum(1 for t in types if _case(t.name) == "PascalCase")
        parts.append(f"{_pct(pascal, len(types))} of {len(types)} classes/types are PascalCase")
    upper: list[tuple[str, int]] = []
    if family == "python":
        names = [h for h in s.get("module_name") if not (h[2][0] or "").startswith("__")]
        upper = [(h[0], h[1]) for h in names if _case(h[2][0] or "") == "UPPER_CASE"]
        if names:
            parts.append(
                f"{len(upper)} of {len(names)} module-level names are UPPER_CASE constants"
            )
    elif constants and family == "go":  # MixedCaps, exported or not, as Go's names are
        upper = _sym_sites(c for c in constants if c.name[:1].isupper())
        parts.append(
            f"{_pct(len(upper), len(constants))} of {len(constants)} constants exported "
            "(capitalized)"
        )
    elif constants:
        upper = _sym_sites(c for c in constants if _case(c.name) == "UPPER_CASE")
        parts.append(
            f"{_pct(len(upper), len(constants))} of {len(constants)} constants are UPPER_CASE"
        )
    examples = _examples(ctx, fn_site, _sym_sites(types), upper)
    if not examples:
        return None
    return Pattern(name="naming", description="; ".join(parts), examples=examples)


def test_layout_pattern(
    ctx: Context, tests: list[str], test: dict[str, Scan], source: dict[str, Scan]
) -> Pattern | None:
    inline = source.get("rust", Scan()).get("cfg_test")
    if not tests and not inline:
        return None
    base = ctx.scope + "/" if ctx.scope and ctx.scope not in tests else ""
    parts: list[str] = []
    sites: list[Sequence[tuple[str, int] | Hit]] = []
    if tests:
        rel = [p[len(base) :] for p in tests]
        in_dirs = sum(1 for p in rel if TEST_DIR.search(posixpath.dirname(p)))
        top = Counter(p.split("/")[0] for p in rel if "/" in p and TEST_DIR.match(p))
        where = (
            f"{plural(len(tests), 'test file')}: {_pct(in_dirs, len(tests))} under test directories"
        )
        if top:
            where += " (top-level " + ", ".join(f"{d}/" for d, _ in top.most_common(2)) + ")"
        parts.append(where + f", {len(tests) - in_dirs} colocated with the code")
        names = Counter(
            label for p in tests for label, rx in TEST_NAMES if rx.search(posixpath.basename(p))
        )
        if names:
            parts.append("names: " + ", ".join(f"{label} ×{n}" for label, n in names.most_common()))
    frameworks: list[str] = []
    for family, scan in test.items():
        for label, features in FRAMEWORKS[family]:
            files = {h[0] for f in features for h in scan.get(f)}
            if files:
                frameworks.append(
                    f"{label} in {len(files)} of "
                    f"{plural(len(scan.files), 'sampled test file')} "
                    f"({LABEL[family]})"
                )
                sites.append([h for f in features for h in scan.get(f)])
        sites.insert(0, scan.get(TEST_DEFS[family]))
    if frameworks:
        parts.append("frameworks: " + ", ".join(frameworks))
    if inline:
        parts.append(
            "Rust unit tests inline (`#[cfg(test)]`) in "
            + plural(len({h[0] for h in inline}), "sampled source file")
        )
        sites.append(inline)
    examples = _examples(ctx, *sites)
    if not examples and tests:
        examples = _examples(ctx, _first_line(ctx, tests[0]))
    if not examples:
        return None
    return Pattern(name="test layout", description="; ".join(parts), examples=examples)


def assertions_pattern(
    ctx: Context, test: dict[str, Scan], source: dict[str, Scan]
) -> Pattern | None:
    styles: list[tuple[str, list[Hit]]] = []
    for family, scan in test.items():
        styles += [(f"{label} ({LABEL[family]})", scan.get(f)) for f, label in ASSERTS[family]]
    if "rust" in source and "rust" not in test:
        styles += [(f"{label} (Rust)", source["rust"].get(f)) for f, label in ASSERTS["rust"]]
    styles = sorted((st for st in styles if st[1]), key=lambda st: -len(st[1]))
    total = sum(len(hits) for _, hits in styles)
    if not total:
        return None
    files = len({h[0] for _, hits in styles for h in hits})
    description = f"{plural(total, 'assertion')} in {plural(files, 'sampled file')}: " + ", ".join(
        f"{label} {_pct(len(hits), total)} ({len(hits)})" for label, hits in styles
    )
    examples = _examples(ctx, *(hits for _, hits in styles))
    if not examples:
        return None
    return Pattern(name="assertion style", description=description, examples=examples)
