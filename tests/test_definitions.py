"""Definitions: a vector each beside its file's summary (the docstring's opening when it
has one), and how a file's closeness takes them in."""

from __future__ import annotations

import numpy as np
import pytest

from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.store import Store, quote_list
from dowse.indexer.summary import DEFINITION_DOC_CHARS, definition_text
from dowse.retrieval.file_ranking import file_dense
from dowse.retrieval.file_vectors import FileVectors
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.pool import summary_chunks
from dowse.retrieval.query import analyze


def test_definition_text_is_path_name_signature_and_the_docstring_opening():
    text = definition_text(
        "a/b.py",
        "Cart.total",
        "def total(self) -> int:",
        "Sum of the lines.\n\n   Discounts   applied.",
    )
    assert text == (
        "a/b.py\nCart.total: def total(self) -> int:\nSum of the lines. Discounts applied."
    )
    # Nothing documented: its path, name and signature.
    assert definition_text("a/b.py", "f", "def f():", " \n ") == "a/b.py\nf: def f():"
    # A long docstring: its opening DEFINITION_DOC_CHARS, whitespace collapsed.
    long = definition_text("a.py", "f", "def f():", "word\n  " * 500)
    assert long == "a.py\nf: def f():\n" + ("word " * 500)[:DEFINITION_DOC_CHARS]


def _unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_closeness_is_the_larger_of_summary_and_closest_definition():
    ids = ["a.py", "a.py#f@3", "b.py", "a.py#g@9", "c.py#h@1", "d.py", "d.py#k@2"]
    paths = ["a.py", "a.py", "b.py", "a.py", "c.py", "d.py", "d.py"]
    held = FileVectors.of(
        ids,
        paths,
        np.stack(
            [
                _unit(1, 0),
                _unit(0, 1),
                _unit(1, 1),
                _unit(1, 1),
                _unit(-1, 0),
                _unit(1, 0),
                _unit(0, 1),
            ]
        ),
    )
    assert held.paths == ["a.py", "b.py", "c.py", "d.py"]
    sims = np.asarray([0.2, 0.9, 0.5, 0.4, -0.3, 0.6, 0.1], dtype=np.float32)
    # a: its closest definition; b: no definition, its summary; c: no summary yet, its
    # definition; d: a summary closer than its definition.
    assert np.allclose(held.closeness(sims), [0.9, 0.5, -0.3, 0.6])
    # The definition of a file closest to the query, by qualified name and start line.
    assert held.closest_definitions(sims, ["a.py", "b.py", "zz.py"]) == {"a.py": ("f", 3)}
    sims[3] = 0.95
    assert held.closest_definitions(sims, ["a.py"]) == {"a.py": ("g", 9)}


def test_a_file_found_by_a_definition_s_docstring_brings_that_definition(
    tmp_path, indexed_examples, fake_embedder
):
    # the session's build, copied: conftest
    example_repo = indexed_examples.copy(tmp_path / "example", IndexConfig(embed_chunks=False))
    searcher = HybridSearcher(Store.open(example_repo / ".dowse"), lambda: fake_embedder)
    # Words of `cart_total`'s docstring (shop/pricing.py, two chunks): its file is the
    # closest, and the chunk of that definition joins the pool beside the file's best
    # chunk for the query's words.
    question = "the total never goes below zero"
    vector = searcher.questions.embed_query(question)
    assert file_dense(searcher.questions, vector, 1000)[0][0] == "shop/pricing.py"
    cosines = searcher.questions.file_cosines(vector)
    closest = cosines.held.closest_definitions(
        cosines.sims, ["shop/pricing.py", "shop/payments.py"]
    )
    assert closest["shop/pricing.py"] == ("cart_total", 50)
    found: dict = {}
    summary_chunks(
        searcher.lookups,
        ["shop/pricing.py", "shop/payments.py"],
        ["nowordmatchesthis"],
        [],
        found,
        closest,
    )
    first, definition = found["shop/pricing.py"]
    assert first["start_line"] == 1  # no word matched: the file's first chunk
    assert definition["start_line"] <= 50 <= definition["end_line"] and first != definition
    assert "def cart_total" in definition["text"]
    # shop/payments.py is one chunk: it comes once, not as its own definition again.
    assert [r["start_line"] for r in found["shop/payments.py"]] == [1]
    cands = searcher.candidates(analyze(question), k=5)
    assert definition["id"] in cands
    # The loop's search and ask's closeness ranking share one question's cosines.
    cosines = searcher.questions.question_cosines(question)
    assert searcher.questions.question_cosines(question) is cosines
    assert np.allclose(cosines.sims, searcher.questions.file_cosines(vector).sims)
    searcher.questions.clear_query_cache()
    assert searcher.questions.question_cosines(question) is not cosines


def test_an_index_from_before_definitions_embeds_them_on_its_next_run(
    tmp_path, indexed_examples, fake_embedder
):
    # the session's build, copied: conftest
    example_repo = indexed_examples.copy(tmp_path / "example", IndexConfig(embed_chunks=False))
    index_dir = example_repo / ".dowse"
    store = Store.open(index_dir)
    complete = sorted(r["id"] for r in store.rows("file_vectors", ["id"]))
    # As an index written before definitions had vectors: summaries only, no flag.
    writer = Store.create(
        index_dir,
        root=example_repo,
        model=store.manifest.model,
        dim=store.manifest.dim,
        rebuild=False,
    )
    writer.table("file_vectors").delete("id != path")
    writer.commit(definitions=False)
    old = Store.open(index_dir)
    assert old.count("file_vectors") == old.count("files") < len(complete)
    fake_embedder.calls.clear()
    stats = build_index(
        example_repo, config=IndexConfig(embed_chunks=False), embedder=fake_embedder
    )
    store = Store.open(index_dir)
    assert stats.parsed == 0 and stats.vectors_pending == 0  # nothing parsed again
    assert sorted(r["id"] for r in store.rows("file_vectors", ["id"])) == complete
    assert store.manifest.definitions and store.manifest.embedded
    assert fake_embedder.calls == []  # their texts were in the embedding cache
    # Unchanged: nothing to do.
    assert (
        build_index(
            example_repo, config=IndexConfig(embed_chunks=False), embedder=fake_embedder
        ).embedded
        == 0
    )


def test_an_index_from_before_undocumented_definitions_embeds_them_on_its_next_run(
    example_repo, fake_embedder
):
    (example_repo / "shop" / "tax.py").write_text(
        "RATE = 0.2\n\n\ndef vat(amount):\n    return amount * RATE\n"
    )
    build_index(example_repo, config=IndexConfig(embed_chunks=False), embedder=fake_embedder)
    index_dir = example_repo / ".dowse"
    store = Store.open(index_dir)
    complete = sorted(r["id"] for r in store.rows("file_vectors", ["id"]))
    assert "shop/tax.py#vat@4" in complete and "shop/tax.py#RATE@1" in complete
    assert "shop/tax.py\nvat: def vat(amount):" in fake_embedder.texts
    # As an index written when only documented definitions had vectors.
    undocumented = [
        r["id"]
        for r in store.rows("symbols", ["id", "docstring"])
        if r["id"] in complete and not r["docstring"]
    ]
    writer = Store.create(
        index_dir,
        root=example_repo,
        model=store.manifest.model,
        dim=store.manifest.dim,
        rebuild=False,
    )
    writer.table("file_vectors").delete(f"id IN ({quote_list(undocumented)})")
    writer.commit(undocumented=False)
    assert Store.open(index_dir).count("file_vectors") == len(complete) - len(undocumented)
    fake_embedder.calls.clear()
    stats = build_index(
        example_repo, config=IndexConfig(embed_chunks=False), embedder=fake_embedder
    )
    store = Store.open(index_dir)
    assert stats.parsed == 0 and stats.vectors_pending == 0
    assert sorted(r["id"] for r in store.rows("file_vectors", ["id"])) == complete
    assert store.manifest.undocumented and store.manifest.embedded
    assert fake_embedder.calls == []  # their texts were in the embedding cache


@pytest.mark.parametrize("edit", ["docstring", "body"])
def test_editing_a_file_re_embeds_only_its_changed_definitions(
    tmp_path, indexed_examples, fake_embedder, edit
):
    # the session's build, copied: conftest
    example_repo = indexed_examples.copy(tmp_path / "example", IndexConfig(embed_chunks=False))
    path = example_repo / "shop" / "payments.py"
    text = path.read_text()
    if edit == "docstring":
        text = text.replace("the delay before each retry", "the wait before each retry")
    else:
        text = text.replace("for n in range(attempts - 1)]", "for n in range(attempts)]")
    path.write_text(text)
    fake_embedder.texts.clear()
    build_index(example_repo, config=IndexConfig(embed_chunks=False), embedder=fake_embedder)
    if edit == "docstring":
        # The file's summary does not change (module doc, names); the one definition does.
        assert len(fake_embedder.texts) == 1 and "the wait before" in fake_embedder.texts[0]
    else:
        assert fake_embedder.texts == []  # a body edit changes no embedded text


def test_tests_and_examples_keep_their_summaries_but_not_their_definitions(
    example_repo, fake_embedder
):
    (example_repo / "tests" / "test_refunds.py").write_text(
        'def test_refund_of_a_declined_card():\n    """A declined card is never refunded."""\n'
    )
    (example_repo / "examples").mkdir()
    (example_repo / "examples" / "checkout.py").write_text(
        'def demo():\n    """Check a cart out with a test card."""\n'
    )
    stats = build_index(
        example_repo, config=IndexConfig(embed_chunks=False), embedder=fake_embedder
    )
    store = Store.open(example_repo / ".dowse")
    ids = {r["id"] for r in store.rows("file_vectors", ["id"])}
    assert {"tests/test_refunds.py", "examples/checkout.py"} <= ids  # their summaries
    assert not any(i.startswith(("tests/", "examples/")) and "#" in i for i in ids)
    assert "shop/pricing.py#cart_total@50" in ids
    assert stats.vectors_pending == 0 and store.manifest.embedded
    # Of each, only the summary was embedded.
    for path in ("tests/test_refunds.py", "examples/checkout.py"):
        [text] = [t for t in fake_embedder.texts if t.startswith(path + "\n")]
        assert text == store.rows("files", ["summary"], where=f"path = '{path}'")[0]["summary"]
