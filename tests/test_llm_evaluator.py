"""The LLM evaluator against a fake OpenAI-compatible server on 127.0.0.1.

The fake checks the request shape the way a strict server would (path, bearer key, model,
messages, response_format) and answers with canned chat completions; every failure mode
must end in offline scores for the affected candidates, never an exception.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dowse.cli import cli
from dowse.errors import DowseError
from dowse.indexer.store import Store
from dowse.retrieval.ask import LEAD_REASON, UNEVALUATED_CLOSE_REASON, UNEVALUATED_REASON
from dowse.retrieval.evaluate import OfflineEvaluator
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.llm_evaluator import LLMEvaluator, LLMEvaluatorConfig
from dowse.retrieval.loop import run_loop
from dowse.retrieval.pool import Candidate
from dowse.retrieval.query import analyze

MODEL = "fake-model"
KEY = "sk-test"
HANG_S = 5.0
"""The longest a hanging reply waits; the fixture releases it at teardown."""

Reply = tuple[int, str]


def completion(content: str) -> Reply:
    return 200, json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                }
            ],
        }
    )


def results(*items: dict[str, Any]) -> str:
    return json.dumps({"results": list(items)})


_HEADER = re.compile(r"^\[(\d+)\] (\S+):(\d+)-(\d+)", re.M)


def listed(body: dict[str, Any]) -> list[tuple[int, str, int, int]]:
    """The numbered candidates in a request: (id, path, start, end)."""
    return [
        (int(n), p, int(s), int(e))
        for n, p, s, e in _HEADER.findall(body["messages"][-1]["content"])
    ]


@dataclass
class FakeLLM:
    url: str
    respond: Callable[[dict[str, Any]], Reply] = lambda body: completion(results())
    reject_json_mode: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def hang(self, body: dict[str, Any]) -> Reply:
        self.release.wait(HANG_S)
        return completion(results())

    def problem(self, path: str, auth: str | None, body: Any) -> Reply | None:
        """What a strict OpenAI-compatible server would refuse, as (status, error body)."""

        def error(status: int, message: str) -> Reply:
            return status, json.dumps({"error": {"message": message}})

        if path != "/v1/chat/completions":
            return error(404, f"no route {path}")
        if auth != f"Bearer {KEY}":
            return error(401, "Incorrect API key provided")
        if not isinstance(body, dict):
            return error(400, "body is not JSON")
        if body.get("model") != MODEL:
            return error(404, f"model {body.get('model')!r} not found")
        messages = body.get("messages")
        if (
            not isinstance(messages, list)
            or [m.get("role") for m in messages] != ["system", "user"]
            or not all(isinstance(m.get("content"), str) for m in messages)
        ):
            return error(400, "messages must be a system and a user message")
        if body.get("temperature") != 0:
            return error(400, "expected temperature 0")
        if "response_format" in body:
            if self.reject_json_mode:
                return error(400, "'response_format.type' must be 'json_schema'")
            if body["response_format"] != {"type": "json_object"}:
                return error(400, "bad response_format")
        return None


class _Handler(BaseHTTPRequestHandler):
    timeout = HANG_S  # a stuck client cannot hold a handler thread for longer

    def do_POST(self) -> None:  # noqa: N802 (the http.server naming)
        fake: FakeLLM = self.server.fake  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        auth = self.headers.get("Authorization")
        fake.requests.append(
            {
                "path": self.path,
                "auth": auth,
                "body": body,
                "content_type": self.headers.get("Content-Type"),
            }
        )
        status, text = fake.problem(self.path, auth, body) or fake.respond(body)
        data = text.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up (the timeout case)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)  # 127.0.0.1 must not go through a proxy
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    fake = FakeLLM(url=f"http://127.0.0.1:{server.server_port}/v1")
    server.fake = fake  # type: ignore[attr-defined]
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield fake
    fake.release.set()
    server.shutdown()
    server.server_close()
    thread.join(HANG_S)


def config(fake: FakeLLM, **kw: Any) -> LLMEvaluatorConfig:
    return LLMEvaluatorConfig(base_url=fake.url, model=MODEL, api_key=KEY, **kw)


def cand(
    path: str, start: int, end: int, symbol: str | None, text: str, score: float = 1.0
) -> Candidate:
    return Candidate(
        {
            "id": f"{path}:{start}",
            "path": path,
            "start_line": start,
            "end_line": end,
            "symbol": symbol,
            "text": text,
            "language": "python",
        },
        {"lexical": score},
        score=score,
    )


TASK = analyze("where are expired session tokens rejected?")
CANDS = [
    cand(
        "shop/auth/tokens.py",
        30,
        42,
        "validate_token",
        "def validate_token(token, secret):\n    _sign(token, secret)\n"
        "    raise TokenError('token expired')",
    ),
    cand("shop/pricing.py", 50, 56, "cart_total", "def cart_total(cart):\n    return 0", 0.5),
    cand("web/app.js", 1, 9, None, "function render() {}", 0.2),
]


def offline(cands: list[Candidate] = CANDS, known: frozenset[str] = frozenset()) -> list[Any]:
    return OfflineEvaluator().evaluate(TASK, cands, known, ())


def test_a_good_answer_is_applied_in_order_and_the_request_is_well_formed(llm):
    llm.respond = lambda body: completion(
        results(
            {"id": 3, "relevance": 0.05, "reason": "unrelated UI code"},
            {"id": 1, "relevance": 0.92, "reason": "rejects expired tokens"},
            {"id": 2, "relevance": 0.3, "reason": "pricing, not auth"},
        )
    )
    evals = LLMEvaluator(config(llm)).evaluate(TASK, CANDS, set(), set())
    assert [(e.relevance, e.reason) for e in evals] == [
        (0.92, "llm: rejects expired tokens"),
        (0.3, "llm: pricing, not auth"),
        (0.05, "llm: unrelated UI code"),
    ]
    [req] = llm.requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == f"Bearer {KEY}"
    assert req["content_type"] == "application/json"
    body = req["body"]
    assert body["model"] == MODEL and body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    system, user = (m["content"] for m in body["messages"])
    assert "0.8-1.0" in system and '"results"' in system and "missing_context" in system
    assert user.startswith("Task:\nwhere are expired session tokens rejected?")
    assert listed(body) == [
        (1, "shop/auth/tokens.py", 30, 42),
        (2, "shop/pricing.py", 50, 56),
        (3, "web/app.js", 1, 9),
    ]
    assert (
        "[1] shop/auth/tokens.py:30-42 in `validate_token` (python)\n```\ndef validate_token("
        in user
    )


def test_no_candidates_no_request(llm):
    assert LLMEvaluator(config(llm)).evaluate(TASK, [], set(), set()) == []
    assert llm.requests == []


def test_fenced_json_with_chatter_is_read(llm):
    llm.respond = lambda body: completion(
        "Sure! Here are the scores:\n```json\n"
        + results(
            {"id": 1, "relevance": 0.9, "reason": "a"},
            {"id": 2, "relevance": 0.4, "reason": "b"},
            {"id": 3, "relevance": 0.1, "reason": "c"},
        )
        + "\n```\nHope this helps."
    )
    evals = LLMEvaluator(config(llm)).evaluate(TASK, CANDS, set(), set())
    assert [e.relevance for e in evals] == [0.9, 0.4, 0.1]


def test_missing_and_extra_ids_fall_back_for_those_candidates(llm):
    llm.respond = lambda body: completion(
        results(
            {"id": 2, "relevance": 0.6, "reason": "related"},
            {"id": 2, "relevance": 0.0, "reason": "a duplicate: the first one wins"},
            {"id": 99, "relevance": 1.0, "reason": "no such candidate"},
            {"id": "3", "reason": "no relevance"},
        )
    )
    evals = LLMEvaluator(config(llm)).evaluate(TASK, CANDS, set(), set())
    base = offline()
    assert evals[1].relevance == 0.6 and evals[1].reason == "llm: related"
    assert evals[0].relevance == base[0].relevance
    assert evals[0].reason == (
        "offline fallback: no score for this candidate in the reply; " + base[0].reason
    )
    assert evals[2].relevance == base[2].relevance
    assert evals[2].reason.startswith("offline fallback: no usable relevance in the reply; ")


@pytest.mark.parametrize(
    "reply, cause",
    [
        ((500, '{"error": {"message": "model crashed"}}'), "HTTP 500: model crashed"),
        ((503, "<html>busy</html>"), "HTTP 503"),
        (
            completion("I think the first one is the most relevant."),
            "the model's reply is not JSON",
        ),
        (completion('{"scores": []}'), 'the model\'s reply has no "results" list'),
        ((200, "not json at all"), "the endpoint did not answer JSON"),
        ((200, '{"choices": []}'), "the endpoint's answer is not a chat completion"),
    ],
)
def test_server_problems_fall_back_to_offline_without_raising(llm, reply, cause):
    llm.respond = lambda body: reply
    warnings: list[str] = []
    evals = LLMEvaluator(config(llm), warn=warnings.append).evaluate(TASK, CANDS, set(), set())
    base = offline()
    assert [e.relevance for e in evals] == [e.relevance for e in base]
    assert [e.reason for e in evals] == [f"offline fallback: {cause}; {e.reason}" for e in base]
    assert warnings == [f"LLM evaluator: {cause}; using offline scores"]


def test_a_timeout_falls_back_and_stops_asking(llm):
    llm.respond = llm.hang
    evaluator = LLMEvaluator(config(llm, timeout_s=0.3, max_candidates_per_call=1))
    evals = evaluator.evaluate(TASK, CANDS, set(), set())
    again = evaluator.evaluate(TASK, CANDS[:1], set(), set())
    assert len(llm.requests) == 1  # one timeout, not one per batch or per call
    cause = f"{llm.url} did not answer within 0.3s"
    assert all(e.reason.startswith(f"offline fallback: {cause}; ") for e in evals + again)
    assert [e.relevance for e in evals] == [e.relevance for e in offline()]


def test_an_unreachable_server_falls_back():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    cfg = LLMEvaluatorConfig(base_url=f"http://127.0.0.1:{port}/v1", model=MODEL, timeout_s=2)
    evals = LLMEvaluator(cfg).evaluate(TASK, CANDS, set(), set())
    assert all(
        e.reason.startswith(f"offline fallback: request to http://127.0.0.1:{port}/v1 failed (")
        for e in evals
    )


def test_relevance_is_clamped_and_must_be_a_number(llm):
    llm.respond = lambda body: completion(
        results(
            {"id": 1, "relevance": 1.7, "reason": "x"},
            {"id": 2, "relevance": -0.3},
            {"id": 3, "relevance": "0.55", "reason": "  spread \n over\tlines  "},
        )
    )
    evals = LLMEvaluator(config(llm)).evaluate(TASK, CANDS, set(), set())
    assert [e.relevance for e in evals] == [1.0, 0.0, 0.55]
    assert [e.reason for e in evals] == ["llm: x", "llm: no reason given", "llm: spread over lines"]
    llm.respond = lambda body: completion(
        results(
            {"id": 1, "relevance": "high"},
            {"id": 2, "relevance": True},
            {"id": 3, "relevance": None},
        )
    )
    evals = LLMEvaluator(config(llm)).evaluate(TASK, CANDS, set(), set())
    assert all(e.reason.startswith("offline fallback: no usable relevance") for e in evals)


def test_missing_context_is_only_names_the_index_defines(llm):
    llm.respond = lambda body: completion(
        results(
            {
                "id": 1,
                "relevance": 0.9,
                "reason": "x",
                "missing_context": [
                    "_sign",
                    "TokenValidator",
                    "`issue_token()`",
                    "tokens.TokenError",
                    "validate_token",
                    "_sign",
                    42,
                    "DEFAULT_TTL_SECONDS",
                    "_helper",
                ],
            }
        )
    )
    # As the loop passes them: name -> where the index defines it.
    tokens = "shop/auth/tokens.py"
    known = {
        "_sign": [(tokens, 18)],
        "TokenError": [(tokens, 14)],
        "issue_token": [(tokens, 23)],
        "validate_token": [(tokens, 30)],
        "DEFAULT_TTL_SECONDS": [(tokens, 11)],
        "_helper": [(tokens, 40)],
    }
    [ev] = LLMEvaluator(config(llm)).evaluate(TASK, CANDS[:1], known, {"DEFAULT_TTL_SECONDS"})
    # Invented (TokenValidator), its own name, defined inside its own lines (_helper),
    # already in context, duplicates: all dropped.
    assert ev.missing_context == ["_sign", "issue_token", "TokenError"]
    user = llm.requests[0]["body"]["messages"][1]["content"]
    # The model is told which names exist among those its candidates use.
    assert "(the only useful missing_context entries): TokenError, _sign, validate_token" in user


def test_batches_are_numbered_from_one_and_reassembled_in_order(llm):
    def by_path(body: dict[str, Any]) -> Reply:
        return completion(
            results(
                *(
                    {"id": n, "relevance": 0.5, "reason": f"{p}:{s}"}
                    for n, p, s, _ in reversed(listed(body))
                )
            )
        )

    llm.respond = by_path
    cands = [cand(f"m{i}.py", i, i + 1, None, f"x{i} = {i}") for i in range(5)]
    evals = LLMEvaluator(config(llm, max_candidates_per_call=2)).evaluate(TASK, cands, set(), set())
    assert [e.reason for e in evals] == [f"llm: m{i}.py:{i}" for i in range(5)]
    assert [[n for n, *_ in listed(r["body"])] for r in llm.requests] == [[1, 2], [1, 2], [1]]


def test_long_code_is_truncated(llm):
    text = "\n".join(f"line_{i} = {i}" for i in range(200))
    LLMEvaluator(config(llm, max_chars_per_candidate=100)).evaluate(
        TASK, [cand("big.py", 1, 200, None, text)], set(), set()
    )
    user = llm.requests[0]["body"]["messages"][1]["content"]
    assert "line_0 = 0" in user and "line_199" not in user and "... (truncated)" in user


def test_a_server_without_json_mode_is_asked_again_without_it(llm):
    llm.reject_json_mode = True
    llm.respond = lambda body: completion(results({"id": 1, "relevance": 0.8, "reason": "ok"}))
    evaluator = LLMEvaluator(config(llm))
    assert evaluator.evaluate(TASK, CANDS[:1], set(), set())[0].reason == "llm: ok"
    assert evaluator.evaluate(TASK, CANDS[:1], set(), set())[0].reason == "llm: ok"
    sent = ["response_format" in r["body"] for r in llm.requests]
    assert sent == [True, False, False]  # remembered after the first refusal


def test_a_wrong_key_is_an_http_error_fallback(llm):
    cfg = LLMEvaluatorConfig(base_url=llm.url, model=MODEL, api_key="sk-wrong")
    [ev] = LLMEvaluator(cfg).evaluate(TASK, CANDS[:1], set(), set())
    assert ev.reason.startswith("offline fallback: HTTP 401: Incorrect API key provided; ")


def test_from_env():
    assert LLMEvaluatorConfig.from_env({}) is None
    assert LLMEvaluatorConfig.from_env({"DOWSE_LLM_BASE_URL": "http://h/v1"}) is None
    assert LLMEvaluatorConfig.from_env({"DOWSE_LLM_MODEL": "m", "OPENAI_API_KEY": "k"}) is None
    assert LLMEvaluatorConfig.from_env({"DOWSE_LLM_BASE_URL": " ", "DOWSE_LLM_MODEL": "m"}) is None
    cfg = LLMEvaluatorConfig.from_env(
        {"DOWSE_LLM_BASE_URL": "http://localhost:11434/v1/", "DOWSE_LLM_MODEL": "qwen2.5-coder"}
    )
    assert cfg is not None and cfg.base_url == "http://localhost:11434/v1"
    assert (cfg.model, cfg.api_key, cfg.temperature) == ("qwen2.5-coder", None, 0.0)
    env = {
        "DOWSE_LLM_BASE_URL": "https://api.example.com/v1",
        "DOWSE_LLM_MODEL": "m",
        "OPENAI_API_KEY": "sk-openai",
    }
    cfg = LLMEvaluatorConfig.from_env(env)
    assert cfg is not None and cfg.api_key is not None
    assert cfg.api_key.get_secret_value() == "sk-openai"
    assert "sk-openai" not in repr(cfg) and "sk-openai" not in cfg.model_dump_json()
    cfg = LLMEvaluatorConfig.from_env({**env, "DOWSE_LLM_API_KEY": "sk-dowse"})
    assert cfg is not None and cfg.api_key is not None
    assert cfg.api_key.get_secret_value() == "sk-dowse"
    with pytest.raises(DowseError, match="DOWSE_LLM_BASE_URL='localhost:11434' must start"):
        LLMEvaluatorConfig.from_env(
            {"DOWSE_LLM_BASE_URL": "localhost:11434", "DOWSE_LLM_MODEL": "m"}
        )


# -- end to end on a real index ---------------------------------------------------------


def score_tokens_module(body: dict[str, Any]) -> Reply:
    """A stand-in model: the token validator is the answer, its module related, rest noise.
    Each reason names the candidate it scored, so misapplied ids would show."""
    out = []
    for n, path, start, end in listed(body):
        relevance = 0.05
        gaps: list[str] = []
        if path == "shop/auth/tokens.py":
            relevance = 0.95 if start <= 30 <= end else 0.6
            gaps = ["_sign", "SessionCache"] if start <= 30 <= end else []
        out.append(
            {
                "id": n,
                "relevance": relevance,
                "reason": f"scored {path}:{start}-{end}",
                "missing_context": gaps,
            }
        )
    return completion(results(*out))


@pytest.fixture
def indexed(tmp_path: Path, fake_embedder: Any, indexed_examples: Any) -> Path:
    return indexed_examples.copy(tmp_path / "example")  # the session's build, copied: conftest


def test_run_loop_with_the_llm_evaluator(llm, indexed, fake_embedder):
    llm.respond = score_tokens_module
    searcher = HybridSearcher(Store.open(indexed / ".dowse"), lambda: fake_embedder)
    result = run_loop(
        searcher, "where are expired session tokens rejected?", evaluator=LLMEvaluator(config(llm))
    )
    top = result.items[0]
    assert (top.hit.path, top.hit.symbol, top.relevance) == (
        "shop/auth/tokens.py",
        "validate_token",
        0.95,
    )
    for it in result.items:
        assert it.reason == f"llm: scored {it.hit.path}:{it.hit.start_line}-{it.hit.end_line}"
    # The model's gap that the index defines drives REFINE; the invented one never appears.
    assert result.trace[0].gaps == ["_sign"]
    assert "_sign" in result.trace[1].targeted
    assert top.missing_context == []  # resolved by the look-up
    assert all("SessionCache" not in c.gaps for c in result.trace)
    # Files the model scored irrelevant are excluded from the next cycle.
    assert result.trace[1].excluded
    assert "shop/auth/tokens.py" not in result.trace[-1].excluded
    assert len(llm.requests) >= len(result.trace)


def test_cli_ask_with_the_llm_evaluator(llm, indexed, monkeypatch):
    llm.respond = score_tokens_module
    monkeypatch.setenv("DOWSE_LLM_BASE_URL", llm.url)
    monkeypatch.setenv("DOWSE_LLM_MODEL", MODEL)
    monkeypatch.setenv("DOWSE_LLM_API_KEY", KEY)
    result = CliRunner().invoke(
        cli,
        [
            "ask",
            "where are expired session tokens rejected?",
            "--path",
            str(indexed),
            "--evaluator",
            "llm",
            "--json",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["files"][0]["path"] == "shop/auth/tokens.py"
    scored = [
        b
        for b in out["context"]
        if b["reason"] not in (UNEVALUATED_REASON, UNEVALUATED_CLOSE_REASON)
        # a first file's best part is placed by the file ranking, not scored
        and not b["reason"].startswith(LEAD_REASON.split("{")[0])
    ]
    assert scored and all(b["reason"].startswith("llm: ") for b in scored)
    assert result.stderr == ""


def test_cli_warns_on_stderr_when_the_model_fails(llm, indexed, monkeypatch):
    llm.respond = lambda body: (500, "{}")
    monkeypatch.setenv("DOWSE_LLM_BASE_URL", llm.url)
    monkeypatch.setenv("DOWSE_LLM_MODEL", MODEL)
    monkeypatch.setenv("DOWSE_LLM_API_KEY", KEY)
    result = CliRunner().invoke(
        cli,
        ["ask", "validate_token", "--path", str(indexed), "--evaluator", "llm", "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0
    assert result.stderr == "warning: LLM evaluator: HTTP 500; using offline scores\n"
    out = json.loads(result.stdout)
    scored = [
        b
        for b in out["context"]
        if b["reason"] not in (UNEVALUATED_REASON, UNEVALUATED_CLOSE_REASON)
        # a first file's best part is placed by the file ranking, not scored
        and not b["reason"].startswith(LEAD_REASON.split("{")[0])
    ]
    assert scored and all(b["reason"].startswith("offline fallback: HTTP 500; ") for b in scored)


def test_cli_llm_evaluator_unconfigured_is_a_one_line_error(tmp_path, monkeypatch):
    for var in ("DOWSE_LLM_BASE_URL", "DOWSE_LLM_MODEL", "DOWSE_LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    result = CliRunner().invoke(cli, ["ask", "x", "--path", str(tmp_path), "--evaluator", "llm"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: --evaluator llm needs DOWSE_LLM_BASE_URL and DOWSE_LLM_MODEL, or "
        "llm_base_url and llm_model in your config file (and DOWSE_LLM_API_KEY or "
        "OPENAI_API_KEY if the endpoint wants a key)\n"
    )
    monkeypatch.setenv("DOWSE_LLM_BASE_URL", "localhost:11434")
    monkeypatch.setenv("DOWSE_LLM_MODEL", "m")
    result = CliRunner().invoke(cli, ["ask", "x", "--path", str(tmp_path), "--evaluator", "llm"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: DOWSE_LLM_BASE_URL='localhost:11434': must start with http:// or https://\n"
    )
