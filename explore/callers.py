"""The callers explorer: who calls the definitions a question is about, from the index.

Invariants:
- Callers come from the index's references (`retrieval.references`), never from a text
  search: each finding is one calling definition, cited at the line that references the
  target, and the quote is that line as the file has it now.
- The targets are the definitions the question names (its identifiers the index
  defines), else those of the best context the question's own retrieval found (`seeds`,
  called once, when the track runs). At most `MAX_TARGETS` targets, `MAX_CALLERS` callers
  each, strongest evidence first; tests only when the question is about tests.
- No index, or an index without references: the understood gate fails with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dowse.explore.records import TrackSpec
from dowse.explore.tracks import Context, Track, TrackState, cite, plural
from dowse.indexer.store import Store
from dowse.retrieval.query import analyze
from dowse.retrieval.references import DefinitionRef, References, find_references

__all__ = ["callers_track"]

MAX_TARGETS = 4
MAX_CALLERS = 6
_VERBS = {
    "call": "calls",
    "type": "uses the type",
    "other": "passes",
    "import": "imports",
    "macro": "invokes",
}


def callers_track(
    ctx: Context,
    question: str,
    *,
    name: str = "callers",
    seeds: Callable[[], Sequence[str]] = lambda: (),
) -> Track:
    """Callers of the definitions `question` names, else of those `seeds` returns
    (qualified names, best first)."""
    analysis = analyze(question)
    spec = TrackSpec(
        name=name,
        focus=question,
        approach="the index's references: the definitions the question names (else those "
        "its retrieval ranks first), resolved callers with the referencing line",
        gates=[
            "understood: the index has references and the question's definitions are found",
            "evidence: every caller cites the line that references the definition",
            "complete: each definition's callers were looked up",
        ],
        deliverable="findings: `caller` calls `definition`, cited at the calling line",
    )
    looked_up: list[References] = []

    def understand(state: TrackState) -> tuple[bool, str]:
        searcher = ctx.searcher()
        if searcher is None:
            return False, "no index for the root"
        store = searcher.store
        if not store.has_table("refs"):
            return False, "the index has no references yet; run `dowse index`"
        names = [i for i in analysis.identifiers if i.replace(".", "").isidentifier()]
        targets = _look_up(store, names)
        if not targets:
            targets = _look_up(store, list(seeds()))
        if not targets:
            return False, "no definition the question names or its retrieval found"
        looked_up.extend(targets)
        for refs in targets:
            for target in refs.definitions:
                _claim_callers(ctx, state, refs, target, analysis.unasked_test)
        n_defs = sum(len(r.definitions) for r in looked_up)
        return True, f"{plural(n_defs, 'definition')}, {plural(len(state.findings), 'caller')}"

    def complete(state: TrackState) -> tuple[bool, str]:
        uncalled = [
            d.qualified_name
            for r in looked_up
            for d in r.definitions
            if not any(c.target == d.id for c in r.callers)
        ]
        if uncalled:
            state.gaps.append("no caller in the index: " + ", ".join(uncalled[:MAX_TARGETS]))
        return True, f"callers looked up for {plural(len(looked_up), 'name')}"

    return Track(spec=spec, understand=understand, complete=complete)


def _look_up(store: Store, names: Sequence[str]) -> list[References]:
    out: list[References] = []
    for n in dict.fromkeys(names):
        refs = find_references(store, n, callees=False, limit=4 * MAX_CALLERS)
        if refs.definitions:
            out.append(refs)
        if len(out) == MAX_TARGETS:
            break
    return out


def _claim_callers(
    ctx: Context,
    state: TrackState,
    refs: References,
    target: DefinitionRef,
    unasked_test: Callable[[str], bool],
) -> None:
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
            f"`{owner}` in {caller.path} {_VERBS[caller.kinds[0]]} `{target.qualified_name}` "
            f"({target.path}:{target.start_line}){more}; resolved by {caller.via}",
            cite(ctx, caller.path, line),
            topic=target.qualified_name,
        )
        shown += claimed
        if shown == MAX_CALLERS:
            break
