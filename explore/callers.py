"""The callers and callees explorers: who calls the definitions a question is about, and
what they call, from the index.

Invariants:
- Callers and callees come from the index's references (`retrieval.references`), never
  from a text search. A caller finding is one calling definition, cited at the line that
  references the target; a callee finding is one definition the target's body
  references, cited at that line of the target (the quote is the line as the file has
  it now).
- The targets are the definitions the question names: its identifiers the index
  defines, else the definitions whose names the index holds for its words
  (`named_by_words`: "how are blueprints registered?" names `register_blueprint` and
  `Blueprint`; a name of two of its words before a name of one), else those of the best
  context the question's own retrieval found (`seeds`, called once, when the track
  runs). At most `MAX_TARGETS` targets, `MAX_CALLERS` callers or callees each,
  strongest evidence first; tests only when the question is about tests.
- A track given no name is named after its targets once it has them: `← A, B` for their
  callers, `A, B →` for their callees (what the track is about, no wording of its own).
- No index, or an index without references: the understood gate fails with the reason.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from typing import Any, Literal

from dowse.explore.records import TrackSpec
from dowse.explore.tracks import Context, Track, TrackState, cite, plural
from dowse.indexer.store import Store, where_in
from dowse.languages import is_example_path
from dowse.retrieval.lookups import IndexLookups
from dowse.retrieval.query import QueryAnalysis, analyze
from dowse.retrieval.references import (
    DefinitionRef,
    References,
    callees_of,
    find_references,
)

__all__ = ["REFERENCE_VERBS", "callees_track", "callers_track", "named_by_words", "targets_name"]

MAX_TARGETS = 4
MAX_CALLERS = 6
COMMON = 16
"""A one-word name defined more often than this is no definition a question names."""
NAMED_TARGETS = 2
"""How many targets a track's name shows."""
REFERENCE_VERBS = {
    "call": "calls",
    "type": "uses the type",
    "other": "passes",
    "import": "imports",
    "macro": "invokes",
}
"""What a reference of each kind does, in words (`caller` calls / uses the type / …)."""
_RESOLVED = {
    "same-file": "resolved within the file",
    "import": "resolved through an import",
    "package": "resolved within the package",
    "name": "matched by name alone",
}
"""How a reference was tied to its definition, in words (not the index's `via` values)."""
Direction = Literal["callers", "callees"]


def targets_name(names: Sequence[str], direction: Direction) -> str:
    """A track's name from its targets: `← A, B` (callers), `A, B →` (callees)."""
    distinct = list(dict.fromkeys(names))  # a name with several definitions, once
    shown = ", ".join(distinct[:NAMED_TARGETS])
    more = len(distinct) - NAMED_TARGETS
    if more > 0:
        shown += f" +{more}"
    return f"← {shown}" if direction == "callers" else f"{shown} →"


def callers_track(
    ctx: Context,
    question: str,
    *,
    name: str | None = None,
    seeds: Callable[[], Sequence[str]] = lambda: (),
) -> Track:
    """Callers of the definitions `question` names, else of those `seeds` returns
    (qualified names, best first)."""
    return _track(ctx, question, "callers", name, seeds)


def callees_track(
    ctx: Context,
    question: str,
    *,
    name: str | None = None,
    seeds: Callable[[], Sequence[str]] = lambda: (),
) -> Track:
    """What the definitions `question` names (else those `seeds` returns) call."""
    return _track(ctx, question, "callees", name, seeds)


def _spec(question: str, direction: Direction, name: str | None) -> TrackSpec:
    if direction == "callers":
        approach = "resolved callers with the referencing line"
        evidence = "evidence: every caller cites the line that references the definition"
        deliverable = "findings: `caller` calls `definition`, cited at the calling line"
    else:
        approach = "the definitions their bodies reference, resolved, with the line"
        evidence = "evidence: every callee cites the line of the definition that references it"
        deliverable = "findings: `definition` calls `callee`, cited at the calling line"
    return TrackSpec(
        name=name or targets_name([], direction),
        focus=question,
        approach="the index's references: the definitions the question names (else those "
        f"its retrieval ranks first), {approach}",
        gates=[
            "understood: the index has references and the question's definitions are found",
            evidence,
            f"complete: each definition's {direction} were looked up",
        ],
        deliverable=deliverable,
        role=direction,
    )


_SOURCE_IDS = 3


def _source(ids: list[str]) -> str:
    """The look-up's name, the same for the callers and the callees of one set of
    definitions: its first ids, and past `_SOURCE_IDS` a digest of them all (django's
    `NUMBER_GROUPING` is defined in 60 files: a record line, not 60 ids)."""
    head = ", ".join(ids[:_SOURCE_IDS])
    if len(ids) <= _SOURCE_IDS:
        return f"references of {head}"
    digest = hashlib.blake2b("\n".join(ids).encode(), digest_size=6).hexdigest()
    return f"references of {head} and {len(ids) - _SOURCE_IDS} more (b2:{digest})"


def _track(
    ctx: Context,
    question: str,
    direction: Direction,
    name: str | None,
    seeds: Callable[[], Sequence[str]],
) -> Track:
    analysis = analyze(question)
    spec = _spec(question, direction, name)
    looked_up: list[References] = []
    found: set[str] = set()  # ids of the targets with a caller or callee

    def understand(state: TrackState) -> tuple[bool, str]:
        # Test code under src/ (a Rust `#[cfg(test)]` module) is a test like a test file.
        analysis.test_modules = ctx.test_modules()
        targets, why = _targets(ctx, analysis, seeds, with_callers=direction == "callers")
        if not targets:
            return False, why
        looked_up.extend(targets)
        definitions = [d for r in targets for d in r.definitions]
        if name is None:
            spec.name = targets_name([d.qualified_name for d in definitions], direction)
        # The callers and the callees of the same definitions are one look-up of the
        # references: one source for the synthesis, not two.
        spec.source = _source(sorted(d.id for d in definitions))
        store = ctx.searcher().store
        for refs in targets:
            for target in refs.definitions:
                if direction == "callers":
                    claimed = _claim_callers(ctx, state, refs, target, analysis.unasked_test)
                else:
                    claimed = _claim_callees(ctx, state, store, target)
                if claimed:
                    found.add(target.id)
        noun = "caller" if direction == "callers" else "callee"
        return (
            True,
            f"{plural(len(definitions), 'definition')}, {plural(len(state.findings), noun)}",
        )

    def complete(state: TrackState) -> tuple[bool, str]:
        alone = [d.qualified_name for r in looked_up for d in r.definitions if d.id not in found]
        if alone:
            what = "no caller" if direction == "callers" else "no callee"
            state.gaps.append(f"{what} in the index: " + ", ".join(alone[:MAX_TARGETS]))
        return True, f"{direction} looked up for {plural(len(looked_up), 'name')}"

    return Track(spec=spec, understand=understand, complete=complete)


def _targets(
    ctx: Context,
    analysis: QueryAnalysis,
    seeds: Callable[[], Sequence[str]],
    *,
    with_callers: bool,
) -> tuple[list[References], str]:
    """The definitions the question names, else those `seeds` returns; or why none."""
    searcher = ctx.searcher()
    if searcher is None:
        return [], "no index for the root"
    store = searcher.store
    if not store.has_table("refs"):
        return [], "the index has no references yet; run `dowse index`"
    names = [i for i in analysis.identifiers if i.replace(".", "").isidentifier()]
    lookups = getattr(searcher, "lookups", None)  # the rows a searcher holds, when it does
    targets = _look_up(store, names, with_callers, analysis.unasked_test, lookups)
    if not targets:
        named = named_by_words(store, analysis.terms, skip=analysis.unasked_test)
        targets = _look_up(store, named, with_callers, analysis.unasked_test, lookups)
    if not targets:
        targets = _look_up(store, list(seeds()), with_callers, analysis.unasked_test, lookups)
    if not targets:
        return [], "no definition the question names or its retrieval found"
    return targets, ""


_NOT_NAMES = frozenset(
    """implemented implement handled works work done used made found called set get run
    make new way ways thing things code file files data value values""".split()
)
"""Question words too generic to name a definition alone (the definitions named `run`
or `get` are everyone's)."""
_WRITTEN = 10
"""A question word this long that is a definition's whole name was written as a name
(`getfixturevalue`); a shorter one is as likely an English word (tokio's "how does sleep
register a timer?" is about `sleep`, not the `register` methods)."""
_KIND_ORDER = {"class": 0, "struct": 0, "interface": 0, "trait": 0, "function": 1, "method": 2}


def _forms(word: str) -> list[str]:
    """A question word and the base forms a definition's name would use: blueprints →
    blueprint, registered → register, handled → handle, retried → retry, matching →
    match."""
    w = word.lower()
    out = [w]
    if len(w) >= 5:
        if w.endswith("ies") or w.endswith("ied"):
            out.append(w[:-3] + "y")
        elif w.endswith("es") or w.endswith("ed"):
            out += [w[:-2], w[:-1]]
        elif w.endswith("s") and not w.endswith("ss"):
            out.append(w[:-1])
        if w.endswith("ing"):
            out += [w[:-3], w[:-3] + "e"]
    return list(dict.fromkeys(out))


def named_by_words(
    store: Store, words: Sequence[str], *, skip: Callable[[str], bool] = lambda _: False
) -> list[str]:
    """The qualified names of the definitions the index holds for a question's words:
    named after two of them (`register_blueprint`, `dispatchRequest`, `HandleError` for
    "how are requests dispatched", either order) before one (`Blueprint`), a long word
    written as the name (`getfixturevalue`) before the others, then in the question's
    order, types before functions before methods; never examples, nor what
    `skip` says (tests the question does not ask about), nor a one-word name defined
    more than `COMMON` times."""
    words = [w for w in dict.fromkeys(x.lower() for x in words) if w not in _NOT_NAMES]
    forms = {w: _forms(w) for w in words if len(w) >= 3}
    wanted: dict[str, tuple[int, int]] = {}  # name_lower -> (words covered, position)
    for i, w in enumerate(forms):
        for f in forms[w]:
            wanted.setdefault(f, (1, i))
    for (i, a), (j, b) in itertools.permutations(enumerate(forms), 2):
        for x, y in itertools.product(forms[a], forms[b]):
            for joined in (f"{x}_{y}", f"{x}{y}"):
                wanted[joined] = max(wanted.get(joined, (0, 0)), (2, -min(i, j)))
    if not wanted:
        return []
    columns = ["qualified_name", "name_lower", "kind", "path", "start_line"]
    rows: list[dict[str, Any]] = store.rows(
        "symbols", columns, where=where_in("name_lower", sorted(wanted))
    )

    # A long word the question writes as a definition's very name (pytest's "who calls
    # getfixturevalue?") names it before the base forms of its other words (`fixture`
    # of "fixtures", `resolve` of "resolved").
    written = {w for w in forms if len(w) >= _WRITTEN}

    def rank(r: dict[str, Any]) -> tuple[int, int, int, int, str, int]:
        covered, position = wanted[r["name_lower"]]
        at = -position if covered == 2 else position
        as_written = 0 if covered == 1 and r["name_lower"] in written else 1
        kind = _KIND_ORDER.get(r["kind"], 3)
        return (-covered, as_written, at, kind, r["path"], r["start_line"])

    kept = [r for r in rows if not is_example_path(r["path"]) and not skip(r["path"])]
    # A one-word name the index defines more than COMMON times (grpc-go's 59 `Name`s, 19
    # `Read`s) is everyone's method, not the one the question means; xarray's 9 `align`s
    # and ripgrep's 13 `config`s are what their questions mean.
    defined: dict[str, int] = {}
    for r in kept:
        defined[r["name_lower"]] = defined.get(r["name_lower"], 0) + 1
    kept = [
        r for r in kept if wanted[r["name_lower"]][0] == 2 or defined[r["name_lower"]] <= COMMON
    ]
    return list(dict.fromkeys(r["qualified_name"] for r in sorted(kept, key=rank)))


def _look_up(
    store: Store,
    names: Sequence[str],
    with_callers: bool,
    skip: Callable[[str], bool],
    lookups: IndexLookups | None = None,
) -> list[References]:
    """The references of each name, without the definitions in examples or in what
    `skip` says (tests the question does not ask about): `Config` is the project's
    class, not a test's class of the same name."""
    out: list[References] = []
    for n in dict.fromkeys(names):
        refs = find_references(
            store, n, callers=with_callers, callees=False, limit=4 * MAX_CALLERS, lookups=lookups
        )
        kept = [d for d in refs.definitions if not skip(d.path) and not is_example_path(d.path)]
        if kept:
            ids = {d.id for d in kept}
            callers = [c for c in refs.callers if c.target in ids]
            out.append(refs.model_copy(update={"definitions": kept, "callers": callers}))
        if len(out) == MAX_TARGETS:
            break
    return out


def _claim_callers(
    ctx: Context,
    state: TrackState,
    refs: References,
    target: DefinitionRef,
    unasked_test: Callable[[str], bool],
) -> int:
    shown = 0
    for caller in refs.callers:
        if caller.target != target.id or unasked_test(caller.path) or not ctx.in_scope(caller.path):
            continue
        line = caller.lines[0]
        owner = caller.definition.qualified_name if caller.definition else "top-level code"
        more = (
            f" (and {plural(len(caller.lines) - 1, 'more line')})" if len(caller.lines) > 1 else ""
        )
        claimed = state.claim(
            f"`{owner}` in {caller.path} {REFERENCE_VERBS[caller.kinds[0]]} "
            f"`{target.qualified_name}` ({target.path}:{target.start_line}-{target.end_line})"
            f"{more}; "
            f"{_RESOLVED[caller.via]}",
            cite(ctx, caller.path, line),
            topic=target.qualified_name,
        )
        shown += claimed
        if shown == MAX_CALLERS:
            break
    return shown


def _claim_callees(ctx: Context, state: TrackState, store: Store, target: DefinitionRef) -> int:
    shown = 0
    for callee in callees_of(store, target):
        d = callee.definition
        more = (
            f" (and {plural(len(callee.lines) - 1, 'more line')})" if len(callee.lines) > 1 else ""
        )
        claimed = state.claim(
            f"`{target.qualified_name}` {REFERENCE_VERBS[callee.kinds[0]]} `{d.qualified_name}` "
            f"({d.path}:{d.start_line}-{d.end_line}) at {target.path}:{callee.lines[0]}{more}; "
            f"{_RESOLVED[callee.via]}",
            cite(ctx, target.path, callee.lines[0]),
            topic=d.qualified_name,
        )
        shown += claimed
        if shown == MAX_CALLERS:
            break
    return shown
