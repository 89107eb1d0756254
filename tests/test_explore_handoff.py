"""`ask` decides between one loop and an exploration, decomposes, and hands off."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_explore_cli import _assert_findings_hold

from dowse.explore.callers import callees_track, callers_track, named_by_words, targets_name
from dowse.explore.handoff import (
    TEST_GLOBS,
    TrackPlan,
    _clip,
    _overlap,
    _parts,
    investigate,
    merge_overlapping,
    plan,
    predict_merges,
    render_report,
)
from dowse.explore.records import Citation, Finding, GateResult, TrackFindings, TrackSpec
from dowse.explore.tracks import Context, run_track
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.store import Store
from dowse.retrieval.ask import estimate_tokens
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.query import analyze


@pytest.mark.parametrize(
    "question",
    [
        "where is validate_token defined?",
        "validate_token raises KeyError when the token is missing",
        'Traceback:\n  File "shop/payments.py", line 31, in charge\nGatewayUnavailable: why?',
        "QuerySet.only() after select_related() crash on proxy models",
    ],
)
def test_a_focused_question_stays_one_loop(question):
    p = plan(question)
    assert p.mode == "retrieval" and p.tracks == []


@pytest.mark.parametrize(
    "question, kind, names",
    [
        (
            "how does authentication work?",
            "architecture",
            [
                "authentication",
                "← authentication",
                "authentication →",
                "authentication (tests/)",
                "authentication (settings)",
                "authentication (history)",
            ],
        ),
        (
            "why does checkout sometimes fail with a timeout?",
            "bug",
            [
                "checkout fail timeout",
                "← checkout fail timeout",
                "checkout fail timeout →",
                "checkout fail timeout (tests/)",
                "checkout fail timeout (history)",
            ],
        ),
        (
            "how is error handling done across the modules?",
            "cross-cutting",
            ["error handling", "← error handling", "error handling →", "error handling (tests/)"],
        ),
        (
            "how are tokens issued, and where are they validated, and what tests cover expiry?",
            "multi",
            [
                "tokens issued",
                "validated",
                "tests cover expiry",
                "← tokens issued validated tests",
                "tokens issued validated tests →",
                "tokens issued validated tests (history)",
            ],
        ),
        (
            "how are parsing, routing and error handling implemented?",
            "multi",
            [
                "parsing",
                "routing",
                "error handling",
                "← parsing routing error handling",
                "parsing routing error handling →",
                "parsing routing error handling (tests/)",
                "parsing routing error handling (history)",
            ],
        ),
        (
            "how is the retry limit configured and where are retries counted?",
            "multi",
            [
                "retry limit configured",
                "retries counted",
                "← retry limit configured retries",
                "retry limit configured retries →",
                "retry limit configured retries (tests/)",
                "retry limit configured retries (settings)",
                "retry limit configured retries (history)",
            ],
        ),
    ],
)
def test_a_broad_question_is_decomposed_into_tracks(question, kind, names):
    p = plan(question)
    assert (p.mode, p.kind) == ("exploration", kind)
    assert [t.name for t in p.tracks] == names
    assert 3 <= len(p.tracks) <= 7


@pytest.mark.parametrize(
    "question, parts",
    [
        (
            "how are tokens issued and validated?",
            ["how are tokens issued", "how are tokens validated"],
        ),
        (
            "how do requests, responses and sessions get handled",
            [
                "how do requests get handled",
                "how do responses get handled",
                "how do sessions get handled",
            ],
        ),
        # A clause boundary, never inside a word ("coordina…").
        (
            "how are points projected, and how do the different coordinate systems relate?",
            ["how are points projected", "how do the different coordinate systems relate"],
        ),
        # "between A and B" is one question, not two.
        (
            "what is the difference between sessions and cookies",
            ["what is the difference between sessions and cookies"],
        ),
        # Alternatives ask one thing of either: one place answers it.
        (
            "which binary mode is used when --binary or --text is given?",
            ["which binary mode is used when --binary or --text is given"],
        ),
        (
            "how does parsing handle YYYY, MM or DD tokens",
            ["how does parsing handle YYYY, MM or DD tokens"],
        ),
    ],
)
def test_the_question_splits_at_clauses_and_enumerations(question, parts):
    assert _parts(question) == parts


def test_decomposition_resolves_pronouns_and_picks_explorers():
    p = plan("how are tokens issued and where are they validated?")
    assert [t.question for t in p.tracks] == [
        "how are tokens issued",
        "where are they validated (tokens issued)",
        None,
        None,
        None,
        None,
    ]
    # The tests come from the references and the answer's file names, not a search of
    # the tests with the subject's words; the question's own tracks leave the tests out.
    assert p.tracks[4].explorer == "tests" and p.tracks[0].exclude == TEST_GLOBS
    arch = plan("give me an overview of the payment flow")
    explorers = [(t.name, t.explorer) for t in arch.tracks]
    assert explorers == [
        ("payment", "imports"),
        ("← payment", "callers"),
        ("payment →", "callees"),
        ("payment (tests/)", "tests"),
        ("payment (settings)", "config"),
        ("payment (history)", "git"),
    ]
    # A definition the question names names the callers and callees tracks.
    named = [t.name for t in plan("how does validate_token work?").tracks]
    assert named[1:3] == ["← validate_token", "validate_token →"]
    # A name with several definitions is named once; more targets are counted.
    assert targets_name(["Glob", "Glob", "GlobSet"], "callers") == "← Glob, GlobSet"
    assert targets_name(["a", "a", "b", "c", "d"], "callees") == "a, b +2 →"
    assert arch.tracks[1].question is None  # callers come from the references, not a search
    assert arch.tracks[0].question == "give me an overview of the payment flow"


def _track(name, *paths):
    return TrackFindings(
        track=TrackSpec(name=name, focus=name, approach="a", gates=[], deliverable="d"),
        findings=[
            Finding(claim=p, citations=[Citation(path=p, start_line=1, end_line=1, quote="x")])
            for p in paths
        ],
        gates=[GateResult(name="understood", passed=True, detail="ok")],
    )


def test_tracks_whose_best_results_overlap_are_merged_until_independent():
    a = _track("issued", "a.py", "b.py", "c.py")
    b = _track("validated", "b.py", "c.py", "d.py")  # 2/4 = 0.5 with a
    c = _track("expiry", "e.py", "f.py")
    git = _track("git", "a.py", "b.py")  # not a retrieval track: never merged
    out, notes = merge_overlapping([a, b, c, git], {"issued", "validated", "expiry"})
    assert [t.track.name for t in out] == ["issued + validated", "expiry", "git"]
    assert notes == ["validated merged into issued (overlap 0.50)"]
    assert [f.claim for f in out[0].findings] == ["a.py", "b.py", "c.py", "d.py"]
    assert _overlap(out[:2]) < 0.3
    # Independent tracks stay apart.
    kept, none = merge_overlapping([a, c], {"issued", "expiry"})
    assert [t.track.name for t in kept] == ["issued", "expiry"] and none == []


class _Probe:
    """A searcher whose one search answers each question with the files given for it."""

    def __init__(self, files):
        self.files, self.asked = files, []

    def search(self, text, options):
        self.asked.append((text, options.include, options.exclude))
        return [type("Hit", (), {"path": p})() for p in self.files[text]]


def test_tracks_predicted_to_overlap_run_as_one_before_anything_runs():
    probe = _Probe(
        {
            "how are tokens issued": ["a.py", "b.py", "c.py"],
            "where are they validated": ["b.py", "c.py", "d.py"],  # 2/4 = 0.5 with issued
            "what sets the expiry": ["e.py", "f.py"],
            "token": ["a.py", "b.py", "c.py"],  # the same files, but only in the tests
        }
    )
    tracks = [
        TrackPlan(name="issued", question="how are tokens issued", explorer="imports"),
        TrackPlan(name="validated", question="where are they validated"),
        TrackPlan(name="expiry", question="what sets the expiry"),
        TrackPlan(name="callers", explorer="callers"),
        TrackPlan(name="tests", question="token", include=TEST_GLOBS),
    ]
    out, notes = predict_merges(probe, tracks)  # type: ignore[arg-type]
    assert [t.name for t in out] == ["issued + validated", "expiry", "callers", "tests"]
    assert out[0].question == "how are tokens issued; where are they validated"
    assert out[0].explorer == "imports"  # the explorer the first one ran stays
    assert notes == ["validated joined issued before running (predicted overlap 0.50)"]
    # One search per retrieval track, with the track's own path filters.
    assert ("token", TEST_GLOBS, []) in probe.asked and len(probe.asked) == 4
    # Nothing overlapping: nothing joined.
    apart, none = predict_merges(probe, [tracks[0], tracks[2]])  # type: ignore[arg-type]
    assert [t.name for t in apart] == ["issued", "expiry"] and none == []


def test_track_names_are_cut_between_words():
    assert _clip("config values loaded from environment variables", 40) == (
        "config values loaded from environment"
    )
    assert _clip("short", 40) == "short"
    assert _clip("averyveryverylongidentifier rest", 10) == "averyveryverylongidentifier"
    names = [
        t.name for t in plan("how are values loaded from files and environment variables?").tracks
    ]
    assert all(len(n) <= 40 for n in names)
    assert all(
        w in "values loaded from files environment variables".split()
        for n in names[:2]
        for w in n.split()
    )


@pytest.fixture
def searcher(tmp_path, fake_embedder, indexed_examples):
    root = indexed_examples.copy(tmp_path / "example")  # the session's build, copied: conftest
    return HybridSearcher(Store.open(root / ".dowse"), lambda: fake_embedder)


def test_a_simple_question_runs_one_loop_and_no_explorers(searcher):
    report = investigate(searcher, "where is validate_token defined?", budget=1000)
    assert report.mode == "retrieval" and report.tracks == [] and report.synthesis is None
    # Among the first two: the fake embedder finds the package __init__ that re-exports
    # it as close (the real model ranks the module first: test_end_to_end).
    assert "shop/auth/tokens.py" in [f.path for f in report.files[:2]]
    assert report.tokens == report.context_tokens <= 1000


def test_an_architecture_question_runs_tracks_in_parallel_and_merges_them(searcher):
    report = investigate(searcher, "how does token authentication work?", budget=3000)
    assert report.mode == "exploration"
    names = [t.track.name for t in report.tracks]
    # the question's own retrieval with the imports explorer (named after the central
    # modules), the callers and callees of the definitions the retrieval found first (named
    # after them), and their tests (named after the test file that calls them). Git for the
    # history (not a repository here) and the configuration (the example has none) found
    # nothing to be named after: they are left out of the tracks and stated, with the
    # gate that failed, under `empty` — no track is named with the plan's wording.
    plan_names = [tp.name for tp in report.plan]
    assert plan_names[3:] == [
        "test_tokens.py",
        "token authentication (settings)",
        "token authentication (history)",
    ]
    assert names == [
        "token authentication",
        "⇄ tokens.py, format.js",
        "← validate_token, PaymentDeclined",
        "validate_token, PaymentDeclined →",
        "test_tokens.py",
    ]
    assert not any(n.endswith(("(tests/)", "(settings)", "(history)")) for n in names)
    assert [e.split(":")[0] for e in report.empty] == plan_names[4:]
    assert all(" failed: " in e for e in report.empty)
    assert plan_names[1:4] == names[2:5]
    # The tests of what answers it, from the references: the test file that calls
    # validate_token, cited at the call (test_tokens.py is also named after tokens.py:
    # one finding for the file). PaymentDeclined has none, and says so.
    tests = report.tracks[4]
    assert [(f.claim, f.citations[0].ref) for f in tests.findings] == [
        (
            "`test_round_trip` in tests/test_tokens.py calls `validate_token` "
            "(shop/auth/tokens.py:30-42) (and 1 more test in the file)",
            "tests/test_tokens.py:8",
        )
    ]
    assert tests.gaps == ["no test references `PaymentDeclined`"]
    assert report.merged == [] and report.overlap < 0.3
    # Real callers, cited at the calling line: routes.py's authenticate calls validate_token.
    callers = report.tracks[2]
    assert [c.ref for f in callers.findings for c in f.citations] == ["shop/api/routes.py:22"]
    assert callers.findings[0].claim.startswith("`authenticate` in shop/api/routes.py calls")
    # Real callees, cited at the line of validate_token that calls them.
    callees = report.tracks[3]
    assert [(f.topic, f.citations[0].ref) for f in callees.findings] == [
        ("TokenError", "shop/auth/tokens.py:35"),
        ("_sign", "shop/auth/tokens.py:36"),
    ]
    assert report.synthesis is not None and report.synthesis.basis
    _assert_findings_hold(report.synthesis, searcher.root)
    assert 0.0 <= report.overlap <= 1.0
    assert report.tokens <= 3000
    text = render_report(report)
    assert "## Track: token authentication" in text and "## Curated context" in text
    assert "- found nothing: token authentication (history): " in text
    assert "## Track: token authentication (tests/)" not in text
    assert "## Track: test_tokens.py" in text
    assert estimate_tokens(text) < 3000 * 1.5
    assert report.timings["wall"] <= report.timings["sum"] + 1.0


def test_the_callers_track_targets_the_definitions_the_questions_words_name(searcher):
    # No identifier in the question: its words name `validate_token` and `issue_token`
    # (two words each: tokens + validated, tokens + issued), not what a search ranks first.
    question = "how are tokens validated and how are they issued?"
    words = analyze(question).terms
    assert named_by_words(searcher.store, words) == ["issue_token", "validate_token"]
    # One word alone names a definition only when no two words do; generic words never.
    assert named_by_words(searcher.store, ["charge", "implemented"]) == ["charge"]
    assert named_by_words(searcher.store, ["implemented", "works"]) == []
    ctx = Context(root=Path(searcher.root))
    ctx.use_searcher(searcher)
    seeded: list[str] = []
    track = callers_track(ctx, question, seeds=lambda: seeded.append("x") or ["charge"])
    found, _ = run_track(ctx, track)
    assert seeded == []  # the question's words named the targets: no retrieval needed
    assert found.track.name == "← issue_token, validate_token"
    # Real call sites from the references, the test callers left out (not asked about).
    assert [c.ref for f in found.findings for c in f.citations] == ["shop/api/routes.py:22"]


def test_a_one_word_name_everyone_defines_is_no_target(tmp_path, fake_embedder):
    classes = "".join(
        f"class C{i}:\n    def read(self):\n        return {i}\n\n" for i in range(17)
    )
    (tmp_path / "many.py").write_text(classes + "def read_metadata():\n    return 0\n")
    build_index(tmp_path, config=IndexConfig(embed=False), embedder=fake_embedder)
    store = Store.open(tmp_path / ".dowse")
    # Seventeen `read` methods: not the one "how is metadata read?" means; its two words are.
    assert named_by_words(store, ["metadata", "read"]) == ["read_metadata"]
    assert named_by_words(store, ["read"]) == []


def test_exploration_can_be_forced_and_refused(searcher):
    forced = investigate(searcher, "where is validate_token defined?", force="exploration")
    assert forced.mode == "exploration" and len(forced.plan) >= 3
    single = investigate(searcher, "how does token authentication work?", force="retrieval")
    assert single.mode == "retrieval" and single.tracks == []


def test_a_pasted_report_is_one_loop_and_a_long_title_is_cut():
    from dowse.explore.handoff import REPORT_WORDS, plan
    from dowse.retrieval.ask import Frame, title

    short = "why does checkout sometimes fail?"
    assert plan(short).mode == "exploration"
    report = short + " " + " ".join(["The total is wrong after a refund."] * REPORT_WORDS)
    assert plan(report).mode == "retrieval"
    assert "report" in plan(report).why
    assert plan("why does checkout sometimes fail?\n```\ntotal = 0\n```").mode == "retrieval"
    assert len(title(report)) <= Frame().title_chars


def test_an_issue_title_and_its_body_are_one_report_not_two_parts():
    from dowse.explore.handoff import plan

    # dayjs-1414 of Multi-SWE-bench: explored as two parts, its context lost a third of
    # the lines the loop alone shows.
    issue = (
        "Spanish days and months should be lowercase\n"
        "Spanish speaking people do not capitalize their months or days."
    )
    assert plan(issue).mode == "retrieval" and "report" in plan(issue).why
    # One line with two clauses, or lines that are each a question, are still parts.
    assert plan("how are tokens issued and where are they validated").mode == "exploration"
    assert plan("How are tokens issued?\nWhere are they validated?").mode == "exploration"
    # Several lines about the architecture keep their kind.
    listed = "Explain the architecture:\n- how requests are routed\n- how auth works"
    assert plan(listed).mode == "exploration" and plan(listed).kind == "architecture"


@pytest.mark.parametrize(
    "question",
    [
        # ripgrep's smart case: one function decides; explored as a cross-cutting pattern,
        # its tracks spent the budget on callers, tests and history.
        "how does smart case decide whether a pattern matches case insensitively?",
        "how are glob patterns matched against paths?",
        "where is the search pattern compiled?",
    ],
)
def test_a_pattern_the_code_handles_is_no_cross_cutting_question(question):
    from dowse.explore.handoff import plan

    assert plan(question).mode == "retrieval"


@pytest.mark.parametrize(
    "question",
    [
        "what patterns does the code use for error handling?",
        "what is the common pattern for retries?",
        "which pattern is followed for registering handlers?",
        "the patterns used for loading configuration",
    ],
)
def test_a_pattern_of_the_code_is_a_cross_cutting_question(question):
    from dowse.explore.handoff import plan

    p = plan(question)
    assert (p.mode, p.kind) == ("exploration", "cross-cutting")


def test_a_conventions_track_keeps_and_is_named_after_the_conventions_asked(searcher):
    report = investigate(searcher, "how is error handling done across the codebase?")
    assert report.mode == "exploration"
    by_name = {t.track.name: t for t in report.tracks}
    # The patterns explorer ran for the cross-cutting question, but under the name of the
    # convention the question concerns, with that convention alone: not "patterns".
    assert "patterns" not in by_name
    conventions = [n for n in by_name if n.startswith("error handling (")]
    assert conventions, list(by_name)
    found = by_name[conventions[0]].findings
    assert found and all(f.claim.startswith("error handling") for f in found)
    # The callers' claims say how a reference was tied to its definition in words, not
    # with the index's resolution labels.
    claims = [f.claim for t in report.tracks for f in t.findings if t.track.name[0] in "←"]
    assert claims and not any(
        re.search(r"resolved by (same-file|import|package|name)\b", c) for c in claims
    )
    assert all(re.search(r"; (resolved (within|through)|matched by name)", c) for c in claims)


def test_divergences_are_kept_before_the_tracks_findings_under_a_budget():
    from dowse.explore.handoff import AskReport, _fit_tracks
    from dowse.explore.records import Synthesis

    many = [
        Finding(
            claim=f"`f{i}` at a.py:{i} does a thing " * 3,
            citations=[Citation(path="a.py", start_line=i, end_line=i, quote="x")],
        )
        for i in range(1, 40)
    ]
    track = TrackFindings(
        track=TrackSpec(name="t", focus=".", approach="a", gates=[], deliverable="d"), findings=many
    )
    divergence = "`load` : t places it at a.py:1-9, u at b.py:4-8 (two definitions of the name)"
    report = AskReport.model_construct(  # the curated context's fields play no part here
        question="q",
        tracks=[track],
        synthesis=Synthesis(divergences=[divergence], confidence="Low", basis="b"),
    )
    _fit_tracks(report, 120)
    # The tracks' findings fill what the divergence leaves, not the other way round.
    assert report.synthesis is not None and report.synthesis.divergences == [divergence]
    assert 0 < len(report.tracks[0].findings) < len(many)


def test_a_track_named_after_files_tells_two_of_one_name_apart():
    from dowse.explore.handoff import _short_paths

    # ripgrep's central modules were named "⇄ lib.rs, lib.rs".
    assert _short_paths(["crates/core/lib.rs", "crates/ignore/src/lib.rs"]) == [
        "core/lib.rs",
        "src/lib.rs",
    ]
    assert _short_paths(["shop/auth/tokens.py", "web/format.js"]) == ["tokens.py", "format.js"]


def test_a_setting_in_a_module_of_constants_is_quoted_at_its_line(tmp_path, fake_embedder):
    # django's global_settings.py and locale formats: chunks of module-level constants,
    # no one definition; the claim states the setting as the code writes it and quotes
    # its line, so the synthesis can read the value (`NUMBER_GROUPING = 0`).
    head = "".join(f"# comment line {i}\n" for i in range(5))
    (tmp_path / "app/locale/en").mkdir(parents=True)
    (tmp_path / "app/global_settings.py").write_text(
        '"""Default settings."""\n' + head + "DEBUG = False\nNUMBER_GROUPING = 0\nUSE_TZ = True\n"
    )
    (tmp_path / "app/locale/en/formats.py").write_text(
        "# English formats\n" + head + "DATE_FORMAT = 'N j, Y'\nNUMBER_GROUPING = 3\n"
    )
    build_index(tmp_path, config=IndexConfig(embed=False), embedder=fake_embedder)
    report = investigate(
        HybridSearcher.open(tmp_path / ".dowse"),
        "what is the default NUMBER_GROUPING and how do the locale formats set NUMBER_GROUPING?",
        budget=4000,
    )
    quoted = {
        f.citations[0].path: (f.claim.split(" in ", 1)[0], f.citations[0].quote)
        for t in report.tracks
        for f in t.findings
        if f.citations[0].path.endswith(("settings.py", "formats.py")) and t.track.role != "config"
    }
    assert quoted == {
        "app/global_settings.py": ("`NUMBER_GROUPING`", "NUMBER_GROUPING = 0"),
        "app/locale/en/formats.py": ("`NUMBER_GROUPING`", "NUMBER_GROUPING = 3"),
    }
    # The configuration track states the setting the question names, the settings
    # module's definition first.
    settings = [f for t in report.tracks if t.track.role == "config" for f in t.findings]
    assert [(f.claim, f.citations[0].quote) for f in settings] == [
        (
            "`NUMBER_GROUPING` is set at app/global_settings.py:8 (2 definitions)",
            "NUMBER_GROUPING = 0",
        )
    ]
    assert report.synthesis is not None
    assert {f.topic for f in report.synthesis.findings} >= {"NUMBER_GROUPING"}


def test_the_callers_and_callees_of_many_definitions_name_one_short_source(tmp_path, fake_embedder):
    # django's NUMBER_GROUPING is defined in 60 files: the look-up's name is a line.
    for i in range(6):
        (tmp_path / f"m{i}.py").write_text(f"def load_rows():\n    return parse({i})\n")
    (tmp_path / "use.py").write_text("from m0 import load_rows\n\nload_rows()\n")
    build_index(tmp_path, config=IndexConfig(embed=False), embedder=fake_embedder)
    searcher = HybridSearcher.open(tmp_path / ".dowse")
    sources = []
    for make in (callers_track, callees_track):
        ctx = Context(root=tmp_path)
        ctx.use_searcher(searcher)
        found, _ = run_track(ctx, make(ctx, "who calls load_rows?"))
        sources.append(found.track.source)
    assert sources[0] == sources[1]
    assert re.fullmatch(
        r"references of m0\.py\S+, m1\.py\S+, m2\.py\S+ and 3 more \(b2:[0-9a-f]{12}\)",
        sources[0],
    )


def test_a_long_word_written_as_a_definitions_name_is_the_first_target(tmp_path, fake_embedder):
    # pytest: "who calls getfixturevalue?" is about `getfixturevalue`, before the base
    # forms of "fixtures" and "resolved" (`fixture`, monkeypatch's `resolve`).
    (tmp_path / "fixtures.py").write_text(
        "def fixture():\n    return 1\n\n\nclass FixtureRequest:\n"
        "    def getfixturevalue(self, name):\n        return name\n"
    )
    (tmp_path / "monkeypatch.py").write_text("def resolve(name):\n    return name\n")
    build_index(tmp_path, config=IndexConfig(embed=False), embedder=fake_embedder)
    store = Store.open(tmp_path / ".dowse")
    words = analyze("how are fixtures resolved and who calls getfixturevalue?").terms
    assert named_by_words(store, words) == ["FixtureRequest.getfixturevalue", "fixture", "resolve"]
    # A shorter word is as likely English: tokio's "how does sleep register a timer?"
    # keeps `sleep`, the subject, before the `register` methods.
    (tmp_path / "time.py").write_text(
        "def sleep(d):\n    return d\n\n\nclass Source:\n    def register(self):\n        pass\n"
    )
    build_index(tmp_path, config=IndexConfig(embed=False), embedder=fake_embedder)
    store = Store.open(tmp_path / ".dowse")
    words = analyze("how does sleep register a timer and who calls sleep?").terms
    assert named_by_words(store, words) == ["sleep", "Source.register"]


def test_an_explored_answer_is_packed_with_the_packing_given(searcher, monkeypatch):
    """Every `ask` an exploration runs gets the packing it was given (a benchmark that
    compares packings compares them on explored questions too)."""
    import dowse.explore.handoff as handoff
    from dowse.retrieval.ask import Packing

    given = Packing(lead_files=1)
    seen = []
    real = handoff.ask

    def spy(*args, **kwargs):
        seen.append(kwargs.get("packing"))
        return real(*args, **kwargs)

    monkeypatch.setattr(handoff, "ask", spy)
    investigate(searcher, "why does checkout sometimes fail?", force="exploration", packing=given)
    assert seen and all(p is given for p in seen)
