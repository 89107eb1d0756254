"""`dowse explore` and `dowse ask` handing off, end to end through the CLI (fake embedder)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import git

from dowse.explore.run import explore
from dowse.explore.tracks import verify_citation
from dowse.indexer.build import build_index
from dowse.retrieval.ask import estimate_tokens

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def repo(example_repo: Path, isolated_git) -> Path:
    """The example repo with a small git history: two commits, one uncommitted change."""
    git(example_repo, "init", "-q", "-b", "main")
    git(example_repo, "add", "-A")
    git(example_repo, "commit", "-q", "-m", "shop: first version", day=1)
    tokens = example_repo / "shop" / "auth" / "tokens.py"
    tokens.write_text(tokens.read_text() + "\n# rotate keys yearly\n")
    routes = example_repo / "shop" / "api" / "routes.py"
    routes.write_text(routes.read_text() + "\n# see tokens\n")
    git(example_repo, "commit", "-q", "-am", "auth: note key rotation", day=2)
    (example_repo / "shop" / "pricing.py").write_text(
        (example_repo / "shop" / "pricing.py").read_text() + "\n# wip\n"
    )
    return example_repo


@pytest.fixture
def indexed(repo: Path, fake_embedder) -> Path:
    build_index(repo, embedder=fake_embedder)
    return repo


def _normalized(data: dict) -> dict:
    """The report without what varies from run to run: the root and the timings."""
    data["root"] = "<root>"
    data["timings"] = {}

    def scrub(track: dict) -> None:
        track["seconds"] = 0.0
        for sub in track["subtracks"]:
            scrub(sub)

    for track in data["tracks"]:
        scrub(track)
    return data


def test_golden_explore_report(indexed, run):
    out = run(
        "explore",
        str(indexed),
        "--depth",
        "deep",
        "--json",
        "--focus",
        "where does validate_token reject expired tokens?",
    ).output
    data = _normalized(json.loads(out))
    golden = GOLDEN / "explore_example.json"
    if os.environ.get("DOWSE_UPDATE_GOLDEN"):
        golden.write_text(json.dumps(data, indent=2) + "\n")
    assert data == json.loads(golden.read_text())


def test_deep_explore_runs_every_track_and_every_claim_holds(indexed):
    result = explore(indexed, depth="deep", focus="where does validate_token reject tokens?")
    names = [t.track.name for t in result.tracks]
    assert names[:7] == ["commands", "tree", "manifest", "patterns", "focus", "imports", "git"]
    assert all(t.dropped == [] for t in result.tracks)
    top = [f.citations[0] for f in result.focus_findings[:2]]
    assert ("shop/auth/tokens.py", 30) in [(c.path, c.start_line) for c in top]
    assert result.git is not None and result.git.uncommitted == ["M shop/pricing.py"]
    # co-change is computed for the files that answer the focus, each pair once
    assert [(sorted(p[:2]), p[2]) for p in result.git.co_change] == [
        (["shop/api/routes.py", "shop/auth/tokens.py"], 2)
    ]
    assert result.timings["wall"] > 0 and result.timings["sum"] >= max(
        t.seconds for t in result.tracks
    )
    assert result.synthesis.confidence in ("High", "Moderate")
    assert any("shop/auth/tokens.py" in u for u in result.synthesis.unified)
    _assert_findings_hold(result.synthesis, indexed)


def _assert_findings_hold(synthesis, root):
    """Every stated finding cites lines of a file in the tree that hold the name it states."""
    assert synthesis.findings and len(synthesis.findings) == len(synthesis.unified)
    for f, line in zip(synthesis.findings, synthesis.unified, strict=True):
        (c,) = f.citations
        assert verify_citation(root, c) is None
        lines = (root / c.path).read_text().split("\n")[c.start_line - 1 : c.end_line]
        short = [p for p in re.split(r"\W+", f.topic) if p][-1]
        assert any(re.search(rf"\b{re.escape(short)}\b", ln) for ln in lines), f
        assert c.ref in line and f"`{f.topic}`" in line


@pytest.mark.parametrize(
    "depth, tracks",
    [
        ("shallow", ["commands", "tree", "manifest"]),
        # + configuration, left out here: the example reads no settings
        ("standard", ["commands", "tree", "manifest", "patterns"]),
    ],
)
def test_depth_picks_the_tracks(repo, depth, tracks):
    result = explore(repo, depth=depth)
    assert [t.track.name for t in result.tracks] == tracks
    assert result.imports is None and result.git is None


def test_explore_a_subdirectory_or_a_file(indexed, run):
    sub = json.loads(run("explore", str(indexed / "shop" / "auth"), "--json").output)
    assert sub["path"] == "shop/auth" and sub["tree"]["files"] == 2
    one = json.loads(run("explore", str(indexed / "shop" / "pricing.py"), "--json").output)
    assert one["path"] == "shop/pricing.py" and one["tree"]["kind"] == "file"


def test_explore_is_read_only(repo, run):
    before = sorted(
        p.relative_to(repo).as_posix() for p in repo.rglob("*") if ".git/" not in p.as_posix()
    )
    run("explore", str(repo), "--depth", "deep")
    after = sorted(
        p.relative_to(repo).as_posix() for p in repo.rglob("*") if ".git/" not in p.as_posix()
    )
    assert after == before and not (repo / ".dowse").exists()


def test_explore_markdown_fits_its_budget(indexed, run):
    full = run("explore", str(indexed), "--depth", "deep").output
    fitted = run("explore", str(indexed), "--depth", "deep", "--budget", "750").output
    assert estimate_tokens(fitted) <= 750 < estimate_tokens(full)
    for heading in ("## Key files", "## Tree", "## Patterns", "## Tracks"):
        assert heading in fitted  # every section keeps its best, none is cut off
    assert "left out for the token budget" in fitted


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["explore", "/nonexistent/dir"],
            "cannot explore /nonexistent/dir: no such file or directory",
        ),
        (["explore", ".", "--focus", "  "], "the focus is empty"),
        (["explore", ".", "--depth", "huge"], "'huge' is not one of"),
        (["explore", ".", "--budget", "10"], "10 is not in the range x>=200"),
    ],
)
def test_explore_bad_input_is_a_one_line_error(run, args, message):
    result = run(*args, code=2 if "--depth" in args or "--budget" in args else 1)
    assert message in result.output
    assert "Traceback" not in result.output


def test_ask_hands_a_broad_question_to_parallel_tracks(indexed, run):
    out = json.loads(
        run(
            "ask",
            "how does token authentication work?",
            "--path",
            str(indexed),
            "--json",
            "--budget",
            "3000",
        ).output
    )
    assert out["mode"] == "exploration" and out["why"].startswith("an architecture question")
    # At 3,000 tokens the code comes first: the plan says which tracks ran, their records
    # are left out (`fit_report`); with room for everything, they are all there.
    assert 3 <= len(out["plan"]) <= 7 and "token authentication" in {p["name"] for p in out["plan"]}
    assert out["files"] and out["tokens"] <= 3000
    assert any(b["form"] == "full" for b in out["context"])
    question = "how does token authentication work?"
    out = json.loads(
        run("ask", question, "--path", str(indexed), "--json", "--budget", "20000").output
    )
    assert 3 <= len(out["plan"]) <= 7
    names = {t["track"]["name"] for t in out["tracks"]}
    assert "token authentication" in names
    # The tests are named after the test file that calls the answer's definitions; the
    # configuration found nothing to be named after (none here): stated under `empty`.
    assert "test_tokens.py" in names and not any(n.endswith("(tests/)") for n in names)
    assert any(e.startswith("token authentication (settings): ") for e in out["empty"])
    # the callers and callees tracks are named after the definitions they looked up
    assert any(n.startswith("← ") for n in names) and any(n.endswith(" →") for n in names)
    assert out["synthesis"]["confidence"] in ("High", "Moderate", "Low")
    text = run("ask", "how does token authentication work?", "--path", str(indexed)).output
    assert "## Track: token authentication" in text and "## Synthesis" in text


def test_ask_keeps_a_focused_question_to_one_loop(indexed, run):
    out = json.loads(
        run("ask", "where is validate_token defined?", "--path", str(indexed), "--json").output
    )
    assert out["mode"] == "retrieval" and out["tracks"] == [] and out["plan"] == []
    forced = json.loads(
        run(
            "ask",
            "where is validate_token defined?",
            "--path",
            str(indexed),
            "--json",
            "--mode",
            "exploration",
        ).output
    )
    assert forced["mode"] == "exploration" and forced["tracks"]
