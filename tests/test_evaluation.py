"""`dowse eval`: SWE-bench-style localization and history replay on a tiny git repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import commit_files, git, load_benchmark

from dowse.cli import cli
from dowse.errors import DowseError
from dowse.evaluation.history import HistoryConfig, run_history
from dowse.evaluation.swebench import (
    EvalConfig,
    EvalError,
    Instance,
    Prediction,
    load_predictions,
    run_swebench,
    score,
    score_report,
    sync_tree,
    unrecorded,
)
from dowse.indexer.store import Store

AUTH_V1 = '''"""Session tokens."""


class TokenError(Exception):
    pass


def issue_token(user_id, ttl):
    return {"user": user_id, "ttl": ttl}


def validate_token(token, now):
    if token["ttl"] < now:
        raise TokenError("expired session token")
    return token["user"]
'''

PRICING_V1 = '''"""Cart pricing."""


def cart_total(items):
    return sum(item.price * item.quantity for item in items)
'''

PRICING_V2 = (
    PRICING_V1
    + """

def apply_coupon_discount(total, coupon):
    return max(total - coupon.amount, 0)
"""
)

PAYMENTS = '''"""Charging cards through the gateway."""


class GatewayUnavailable(Exception):
    pass


def charge_card(card, amount, gateway):
    return gateway.charge(card, amount)
'''

PAYMENTS_V2 = (
    PAYMENTS
    + """

def retry_delays(attempts):
    return [2 ** n for n in range(attempts)]
"""
)

TEST_AUTH = """from shop.auth import validate_token


def test_validate():
    assert validate_token({"user": 1, "ttl": 10}, 5) == 1
"""


@pytest.fixture
def shop(tmp_path: Path) -> tuple[Path, list[str]]:
    """A clone named like the bench's (`<owner>__<name>`) with four commits."""
    repo = tmp_path / "repos" / "acme__shop"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    commits = [
        commit_files(
            repo,
            {
                "shop/__init__.py": "",
                "shop/auth.py": AUTH_V1,
                "shop/pricing.py": PRICING_V1,
                "tests/test_auth.py": TEST_AUTH,
                "README.md": "# shop\n\nA tiny shop.\n",
            },
            "Start the shop",
            day=1,
        ),
        commit_files(
            repo,
            {"shop/pricing.py": PRICING_V2, "shop/payments.py": PAYMENTS},
            "Coupons: apply_coupon_discount in cart pricing",
            day=2,
        ),
        commit_files(
            repo,
            {
                "shop/auth.py": AUTH_V1.replace('token["ttl"] < now', 'token["ttl"] <= now'),
                "README.md": None,
            },
            "validate_token: a session token expires at its ttl",
            day=3,
        ),
        commit_files(
            repo,
            {"shop/payments.py": PAYMENTS_V2},
            "charge_card: retry_delays when the gateway is unavailable",
            day=4,
        ),
    ]
    return repo, commits


def _instance(
    iid: str, commit: str, text: str, gold: str, function: str, lines: list, **extra: object
) -> dict:
    return {
        "instance_id": iid,
        "repo": "acme/shop",
        "base_commit": commit,
        "problem_statement": text,
        "gold_files": [gold],
        "version": "1.0",
        "gold_spans": {gold: [function]},
        "gold_lines": {gold: lines},
        "in_locagent274": True,
        "agentless": {"issue_file_location": "None"},
        **extra,
    }


@pytest.fixture
def dataset(tmp_path: Path, shop: tuple[Path, list[str]]) -> Path:
    _, commits = shop
    rows = [
        # Listed newest first: the run must still go through the commits in date order.
        _instance(
            "acme__shop-3",
            commits[2],
            "charge_card should retry when the gateway raises GatewayUnavailable",
            "shop/payments.py",
            "charge_card",
            [[8, 9]],
        ),
        _instance(
            "acme__shop-1",
            commits[0],
            "validate_token accepts a session token at exactly its ttl; TokenError expected",
            "shop/auth.py",
            "validate_token",
            [[13, 13]],
            agentless={"issue_file_location": "Keywords"},
        ),
        _instance(
            "acme__shop-2",
            commits[1],
            "apply_coupon_discount lets the cart total go negative",
            "shop/pricing.py",
            "apply_coupon_discount",
            [[8, 9]],
            in_locagent274=False,
        ),
    ]
    path = tmp_path / "dataset.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _config(tmp_path: Path, dataset: Path, **kw: object) -> EvalConfig:
    base = dict(
        dataset=dataset,
        repos=tmp_path / "repos",
        out=tmp_path / "pred.jsonl",
        work=tmp_path / "work",
        methods=["bm25", "lexical", "ask"],
        embed=False,
        budget=400,
    )
    return EvalConfig(**{**base, **kw})  # type: ignore[arg-type]


def test_swebench_predicts_every_method_and_resumes(tmp_path, shop, dataset, fake_embedder):
    _, commits = shop
    seen: list[tuple[str, int, int]] = []
    config = _config(tmp_path, dataset)
    report = run_swebench(
        config, embedder=fake_embedder, progress=lambda s, d, n: seen.append((s, d, n))
    )
    lines = [json.loads(x) for x in config.out.read_text().splitlines()]
    assert [(x["instance_id"], x["method"]) for x in lines] == [
        (i, m)
        for i in ("acme__shop-1", "acme__shop-2", "acme__shop-3")
        for m in ("bm25", "lexical", "ask")
    ]
    assert set(lines[0]) == {
        "instance_id",
        "method",
        "found_files",
        "context_files",
        "found_functions",
        "context_spans",
        "tokens",
        "seconds",
        "index_seconds",
    }
    gold = {
        "acme__shop-1": "shop/auth.py",
        "acme__shop-2": "shop/pricing.py",
        "acme__shop-3": "shop/payments.py",
    }
    for x in lines:
        assert x["found_files"][0] == gold[x["instance_id"]], x
        assert 0 < x["tokens"] <= 400 and x["seconds"] >= 0
        assert set(x["context_files"]) <= set(x["found_files"]) | {
            "tests/test_auth.py",
            "README.md",
        }
    bm25 = [x for x in lines if x["method"] == "bm25"]
    # bm25 ranks code files only; dowse's index also holds README.md at the first commit.
    assert all(p.endswith(".py") for x in bm25 for p in x["found_files"])
    # Every method names the definitions it ranks, and the lines its context shows lie
    # inside the files of that context.
    functions = {"acme__shop-1": "validate_token", "acme__shop-2": "apply_coupon_discount"}
    for x in lines:
        for span in x["context_spans"]:
            assert span["path"] in x["context_files"] and 1 <= span["start"] <= span["end"]
        assert {s["path"] for s in x["context_spans"]} == set(x["context_files"]), x
        if x["instance_id"] in functions:
            wanted = f"{gold[x['instance_id']]}::{functions[x['instance_id']]}"
            assert wanted in x["found_functions"][:5], x
    # bm25's context is whole files: its span of auth.py is every line of the file.
    auth = next(x for x in bm25 if x["instance_id"] == "acme__shop-1")
    assert {"path": "shop/auth.py", "start": 1, "end": AUTH_V1.count("\n")} in auth["context_spans"]
    assert report.new_predictions == 9 and report.instances == [
        "acme__shop-3",
        "acme__shop-1",
        "acme__shop-2",
    ]
    assert report.scores["ask"]["all"].acc[1] == 100.0
    assert report.scores["bm25"]["locagent274"].n == 2
    assert report.scores["lexical"]["not_mentioned"].n == 2
    assert seen[-1] == ("instances", 3, 3) and any(s[0] == "parse" for s in seen)
    # The tree holds the last commit run (the newest); the index lives outside it.
    tree = tmp_path / "work" / "acme__shop" / "tree"
    assert "retry_delays" not in (tree / "shop" / "payments.py").read_text()
    assert not (tree / "README.md").exists() and not (tree / ".dowse").exists()
    assert (tmp_path / "work" / "acme__shop" / ".dowse-index" / "manifest.json").is_file()
    # Its history is the clone's up to that commit: never the fix's or a later commit.
    store = Store.open(tmp_path / "work" / "acme__shop" / ".dowse-index")
    assert store.manifest.history == commits[2]
    assert {r["id"] for r in store.rows("commits", ["id"])} == set(commits[:3])

    before = config.out.read_text()
    again = run_swebench(config, embedder=fake_embedder)
    assert again.new_predictions == 0 and config.out.read_text() == before
    assert again.scores == report.scores

    # A new method on the same instances only adds its own lines.
    more = run_swebench(
        _config(tmp_path, dataset, methods=["bm25", "lexical"], limit=1), embedder=fake_embedder
    )
    assert more.new_predictions == 0 and more.instances == ["acme__shop-3"]


def test_dense_and_hybrid_run_with_embeddings(tmp_path, dataset, fake_embedder):
    files_only = _config(
        tmp_path,
        dataset,
        methods=None,
        embed=True,
        instances=["acme__shop-2"],
        out=tmp_path / "files.jsonl",
    )
    report = run_swebench(files_only, embedder=fake_embedder)
    # The default scope has no chunk vectors: dense and hybrid run on the file vectors.
    assert report.methods == ["bm25", "lexical", "dense", "hybrid", "ask"]
    files_preds = {p.method: p for p in load_predictions(files_only.out)}
    assert files_preds["hybrid"].found_files[0] == "shop/pricing.py"
    dense = files_preds["dense"]
    # By closeness alone (the fake embedder's), no tests or docs; its context is the
    # closest definitions' chunks.
    assert "shop/pricing.py" in dense.found_files and dense.tokens > 0
    assert not any(p.startswith("tests/") or p.endswith(".md") for p in dense.found_files)
    assert set(dense.context_files) <= set(dense.found_files)
    config = _config(
        tmp_path, dataset, methods=None, embed=True, embed_chunks=True, instances=["acme__shop-2"]
    )
    report = run_swebench(config, embedder=fake_embedder)
    assert report.methods == ["bm25", "lexical", "dense", "hybrid", "ask"]
    preds = load_predictions(config.out)
    assert [p.method for p in preds] == report.methods
    assert all(p.found_files[0] == "shop/pricing.py" for p in preds if p.method != "dense")
    assert "shop/pricing.py" in next(p for p in preds if p.method == "dense").found_files


def test_context_parts_counts_each_printed_line_in_its_part():
    """benchmarks/context_parts.py: the markdown's tokens by part, every line once, the
    leading imports of a block apart from its code."""
    parts = load_benchmark("context_parts")
    markdown = "\n".join(
        [
            "# where?",
            "",
            "_2 files, 1 blocks; 1 cycle(s): done_",
            "",
            "## Files",
            "",
            "- `a.py` (relevance 0.90): covers 2/2 task terms",
            "",
            "## Context",
            "",
            "### `a.py:1-4` (0.90)",
            "covers 2/2 task terms",
            "",
            "```",
            "import os",
            "",
            "def f():",
            "    import re",
            "```",
            "",
            "- `b.py:3-4` (0.20): `def g():`",
        ]
    )
    counted = parts.parts_of(markdown)
    assert set(counted) <= set(parts.PARTS)
    assert sum(counted.values()) == pytest.approx((len(markdown) + 1) / 3)
    assert counted["source: leading imports"] == pytest.approx(len("import os\n") / 3)
    assert counted["source: other imports"] == pytest.approx(len("    import re\n") / 3)
    assert counted["block reasons"] == pytest.approx(len("covers 2/2 task terms\n") / 3)
    assert counted["files: reasons"] == pytest.approx(len("covers 2/2 task terms") / 3)
    assert counted["signature lines"] == pytest.approx(len(markdown.split("\n")[-1] + "\n") / 3)


def test_context_parts_counts_the_fixes_blocks_an_earlier_block_kept_out(tmp_path, capsys):
    """benchmarks/context_parts.py --misses: a tried range holding changed lines that did
    not fit and is not shown counts, and as one an earlier block without changed lines
    (its tokens at least those lacking) would have made room for; a shown one does not."""
    parts = load_benchmark("context_parts")
    dataset = tmp_path / "dev.jsonl"
    row = _instance("acme__shop-1", "0" * 40, "q", "a.py", "f", [[10, 12], [40, 40], [70, 70]])
    dataset.write_text(json.dumps(row) + "\n")
    pred = {
        "instance_id": "acme__shop-1",
        "method": "ask",
        "found_files": ["a.py", "b.py"],
        "context_files": ["a.py", "b.py"],
        "context_spans": [
            {"path": "b.py", "start": 1, "end": 20},
            {"path": "a.py", "start": 38, "end": 42},
        ],
        "tokens": 400,
        "seconds": 0.0,
        "index_seconds": 0.0,
    }
    (tmp_path / "base-4000.jsonl").write_text(json.dumps(pred) + "\n")

    def tried(path: str, start: int, end: int, used: int, after: int, fit: bool) -> dict:
        return {
            "path": path,
            "start": start,
            "end": end,
            "role": "item",
            "relevance": 0.5,
            "used": used,
            "cap": 400,
            "after": after,
            "fit": fit,
        }

    tries = [
        tried("b.py", 1, 20, 0, 300, True),  # no changed line: 300 tokens it could give
        tried("a.py", 8, 15, 300, 550, False),  # lacks 150: kept out by b.py
        tried("a.py", 8, 15, 300, 550, False),  # the same range again: counted once
        tried("a.py", 65, 90, 300, 1000, False),  # lacks 600: no one block makes room
        tried("a.py", 38, 42, 300, 380, True),
        tried("a.py", 30, 45, 380, 600, False),  # its changed line is shown: not counted
    ]
    placing = tmp_path / "base-4000.placing.jsonl"
    placing.write_text(json.dumps({"instance_id": "acme__shop-1", "tries": tries}) + "\n")
    parts.main(["--dataset", str(dataset), "--misses", str(placing)])
    out = capsys.readouterr().out
    assert "a.py:8-15 item lacks 150, 1 earlier could give it room: b.py:1-20 item" in out
    assert "a.py:65-90 item lacks 600\n" in out and "a.py:30-45" not in out
    assert out.endswith(
        "2 tried ranges with changed lines not shown (1 instances); "
        "1 (1 instances) would have fitted without one earlier block\n"
    )


def test_packing_sweep_runs_asks_packings_on_one_index(
    tmp_path, dataset, fake_embedder, monkeypatch
):
    """benchmarks/packing_sweep.py: one predictions file per variant and budget, a line
    per instance; the shipped packing's predictions are `dowse eval swebench`'s `ask`
    ones (the same runner), and a rerun adds nothing."""
    sweep = load_benchmark("packing_sweep")
    monkeypatch.setattr(sweep, "get_embedder", lambda: fake_embedder)
    out = tmp_path / "sweep"
    args = ["--dataset", str(dataset), "--repos", str(tmp_path / "repos")]
    args += ["--work", str(tmp_path / "sweep-work"), "--out", str(out), "--budgets", "400,300"]
    variants = ["base", "early:first_file_leads=3,lead_share=0.6"]
    assert sweep.main([*args, *variants]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["base-300.jsonl", "base-400.jsonl", "early-300.jsonl", "early-400.jsonl"]
    for name in names:
        lines = [json.loads(x) for x in (out / name).read_text().splitlines()]
        assert sorted(x["instance_id"] for x in lines) == [f"acme__shop-{n}" for n in (1, 2, 3)]
        budget = int(name.removesuffix(".jsonl").rpartition("-")[2])
        assert all(x["method"] == "ask" and x["tokens"] <= budget for x in lines)
    config = _config(tmp_path, dataset, methods=["ask"], embed=True)
    run_swebench(config, embedder=fake_embedder)
    same = ("found_files", "context_files", "found_functions", "context_spans", "tokens")
    swept = {x["instance_id"]: x for x in map(json.loads, (out / "base-400.jsonl").open())}
    for p in load_predictions(config.out):
        recorded = p.model_dump()
        assert all(swept[p.instance_id][k] == recorded[k] for k in same), p.instance_id
    before = (out / "early-400.jsonl").read_text()
    assert sweep.main([*args, *variants]) == 0
    assert (out / "early-400.jsonl").read_text() == before
    # The packing reaches `ask` (through `investigate` and the runner): with all the
    # source's room kept for signature lines, no block is shown whole.
    assert sweep.main([*args, "--budgets", "400", "lines:signature_share=1.0"]) == 0
    lines = {x["instance_id"]: x for x in map(json.loads, (out / "lines-400.jsonl").open())}
    assert all(s["start"] == s["end"] for x in lines.values() for s in x["context_spans"])
    assert any(s["start"] < s["end"] for x in swept.values() for s in x["context_spans"])
    with pytest.raises(SystemExit, match="no Packing field"):
        sweep.parse_variant("bad:first_file_lead=2")


def test_part_ranking_places_each_hunk_at_the_first_part_that_shows_it(
    tmp_path, dataset, fake_embedder, monkeypatch, capsys
):
    """benchmarks/part_ranking.py: every gold hunk gets the place of the first part
    of its file whose printed lines hold it, for all rankings and each left out."""
    bench = load_benchmark("part_ranking")
    monkeypatch.setattr(bench, "get_embedder", lambda: fake_embedder)
    out = tmp_path / "parts.jsonl"
    args = ["--dataset", str(dataset), "--repos", str(tmp_path / "repos")]
    args += ["--work", str(tmp_path / "work"), "--out", str(out), "--ablate"]
    assert bench.main(args) == 0
    printed = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in printed] == ["all"] + [
        f"-{name}" for name in sorted(bench.RANKINGS)
    ]
    assert all("hunks 3 " in ln for ln in printed)
    records = {r["instance_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert sorted(records) == [f"acme__shop-{n}" for n in (1, 2, 3)]
    for record in records.values():
        for info in record["files"].values():
            for (a, b), place in zip(info["hunks"], info["places"], strict=True):
                if place is not None and place <= len(info["parts"]):
                    lo, hi = info["parts"][place - 1][:2]
                    assert lo <= a and b <= hi
                    # no earlier part holds the hunk
                    assert not any(p[0] <= a and b <= p[1] for p in info["parts"][: place - 1])
    # The one-function files of the fixture: the changed function is the first part.
    assert records["acme__shop-1"]["files"]["shop/auth.py"]["places"] == [1]


def test_configuration_errors(tmp_path, dataset, fake_embedder):
    with pytest.raises(EvalError, match="dense needs vectors; run with --embed files or all"):
        run_swebench(_config(tmp_path, dataset, methods=["dense"]), embedder=fake_embedder)
    with pytest.raises(EvalError, match="not in .*: nope-1"):
        run_swebench(_config(tmp_path, dataset, instances=["nope-1"]), embedder=fake_embedder)
    with pytest.raises(EvalError, match="no clone of acme/shop at .*acme__shop"):
        run_swebench(
            _config(tmp_path, dataset, repos=tmp_path / "elsewhere"), embedder=fake_embedder
        )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"instance_id": "x"}\n')
    with pytest.raises(EvalError, match="bad.jsonl:1: repo: Field required"):
        run_swebench(_config(tmp_path, bad), embedder=fake_embedder)


def test_sync_writes_only_what_changed(tmp_path, shop):
    repo, commits = shop
    git_dir = repo / ".git"
    tree = tmp_path / "sync" / "tree"
    files = sync_tree(git_dir, commits[0], tree)
    assert sorted(files) == [
        "README.md",
        "shop/__init__.py",
        "shop/auth.py",
        "shop/pricing.py",
        "tests/test_auth.py",
    ]
    auth = tree / "shop" / "auth.py"
    os.utime(auth, ns=(1, 1))  # any rewrite would show as a new mtime
    sync_tree(git_dir, commits[1], tree)
    assert auth.stat().st_mtime_ns == 1
    assert "apply_coupon_discount" in (tree / "shop" / "pricing.py").read_text()
    sync_tree(git_dir, commits[2], tree)
    assert not (tree / "README.md").exists() and auth.stat().st_mtime_ns != 1
    # Back to the start, and a damaged tree is rewritten, not trusted.
    (tree.parent / "tree.json").write_text("{not json")
    (tree / "stray.py").write_text("x = 1\n")
    sync_tree(git_dir, commits[0], tree)
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file()) == sorted(files)


def _inst(iid: str, gold: list[str], *, la: bool = True, where: object = "None") -> Instance:
    return Instance(
        instance_id=iid,
        repo="o/n",
        base_commit="0" * 40,
        problem_statement="q",
        gold_files=gold,
        in_locagent274=la,
        agentless={"issue_file_location": where},
    )


def _pred(
    iid: str, found: list[str], context: list[str], tokens: int, seconds: float
) -> Prediction:
    return Prediction(
        instance_id=iid,
        method="lexical",
        found_files=found,
        context_files=context,
        tokens=tokens,
        seconds=seconds,
        index_seconds=1.0,
    )


def test_score_by_hand():
    instances = [
        _inst("a", ["x.py"], where="Keywords"),
        _inst("b", ["y.py"], la=False),
        _inst("c", ["z.py", "w.py"]),
        _inst("d", ["v.py"], where=None),
        _inst("e", ["u.py"]),  # no prediction: scores 0
    ]
    preds = {
        p.instance_id: p
        for p in [
            _pred("a", ["x.py", "q.py"], ["x.py"], 100, 0.1),  # rank 1
            _pred("b", ["q.py", "r.py", "y.py"], ["q.py"], 300, 0.3),  # rank 3, not in context
            _pred("c", ["z.py", "a.py", "b.py", "c.py", "w.py"], ["z.py", "w.py"], 200, 0.2),
            _pred("d", [f"f{i}.py" for i in range(9)] + ["v.py"], [], 400, 0.4),  # rank 10
        ]
    }
    s = score(instances, preds)
    # Acc@k needs every gold file in the top k: c (two gold files) counts from k=5.
    assert s.acc == {1: 20.0, 3: 40.0, 5: 60.0, 10: 80.0}
    assert s.recall == {1: 30.0, 3: 50.0, 5: 60.0, 10: 80.0}
    assert s.mrr == round((1 + 1 / 3 + 1 + 1 / 10) / 5, 4) == 0.4867
    assert s.in_context == 50.0  # a and c, of the 4 with a prediction
    assert (s.tokens_median, s.seconds_median, s.index_seconds_median) == (250, 0.25, 1.0)
    assert (s.n, s.missing_predictions) == (5, 1)

    config = EvalConfig(dataset=Path("d.jsonl"), repos=Path("r"), out=Path("o"), work=Path("w"))
    report = score_report(config, instances, preds.values(), ["lexical", "ask"])
    sub = report.scores["lexical"]
    assert (sub["locagent274"].n, sub["locagent274"].acc[1]) == (4, 25.0)
    # not_mentioned: issue_file_location None or the string "None" (b, c, d, e).
    assert (sub["not_mentioned"].n, sub["not_mentioned"].acc[10]) == (4, 75.0)
    assert report.scores["ask"]["all"].missing_predictions == 5


def test_history_replays_commits(tmp_path, shop, fake_embedder):
    repo, commits = shop
    config = HistoryConfig(
        repo=repo,
        work=tmp_path / "hist",
        commits=5,
        methods=["bm25", "lexical", "ask"],
        embed=False,
    )
    report = run_history(config, embedder=fake_embedder)
    # The root commit has no parent to index; the others modify source files.
    assert report.commits == commits[1:]
    first = [r for r in report.results if r.commit == commits[1]]
    assert first[0].parent == commits[0] and first[0].changed_files == ["shop/pricing.py"]
    assert first[0].subject == "Coupons: apply_coupon_discount in cart pricing"
    assert [r.changed_files for r in report.results if r.method == "bm25"] == [
        ["shop/pricing.py"],
        ["shop/auth.py"],
        ["shop/payments.py"],
    ]
    for method in ("bm25", "lexical", "ask"):
        s = report.scores[method]
        assert s.n == 3 and s.recall[10] == 100.0 and s.recall[1] == 100.0 and s.mrr == 1.0
    with pytest.raises(EvalError, match="not a git repository"):
        run_history(config.model_copy(update={"repo": tmp_path}), embedder=fake_embedder)


def test_cli_swebench_table_and_json(tmp_path, dataset, fake_embedder, run):
    out = tmp_path / "cli" / "pred.jsonl"
    args = [
        "eval",
        "swebench",
        "--dataset",
        str(dataset),
        "--repos",
        str(tmp_path / "repos"),
        "--methods",
        "bm25,lexical",
        "--no-embed",
        "--out",
        str(out),
        "--work",
        str(tmp_path / "work"),
        "--budget",
        "400",
        "-q",
    ]
    text = run(*args).stdout
    lines = text.splitlines()
    assert lines[0].split() == [
        "method",
        "subset",
        "n",
        "Acc@1",
        "Acc@3",
        "Acc@5",
        "Acc@10",
        "MRR",
        "in-ctx",
        "F@5",
        "F@10",
        "L-rec",
        "hunks",
        "lines",
        "tokens",
        "sec",
        "index",
        "s",
    ]
    # Every definition the fixes touch is among the top 5, and every changed line shown.
    assert all(ln.split()[9:13] == ["100.0"] * 4 for ln in lines[2:])
    assert [ln.split()[:4] for ln in lines[2:]] == [
        ["bm25", "all", "3", "100.0"],
        ["bm25", "locagent274", "2", "100.0"],
        ["bm25", "not_mentioned", "2", "100.0"],
        ["lexical", "all", "3", "100.0"],
        ["lexical", "locagent274", "2", "100.0"],
        ["lexical", "not_mentioned", "2", "100.0"],
    ]
    saved = json.loads(out.with_suffix(".scores.json").read_text())
    assert saved["scores"]["bm25"]["all"]["acc"]["1"] == 100.0
    assert saved["scores"]["lexical"]["all"]["func_acc"]["10"] == 100.0
    assert saved["scores"]["lexical"]["all"]["hunks_in_context"] == 100.0
    assert len(out.read_text().splitlines()) == 6
    as_json = json.loads(run(*args, "--json", "--instances", "acme__shop-1").stdout)
    assert as_json["instances"] == ["acme__shop-1"] and as_json["new_predictions"] == 0
    # acme__shop-1 names its file: the empty not_mentioned subset has no row in the table.
    one = run(*args, "--instances", "acme__shop-1").stdout.splitlines()
    assert [ln.split()[:3] for ln in one[2:]] == [
        ["bm25", "all", "1"],
        ["bm25", "locagent274", "1"],
        ["lexical", "all", "1"],
        ["lexical", "locagent274", "1"],
    ]
    assert as_json["scores"]["bm25"]["not_mentioned"]["n"] == 0


def test_cli_history(tmp_path, shop, fake_embedder, run):
    repo, _ = shop
    text = run(
        "eval", "history", str(repo), "-n", "2", "--methods", "bm25", "--no-embed", "-q"
    ).stdout
    lines = text.splitlines()
    assert lines[0].split() == ["method", "n", "R@1", "R@5", "R@10", "MRR", "sec"]
    assert lines[2].split()[:6] == ["bm25", "2", "100.0", "100.0", "100.0", "1.000"]


def test_history_prints_no_secret_from_a_commit_message(shop, fake_embedder, run):
    """The commit message is the query and its subject is printed: a key pasted into it
    is redacted in the text and JSON reports as everywhere else."""
    repo, _ = shop
    key = "AKIA" + "Q7ZX3RT9KLM2WN4P"
    commit_files(
        repo,
        {"shop/pricing.py": PRICING_V2 + "\n# rounding\n"},
        f"Fix rounding with {key}\n\nToken ghp_{'a1B2c3D4e5' * 3}z9Y8x7 used.",
        day=9,
    )
    for fmt in ([], ["--json"]):
        out = run(
            "eval", "history", str(repo), "-n", "1", "--methods", "bm25", "--no-embed", "-q", *fmt
        ).stdout
        assert key not in out and "ghp_a1B2" not in out
    report = json.loads(
        run(
            "eval",
            "history",
            str(repo),
            "-n",
            "1",
            "--methods",
            "bm25",
            "--no-embed",
            "-q",
            "--json",
        ).stdout
    )
    assert report["results"][0]["subject"] == "Fix rounding with [REDACTED]"


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--methods", "bm25,nope"],
            "unknown method(s) nope; choose from bm25, lexical, dense, hybrid, ask",
        ),
        (
            ["--methods", "dense,hybrid", "--no-embed"],
            "dense, hybrid need vectors; run with --embed files or all",
        ),
        (
            ["--methods", "hybrid", "--no-embed"],
            "hybrid needs vectors; run with --embed files or all",
        ),
        (["--repo", "acme/other"], "no instance of acme/other in "),
    ],
)
def test_cli_errors(tmp_path, dataset, args, message):
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            "swebench",
            "--dataset",
            str(dataset),
            "--repos",
            str(tmp_path / "repos"),
            "--out",
            str(tmp_path / "p.jsonl"),
            "-q",
            *args,
        ],
    )
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: " + message)
    assert result.output.count("\n") == 1


def test_a_resumed_recording_skips_the_instances_its_file_has(tmp_path):
    tasks = [
        Instance(
            instance_id=i,
            repo="o/n",
            base_commit="0" * 40,
            problem_statement="q",
            gold_files=["a.py"],
        )
        for i in ("x-1", "x-2", "x-3")
    ]
    out = tmp_path / "rec.jsonl"
    assert unrecorded(tasks, out) == tasks  # no file yet
    out.write_text('{"instance_id": "x-2", "final": []}\n\n{"instance_id": "x-9"}\n')
    assert [t.instance_id for t in unrecorded(tasks, out)] == ["x-1", "x-3"]


# -- score.py's definitions, copied (the bench is not a dependency of the tests) -------


def _bench_func_matches(gold_name, found):
    path, _, name = found.partition("::")
    return (
        name == gold_name
        or name.split(".")[-1] == gold_name.split(".")[-1]
        and ("." not in gold_name or name.endswith(gold_name))
    )


def _bench_func_hits(gold_spans, found_functions):
    worst = 0
    for path, names in gold_spans.items():
        for g in names:
            rank = next(
                (
                    i + 1
                    for i, f in enumerate(found_functions)
                    if f.partition("::")[0] == path and _bench_func_matches(g, f)
                ),
                10**9,
            )
            worst = max(worst, rank)
    return worst if worst else 10**9


def _bench_line_cover(gold_lines, spans):
    shown = {}
    for s in spans:
        shown.setdefault(s["path"], set()).update(range(int(s["start"]), int(s["end"]) + 1))
    gold = [(p, n) for p, rs in gold_lines.items() for a, b in rs for n in range(a, b + 1)]
    hit = sum(n in shown.get(p, ()) for p, n in gold)
    return (hit / len(gold) if gold else 0.0), sum(len(v) for v in shown.values()), len(gold)


def _bench_score(dataset, preds):
    """The function- and line-level part of score.py's `score`."""
    import statistics

    funcs, lines = [], []
    for r in dataset:
        p = preds.get(r["instance_id"]) or {}
        if "found_functions" in p and r.get("gold_spans"):
            funcs.append(_bench_func_hits(r["gold_spans"], p["found_functions"]))
        if "context_spans" in p and r.get("gold_lines"):
            lines.append(_bench_line_cover(r["gold_lines"], p["context_spans"]))
    res = {}
    if funcs:
        for k in (1, 3, 5, 10):
            res[f"FuncAcc@{k}"] = round(100 * sum(f <= k for f in funcs) / len(funcs), 2)
        res["func_n"] = len(funcs)
    if lines:
        res["line_recall"] = round(100 * sum(c for c, _, _ in lines) / len(lines), 2)
        res["hunks_in_context"] = round(100 * sum(c == 1.0 for c, _, _ in lines) / len(lines), 2)
        res["context_lines_median"] = statistics.median(n for _, n, _ in lines)
        res["line_n"] = len(lines)
    return res


def _span(path: str, start: int, end: int) -> dict:
    return {"path": path, "start": start, "end": end}


def test_function_and_line_scores_agree_with_the_bench_scorer():
    rows = [
        # A method matches by its last part; a dotted gold name must be a suffix.
        {"id": "a", "spans": {"m.py": ["Parser.parse"]}, "lines": {"m.py": [[3, 4]]}},
        {"id": "b", "spans": {"m.py": ["parse", "Writer.write"]}, "lines": {"m.py": [[10, 12]]}},
        # Two files, a gold line range only half shown, one line of another file.
        {
            "id": "c",
            "spans": {"m.py": ["helper"], "n.py": ["Other.run"]},
            "lines": {"m.py": [[1, 2]], "n.py": [[5, 8]]},
        },
        {"id": "d", "spans": {"m.py": []}, "lines": {}},  # gold names no function: a miss
        {"id": "e", "spans": {}, "lines": {"m.py": [[7, 7]]}},  # no function gold: left out
        {"id": "f", "spans": {"m.py": ["f"]}, "lines": {"m.py": [[1, 1]]}},  # no prediction
        {"id": "g", "spans": {"m.py": ["g"]}, "lines": {"m.py": [[2, 2]]}},  # an old line
    ]
    found = {
        "a": ["n.py::parse", "m.py::Other.parse", "m.py::Parser.parse"],  # rank 3
        "b": ["m.py::parse"] + [f"m.py::x{i}" for i in range(7)] + ["m.py::Writer.write"],  # 9
        "c": ["m.py::Outer.helper", "n.py::Other.run"],  # last part: rank 2
        "d": ["m.py::anything"],
        "e": ["m.py::e"],
    }
    spans = {
        "a": [_span("m.py", 1, 10)],
        "b": [_span("m.py", 11, 11), _span("m.py", 11, 20), _span("n.py", 1, 1)],
        "c": [_span("m.py", 1, 2), _span("n.py", 7, 30)],
        "d": [],
        "e": [_span("other.py", 7, 7)],
    }
    dataset = [
        {"instance_id": r["id"], "gold_spans": r["spans"], "gold_lines": r["lines"]} for r in rows
    ]
    bench_preds = {i: {"found_functions": found[i], "context_spans": spans[i]} for i in found}
    bench_preds["g"] = {"found_files": ["m.py"]}
    expected = _bench_score(dataset, bench_preds)
    assert expected["FuncAcc@3"] == 50.0 and expected["line_n"] == 4  # not a vacuous check

    instances = [
        Instance(
            instance_id=r["id"],
            repo="o/n",
            base_commit="0" * 40,
            problem_statement="q",
            gold_files=["m.py"],
            gold_spans=r["spans"],
            gold_lines=r["lines"],
        )
        for r in rows
    ]
    preds = {
        i: Prediction.model_validate(
            {
                "instance_id": i,
                "method": "ask",
                "found_files": ["m.py"],
                "context_files": ["m.py"],
                "tokens": 1,
                "seconds": 0.0,
                "index_seconds": 0.0,
                **p,
            }
        )
        for i, p in bench_preds.items()
    }
    s = score(instances, preds)
    assert s.func_acc is not None
    got = {f"FuncAcc@{k}": v for k, v in s.func_acc.items()}
    got.update(
        func_n=s.func_n,
        line_recall=s.line_recall,
        hunks_in_context=s.hunks_in_context,
        context_lines_median=s.context_lines_median,
        line_n=s.line_n,
    )
    assert got == expected
    # And by hand, for the reader: ranks 3, 9, 2, never (d) of four instances.
    assert s.func_acc == {1: 0.0, 3: 50.0, 5: 50.0, 10: 75.0}
    # Lines: a all, b 2 of 3, c 4 of 6, e none (d has no gold lines); shown 10, 11, 26, 1.
    assert s.line_recall == round(100 * (1 + 2 / 3 + 2 / 3 + 0) / 4, 2)
    assert s.hunks_in_context == 25.0 and s.context_lines_median == 10.5


FORMAT_JS = """// Formatting dates for display.
export function formatDate(date, pattern) {
  return pattern.replace("YYYY", String(date.getFullYear()));
}
"""

PARSE_GO = """package parse

// ParseDuration reads a duration such as 3h.
func ParseDuration(text string) (int, error) {
\treturn len(text), nil
}
"""


def test_every_code_language_a_row_per_language_and_missing_commits_skipped(
    tmp_path, fake_embedder, run
):
    repo = tmp_path / "repos" / "acme__polyglot"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    base = commit_files(
        repo,
        {
            "web/format.js": FORMAT_JS,
            "parse/duration.go": PARSE_GO,
            # BM25 needs a few documents: a term in one of two has no weight.
            "tools/release.py": "def bump_version(number):\n    return number + 1\n",
            "src/lib.rs": "pub fn checksum(bytes: &[u8]) -> u32 {\n    bytes.len() as u32\n}\n",
        },
        "Start",
        day=1,
    )
    rows = [
        {
            "instance_id": "acme__polyglot-1",
            "repo": "acme/polyglot",
            "base_commit": base,
            "problem_statement": "formatDate ignores the pattern YYYY for the year",
            "gold_files": ["web/format.js"],
            "gold_lines": {"web/format.js": [[3, 3]]},
            "language": "javascript",
        },
        {
            "instance_id": "acme__polyglot-2",
            "repo": "acme/polyglot",
            "base_commit": base,
            "problem_statement": "ParseDuration returns the length of the text, not a duration",
            "gold_files": ["parse/duration.go"],
            "gold_lines": {"parse/duration.go": [[5, 5]]},
            "language": "go",
        },
        {
            "instance_id": "acme__polyglot-3",
            "repo": "acme/polyglot",
            "base_commit": "f" * 40,  # not in the clone
            "problem_statement": "formatDate again",
            "gold_files": ["web/format.js"],
            "language": "javascript",
        },
    ]
    dataset = tmp_path / "multi.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = _config(tmp_path, dataset, methods=["bm25"])
    report = run_swebench(config, embedder=fake_embedder)
    preds = {p.instance_id: p for p in load_predictions(config.out)}
    # bm25 ranks JavaScript and Go, not only Python, with their definitions.
    assert preds["acme__polyglot-1"].found_files[0] == "web/format.js"
    assert preds["acme__polyglot-2"].found_files[0] == "parse/duration.go"
    assert "parse/duration.go::ParseDuration" in (preds["acme__polyglot-2"].found_functions or [])
    assert report.skipped == ["acme__polyglot-3"] and "acme__polyglot-3" not in preds
    by_subset = report.scores["bm25"]
    assert (by_subset["lang:javascript"].n, by_subset["lang:go"].n) == (2, 1)
    assert by_subset["lang:go"].acc[1] == 100.0 and by_subset["lang:javascript"].acc[1] == 50.0
    assert by_subset["lang:go"].hunks_in_context == 100.0

    table = run(
        "eval",
        "swebench",
        "--dataset",
        str(dataset),
        "--repos",
        str(tmp_path / "repos"),
        "--methods",
        "bm25",
        "--no-embed",
        "--out",
        str(config.out),
        "--work",
        str(tmp_path / "work"),
        "-q",
    ).stdout.splitlines()
    assert [ln.split()[:3] for ln in table[2:-2]] == [
        ["bm25", "all", "3"],
        ["bm25", "locagent274", "3"],
        ["bm25", "not_mentioned", "3"],
        ["bm25", "lang:go", "1"],
        ["bm25", "lang:javascript", "2"],
    ]
    assert table[-2:] == [
        "(1 instance(s) without a prediction score 0)",
        "(1 instance(s) skipped, their base commit missing from the clone: acme__polyglot-3)",
    ]


def test_a_unit_names_the_definitions_it_shows_innermost_first():
    from dowse.evaluation.swebench import _definitions

    # (start, end, name line, name) of one file: a class with two short methods, a
    # helper nested in the second, and a decorated function after it.
    rows = [
        ("Pool", 1, 30),
        ("Pool.open", 5, 9),
        ("Pool.close", 11, 20),
        ("Pool.close.later", 14, 16),
        ("retry", 32, 40),
    ]

    class Rows:
        def rows(self, name: str, columns: object = None, where: object = None) -> list[dict]:
            assert name == "symbols"
            return [
                {
                    "path": "p.py",
                    "qualified_name": q,
                    "start_line": a,
                    "end_line": b,
                    "name_line": a + 1 if q == "retry" else a,
                }
                for q, a, b in rows
            ]

    units = [
        # A chunk filed under the class that shows both methods: the methods, the helper
        # inside the second, then the class.
        ("p.py", 5, 20, "Pool", True),
        # Lines inside one method: that method, then the class around it.
        ("p.py", 12, 13, "Pool.close", True),
        # A signature line names its definition only, not what its range holds.
        ("p.py", 32, 40, "retry", False),
    ]
    assert _definitions(Rows(), units[:1]) == [  # type: ignore[arg-type]
        "p.py::Pool.open",
        "p.py::Pool.close",
        "p.py::Pool.close.later",
        "p.py::Pool",
    ]
    assert _definitions(Rows(), units[1:2]) == ["p.py::Pool.close", "p.py::Pool"]  # type: ignore[arg-type]
    assert _definitions(Rows(), units[2:]) == ["p.py::retry"]  # type: ignore[arg-type]
    # Module-level lines between definitions name none.
    assert _definitions(Rows(), [("p.py", 31, 31, None, True)]) == []  # type: ignore[arg-type]


def test_naming_counts_the_enclosing_definition_the_question_names_too():
    from dowse.retrieval.query import analyze, naming

    depth = naming(analyze("Remove the index MultiWidget adds in `id_for_label`; see Form.clean"))
    assert depth("MultiWidget.id_for_label") == 2  # the class and the method, apart
    assert depth("ChoiceWidget.id_for_label") == 1  # the method alone
    assert depth("Form.clean") == 2  # written together
    assert depth("Field.clean") == 1
    assert depth("ID_FOR_LABEL") == 1  # its own name in any case
    assert depth("MultiWidget.render") == 0  # its last part is not named
    # The class as it is spelt: a call on the package is no method of its class.
    assert naming(analyze("`dayjs.locale('en')` is ignored"))("Dayjs.locale") == 1


def test_a_block_names_the_definitions_the_question_names_first():
    """A block of several short methods shows them at once; the one the question names
    leads its definitions, the rest keep their line order."""
    from dowse.evaluation.swebench import _definitions
    from dowse.retrieval.query import analyze, naming

    rows = [("Session", 1, 60), ("Session.encode", 5, 9), ("Session.decode", 11, 20)]

    class Rows:
        def rows(self, name: str, columns: object = None, where: object = None) -> list[dict]:
            return [
                {"path": "s.py", "qualified_name": q, "start_line": a, "end_line": b}
                for q, a, b in rows
            ]

    unit = [("s.py", 5, 20, "Session", True)]
    named = naming(analyze("Session.decode crashes on invalid data"))
    assert _definitions(Rows(), unit, named) == [  # type: ignore[arg-type]
        "s.py::Session.decode",
        "s.py::Session.encode",
        "s.py::Session",
    ]
    assert _definitions(Rows(), unit)[0] == "s.py::Session.encode"  # type: ignore[arg-type]


def test_ask_is_scored_on_what_dowse_ask_prints(example_repo, fake_embedder, tmp_path):
    """The `ask` method's context is the printed answer's: routed as `dowse ask` routes
    it, fitted whole into the budget; its tokens are the printed markdown's."""
    from dowse.evaluation.swebench import MethodRunner, no_progress
    from dowse.explore.handoff import fit_report, investigate, render_report
    from dowse.retrieval.budget import estimate_tokens

    runner = MethodRunner(
        example_repo,
        tmp_path / "index",
        methods=["ask"],
        embedder=fake_embedder,
        embed=False,
        embed_chunks=False,
        budget=700,
        found_limit=10,
        workers=1,
        progress=no_progress,
    )
    runner.prepare({}, ["ask"])
    # A pasted issue: long, several sentences with "why" and "sometimes" in them.
    issue = (
        "Discounts are sometimes wrong. Why does the cart total not apply the discount "
        "rate when a coupon is given? " * 8
    )
    answer = runner.query("ask", issue)
    printed = fit_report(investigate(runner.searcher, issue, budget=700), 700, "markdown")
    assert printed.mode == "retrieval"  # a report is read by one loop, not split
    text = render_report(printed)
    assert answer.tokens == estimate_tokens(text) <= 700
    assert len(answer.spans) == len(printed.context) > 0
    for block, span in zip(printed.context, answer.spans, strict=True):
        assert span.path == block.path
        if block.form == "full":
            assert (span.start, span.end) == (block.start_line, block.end_line)
        else:  # a signature line shows one line
            assert span.start == span.end
    assert answer.context == list(dict.fromkeys(b.path for b in printed.context))


def test_a_clone_is_found_whatever_the_case_of_its_name(tmp_path, shop):
    from dowse.evaluation.gittree import clone_for

    repos = tmp_path / "repos"  # holds acme__shop
    git_dir = clone_for(repos, "acme/shop")
    assert clone_for(repos, "ACME/Shop") == git_dir
    (repos / "acme__shop").rename(repos / "Acme__Shop")
    assert clone_for(repos, "acme/shop").parent.name == "Acme__Shop"
    with pytest.raises(EvalError, match="no clone of acme/cart"):
        clone_for(repos, "acme/cart")


def test_an_index_an_older_dowse_left_in_the_work_directory_is_rebuilt(
    tmp_path, shop, dataset, fake_embedder
):
    """The work directory is the harness's cache: an index there in another format (an
    upgrade since the last run) is rebuilt, not an error that stops the run."""
    config = _config(tmp_path, dataset, methods=["lexical"], instances=["acme__shop-2"])
    run_swebench(config, embedder=fake_embedder)
    manifests = list(config.work.glob("*/.dowse-index/manifest.json"))
    assert len(manifests) == 1
    data = json.loads(manifests[0].read_text())
    data["format"] -= 1
    manifests[0].write_text(json.dumps(data))
    with pytest.raises(DowseError, match="format"):
        Store.open(manifests[0].parent)
    again = _config(
        tmp_path, dataset, methods=["lexical"], instances=["acme__shop-2"], out=tmp_path / "b.jsonl"
    )
    run_swebench(again, embedder=fake_embedder)
    assert [p.found_files[0] for p in load_predictions(again.out)] == ["shop/pricing.py"]
    assert Store.open(manifests[0].parent).manifest.format == data["format"] + 1


def test_gold_breakdown_tells_why_a_hunk_of_a_shown_file_is_missing():
    """A hunk of a top-5 file not shown whole is classed by its function and the file's
    context: no block, signature lines only, the function shown by another piece of it,
    too long to show whole, not chosen, or outside every function by what its lines are."""
    why = load_benchmark("gold_breakdown").why_not_shown
    fns = ((10, 20), (30, 200))
    code = ("    x = 1",)
    assert why(code, 12, [], fns) == "file not in the context"
    assert why(code, 12, [(10, 10), (30, 30)], fns) == "signature lines only"
    assert why(code, 12, [(15, 20)], fns) == "function shown by another piece"
    assert why(code, 12, [(40, 60)], fns) == "function not shown (within-file ranking)"
    assert why(code, 150, [(1, 8)], fns) == "function too long to show whole, not shown"
    assert why(("",), 25, [(1, 8)], fns) == "outside functions: blank (an insertion point)"
    imports = ("use std::io;",)
    assert why(imports, 2, [(10, 20)], fns) == "outside functions: imports, module declarations"
    assert why(("#define N 4",), 2, [(10, 20)], fns) == "outside functions: preprocessor"
    assert why(("    int n;",), 25, [(10, 20)], fns) == "outside functions: declarations and data"
    # A hunk's first non-blank line decides where it lies.
    assert why(("", "    x = 1"), 9, [(40, 60)], fns) == "function not shown (within-file ranking)"


@pytest.mark.parametrize("method", ["lexical", "hybrid"])
def test_the_search_methods_read_a_support_script_as_dowse_search_does(
    method, tmp_path, fake_embedder
):
    """`lexical` and `hybrid` rank with the index's main language, as `dowse search`
    does: a shell script beside a Rust project's code is support, below the code."""
    from test_loop import _script_repo

    from dowse.evaluation.swebench import MethodRunner, no_progress

    root = tmp_path / "tree"
    root.mkdir()
    _script_repo(root)
    runner = MethodRunner(
        root,
        tmp_path / "index",
        methods=[method],
        embedder=fake_embedder,
        embed=method == "hybrid",
        embed_chunks=False,
        budget=700,
        found_limit=10,
        workers=1,
        progress=no_progress,
    )
    runner.prepare({}, [method])
    # Word for word, the script matches this question a little better than the code.
    found = runner.query(method, "the output file is also an input")
    assert found.found[0] == "src/input.rs"
    assert "diagnostics/info.sh" in found.found
