"""The focus explorer: the iterative retrieval loop on the focus text, scoped to the path.

It needs an index (`dowse index`); without one its first gate fails and says so. Each
context item the loop does not exclude (relevance >= 0.2) becomes a claim citing the
item's lines, with its relevance; names the question mentions that the loop could not
resolve become gaps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from dowse.explore.records import TrackSpec
from dowse.explore.tracks import Context, Track, TrackState, cite, find_line, largest_subdirs
from dowse.retrieval.ask import rank_score
from dowse.retrieval.loop import LoopConfig, run_loop

__all__ = ["FINDING_RELEVANCE", "focus_track"]

FINDING_RELEVANCE = 0.2
"""The evaluator's lower bound for "indirectly related": below it a result is excluded."""
MAX_FINDINGS = 12


def scope_globs(scope: str) -> list[str]:
    """Include globs (gitignore syntax, anchored) confining retrieval to `scope`."""
    return [f"/{scope}"] if scope else []


def _named_line(ctx: Context, hit: Any) -> str | None:
    """The first line of the hit's range that names its symbol (its last part), so the
    citation's quote shows the definition; None (the first non-blank line) without one."""
    if not hit.symbol:
        return None
    short = hit.symbol.rsplit(".", 1)[-1]
    at = find_line(ctx, hit.path, short, hit.start_line)
    if at is None or at > hit.end_line:
        return None
    return (ctx.lines(hit.path) or [""])[at - 1].strip()


_STATED = re.compile(r"`([^`]+)`")


def _used_line(ctx: Context, hit: Any, reason: str) -> tuple[str, str] | None:
    """For a hit that is no one definition (a module's lines: settings, constants): the
    first line of its range that assigns or defines a name the evaluator's reason states
    (`uses `number_grouping``), and that name as the code writes it (`NUMBER_GROUPING =
    0`), so the citation's quote shows the line the claim is about; None without one (a
    line that only imports or calls the name is no answer to quote)."""
    names = [n.rsplit(".", 1)[-1] for n in _STATED.findall(reason)]
    if hit.symbol or not names:
        return None
    alternatives = "|".join(re.escape(n) for n in names)
    words = re.compile(
        rf"^\s*(?:(?:export|pub(?:\([a-z]+\))?|const|let|var|static|final|def|class|fn|"
        rf"func|function|type)\s+)*({alternatives})\s*(?::[^=]*)?(?:=(?!=)|\(|:|\{{|<)",
        re.IGNORECASE,
    )
    lines = ctx.lines(hit.path) or []
    for line in lines[hit.start_line - 1 : hit.end_line]:
        if (m := words.search(line)) is not None:
            return m.group(1), line.strip()
    return None


def focus_track(
    ctx: Context,
    question: str | None = None,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    name: str = "focus",
) -> Track:
    """A track running the retrieval loop on `question` (default: the context's focus)."""
    text = question if question is not None else (ctx.focus or "")
    spec = TrackSpec(
        name=name,
        focus=f"{text} (in {ctx.scope or '.'})",
        approach="iterative retrieval loop (dispatch, evaluate, refine; at most 3 cycles) "
        "over the index, scoped to the path",
        gates=[
            "understood: the loop found candidates for the question",
            "evidence: each finding cites lines that hold the quoted code",
            "complete: at least one result scored as directly implementing the focus",
        ],
        deliverable="cited code locations that answer the focus question, with the "
        "evaluator's reason for each",
        role="answer",
    )

    def understand(state: TrackState) -> tuple[bool, str]:
        if not text.strip():
            return False, "no focus question given"
        searcher = ctx.searcher()
        if searcher is None:
            state.gaps.append(
                f"no index for {ctx.root}: run `dowse index {ctx.root}` to explore a focus"
            )
            return False, "no index: run `dowse index` first"
        # `include` (a track of `ask` over the whole root) replaces the scope globs.
        config = LoopConfig(include=list(include) or scope_globs(ctx.scope), exclude=list(exclude))
        result = run_loop(searcher, text, config=config)
        state.output["loop"] = result
        # Best first as `ask` ranks files: relevance and retrieval evidence together.
        items = sorted(
            (it for it in result.items if it.relevance >= FINDING_RELEVANCE),
            key=lambda it: -rank_score(it),
        )
        for it in items[:MAX_FINDINGS]:
            h = it.hit
            used = _used_line(ctx, h, it.reason)
            what = f"`{h.symbol}` at " if h.symbol else (f"`{used[0]}` in " if used else "")
            stale = " (file changed since indexing)" if h.stale else ""
            quote = used[1] if used else _named_line(ctx, h)
            state.claim(
                f"{what}{h.citation} (relevance {it.relevance:.2f}): {it.reason}{stale}",
                cite(ctx, h.path, h.start_line, h.end_line, quote=quote),
                topic=h.path,
            )
        for c in result.trace[-1].critical_gaps if result.trace else []:
            state.gaps.append(
                f"`{c}` is named in the focus but was not found in {ctx.scope or 'the repository'}"
            )
        state.conclusions.append(
            f"retrieval loop: {len(result.trace)} cycle(s), stopped because {result.stop_reason}"
        )
        if not result.items:
            return False, "the loop found no candidates"
        return True, f"{len(result.items)} candidates, {len(items)} relevant"

    def complete(state: TrackState) -> tuple[bool, str]:
        loop = state.output.get("loop")
        best = max((it.relevance for it in loop.items), default=0.0) if loop else 0.0
        if best >= 0.7:
            return True, f"best result relevance {best:.2f}"
        return False, f"no result scored >= 0.7 (best {best:.2f})"

    return Track(
        spec=spec,
        understand=understand,
        complete=complete,
        split=lambda c: largest_subdirs(c, min_files=2000),
        make=lambda c: focus_track(c, question, include=include, exclude=exclude, name=name),
    )
