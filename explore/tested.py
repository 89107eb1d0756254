"""The tests explorer: the tests of the definitions a question is about and of the files
that answer it, from the index's references and each ecosystem's naming conventions.

Invariants:
- A test is code at a test path (`languages.is_test_path`: tests/ and testing/ dirs,
  test_*.py, *_test.go, *.test.js, Java's src/test/, ...), in a file its module
  declaration makes test code (`Context.test_modules`: a Rust `#[cfg(test)] mod x;`)
  or in a Rust `mod tests`, and
  never an example's (`languages.is_example_path`: a test an example or a guide shows).
- Tests by reference come from the index (`retrieval.references`), never from a text
  search: a test file that calls or otherwise references one of the definitions (the
  question's own, else those its words name, then those of the best context the
  question's retrieval found: `seeds`), one finding per test file and definition, cited
  at its first referencing line; a test file that only imports the definition is cited
  at the import.
- Tests by name follow the ecosystem's convention for a file that answers the question
  (`answer_files`): `test_<stem>.py` / `<stem>_test.py`, `<stem>_test.go`,
  `<stem>.test.ts` / `.spec.ts` / `__tests__/<stem>.js`, `<Stem>Test.java`, Rust's
  `tests/<stem>.rs` or `tests/<dir>_<stem>.rs`; a file named `index`, `mod`, `lib`,
  `main` or `__init__` goes by its directory's name. Cited at the test file's first line
  that names the stem (its import of the module, mostly), else its first line.
- Test support (`languages.is_test_support_path`: conftest.py fixtures, the helper apps
  and modules a test directory holds, Go's testdata/, Rust's tests/common/; and, by the
  index's imports, a file at a test path not named as a test that another test file
  imports: ripgrep's tests/util.rs, a mocha suite's test/helpers.js, a C test's
  helpers.h, a test crate's `#[macro_use] mod macros;`: `imported_support`; and test
  code by its module declaration not named as a test: ripgrep's `#[cfg(test)] mod
  testutil;` in crates/searcher/src/) that references a definition is no test of it: listed
  after every test (by reference and by name), its claim saying "test support:", never
  covering a definition (the gap "no test references" stays), never a test file named
  after an answer file.
- The definitions, and a file that answers, are never tests or examples themselves (nor
  a Rust `mod tests`' helpers).
- No index, or an index without references: tests by name only; nothing at all: the
  understood gate fails with what was looked for.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from dowse.explore.callers import REFERENCE_VERBS, named_by_words
from dowse.explore.records import Citation, TrackSpec
from dowse.explore.tracks import Context, Track, TrackState, cite, find_line, plural
from dowse.languages import is_example_path, is_test_path, is_test_support_path
from dowse.retrieval.query import analyze
from dowse.retrieval.references import DEFAULT_KINDS, Caller, DefinitionRef, find_references

__all__ = ["SUPPORT", "imported_support", "subject_of", "tested_name", "tests_track"]

MAX_TARGETS = 6
MAX_FINDINGS = 8
PER_FILE = 2
"""Test files named after one answer file: the nearest ones."""
_REFERENCES = 200
"""Callers read per definition: the tests come after the code's own callers."""
_WORD_NAMES = 3
"""Names a question's words make that are looked up, without an identifier of its own."""
_LOOKUPS = 8
"""Names looked up at most: the question's, then the answer's definitions."""
_GENERIC_STEMS = frozenset({"index", "mod", "lib", "main", "__init__", "init"})
_TEST_AFFIXES = re.compile(
    r"^(?:test_|tests_)|(?:_tests?|\.test|\.spec|_spec|Tests?|IT)$", re.IGNORECASE
)
_RUST_TESTS = re.compile(r"^tests?(?:[.:]|$)")
SUPPORT = "test support: "
"""How a claim about test support (`languages.is_test_support_path`) begins: a fixture
or a helper that references a definition is not a test of it."""


def subject_of(path: str) -> str:
    """What a source file is about by name: its stem, or its directory's name for an
    `index.js`, `mod.rs`, `lib.rs`, `__init__.py` (dayjs' `src/plugin/utc/index.js`: `utc`)."""
    stem = posixpath.basename(path).rsplit(".", 1)[0]
    if stem.lower() in _GENERIC_STEMS:
        parent = posixpath.basename(posixpath.dirname(path))
        return parent if parent not in ("", "src") else stem
    return stem


def tested_name(path: str) -> str | None:
    """The name a test file is named after, its test affixes taken off (`test_tmpdir.py`:
    `tmpdir`, `utc.test.js`: `utc`, `ConfigTest.java`: `Config`, `sleep_test.go`:
    `sleep`); None for a path that is no test, or whose own name does not say it is one
    where the ecosystem's convention asks that (flask's
    `tests/test_apps/cliapp/inner1/inner2/flask.py` is an app the tests load, not a test
    of `flask/__init__.py`): only a Rust file under `tests/` and a file under
    `__tests__/` are tests by their directory alone."""
    if not is_test_path(path):
        return None
    dirs = f"/{posixpath.dirname(path)}/"
    by_directory = "/__tests__/" in dirs or (path.endswith(".rs") and "/tests/" in dirs)
    if not by_directory and not _named_as_test(path):
        return None
    name = posixpath.basename(path)
    stem = name.rsplit(".", 1)[0]
    bare = _TEST_AFFIXES.sub("", stem)
    if stem.startswith("Test") and stem[4:5].isupper():
        bare = stem[4:]  # Java's TestConfig.java
    if bare.lower() in _GENERIC_STEMS:
        return subject_of(posixpath.join(posixpath.dirname(path), bare + ".x"))
    return bare or None


def _named_as_test(path: str) -> bool:
    """A file whose own name says it is a test (`test_x.py`, `x.test.js`, `XTest.java`)."""
    stem = posixpath.basename(path).rsplit(".", 1)[0]
    return bool(_TEST_AFFIXES.search(stem)) or stem.startswith("Test")


def _key(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def _named_after(answer: str, test: str, subject: str) -> bool:
    """Whether a test file named `subject` is named after the source file `answer`: the
    same name (`tmpdir`), or the source file's directory and name (tokio's
    `tests/time_sleep.rs` for `src/time/sleep.rs`)."""
    mine = subject_of(answer)
    if _key(subject) == _key(mine):
        return True
    parent = posixpath.basename(posixpath.dirname(answer))
    return bool(parent) and _key(subject) == _key(f"{parent}_{mine}")


def _shared_prefix(a: str, b: str) -> int:
    """How many leading directories two paths share."""
    return len([p for p in posixpath.commonpath([a, b]).split("/") if p])


def _may_test(path: str) -> bool:
    """A file that may hold tests: a test path, or a Rust file (its `mod tests`)."""
    return (is_test_path(path) or path.endswith(".rs")) and not is_example_path(path)


def _is_test_definition(definition: DefinitionRef, test_modules: frozenset[str]) -> bool:
    """A definition of test code: at a test path, in a test module (`test_modules`:
    ripgrep's crates/searcher/src/testutil.rs, declared `#[cfg(test)] mod testutil;`),
    or in a Rust `mod tests` of a source file (ripgrep's `tests.matches` helper in
    crates/globset/src/glob.rs), whose callers are tests of a test's helper, not of the
    code."""
    if is_test_path(definition.path) or definition.path in test_modules:
        return True
    return definition.path.endswith(".rs") and bool(_RUST_TESTS.match(definition.qualified_name))


def _is_test(caller: Caller, test_modules: frozenset[str]) -> bool:
    """A caller in a test file or a test module (`test_modules`), or in a Rust `mod
    tests` of a source file; never in an example (pytest's doc/en/example/fixtures/
    test_*.py show how to write tests)."""
    if is_example_path(caller.path):
        return False
    if is_test_path(caller.path) or caller.path in test_modules:
        return True
    owner = caller.definition.qualified_name if caller.definition else ""
    return caller.path.endswith(".rs") and bool(_RUST_TESTS.match(owner))


def tests_track(
    ctx: Context,
    question: str,
    *,
    name: str | None = None,
    seeds: Callable[[], Sequence[str]] = lambda: (),
    answer_files: Callable[[], Sequence[str]] = lambda: (),
) -> Track:
    """The tests of the definitions `question` names and of those `seeds` returns
    (qualified names, best first), and the test files named after `answer_files`."""
    analysis = analyze(question)
    spec = TrackSpec(
        name=name or "tests",
        focus=question,
        approach="the index's references: the test files that call or reference the "
        "definitions the question names and those its retrieval ranks first; the test "
        "files named after the files that answer it, by the ecosystem's convention",
        gates=[
            "understood: a test references a definition, or is named after an answer file",
            "evidence: every test cites the line that references the definition or names the file",
            "complete: each definition's references and each answer file's name were looked up",
        ],
        deliverable="findings: `test` in a test file calls `definition`, cited at the "
        "calling line; a test file named after an answer file, cited at the line naming it",
        role="tests",
    )
    looked: dict[str, list[str]] = {"definitions": [], "files": []}
    imported_files: set[str] = set()  # the test files other test files import
    test_modules: set[str] = set()  # test code by its module declaration

    def is_support(path: str) -> bool:
        # A test module not named as a test (testutil.rs) is what the tests use.
        return (
            is_test_support_path(path)
            or path in imported_files
            or (path in test_modules and not _named_as_test(path))
        )

    def understand(state: TrackState) -> tuple[bool, str]:
        cited: set[str] = set()
        test_modules.update(ctx.test_modules())
        definitions = _definitions(
            ctx, analysis.identifiers, analysis.terms, seeds, frozenset(test_modules)
        )
        looked["definitions"] = [d.qualified_name for d, _ in definitions]
        answers = [
            p
            for p in dict.fromkeys(answer_files())
            if not is_test_path(p) and p not in test_modules and not is_example_path(p)
        ]
        looked["files"] = answers
        tests = [
            p
            for p in ctx.all_files()
            if is_test_path(p) and not is_example_path(p) and not is_test_support_path(p)
        ]
        named = {answer: _by_name(answer, tests) for answer in answers}
        referencing = {p for _, callers in definitions for p in _files_of(ctx, callers)}
        imported = imported_support(
            ctx.searcher(), referencing | {t for ts in named.values() for t in ts}
        )
        imported_files.update(imported)
        found = [_by_reference(ctx, d, callers, is_support) for d, callers in definitions]
        # Every definition's best test file before any definition's second; test support
        # (a conftest fixture, a helper app the tests load) after every test.
        tests_of = [[x for x in xs if not is_support(x[2])] for xs in found]
        support_of = [[x for x in xs if is_support(x[2])] for xs in found]
        for (definition, _), (claim, citation, path) in _round_robin(definitions, tests_of):
            if len(state.findings) >= MAX_FINDINGS:
                break
            if state.claim(claim, citation, topic=definition.qualified_name):
                cited.add(path)
        unimported = [t for t in tests if t not in imported]
        for answer in answers:
            for test in _by_name(answer, unimported):
                if len(state.findings) >= MAX_FINDINGS:
                    break
                if test in cited:
                    continue
                claim, citation = _name_claim(ctx, answer, test)
                if state.claim(claim, citation, topic=subject_of(answer)):
                    cited.add(test)
        supporting: set[str] = set()
        for (definition, _), (claim, citation, path) in _round_robin(definitions, support_of):
            if len(state.findings) >= MAX_FINDINGS:
                break
            if state.claim(claim, citation, topic=definition.qualified_name):
                supporting.add(path)
        if not state.findings:
            what = ", ".join(looked["definitions"][:3] + looked["files"][:3]) or "nothing"
            return False, f"no test references or is named after {what}"
        support = f" (and {plural(len(supporting), 'test support file')})" if supporting else ""
        return True, (
            f"{plural(len(cited), 'test file')}{support} for "
            f"{plural(len(looked['definitions']), 'definition')} and "
            f"{plural(len(looked['files']), 'answer file')}"
        )

    def complete(state: TrackState) -> tuple[bool, str]:
        # A definition only test support references is untested.
        covered = {f.topic for f in state.findings if not is_support(f.citations[0].path)}
        untested = [d for d in looked["definitions"] if d not in covered]
        if untested:
            state.gaps.append("no test references " + ", ".join(f"`{d}`" for d in untested[:4]))
        return True, (
            f"tests looked up for {plural(len(looked['definitions']), 'definition')} and "
            f"{plural(len(looked['files']), 'file')}"
        )

    return Track(spec=spec, understand=understand, complete=complete)


def _definitions(
    ctx: Context,
    identifiers: Sequence[str],
    terms: Sequence[str],
    seeds: Callable[[], Sequence[str]],
    test_modules: frozenset[str] = frozenset(),
) -> list[tuple[DefinitionRef, list[Caller]]]:
    """The definitions the question names (else those its words name), then the
    answer's, each with its callers in tests (test files, `test_modules`, Rust `mod
    tests`); none without an index with references."""
    searcher = ctx.searcher()
    if searcher is None or not searcher.store.has_table("refs"):
        return []
    store = searcher.store
    names = [i for i in identifiers if i.replace(".", "").isidentifier()]
    if not names:
        # The names its words make, each once (tokio's "who calls spawn" names three
        # `spawn_task`s and the `spawn`s: both names, not the first three definitions).
        named = named_by_words(store, terms, skip=lambda p: is_test_path(p) or p in test_modules)
        names = list(dict.fromkeys(n.rsplit(".", 1)[-1] for n in named))[:_WORD_NAMES]
    out: list[tuple[DefinitionRef, list[Caller]]] = []
    seen: set[str] = set()
    for n in [*names, *seeds()][:_LOOKUPS]:
        refs = find_references(
            store,
            n,
            callees=False,
            kinds=(*DEFAULT_KINDS, "import"),
            limit=_REFERENCES,
            within=_may_test,  # the code's own callers are not resolved at all
            lookups=searcher.lookups,
        )
        for d in refs.definitions:
            if d.id in seen or _is_test_definition(d, test_modules) or is_example_path(d.path):
                continue
            seen.add(d.id)
            tests = [c for c in refs.callers if c.target == d.id and _is_test(c, test_modules)]
            out.append((d, tests))
    # The tested definitions first, in the order they were named.
    out.sort(key=lambda x: not x[1])
    return out[:MAX_TARGETS]


def imported_support(searcher: Any, paths: Iterable[str]) -> set[str]:
    """The files of `paths` that are test support by what imports them: a file at a test
    path, not named as a test nor support by its path already, that another test file's
    import resolves to (ripgrep's tests/util.rs, `use crate::util::{Dir, TestCommand}`; a
    mocha suite's test/helpers.js; a C test's helpers.h). Where the runner collects
    tests by directory, a test is a leaf nothing imports, a helper is imported. A Rust
    `mod x;` is no such import (a test crate's root declares its tests too), but a
    `#[macro_use] mod x;` is (`languages.module_role`: ripgrep's tests/macros.rs lends
    its `rgtest!` to the tests declared after it). Empty without an index."""
    candidates = {
        p
        for p in paths
        if is_test_path(p)
        and not is_test_support_path(p)
        and not _named_as_test(p)
        and not is_example_path(p)
    }
    if searcher is None or not candidates:
        return set()
    rows = searcher.lookups.rows_in(
        "imports", ["path", "module", "resolved"], "resolved", candidates
    )
    macros = {p for p, role in searcher.lookups.module_roles().items() if role == "macros"}
    return {
        r["resolved"]
        for r in rows
        if r["path"] != r["resolved"]
        and is_test_path(r["path"])
        and (not str(r["module"]).startswith("mod ") or r["resolved"] in macros)
    }


def _files_of(ctx: Context, callers: list[Caller]) -> dict[str, list[Caller]]:
    """`callers` by file, those in scope."""
    by_file: dict[str, list[Caller]] = {}
    for c in callers:
        if ctx.in_scope(c.path):
            by_file.setdefault(c.path, []).append(c)
    return by_file


def _by_reference(
    ctx: Context,
    definition: DefinitionRef,
    callers: list[Caller],
    is_support: Callable[[str], bool] = is_test_support_path,
) -> list[tuple[str, Citation | None, str]]:
    """(claim, citation, test file) for each test file referencing `definition`: its
    calls before its imports, the first referencing definition named; a file
    `is_support` says is test support, said so."""
    by_file = _files_of(ctx, callers)
    out = []
    where = f"{definition.path}:{definition.start_line}-{definition.end_line}"
    for path, mine in by_file.items():
        using = [c for c in mine if any(k != "import" for k in c.kinds)]
        first = min(using or mine, key=lambda c: c.lines[0])
        kinds = [k for k in first.kinds if k != "import"] or first.kinds
        owner = first.definition.qualified_name if first.definition else None
        tests = len({c.definition.id for c in using if c.definition is not None})
        more = f" (and {plural(tests - 1, 'more test')} in the file)" if tests > 1 else ""
        who = f"`{owner}` in {path}" if owner else path
        if is_support(path):
            who = f"{SUPPORT}{who}"
            more = more.replace("more test", "more definition")
        line = first.lines[first.kinds.index(kinds[0])]
        claim = f"{who} {REFERENCE_VERBS[kinds[0]]} `{definition.qualified_name}` ({where}){more}"
        out.append((claim, cite(ctx, path, line), path))

    # The test file named after the definition's file first (pytest's test_tmpdir.py for
    # tmpdir.py), then files named as tests before the others under a test directory
    # (flask's tests/test_apps/cliapp/app.py is an app the tests load), then files that
    # call before files that only import, then by path.
    def rank(x: tuple[str, Citation | None, str]) -> tuple[bool, bool, bool, str]:
        name = tested_name(x[2])
        named = name is not None and _named_after(definition.path, x[2], name)
        return (not named, not _named_as_test(x[2]), " imports `" in x[0], x[2])

    return sorted(out, key=rank)


def _round_robin(
    keys: Sequence[tuple[DefinitionRef, list[Caller]]],
    lists: Sequence[list[tuple[str, Citation | None, str]]],
) -> list[tuple[tuple[DefinitionRef, list[Caller]], tuple[str, Citation | None, str]]]:
    out = []
    for k in range(max((len(x) for x in lists), default=0)):
        out += [(key, x[k]) for key, x in zip(keys, lists, strict=True) if k < len(x)]
    return out


def _by_name(answer: str, tests: Sequence[str]) -> list[str]:
    """The test files named after `answer` by convention, the nearest (most path parts
    shared) first."""
    named = [t for t in tests if (s := tested_name(t)) is not None and _named_after(answer, t, s)]
    named.sort(key=lambda t: (-_shared_prefix(answer, t), t))
    return named[:PER_FILE]


def _name_claim(ctx: Context, answer: str, test: str) -> tuple[str, Citation | None]:
    subject = subject_of(answer)
    at = find_line(ctx, test, re.compile(rf"(?<![\w]){re.escape(subject)}(?![\w])"))
    citation = cite(ctx, test, at) if at is not None else None
    if citation is None:
        lines = ctx.lines(test) or []
        first = next((i + 1 for i, ln in enumerate(lines) if ln.strip()), None)
        citation = cite(ctx, test, first) if first else None
    claim = (
        f"{test} is named after {answer} (`{posixpath.basename(test)}` for `{subject}`)"
        if at is None
        else f"{test} is named after {answer} and names `{subject}` at line {at}"
    )
    return claim, citation
