"""`dowse ask` decides between one retrieval loop and a parallel exploration.

A question needs exploration when it is about architecture ("how does X work", "overview",
"flow"), spans several dimensions (clauses joined by "and how/where/what…"), is a bug with
several possible causes ("why does X sometimes fail"), or asks about a cross-cutting
pattern ("across", "everywhere", "convention", "the pattern for"; not a regex or glob
pattern the code matches). Everything else — a name, a single
behaviour, a bug report (long, with code or a traceback, or a title line and its body)
— stays one loop: fast, no explorers.

An exploration plans its tracks from the question: one retrieval loop per sub-question
(the question split at clause boundaries — "?", ";", ", where …", " and how …" — and each
enumeration in a clause, "A, B and C", one sub-question per item; never inside a word),
then the explorers that fit: the callers and the callees of the definitions it names
(the index's references), their tests (test files that reference them or the answer's
definitions, and test files named after the answer's files), the configuration that sets
it (an architecture question, or one about settings, flags or the environment: the
settings that sit in the files that answer it or that the question names, and only when
it names no code, those whose name shares its words), the history (the files that change
in the same commits as the answer's files, each pair with its commits; not for a
convention), imports for structure, patterns for conventions.

A track is named after what it is about, never with wording of its own: a retrieval
track by its sub-question's subject; the callers and callees by their targets (`← A`,
`A →`), the tests by the test files they found, the configuration by the settings it
kept, the history by the files that change together; before they run (in `plan`), by
the subject they will look for.

Overlap is kept below 0.3 (Jaccard of two retrieval tracks' best results' files) in
three steps: sub-questions with the same words are one track (`plan`, from the text
alone); before anything runs, each retrieval track's files are predicted by one search of
its question with its path filters (`predict_merges`: the loop's first dispatch, whose
question vector the loop then reuses) and two tracks whose predicted files overlap by 0.3
or more run as one; after the tracks ran, the files of their best results are compared
and pairs still at 0.3 or more are merged (the safety net for a wrong prediction). The
largest remaining overlap is reported. All tracks run in parallel on one warm searcher;
the curated context of the whole question is packed with most of the budget, the tracks'
cited findings and the synthesis with the rest.
"""

from __future__ import annotations

import functools
import posixpath
import re
import time
from collections.abc import Callable, Collection
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import zip_longest
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from dowse.budgets import DEFAULT_BUDGET
from dowse.explore.records import (
    ConfigReport,
    ExploreResult,
    GateResult,
    GitReport,
    ImportReport,
    Synthesis,
    TrackFindings,
)
from dowse.quote import one_line
from dowse.retrieval.ask import (
    AskResult,
    Frame,
    JsonRecords,
    Packing,
    ask,
    fit_result,
    render_json,
    title,
)
from dowse.retrieval.ask import render_markdown as render_ask
from dowse.retrieval.budget import Entry, estimate_tokens
from dowse.retrieval.definitions import DefinitionRanking
from dowse.retrieval.evaluate import Evaluator
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.loop import LoopConfig
from dowse.retrieval.query import analyze
from dowse.retrieval.records import SearchOptions
from dowse.tokens import tokenize

if TYPE_CHECKING:
    from dowse.explore.callers import Direction
    from dowse.explore.tracks import Context, Track

__all__ = [
    "AskReport",
    "Plan",
    "TrackPlan",
    "fit_report",
    "investigate",
    "plan",
    "predict_merges",
    "render_report",
    "report_json",
    "report_records",
]

Kind = Literal["architecture", "multi", "bug", "cross-cutting"]

_ARCH = re.compile(
    r"\b(architecture|overview|structured?|design|end[- ]to[- ]end|life ?cycle|pipeline|"
    r"walk me through|explain how|how (?:does|do|is|are) [\w .'-]{1,60}? "
    r"(?:work|works|fit together|organi[sz]ed|wired|implemented))\b",
    re.I,
)
_BUG_SYMPTOM = re.compile(
    r"\b(fail\w*|crash\w*|broken|wrong|incorrect|unexpected\w*|hang\w*|slow\w*|"
    r"error\w*|leak\w*|timeout\w*|race\w*)\b",
    re.I,
)
_BUG_UNCERTAIN = re.compile(
    r"\b(why|sometimes|intermittent\w*|flaky|randomly|possible causes?|root cause|"
    r"could|might)\b",
    re.I,
)
_CROSS = re.compile(
    r"\b(across|everywhere|all (?:the )?(?:places|callers|uses|usages|modules)|"
    r"every (?:place|module|call|caller)|consistent\w*|conventions?|cross-cutting|"
    # A pattern of the code, not one the code handles ("whether a pattern matches",
    # "glob patterns", "the search pattern"): in a code base "pattern" is as often a
    # regex or a glob, so the word counts only where it names a way of writing code.
    r"(?:design|coding|code|common|recurring|usage|idiomatic|architectural|what|which)"
    r" patterns?|patterns? (?:for|used|to follow|followed|of (?:the )?code))\b",
    re.I,
)
_CLAUSE = re.compile(
    r"\?\s+|;\s*|,\s*(?:and\s+)?(?=(?:how|where|what|when|why|which|who)\b)|"
    r"\s+and\s+(?=(?:how|where|what|when|why|which|who)\b)",
    re.I,
)
_ENUM = re.compile(
    r"((?:[\w.-]+ )?[\w.-]+)((?:, ?(?:[\w.-]+ )?[\w.-]+)*),? (?:and|or) ([\w.-]+(?: [\w.-]+)?)",
    re.I,
)
"""An enumeration: "A and B", "A, B and C", "A, B, or C" (items of one or two words)."""
_GENERIC = frozenset(
    """
    how does do is are what where when why which who the a an of in on to for and or with
    work works working architecture overview structure structured design flow pipeline
    explain walk through end lifecycle cycle across everywhere all every place places
    module modules convention conventions pattern patterns consistent consistently
    handled handle implemented implement organized organised wired fit together sometimes
    intermittently flaky randomly possible cause causes root could might code codebase
    repository repo project this that these those it its give me show tell about done
    does using used use there they them we our you your get gets got
""".split()
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CONFIGURED = re.compile(
    r"\b(config\w*|settings?|options?|flags?|env(?:ironment)?(?: variables?)?|"
    r"command[- ]line|cli|arguments?|defaults?|customi[sz]\w*)\b",
    re.I,
)
"""A question about how something is set: the configuration track joins its tracks."""
_PRONOUN = re.compile(r"\b(they|them|their|it|its|those|these)\b", re.I)
TEST_GLOBS = ["tests/", "test/", "test_*", "*_test.*", "*.test.*", "*.spec.*", "spec/"]
MAX_TRACKS = 7
REPORT_WORDS = 60
"""Beyond this many words a question is a report: a pasted issue, its code and traceback.
Its sentences describe one problem rather than ask several things, so it is not split
into tracks (which would take 40 % of the budget from the context that answers it); the
loop reads the whole text at once."""


def _is_issue(question: str) -> bool:
    """A short report: a title line and a body that is not a list of questions ("Spanish
    days and months should be lowercase" / "Spanish speaking people do not capitalize
    ..."). Like a long report it describes one problem; its title and body are no two
    parts. A question about architecture or a cross-cutting pattern keeps its kind."""
    lines = [x.strip() for x in question.strip().splitlines() if x.strip()]
    return (
        len(lines) >= 2
        and not all(x.endswith("?") for x in lines)
        and not _ARCH.search(question)
        and not _CROSS.search(question)
    )


OVERLAP_MERGE = 0.8
"""Sub-questions whose keywords overlap this much are one track before anything runs."""
MERGE_OVERLAP = 0.3
"""Retrieval tracks whose best results' files overlap this much (Jaccard) are merged."""
TOP_RESULTS = 8
"""How many of a track's findings its overlap is measured on."""
PROBE_HITS = 24
"""Hits of the one search that predicts a track's files (its first `TOP_RESULTS` files)."""
CONTEXT_SHARE = 0.6
"""Share of the budget for the curated context of the whole question."""
JSON_CONTEXT_SHARE = 0.8
"""The same for `ask --json`, whose context is packed as the records it prints: as
markdown into 0.6 of the budget it took about 0.8 of the JSON (the tracks' records gave
way to it when the answer was fitted)."""


class TrackPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    question: str | None = Field(
        default=None, description="the track's retrieval question (None: explorer only)"
    )
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    explorer: (
        Literal["imports", "git", "patterns", "callers", "callees", "tests", "config"] | None
    ) = None


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Literal["retrieval", "exploration"]
    why: str
    kind: Kind | None = None
    tracks: list[TrackPlan] = Field(default_factory=list)
    merged: list[str] = Field(
        default_factory=list, description="tracks dropped for overlapping another"
    )


class AskReport(AskResult):
    """`ask`'s curated context (the AskResult fields, for the whole question) and, when
    the question was explored, the tracks, their findings and the synthesis."""

    mode: Literal["retrieval", "exploration"] = "retrieval"  # type: ignore[assignment]
    why: str = Field(default="", description="why one loop, or why an exploration")
    context_tokens: int = Field(default=0, description="tokens of the curated context alone")
    plan: list[TrackPlan] = Field(default_factory=list)
    tracks: list[TrackFindings] = Field(default_factory=list)
    synthesis: Synthesis | None = None
    overlap: float = Field(
        default=0.0,
        description="largest Jaccard overlap of the files of two retrieval tracks' best "
        "results, after merging those that overlap 0.3 or more (0 = orthogonal)",
    )
    merged: list[str] = Field(
        default_factory=list,
        description="tracks merged into another: before running, for the same words or the "
        "same predicted files; after, for the same best results",
    )
    empty: list[str] = Field(
        default_factory=list,
        description="planned tracks that found nothing to report, left out of `tracks`: "
        "what each looked for and the gate it failed",
    )
    timings: dict[str, float] = Field(default_factory=dict)


def _subject(text: str) -> str:
    """The question's topic: its code names as written, then its distinctive words."""
    words = [*analyze(text).identifiers]
    for w in _WORD.findall(text):
        if len(w) >= 3 and w.lower() not in _GENERIC and w not in words:
            words.append(w.lower())
    return _clip(" ".join(dict.fromkeys(words)), 120) or text


def _clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters at a word boundary (never inside a word;
    a first word longer than `limit` is kept whole)."""
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0]
    return cut if " " in text[: limit + 1] else text.split(" ", 1)[0]


def _clauses(question: str) -> list[str]:
    parts = [p.strip(" ?,.") for p in _CLAUSE.split(question)]
    return [
        p
        for p in parts
        if len([w for w in tokenize(p) if w not in _GENERIC]) >= 1 and len(p.split()) >= 3
    ]


def _content(words: list[str]) -> list[str]:
    """`words` without the generic words at their edges."""
    while words and words[0].lower() in _GENERIC:
        words = words[1:]
    while words and words[-1].lower() in _GENERIC:
        words = words[:-1]
    return words


def _enumerated(clause: str) -> list[str]:
    """A clause that enumerates ("how are parsing, routing and error handling done", "how
    are tokens issued and validated") as one sub-question per item, the rest of the clause
    around each; the clause itself when it enumerates nothing. Items are whole words: two
    items joined by a conjunction are one word each, items of a comma list up to two.
    Alternatives joined by "or" ("with --binary or --text", "YYYY or MM", "deleted or not
    set") ask one thing of either: one question, answered in one place."""
    m = _ENUM.search(clause)
    if m is None or re.search(r"\b(?:between|both)\b", clause[: m.start(3)], re.I):
        return [clause]
    if re.search(r"\bor\b", m.group(0)[m.end(2) - m.start(0) :], re.I):
        return [clause]
    first, middle, last = m.group(1).split(), m.group(2), m.group(3).split()
    if middle:
        items = [_content(first), *(_content(x.split()) for x in middle.split(",") if x.strip())]
        items.append(_content(last))
    else:
        items = [_content(first[-1:]), _content(last[:1])]
    if len(items) < 2 or any(not it for it in items):
        return [clause]
    # The frame: the clause before the first item and after the last one.
    start = m.start(1) + m.group(1).rindex(items[0][0])
    end_word = items[-1][-1]
    end = m.start(3) + m.group(3).index(end_word) + len(end_word)
    before, after = clause[:start], clause[end:]
    return [f"{before}{' '.join(it)}{after}".strip() for it in items]


def _parts(question: str) -> list[str]:
    """The question's sub-questions: its clauses (split at clause boundaries, never inside
    a word), each enumeration in them one sub-question per item."""
    clauses = _clauses(question) or [question.strip(" ?,.")]
    out: list[str] = []
    for c in clauses:
        out.extend(x for x in _enumerated(c) if x not in out)
    return out[:MAX_TRACKS]


def _about_tests(text: str) -> bool:
    return bool(re.search(r"\btests?\b", text, re.I))


def _tracks_for(kind: Kind, question: str, subject: str) -> list[TrackPlan]:
    """The tracks of a broad question: one retrieval loop per sub-question (named by its
    subject, outside the tests unless it is about tests), then the explorers that fit the
    kind: the callers from the index's references, their tests, the history."""
    parts = _parts(question)
    topic = _subject(parts[0])
    # "how are tokens issued and where are they validated": "they" is the first topic.
    asked = [f"{c} ({topic})" if i and _PRONOUN.search(c) else c for i, c in enumerate(parts)]
    out = [
        TrackPlan(
            name=_clip(_subject(c), 40),
            question=q,
            include=TEST_GLOBS if _about_tests(c) else [],
            exclude=[] if _about_tests(c) else TEST_GLOBS,
        )
        for c, q in zip(parts, asked, strict=True)
    ]
    first_explorer = {"architecture": "imports", "cross-cutting": "patterns"}.get(kind)
    if first_explorer is not None:
        out[0].explorer = first_explorer  # type: ignore[assignment]
    # Callers and callees from the index's references, not a search for those words;
    # named after the definitions the question names (else its subject) until they ran.
    from dowse.explore.callers import targets_name  # with the explorers: only for tracks

    about = [i for i in analyze(question).identifiers if i.replace(".", "").isidentifier()]
    short = _clip(subject, 30)
    directions: tuple[Direction, ...] = ("callers", "callees")
    for direction in directions:
        out.append(
            TrackPlan(
                name=targets_name(about or [short], direction),
                explorer=direction,  # leaves out tests unless the question is about them
            )
        )
    if not any(_about_tests(c) for c in parts):
        # The tests of what answers it: the test files that reference its definitions
        # (the index's references) and those named after its files, not a search of tests.
        out.append(TrackPlan(name=f"{short} (tests/)", explorer="tests"))
    if kind == "architecture" or _CONFIGURED.search(question):
        # Where the subject is configured: settings files, environment, flags, config types.
        out.append(TrackPlan(name=f"{short} (settings)", explorer="config"))
    if kind != "cross-cutting":
        # The files that change together with the answer's (a convention has no answer
        # files of its own).
        out.append(TrackPlan(name=f"{short} (history)", explorer="git"))
    return out


def _keywords(text: str) -> set[str]:
    return {w for w in tokenize(text) if w not in _GENERIC}


def plan(question: str) -> Plan:
    """Decide between one loop and an exploration, and decompose when exploring."""
    kind: Kind | None = None
    why = "a focused question: one retrieval loop answers it"
    if len(_WORD.findall(question)) > REPORT_WORDS or "```" in question or _is_issue(question):
        return Plan(
            mode="retrieval",
            why="a report (an issue, code, a traceback): one retrieval loop reads all of it",
        )
    if len(_parts(question)) >= 2:
        kind, why = "multi", "the question has several independent parts"
    elif _ARCH.search(question):
        kind, why = "architecture", "an architecture question: several dimensions to cover"
    elif _CROSS.search(question):
        kind, why = "cross-cutting", "a cross-cutting pattern: definitions, uses and tests"
    elif (
        _BUG_SYMPTOM.search(question)
        and _BUG_UNCERTAIN.search(question)
        and not analyze(question).frames
    ):
        kind, why = "bug", "a bug with several possible causes"
    if kind is None:
        return Plan(mode="retrieval", why=why)
    tracks: list[TrackPlan] = []
    merged: list[str] = []
    for t in _tracks_for(kind, question, _subject(question)):
        # Two tracks overlap when they would search the same files for the same words.
        mine = _keywords(t.question or "")
        dup = next(
            (
                o
                for o in tracks
                if mine
                and (o.include, o.exclude) == (t.include, t.exclude)
                and len(mine & _keywords(o.question or ""))
                / len(mine | _keywords(o.question or ""))
                >= OVERLAP_MERGE
            ),
            None,
        )
        if dup is not None:
            merged.append(f"{t.name} (overlaps {dup.name})")
        else:
            tracks.append(t)
    if len(tracks) < 3:
        return Plan(
            mode="retrieval",
            why=why + ", but it does not split into 3 independent tracks: one loop answers it",
            kind=kind,
        )
    return Plan(mode="exploration", why=why, kind=kind, tracks=tracks[:MAX_TRACKS], merged=merged)


def _top_files(t: TrackFindings) -> set[str]:
    """The files of a track's best results (its first `TOP_RESULTS` findings)."""
    return {f.citations[0].path for f in t.findings[:TOP_RESULTS]}


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _overlap(tracks: list[TrackFindings]) -> float:
    """The largest Jaccard overlap of two tracks' best results' files."""
    sets = [_top_files(t) for t in tracks]
    return round(
        max((_jaccard(a, b) for i, a in enumerate(sets) for b in sets[i + 1 :]), default=0.0), 3
    )


def _merged(a: TrackFindings, b: TrackFindings) -> TrackFindings:
    """One track of two that found the same files: findings alternating (each citation
    once), a gate passed when either passed."""
    findings, seen = [], set()
    for pair in zip_longest(a.findings, b.findings):
        for f in pair:
            if f is not None and f.citations[0].ref not in seen:
                seen.add(f.citations[0].ref)
                findings.append(f)
    name = f"{a.track.name} + {b.track.name}"
    return TrackFindings(
        track=a.track.model_copy(
            update={"name": name, "focus": f"{a.track.focus}; {b.track.focus}"}
        ),
        findings=findings,
        evidence=a.evidence + b.evidence,
        conclusions=a.conclusions + b.conclusions,
        gaps=list(dict.fromkeys(a.gaps + b.gaps)),
        gates=[
            GateResult(
                name=ga.name,
                passed=ga.passed or gb.passed,
                ran=ga.ran or gb.ran,
                detail=f"{a.track.name}: {ga.detail}; {b.track.name}: {gb.detail}",
            )
            for ga, gb in zip(a.gates, b.gates, strict=False)
        ],
        dropped=a.dropped + b.dropped,
        claims=a.claims + b.claims,
        seconds=round(a.seconds + b.seconds, 4),
    )


def merge_overlapping(
    tracks: list[TrackFindings], retrieval: Collection[str]
) -> tuple[list[TrackFindings], list[str]]:
    """`tracks` with the retrieval tracks (by name) whose best results overlap by
    `MERGE_OVERLAP` or more merged, the most overlapping pair first, until every two
    overlap less; and a line for each merge."""
    out, notes = list(tracks), list[str]()
    names = set(retrieval)
    while True:
        pairs = [
            (_jaccard(_top_files(a), _top_files(b)), i, j)
            for i, a in enumerate(out)
            for j, b in enumerate(out)
            if i < j and a.track.name in names and b.track.name in names
        ]
        best = max(pairs, default=None)
        if best is None or best[0] < MERGE_OVERLAP:
            return out, notes
        share, i, j = best
        a, b = out[i], out[j]
        notes.append(f"{b.track.name} merged into {a.track.name} (overlap {share:.2f})")
        out[i] = _merged(a, b)
        names.add(out[i].track.name)
        del out[j]


def _predicted_files(searcher: HybridSearcher, tp: TrackPlan) -> set[str]:
    """The files a retrieval track is expected to find: the first `TOP_RESULTS` files of
    one search of its question with its path filters."""
    options = SearchOptions(limit=PROBE_HITS, include=tp.include, exclude=tp.exclude)
    files: list[str] = []
    for hit in searcher.search(tp.question or "", options):
        if hit.path not in files:
            files.append(hit.path)
    return set(files[:TOP_RESULTS])


def _joined(a: TrackPlan, b: TrackPlan) -> TrackPlan:
    """One track for two that would find the same files: both questions, one loop."""
    return a.model_copy(
        update={
            "name": f"{a.name} + {b.name}",
            "question": f"{a.question}; {b.question}",
            "explorer": a.explorer or b.explorer,
        }
    )


def predict_merges(
    searcher: HybridSearcher, tracks: list[TrackPlan]
) -> tuple[list[TrackPlan], list[str]]:
    """`tracks` with the retrieval tracks whose predicted files overlap by `MERGE_OVERLAP`
    or more joined before they run (the most overlapping pair first, until every two
    overlap less), and a line for each join. Tracks with different path filters are never
    joined: they search different files by design."""
    out = list(tracks)
    predicted = {id(tp): _predicted_files(searcher, tp) for tp in out if tp.question is not None}
    notes: list[str] = []
    while True:
        pairs = [
            (_jaccard(predicted[id(a)], predicted[id(b)]), i, j)
            for i, a in enumerate(out)
            for j, b in enumerate(out)
            if i < j
            and id(a) in predicted
            and id(b) in predicted
            and (a.include, a.exclude) == (b.include, b.exclude)
        ]
        best = max(pairs, default=None)
        if best is None or best[0] < MERGE_OVERLAP:
            return out, notes
        share, i, j = best
        a, b = out[i], out[j]
        if a.explorer and b.explorer:  # one track runs one explorer beside its loop
            predicted.pop(id(b))
            continue
        notes.append(f"{b.name} joined {a.name} before running (predicted overlap {share:.2f})")
        joined = _joined(a, b)
        predicted[id(joined)] = predicted[id(a)] | predicted[id(b)]
        out[i] = joined
        del out[j]


def investigate(
    searcher: HybridSearcher,
    question: str,
    *,
    budget: int | None = None,
    loop: LoopConfig | None = None,
    evaluator: Evaluator | None = None,
    with_trace: bool = False,
    force: Literal["retrieval", "exploration"] | None = None,
    predict: bool = True,
    packing: Packing | None = None,
    context_share: float = CONTEXT_SHARE,
    records: JsonRecords | None = None,
    ranking: DefinitionRanking | None = None,
) -> AskReport:
    """Answer `question`: one loop, or tracks in parallel with explorers and a synthesis.

    `predict`: join the tracks predicted to overlap before they run (`predict_merges`);
    False runs every planned track, as a measurement of what the prediction saves.
    `packing`: how one loop's answer is packed into the budget (default `Packing()`);
    `context_share`: the share of an explored answer's budget its curated context takes;
    `records`: the context is packed for a JSON answer (`ask`); `ranking`: how its
    definitions are ranked (`retrieval.definitions`)."""
    t0 = time.perf_counter()
    p = plan(question)
    answer_in = functools.partial(
        ask,
        searcher,
        question,
        loop=loop,
        evaluator=evaluator,
        with_trace=with_trace,
        packing=packing,
        records=records,
        ranking=ranking,
    )
    if force == "retrieval" or (p.mode == "retrieval" and force is None):
        answer = answer_in(budget=budget)
        return AskReport(
            **{**dict(answer), "mode": "retrieval"},
            context_tokens=answer.tokens,
            why=p.why if force is None else "one loop, as asked",
            timings={"wall": round(time.perf_counter() - t0, 4)},
        )
    if not p.tracks:  # exploration forced on a question that does not decompose by itself
        p = _architecture_plan(question)
    joins: list[str] = []
    if predict:
        tracks_run, joins = predict_merges(searcher, p.tracks)
        p = p.model_copy(update={"tracks": tracks_run})
    limit = budget if budget is not None else DEFAULT_BUDGET
    # The curated context of the whole question gets most of the budget.
    main = functools.partial(answer_in, budget=max(int(limit * context_share), 50))
    runs = _run_tracks(searcher, question, p.tracks, main)
    report = _explored(runs, question, p, joins, budget)
    _fit_tracks(report, limit - runs.answer.tokens)
    report.tokens = runs.answer.tokens + _findings_tokens(report)
    report.timings = {t.track.name: t.seconds for t in report.tracks}
    report.timings.update(
        wall=round(time.perf_counter() - t0, 4),
        sum=round(sum(t.seconds for t in report.tracks), 4),
    )
    return report


def _architecture_plan(question: str) -> Plan:
    """The tracks of an architecture question, for an exploration asked for a question
    that does not decompose by itself."""
    return Plan(
        mode="exploration",
        why="exploration, as asked",
        kind="architecture",
        tracks=_tracks_for("architecture", question, _subject(question)),
    )


_Maker = tuple[TrackPlan, str, "Callable[[], Track]"]
"""A track to run: its plan entry, its role (`"loop"` or its explorer) and what runs it."""


class _Runs(NamedTuple):
    """What an exploration's tracks found, beside `ask`'s answer to the whole question."""

    root: Path
    answer: AskResult
    makers: list[_Maker]
    found: list[tuple[TrackFindings, dict[str, Any]]]
    """Each maker's findings and its explorer's report (by name), in the makers' order."""


class _Makers:
    """The tracks' makers for `tracks`: a retrieval loop for each question, the explorer
    of each. The explorers that build on the answer to the whole question (`main`: the
    history, the tests, the configuration, and the callers' and callees' seeds when the
    question names no definition) wait for it."""

    def __init__(self, ctx: Context, question: str, main: Future[AskResult]) -> None:
        self.ctx = ctx
        self.question = question
        self.main = main

    def makers(self, tracks: list[TrackPlan]) -> list[_Maker]:
        # The explorers, imported only when tracks run: a question the loop answers alone
        # (most of them) does not pay for them.
        from dowse.explore.callers import callees_track, callers_track
        from dowse.explore.focus import focus_track
        from dowse.explore.imports import imports_track
        from dowse.explore.patterns import patterns_track

        ctx, question = self.ctx, self.question
        out: list[_Maker] = []
        for tp in tracks:
            if tp.question is not None:
                loop_track = functools.partial(
                    focus_track,
                    ctx,
                    tp.question,
                    include=tp.include,
                    exclude=tp.exclude,
                    name=tp.name,
                )
                out.append((tp, "loop", loop_track))
            if tp.explorer == "imports":
                out.append((tp, tp.explorer, functools.partial(imports_track, ctx)))
            elif tp.explorer == "git":
                out.append((tp, tp.explorer, self.git))
            elif tp.explorer == "patterns":
                out.append((tp, tp.explorer, functools.partial(patterns_track, ctx)))
            elif tp.explorer == "callers":
                make = functools.partial(callers_track, ctx, question, seeds=self.seeds)
                out.append((tp, tp.explorer, make))
            elif tp.explorer == "callees":
                make = functools.partial(callees_track, ctx, question, seeds=self.seeds)
                out.append((tp, tp.explorer, make))
            elif tp.explorer == "tests":
                out.append((tp, tp.explorer, functools.partial(self.tests, tp.name)))
            elif tp.explorer == "config":
                out.append((tp, tp.explorer, functools.partial(self.config, tp.name)))
        return out

    def _answer_files(self, n: int) -> list[str]:
        return [f.path for f in self.main.result().files[:n]]

    def git(self) -> Track:
        """The files that change together with those that answer the question."""
        from dowse.explore.git import git_track

        return git_track(self.ctx, focus_files=self._answer_files(5), co_change_only=True)

    def seeds(self) -> list[str]:
        """Without a definition the question names, those of what answers it."""
        return [b.symbol for b in self.main.result().context if b.symbol]

    def tests(self, name: str) -> Track:
        """The tests of the question's definitions and of what answers it."""
        from dowse.explore.tested import tests_track

        return tests_track(
            self.ctx,
            self.question,
            name=name,
            seeds=self.seeds,
            answer_files=lambda: self._answer_files(5),
        )

    def config(self, name: str) -> Track:
        """The settings of what answers the question, or that share its words."""
        from dowse.explore.config import config_track

        def relevant() -> tuple[set[str], list[str]]:
            return _keywords(self.question), self._answer_files(8)

        return config_track(
            self.ctx, name=name, relevant=relevant, named=analyze(self.question).identifiers
        )


def _run_tracks(
    searcher: HybridSearcher,
    question: str,
    tracks: list[TrackPlan],
    main: Callable[[], AskResult],
) -> _Runs:
    """Run `tracks` in parallel on the warm searcher (and its query-vector cache), beside
    `main`, the answer to the whole question."""
    from dowse.explore.tracks import Context, run_track

    ctx = Context(root=Path(searcher.root))
    ctx.use_searcher(searcher)
    with ThreadPoolExecutor(max_workers=2 * len(tracks) + 1) as pool:
        answer = pool.submit(main)
        makers = _Makers(ctx, question, answer).makers(tracks)
        found = list(pool.map(lambda m: run_track(ctx, m[2]()), makers))
        return _Runs(root=ctx.root, answer=answer.result(), makers=makers, found=found)


def _explored(
    runs: _Runs, question: str, p: Plan, joins: list[str], budget: int | None
) -> AskReport:
    """The report of an exploration: the tracks named after what they found, those that
    found nothing left out, those that found the same merged, and their synthesis."""
    from dowse.explore.synthesis import synthesize

    for (_, role, _), (found, out) in zip(runs.makers, runs.found, strict=True):
        if role == "patterns":
            _patterns_asked(found, out, question)
    retrieval, empty = _name_after_results(runs.makers, runs.found)
    # A track that found nothing to be named after adds nothing: it is left out of the
    # tracks, and its plan entry and the gate that failed are stated in `empty`.
    ran = [t for t, _ in runs.found if id(t) not in empty]
    tracks, merges = merge_overlapping(ran, retrieval)
    retrieval |= {t.track.name for t in tracks if " + " in t.track.name}
    merged = ExploreResult(
        path=".", root=str(runs.root), depth="standard", focus=question, tracks=tracks
    )
    for _, out in runs.found:
        for name in ("imports", "git", "patterns", "config"):
            if name in out:
                setattr(merged, name, out[name])
    synthesis = synthesize(merged)
    fields = {**dict(runs.answer), "mode": "exploration", "budget": budget}
    return AskReport(
        **fields,
        why=p.why,
        context_tokens=runs.answer.tokens,
        plan=p.tracks,
        tracks=tracks,
        synthesis=synthesis,
        overlap=_overlap([t for t in tracks if t.track.name in retrieval]),
        merged=p.merged + joins + merges,
        empty=list(empty.values()),
    )


def _name_after_results(
    makers: list[_Maker],
    runs: list[tuple[TrackFindings, dict[str, Any]]],
) -> tuple[set[str], dict[int, str]]:
    """Name the tracks that are named after what they found (the plan's entry too, for
    a track that is one explorer). Returns the retrieval tracks' names, and the tracks
    (by id) that found nothing to be named after — the tests, the configuration, the
    history or the conventions with no finding — each with what it looked for and the
    gate it failed: the plan's name is no name for a result."""
    retrieval: set[str] = set()
    empty: dict[int, str] = {}
    for (tp, role, _), (found, out) in zip(makers, runs, strict=True):
        named_by_results = role in ("tests", "git", "config", "patterns")
        if named_by_results and not found.findings:
            failed = next((g for g in found.gates if not g.passed), None)
            why = f"{failed.name} failed: {failed.detail}" if failed else "no finding"
            empty[id(found)] = f"{tp.name}: {why}"
            continue
        name = _results_name(role, tp, found, out)
        if not name and named_by_results:
            # Findings but nothing the role names itself after: the files they cite.
            files = [posixpath.basename(f.citations[0].path) for f in found.findings]
            name = ", ".join(list(dict.fromkeys(files))[:2])
        if name:
            found.track = found.track.model_copy(update={"name": name})
        if role == "loop":
            retrieval.add(found.track.name)
        if role == "loop" or tp.question is None:
            tp.name = found.track.name
    return retrieval, empty


def _patterns_asked(found: TrackFindings, out: dict[str, Any], question: str) -> None:
    """Keep the conventions the question concerns (a pattern whose name shares a word
    with it: "error handling" for "how are errors handled across the code?"), all of
    them when it names none."""
    words = {w.rstrip("s") for w in _keywords(question)}
    patterns = out.get("patterns") or []
    asked = [
        p for p in patterns if {w.rstrip("s") for w in tokenize(p.name.split(" (")[0])} & words
    ]
    if not asked:
        return
    kept = {f"{p.name}: {p.description}" for p in asked}
    out["patterns"] = asked
    found.findings = [f for f in found.findings if f.claim in kept]
    found.conclusions = [c for c in found.conclusions if c in kept]


def _short_paths(paths: list[str]) -> list[str]:
    """Each path by its file name, or by as many of its last parts as tell it from the
    others (two crates' `lib.rs`: `core/lib.rs`, `ignore/src/lib.rs`)."""
    out = []
    for p in paths:
        parts, k = p.split("/"), 1
        while k < len(p.split("/")) and any(
            q != p and q.split("/")[-k:] == parts[-k:] for q in paths
        ):
            k += 1
        out.append("/".join(parts[-k:]))
    return out


def _results_name(role: str, tp: TrackPlan, found: TrackFindings, out: dict[str, Any]) -> str:
    """A track's name from what it found: the tests by their files, the configuration by
    its settings, the history by the files that change together, the import graph by its
    central modules; "" to keep its name."""
    if role == "tests":
        files = _short_paths(list(dict.fromkeys(f.citations[0].path for f in found.findings)))
        return ", ".join(files[:2]) + (f" +{len(files) - 2}" if len(files) > 2 else "")
    if role == "config" and isinstance(out.get("config"), ConfigReport):
        report = out["config"]
        names = [s.name for s in report.named] + [s.name for s in report.env]
        names += [f"--{s.name}" for s in report.flags]
        names += [s.name for s in report.classes] + [posixpath.basename(f) for f in report.files]
        return ", ".join(list(dict.fromkeys(names))[:3])  # two settings.py are one name
    if role == "git" and isinstance(out.get("git"), GitReport) and out["git"].co_change:
        a, b, _ = out["git"].co_change[0]
        return f"{posixpath.basename(a)} ± {posixpath.basename(b)}"
    if role == "patterns" and out.get("patterns"):
        names = [p.name for p in out["patterns"]]
        return ", ".join(names[:2]) + (f" +{len(names) - 2}" if len(names) > 2 else "")
    if (
        role == "imports"
        and isinstance(out.get("imports"), ImportReport)
        and out["imports"].central
    ):
        return "⇄ " + ", ".join(_short_paths([path for path, _ in out["imports"].central[:2]]))
    return ""


def _findings_tokens(report: AskReport) -> int:
    from dowse.explore.render import finding_line

    total = 0
    for t in report.tracks:
        total += sum(estimate_tokens(finding_line(f)) for f in t.findings)
    if report.synthesis is not None:
        syn = report.synthesis
        total += sum(estimate_tokens(x) for x in syn.unified + syn.divergences + syn.open_questions)
        total += estimate_tokens(syn.statement)
    return total


def _fit_tracks(report: AskReport, room: int) -> None:
    """Keep the synthesis' divergences and open questions, then the tracks' findings
    round-robin (every track's best first), while they fit."""
    from dowse.explore.render import finding_line

    if report.synthesis is not None:
        syn = report.synthesis
        room -= sum(estimate_tokens(x) for x in syn.unified) + estimate_tokens(syn.statement)
        # The synthesis' divergences and open questions before the tracks' findings: they
        # are what no single track says.
        for name in ("divergences", "open_questions"):
            items, out = getattr(syn, name), []
            for x in items:
                if estimate_tokens(x) <= room:
                    room -= estimate_tokens(x)
                    out.append(x)
            setattr(syn, name, out)
    kept: dict[int, int] = {i: 0 for i in range(len(report.tracks))}
    progress = True
    while progress:
        progress = False
        for i, t in enumerate(report.tracks):
            k = kept[i]
            if k < len(t.findings):
                f = t.findings[k]
                cost = estimate_tokens(finding_line(f))
                if cost <= room:
                    room -= cost
                    kept[i] = k + 1
                    progress = True
    for i, t in enumerate(report.tracks):
        t.findings = t.findings[: kept[i]]


def report_records(question: str) -> JsonRecords:
    """How `ask --json` prints its records, for packing its context: indented, in an
    envelope of the question, a stop reason and a summary of the usual length (the
    trace, the files' evidence and an exploration's records go before any block when
    the answer is fitted, `fit_report`)."""
    skeleton = AskReport(
        question=question,
        files=[],
        context=[],
        tokens=DEFAULT_BUDGET,
        budget=DEFAULT_BUDGET,
        stop_reason="x" * 64,
        cycles=3,
        why="x" * 80,
        timings={"wall": 0.0},
    )
    return JsonRecords(frame=estimate_tokens(report_json(skeleton)), indent=2)


def report_json(report: AskReport) -> str:
    """The report as `ask --json` prints it."""
    return render_json(report)


def _round_robin(
    tracks: list[TrackFindings], field: Literal["findings", "conclusions"]
) -> tuple[list[Entry], Callable[[AskReport, list[tuple[int, Any]]], None]]:
    """The tracks' records of `field` as entries, every track's first the last to go, and
    the function that puts the kept ones back in each track (by its place in the list)."""
    rounds = sorted(
        ((k, i, x) for i, t in enumerate(tracks) for k, x in enumerate(getattr(t, field))),
        key=lambda r: (r[0], r[1]),
    )

    def put(out: AskReport, kept: list[tuple[int, Any]]) -> None:
        out.tracks = [
            t.model_copy(update={field: [x for j, x in kept if j == i]})
            for i, t in enumerate(out.tracks)
        ]

    return [((i, x), None) for _, i, x in rounds], put


def fit_report(
    report: AskReport, budget: int, fmt: Literal["markdown", "json"], *, trace: bool = False
) -> AskReport:
    """A copy of `report` that prints (as `fmt`) in at most `budget` tokens, at any budget
    its frame fits in: `fit_result`'s order, with the exploration's records going right
    after the files' evidence, the lowest-ranked first: the timings, the plan's questions
    and globs, the merged and empty tracks, the tracks' conclusions, the synthesis'
    divergences and open questions, the tracks' findings, the tracks themselves, the
    synthesis' findings; after the code, the plan's names and the synthesis. With `trace`
    (markdown asked to show it), the loop's cycles go only after the code."""

    def render(r: AskReport) -> str:
        return report_json(r) if fmt == "json" else render_report(r, trace=trace)

    if fmt == "json" and report.tracks:
        from dowse.explore.render import compact_tracks

        report = report.model_copy(
            update={"tracks": [t.model_copy(deep=True) for t in report.tracks]}
        )
        compact_tracks(report.tracks)

    # Round-robin: every track's best finding is the last to go.
    findings, put_findings = _round_robin(report.tracks, "findings")

    syn = report.synthesis
    notes: list[Entry] = (
        []
        if syn is None
        else [(("divergences", x), None) for x in syn.divergences]
        + [(("open_questions", x), None) for x in syn.open_questions]
    )

    def put_notes(out: AskReport, kept: list[tuple[str, str]]) -> None:
        if out.synthesis is not None:
            out.synthesis = out.synthesis.model_copy(
                update={
                    name: [x for n, x in kept if n == name]
                    for name in ("divergences", "open_questions")
                }
            )

    # The synthesis' findings go last, the least supported first.
    stated: list[Entry] = (
        []
        if syn is None
        else [((u, f), None) for u, f in zip(syn.unified, syn.findings, strict=False)]
    )

    def put_stated(out: AskReport, kept: list[tuple[str, Any]]) -> None:
        if out.synthesis is not None:
            out.synthesis = out.synthesis.model_copy(
                update={"unified": [u for u, _ in kept], "findings": [f for _, f in kept]}
            )

    # The exploration's bookkeeping goes before anything the tracks found: the timings,
    # the plan's questions and globs, the tracks merged or empty, then the tracks'
    # conclusions (every track's first the last to go). Once the tracks have lost their
    # findings and conclusions, their records go, the last track first, before the
    # synthesis' findings. The plan's names (which tracks ran) and the synthesis' own
    # record go only after the code, so that any budget the frame fits in holds an
    # answer.
    timings: list[Entry] = [(report.timings, None)] if report.timings else []

    def put_timings(out: AskReport, kept: list[dict[str, float]]) -> None:
        out.timings = kept[0] if kept else {}

    # A planned track's question and globs go first (the tracks' records repeat them),
    # its name and explorer last: two groups over the plan's places.
    details: list[Entry] = [(i, None) for i in range(len(report.plan))]

    def put_details(out: AskReport, kept: list[int]) -> None:
        left = set(kept)
        out.plan = [
            p
            if i in left
            else p.model_copy(update={"question": None, "include": [], "exclude": []})
            for i, p in enumerate(out.plan)
        ]

    names: list[Entry] = [(i, None) for i in range(len(report.plan))]

    def put_names(out: AskReport, kept: list[int]) -> None:
        left = set(kept)
        out.plan = [p for i, p in enumerate(out.plan) if i in left]

    asides: list[Entry] = [(("merged", m), None) for m in report.merged] + [
        (("empty", m), None) for m in report.empty
    ]

    def put_asides(out: AskReport, kept: list[tuple[str, str]]) -> None:
        out.merged = [m for n, m in kept if n == "merged"]
        out.empty = [m for n, m in kept if n == "empty"]

    conclusions, put_conclusions = _round_robin(report.tracks, "conclusions")

    tracks: list[Entry] = [(i, None) for i in range(len(report.tracks))]

    def put_tracks(out: AskReport, kept: list[int]) -> None:
        # A track goes only once nothing it found is left; one that still holds a
        # finding or a conclusion stays.
        left = set(kept)
        out.tracks = [
            t for i, t in enumerate(out.tracks) if i in left or t.findings or t.conclusions
        ]

    synthesis: list[Entry] = [(syn, None)] if syn is not None else []

    def put_synthesis(out: AskReport, kept: list[Synthesis]) -> None:
        if not kept and out.synthesis is not None and not out.synthesis.unified:
            out.synthesis = None

    return fit_result(
        report,
        budget,
        render,
        more=[
            (timings, put_timings),
            (details, put_details),
            (asides, put_asides),
            (conclusions, put_conclusions),
            (notes, put_notes),
            (findings, put_findings),
            (tracks, put_tracks),
            (stated, put_stated),
        ],
        last=[(names, put_names), (synthesis, put_synthesis)],
        trace_last=trace and fmt == "markdown",
        lines_first=fmt == "json",
        kept_definitions=Frame().kept_definitions(budget) if fmt == "markdown" else 0,
    )


def render_report(report: AskReport, *, trace: bool = False) -> str:
    if report.mode == "retrieval":
        return render_ask(report, trace=trace)
    # The tracks' rendering (and the explorers it imports) only for an explored answer.
    from dowse.explore.render import finding_line

    lines = [
        f"# {title(report.question)}",
        "",
        f"_Explored in {len(report.plan)} parallel tracks: {report.why}; track overlap "
        f"{report.overlap:.2f}; ~{report.tokens} tokens"
        + (f" of {report.budget}" if report.budget else "")
        + (
            f"; {report.timings['wall']:.2f} s wall, {report.timings['sum']:.2f} s summed"
            if "wall" in report.timings
            else ""
        )
        + "_",
        "",
    ]
    lines += [f"- merged: {one_line(m)}" for m in report.merged]
    lines += [f"- found nothing: {one_line(m)}" for m in report.empty]
    if report.merged or report.empty:
        lines.append("")
    syn = report.synthesis
    if syn is not None:
        lines += [f"## Synthesis (confidence: {syn.confidence})", "", f"_{syn.basis}_", ""]
        if syn.statement:
            lines += [f"In short: {one_line(syn.statement)}", ""]
        lines += [f"- {one_line(x)}" for x in syn.unified]
        lines += [f"- divergence: {one_line(x)}" for x in syn.divergences]
        lines += [f"- open: {one_line(x)}" for x in syn.open_questions]
        lines.append("")
    for t in report.tracks:
        gates = ", ".join(
            f"{g.name} {'passed' if g.passed else 'failed'}" for g in t.gates if g.ran
        )
        lines += [
            f"## Track: {one_line(t.track.name)}",
            "",
            f"_{one_line(t.track.focus)} — {gates}_",
            "",
        ]
        lines += [finding_line(f) for f in t.findings]
        lines += [f"- {one_line(c)}" for c in t.conclusions]
        lines.append("")
    body = render_ask(report, trace=trace).split("\n", 1)[1]
    lines += ["## Curated context", body]
    return "\n".join(lines).rstrip() + "\n"
