"""The iterative retrieval loop and `ask` on the example repository (fake embedder)."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.store import Store
from dowse.retrieval.ask import Packing, ask
from dowse.retrieval.evaluate import OfflineEvaluator
from dowse.retrieval.file_ranking import (
    FileRankingConfig,
    file_dense,
    files_by_closeness,
    files_by_words,
)
from dowse.retrieval.fusion import FileFusion
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.loop import LoopConfig, run_loop
from dowse.retrieval.pool import Candidate, PoolLimits, literal_rows
from dowse.retrieval.query import analyze

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def searcher(tmp_path, fake_embedder, indexed_examples):
    """A searcher on the example, built with the fake embedder (the session's build,
    copied: conftest.IndexedExamples)."""
    root = indexed_examples.copy(tmp_path / "example")
    return HybridSearcher(Store.open(root / ".dowse"), lambda: fake_embedder)


def test_dispatch_reads_identifiers_paths_frames_and_quotes():
    a = analyze(
        'Traceback:\n  File "shop/payments.py", line 31, in charge\n'
        "GatewayUnavailable raised; see `backoff_delays` and shop/pricing.py"
    )
    assert a.frames == [("shop/payments.py", 31, "charge")]
    assert a.paths == ["shop/payments.py", "shop/pricing.py"]
    assert {"GatewayUnavailable", "backoff_delays", "charge"} <= set(a.identifiers)
    assert a.quoted == ["shop/payments.py", "backoff_delays"]
    assert a.lexical_weight > analyze("how are prices computed").lexical_weight


def test_dispatch_reads_calls_but_not_apostrophes_or_builtins():
    a = analyze(
        "It's odd: decompose() doesn't sort, and print(len(x)) shows 'it'.\n"
        ">>> from shop.pricing import Cart, Discount as D\n"
    )
    assert a.identifiers == ["decompose", "shop.pricing", "Cart", "Discount"]
    assert a.quoted == ["it"]


def test_dispatch_reads_pytest_and_ipython_frames():
    a = analyze(
        "____\nshop/payments.py:33: in charge\n    return send(card_token, amount)\n"
        "/venv/lib/python3.11/site-packages/shop/pricing.py:12: in <module>\n"
    )
    assert a.frames == [
        ("shop/payments.py", 33, "charge"),
        ("/venv/lib/python3.11/site-packages/shop/pricing.py", 12, ""),
    ]
    assert "charge" in a.identifiers
    ipython = analyze(
        "~/venv/lib/python3.8/site-packages/shop/payments.py in charge(card)\n"
        "     30     delays = backoff_delays(attempts)\n"
        "---> 31     for attempt in range(attempts):\n"
    )
    assert ipython.frames == [("~/venv/lib/python3.8/site-packages/shop/payments.py", 31, "charge")]
    assert "venv/lib/python3.8/site-packages/shop/payments.py" in ipython.paths


def test_dispatch_reads_the_frames_of_other_languages_innermost_last():
    java = analyze(
        'Exception in thread "main" java.lang.IllegalStateException: no\n'
        "\tat com.shop.pay.Gateway$Retry.<init>(Gateway.java:12)\n"
        "\tat com.shop.pay.Cart.charge(Cart.java:40)\n"
        "\tat java.base/java.lang.Thread.run(Thread.java:829)\n"
        "Caused by: java.io.IOException: down\n"
        "\tat com.shop.net.Client.send (Client.java:7)\n"
        "\tat java.base/java.util.Optional.get(Optional.java:148)\n"
    )
    assert java.frames == [
        ("com/shop/pay/Cart.java", 40, "charge"),
        ("com/shop/pay/Gateway.java", 12, "Retry"),
        ("com/shop/net/Client.java", 7, "send"),
    ]
    go = analyze(
        "panic: runtime error: nil map\n\ngoroutine 7 [running]:\n"
        "google.golang.org/grpc.(*ClientConn).Close(0xc000)\n"
        "\t/go/pkg/mod/google.golang.org/grpc@v1.30.0/clientconn.go:1004 +0x3a\n"
        "runtime.gopanic(0x1)\n\t/usr/local/go/src/runtime/panic.go:965 +0x1b9\n"
        "google.golang.org/grpc/internal/transport.(*http2Client).reader.func1(0x1)\n"
        "\t/go/pkg/mod/google.golang.org/grpc@v1.30.0/internal/transport/http2.go:12 +0x1\n"
    )
    assert go.frames == [
        ("internal/transport/http2.go", 12, "reader"),
        ("clientconn.go", 1004, "Close"),
    ]
    rust = analyze(
        "thread 'main' panicked at 'boom', src/runtime/pool.rs:123:45\nstack backtrace:\n"
        "   0: std::panicking::begin_panic\n      at /rustc/ab/library/std/src/panicking.rs:5:1\n"
        "   1: <tokio::time::Sleep as core::future::Future>::poll\n"
        "      at /home/u/.cargo/registry/src/x/tokio-1.2.0/src/time/sleep.rs:88:9\n"
    )
    assert rust.frames == [
        ("/home/u/.cargo/registry/src/x/tokio-1.2.0/src/time/sleep.rs", 88, "poll"),
        ("src/runtime/pool.rs", 123, ""),
    ]
    assert analyze("thread 'main' panicked at crates/core/app.rs:12:5:\n").frames == [
        ("crates/core/app.rs", 12, "")
    ]
    js = analyze(
        "TypeError: x is undefined\n    at Dayjs.format (/app/src/index.js:276:12)\n"
        "    at new Locale (src/plugin/utc/index.js:3:4)\n"
        "    at Object.<anonymous> (/app/test.js:5:1)\n"
        "    at Module._compile (node:internal/modules/cjs/loader:1105:14)\n"
    )
    assert js.frames == [
        ("/app/test.js", 5, ""),
        ("src/plugin/utc/index.js", 3, "Locale"),
        ("/app/src/index.js", 276, "format"),
    ]
    native = analyze(
        "#0  0x00005555 in ZSTD_decompressStream (zds=0x1) at lib/decompress/zstd.c:1850\n"
        "#1  0x00005556 in main (argc=1) at programs/cli.c:12\n"
        "    #0 0x4f5b3c in HUF_decode /src/zstd/lib/huf.c:123:5\n"
        "==9==    by 0x40123: ZSTD_copy (zstd_internal.h:40)\n"
        "include/fmt/core.h:1234:5: error: static assertion failed\n"
    )
    assert native.frames == [
        ("zstd_internal.h", 40, "ZSTD_copy"),
        ("/src/zstd/lib/huf.c", 123, "HUF_decode"),
        ("programs/cli.c", 12, "main"),
        ("lib/decompress/zstd.c", 1850, "ZSTD_decompressStream"),
        ("include/fmt/core.h", 1234, ""),
    ]
    assert {"ZSTD_decompressStream", "HUF_decode"} <= set(native.identifiers)
    assert not any(i.startswith("x0") for i in native.identifiers)  # addresses


def test_absolute_paths_are_embedded_cut_short():
    from dowse.retrieval.query import compact_paths

    text = (
        'File "/Users/ann/proj/venv/lib/python3.9/site-packages/shop/payments.py", line 3\n'
        '  File "/usr/local/Cellar/python@3.9/3.9.13_1/lib/python3.9/argparse.py", line 8\n'
        r"C:\Python310\Lib\site-packages\shop\pricing.py and /home/ann/work/app/web/api.py"
        "; shop/auth/tokens.py, https://example.org/docs/a/b/page.html and /tmp/x.py"
    )
    assert compact_paths(text) == (
        'File "shop/payments.py", line 3\n  File "argparse.py", line 8\n'
        "shop/pricing.py and app/web/api.py; shop/auth/tokens.py, "
        "https://example.org/docs/a/b/page.html and /tmp/x.py"
    )


def test_a_path_names_the_files_sharing_its_longest_tail(searcher):
    named = searcher.lookups.files_named(
        [
            "/venv/lib/python3.11/site-packages/shop/auth/tokens.py",  # an installed copy
            "site-packages/shop/__init__.py",  # not shop/auth/__init__.py (one part shared)
            "api/routes.py",
            "other/pricing.py",
            "__init__.py",
        ]
    )
    assert named == {
        "/venv/lib/python3.11/site-packages/shop/auth/tokens.py": ["shop/auth/tokens.py"],
        "site-packages/shop/__init__.py": ["shop/__init__.py"],
        "api/routes.py": ["shop/api/routes.py"],
        "__init__.py": [
            "shop/__init__.py",
            "shop/api/__init__.py",
            "shop/auth/__init__.py",
            "shop/storage/__init__.py",
        ],
    }  # other/pricing.py: one part in common


def test_a_path_naming_many_files_names_none(searcher):
    # `__init__.py` names four files of the example (more than `PoolLimits.few_named`),
    # routes.py one.
    cands = searcher.candidates(analyze("the import in __init__.py breaks api/routes.py"))
    named = {c.row["path"] for c in cands.values() if "path" in c.signals}
    assert named == {"shop/api/routes.py"}


def test_a_dotted_module_name_names_its_file(searcher):
    a = analyze("I think the bug is in shop.auth.tokens.verify_token, not in self.cart.total")
    assert a.modules == ["shop/auth/tokens/verify_token.py", "shop/auth/tokens.py", "shop/auth.py"]
    cands = searcher.candidates(a)
    assert {c.row["path"] for c in cands.values() if c.signals.get("path")} == {
        "shop/auth/tokens.py"
    }


def test_a_traceback_frame_brings_the_chunk_at_its_line(searcher):
    text = (
        'Traceback (most recent call last):\n  File "/srv/venv/lib/python3.11/'
        'site-packages/shop/payments.py", line 31, in charge\nKeyError: 0'
    )
    cands = searcher.candidates(analyze(text))
    [frame] = [
        c
        for c in cands.values()
        if c.row["path"] == "shop/payments.py" and c.row["start_line"] <= 31 <= c.row["end_line"]
    ]
    assert frame.signals["path"] == 1.0


def test_the_innermost_frame_marks_where_the_error_was_raised(searcher):
    text = (
        "Traceback (most recent call last):\n"
        '  File "/srv/venv/lib/python3.11/site-packages/shop/api/routes.py", line 5, in x\n'
        '  File "/srv/venv/lib/python3.11/site-packages/shop/payments.py", line 31, in '
        "charge\nKeyError: 0"
    )
    cands = searcher.candidates(analyze(text))
    raised = {c.row["path"] for c in cands.values() if c.signals.get("raised")}
    assert raised == {"shop/payments.py"}
    result = run_loop(searcher, text)
    [top] = [it for it in result.items if it.hit.path == "shop/payments.py"][:1]
    assert "where the task's stack trace ends" in top.reason
    assert not any(
        "stack trace ends" in it.reason for it in result.items if it.hit.path != "shop/payments.py"
    )


def test_a_name_defined_in_many_places_is_weak_evidence(tmp_path, fake_embedder):
    for name in "abcd":
        (tmp_path / f"{name}.py").write_text(f"def clean(x):\n    return x  # {name}\n")
    (tmp_path / "e.py").write_text("def scrub(x):\n    return x\n")
    build_index(tmp_path, embedder=fake_embedder)
    searcher = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    cands = searcher.candidates(analyze("clean() and scrub() both fail"))
    symbol = {c.row["path"]: c.signals.get("symbol") for c in cands.values()}
    assert symbol == {"a.py": 0.6, "b.py": 0.6, "c.py": 0.6, "d.py": 0.6, "e.py": 0.8}


def test_the_rarest_names_definitions_come_first_when_there_are_too_many(tmp_path, fake_embedder):
    for i in range(60):
        (tmp_path / f"m{i:02}.py").write_text(f"def run(x):\n    return x + {i}\n")
    (tmp_path / "z.py").write_text("def _print_singular(x):\n    return x\n")
    build_index(tmp_path, embedder=fake_embedder, config=IndexConfig(embed=False))
    searcher = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    found = searcher.lookups.symbols_named(["run", "_print_singular"], limit=50)
    assert len(found) == 50
    assert (found[0]["name"], found[0]["path"]) == ("_print_singular", "z.py")
    cands = searcher.candidates(analyze("run() calls _print_singular() and fails"))
    assert cands and any(
        c.row["path"] == "z.py" and c.signals.get("symbol") == 0.8 for c in cands.values()
    )


def test_a_cycle_spreads_over_files_and_looks_at_named_files_and_definitions(searcher):
    spread = run_loop(
        searcher,
        "token total discount cart charge order price",
        config=LoopConfig(per_cycle=4, per_file=1, max_cycles=1),
    )
    paths = [c.split(":")[0] for c, _ in spread.trace[0].candidates]
    assert len(paths) == 4 and len(set(paths)) == 4
    named = run_loop(
        searcher,
        "validate_token rejects tokens; the docs in web/format.js",
        config=LoopConfig(per_cycle=1, max_cycles=1),
    )
    paths = [c.split(":")[0] for c, _ in named.trace[0].candidates]
    assert paths == ["shop/auth/tokens.py", "web/format.js"]  # beyond the one ranked
    defined = run_loop(
        searcher,
        "validate_token rejects tokens, and BulkDiscount too",
        config=LoopConfig(per_cycle=1, max_cycles=1),
    )
    looked = [c.split(":")[0] for c, _ in defined.trace[0].candidates]
    # One ranked, and the other definition beyond it: validate_token's, BulkDiscount's.
    assert len(looked) >= 2 and {"shop/auth/tokens.py", "shop/pricing.py"} <= set(looked)


def test_a_task_naming_a_function_finds_its_definition_at_exact_lines(searcher):
    result = run_loop(searcher, "why does validate_token reject my token?")
    [found] = [it for it in result.items if it.hit.symbol == "validate_token"]
    assert (found.hit.path, found.hit.start_line, found.hit.end_line) == (
        "shop/auth/tokens.py",
        30,
        42,
    )
    # High (the calibrated model gives a named definition no weight beyond its score).
    assert found.relevance >= 0.7 and "defines a name the task mentions" in found.reason
    # Among the two best (the package's __init__ re-exports it: the fake embedder finds
    # that tiny file's summary closest).
    assert found in result.items[:2]


def test_loop_stops_early_when_enough_is_found(searcher):
    result = run_loop(searcher, "validate_token issue_token TokenError in shop/auth/tokens.py")
    assert len(result.trace) == 1
    assert result.stop_reason.startswith("3 results scored >= 0.7")
    assert sum(it.relevance >= 0.7 for it in result.items) >= 3


def test_loop_runs_all_cycles_when_it_must(searcher):
    config = LoopConfig(stop_hits=50)  # can never be satisfied on this small repo
    result = run_loop(searcher, "how is the order total computed and charged?", config=config)
    assert result.stop_reason in (
        "reached 3 cycles",
        "converged: the last cycle found nothing new of relevance",
    )
    strict = LoopConfig(stop_hits=50, high=0.99)
    result = run_loop(searcher, "FooBarBaz QuxQuux handling", config=strict)
    assert result.trace[-1].critical_gaps == ["FooBarBaz", "QuxQuux"]
    assert len(result.trace) >= 2 and result.trace[1].targeted  # gaps were looked up


def test_refine_targets_gaps_and_excludes_irrelevant_files(searcher):
    # Never satisfied, so that the loop refines.
    result = run_loop(
        searcher, "validate_token rejects expired tokens", config=LoopConfig(stop_hits=50)
    )
    first = result.trace[0]
    assert "TokenError" in first.gaps
    assert "TokenError" in result.trace[1].targeted
    excluded = set(result.trace[-1].excluded)
    assert all(p not in excluded for p in ("shop/auth/tokens.py",))
    assert all(
        it.relevance >= 0.2 or it.hit.path in excluded or it.cycle == len(result.trace)
        for it in result.items
    )
    assert "TokenError" not in result.items[0].missing_context  # resolved by cycle 2


def test_excludes_apply(searcher):
    config = LoopConfig(exclude=["shop/auth/"])
    result = run_loop(searcher, "validate_token", config=config)
    assert result.items and all(not it.hit.path.startswith("shop/auth/") for it in result.items)


def test_ask_packs_into_the_budget(searcher):
    small = ask(searcher, "how are discounts applied to the cart total?", budget=300)
    assert small.tokens <= 300 and small.context
    big = ask(searcher, "how are discounts applied to the cart total?", budget=5000)
    assert big.tokens <= 5000 and len(big.context) >= len(small.context)
    assert {b.form for b in small.context} <= {"full", "signature"}
    full = [b for b in big.context if b.form == "full"]
    assert full[0].path == "shop/pricing.py"
    lines = (searcher.root / full[0].path).read_text().split("\n")
    assert full[0].text == "\n".join(lines[full[0].start_line - 1 : full[0].end_line])
    # What does not fit whole is listed by signature: a tight budget still shows the
    # first file's code and says where more is (the files list names every file).
    tight = ask(searcher, "how are discounts applied to the cart total?", budget=600)
    delivered = {b.path for b in tight.context if b.form == "full"}
    assert tight.tokens <= 600 and tight.files[0].path in delivered
    assert any(b.form == "signature" for b in tight.context)


def test_the_first_files_loop_best_item_keeps_its_room_among_its_early_parts(searcher):
    """The loop's best item of the first file, when it is also one of the parts placed
    early (`Packing.first_file_leads`), is placed as the loop's item (the whole room), not
    as a next part under the first file's share: at 1,200 tokens `validate_token`, where
    expired tokens are rejected, stays a full block whatever the number of early parts."""
    question = "where are expired session tokens rejected?"
    for leads in (1, 2, 3):
        result = ask(searcher, question, budget=1200, packing=Packing(first_file_leads=leads))
        full = [(b.path, b.symbol) for b in result.context if b.form == "full"]
        assert ("shop/auth/tokens.py", "validate_token") in full, leads


def test_golden_ask(searcher):
    result = ask(searcher, "where are expired session tokens rejected?", budget=1200)
    data = json.loads(result.model_dump_json())
    golden = GOLDEN / "ask_expired_tokens.json"
    if os.environ.get("DOWSE_UPDATE_GOLDEN"):
        golden.write_text(json.dumps(data, indent=2) + "\n")
    assert data == json.loads(golden.read_text())


@pytest.mark.parametrize(
    ("text", "tests", "docs"),
    [
        ("where are the tests for validate_token?", True, False),
        ("which tests cover pricing", True, False),
        ("how are prices computed", False, False),
        ("where is the documentation for the API", False, True),
        ("update the README install section", False, True),
        # A bug report says "test" and "docs" in passing; its answer is the code.
        (
            "Saving a model with a custom primary key fails. "
            + "It used to work. " * 12
            + "I wrote a test that reproduces it, and the docs say it should work.",
            False,
            False,
        ),
        (
            "Long report about a flaky test in the cache provider. " + "More detail. " * 20,
            True,
            False,
        ),
    ],
)
def test_a_question_is_about_tests_or_docs_only_when_they_are_its_subject(text, tests, docs):
    a = analyze(text)
    assert (a.mentions_tests, a.mentions_docs) == (tests, docs)


def test_a_long_questions_first_line_shares_its_vector(searcher, fake_embedder):
    import numpy as np

    def unit(v):
        v = np.asarray(v, dtype=np.float64)
        return v / np.linalg.norm(v)

    text = "Expired tokens are accepted\nWhen a session token is old the API still answers."
    got = unit(searcher.questions.embed_query(text))
    full, title = (unit(v) for v in fake_embedder.embed([text, "Expired tokens are accepted"]))
    assert np.allclose(got, unit(0.7 * full + 0.3 * title), atol=1e-3)
    # One line, or a first line too short to say anything alone: the text's own vector.
    for alone in ("expired tokens are accepted", "Bug\nexpired tokens are accepted"):
        assert np.allclose(
            unit(searcher.questions.embed_query(alone)),
            unit(fake_embedder.embed([alone])[0]),
            atol=1e-3,
        )


def test_a_question_is_embedded_with_the_embedders_query_method(searcher, fake_embedder):
    # An embedder with a graph for queries (`OnnxEmbedder.embed_queries`) gets the
    # question and its title there; the index's texts keep `embed`.
    class QueryEmbedder:
        name, dim = fake_embedder.name, fake_embedder.dim

        def __init__(self):
            self.calls: list[tuple[str, list[str]]] = []

        def embed(self, texts):
            self.calls.append(("embed", list(texts)))
            return fake_embedder.embed(texts)

        def embed_queries(self, texts):
            self.calls.append(("embed_queries", list(texts)))
            return fake_embedder.embed(texts)

    embedder = QueryEmbedder()
    s = HybridSearcher(searcher.store, lambda: embedder)
    text = "Expired tokens are accepted\nWhen a session token is old the API still answers."
    assert s.questions.embed_query(text) is not None
    assert embedder.calls == [
        ("embed_queries", [text]),
        ("embed_queries", ["Expired tokens are accepted"]),
    ]


def test_a_long_questions_first_line_is_searched_twice(searcher, monkeypatch):
    seen: list[list[str]] = []
    original = searcher.lookups.lexical

    def spy(tokens, k, where=None):
        seen.append(list(tokens))
        return original(tokens, k, where)

    monkeypatch.setattr(searcher.lookups, "lexical", spy)
    searcher.candidates(analyze("Expired tokens are accepted\nThe checkout still answers."))
    counts = Counter(seen[0])
    assert counts["expired"] == counts["accepted"] == 2  # the first line's words
    assert counts["checkout"] == 1 and counts["answers"] == 1
    seen.clear()
    searcher.candidates(analyze("expired tokens are accepted by the checkout"))
    assert max(Counter(seen[0]).values()) == 1


def test_a_chunk_s_used_names_are_kept_in_a_bounded_cache_and_handed_out_as_copies():
    from dowse.retrieval import evaluate

    first = evaluate.used_names("x = f(1)\n")
    first.append("changed by a caller")
    assert evaluate.used_names("x = f(1)\n") == ["f"]
    for n in range(evaluate.CHUNK_CACHE + 10):
        evaluate.used_names(f"g{n}()")
    kept = evaluate._used_names.cache_info()
    assert kept.maxsize == evaluate.CHUNK_CACHE and kept.currsize == evaluate.CHUNK_CACHE


def test_a_subclass_base_is_missing_context_looked_up_next(tmp_path, fake_embedder):
    from dowse.retrieval.evaluate import used_names

    assert used_names("class A(pkg.Base[int], Mixin, metaclass=Meta):\n    x = f(1)\n") == [
        "Base",
        "Mixin",
        "A",
        "f",
    ]
    assert used_names("export class Foo extends React.Component implements Bar, Baz {") == [
        "Component",
        "Bar",
        "Baz",
    ]
    # BulkRule's behaviour lives partly in Rule, which it only extends: no call names it.
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "base.py").write_text(
        "class Rule:\n    share = 0.1\n\n    def amount(self, total):\n"
        "        return min(total * self.share, total)\n"
    )
    (tmp_path / "rules" / "bulk.py").write_text(
        "from rules.base import Rule\n\n\nclass BulkRule(Rule):\n    share = 0.5\n"
    )
    build_index(tmp_path, embedder=fake_embedder)
    s = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    result = run_loop(s, "BulkRule takes too much off", config=LoopConfig(stop_hits=50))
    assert "Rule" in result.trace[0].gaps
    assert "Rule" in result.trace[1].targeted
    bulk = next(it for it in result.items if it.hit.path == "rules/bulk.py")
    assert "Rule" not in bulk.missing_context  # resolved by the look-up


@pytest.mark.parametrize(
    ("path", "language", "docs"),
    [
        ("docs/guide.md", "markdown", True),
        ("examples/plot_prices.py", "python", True),
        ("galleries/tutorials/intro.py", "python", True),
        ("shop/pricing.py", "python", False),
        ("shop/example.py", "python", False),  # a module named so, not a directory of them
        ("doc/educational_decoder/zstd_decompress.c", "c", True),  # code in the docs tree
        ("lib/decompress/zstd_decompress.c", "c", False),
    ],
)
def test_example_and_tutorial_scripts_are_documentation(path, language, docs):
    from dowse.languages import is_documentation

    assert is_documentation(path, language) is docs


def test_example_scripts_count_as_documentation_unless_asked_for(searcher):
    from dowse.retrieval.evaluate import OfflineEvaluator
    from dowse.retrieval.pool import Candidate

    row = {
        "id": "x",
        "path": "examples/discounts_demo.py",
        "language": "python",
        "start_line": 1,
        "end_line": 3,
        "symbol": None,
        "text": "cart = Cart()\nprint(cart_total(cart))\n",
    }
    plain = analyze("cart_total applies the bulk discount twice")
    asked = analyze("update the examples of cart_total")
    assert not plain.mentions_docs and asked.mentions_docs
    evaluator = OfflineEvaluator()
    assert evaluator.features(plain, [Candidate(row, {"lexical": 1.0}, 1.0)])[0].text
    assert not evaluator.features(asked, [Candidate(row, {"lexical": 1.0}, 1.0)])[0].text


def test_a_definition_is_shown_by_its_own_chunk(tmp_path, fake_embedder, searcher):
    # A long function's `def` line closes the chunk of the module lines above it, and its
    # body starts the next chunk: that next chunk is the one that shows the definition.
    (tmp_path / "pkg").mkdir()
    doc = "\n".join(f"    Line {i} about the many options of convert." for i in range(40))
    body = "\n".join(f"    step_{i} = expr + {i}" for i in range(30))
    (tmp_path / "pkg" / "convert.py").write_text(
        f'"""Conversions."""\n\n# A counter.\n_counter = 1\n\n@register(kind="fast")\n'
        f'def convert(args, expr, modules=None):\n    """\n{doc}\n    """\n{body}\n'
        f"    return step_29\n"
    )
    build_index(tmp_path, embedder=fake_embedder)
    s = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    sym = s.lookups.symbols_named(["convert"])
    assert s.lookups.chunk_at("pkg/convert.py", sym[0]["start_line"])["symbol"] is None
    shown = s.lookups.definition_chunks(sym)[("pkg/convert.py", sym[0]["start_line"])]
    assert shown["symbol"] == "convert" and shown["start_line"] > sym[0]["start_line"]
    # A small definition inside a chunk of several is shown by that chunk.
    item = searcher.lookups.symbols_named(["LineItem"])
    held = searcher.lookups.chunk_at("shop/pricing.py", item[0]["start_line"])
    assert (
        searcher.lookups.definition_chunks(item)[("shop/pricing.py", item[0]["start_line"])] == held
    )


def test_files_by_words_ranks_whole_files_and_skips_tests_and_docs(searcher):
    a = analyze("discount rules: bulk discount and coupon discount on the cart total")
    ranked = [p for p, _ in files_by_words(searcher.lookups, a)]
    assert ranked[0] == "shop/pricing.py"
    assert not any(p.startswith("tests/") or p.endswith(".md") for p in ranked)
    asked = analyze("which tests cover the bulk discount and the coupon discount")
    assert any(p.startswith("tests/") for p, _ in files_by_words(searcher.lookups, asked))
    row = dict(files_by_words(searcher.lookups, a))["shop/pricing.py"]
    assert row["path"] == "shop/pricing.py" and row["start_line"] >= 1


def test_ask_fuses_the_whole_file_word_ranking(searcher, monkeypatch):
    import importlib

    ask_module = importlib.import_module("dowse.retrieval.ask")
    question = "how are discounts applied to the cart total?"
    plain = ask(searcher, question)
    assert plain.files[0].words_rank == 0  # pricing.py: first either way
    # A file the loop never evaluated, first by words, is listed, unevaluated, with
    # the citation of its best chunk; a weight of 0 leaves the loop's order alone.
    path = "tests/test_tokens.py"
    assert path not in {it.hit.path for it in ask_module.run_loop(searcher, question).items}
    row = {
        "path": path,
        "start_line": 6,
        "end_line": 8,
        "symbol": "test_round_trip",
        "text": 'def test_round_trip():\n    token = issue_token(42, b"k")\n',
    }
    monkeypatch.setattr(ask_module, "files_by_words", lambda *a, **k: [(path, row)])
    monkeypatch.setattr(ask_module, "files_by_closeness", lambda *a, **k: [])
    fused = ask(searcher, question)
    listed = {f.path: f for f in fused.files}
    assert listed[path].relevance == 0.0
    assert listed[path].citations == [f"{path}:6-8"]
    assert "no part scored relevant" in listed[path].reason
    # ... and its best chunk's first line is in the context, as a signature.
    [line] = [b for b in fused.context if b.path == path]
    assert (line.form, line.text, line.relevance) == ("signature", "def test_round_trip():", 0.0)
    unweighted = [f.path for f in ask(searcher, question, fusion=FileFusion(words=0.0)).files]
    evaluated = [
        f.path
        for f in ask_module._evaluated_files(
            [
                it
                for it in ask_module.run_loop(searcher, question).items
                if it.relevance >= ask_module.Packing().min_relevance
            ]
        )
    ]
    assert unweighted == [*evaluated, path]


def test_ask_fuses_the_ranking_by_closeness_in_meaning(searcher, monkeypatch):
    import importlib

    ask_module = importlib.import_module("dowse.retrieval.ask")
    question = "how are discounts applied to the cart total?"
    by_closeness = files_by_closeness(searcher.lookups, searcher.questions, analyze(question))
    # Tests and docs left out (the question is not about them), each file with a chunk
    # of its own to cite.
    assert by_closeness and all(
        not p.startswith("tests/") and not p.endswith(".md") and row["path"] == p
        for p, row in by_closeness
    )
    # None that is not close in absolute terms, however few files the index has.
    sims = dict(file_dense(searcher.questions, searcher.questions.embed_query(question), 1000))
    assert all(sims[p] >= FileRankingConfig().close_min for p, _ in by_closeness)
    anything = FileRankingConfig(close_min=-1.0)
    closer = files_by_closeness(
        searcher.lookups, searcher.questions, analyze(question), config=anything
    )
    assert len(closer) > len(by_closeness)
    plain = ask(searcher, question)
    close = {p: i for i, (p, _) in enumerate(by_closeness)}
    assert all(f.closeness_rank == close.get(f.path) for f in plain.files)
    # A file the loop never evaluated, first by closeness, is listed unevaluated with the
    # citation of the chunk it came with, and in the context as a signature line.
    path = "web/checkout.js"
    row = {
        "path": path,
        "start_line": 1,
        "end_line": 3,
        "symbol": "formatTotal",
        "text": "export function formatTotal(cents) {\n",
    }
    monkeypatch.setattr(ask_module, "files_by_words", lambda *a, **k: [])
    monkeypatch.setattr(ask_module, "files_by_closeness", lambda *a, **k: [(path, row)])
    listed = {f.path: f for f in ask(searcher, question).files}
    assert listed[path].relevance == 0.0 and listed[path].closeness_rank == 0
    assert listed[path].citations == [f"{path}:1-3"]
    assert listed[path].reason == ask_module.UNEVALUATED_CLOSE_REASON
    fused = ask(searcher, question)
    [line] = [b for b in fused.context if b.path == path]
    assert (line.form, line.text) == ("signature", "export function formatTotal(cents)")
    # Its weight lifts it above evaluated files; at 0 it comes after all of them.
    assert [f.path for f in fused.files].index(path) < len(fused.files) - 1
    unweighted = ask(searcher, question, fusion=FileFusion(closeness=0.0))
    assert [f.path for f in unweighted.files][-1] == path


def test_a_warm_searcher_sees_files_change_after_it_read_the_file_list(searcher):
    # The file list is read once per searcher; the disk is looked at on every call.
    assert searcher.lookups.stale_paths(["shop/pricing.py", "shop/payments.py"]) == set()
    (searcher.root / "shop" / "pricing.py").write_text("# rewritten\n")
    (searcher.root / "shop" / "payments.py").unlink()
    assert searcher.lookups.stale_paths(
        ["shop/pricing.py", "shop/payments.py", "shop/__init__.py", "not/indexed.py"]
    ) == {"shop/pricing.py", "shop/payments.py", "not/indexed.py"}


def test_lookups_held_in_memory_answer_as_the_queries_do(searcher, monkeypatch):
    # Definitions, first chunks, the chunk at a line and a full-text query's chunks come
    # from the rows held in memory; beyond `memory_rows` they are LanceDB queries. Both
    # give the same rows, and once held, nothing more is read from the store.
    import dowse.retrieval.lookups as lookups

    def look(s):
        syms = s.lookups.symbols_named(
            ["validate_token", "LineItem", "BulkDiscount", "total", "nope"]
        )
        return (
            syms,
            s.lookups.definition_chunks(syms),
            s.lookups.first_chunks(["shop/pricing.py", "web/format.js", "missing.py"]),
            s.lookups.chunks_at(
                [("shop/pricing.py", 1), ("shop/payments.py", 31), ("shop/pricing.py", 10**6)]
            ),
            s.lookups.lexical(["token", "expired", "cart"], 8),
            s.lookups.lexical(["token"], 3, "path IN ('shop/auth/tokens.py')"),
            s.lookups.definitions_of(["validate_token", "LineItem", "lineitem", "nope"]),
        )

    held = look(HybridSearcher(searcher.store, None))
    syms, defined, first, at, _, _, where = held
    # Exact names only: `lineitem` is no definition's name.
    assert {r["name"] for r in where} == {"validate_token", "LineItem"}
    assert all(set(r) == {"name", "qualified_name", "path", "start_line"} for r in where)
    assert {s["name"] for s in syms} >= {"validate_token", "LineItem", "BulkDiscount"}
    assert len(defined) == len(syms) and all(r["text"] for r in defined.values())
    assert sorted(first) == ["shop/pricing.py", "web/format.js"]
    assert first["shop/pricing.py"]["start_line"] == 1
    assert sorted(at) == [("shop/payments.py", 31), ("shop/pricing.py", 1)]
    assert (
        at[("shop/payments.py", 31)]["start_line"] <= 31 <= at[("shop/payments.py", 31)]["end_line"]
    )

    read: list[str] = []
    rows = searcher.store.rows
    monkeypatch.setattr(
        searcher.store, "rows", lambda name, *a, **k: read.append(name) or rows(name, *a, **k)
    )
    warm = HybridSearcher(searcher.store, None)
    warm.warm()
    assert read == ["files"]  # the file list; the held tables are read as a whole
    # Their keys built too (the chunks' spans are not held beside the chunks).
    assert set(warm.lookups._positions or {}) == set(lookups.KEYED) - {("spans", "path")}
    read.clear()
    assert look(warm) == held
    assert read == []
    assert len(held[4]) == 8 and {r["path"] for r, _ in held[5]} == {"shop/auth/tokens.py"}
    unheld = lookups.IndexLookups(searcher.store, memory_rows=0)
    assert look(HybridSearcher(searcher.store, None, lookups=unheld)) == held


def test_lookups_hold_the_tables_without_text_beyond_the_chunks_cap(searcher, monkeypatch):
    # Chunks too many to hold with their text (`memory_rows`) leave the symbols, the
    # files' languages, the imports and the chunks' spans held (`narrow_rows`): finding
    # definitions and spans reads nothing more, only a chosen chunk's text is a query,
    # and every look-up gives the rows the fully held tables give.
    import dowse.retrieval.lookups as lookups

    store = searcher.store
    narrow = lookups.IndexLookups(store, memory_rows=0, narrow_rows=lookups.NARROW_ROWS)
    held = lookups.IndexLookups(store)
    narrow.warm()
    held.warm()
    assert narrow.held("chunks") is None and narrow.held("spans") is not None
    assert held.held("spans") is None  # the chunks held with their text serve instead
    read: list[str] = []
    rows = store.rows
    monkeypatch.setattr(
        store, "rows", lambda name, *a, **k: read.append(name) or rows(name, *a, **k)
    )
    paths = ["shop/pricing.py", "web/format.js", "missing.py"]
    names = ["validate_token", "LineItem", "BulkDiscount", "total", "nope"]
    for look in (
        lambda s: s.symbols_named(names),
        lambda s: s.definitions_of(names),
        lambda s: s.spans_of(paths),
        lambda s: s.rows_in("files", ["path", "language"], "path", paths),
        lambda s: s.rows_in("imports", ["path", "module"], "path", paths),
    ):
        assert look(narrow) == look(held)
    assert read == []
    assert narrow.first_chunks(paths) == held.first_chunks(paths)
    assert read == ["chunks"]  # the chosen chunks' text, by id
    assert narrow.chunks_holding("def") == [] and held.chunks_holding("def")


def test_a_cycle_asking_the_words_of_an_earlier_one_reuses_its_full_text_result(
    searcher, monkeypatch
):
    asked: list[list[str]] = []
    lexical = searcher.lookups.lexical
    monkeypatch.setattr(
        searcher.lookups,
        "lexical",
        lambda tokens, k, where=None: asked.append(list(tokens)) or lexical(tokens, k, where),
    )
    analysis = analyze("where is the cart total computed with a bulk discount")
    memo: dict = {}
    first = searcher.candidates(analysis, memo=memo)
    n = len(asked)
    again = searcher.candidates(analysis, memo=memo)
    assert len(asked) == n
    assert {i: c.signals for i, c in again.items()} == {i: c.signals for i, c in first.items()}
    searcher.candidates(analysis, memo=memo, extra_tokens=["payments"])
    assert len(asked) == n + 1 and "payments" in asked[-1]


def test_a_full_text_query_asked_again_for_fewer_rows_is_answered_once_per_answer(
    searcher, monkeypatch
):
    # Inside `remembering`, the same words and filter asked again for as many rows or
    # fewer are answered from the first answer, as a query of their own answers them;
    # more rows, or outside it, are asked again.
    lookups = searcher.lookups
    asked: list[int] = []
    full_text = searcher.store.full_text
    monkeypatch.setattr(
        searcher.store,
        "full_text",
        lambda name, text, columns, k, *a: asked.append(k) or full_text(name, text, columns, k, *a),
    )
    words = ["token", "expired", "cart", "total", "discount"]
    alone = lookups.lexical(words, 4)
    assert len(alone) == 4 and asked == [4]
    with lookups.remembering():
        many = lookups.lexical(words, 12)
        few = lookups.lexical(words, 4)
        other = lookups.lexical(words, 4, "path LIKE 'shop/%'")
        more = lookups.lexical(words, 20)
        with lookups.remembering():  # an answer inside another shares its results
            again = lookups.lexical(words, 20)
    assert asked == [4, 12, 4, 20]
    assert [(r["id"], s) for r, s in few] == [(r["id"], s) for r, s in alone]
    assert few == many[:4] and again == more and other
    few[0][0]["text"] = "changed"  # a caller's change to its rows is its own
    with lookups.remembering():
        lookups.lexical(words, 12)
        assert lookups.lexical(words, 4)[0][0]["text"] != "changed"
    lookups.lexical(words, 4)
    assert asked == [4, 12, 4, 20, 12, 4]


def test_ask_asks_its_first_searchs_words_once(searcher, monkeypatch):
    # The whole-file word ranking asks the words of the loop's first search for more
    # rows: it is asked first, and the search takes its first rows. Both read the
    # question as the loop does (the project's name, written as prose, is no word).
    (searcher.root / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    asked: list[tuple[str, str | None]] = []
    full_text = searcher.store.full_text
    monkeypatch.setattr(
        searcher.store,
        "full_text",
        lambda name, text, columns, k, where=None: (
            asked.append((text, where)) or full_text(name, text, columns, k, where)
        ),
    )
    question = "where does the shop compute the cart total with a bulk discount?"
    result = ask(searcher, question, budget=2000)
    assert result.files and asked and all(" shop " not in f" {text} " for text, _ in asked)
    assert len(asked) == len(set(asked))


def test_ask_analyses_its_question_once(searcher, monkeypatch):
    # The history's ranking reads the question as the searcher does, the loop as
    # `loop_analysis` does (the project's name as prose): one analysis serves both, and
    # the history's is not changed by the loop's reading of it.
    from dowse.retrieval.loop import loop_analysis

    (searcher.root / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    question = "where does Shop compute the cart total in shop?"
    analysis = searcher.analyze(question)
    before = analysis.model_copy(deep=True)
    assert loop_analysis(searcher, question, analysis) == loop_analysis(searcher, question)
    assert analysis == before
    analysed: list[str] = []
    analyze = searcher.analyze
    monkeypatch.setattr(searcher, "analyze", lambda text: analysed.append(text) or analyze(text))
    ask(searcher, question, budget=2000)
    assert analysed.count(question) == 1


def test_callers_and_callees_read_the_held_rows_and_find_what_the_queries_find(
    searcher, monkeypatch
):
    from dowse.retrieval.references import links_of

    symbols = searcher.store.rows("symbols", ["path", "start_line", "end_line", "qualified_name"])
    spans = [
        (r["path"], r["start_line"], r["end_line"], name)
        for r in symbols
        if r["path"].startswith("shop/")
        for name in (r["qualified_name"], None)
    ]
    queried = links_of(searcher.store, spans, limit=3)
    assert {link.relation for link in queried} == {"caller", "callee"}
    searcher.lookups.warm()
    read: list[str] = []
    rows = searcher.store.rows
    monkeypatch.setattr(
        searcher.store, "rows", lambda name, *a, **k: read.append(name) or rows(name, *a, **k)
    )
    assert links_of(searcher.store, spans, limit=3, lookups=searcher.lookups) == queried
    assert set(read) == {"refs"}  # definitions, files and imports are held
    # Every definition's references in one read each way (and one for the classes a
    # runtime method's receiver may be), not two reads per definition followed.
    assert len(read) <= 3 < len(spans)


def test_links_of_many_spans_are_each_spans_links_in_order(searcher):
    from dowse.retrieval.references import links_of

    symbols = searcher.store.rows("symbols", ["path", "start_line", "end_line", "qualified_name"])
    spans = [
        (r["path"], r["start_line"], r["end_line"], name)
        for r in symbols[::4]  # a few of each file's: one by one, each is a few queries
        for name in (r["qualified_name"], None)
    ]
    one_by_one = [link for span in spans for link in links_of(searcher.store, [span], limit=2)]
    assert {link.relation for link in one_by_one} == {"caller", "callee"}
    assert links_of(searcher.store, spans, limit=2) == one_by_one


def test_held_positions_are_one_row_for_a_unique_value_else_the_rows_in_order():
    from dowse.retrieval.lookups import _positions

    assert _positions(pa.array(["b", "a", "c"])) == {"b": 0, "a": 1, "c": 2}
    repeated = _positions(pa.chunked_array([["b", "a"], ["b", None, "c", "b"]]))
    found = {v: repeated.get(v) for v in ["b", "a", None, "c", "d"]}
    assert found == {"b": [0, 2, 5], "a": [1], None: [3], "c": [4], "d": None}


@pytest.mark.parametrize(
    ("path", "bench"),
    [
        ("asv_bench/benchmarks/groupby.py", True),
        ("benchmarks/query_bench.py", True),
        ("pkg/bench/cache.py", True),
        ("crates/core/benches/parse.rs", True),
        ("shop/benchmarking.py", False),  # a module named so, not a directory of them
        ("shop/pricing.py", False),
    ],
)
def test_benchmark_directories_are_recognised(path, bench):
    from dowse.languages import is_benchmark_path

    assert is_benchmark_path(path) is bench


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("evict drops the newest cache entry", False),
        ("the benchmarks for evict", True),
        ("add a benchmark for cache eviction", True),
        ("Cache eviction is slow. " + "Details follow. " * 25 + "A benchmark shows it.", False),
    ],
)
def test_a_question_is_about_benchmarks_only_when_they_are_its_subject(text, asked):
    assert analyze(text).mentions_benchmarks is asked


def _bench_repo(root: Path) -> None:
    (root / "shop").mkdir()
    (root / "shop" / "cache.py").write_text(
        "def evict_oldest(entries, limit):\n"
        "    while len(entries) > limit:\n"
        "        entries.pop(next(iter(entries)))\n"
        "    return entries\n"
    )
    # The benchmark repeats the question's words more often than the code does.
    (root / "asv_bench").mkdir()
    (root / "asv_bench" / "bench_cache.py").write_text(
        "from shop.cache import evict_oldest\n\n\n"
        "class EvictOldestEntries:\n"
        "    def time_evict_oldest_entries(self):\n"
        "        entries = {i: i for i in range(1000)}\n"
        "        evict_oldest(entries, limit=10)  # evict oldest entries over the limit\n"
    )


def test_benchmarks_rank_like_tests_unless_asked_for(tmp_path, fake_embedder):
    _bench_repo(tmp_path)
    build_index(tmp_path, embedder=fake_embedder)
    s = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    plain = ask(s, "evict_oldest keeps too many oldest entries over the limit")
    assert plain.files[0].path == "shop/cache.py"
    bench = next(f for f in plain.files if f.path.startswith("asv_bench/"))
    assert "a benchmark" in bench.reason
    assert "a test" not in bench.reason
    asked = ask(s, "the benchmarks for evict_oldest entries")
    asked_bench = next(f for f in asked.files if f.path == bench.path)
    assert "a benchmark" not in asked_bench.reason
    assert asked_bench.relevance > bench.relevance


def _row(path: str, text: str, symbol: str | None = None, language: str = "python") -> dict:
    return {
        "id": path + str(len(text)),
        "path": path,
        "language": language,
        "start_line": 1,
        "end_line": text.count("\n") + 1,
        "symbol": symbol,
        "text": text,
    }


@pytest.mark.parametrize(
    ("language", "text", "gaps"),
    [
        # A dict's get, a str's join: the language's own methods, though the index
        # defines a `get` and a `join` (on Cache and PathList, which this code never names).
        ("python", "rate = rates.get(kind)\nlabel = ', '.join(names)\n", []),
        # It names Cache: Cache.get is the method it calls.
        ("python", "cache = Cache()\nrate = cache.get(kind)\n", ["get"]),
        ("rust", "let v = opt.unwrap().clone();\nlet w = items.iter().map(f);\n", []),
        ("go", "xs = append(xs, x)\nn := len(xs)\n", []),
        ("javascript", "items.push(x);\nconst s = parts.join(',');\n", []),
        # A name not on any list stays a gap as before.
        ("python", "total = compute_total(order)\n", ["compute_total"]),
    ],
)
def test_builtin_method_calls_are_no_missing_context(language, text, gaps):
    from dowse.retrieval.evaluate import OfflineEvaluator, Spot
    from dowse.retrieval.pool import Candidate

    known = {
        name: [Spot("lib/defs.py", 10, owner)]
        for name, owner in [
            ("get", "Cache"),
            ("join", "PathList"),
            ("unwrap", "Parsed"),
            ("clone", "Parsed"),
            ("iter", "Tree"),
            ("map", "Tree"),
            ("append", "Log"),
            ("push", "Queue"),
            ("compute_total", None),
        ]
    }
    row = _row("shop/orders.ext", text, language=language)
    [ev] = OfflineEvaluator().evaluate(
        analyze("order totals"), [Candidate(row, {"lexical": 1.0}, 1.0)], known, ()
    )
    assert ev.missing_context == gaps


def test_a_builtin_method_of_the_chunks_own_class_is_a_gap_the_loop_looks_up(
    tmp_path, fake_embedder
):
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "store.py").write_text(
        "class Store:\n    def get(self, key):\n        return self.entries[key]\n"
    )
    (tmp_path / "shop" / "cache.py").write_text(
        "from shop.store import Store\n\n\n"
        "class Cache(Store):\n"
        "    def price_for(self, sku):\n"
        "        return self.get(sku) or DEFAULT_PRICES.get(sku)\n"
    )
    (tmp_path / "shop" / "orders.py").write_text(
        "def order_price(order, rates):\n"
        "    rate = rates.get(order.kind)\n"
        "    return ', '.join(order.lines) if rate is None else rate\n"
    )
    build_index(tmp_path, embedder=fake_embedder)
    s = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    result = run_loop(s, "order_price and price_for rates", config=LoopConfig(max_cycles=1))
    by_symbol = {it.hit.symbol: it for it in result.items}
    assert by_symbol["order_price"].missing_context == []
    assert "get" in result.trace[0].gaps  # Cache names Store, whose get it calls


# -- the block that holds the behaviour --------------------------------------------------


@pytest.fixture
def billing(tmp_path, fake_embedder):
    """fixtures/billing: a module whose docstring and imports name the question's words
    as often as the function that does what it asks."""
    shutil.copytree(
        Path(__file__).parent.parent / "fixtures" / "billing", tmp_path, dirs_exist_ok=True
    )
    build_index(tmp_path, embedder=fake_embedder)
    return HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)


def test_the_function_that_raises_comes_before_the_modules_docstring_and_imports(billing):
    question = "where is a refund rejected when the charge is older than the refund window?"
    result = run_loop(billing, question)
    refunds = [it for it in result.items if it.hit.path == "billing/refunds.py"]
    header = next(it for it in refunds if it.hit.start_line == 1)
    code = next(it for it in refunds if "raise RefundRejected" in (it.hit.text or ""))
    # The header matches the words best; it is ranked after the code all the same.
    assert header.relevance >= code.relevance
    assert header.behaviour < 0.2 and code.behaviour == 1.0
    assert result.items.index(code) < result.items.index(header)
    assert "mostly docstring, comments or imports" in header.reason
    answer = ask(billing, question, budget=700)
    assert answer.files[0].path == "billing/refunds.py"  # the file ranking is the evaluator's
    first = next(b for b in answer.context if b.path == "billing/refunds.py")
    assert first.form == "full" and "raise RefundRejected" in first.text
    assert not any(
        b.form == "full" and b.start_line == 1 for b in answer.context if b.path == first.path
    )


@pytest.mark.parametrize(
    ("language", "text", "counts", "share"),
    [
        # A documented function keeps its place: its code outweighs its docstring.
        (
            "python",
            'def f(x):\n    """Doc.\n\n    More.\n    """\n    # why\n    if x:\n'
            "        raise ValueError(x)\n    return x\n",
            (4, 4, 0),
            1.0,
        ),
        # A module header: docstring and imports, no code.
        (
            "python",
            '"""Orders.\n\nKept in SQLite.\n"""\nimport os\nfrom a import (\n    b,\n)\n',
            (0, 3, 4),
            0.125,
        ),
        # A string a statement opens is code, not a docstring.
        ("python", 'SQL = """\nSELECT 1\n"""\nrun(SQL)\n', (4, 0, 0), 1.0),
        (
            "go",
            'package main\n\nimport (\n\t"fmt"\n)\n\n// Run runs.\nfunc Run() {}\n',
            (1, 1, 4),
            0.333,
        ),
        (
            "javascript",
            "import {\n  a,\n} from './a';\n/**\n * Doc.\n */\nexport const f = () => a();\n",
            (1, 3, 3),
            0.286,
        ),
        ("rust", "use std::fmt;\n/// Doc.\n#[derive(Debug)]\npub struct S;\n", (2, 1, 1), 1.0),
        ("markdown", "# Title\n\nprose\n", None, 1.0),
    ],
)
def test_behaviour_share_counts_code_against_prose_and_imports(language, text, counts, share):
    from dowse.retrieval.behaviour import behaviour_share, count_lines

    found = count_lines(text, language)
    assert (None if found is None else (found.code, found.prose, found.imports)) == counts
    assert behaviour_share(text, language) == share


def test_imports_are_code_when_the_question_is_about_them():
    from dowse.retrieval.behaviour import behaviour_share

    header = "import os\nimport sys\nfrom shop.pricing import Cart\n"
    assert behaviour_share(header, "python") == 0.25
    assert behaviour_share(header, "python", imports_are_code=True) == 1.0
    assert analyze("circular import between pricing and cart").mentions_imports
    assert analyze("where is Cart imported?").mentions_imports
    assert not analyze("where are discounts applied to a cart?").mentions_imports


@pytest.mark.parametrize(
    ("text", "names", "defines"),
    [
        ('import os\nDEFAULT_LOG_FORMAT = "%(name)s"\n', ["DEFAULT_LOG_FORMAT"], True),
        ("MAX: int = 3\n", ["MAX"], False),  # too short a name to tell
        ("MAX_SIZE: int = 3\n", ["config.MAX_SIZE"], True),  # a dotted name by its last part
        ("static const int MAX_LEN = 4;\n", ["MAX_LEN"], True),
        ("#define ZSTD_MAX 3\n", ["ZSTD_MAX"], True),
        ("pub const LIMITS: usize = 3;\n", ["LIMITS"], True),
        # A function's or class's chunk is not its value: widened, it shows its body.
        ('    def resolve_redirects(self):\n        """Doc."""\n', ["resolve_redirects"], False),
        ("fmt = DEFAULT_LOG_FORMAT\n", ["DEFAULT_LOG_FORMAT"], False),  # used, not defined
        ("if MAX_LEN == 4:\n", ["MAX_LEN"], False),
        ("call(MAX_LEN=4)\n", ["MAX_LEN"], False),  # a keyword argument
        ("MAX_LEN = 4\n", [], False),
        # A function's parameter default and its local of that name are not the value.
        ("def f(\n    mode: str = 'a',\n):\n    mode = Mode(mode)\n", ["mode"], False),
    ],
)
def test_a_chunk_defines_a_name_the_question_mentions(text, names, defines):
    from dowse.retrieval.behaviour import defines_any

    assert defines_any(text, names) is defines


@pytest.mark.parametrize(
    ("path", "copy"),
    [
        ("singleheader/simdjson.h", True),  # an amalgamation of include/
        ("single_include/nlohmann/json.hpp", True),
        ("api/grpc_lb_v1/load_balancer.pb.go", True),
        ("vendor/golang.org/x/net/http2/frame.go", True),
        ("third_party/zlib/inflate.c", True),
        ("dependencies/jsoncppdist/jsoncpp.cpp", True),
        ("contrib/linux-kernel/lib/zstd/decompress.c", True),
        ("lib/legacy/zstd_v07.c", True),
        ("django/contrib/admin/options.py", False),  # Django's contrib/ is Django
        ("include/simdjson/dom/parser.h", False),
        ("internal/vendoring.go", False),  # a file named so, not a vendor/ directory
        ("balancer/grpclb/grpclb.go", False),
    ],
)
def test_generated_and_vendored_copies_are_recognised(path, copy):
    from dowse.languages import is_generated_path, is_vendored_path

    assert (is_generated_path(path) or is_vendored_path(path)) is copy


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("tests/test_cache.py", "a test"),
        ("benches/cache.rs", "a benchmark"),
        ("singleheader/simdjson.h", "generated code"),
        ("api/grpc_lb_v1/load_balancer.pb.go", "generated code"),
        ("vendor/golang.org/x/net/http2/frame.go", "a vendored copy"),
        ("contrib/linux-kernel/lib/zstd/decompress.c", "a vendored copy"),
        ("lib/legacy/zstd_v07.c", "an older version"),
        ("types/index.d.ts", "type declarations"),
        ("lib/matplotlib/axes/_axes.pyi", "type declarations"),
        ("lib/decompress/zstd_decompress.c", None),
        ("src/index.js", None),
        ("src/index.ts", None),
    ],
)
def test_a_reason_says_what_a_lowered_file_is(path, role):
    analysis = analyze("why does the decoder keep too many entries?")
    assert analysis.unasked_role(path) == role
    assert analysis.unasked_test(path) is (role is not None)
    cand = Candidate({"id": "c", "path": path, "language": "c", "symbol": None, "text": "x"})
    (evaluation,) = OfflineEvaluator().evaluate(analysis, [cand], set(), set())
    assert (role in evaluation.reason) if role else ("a test" not in evaluation.reason)


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("evictOldest keeps too many entries", False),
        # A Go trace through the reporter's own vendor/ directory asks for no vendored code.
        ("panic: nil map\nmyapp/vendor/example.com/cache/cache.go:12 +0x26", False),
        ("the amalgamated single header fails to compile", True),
        ("regenerate the protobuf code after the proto change", True),
        ("the legacy v0.7 decoder rejects a valid frame", True),
    ],
)
def test_a_question_is_about_copies_only_when_it_says_so(text, asked):
    assert analyze(text).mentions_copies is asked


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("how is the difference between two dates computed in months?", False),
        ("what type of value does diff return?", False),
        ("the TypeScript typings of diff miss the float argument", True),
        ("types/index.d.ts declares add without its unit", True),
        ("the type hints in the .pyi stub of Axes.plot are wrong", True),
    ],
)
def test_a_question_is_about_type_declarations_only_when_it_says_so(text, asked):
    analysis = analyze(text)
    assert analysis.mentions_typings is asked
    assert analysis.unasked_test("types/index.d.ts") is not asked


@pytest.mark.parametrize(
    "report",
    [
        # dayjs-1160 of Multi-SWE-bench: the fix adds to the API and declares it in
        # types/index.d.ts; a report is no question, its declarations keep their rank.
        "Support for `.toISOString()` with a utc offset\nThe plugin should keep the offset.",
        "add a unit argument to diff that rounds the result to the unit, as moment does",
    ],
)
def test_a_report_keeps_its_type_declarations_ranked(report):
    analysis = analyze(report)
    assert not analysis.is_question
    assert analysis.unasked_role("types/index.d.ts") is None


def _typed_repo(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "cache.js").write_text(
        "export function evictOldest(entries, limit) {\n"
        "  while (entries.size > limit) {\n"
        "    entries.delete(oldest(entries))\n"
        "  }\n"
        "}\n"
    )
    # The declarations repeat the name and document it at more length than the code.
    (root / "types").mkdir()
    (root / "types" / "cache.d.ts").write_text(
        "/**\n * evictOldest evicts the oldest entries over the limit: oldest entries go\n"
        " * first, until no more entries than the limit are left.\n */\n"
        "export function evictOldest(entries: Map<number, number>, limit: number): void\n"
    )


def test_type_declarations_rank_like_tests_unless_asked_for(tmp_path, fake_embedder):
    _typed_repo(tmp_path)
    build_index(tmp_path, embedder=fake_embedder)
    s = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    plain = ask(s, "how does evictOldest drop the oldest entries over the limit?")
    assert plain.files[0].path == "src/cache.js"
    typings = [f for f in plain.files if f.path == "types/cache.d.ts"]
    assert all(f.relevance < plain.files[0].relevance for f in typings)
    asked = ask(s, "the TypeScript typings of evictOldest: oldest entries over the limit")
    assert asked.files[0].path == "types/cache.d.ts"


def test_a_question_s_subject_follows_its_text_and_its_cache_stays_bounded():
    from dowse.retrieval import query

    analysis = analyze("evictOldest keeps too many entries")
    assert not analysis.mentions_copies
    # The record is not frozen: the kept answers are the text's, not the record's.
    analysis.text = "the amalgamated single header fails to compile"
    assert analysis.mentions_copies
    for n in range(query.SUBJECT_CACHE + 50):
        assert not analyze(f"question {n} about tests for the cache").mentions_copies
    kept = query._names_subject.cache_info()
    assert kept.maxsize == query.SUBJECT_CACHE and kept.currsize == query.SUBJECT_CACHE


def _copies_repo(root: Path) -> None:
    (root / "cache").mkdir()
    (root / "cache" / "cache.go").write_text(
        "package cache\n\n"
        "// EvictOldest drops the oldest entries over the limit.\n"
        "func EvictOldest(entries map[int]int, limit int) {\n"
        "\tfor len(entries) > limit {\n\t\tdelete(entries, oldest(entries))\n\t}\n}\n"
    )
    # A vendored copy and a generated amalgamation repeat the question's words more often.
    words = "// EvictOldest evicts the oldest entries over the limit: oldest entries go.\n"
    for rel in ("vendor/example.com/lru/cache.go", "single_include/cache.go"):
        (root / rel).parent.mkdir(parents=True)
        (root / rel).write_text(
            "package lru\n\n" + words * 3 + "func EvictOldest(entries map[int]int, limit int) {\n"
            "\tfor len(entries) > limit {\n\t\tdelete(entries, oldest(entries))\n\t}\n}\n"
        )


def test_generated_and_vendored_copies_rank_like_tests_unless_asked_for(tmp_path, fake_embedder):
    _copies_repo(tmp_path)
    build_index(tmp_path, embedder=fake_embedder)
    s = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    plain = ask(s, "EvictOldest keeps too many oldest entries over the limit")
    assert plain.files[0].path == "cache/cache.go"
    copies = [f for f in plain.files if not f.path.startswith("cache/")]
    assert {f.path for f in copies} <= {
        "vendor/example.com/lru/cache.go",
        "single_include/cache.go",
    }
    assert all(f.relevance < plain.files[0].relevance for f in copies)
    asked = ask(s, "the vendored copy of EvictOldest keeps too many oldest entries")
    assert asked.files[0].path != "cache/cache.go"


@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("jib-maven-plugin/src/integration-test/java/BuildImageMojoIntegrationTest.java", True),
        ("app/src/integrationTest/kotlin/ApiIT.kt", True),
        ("src/it/simple/verify.groovy", True),
        ("src/test/java/org/mockito/MockitoTest.java", True),
        ("src/main/java/org/mockito/internal/util/MockUtil.java", False),
        ("src/main/java/com/acme/it/Iterator.java", False),  # a package named it
    ],
)
def test_java_test_source_sets_are_tests(path, test):
    from dowse.languages import is_test_path

    assert is_test_path(path) is test


def test_an_issue_templates_hidden_instructions_are_no_part_of_the_question():
    text = (
        "Infinite loop when input file is output file\n"
        "<!--\nPlease run the script diagnostics/info.sh and paste its output.\n-->\n"
        "`bat a b > b` never ends in `print_file`.\n<!-- an unclosed comment runs to the end"
        " run_config.rs"
    )
    analysis = analyze(text)
    assert analysis.paths == []
    assert "print_file" in analysis.identifiers
    assert not {"script", "diagnostics", "paste"} & set(analysis.terms)
    assert "run_config" not in analysis.text


def test_the_search_first_file_stays_first_unless_the_evaluation_beats_it():
    from dowse.retrieval.ask import FileResult, _search_first

    def files(*rels):
        return [
            FileResult(path=p, relevance=r, score=r, reason="", citations=[])
            for p, r in zip("abc", rels, strict=False)
        ]

    def order(fs):
        return [f.path for f in fs]

    ranked = files(0.8, 0.6, 0.3)
    # The fused first file beats the search's first by 0.2.
    assert order(_search_first(ranked, ["b"], FileFusion(search_first=0.2))) == ["a", "b", "c"]
    assert order(_search_first(ranked, ["b"], FileFusion(search_first=0.25))) == ["b", "a", "c"]
    assert order(_search_first(ranked, ["c"], FileFusion(search_first=0.0))) == ["a", "b", "c"]
    assert order(_search_first(files(0.5, 0.6), ["b"], FileFusion(search_first=0.0))) == [
        "b",
        "a",
    ]
    # A file the fused ranking does not list, the same first file, or the rule off: as fused.
    assert order(_search_first(ranked, ["z"], FileFusion(search_first=1.0))) == ["a", "b", "c"]
    assert order(_search_first(ranked, ["a"], FileFusion(search_first=1.0))) == ["a", "b", "c"]
    assert order(_search_first(ranked, ["c"], FileFusion(search_first=None))) == ["a", "b", "c"]
    assert _search_first([], ["a"], FileFusion()) == []


def test_the_loop_records_the_search_file_ranking_it_started_from(searcher):
    from dowse.retrieval.records import SearchOptions

    question = "how are discounts applied to the cart total?"
    result = run_loop(searcher, question)
    searched = [h.path for h in searcher.search(question, SearchOptions(grain="file", limit=10))]
    assert result.searched and result.searched == searched[: len(result.searched)]
    # `ask` keeps that first file first unless its evaluation puts another ahead by the
    # margin; with the rule off, the fused ranking alone.
    fused = ask(searcher, question, fusion=FileFusion(search_first=None)).files
    kept = ask(searcher, question, fusion=FileFusion(search_first=1.0)).files
    assert kept[0].path == searched[0]
    assert sorted(f.path for f in kept) == sorted(f.path for f in fused)


def _cli_repo(root: Path) -> None:
    """A C command line that holds a flag and a message, a file whose words match the
    question better, and a test that quotes the message too."""
    (root / "programs").mkdir()
    (root / "programs" / "cli.c").write_text(
        "static int parse_args(int argc, const char** argv, int* opt)\n{\n"
        "    for (int i = 1; i < argc; i++) {\n"
        '        if (!strcmp(argv[i], "--rm")) { *opt = 1; continue; }\n'
        '        if (!strcmp(argv[i], "-o")) {\n'
        '            fprintf(stderr, "output ignored by this option\\n");\n        }\n'
        "    }\n    return 0;\n}\n"
    )
    (root / "programs" / "fileio.c").write_text(
        "/* Keeps the source file after compression unless asked to remove the source. */\n"
        "int keep_source_file(const char* source, int remove)\n{\n"
        "    /* the source file is kept: the compression of the source file is done */\n"
        "    if (remove) return unlink(source);\n    return 0;\n}\n"
    )
    (root / "tests").mkdir()
    (root / "tests" / "cli_test.c").write_text(
        'void test_rm(void)\n{\n    run("zstd --rm file -o out");\n'
        "    /* output ignored by this option */\n}\n"
    )


def test_a_quoted_flag_or_message_finds_the_code_that_holds_it(tmp_path, fake_embedder):
    _cli_repo(tmp_path)
    build_index(tmp_path, embedder=fake_embedder)
    s = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    question = (
        "The source file is kept after compression\n"
        "zstd --rm keeps the source file when -o comes after it.\n"
        "```\nwarning: output ignored by this option\n```"
    )
    assert analyze(question).literals == ["--rm", "output ignored by this option"]
    result = ask(s, question)
    cli = next(f for f in result.files if f.path == "programs/cli.c")
    assert "holds a flag or message the task quotes" in cli.reason
    # Its words alone rate it "indirectly related" (0.21); what it holds makes it related.
    assert cli.relevance > 0.3
    shown = "\n".join(b.text for b in result.context if b.path == "programs/cli.c")
    assert '"--rm"' in shown
    # The test quoting both is passed over: cli.c alone holds them, at full strength.
    rows = literal_rows(s.lookups, analyze(question))
    assert {(r["path"], strength) for r, strength in rows} == {("programs/cli.c", 1.0)}


def test_literals_of_cut_where_a_value_is_filled_in():
    text = (
        "rg --no-ignore --smart-case fails, and so does `rg -e x`\n"
        "thread 'main' panicked at 'a semaphore may not have more than MAX_PERMITS permits'\n"
        "com.fasterxml.jackson.core.JsonParseException: Unexpected end-of-input in name at 3\n"
        "error: invalid format specifier for '{:x}'\n"
        "and `in front of` is prose, `x.y(1, 2)` a call."
    )
    assert analyze(text).literals == [
        "--no-ignore",
        "--smart-case",
        "a semaphore may not have more than MAX_PERMITS permits",
        "Unexpected end-of-input in name",
        "invalid format specifier",
    ]


def test_a_message_after_a_bracketed_level_tag_is_a_literal():
    # bat prints "[bat error]: ..."; loggers print "[ERROR] ..." and
    # "[time LEVEL target] ...". A bracketed tag without a level is no message line.
    text = (
        "Can not run bat with /dev/null\n"
        "```\n[bat error]: The output file is also an input!\n```\n"
        "[2024-01-02T10:00:00Z WARN app::io] could not open the cache directory\n"
        "[ERROR] Failed to read the layer cache at /tmp/x\n"
        "[x] the reporter's checklist is done\n"
    )
    assert analyze(text).literals == [
        "The output file is also an input",
        "could not open the cache directory",
        "Failed to read the layer cache",
    ]


def test_links_to_a_files_lines_are_read_with_their_range():
    text = (
        "The check at https://github.com/acme/zz/blob/dev/lib/cover.c#L611 divides by zero;\n"
        "see also https://github.com/acme/zz/blob/4f7183d/lib/zz.h#L285-L287 and\n"
        "<https://gitlab.com/acme/zz/-/blob/main/src/io.c#L40-44>, and again lib/cover.c#L611\n"
        "at https://github.com/acme/zz/blob/dev/lib/cover.c#L611, docs/api.md?plain=1#L9 as\n"
        "https://github.com/acme/zz/blob/dev/docs/api.md?plain=1#L9. A page without a line:\n"
        "https://github.com/acme/zz/blob/dev/README.md, a godbolt link https://godbolt.org/z/f7c."
    )
    assert analyze(text).links == [
        ("lib/cover.c", 611, 611),
        ("lib/zz.h", 285, 287),
        ("src/io.c", 40, 44),
        ("docs/api.md", 9, 9),
    ]
    assert analyze("a plain question about lib/cover.c line 611").links == []


def test_a_long_line_of_error_names_is_read_in_linear_time():
    # Each "Error" of an unbounded `[\w.]*(?:Exception|Error)\w*:` started a scan to the
    # line's end: 200,000 characters took 38 s. Bounded, it is one pass; a real message
    # on the next line is still found.
    text = "ErrorError" * 20000 + "\nValueError: could not convert the frame header"
    assert analyze(text).literals == ["could not convert the frame header"]


def test_a_literal_many_files_hold_names_none(tmp_path, fake_embedder):
    for i in range(4):
        (tmp_path / f"m{i}.c").write_text(f'int f{i}(void) {{ puts("--version"); return {i}; }}\n')
    (tmp_path / "one.c").write_text('int g(void) { return !strcmp(opt, "--only-here"); }\n')
    build_index(tmp_path, embedder=fake_embedder)
    s = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    rows = literal_rows(s.lookups, analyze("what do --version and --only-here print"))
    # Held by one file; one of the two flags the question names.
    assert [(r["path"], st) for r, st in rows] == [("one.c", 0.5)]
    wider = literal_rows(s.lookups, analyze("what does --version print"), PoolLimits(few_holding=4))
    assert sorted(r["path"] for r, _ in wider) == [f"m{i}.c" for i in range(4)]
    assert {st for _, st in wider} == {0.25}


def test_a_script_module_path_names_the_file_it_loads(tmp_path, fake_embedder):
    from dowse.retrieval.query import script_modules

    text = (
        "const weekYear = require('dayjs/plugin/weekYear')\n"
        'import parse from "@babel/core/lib/parse"\n'
        "import helper from './helper'\n"
    )
    assert script_modules(text) == [
        "plugin/weekYear.js",
        "plugin/weekYear.ts",
        "plugin/weekYear/index.js",
        "plugin/weekYear/index.ts",
        "lib/parse.js",
        "lib/parse.ts",
        "lib/parse/index.js",
        "lib/parse/index.ts",
    ]
    for name in ("weekYear", "utc"):
        (tmp_path / "src" / "plugin" / name).mkdir(parents=True)
        (tmp_path / "src" / "plugin" / name / "index.js").write_text(
            "export default (o, c, d) => {\n  const proto = c.prototype\n"
            "  proto.week = function () { return this.$W }\n}\n"
        )
    build_index(tmp_path, embedder=fake_embedder)
    s = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    named = s.lookups.files_named(analyze(text).modules)
    assert sorted({f for found in named.values() for f in found}) == [
        "src/plugin/weekYear/index.js"
    ]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (
            "rust",
            "impl Stack {\n    /// Pushes.\n    ///\n    /// ```\n    /// s.push(1);\n"
            "    /// s.push(2);\n    /// s.push(3);\n    /// ```\n"
            "    pub fn push(&mut self, v: u8) {\n        self.items.push(v);\n    }\n}\n",
        ),
        (
            "java",
            "class Stack {\n    /**\n     * Pushes.\n     *\n     * @param v the value\n"
            "     * @throws Full when full\n     * @see Queue\n     */\n"
            "    void push(int v) {\n        items.add(v);\n    }\n}\n",
        ),
    ],
)
def test_the_doc_comments_of_a_definition_shown_whole_are_not_the_chunks_prose(language, text):
    """Lines 2-11 are one method, its doc comment above it: the chunk is that
    method and its type's braces, i.e. code. The same doc comment outside any definition
    (a module's header) is prose and outweighs two code lines."""
    from dowse.retrieval.behaviour import behaviour_share, documented_lines

    method = [{"qualified_name": "Stack.push", "kind": "method", "start_line": 2, "end_line": 11}]
    documented = documented_lines(1, 12, method)
    assert documented == set(range(1, 11))
    assert behaviour_share(text, language) < 1
    assert behaviour_share(text, language, documented=documented) == 1.0
    # A value's lines and a definition that starts above the chunk are not its own.
    value = [{**method[0], "kind": "constant"}]
    assert documented_lines(1, 12, value) == set()
    assert documented_lines(3, 12, method) == set()


def test_a_question_s_named_subjects_follow_its_terms():
    analysis = analyze("tests for the cache eviction")
    assert analysis.mentions_tests and not analysis.mentions_docs
    # The kept answers are the terms', not the record's: changed terms are asked anew.
    analysis.terms = [t for t in analysis.terms if not t.startswith("test")] + ["readme"]
    assert not analysis.mentions_tests and analysis.mentions_docs


@pytest.mark.parametrize(
    ("main_language", "question", "role"),
    [
        ("rust", "bat complains the output file is also an input", "a support script"),
        # A script the question names by its file name is what it is about.
        ("rust", "diagnostics/info.sh prints no pager", None),
        ("rust", "info.sh prints no pager", None),
        # In a project of shell scripts, or where the project's language is not known,
        # a script is its code.
        ("bash", "bat complains the output file is also an input", None),
        (None, "bat complains the output file is also an input", None),
    ],
)
def test_a_shell_script_beside_another_languages_code_is_support(main_language, question, role):
    analysis = analyze(question)
    analysis.main_language = main_language
    assert analysis.unasked_role("diagnostics/info.sh") == role
    assert analysis.unasked_role("src/input.rs") is None


def _script_repo(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "input.rs").write_text(
        "pub fn check_output_is_input(input: &Path, output: &Path) -> Result<()> {\n"
        "    if same_file(input, output) {\n"
        '        return Err("the output file is also an input".into());\n'
        "    }\n"
        "    Ok(())\n"
        "}\n"
    )
    (root / "src" / "lib.rs").write_text("pub mod input;\n")
    # The diagnostics script repeats the question's words more often than the code does.
    (root / "diagnostics").mkdir()
    (root / "diagnostics" / "info.sh").write_text(
        "#!/usr/bin/env bash\n"
        "check_output_is_input() {\n"
        '    echo "error: the output file is also an input: check output input"\n'
        '    echo "check the output file and the input file: output is input"\n'
        '    bat --check-output-is-input "$output" "$input" > /dev/null\n'
        "}\n"
    )


def test_a_shell_script_ranks_like_support_in_a_rust_project(tmp_path, fake_embedder):
    _script_repo(tmp_path)
    build_index(tmp_path, embedder=fake_embedder)
    s = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    assert s.lookups.main_language() == "rust"
    question = "error: the output file is also an input, check output input"
    result = ask(s, question)
    assert result.files[0].path == "src/input.rs"
    script = next(f for f in result.files if f.path == "diagnostics/info.sh")
    assert "a support script" in script.reason
    named = ask(s, "diagnostics/info.sh: check output input")
    assert "a support script" not in next(f for f in named.files if f.path == script.path).reason
    # `dowse search` lowers it as it lowers tests.
    from dowse.retrieval.records import SearchOptions

    searched = s.search(question, SearchOptions(grain="file", limit=5))
    assert [h.path for h in searched][:2] == ["src/input.rs", "diagnostics/info.sh"]
