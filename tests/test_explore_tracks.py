"""Tracks, gates and the citation check; the focus track; synthesis; budgets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dowse.explore.focus import focus_track
from dowse.explore.records import (
    Citation,
    Command,
    ExploreResult,
    Finding,
    GateResult,
    KeyFile,
    TrackFindings,
    TrackSpec,
    TreeNode,
)
from dowse.explore.render import fit_budget, render_markdown
from dowse.explore.synthesis import synthesize
from dowse.explore.tracks import Context, Track, TrackState, cite, run_track, verify_citation
from dowse.indexer.build import build_index

SPEC = TrackSpec(name="t", focus=".", approach="test", gates=["g"], deliverable="d")


def _cit(path: str, start: int, end: int | None = None, quote: str = "x") -> Citation:
    return Citation(path=path, start_line=start, end_line=end or start, quote=quote)


@pytest.fixture
def ctx(example_repo: Path) -> Context:
    return Context(root=example_repo)


def test_a_true_citation_verifies(ctx):
    c = cite(ctx, "shop/auth/tokens.py", 30)
    assert c is not None and c.quote.startswith("def validate_token")
    assert verify_citation(ctx.root, c) is None


@pytest.mark.parametrize(
    "citation, why",
    [
        (_cit("shop/auth/tokens.py", 30, quote="def forge_token"), "is not in the cited lines"),
        (_cit("shop/auth/tokens.py", 9000, quote="def"), "the file has"),
        (_cit("shop/nothing.py", 1), "does not exist"),
        (_cit("../outside.py", 1), "is not a path inside the root"),
        (_cit("/etc/passwd", 1, quote="root"), "is not a path inside the root"),
        (_cit("shop/auth/tokens.py", 30, quote="   "), "no quoted text"),
    ],
)
def test_the_evidence_gate_rejects_fabricated_citations(ctx, citation, why):
    assert why in (verify_citation(ctx.root, citation) or "")


def test_a_symlink_out_of_the_root_is_not_citable(ctx, tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text("password = 1\n")
    os.symlink(outside, ctx.root / "link.py")
    assert (
        "leads outside the root" in verify_citation(ctx.root, _cit("link.py", 1, quote="password"))
        or ""
    )


def _track(understand, complete=lambda s: (True, "done")) -> Track:
    return Track(spec=SPEC, understand=understand, complete=complete)


def test_gates_run_in_order_and_uncited_claims_are_dropped(ctx):
    def understand(state: TrackState):
        assert state.claim("validate_token checks expiry", cite(ctx, "shop/auth/tokens.py", 30))
        assert not state.claim("an uncited claim")  # never recorded
        state.findings.append(
            Finding(
                claim="a fabricated claim",
                citations=[_cit("shop/auth/tokens.py", 30, quote="def forge_token")],
            )
        )
        return True, "found"

    result, _ = run_track(ctx, _track(understand))
    assert [f.claim for f in result.findings] == ["validate_token checks expiry"]
    assert [g.name for g in result.gates] == ["understood", "evidence", "complete"]
    assert all(g.passed for g in result.gates)
    assert result.gates[1].detail == "1 claims verified against the files; 1 dropped"
    assert result.dropped[0].startswith("a fabricated claim (shop/auth/tokens.py:30:")


def test_a_failed_gate_stops_the_next_steps_and_is_reported(ctx):
    completed = []
    result, _ = run_track(
        ctx, _track(lambda s: (False, "nothing here"), lambda s: completed.append(1) or (True, ""))
    )
    assert completed == []
    assert result.gates == [
        GateResult(name="understood", passed=False, detail="nothing here"),
        GateResult(
            name="evidence", passed=False, ran=False, detail="not run: the understood gate failed"
        ),
        GateResult(
            name="complete", passed=False, ran=False, detail="not run: the evidence gate failed"
        ),
    ]
    assert not result.passed


def test_an_explorer_that_raises_fails_its_gate_without_raising(ctx):
    def boom(state):
        raise ValueError("bad input")

    result, _ = run_track(ctx, _track(boom))
    assert result.gates[0].detail == "error: ValueError: bad input"
    assert result.gaps == ["t explorer failed: error: ValueError: bad input"]


def test_deepen_splits_a_track_into_subtracks(ctx):
    def make(c: Context) -> Track:
        def understand(state):
            files = c.files()
            state.claim(f"{len(files)} files", cite(c, files[0], 1))
            return True, "ok"

        return Track(
            spec=SPEC.model_copy(update={"name": f"t:{c.scope or '.'}"}),
            understand=understand,
            complete=lambda s: (True, "ok"),
            split=lambda c: ["shop", "web"] if not c.scope else [],
            make=make,
        )

    deep = Context(root=ctx.root, deepen=2)
    result, _ = run_track(deep, make(deep))
    assert [s.track.name for s in result.subtracks] == ["t:shop", "t:web"]
    assert result.subtracks[1].findings[0].claim == "2 files"
    assert all(s.subtracks == [] for s in result.subtracks)


def test_context_scopes_files_to_a_directory_or_a_file(ctx):
    assert ctx.narrowed("web", deepen=0).files() == ["web/app.js", "web/format.js"]
    assert ctx.narrowed("shop/pricing.py", deepen=0).files() == ["shop/pricing.py"]
    assert ".env" not in ctx.files()  # the walk's secret rules apply


# -- the focus track -------------------------------------------------------------------


def test_focus_track_cites_the_code_that_answers(example_repo, fake_embedder):
    build_index(example_repo, embedder=fake_embedder)
    ctx = Context(
        root=example_repo,
        scope="shop",
        index_dir=example_repo / ".dowse",
        focus="where does validate_token reject expired tokens?",
    )
    result, _ = run_track(ctx, focus_track(ctx))
    assert result.passed, result.gates
    top = result.findings[0]
    assert top.citations[0].ref == "shop/auth/tokens.py:30-42"
    assert top.claim.startswith("`validate_token` at shop/auth/tokens.py:30-42 (relevance ")
    assert all(c.path.startswith("shop/") for f in result.findings for c in f.citations)
    assert result.dropped == []
    # A question nothing answers well still gets cited findings, but its complete gate
    # says it fell short.
    vague, _ = run_track(ctx, focus_track(ctx, "how is the database connection pooled?"))
    assert vague.findings
    assert vague.gates[2].detail.startswith("no result scored >= 0.7"), vague.gates


def test_focus_track_without_an_index_says_so(ctx):
    ctx.focus = "tokens"
    result, _ = run_track(ctx, focus_track(ctx))
    assert result.gates[0].detail == "no index: run `dowse index` first"
    assert "run `dowse index" in result.gaps[0]


# -- synthesis and budgets -------------------------------------------------------------


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(".")[0]


def _findings(name: str, *paths: str, passed: bool = True) -> TrackFindings:
    return TrackFindings(
        track=SPEC.model_copy(update={"name": name}),
        findings=[
            Finding(
                claim=f"`{_stem(p)}` is in {p} ({name})",
                citations=[_cit(p, 1, quote=f"def {_stem(p)}():")],
            )
            for p in paths
        ],
        gates=[GateResult(name="understood", passed=passed, detail="d")],
        gaps=[f"{name} gap"],
    )


def test_synthesis_finds_agreement_divergence_gaps_and_confidence():
    r = ExploreResult(
        path=".",
        root="/r",
        depth="deep",
        tracks=[
            _findings("tree", "a.py", "b.py"),
            _findings("imports", "a.py"),
            _findings("git", "a.py", "c.py"),
        ],
    )
    s = synthesize(r)
    # Statements with their citation, the most supported first; the tree lists key files:
    # it supports findings, it states none.
    assert (
        s.unified[0]
        == "`a` is in a.py (imports) (a.py:1) — supported by 3 tracks (git; imports; tree)"
    )
    assert [f.topic for f in s.findings] == ["a", "c"]
    assert [f.citations[0].ref for f in s.findings] == ["a.py:1", "c.py:1"]
    assert s.unified[1].endswith("supported by 1 track (git)")
    assert s.open_questions == ["tree gap", "imports gap", "git gap"]
    assert s.confidence == "High"
    r.tracks.append(_findings("patterns", "d.py", passed=False))
    s = synthesize(r)
    assert s.confidence == "Moderate"
    # A failed gate is the basis' and its track's, not a disagreement between tracks.
    assert s.divergences == [] and "3/4 tracks passed all gates" in s.basis


def _placing(track: str, claim: str, path: str, line: int, quote: str) -> TrackFindings:
    return TrackFindings(
        track=SPEC.model_copy(update={"name": track}),
        findings=[Finding(claim=claim, citations=[_cit(path, line, quote=quote)])],
        gates=[GateResult(name="understood", passed=True, detail="d")],
    )


def test_divergences_are_two_tracks_placing_one_name_apart():
    retrieval = _placing(
        "parsing",
        "`Parser.parse` at src/a.py:10-30 (relevance 0.9): it parses",
        "src/a.py",
        10,
        "def parse(self):",
    )
    agreeing = _placing(
        "← Parser.parse",
        "`main` in src/cli.py calls `Parser.parse` (src/a.py:10); resolved by import",
        "src/cli.py",
        4,
        "Parser().parse()",
    )
    elsewhere = _placing(
        "Parser.parse →",
        "`run` calls `Parser.parse` (src/legacy/a.py:3) at src/run.py:8; resolved by name",
        "src/run.py",
        8,
        "Parser().parse()",
    )
    same = ExploreResult(path=".", root="/r", depth="standard", tracks=[retrieval, agreeing])
    # The same definition (line 10 inside 10-30): the tracks agree, there is no section.
    assert synthesize(same).divergences == []
    assert "## Divergences" not in render_markdown(
        same.model_copy(update={"synthesis": synthesize(same)})
    )
    apart = same.model_copy(update={"tracks": [retrieval, agreeing, elsewhere]})
    s = synthesize(apart)
    assert s.divergences == [
        "`Parser.parse`: Parser.parse → places it at src/legacy/a.py:3, parsing at "
        "src/a.py:10-30 (two definitions of the name, or lines that moved)"
    ]
    text = render_markdown(apart.model_copy(update={"synthesis": s}))
    assert "## Divergences" in text and "src/legacy/a.py:3" in text


def test_a_part_of_a_long_definition_and_its_whole_agree():
    # xarray: the retrieval cites a chunk inside a long method (313-352), the callers its
    # definition (305-352): one definition, no divergence. With the definition's start
    # line alone (305) the two were taken for two definitions.
    part = _placing(
        "groupby",
        "`DataArrayResample.map` at xarray/core/resample.py:313-352 (relevance 0.8): maps",
        "xarray/core/resample.py",
        313,
        "return self.map(func)",
    )
    whole = _placing(
        "← DataArrayResample.map",
        "`DataArrayResample.apply` in xarray/core/resample.py calls `DataArrayResample.map` "
        "(xarray/core/resample.py:305-352); resolved within the file",
        "xarray/core/resample.py",
        360,
        "return self.map(func)",
    )
    r = ExploreResult(path=".", root="/r", depth="standard", tracks=[part, whole])
    assert synthesize(r).divergences == []
    start_only = whole.model_copy(deep=True)
    start_only.findings[0].claim = start_only.findings[0].claim.replace("305-352", "305")
    r = ExploreResult(path=".", root="/r", depth="standard", tracks=[part, start_only])
    assert len(synthesize(r).divergences) == 1  # the detector fires on what it is given
    # Two retrieved chunks of one long class in one file (flask's `Flask` at app.py:178-204
    # and app.py:248-252) are parts of one definition; in two files they are two.
    chunks = [
        _placing(n, f"`Flask` at src/flask/app.py:{a}-{b} (relevance 0.7): r", "app.py", a, "x")
        for n, a, b in (("sessions", 248, 252), ("templates", 178, 204))
    ]
    r = ExploreResult(path=".", root="/r", depth="standard", tracks=chunks)
    assert synthesize(r).divergences == []
    chunks[1].findings[0].claim = chunks[1].findings[0].claim.replace("app.py", "other.py")
    assert len(synthesize(r).divergences) == 1


def test_a_claim_is_a_finding_only_when_its_citation_holds_the_name_it_states():
    quoted = Finding(
        claim="`pkg.check` validates", citations=[_cit("a.py", 3, quote="def check(x):")]
    )
    elsewhere = Finding(claim="`check` validates", citations=[_cit("a.py", 3, quote="import os")])
    partial = Finding(
        claim="`check` validates", citations=[_cit("a.py", 3, quote="def checked():")]
    )
    r = ExploreResult(
        path=".",
        root="/r",
        depth="deep",
        tracks=[
            TrackFindings(
                track=SPEC.model_copy(update={"name": "focus"}),
                findings=[quoted, elsewhere, partial],
                gates=[GateResult(name="understood", passed=True, detail="d")],
            ),
            _findings("git", "b.py"),
        ],
    )
    s = synthesize(r)
    assert [(f.topic, f.citations[0].ref) for f in s.findings] == [
        ("pkg.check", "a.py:3"),
        ("b", "b.py:1"),
    ]
    # The top finding has one source: Low, whatever the gates say.
    assert s.confidence == "Low" and "supported by 1 track(s)" in s.basis


def _big_result() -> ExploreResult:
    tree = TreeNode(
        path=".",
        kind="dir",
        files=40,
        children=[
            TreeNode(
                path=f"d{i}",
                kind="dir",
                files=4,
                children=[TreeNode(path=f"d{i}/f{j}.py", kind="file") for j in range(4)],
            )
            for i in range(10)
        ],
    )
    return ExploreResult(
        path=".",
        root="/r",
        depth="standard",
        focus="q",
        tree=tree,
        summary="s",
        key_files=[KeyFile(path=f"k{i}.py", role="entry point " * 5) for i in range(50)],
        focus_findings=[
            Finding(claim="claim " * 20, citations=[_cit(f"f{i}.py", 1)]) for i in range(50)
        ],
    )


def test_a_budget_is_divided_across_sections_not_cut_at_the_end():
    r = _big_result()
    full = render_markdown(r)
    fitted = fit_budget(r, 600)
    text = render_markdown(fitted)
    assert len(text) / 3 <= 600 < len(full) / 3
    # every section keeps its best items instead of the last sections vanishing
    assert fitted.key_files and fitted.focus_findings and fitted.tree is not None
    assert fitted.key_files[0].path == "k0.py"
    assert fitted.focus_findings[0].claim == r.focus_findings[0].claim
    assert fitted.omitted["key_files"] == 50 - len(fitted.key_files)
    assert "left out for the token budget" in text
    # the upper tree levels are kept first
    assert len(fitted.tree.children) > 0
    assert sum(len(c.children) for c in fitted.tree.children) < 40


def test_a_generous_budget_keeps_everything():
    r = _big_result()
    assert fit_budget(r, 100_000).omitted == {}


def test_open_questions_say_what_an_agent_needs_not_the_explorers_limits():
    install = Command(
        kind="install",
        command="pip install -e .",
        source="CONTRIBUTING",
        citation=_cit("CONTRIBUTING.md", 4),
    )
    ci = [
        Command(
            kind="test",
            command=f"go test ${{{{ matrix.testflags }}}} ./... -run {n}",
            source="CI",
            citation=_cit(".github/workflows/t.yml", n),
        )
        for n in (7, 9)
    ]
    track = _findings("specialist:x", "a.py")
    track.gaps = [
        "`werkzeug` is imported by 27 of 83 Python files but is not installed here as Python "
        "source: no offline documentation, no specialist",
        "`_typeshed` is imported by 5 of 83 Python files but is not installed here as Python "
        "source: no offline documentation, no specialist",
        "measured on a sample of 40 of 83 files in 21 directories: counts are estimates",
        # The configuration explorer's own reach, stated by every configuration track.
        "settings read through a framework's own loader (a dict of defaults, a config "
        "object filled from a file by name) are found only as the files and types above",
    ]
    r = ExploreResult(path=".", root="/r", depth="deep", tracks=[track], commands=[install, *ci])
    assert synthesize(r).open_questions == [
        "`werkzeug` is imported by 27 of 83 Python files but is not installed here: its API "
        "could not be read, so whether the code calls it as documented is not known; "
        "`pip install -e .` (CONTRIBUTING.md:4) installs the dependencies",
        "the test command at .github/workflows/t.yml:7 takes `matrix.testflags` from CI: the "
        "values to run it with locally are not stated",
    ]


def test_the_configuration_shares_the_budget_a_few_of_each_kind():
    from dowse.explore.records import ConfigReport, Setting
    from dowse.explore.render import render_json

    r = ExploreResult(
        path=".",
        root="/r",
        depth="deep",
        config=ConfigReport(
            files=["config.toml"],
            env=[Setting(name=f"APP_VAR_{i}", path="src/env.py", line=i + 1) for i in range(60)],
            flags=[Setting(name=f"flag-{i}", path="src/cli.rs", line=i + 1) for i in range(150)],
            classes=[Setting(name="Options", path="src/opts.py", line=3)],
        ),
    )
    full = render_json(r)
    for fmt, show in (("json", render_json), ("markdown", render_markdown)):
        fitted = fit_budget(r, 800, fmt)
        assert fitted.config is not None
        cfg = fitted.config
        # It fits where the whole configuration (over 3,000 tokens) would not, and keeps
        # some of every kind, each at its site, saying how many it left out.
        assert len(show(fitted)) / 3 <= 800 < len(full) / 3
        assert cfg.env and cfg.flags and cfg.classes and cfg.files == ["config.toml"]
        assert cfg.flags[0].name == "flag-0" and cfg.env[0].name == "APP_VAR_0"
        assert fitted.omitted["config"] == 212 - len(cfg.env + cfg.flags + cfg.classes) - 1
    text = render_markdown(fit_budget(r, 800))
    assert "## Configuration" in text and "- flag `--flag-0` — `src/cli.rs:1`" in text
    assert fit_budget(r, 100_000).omitted == {}
