"""`dowse serve`: the MCP server, driven by the MCP SDK's client.

The real server runs as a `dowse serve` subprocess over stdio where the process is the
subject: four clients' processes on one index while one reindexes, and a repeated `ask`
against the CLI's process. The other tools' tests start the server as `dowse serve`
does, from the CLI's options, in this process, and connect the SDK's client to it
there: the same tools, answers and handshake, without a process's start (some 1.5 s of
CPU each).

Indexes are lexical (`--no-embed`) copies of fixtures/example: the subprocess cannot use
the fake embedder, and lexical keeps every test fast. The last two tests call the
workspace directly: a sweep of budgets, and an index with (fake) vectors kept fresh.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from conftest import EXAMPLE, REPO

from dowse.indexer.build import IndexConfig
from dowse.indexer.embed import get_embedder
from dowse.indexer.store import WriteLock
from dowse.retrieval.ask import estimate_tokens
from dowse.server.app import MAX_TOKENS_LIMIT, TOOLS

if TYPE_CHECKING:
    # The SDK's client is imported where a test connects (`connect`): every pytest-xdist
    # worker collects this module, and importing the client is about a second of CPU.
    from mcp import ClientSession

CLI = [sys.executable, "-m", "dowse"]


def _copy(dest: Path) -> Path:
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns(".dowse"))
    return dest


@pytest.fixture
def index(run: Callable[..., Any]) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        run("index", str(root), "--no-embed", "--quiet")
        return root

    return make


@pytest.fixture
def repo(tmp_path: Path, indexed_examples) -> Path:
    """The example as `dowse index --no-embed` leaves it: the session's build, copied
    (conftest), with the embedder the CLI names (lexical: its model is never loaded)."""
    return indexed_examples.copy(tmp_path / "example", IndexConfig(embed=False), get_embedder)


@asynccontextmanager
async def connect(
    *roots: Path, log: Path, args: tuple[str, ...] = ()
) -> AsyncIterator[ClientSession]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import get_default_environment, stdio_client

    # The SDK passes only a few safe variables by default: the server must also see the
    # suite's hermetic settings and the import path of the code under test.
    passed = ("PYTHONPATH", "HF_HUB_OFFLINE")
    env = {k: v for k, v in os.environ.items() if k in passed or k.startswith("DOWSE_")}
    params = StdioServerParameters(
        command=sys.executable,
        args=[*CLI[1:], "serve", *args, *map(str, roots)],
        cwd=str(REPO),
        env={**get_default_environment(), **env},
    )
    with open(log, "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def started(*roots: Path, log: Path, args: tuple[str, ...] = ()) -> Any:
    """The server `dowse serve ARGS ROOTS` starts, started in this process: the CLI's own
    command reads the options and the roots' settings, and hands them to
    `dowse.server.app.start` instead of serving on stdio. Its warnings go to `log`."""
    from click.testing import CliRunner

    from dowse.cli import cli
    from dowse.server import app

    servers: list[Any] = []

    def warn(message: str) -> None:
        with open(log, "a") as fh:
            fh.write(f"warning: {message}\n")

    def start_here(served: Any, **options: Any) -> None:
        servers.append(app.start(served, **{**options, "warn": warn}))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(app, "serve", start_here)
        result = CliRunner().invoke(cli, ["serve", *args, *map(str, roots)])
    assert result.exit_code == 0, result.output
    (server,) = servers
    return server


def drive(
    tmp_path: Path, *roots: Path, args: tuple[str, ...] = ()
) -> Callable[[Callable[[ClientSession], Awaitable[Any]]], Any]:
    """Run `body(session)` against a fresh server on `roots`, in this process."""

    def run(body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
        from mcp import Client

        server = started(*roots, log=tmp_path / "server.log", args=args)

        async def main() -> Any:
            # "legacy": the initialize handshake, as over stdio (`connect`).
            async with Client(server, mode="legacy") as client:
                return await body(client.session)

        return anyio.run(main)

    return run


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A successful call's answer, checked against its budget and its two encodings."""
    result = await session.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    data = json.loads(text)
    assert data == result.structured_content
    assert estimate_tokens(text) == data["budget"]["tokens"] <= data["budget"]["max_tokens"]
    return data


async def refused(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert "\n" not in text
    return text


def lines(path: Path, start: int, end: int) -> str:
    return "\n".join(path.read_text().split("\n")[start - 1 : end])


def test_tools_budgets_and_confinement(repo, tmp_path):
    async def body(s: ClientSession) -> None:
        listed = {t.name: t for t in (await s.list_tools()).tools}
        assert (
            set(listed)
            == {spec.name for spec in TOOLS}
            == {"search", "ask", "explore", "symbol", "references", "status", "reindex"}
        )
        for spec in TOOLS:
            tool = listed[spec.name]
            fields = spec.request.model_json_schema()["properties"]
            assert tool.input_schema["properties"] == fields
            budget = tool.input_schema["properties"]["max_tokens"]
            assert budget["default"] <= 8000 and budget["maximum"] == MAX_TOKENS_LIMIT < 25_000
            assert tool.output_schema is not None
            assert tool.output_schema["title"] == spec.answer.__name__
            assert "max_tokens" in (tool.description or "")

        full = await call(s, "search", query="validate_token expired")
        assert full["hits"][0]["path"] == "shop/auth/tokens.py"
        assert full["budget"]["cut"] == full["budget"]["omitted"] == 0
        by_citation = {(h["path"], h["start_line"]): h for h in full["hits"]}
        small = await call(s, "search", query="validate_token expired", max_tokens=300)
        assert small["budget"]["cut"] + small["budget"]["omitted"] > 0
        for hit in small["hits"]:  # whole records, or signature and citation: never cut
            whole = by_citation[(hit["path"], hit["start_line"])]
            assert hit == whole or (
                hit["text"] is None
                and hit["signature"]
                and {**hit, "text": whole["text"], "signature": whole["signature"]} == whole
            )
        assert len(small["hits"]) + small["budget"]["omitted"] == len(full["hits"])

        question = "where are expired session tokens rejected?"
        answer = await call(s, "ask", question=question)
        assert "shop/auth/tokens.py" in [f["path"] for f in answer["files"][:2]]
        tight = await call(s, "ask", question=question, max_tokens=400)
        assert tight["budget"]["cut"] + tight["budget"]["omitted"] > 0
        for block in tight["context"]:
            if block["form"] == "full":
                assert block["text"] == lines(
                    repo / block["path"], block["start_line"], block["end_line"]
                )
            else:
                assert "\n" not in block["text"]

        report = await call(
            s,
            "explore",
            path="shop",
            depth="deep",
            focus="where does validate_token reject expired tokens?",
        )
        result = report["result"]
        assert result["path"] == "shop" and report["budget"]["tokens"] <= 6000
        assert [t["track"]["name"] for t in result["tracks"]][:6] == [
            "commands",  # how to work in the repository comes first
            "tree",
            "manifest",
            "patterns",
            "focus",
            "imports",
        ]
        assert result["focus_findings"][0]["citations"][0]["path"] == "shop/auth/tokens.py"
        small = await call(s, "explore", depth="deep", max_tokens=2000)
        assert small["budget"]["tokens"] <= 2000 and small["budget"]["omitted"] > 0
        # Each track's bookkeeping is one line; a track with findings keeps them without
        # its gates and without repeating its line.
        named = [line.split(":", 1)[0] for line in small["result"]["track_lines"]]
        assert small["result"]["omitted"] and len(named) == 6  # commands is one
        assert all(not t["gates"] and not t["verdict"] for t in small["result"]["tracks"])
        assert {t["track"]["name"] for t in small["result"]["tracks"]} <= set(named)
        assert "cannot hold an explore report" in await refused(
            s, "explore", depth="deep", max_tokens=400
        )

        found = await call(s, "symbol", name="validate_token")
        top = found["definitions"][0]
        assert (top["path"], top["start_line"], top["end_line"]) == ("shop/auth/tokens.py", 30, 42)
        assert top["text"] == lines(repo / "shop/auth/tokens.py", 30, 42)
        assert top["match"] == "exact" and not top["stale"]

        refs = await call(s, "references", name="validate_token", direction="callers")
        caller = refs["callers"][0]
        assert (caller["path"], caller["lines"], caller["via"]) == (
            "shop/api/routes.py",
            [22],
            "import",
        )
        assert refs["callees"] == [] and refs["budget"]["tokens"] <= 3000

        status = await call(s, "status")
        assert status["roots"][0]["report"]["files"] == 15
        assert status["roots"][0]["report"]["no_embed"]
        again = await call(s, "reindex")
        assert again["roots"][0]["stats"]["parsed"] == 0

        too_big = await s.call_tool("search", {"query": "x", "max_tokens": 30_000})
        assert too_big.is_error
        assert (await refused(s, "search", query="  ")).endswith(": the query is empty")
        assert "unknown language 'klingon'; the languages are: bash, " in await refused(
            s, "search", query="token", languages=["klingon"]
        )
        assert (await refused(s, "ask", question=" \n")).endswith(": the question is empty")
        await outside_paths_are_refused(s, repo, tmp_path)

    drive(tmp_path, repo)(body)


async def outside_paths_are_refused(s: ClientSession, repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def very_secret_function():\n    return 42\n")
    (repo / "escape").symlink_to(outside, target_is_directory=True)
    (repo / "shop" / "leak.py").symlink_to(outside / "secret.py")
    for path in ("/etc", str(tmp_path), "../outside", "shop/../../outside"):
        message = await refused(s, "search", query="token", path=path)
        assert "is outside the served root" in message, message
    assert "through a symlink" in await refused(s, "search", query="token", path="escape")
    assert "through a symlink" in await refused(
        s, "ask", question="what is secret?", path="shop/leak.py"
    )
    assert "is outside the served root" in await refused(s, "explore", path="../outside")
    assert "through a symlink" in await refused(s, "explore", path="escape")
    assert "no such file" in await refused(s, "search", query="x", path="shop/nope")
    assert "is not a served root" in await refused(s, "search", query="x", root=str(outside))
    hits = (await call(s, "search", query="very_secret_function"))["hits"]
    assert all("very_secret" not in (h["text"] or "") for h in hits)
    assert not (await call(s, "symbol", name="very_secret_function"))["definitions"]
    inside = await call(s, "search", query="token", path=str(repo / "shop" / "auth"))
    assert inside["hits"] and all(h["path"].startswith("shop/auth/") for h in inside["hits"])


def _tree(root: Path) -> dict[str, str]:
    """Every file outside the index directory, by content and stat."""
    out = {}
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".dowse"]
        for name in files:
            p = Path(dirpath, name)
            st = p.stat()
            out[str(p.relative_to(root))] = (
                f"{st.st_size}:{st.st_mtime_ns}:{hashlib.sha256(p.read_bytes()).hexdigest()}"
            )
    return out


def test_answers_follow_edits_branch_switches_and_a_held_lock(repo, tmp_path):
    tokens = repo / "shop" / "auth" / "tokens.py"
    lock = WriteLock(repo / ".dowse")

    async def body(s: ClientSession) -> None:
        await call(s, "status")
        with open(tokens, "a") as fh:
            fh.write(
                "\n\ndef revoke_token(token: str) -> None:\n"
                '    """Forget a token."""\n    REVOKED.add(token)\n'
            )
        n = len(tokens.read_text().split("\n")) - 1
        found = await call(s, "symbol", name="revoke_token")
        assert found["freshness"]["reindexed"] == 1 and not found["freshness"]["pending"]
        top = found["definitions"][0]
        assert (top["start_line"], top["end_line"]) == (n - 2, n)
        assert top["text"] == lines(tokens, n - 2, n)

        # A branch switch: files rewritten, removed and added at once.
        (repo / "shop" / "payments.py").unlink()
        (repo / "shop" / "pricing.py").write_text(
            "def quote_shipping(weight_kg: float) -> float:\n    return 4.5 + weight_kg\n"
        )
        (repo / "shop" / "inventory.py").write_text(
            "def reserve_stock(sku: str, n: int) -> bool:\n    return n > 0\n"
        )
        before = _tree(repo)
        hits = (await call(s, "search", query="reserve_stock quote_shipping"))["hits"]
        paths = {h["path"] for h in hits}
        assert {"shop/inventory.py", "shop/pricing.py"} <= paths
        assert "shop/payments.py" not in paths
        gone = await call(s, "symbol", name="backoff_delays")
        assert all(d["path"] != "shop/payments.py" for d in gone["definitions"])
        assert not (await call(s, "symbol", name="BulkDiscount"))["definitions"]
        assert _tree(repo) == before  # the server writes only inside .dowse

        # Another process writing the index: answer from the last snapshot, and say so.
        lock.acquire(0)
        try:
            (repo / "shop" / "stock.py").write_text("def count_stock():\n    return 7\n")
            answer = await call(s, "search", query="count_stock")
            assert answer["freshness"]["pending"] == 1
            assert f"pid {os.getpid()}" in answer["freshness"]["note"]
            assert all(h["path"] != "shop/stock.py" for h in answer["hits"])
        finally:
            lock.release()
        answer = await call(s, "search", query="count_stock")
        assert answer["freshness"]["reindexed"] == 1
        assert answer["hits"][0]["path"] == "shop/stock.py"

    drive(tmp_path, repo)(body)


def test_a_root_without_an_index_is_offered_reindex(tmp_path, repo):
    bare = _copy(tmp_path / "bare")
    indexed = repo  # `dowse index --no-embed`'s index: the session's, copied

    async def body(s: ClientSession) -> None:
        message = await refused(s, "search", query="token")
        assert "pass `root`" in message
        message = await refused(s, "search", query="token", root="bare")
        assert "no index for" in message and "reindex" in message
        status = await call(s, "status")
        assert [r["error"] is None for r in status["roots"]] == [False, True]
        built = await call(s, "reindex", root=str(bare))
        assert built["roots"][0]["stats"]["files"] == 15
        hits = (await call(s, "search", query="validate_token", root="bare"))["hits"]
        assert hits[0]["path"] == "shop/auth/tokens.py"

    drive(tmp_path, bare, indexed, args=("--no-embed",))(body)
    assert "no index for" in (tmp_path / "server.log").read_text()
    manifest = json.loads((bare / ".dowse" / "manifest.json").read_text())
    assert manifest["no_embed"]


def test_a_root_whose_path_holds_a_newline_is_refused_in_one_line(tmp_path):
    """LanceDB cannot keep an index there: reindex says so in one line, and every other
    error naming the root is one line too (the path's newline escaped)."""
    root = _copy(tmp_path / "my\nrepo")

    async def body(s: ClientSession) -> None:
        message = await refused(s, "reindex")
        assert message.endswith(
            "cannot keep an index at "
            + str(root).replace("\n", "\\n")
            + "/.dowse: its path holds a control character, which LanceDB refuses; put the "
            "index elsewhere with --index-dir"
        )
        assert "no index for" in await refused(s, "search", query="token")

    drive(tmp_path, root, args=("--no-embed",))(body)
    assert not (root / ".dowse").exists()


def test_a_repeated_ask_matches_the_cli(repo, tmp_path):
    """The server's second answer, from its warm searcher, is the CLI's. (How much faster
    it is is measured by benchmarks/query_bench.py, not asserted here.)"""
    question = "how are discounts applied to a cart?"
    cold = subprocess.run(
        [*CLI, "ask", question, "--path", str(repo), "--format", "agent"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )

    async def main() -> dict[str, Any]:
        async with connect(repo, log=tmp_path / "server.log") as s:  # a `dowse serve` process
            first = await call(s, "ask", question=question)
            again = await call(s, "ask", question=question)
            assert first == again
            return again

    answer = anyio.run(main)
    assert json.loads(cold.stdout) == answer


def _handlers(root: Path, tag: str, n: int = 120) -> None:
    for i in range(n):
        (root / f"mod{i}.py").write_text(
            f'"""Module {i}."""\n\n\ndef handler_{tag}_{i}(request):\n'
            f'    """Handle request {i}."""\n    return request.get("{tag}{i}")\n'
        )


def test_four_clients_while_one_reindexes(tmp_path, index):
    root = tmp_path / "many"
    root.mkdir()
    _handlers(root, "old", 60)
    index(root)
    _handlers(root, "new", 60)
    seen: set[str] = set()
    connected: list[int] = []
    ready = anyio.Event()

    async def client(n: int) -> None:
        async with connect(root, log=tmp_path / f"server{n}.log") as s:
            connected.append(n)
            if len(connected) == 4:
                ready.set()
            await ready.wait()  # all four up: the re-index overlaps the others' queries
            if n == 0:
                stats = (await call(s, "reindex"))["roots"][0]["stats"]
                assert stats["files"] == 60
            for _ in range(4):
                hits = (await call(s, "search", query="handler request", limit=20))["hits"]
                tags = {t for h in hits for t in re.findall(r"handler_(old|new)_", h["text"])}
                assert len(tags) == 1, tags  # one snapshot, never a mix
                seen.update(tags)
                found = await call(s, "symbol", name="handler_new_7")
                if not found["freshness"]["pending"]:
                    assert found["definitions"][0]["name"] == "handler_new_7"

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for n in range(4):
                group.start_soon(client, n)

    anyio.run(main)
    assert "new" in seen


def test_cli_errors_for_serve_and_agent_format(repo, tmp_path, run):
    assert "no such directory" in run("serve", str(tmp_path / "nope"), code=1).output
    out = run("ask", "x", "--path", str(repo), "--format", "agent", "--json", code=1).output
    assert "cannot be combined" in out
    out = run(
        "ask", "x", "--path", str(repo), "--format", "agent", "--budget", "100", code=1
    ).output
    assert "max_tokens" in out


# -- in process: the budget over a range of sizes, and an index with vectors --------------


def test_every_budget_holds_and_records_stay_whole(repo):
    from dowse.server.app import AskRequest, SearchRequest, ServedRoot, Workspace

    workspace = Workspace([ServedRoot(repo)])
    question = "where are expired session tokens rejected?"
    full = workspace.search(SearchRequest(query="token discount cart", limit=20))
    whole = {h.citation: h for h in full.hits}
    for max_tokens in range(256, 4000, 137):
        answer = workspace.search(
            SearchRequest(query="token discount cart", limit=20, max_tokens=max_tokens)
        )
        assert estimate_tokens(answer.model_dump_json()) == answer.budget.tokens <= max_tokens
        for hit in answer.hits:
            assert hit.text in (None, whole[hit.citation].text)
        assert len(answer.hits) + answer.budget.omitted == len(full.hits)
        asked = workspace.ask(AskRequest(question=question, max_tokens=max_tokens))
        assert estimate_tokens(asked.model_dump_json()) <= max_tokens
        for block in asked.context:
            if block.form == "full":
                assert block.text == lines(repo / block.path, block.start_line, block.end_line)


def test_an_index_with_vectors_stays_embedded_across_refreshes(example_repo, fake_embedder):
    from dowse.indexer.build import IndexConfig, build_index
    from dowse.indexer.store import Store
    from dowse.server.app import SearchRequest, ServedRoot, Workspace

    build_index(example_repo, config=IndexConfig(embed_chunks=True), embedder=fake_embedder)
    workspace = Workspace([ServedRoot(example_repo)])
    hits = workspace.search(SearchRequest(query="reject an expired session token")).hits
    assert any("dense" in h.signals for h in hits)
    calls = len(fake_embedder.calls)
    (example_repo / "shop" / "refunds.py").write_text(
        'def refund_order(order_id: int) -> None:\n    """Send the money back."""\n'
    )
    answer = workspace.search(SearchRequest(query="refund_order money back"))
    assert answer.freshness.reindexed == 1
    assert answer.hits[0].path == "shop/refunds.py" and "dense" in answer.hits[0].signals
    assert len(fake_embedder.calls) > calls  # the new chunk was embedded, by the warm model
    store = Store.open(example_repo / ".dowse")
    assert store.manifest.embedded and store.count("vectors") == store.count("chunks")


def test_unknown_fields_long_paths_and_long_queries_are_refused_in_one_line(repo, tmp_path):
    async def body(s: ClientSession) -> None:
        listed = {t.name: t for t in (await s.list_tools()).tools}
        assert all(t.input_schema.get("additionalProperties") is False for t in listed.values())
        message = await refused(s, "search", query="token", max_token=500)
        assert message.endswith(
            "max_token: unknown field (the fields of search are: query, "
            "root, path, grain, limit, include, exclude, languages, kinds, "
            "max_tokens)"
        ), message
        assert (await refused(s, "ask", question="token?", limits=3)).endswith(
            "limits: unknown field (the fields of ask are: question, root, path, include, "
            "exclude, max_tokens)"
        )
        assert (await refused(s, "search", query="x", max_tokens=30_000)).endswith(
            "max_tokens: Input should be less than or equal to 20000"
        )
        assert (await refused(s, "search", query="token", path="a" * 5000)).endswith(
            "the path is 5,000 characters long; at most 4,096"
        )
        assert "not a usable path (File name too long)" in await refused(
            s, "search", query="token", path="b" * 300
        )
        assert (await refused(s, "search", query="x" * 20_001)).endswith(
            "query: String should have at most 20000 characters"
        )
        # Defaults still apply when a field is left out.
        answer = await call(s, "search", query="token")
        assert answer["hits"] and answer["budget"]["max_tokens"] == 4000

    drive(tmp_path, repo)(body)


def test_a_roots_first_query_prepares_its_embedder(example_repo, fake_embedder, monkeypatch):
    from dowse.indexer.build import IndexConfig, build_index
    from dowse.server.app import AskRequest, SearchRequest, ServedRoot, Workspace

    build_index(example_repo, config=IndexConfig(), embedder=fake_embedder)
    prepared: list[list[str]] = []
    monkeypatch.setattr(fake_embedder, "prepare_queries", prepared.append, raising=False)
    workspace = Workspace([ServedRoot(example_repo)])
    question = "where are expired session tokens rejected?\nThe check in shop/auth"
    workspace.ask(AskRequest(question=question))
    # The question and its first line, as `question_vector` embeds them; then the root's
    # searcher is open and its embedder loaded.
    assert prepared == [[question, "where are expired session tokens rejected?"]]
    workspace.search(SearchRequest(query="charge a card"))
    assert len(prepared) == 1
