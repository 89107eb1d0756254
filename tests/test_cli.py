"""The command line as a user drives it: exit codes, stdout/stderr, exact errors."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import REPO

from dowse.cli import cli
from dowse.retrieval.ask import UNEVALUATED_CLOSE_REASON, UNEVALUATED_REASON
from dowse.retrieval.budget import estimate_tokens


@pytest.fixture
def indexed(tmp_path, fake_embedder, indexed_examples):
    """The example as `dowse index` leaves it (the session's build, copied: conftest)."""
    return indexed_examples.copy(tmp_path / "example")


def test_every_command_has_help_with_an_example(run):
    for name, command in cli.commands.items():
        assert command.help, name
        assert "Example" in command.help, name
        assert "Example" in run(name, "--help").output


def test_index_then_status_json(indexed, run):
    out = json.loads(run("status", str(indexed), "--json").output)
    assert out["files"] > 10 and out["symbols"] > 20
    assert out["file_vectors"] == out["files"] and out["vectors"] == 0  # --embed files
    assert out["changed"] == {"modified": 0, "added": 0, "deleted": 0}
    python = next(x for x in out["languages"] if x["language"] == "python")
    assert python["files"] == 10


def test_status_counts_changes_and_lists_skipped(indexed, run):
    (indexed / "shop" / "pricing.py").write_text("X = 1\n")
    (indexed / "shop" / "new.py").write_text("Y = 2\n")
    text = run("status", str(indexed), "--skipped").output
    assert "1 modified, 1 added, 0 deleted" in text
    assert ".env  (secret: .env file)" in text


def test_index_json_summary_and_noop(example_repo, fake_embedder, run):
    first = json.loads(run("index", str(example_repo), "--json", "--quiet").output)
    second = json.loads(run("index", str(example_repo), "--json", "--quiet").output)
    assert first["parsed"] == first["files"] > 0
    assert second["parsed"] == 0 and second["embedded"] == 0
    assert second["unchanged"] == first["files"]


def test_search_finds_a_definition_by_name(indexed, run):
    out = json.loads(
        run(
            "search", "validate_token", "--path", str(indexed), "--grain", "symbol", "--json"
        ).output
    )
    top = out[0]
    assert (top["path"], top["symbol"], top["start_line"], top["end_line"]) == (
        "shop/auth/tokens.py",
        "validate_token",
        30,
        42,
    )
    assert top["text"].startswith("def validate_token(")


def test_search_filters(indexed, run):
    out = json.loads(
        run(
            "search",
            "token",
            "--path",
            str(indexed),
            "--exclude",
            "tests/",
            "--lang",
            "python",
            "--json",
            "-n",
            "20",
        ).output
    )
    assert out and all(not h["path"].startswith("tests/") for h in out)
    assert all(h["language"] == "python" for h in out)
    files = json.loads(
        run(
            "search",
            "token",
            "--path",
            str(indexed),
            "--grain",
            "file",
            "--include",
            "shop/**",
            "--json",
        ).output
    )
    assert files and all(h["path"].startswith("shop/") for h in files)
    assert len({h["path"] for h in files}) == len(files)


def test_symbol_exact_prefix_fuzzy(indexed, run):
    exact = json.loads(run("symbol", "cart_total", "--path", str(indexed), "--json").output)
    assert exact[0]["match"] == "exact" and exact[0]["start_line"] == 50
    prefix = json.loads(run("symbol", "backoff", "--path", str(indexed), "--json").output)
    assert prefix[0]["name"] == "backoff_delays" and prefix[0]["match"] == "prefix"
    fuzzy = json.loads(run("symbol", "validate_tokn", "--path", str(indexed), "--json").output)
    assert fuzzy[0]["name"] == "validate_token" and fuzzy[0]["match"] == "fuzzy"
    qualified = json.loads(
        run("symbol", "CouponDiscount.discount", "--path", str(indexed), "--json").output
    )
    assert [q["qualified_name"] for q in qualified] == ["CouponDiscount.discount"]


def test_symbol_prints_the_decorators_above_the_signature(indexed, run):
    out = run("symbol", "Cart", "--path", str(indexed), "--limit", "1").output
    assert out == "shop/pricing.py:16-22  class Cart  (exact)\n    @dataclass\n    class Cart:\n"
    (found,) = json.loads(run("symbol", "LineItem", "--path", str(indexed), "--json").output)
    assert (found["start_line"], found["decorators"], found["signature"]) == (
        9,
        ["@dataclass"],
        "class LineItem:",
    )


def test_ask_markdown_and_json(indexed, run):
    text = run("ask", "where are expired session tokens rejected?", "--path", str(indexed)).output
    assert text.startswith("# where are expired session tokens rejected?")
    assert "`shop/auth/tokens.py:" in text
    printed = run(
        "ask", "validate_token expiry", "--path", str(indexed), "--json", "--budget", "600"
    ).output
    out = json.loads(printed)
    # The fake embedder finds the tiny package __init__ (it re-exports validate_token) as
    # close as the module itself; the real model ranks the module first (test_end_to_end).
    assert "shop/auth/tokens.py" in [f["path"] for f in out["files"][:2]]
    # The whole printed JSON is within the budget, and says what it counts.
    assert out["tokens"] == estimate_tokens(printed) <= 600 and out["budget"] == 600
    assert 1 <= out["cycles"] <= 3 and out["context"]
    # The trace is the first to give way to the budget; with room, it is there.
    roomy = json.loads(run("ask", "validate_token expiry", "--path", str(indexed), "--json").output)
    assert roomy["trace"] and len(roomy["trace"]) == roomy["cycles"]
    # Scored blocks are relevant; the rest are signature lines of files only the word or
    # the closeness ranking found, each saying so.
    assert all(
        b["relevance"] >= 0.2
        or (
            b["form"] == "signature"
            and b["relevance"] == 0
            and b["reason"] in (UNEVALUATED_REASON, UNEVALUATED_CLOSE_REASON)
        )
        for b in out["context"]
    )


def test_ask_reports_stale_files(indexed, run):
    target = indexed / "shop" / "auth" / "tokens.py"
    target.write_text(target.read_text() + "\n# edited\n")
    out = json.loads(
        run("ask", "validate_token", "--path", str(indexed), "--json", "--no-refresh").stdout
    )
    stale = {b["path"]: b["stale"] for b in out["context"]}
    assert stale["shop/auth/tokens.py"] is True
    assert not any(v for p, v in stale.items() if p != "shop/auth/tokens.py")


def _shift_validate_token(repo, lines: int = 7) -> int:
    """Push tokens.py's code down by `lines` comment lines; validate_token's new first line."""
    target = repo / "shop" / "auth" / "tokens.py"
    text = "# moved\n" * lines + target.read_text()
    target.write_text(text)
    return (
        text.split("\n").index(
            next(line for line in text.split("\n") if line.startswith("def validate_token"))
        )
        + 1
    )


@pytest.mark.parametrize("output", ["--json", "markdown", "agent"])
def test_ask_indexes_changed_files_before_answering(indexed, run, output):
    start = _shift_validate_token(indexed)
    args = ["ask", "where is validate_token defined?", "--path", str(indexed)]
    args += {"--json": ["--json"], "markdown": [], "agent": ["--format", "agent"]}[output]
    result = run(*args)
    if output == "markdown":
        assert f"`shop/auth/tokens.py:{start}-" in result.stdout
        assert "stale" not in result.stdout
    else:
        out = json.loads(result.stdout)
        blocks = [b for b in out["context"] if b["path"] == "shop/auth/tokens.py"]
        assert any(b["start_line"] == start for b in blocks), (start, blocks)
        assert not any(b["stale"] for b in out["context"])
    if output != "agent":  # the agent's JSON says it in `freshness`
        assert result.stderr == "indexed 1 changed file(s) first\n"
    else:
        assert json.loads(result.stdout)["freshness"]["reindexed"] == 1
    # The next run finds nothing to index: only the stat walk.
    assert run(*args).stderr == ""


def test_agent_format_answers_from_the_index_as_it_is_with_no_refresh(indexed, run):
    _shift_validate_token(indexed)
    args = ["ask", "where is validate_token defined?", "--path", str(indexed)]
    out = json.loads(run(*args, "--format", "agent", "--no-refresh").stdout)
    assert out["freshness"]["reindexed"] == 0
    assert any(b["stale"] for b in out["context"] if b["path"] == "shop/auth/tokens.py")


def test_search_indexes_changed_files_unless_told_not_to(indexed, run):
    start = _shift_validate_token(indexed)
    args = ["search", "validate_token", "--path", str(indexed), "--grain", "symbol", "--json"]
    old = json.loads(run(*args, "--no-refresh").stdout)[0]
    assert old["start_line"] != start and run(*args, "--no-refresh").stderr == ""
    fresh = run(*args)
    assert json.loads(fresh.stdout)[0]["start_line"] == start
    assert fresh.stderr == "indexed 1 changed file(s) first\n"


def test_refresh_is_in_the_help_of_ask_and_search(run):
    for name in ("ask", "search"):
        assert "--no-refresh" in run(name, "--help").output


@pytest.mark.parametrize(
    "args, message",
    [
        (["index", "/nonexistent/dir"], "no such directory: /nonexistent/dir"),
        (["status", "{tmp}"], "no index at {tmp}/.dowse; run `dowse index` first"),
        (["search", "x", "--path", "{tmp}"], "no index at {tmp}/.dowse; run `dowse index` first"),
        (["ask", "  ", "--path", "{tmp}"], "the question is empty"),
        (["symbol", "x", "--path", "{tmp}"], "no index at {tmp}/.dowse; run `dowse index` first"),
        (["index", "{tmp}", "--embedder", "nope"], "unknown embedder 'nope' (known: "),
    ],
)
def test_errors_are_one_line_with_exit_1(tmp_path, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert result.output.startswith("Error: " + message.replace("{tmp}", str(tmp_path)))
    assert "Traceback" not in result.output and result.output.count("\n") == 1


@pytest.mark.parametrize(
    "args, usage, message",
    [
        (["index", "--bogus"], "dowse index [OPTIONS] [PATH]", "No such option '--bogus'."),
        (["frob"], "dowse [OPTIONS] COMMAND [ARGS]...", "No such command 'frob'."),
        (["search"], "dowse search [OPTIONS] QUERY", "Missing argument 'QUERY'."),
        (
            ["search", "x", "--grain", "line"],
            "dowse search [OPTIONS] QUERY",
            "Invalid value for '--grain': 'line' is not one of 'chunk', 'symbol', 'file'.",
        ),
        (
            ["ask", "x", "--budget", "10"],
            "dowse ask [OPTIONS] QUESTION",
            "Invalid value for '--budget': 10 is not in the range x>=50.",
        ),
        (
            ["explore", ".", "--depth", "huge"],
            "dowse explore [OPTIONS] [PATH]",
            "Invalid value for '--depth': 'huge' is not one of 'shallow', 'standard', 'deep'.",
        ),
    ],
)
def test_usage_errors_are_clicks_message_with_exit_2(args, usage, message):
    """What the README says a usage error looks like: click's usage line, its hint and
    one `Error: ...` line, on stderr, with exit code 2 (other errors: exit 1, above)."""
    result = CliRunner().invoke(cli, args, prog_name="dowse")
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    command = " ".join(["dowse", *args[:1]]) if args[0] in cli.commands else "dowse"
    assert result.stderr == (
        f"Usage: {usage}\nTry '{command} --help' for help.\n\nError: {message}\n"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["search", ""], "the query is empty"),
        (["search", "  \n "], "the query is empty"),
        (
            ["search", "token", "--lang", "klingon"],
            "unknown language 'klingon'; the languages are: bash, c, cpp, ",
        ),
        (
            ["search", "token", "--grain", "symbol", "--kind", "gizmo"],
            "unknown symbol kind 'gizmo'; the kinds are: function, method, class, ",
        ),
    ],
)
def test_search_refuses_what_nothing_can_match(indexed, run, args, message):
    result = run(*args, "--path", str(indexed), code=1)
    assert result.output.startswith("Error: " + message) and result.output.count("\n") == 1


def test_search_filters_ignore_case(indexed, run):
    def paths(*args):
        out = json.loads(run("search", "token", "--path", str(indexed), "--json", *args).output)
        return [(h["path"], h.get("kind")) for h in out]

    assert paths("--lang", "Python") == paths("--lang", "python")
    assert {p.rsplit(".", 1)[1] for p, _ in paths("--lang", "PYTHON")} == {"py"}
    kinds = paths("--grain", "symbol", "--kind", "Function")
    assert kinds and {k for _, k in kinds} == {"function"}


def test_index_of_a_file_is_an_error(example_repo, run):
    result = run("index", str(example_repo / "README.md"), code=2)
    assert "is a file" in result.output


@pytest.mark.parametrize("char", ["\n", "\t", "\x01"])
def test_a_root_whose_path_holds_a_control_character(tmp_path, fake_embedder, run, char):
    """LanceDB cannot open such a directory: the index there is refused in one line that
    names --index-dir, nothing is written, and with the index elsewhere the root works."""
    root = tmp_path / f"my{char}repo"
    shutil.copytree(REPO / "fixtures" / "example", root, ignore=shutil.ignore_patterns(".dowse"))
    result = run("index", str(root), "--quiet", code=1)
    escaped = str(root).replace(char, {"\n": "\\n", "\t": "\\t"}.get(char, "\\x01"))
    assert result.output == (
        f"Error: cannot keep an index at {escaped}/.dowse: its path holds a control "
        "character, which LanceDB refuses; put the index elsewhere with --index-dir\n"
    )
    assert not (root / ".dowse").exists()
    elsewhere = tmp_path / "index"
    run("index", str(root), "--quiet", "--index-dir", str(elsewhere))
    hits = json.loads(
        run(
            "search", "cart total", "--path", str(root), "--index-dir", str(elsewhere), "--json"
        ).output
    )
    assert hits and all(not h["path"].startswith("/") for h in hits)


def test_damaged_manifest_is_a_clear_error(indexed, run):
    (indexed / ".dowse" / "manifest.json").write_text("{not json")
    result = run("search", "x", "--path", str(indexed), code=1)
    assert "damaged; run `dowse index --rebuild`" in result.output


def test_walk_options_are_remembered(example_repo, fake_embedder, run):
    run("index", str(example_repo), "--quiet", "--exclude", "web/")
    out = json.loads(run("index", str(example_repo), "--quiet", "--json").output)
    assert out["parsed"] == 0 and out["deleted"] == 0
    status = json.loads(run("status", str(example_repo), "--json").output)
    assert status["changed"] == {"modified": 0, "added": 0, "deleted": 0}
    assert not any(x["language"] == "javascript" for x in status["languages"])


@pytest.mark.parametrize(
    "args, message",
    [
        # A byte that is not UTF-8 on the command line arrives as a lone surrogate.
        (["search", "ab\udcff"], "the query is not valid UTF-8 text (byte 0xff at character 3)"),
        (["ask", "\udcff?"], "the question is not valid UTF-8 text (byte 0xff at character 1)"),
        (["symbol", "x\udcfe"], "the name is not valid UTF-8 text (byte 0xfe at character 2)"),
        (["search", "x" * 20_001], "the query is 20,001 characters long; at most 20,000"),
        (["ask", "why " * 5_001], "the question is 20,004 characters long; at most 20,000"),
    ],
)
def test_unusable_queries_are_one_line_errors(indexed, run, args, message):
    result = run(*args, "--path", str(indexed), code=1)
    assert result.output == f"Error: {message}\n"


def test_a_query_at_the_limit_is_answered(indexed, run):
    result = run("search", ("token " * 4_000)[:20_000], "--path", str(indexed), "--json")
    assert json.loads(result.output)


def test_a_manifest_naming_a_vanished_table_version_is_a_clear_error(indexed, run):
    manifest = indexed / ".dowse" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["versions"]["chunks"] = 999
    manifest.write_text(json.dumps(data))
    expected = (
        f"Error: the index table 'chunks' at {indexed / '.dowse'} has no version 999, which "
        "the manifest names; run `dowse index --rebuild`\n"
    )
    assert run("index", str(indexed), "--quiet", code=1).output == expected
    searched = run("search", "token", "--path", str(indexed), code=1).output
    assert searched.startswith("Error: the index table 'chunks'") and searched.count("\n") == 1
    run("index", str(indexed), "--quiet", "--rebuild")
    assert run("search", "token", "--path", str(indexed), "--json").output.startswith("[")


def test_an_index_inside_the_tree_is_never_indexed(example_repo, fake_embedder, run):
    def indexed_files(index_dir: str) -> int:
        out = run("index", str(example_repo), "--quiet", "--json", "--index-dir", index_dir)
        return int(json.loads(out.output)["files"])

    plain = indexed_files(str(example_repo / ".dowse"))
    # Another index, under any name and wherever in the tree, and the one being written.
    assert indexed_files(str(example_repo / "shop" / "idx")) == plain
    assert indexed_files(str(example_repo / "my-index")) == plain
    assert indexed_files(str(example_repo / "shop" / "idx")) == plain
    skipped = run(
        "status", str(example_repo), "--index-dir", str(example_repo / "my-index"), "--skipped"
    ).output
    assert "shop/idx/" in skipped and "another dowse index" in skipped
