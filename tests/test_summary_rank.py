"""benchmarks/summary_rank.py: the gold file's place in the file summary ranking."""

from __future__ import annotations

import json

import numpy as np
from conftest import load_benchmark

from dowse.indexer.build import build_index
from dowse.indexer.store import Store
from dowse.retrieval.file_ranking import file_dense
from dowse.retrieval.hybrid import HybridSearcher

sr = load_benchmark("summary_rank")


def test_gold_ranks_are_places_in_the_search_s_own_summary_ranking(
    tmp_path, example_repo, fake_embedder
):
    index_dir = tmp_path / "work" / "acme__shop" / ".dowse-index"
    build_index(example_repo, index_dir=index_dir, embedder=fake_embedder)
    question = "Card payments fail\nthe gateway retries with backoff, then gives up"
    tasks = [
        {"repo": "acme/shop", "problem_statement": question, "gold_files": gold}
        for gold in (
            ["shop/payments.py"],
            ["shop/pricing.py", "shop/payments.py"],
            ["not/indexed.py"],
        )
    ]
    tasks.append(
        {"repo": "other/repo", "problem_statement": question, "gold_files": ["shop/payments.py"]}
    )  # no work index: left out
    dataset = tmp_path / "dev.jsonl"
    dataset.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    ranks = sr.gold_ranks(dataset, tmp_path / "work", fake_embedder)
    searcher = HybridSearcher(Store.open(index_dir), lambda: fake_embedder)
    ranked = [
        p for p, _ in file_dense(searcher.questions, searcher.questions.embed_query(question), 1000)
    ]
    expected = [
        ranked.index("shop/payments.py") + 1,
        max(ranked.index("shop/pricing.py"), ranked.index("shop/payments.py")) + 1,
    ]
    assert ranks == expected
    assert np.allclose(
        searcher.questions.embed_query(question), sr.question_vector(fake_embedder, question)
    )
