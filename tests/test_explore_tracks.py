"""Tracks, gates and the citation check; the focus track; synthesis; budgets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import commit_files, git, make_tree

from dowse.explore import explore
from dowse.explore.focus import focus_track
from dowse.explore.records import (
    Citation,
    Command,
    ExploreResult,
    Finding,
    GateResult,
    GitReport,
    KeyFile,
    Synthesis,
    TrackFindings,
    TrackSpec,
    TreeNode,
)
from dowse.explore.render import fit_budget, render_markdown
from dowse.explore.synthesis import _points_at, synthesize
from dowse.explore.tracks import Context, Track, TrackState, cite, run_track, verify_citation
from dowse.indexer.build import IndexConfig, build_index

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
        s.unified[0] == "`a` is in a.py (imports) (a.py:1) — supported by 3 independent tracks "
        "(git; imports; tree)"
    )
    assert [f.topic for f in s.findings] == ["a", "c"]
    assert [f.citations[0].ref for f in s.findings] == ["a.py:1", "c.py:1"]
    assert s.unified[1].endswith("supported by 1 independent track (git)")
    assert s.open_questions == ["tree gap", "imports gap", "git gap"]
    assert s.confidence == "High"
    r.tracks.append(_findings("patterns", "d.py", passed=False))
    s = synthesize(r)
    assert s.confidence == "Moderate"
    # A failed gate is the basis' and its track's, not a disagreement between tracks.
    assert s.divergences == [] and "3/4 tracks passed all gates" in s.basis


def _placing(
    track: str, claim: str, path: str, line: int, quote: str, focus: str = "."
) -> TrackFindings:
    return TrackFindings(
        track=SPEC.model_copy(update={"name": track, "focus": focus}),
        findings=[Finding(claim=claim, citations=[_cit(path, line, quote=quote)])],
        gates=[GateResult(name="understood", passed=True, detail="d")],
    )


QUESTION = "how does Parser.parse read the input and how are errors reported?"


def test_divergences_are_two_tracks_answering_one_question_with_two_definitions():
    retrieval = _placing(
        "parsing",
        "`Parser.parse` at src/a.py:10-30 (relevance 0.9): it parses",
        "src/a.py",
        10,
        "def parse(self):",
        focus="how does Parser.parse read the input",
    )
    agreeing = _placing(
        "← Parser.parse",
        "`main` in src/cli.py calls `Parser.parse` (src/a.py:10-30); resolved by import",
        "src/cli.py",
        4,
        "Parser().parse()",
        focus=QUESTION,
    )
    elsewhere = _placing(
        "← Parser.parse",
        "`run` in src/run.py calls `Parser.parse` (src/legacy/a.py:3-9); matched by name alone",
        "src/run.py",
        8,
        "Parser().parse()",
        focus=QUESTION,
    )
    same = ExploreResult(path=".", root="/r", depth="standard", tracks=[retrieval, agreeing])
    # The same definition (line 10-30 both): the tracks agree, there is no section.
    assert synthesize(same).divergences == []
    assert "## Divergences" not in render_markdown(
        same.model_copy(update={"synthesis": synthesize(same)})
    )
    apart = same.model_copy(update={"tracks": [retrieval, elsewhere]})
    s = synthesize(apart)
    assert s.divergences == [
        "`Parser.parse`: parsing answers with the definition at src/a.py:10-30 (cited at "
        "src/a.py:10), ← Parser.parse with the one at src/legacy/a.py:3-9 (cited at "
        "src/run.py:8): two definitions of the name, or lines that moved"
    ]
    text = render_markdown(apart.model_copy(update={"synthesis": s}))
    assert "## Divergences" in text and "src/legacy/a.py:3-9" in text


def test_a_class_and_a_method_of_one_name_in_two_files_are_two_definitions():
    # django, "how does Template.render render a context and who calls Template.render?":
    # the retrieval answers with template/base.py's `Template`, the callers with
    # template/backends/django.py's `Template.render`; a sub-question's "(in .)" is where
    # it looked, not what it asked.
    question = "how does Template.render render a context and who calls Template.render?"
    retrieval = _placing(
        "Template.render calls",
        "`Template` at django/template/base.py:138-173 (relevance 0.8): the template",
        "django/template/base.py",
        138,
        "class Template:",
        focus="who calls Template.render (in .)",
    )
    callers = _placing(
        "← Template.render",
        "`render` in django/forms/renderers.py calls `Template.render` "
        "(django/template/backends/django.py:56-63); resolved by import",
        "django/forms/renderers.py",
        29,
        "template.render(context, request=request)",
        focus=question,
    )
    r = ExploreResult(path=".", root="/r", depth="standard", tracks=[retrieval, callers])
    assert synthesize(r).divergences == [
        "`Template.render`: Template.render calls answers with `Template` at "
        "django/template/base.py:138-173 (cited at django/template/base.py:138), "
        "← Template.render with `Template.render` at django/template/backends/django.py:56-63 "
        "(cited at django/forms/renderers.py:29): two definitions of the name in two files"
    ]
    # One name qualified two ways (tokio's `block_on` and `LocalSet.block_on`) likewise.
    retrieval.findings[0].claim = "`LocalSet.block_on` at src/local.rs:604-642 (relevance 0.7)"
    callers.findings[0].claim = "`run` in src/a.rs calls `block_on` (src/block_on.rs:4-13)"
    assert [d.split(":")[0] for d in synthesize(r).divergences] == ["`block_on`"]
    # Two classes' methods of one name (xarray's `Variable.chunk`, `DataArray.chunk`) each
    # answer for their class: no divergence, unless the question writes one of them.
    retrieval.findings[0].claim = "`Variable.chunk` at src/variable.py:604-642 (relevance 0.7)"
    callers.findings[0].claim = "`run` in src/a.py calls `DataArray.chunk` (src/dataarray.py:4-13)"
    assert synthesize(r).divergences == []
    asks_one = r.model_copy(deep=True)
    asks_one.tracks[1].track.focus = "who calls DataArray.chunk?"
    asks_one.tracks[0].track.focus = "who calls DataArray.chunk? (in .)"
    assert [d.split(":")[0] for d in synthesize(asks_one).divergences] == ["`chunk`"]
    # Two classes' constructors are two classes, not two answers for one name.
    retrieval.findings[0].claim = "`Worker.__init__` at src/local.rs:604-642 (relevance 0.7)"
    callers.findings[0].claim = "`run` in src/a.rs calls `Pool.__init__` (src/block_on.rs:4-13)"
    assert synthesize(r).divergences == []
    # In one file a class's chunk and its method may be one definition: no divergence.
    callers.findings[0].claim = "`run` in src/a.rs calls `LocalSet.block_on` (src/local.rs:700)"
    retrieval.findings[0].claim = "`LocalSet` at src/local.rs:300-340 (relevance 0.7)"
    assert synthesize(r).divergences == []


@pytest.mark.parametrize(
    "type_path, method_path, diverges",
    [
        # Go: a method is declared in any file of its receiver's package (a directory).
        ("command.go", "flag_groups.go", False),
        ("command.go", "doc/flag_groups.go", True),
        # Rust: an `impl` may be in any module of the type's crate (one `src/`).
        ("crates/searcher/src/searcher/mod.rs", "crates/searcher/src/sink.rs", False),
        ("crates/searcher/src/searcher/mod.rs", "crates/printer/src/sink.rs", True),
        # Python: a class's methods are in its body.
        ("cobra/command.py", "cobra/flag_groups.py", True),
    ],
)
def test_a_type_and_its_method_in_two_files_of_one_package_are_one_type(
    type_path, method_path, diverges
):
    # cobra, "how are flag groups checked and how are required flags enforced?": the
    # retrieval answered with `Command` (command.go), the callers with its method
    # `Command.enforceFlagGroupsForCompletion` (flag_groups.go), one Go type.
    question = "how are flag groups checked and how are required flags enforced?"
    retrieval = _placing(
        "flag groups",
        f"`Command` at {type_path}:54-120 (relevance 0.8): the command",
        type_path,
        54,
        "type Command struct {",
        focus=question,
    )
    callers = _placing(
        "← Command.enforceFlagGroupsForCompletion",
        f"`run` in main.go calls `Command.enforceFlagGroupsForCompletion` ({method_path}:168-190)",
        "main.go",
        7,
        "c.enforceFlagGroupsForCompletion()",
        focus=question,
    )
    r = ExploreResult(path=".", root="/r", depth="standard", tracks=[retrieval, callers])
    found = [d.split(":")[0] for d in synthesize(r).divergences]
    assert found == (["`Command.enforceFlagGroupsForCompletion`"] if diverges else [])


def test_tracks_on_different_ground_or_past_their_top_finding_do_not_diverge():
    # ripgrep: globset's `Parser` answers "glob sets compiled", the flags' `Parser`
    # answers "flags parsed": two sub-questions, two names that happen to be one word.
    globs = _placing(
        "glob sets",
        "`Parser` at globset/src/glob.rs:700-760 (relevance 0.8): parses globs",
        "globset/src/glob.rs",
        700,
        "struct Parser",
        focus="how are glob sets compiled",
    )
    flags = _placing(
        "flags parsed",
        "`Parser` at core/flags/parse.rs:20-80 (relevance 0.8): parses flags",
        "core/flags/parse.rs",
        20,
        "struct Parser",
        focus="how are flags parsed",
    )
    r = ExploreResult(path=".", root="/r", depth="standard", tracks=[globs, flags])
    assert synthesize(r).divergences == []
    # One question, but the name is not the second track's top finding: no disagreement
    # about what answers it.
    flags.track.focus = globs.track.focus
    flags.findings.insert(
        0,
        Finding(
            claim="`Glob` at globset/src/glob.rs:80-120 (relevance 0.9): a glob",
            citations=[_cit("globset/src/glob.rs", 80, quote="pub struct Glob")],
        ),
    )
    assert synthesize(r).divergences == []
    flags.findings.pop(0)
    assert len(synthesize(r).divergences) == 1  # the same question, top findings apart
    # Unless both come from one look-up (the callers and the callees of one definition).
    globs.track.source = flags.track.source = "references of glob.rs:Parser"
    assert synthesize(r).divergences == []


def test_one_setting_given_two_values_by_two_tracks_is_a_divergence():
    config = _placing(
        "FLASK_RUN_PORT",
        "the environment variable `FLASK_RUN_PORT` is used at src/cli.py:40",
        "src/cli.py",
        40,
        'port = int(os.environ.get("FLASK_RUN_PORT", "5000"))',
    )
    retrieval = _placing(
        "server port",
        "`run` at src/app.py:10-20 (relevance 0.8): runs the server",
        "src/app.py",
        12,
        'port = os.getenv("FLASK_RUN_PORT", 8000)',
    )
    r = ExploreResult(path=".", root="/r", depth="standard", tracks=[config, retrieval])
    assert synthesize(r).divergences == [
        '`FLASK_RUN_PORT`: FLASK_RUN_PORT cites the value "5000" (src/cli.py:40), server port '
        "the value 8000 (src/app.py:12): two values of one setting"
    ]
    # The same value (quoted or not) in both: they agree.
    retrieval.findings[0].citations[0].quote = 'port = os.getenv("FLASK_RUN_PORT", 5000)'
    assert synthesize(r).divergences == []
    # A constant given two values, and a value read with no default: one divergence.
    config.findings[0].citations[0].quote = "DEFAULT_TIMEOUT = 30"
    retrieval.findings[0].citations[0].quote = "const DEFAULT_TIMEOUT: u64 = 60;"
    assert [d.split(":")[0] for d in synthesize(r).divergences] == ["`DEFAULT_TIMEOUT`"]
    retrieval.findings[0].citations[0].quote = 'timeout = os.environ["DEFAULT_TIMEOUT"]'
    assert synthesize(r).divergences == []


def _line_at(root: Path, ref: str) -> str:
    path, line = ref.rsplit(":", 1)
    return (root / path).read_text().splitlines()[int(line) - 1]


def test_an_imported_entry_point_cites_the_trees_line_and_an_import(tmp_path):
    make_tree(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/util.py": "def make():\n    return 1\n",
            "shop/app.py": "from shop import util\n\napp = util.make()\n",
            "shop/views.py": "from shop.app import app\n",
            "shop/admin.py": "import os\nfrom shop.app import app\n",
        },
    )
    result = explore(tmp_path, depth="deep")
    assert result.synthesis.divergences == [
        "`shop/app.py` is an entry point by convention (application entry point, "
        "shop/app.py:3) but other modules import it (as at shop/admin.py:2)"
    ]
    # Each side's line holds what it says: the role's line, and an import of the module.
    assert _line_at(tmp_path, "shop/app.py:3") == "app = util.make()"
    assert _line_at(tmp_path, "shop/admin.py:2") == "from shop.app import app"


def test_an_answer_in_a_changed_file_cites_the_answer_and_the_first_changed_line(
    tmp_path, fake_embedder, isolated_git
):
    body = "".join(f"def helper_{i}():\n    return {i}\n\n" for i in range(6))
    source = body + "def validate_token(token):\n    return token == 'ok'\n"
    git(tmp_path, "init", "-q", "-b", "main")
    commit_files(tmp_path, {"auth.py": source, "other.py": "X = 1\n"}, "first")
    changed = source.replace("return 3\n", "return 33\n")
    (tmp_path / "auth.py").write_text(changed)
    build_index(tmp_path, config=IndexConfig(embed=False), embedder=fake_embedder)
    result = explore(tmp_path, focus="where is validate_token defined?", depth="deep")
    moving = [d for d in result.synthesis.divergences if "uncommitted" in d]
    assert len(moving) == 1
    assert moving[0].startswith("`auth.py` answers the focus (auth.py:")
    assert moving[0].endswith("has uncommitted changes (git, auth.py:11): its lines may move")
    # git's side is the line that changed, the focus' side a line of the answer.
    assert _line_at(tmp_path, "auth.py:11") == "    return 33"
    path, lines = moving[0].split("(", 1)[1].split(")", 1)[0].split(":")
    first, _, last = lines.partition("-")
    answer = (tmp_path / path).read_text().splitlines()[int(first) - 1 : int(last or first)]
    assert any("def validate_token" in line for line in answer)


def test_a_changed_answer_cites_gits_claim_about_that_very_file():
    # git's claim about lib/auth.py is not one about auth.py.
    git = _placing(
        "git", "lib/auth.py has uncommitted changes (M) from line 3", "lib/auth.py", 3, "x"
    )
    git.findings.append(
        Finding(
            claim="auth.py has uncommitted changes (M) from line 11",
            citations=[_cit("auth.py", 11)],
            topic="uncommitted",
        )
    )
    git.findings[0].topic = "uncommitted"
    r = ExploreResult(
        path=".",
        root="/r",
        depth="deep",
        tracks=[git],
        git=GitReport(uncommitted=["M auth.py", "M lib/auth.py"]),
        focus_findings=[Finding(claim="`check` at auth.py:5-9", citations=[_cit("auth.py", 5, 9)])],
    )
    assert synthesize(r).divergences == [
        "`auth.py` answers the focus (auth.py:5-9) and has uncommitted changes (git, "
        "auth.py:11): its lines may move"
    ]


def _retrieved(name: str, *ranges: tuple[str, int, int]) -> TrackFindings:
    return TrackFindings(
        track=SPEC.model_copy(update={"name": name}),
        findings=[
            Finding(
                claim=f"`{_stem(p)}` at {p}:{a}-{b} (relevance 0.9): it is",
                citations=[_cit(p, a, b, quote=f"def {_stem(p)}():")],
            )
            for p, a, b in ranges
        ],
        gates=[GateResult(name="understood", passed=True, detail="d")],
    )


def _callers_of_a(name: str = "← a", source: str = "") -> TrackFindings:
    """Two callers of `a` in b.py: cited at their calls, placing `a` at a.py:10-30."""
    return TrackFindings(
        track=SPEC.model_copy(update={"name": name, "source": source, "role": "callers"}),
        findings=[
            Finding(
                claim=f"`c{i}` in b.py calls `a` (a.py:10-30); resolved through an import",
                citations=[_cit("b.py", i, quote="a(x)")],
            )
            for i in (3, 9)
        ],
        gates=[GateResult(name="understood", passed=True, detail="d")],
    )


def _callee_of_a(line: int, source: str = "", path: str = "a.py") -> TrackFindings:
    """`a` calling `h` at `path`:`line` (its own hit), placing `h` at c.py:1-3."""
    return TrackFindings(
        track=SPEC.model_copy(update={"name": "a →", "source": source, "role": "callees"}),
        findings=[
            Finding(
                claim=f"`a` calls `h` (c.py:1-3) at {path}:{line}; resolved through an import",
                citations=[_cit(path, line, quote="h(t)")],
            )
        ],
        gates=[GateResult(name="understood", passed=True, detail="d")],
    )


def _support_of(s: Synthesis, start: str) -> str:
    return next(u for u in s.unified if u.startswith(start)).rsplit(" — ", 1)[1]


def test_support_counts_independent_tracks_at_the_finding_not_its_file():
    # Two searches that returned the same chunks are one source. A track that cites the
    # same file at other lines supports nothing.
    tokens = _retrieved("tokens", ("a.py", 10, 30), ("b.py", 1, 20))
    expiry = _retrieved("expiry", ("a.py", 10, 30), ("b.py", 1, 20), ("d.py", 1, 5))
    elsewhere = _findings("git", "a.py")
    elsewhere.findings[0].citations[0].start_line = elsewhere.findings[0].citations[0].end_line = 90
    r = ExploreResult(path=".", root="/r", depth="standard", tracks=[tokens, expiry, elsewhere])
    s = synthesize(r)
    assert s.unified[0].endswith("supported by 1 independent track (expiry & tokens)")
    assert s.confidence == "Low" and "the top finding has 1 independent source" in s.basis
    # The callers of `a` point at their calls in b.py (inside the searches' b.py:1-20): a
    # second source there. Placing `a` at a.py:10-30 is where the index says the name
    # they looked up is, not a hit of theirs: `a` keeps its one source.
    r.tracks = [tokens, expiry, _callers_of_a(), elsewhere]
    s = synthesize(r)
    assert s.unified[0] == (
        "`c3` in b.py calls `a` (a.py:10-30); resolved through an import (b.py:3) — "
        "supported by 2 independent tracks (expiry & tokens; ← a)"
    )
    assert s.confidence == "High" and "the top finding has 2 independent sources" in s.basis
    assert (
        _support_of(s, "`a` at a.py:10-30") == "supported by 1 independent track (expiry & tokens)"
    )
    # The callees of `a` cite its calls, inside a.py:10-30: they point at `a`.
    r.tracks = [tokens, expiry, _callee_of_a(12), elsewhere]
    s = synthesize(r)
    assert s.unified[0] == (
        "`a` at a.py:10-30 (relevance 0.9): it is — supported by 2 independent tracks "
        "(a →; expiry & tokens)"
    )
    # What the callees found `a` calls is theirs: `h` (c.py:1-3) points at c.py:1-3.
    r.tracks = [_retrieved("hashing", ("c.py", 1, 3)), _callee_of_a(12)]
    assert _support_of(synthesize(r), "`c` at c.py:1-3") == (
        "supported by 2 independent tracks (a →; hashing)"
    )
    # The callers and the callees of the same definitions are one look-up of the
    # references: one source, whatever their hits.
    callee = _callee_of_a(5, source="refs of a", path="b.py")
    r.tracks = [tokens, _callers_of_a(source="refs of a"), callee]
    assert _support_of(synthesize(r), "`b` at b.py:1-20") == (
        "supported by 2 independent tracks (a → & ← a; tokens)"
    )
    callee.track.source = ""
    assert _support_of(synthesize(r), "`b` at b.py:1-20") == (
        "supported by 3 independent tracks (a →; tokens; ← a)"
    )
    # Searches that met at one chunk only corroborate it.
    r.tracks = [tokens, _retrieved("expiry", ("a.py", 10, 30), ("e.py", 1, 5)), elsewhere]
    assert synthesize(r).unified[0].endswith("supported by 2 independent tracks (expiry; tokens)")


@pytest.mark.parametrize(
    ("hit", "at", "points"),
    [
        (("a.py", 12, 12), ("a.py", 10, 30), True),  # a line inside a chunk
        (("a.py", 31, 31), ("a.py", 10, 30), True),  # the line after it (WIDER)
        (("a.py", 33, 33), ("a.py", 10, 30), False),  # the next method
        (("a.py", 25, 60), ("a.py", 10, 30), True),  # two overlapping places
        (("b.py", 12, 12), ("a.py", 10, 30), False),  # another file
        # A region (a 1,500-line class, a module's lines) points only at its head.
        (("a.py", 9, 1500), ("a.py", 10, 30), True),
        (("a.py", 9, 1500), ("a.py", 400, 420), False),
        (("a.py", 400, 400), ("a.py", 9, 1500), False),
        (("a.py", 1, 200), ("a.py", 1, 40), True),
    ],
)
def test_a_hit_points_at_a_finding_at_its_place_not_in_its_file(hit, at, points):
    assert _points_at(hit, at) is points
    assert _points_at(at, hit) is points


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
    # pytest's guide names a tool's install first: the project's own install settles it.
    tool = install.model_copy(update={"command": "pip install --user pre-commit"})
    r = ExploreResult(
        path=".", root="/r", depth="deep", tracks=[track], commands=[tool, install, *ci]
    )
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


def _role(role: str, name: str, *claims: tuple[str, str, int, str, str]) -> TrackFindings:
    """A track of `role` whose findings are (claim, path, line, quote, topic)."""
    return TrackFindings(
        track=SPEC.model_copy(update={"name": name, "role": role}),
        findings=[
            Finding(claim=c, citations=[_cit(p, n, quote=q)], topic=t) for c, p, n, q, t in claims
        ],
        gates=[GateResult(name="understood", passed=True, detail="d")],
    )


def test_the_statement_composes_the_tracks_findings_each_at_its_citation():
    # The claims as the explorers write them: the retrieval's answer, its callers and
    # callees (the references), its tests, a setting, a co-change pair.
    tracks = [
        _role(
            "answer",
            "tokens validated",
            (
                "`validate_token` at auth/tokens.py:30-42 (relevance 0.9): checks expiry",
                "auth/tokens.py",
                30,
                "def validate_token(token, key):",
                "auth/tokens.py",
            ),
        ),
        _role(
            "callers",
            "← validate_token",
            *(
                (
                    f"`{who}` in {path} calls `validate_token` (auth/tokens.py:30-42); "
                    "resolved through an import",
                    path,
                    line,
                    "validate_token(t, KEY)",
                    "validate_token",
                )
                for who, path, line in [
                    ("authenticate", "api/routes.py", 12),
                    ("refresh", "api/session.py", 88),
                    ("login", "api/login.py", 5),
                ]
            ),
        ),
        _role(
            "callees",
            "validate_token →",
            (
                "`validate_token` calls `_sign` (auth/tokens.py:10-14) at auth/tokens.py:36; "
                "resolved within the file",
                "auth/tokens.py",
                36,
                "_sign(body, key)",
                "_sign",
            ),
        ),
        _role(
            "tests",
            "test_tokens.py",
            (
                # A fixture is no test of what it calls: not "tested at".
                "test support: `client` in tests/conftest.py calls `validate_token` "
                "(auth/tokens.py:30-42)",
                "tests/conftest.py",
                20,
                "validate_token(t, KEY)",
                "validate_token",
            ),
            (
                # Nor a helper module the tests import, whatever its path says.
                "test support: `ready` in tests/util.rs calls `validate_token` "
                "(auth/tokens.py:30-42)",
                "tests/util.rs",
                4,
                "validate_token(t, KEY)",
                "validate_token",
            ),
            (
                "`test_round_trip` in tests/test_tokens.py calls `validate_token` "
                "(auth/tokens.py:30-42)",
                "tests/test_tokens.py",
                8,
                "validate_token(token, b'k')",
                "validate_token",
            ),
            (
                "tests/test_auth.py is named after auth/__init__.py (`test_auth.py` for `auth`)",
                "tests/test_auth.py",
                1,
                "import auth",
                "auth",
            ),
        ),
        _role(
            "config",
            "TOKEN_TTL",
            (
                "the environment variable `TOKEN_TTL` is used at conf.py:5",
                "conf.py",
                5,
                "os.environ['TOKEN_TTL']",
                "config env",
            ),
        ),
        _role(
            "history",
            "tokens.py ± routes.py",
            (
                "auth/tokens.py and api/routes.py changed together in 3 commits (3 of 4 "
                "commits of auth/tokens.py), as in 1a2b3c4 2024-01-03 rotate keys",
                "auth/tokens.py",
                1,
                "import hmac",
                "co-change",
            ),
        ),
    ]
    s = synthesize(ExploreResult(path=".", root="/r", depth="standard", tracks=tracks))
    assert s.statement == (
        "`validate_token` is at auth/tokens.py:30-42, is called from api/routes.py:12 and "
        "api/session.py:88 (and 1 more caller), calls `_sign` (auth/tokens.py:36), and is "
        "tested at tests/test_tokens.py:8; test files named after its files: "
        "tests/test_auth.py:1; set by `TOKEN_TTL` at conf.py:5; auth/tokens.py changes with "
        "api/routes.py (3 commits, as in 1a2b3c4)"
    )
    # A definition only the references found is stated at the location they give it.
    s = synthesize(ExploreResult(path=".", root="/r", depth="standard", tracks=tracks[1:2]))
    assert s.statement == (
        "`validate_token` is at auth/tokens.py:30-42 and is called from api/routes.py:12 and "
        "api/session.py:88 (and 1 more caller)"
    )
    # No track places a definition: nothing to compose.
    assert (
        synthesize(
            ExploreResult(path=".", root="/r", depth="standard", tracks=tracks[4:])
        ).statement
        == ""
    )


def test_the_statement_leads_with_the_definition_the_question_writes():
    answer = _role(
        "answer",
        "tokens",
        *(
            (f"`{name}` at auth/tokens.py:{a}-{b} (relevance 0.8): r", "auth/tokens.py", a, q, "")
            for name, a, b, q in [
                ("_sign", 10, 14, "def _sign(body, key):"),
                ("validate_token", 30, 42, "def validate_token(token, key):"),
            ]
        ),
    )
    other = _role(
        "answer",
        "expiry",
        ("`Clock.now` at auth/clock.py:3-5 (relevance 0.9): r", "auth/clock.py", 3, "def now", ""),
        # The class whose method the question names is not the name it writes.
        ("`Tokens` at auth/tokens.py:1-50 (relevance 0.7): r", "auth/tokens.py", 1, "class", ""),
    )
    answer.track.focus = "how does Tokens.validate_token check a token (in .)"
    other.track.focus = "what sets the expiry (in .)"
    s = synthesize(ExploreResult(path=".", root="/r", depth="standard", tracks=[other, answer]))
    # The first track's top finding, but the name the question writes leads.
    assert s.statement == (
        "`validate_token` is at auth/tokens.py:30-42; `Clock.now` is at auth/clock.py:3-5"
    )
