"""The one hybrid score and `ask`'s file fusion, called with plain numbers."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from dowse.retrieval.fusion import FileFusion, FusionWeights, file_place, fuse, lexical_share


def test_fuse_weighs_lexical_against_dense_and_adds_the_named_evidence():
    signals = {"lexical": 1.0, "dense": 0.5, "symbol": 0.8, "path": 1.0, "summary": 0.4}
    # 0.7 * 1.0 + 0.3 * 0.5 + 0.5 * 0.8 + 0.25 * 1.0 + 1.0 * 0.4
    assert fuse(signals, lexical_weight=0.7) == 1.9
    assert fuse({}, lexical_weight=0.7) == 0.0
    # Signals the score does not weigh (the evaluator's) change nothing.
    assert fuse({**signals, "cosine": 0.9, "raised": 1.0}, lexical_weight=0.7) == 1.9
    assert fuse({"dense": 1.0}, lexical_weight=0.25) == 0.75


def test_fuse_lowers_unasked_tests_and_docs_and_takes_other_weights():
    signals = {"lexical": 1.0}
    assert fuse(signals, lexical_weight=1.0, unasked_test=True) == 0.8
    assert fuse(signals, lexical_weight=1.0, unasked_doc=True) == 0.7
    assert fuse(signals, lexical_weight=1.0, unasked_test=True, unasked_doc=True) == 0.56
    weights = FusionWeights(symbol=2.0, test_factor=0.5)
    assert fuse({"symbol": 1.0}, lexical_weight=1.0, unasked_test=True, weights=weights) == 1.0
    assert fuse({"lexical": 1 / 3}, lexical_weight=1.0) == 0.3333  # rounded to 4 places


def test_lexical_share_without_vectors_and_beside_file_summaries():
    assert lexical_share(0.4, chunk_vectors=True, file_vectors=False) == 0.4
    assert lexical_share(0.4, chunk_vectors=False, file_vectors=False) == 1.0
    assert lexical_share(0.4, chunk_vectors=True, file_vectors=True) == 0.8
    assert lexical_share(0.9, chunk_vectors=True, file_vectors=True) == 0.9
    weights = FusionWeights(chunk_dense_with_summaries=0.5)
    assert lexical_share(0.4, chunk_vectors=True, file_vectors=True, weights=weights) == 0.5


def test_file_place_sums_reciprocal_ranks_at_their_weights():
    assert file_place(0, None, None, None) == 1.0
    assert file_place(1, 0, 1, 3) == pytest.approx(0.5 + 0.2 + 0.3 / 2 + 0.5 / 4)
    assert file_place(None, 0, None, None) == pytest.approx(0.2)
    assert file_place(None, None, None, None) == 0.0
    assert file_place(0, 0, 0, 0, FileFusion(words=0.0, closeness=0.0, history=0.0)) == 1.0


def test_weights_are_checked_records():
    with pytest.raises(ValidationError):
        FusionWeights(test_factor=0.0)
    with pytest.raises(ValidationError):
        FileFusion(words=-1.0)
    with pytest.raises(ValidationError):
        FusionWeights(symbol_weight=1.0)  # type: ignore[call-arg]
