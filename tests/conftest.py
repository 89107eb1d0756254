"""Shared fixtures: a deterministic fake embedder and indexed copies of the example repo."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from indexer import embed
from indexer.tokens import tokenize

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "fixtures" / "example"
LANGUAGES = REPO / "fixtures" / "languages"


class FakeEmbedder:
    """Hashed bag of code tokens: deterministic, instant, and similar texts get similar
    vectors, so dense retrieval behaves plausibly in unit tests."""

    name = "fake-hash"
    dim = 384

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for tok in tokenize(text):
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=4).digest(), "big")
                out[row, h % self.dim] += 1.0
            norm = np.linalg.norm(out[row])
            out[row] = out[row] / norm if norm else out[row]
            if not norm:
                out[row, 0] = 1.0
        return out


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEmbedder]:
    instance = FakeEmbedder()
    # A factory carrying `name`: the query side picks the factory matching the manifest.
    factory = type("FakeFactory", (), {"name": FakeEmbedder.name,
                                       "__call__": lambda self: instance})()
    monkeypatch.setitem(embed.EMBEDDERS, "fake", factory)
    monkeypatch.setenv("DOWSE_EMBEDDER", "fake")
    yield instance


@pytest.fixture
def example_repo(tmp_path: Path) -> Path:
    """A private copy of the bundled example repository."""
    dest = tmp_path / "example"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns(".dowse"))
    return dest
