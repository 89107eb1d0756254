"""benchmarks/file_ranking.py: its records and replay reproduce the ranking `ask` returns."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import load_benchmark

from dowse.indexer.store import Store
from dowse.retrieval.ask import ask
from dowse.retrieval.hybrid import HybridSearcher

fr = load_benchmark("file_ranking")


@pytest.mark.parametrize(
    "question",
    [
        "where are expired session tokens rejected?",
        "how are discounts applied to a cart?",
        "payment retries with backoff when the gateway is unavailable",
    ],
)
def test_a_record_replays_to_the_ranking_ask_returns(
    tmp_path, indexed_examples, fake_embedder, question
):
    # The session's build, copied (conftest.IndexedExamples).
    example_repo = indexed_examples.copy(tmp_path / "example")
    store = Store.open(example_repo / ".dowse")
    searcher = HybridSearcher(store, lambda: fake_embedder)
    inst = SimpleNamespace(
        instance_id="x", problem_statement=question, gold_files=["shop/pricing.py"]
    )
    rec = fr._record_one(searcher, store, inst)
    assert rec["final"] == [f.path for f in ask(searcher, question).files]
    assert rec["final"] and fr.rank(rec) == rec["final"]
    assert all(0 <= rel <= 1 for parts in rec["chunks"].values() for rel, _ in parts)


def test_scores_count_every_gold_file_within_k():
    recs = [{"gold": ["b.py"]}, {"gold": ["a.py", "z.py"]}]
    ranked = [["a.py", "b.py"], ["a.py", "b.py", "c.py", "z.py"]]
    # Acc@1: neither; Acc@3: the first only (z.py is 4th); Acc@5 and @10: both.
    # MRR: 1/2 for the first, 1/1 for the second (its first gold file is first).
    assert fr.scores(recs, ranked) == "  0.0  50.0 100.0 100.0  0.750"
