"""The onnxruntime embedder against the reference, on the real packaged model.

One export per session, into a private cache (two processes race for it); vectors must
stay within cosine 0.99 of sentence-transformers' for every text, so both backends can
share the model name in a manifest.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import cache_env, python_proc

from dowse.errors import EmbedderError
from dowse.indexer.embed import EMBEDDERS, MODEL_NAME, SentenceTransformerEmbedder, get_embedder
from dowse.indexer.onnx_embed import SHORT_TOKENS, OnnxEmbedder, default_cache_dir, export_models

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "transformers", "sentence_transformers", "onnx")

LONG_PROSE = " ".join(
    f"Sentence {i} explains how the indexer walks the repository, parses files with "
    "tree-sitter, splits them into chunks and stores their vectors."
    for i in range(40)
)  # about 1,100 tokens: truncated at max_seq_length

TEXTS = [
    # empty-ish
    "",
    " ",
    "\n\t",
    "x",
    "?",
    # queries and prose
    "where are expired session tokens rejected?",
    "how is the retry backoff computed after a failed payment",
    "Parse the configuration file and fall back to defaults when a key is missing.",
    "The quick brown fox jumps over the lazy dog.",
    LONG_PROSE,
    # code in several languages
    'def add(a: int, b: int) -> int:\n    """Return the sum."""\n    return a + b\n',
    "class LRUCache:\n    def __init__(self, size):\n        self.data = OrderedDict()\n"
    "        self.size = size\n\n    def get(self, key):\n        self.data.move_to_end(key)\n"
    "        return self.data[key]\n",
    "export async function loadUser(id) {\n  const res = await fetch(`/api/users/${id}`);\n"
    "  if (!res.ok) throw new Error(res.statusText);\n  return res.json();\n}\n",
    "interface Props { title: string; onClose?: () => void }\n"
    "export const Modal: React.FC<Props> = ({ title }) => <div>{title}</div>;",
    "func (s *Server) Serve(l net.Listener) error {\n\tfor {\n\t\tconn, err := l.Accept()\n"
    "\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tgo s.handle(conn)\n\t}\n}",
    "impl Iterator for Counter {\n    type Item = u32;\n    fn next(&mut self) -> Option<u32> {\n"
    "        self.n += 1;\n        if self.n < 6 { Some(self.n) } else { None }\n    }\n}",
    'public static void main(String[] args) {\n    System.out.println("Hello, World");\n}',
    '#include <stdio.h>\nint main(void) {\n    printf("%d\\n", 42);\n    return 0;\n}',
    "template <typename T>\nT max_of(const std::vector<T>& v) {\n"
    "    return *std::max_element(v.begin(), v.end());\n}",
    "def each_pair\n  @items.each { |k, v| yield k, v }\nend",
    "<?php\nfunction slugify(string $s): string {\n"
    "    return strtolower(preg_replace('/[^a-z0-9]+/i', '-', $s));\n}",
    '#!/usr/bin/env bash\nset -euo pipefail\nfor f in *.log; do gzip "$f"; done',
    "SELECT u.id, count(o.id) FROM users u LEFT JOIN orders o ON o.user_id = u.id "
    "GROUP BY u.id HAVING count(o.id) > 3;",
    "server:\n  port: 8080\n  tls:\n    enabled: true\n    cert: /etc/ssl/cert.pem\n",
    "x = [i ** 2 for i in range(10) if i % 2 == 0]",
    # non-ASCII
    "naïve café résumé — déjà vu",
    "日本語のテキストを検索する関数",
    "Привет, мир! Функция возвращает список пользователей.",
    "def grüße(名前):\n    return f'こんにちは {名前} 🚀'",
    "emoji only 🚀✨🔥 and math ∑ x² ≤ ∞",
]


@pytest.fixture(scope="session")
def references() -> dict[int, SentenceTransformerEmbedder]:
    return {}


def _reference(references: dict, max_seq_length: int) -> SentenceTransformerEmbedder:
    if max_seq_length not in references:
        references[max_seq_length] = SentenceTransformerEmbedder(max_seq_length=max_seq_length)
    return references[max_seq_length]


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1)


@pytest.mark.model
def test_concurrent_exports_build_the_cache_once(onnx_cache):
    reports = onnx_cache["reports"]
    assert sorted(r["exported"] for r in reports) == [False, True]
    assert reports[0]["int8"] == reports[1]["int8"]
    int8 = Path(reports[0]["int8"])
    assert int8.parent == onnx_cache["dir"] / "models"
    assert int8.name.startswith(f"{MODEL_NAME}-int8-") and int8.suffix == ".onnx"
    leftovers = [p.name for p in int8.parent.iterdir() if p.suffix not in (".onnx", ".lock")]
    assert leftovers == []


@pytest.mark.model
@pytest.mark.parametrize("max_seq_length", [256, 128])
def test_vectors_match_the_reference(onnx_cache, references, max_seq_length):
    vectors = OnnxEmbedder(max_seq_length=max_seq_length).embed(TEXTS)
    expected = _reference(references, max_seq_length).embed(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = _cosines(vectors, expected)
    low = {TEXTS[i][:40]: round(float(c), 4) for i, c in enumerate(cosines) if c < 0.99}
    assert low == {}


@pytest.mark.model
def test_tokens_match_the_reference(onnx_cache, references):
    reference = _reference(references, 256)._load().tokenizer
    ours = OnnxEmbedder()._load_tokenizer()
    for text in TEXTS:
        expected = reference(text, truncation=True, max_length=256)["input_ids"]
        assert ours.encode(text).ids == expected, text[:40]
    assert len(ours.encode(LONG_PROSE).ids) == 256


@pytest.mark.model
def test_order_is_kept_with_mixed_lengths(onnx_cache, references):
    # Long and short, shuffled; small batches so both graphs and several batches are used.
    embedder = OnnxEmbedder(batch_size=4)
    tokenizer = embedder._load_tokenizer()
    # One text per tokenisation ("", " " and "\n\t" are all [CLS] [SEP]), so every row
    # has a single right answer.
    distinct = list({tuple(tokenizer.encode(t).ids): t for t in reversed(TEXTS)}.values())
    texts = [distinct[i] for i in np.random.default_rng(7).permutation(len(distinct))]
    lengths = [len(tokenizer.encode(t).ids) for t in texts]
    assert min(lengths) <= SHORT_TOKENS < max(lengths)
    vectors = embedder.embed(texts)
    expected = _reference(references, 256).embed(texts)
    assert _cosines(vectors, expected).min() >= 0.99
    # A text's vector is its own, whichever texts share the call (their activation
    # ranges would otherwise quantise it): embedded alone, the same to the bit.
    one_by_one = np.vstack([embedder.embed([t]) for t in texts])
    assert np.array_equal(vectors, one_by_one)
    assert list(np.argmax(vectors @ expected.T, axis=1)) == list(range(len(texts)))


@pytest.mark.model
def test_a_vector_does_not_depend_on_the_texts_embedded_with_it(onnx_cache):
    # An incremental index embeds only the changed texts and a parser pool hands them
    # over in the order its workers finish: the vector of a text must be the same in
    # every such company, or two indexes of one tree rank differently.
    texts = [t for t in TEXTS if t.strip()]
    embedder = OnnxEmbedder()
    together = embedder.embed(texts)
    reordered = embedder.embed(texts[::-1])[::-1]
    halves = np.vstack([embedder.embed(texts[::2]), embedder.embed(texts[1::2])])
    halves = halves[np.argsort(list(range(0, len(texts), 2)) + list(range(1, len(texts), 2)))]
    assert np.array_equal(together, reordered)
    assert np.array_equal(together, halves)
    queries = [LONG_PROSE, TEXTS[5] * 4, TEXTS[11]]
    assert np.array_equal(
        embedder.embed_queries(queries), np.vstack([embedder.embed_queries([q]) for q in queries])
    )


@pytest.mark.model
def test_queries_run_on_the_fully_quantised_graph(onnx_cache, references):
    # A query beyond SHORT_TOKENS runs on the query graph: close to the reference (0.987
    # at worst here, Cyrillic prose), not identical to the index's int8 vectors; a short
    # one runs on the float graph as `embed` does, to the bit.
    embedder = OnnxEmbedder()
    assert embedder.models.query is not None and embedder.models.query.is_file()
    tokenizer = embedder._load_tokenizer()
    queries = np.vstack([embedder.embed_queries([t]) for t in TEXTS])
    indexed = np.vstack([embedder.embed([t]) for t in TEXTS])
    expected = _reference(references, 256).embed(TEXTS)
    assert _cosines(queries, expected).min() >= 0.985
    short = [len(tokenizer.encode(t).ids) <= SHORT_TOKENS for t in TEXTS]
    assert any(short) and not all(short)
    for i, is_short in enumerate(short):
        if is_short:
            assert np.array_equal(queries[i], indexed[i]), TEXTS[i]
        else:
            assert not np.array_equal(queries[i], indexed[i]), TEXTS[i][:40]
            assert _cosines(queries[i : i + 1], indexed[i : i + 1])[0] >= 0.985


@pytest.mark.model
def test_prepared_queries_load_their_graphs_and_embed_the_same(onnx_cache):
    short, long = "where are expired tokens rejected?", LONG_PROSE
    fresh = OnnxEmbedder()
    expected = np.vstack([fresh.embed_queries([short]), fresh.embed_queries([long])])
    embedder = OnnxEmbedder()
    thread = embedder.prepare_queries([short])
    assert thread is not None
    thread.join(timeout=120)
    assert set(embedder._sessions) == {"fp32"}  # a short question takes the float graph
    thread = embedder.prepare_queries([long])
    assert thread is not None
    thread.join(timeout=120)
    assert set(embedder._sessions) == {"fp32", "query"}
    got = np.vstack([embedder.embed_queries([short]), embedder.embed_queries([long])])
    assert np.array_equal(got, expected)


def test_preparing_without_exported_graphs_leaves_the_export_to_the_embed(tmp_path):
    # A model directory of its own: the cache key needs only its weights file's stat.
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"")
    embedder = OnnxEmbedder(cache_dir=tmp_path, model_dir=model)
    thread = embedder.prepare_queries(["a question"])
    if thread is not None:  # None: no onnxruntime to prepare
        thread.join(timeout=60)
    assert embedder._sessions == {} and embedder._models is None
    assert not (tmp_path / "models").exists()


@pytest.mark.model
def test_the_cache_is_reused(onnx_cache):
    models_dir = onnx_cache["dir"] / "models"
    before = {p.name: p.stat().st_mtime_ns for p in models_dir.iterdir()}
    embedder = OnnxEmbedder()
    embedder.embed(["reuse the exported graphs", LONG_PROSE])
    assert embedder.models.exported is False
    assert embedder.models.int8.parent == models_dir
    assert {p.name: p.stat().st_mtime_ns for p in models_dir.iterdir()} == before


@pytest.mark.model
def test_a_failed_export_is_one_clear_error(tmp_path):
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "bert"}')
    (broken / "model.safetensors").write_bytes(b"not a safetensors file")
    cache = tmp_path / "cache"
    with pytest.raises(EmbedderError, match="^cannot export the ONNX embedding model: ") as info:
        export_models(cache_dir=cache, model_dir=broken)
    assert "\n" not in str(info.value)
    assert [p.suffix for p in (cache / "models").iterdir()] == [".lock"]  # no partial files


@pytest.mark.model
def test_the_runtime_imports_neither_torch_nor_transformers(onnx_cache):
    code = (
        "import sys, time, json; t = time.perf_counter(); "
        "from dowse.indexer.onnx_embed import OnnxEmbedder; "
        "v = OnnxEmbedder().embed(['where are expired session tokens rejected?']); "
        "print(json.dumps({'seconds': time.perf_counter() - t, 'shape': v.shape, "
        f"'heavy': [m for m in {HEAVY!r} if m in sys.modules]}}))"
    )
    proc = python_proc(code, cache_env(onnx_cache["dir"]))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and err == "", err
    report = json.loads(out)
    assert report["heavy"] == [] and report["shape"] == [1, 384]


def test_empty_input_needs_no_model(tmp_path):
    embedder = OnnxEmbedder(cache_dir=tmp_path)
    assert embedder.embed([]).shape == (0, 384)
    assert list(tmp_path.iterdir()) == []


def test_the_cache_dir_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DOWSE_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("DOWSE_CACHE_DIR")
    assert default_cache_dir() == tmp_path / "xdg" / "dowse"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "dowse"


def test_the_registry_names_the_same_model_without_importing_runtimes():
    assert getattr(EMBEDDERS["minilm-onnx"], "name", None) == MODEL_NAME
    watched = ("onnxruntime", "tokenizers", *HEAVY)
    code = (
        "import sys, json; from dowse.indexer.embed import get_embedder; "
        "e = get_embedder('minilm-onnx'); "
        "print(json.dumps([type(e).__name__, e.name, e.dim, "
        f"[m for m in {watched!r} if m in sys.modules]]))"
    )
    proc = python_proc(code, dict(os.environ))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out) == ["OnnxEmbedder", MODEL_NAME, 384, []]
    assert isinstance(get_embedder("minilm-onnx"), OnnxEmbedder)
