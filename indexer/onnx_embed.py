"""all-MiniLM-L6-v2 through onnxruntime: the fast embedder ("minilm-onnx").

It is the reference model (`indexer.embed.SentenceTransformerEmbedder`) compiled for
onnxruntime, so it shares the reference's `name`: an index built with one is queried with
the other. Every vector `embed` makes is within cosine 0.99 of the reference's, every
one `embed_queries` makes within 0.985 (tests/test_onnx_embed.py checks varied texts;
benchmarks/embedders.md has the figures on real code).

Three graphs are exported once from the packaged weights and cached in
`<cache>/models/` (see `default_cache_dir`), all fused by onnxruntime's BERT optimizer:

- int8: dynamic int8 quantisation (per-channel weights, per-batch activations) of the
  MatMul and Attention nodes, except the feed-forward output projections (the MatMuls fed
  by GELU), which stay float32: a few outlier channels there set the per-batch int8
  range. Quantising them too (the plain recipe in shared/DEPENDENCIES.md) is about 1.2x
  faster but leaves some code chunks at cosine 0.983 and tiny inputs at 0.973.
- fp32: the fused float graph. Inputs of at most `SHORT_TOKENS` tokens (queries) run
  here: they cost little, and int8 degrades most on very short inputs (0.98 for "?").
- query: every MatMul and Attention node quantised (the plain recipe), for the longer
  inputs of `embed_queries`. A question is embedded alone, on the cores its search's
  full-text queries share, and an issue text fills the 256-token window: there this
  graph takes ~18.5 ms instead of ~22 and a search for an issue text ~9 % less time
  (benchmarks/RESULTS.md, query latency), its vectors within cosine 0.99 of the int8
  graph's. The index's texts keep the int8 graph.

Invariants:
- The runtime imports numpy, tokenizers and onnxruntime only; torch, transformers and
  onnx are imported by the exporter alone, once per cache key.
- Cached graphs appear whole or not at all: each is written to a temporary file and
  renamed, and exporters serialise on an flock, so a concurrent process waits and reuses.
- The cache key hashes `EXPORT_VERSION`, the source weights' size and mtime, and the
  onnxruntime version (the fused operators are onnxruntime's), so a changed recipe, model
  or runtime exports again instead of loading a stale graph.
- A vector is a function of its text alone: the quantised graphs' activation ranges are
  per run, padding and batch-mates included, so they embed one text a run (batched, a
  text's vector moved by up to 0.02 a coordinate with its batch-mates, and a fresh and an
  incremental build of one tree ranked differently); the float graph batches.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dowse.errors import DowseError, EmbedderError
from dowse.indexer.embed import MODEL_NAME, default_cache_dir, model_path

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SHORT_TOKENS", "OnnxEmbedder", "OnnxModels", "default_cache_dir", "export_models"]

EXPORT_VERSION = 3
"""Bump when the export or quantisation changes: it is part of the cache key."""
SHORT_TOKENS = 16
"""Inputs of at most this many tokens (with [CLS] and [SEP]) run on the float32 graph."""
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_GELU_OPS = frozenset({"BiasGelu", "Gelu", "FastGelu", "QuickGelu"})


@dataclass(frozen=True)
class OnnxModels:
    """The cached graphs; `exported` says whether this call had to build them. Without
    a `query` graph, queries run on `int8`."""

    int8: Path
    fp32: Path
    query: Path | None = None
    exported: bool = False


def _cache_key(model_dir: Path) -> str:
    try:
        st = (model_dir / "model.safetensors").stat()
    except OSError as exc:
        raise EmbedderError(
            f"cannot read the model weights in {model_dir}: {exc.strerror}"
        ) from None
    # The runtime's version, the one its distribution's metadata holds (which the key
    # was made of before), read without importing `importlib.metadata` (~30 ms of a
    # cold query; the query's embedder imports onnxruntime anyway).
    try:
        import onnxruntime
    except ImportError:
        raise EmbedderError(
            "the minilm-onnx embedder needs onnxruntime: pip install onnxruntime"
        ) from None
    ort_version = onnxruntime.__version__
    source = f"{EXPORT_VERSION}:{st.st_size}:{st.st_mtime_ns}:{ort_version}"
    return hashlib.blake2b(source.encode(), digest_size=5).hexdigest()


def _paths(models_dir: Path, key: str) -> OnnxModels:
    return OnnxModels(
        int8=models_dir / f"{MODEL_NAME}-int8-{key}.onnx",
        fp32=models_dir / f"{MODEL_NAME}-fp32-{key}.onnx",
        query=models_dir / f"{MODEL_NAME}-query-{key}.onnx",
    )


def _complete(models: OnnxModels) -> bool:
    return all(p is not None and p.is_file() for p in (models.fp32, models.query, models.int8))


def export_models(*, cache_dir: Path | None = None, model_dir: Path | None = None) -> OnnxModels:
    """Return the cached graphs of the model, exporting them first if needed.

    Exporting takes about 10-20 s and needs torch, transformers and onnx; a process that
    finds another one exporting waits for it and reuses its files.
    """
    source = Path(model_dir) if model_dir is not None else Path(model_path())
    models_dir = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / "models"
    models = _paths(models_dir, _cache_key(source))
    if _complete(models):
        return models
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmbedderError(f"cannot create the model cache {models_dir}: {exc.strerror}") from None
    with _flock(models.int8.with_suffix(".lock")):
        if _complete(models):
            return models  # another process exported while this one waited
        work = Path(tempfile.mkdtemp(prefix=".export-", dir=models_dir))
        try:
            fp32, int8, query = _export(source, work)
            # The int8 file is the last to appear, and all three are checked.
            assert models.query is not None
            os.replace(fp32, models.fp32)
            os.replace(query, models.query)
            os.replace(int8, models.int8)
        except EmbedderError:
            raise
        # torch, transformers, safetensors, onnx and onnxruntime each fail with types of
        # their own, several deriving from Exception alone (SafetensorError, onnx's
        # ValidationError): whatever the export raises is why there is no model.
        except Exception as exc:
            detail = " ".join(str(exc).split())[:300] or type(exc).__name__
            raise EmbedderError(f"cannot export the ONNX embedding model: {detail}") from exc
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return OnnxModels(int8=models.int8, fp32=models.fp32, query=models.query, exported=True)


def _runtime_errors() -> tuple[type[Exception], ...]:
    """onnxruntime's own exception types (NoSuchFile, InvalidProtobuf, Fail, ...), which
    derive from Exception alone: what loading a graph raises for a file it cannot use."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    return tuple(
        v for v in vars(state).values() if isinstance(v, type) and issubclass(v, Exception)
    )


@contextlib.contextmanager
def _flock(path: Path) -> Iterator[None]:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise EmbedderError(f"cannot write the model cache {path.parent}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by the kernel if the holder dies
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence the exporters' warnings, log lines and progress bars: the library never
    prints."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)


def _export(model_dir: Path, work: Path) -> tuple[Path, Path, Path]:
    """Write `work/fp32.onnx`, `work/int8.onnx` and `work/query.onnx` (recipe:
    shared/DEPENDENCIES.md)."""
    for var, value in (
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
        ("TRANSFORMERS_VERBOSITY", "error"),
    ):
        os.environ.setdefault(var, value)
    try:
        import onnx
        import torch
        import transformers
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.transformers.optimizer import optimize_model
    except ImportError as exc:
        raise EmbedderError(
            f"exporting the ONNX model needs torch, transformers, onnx and onnxruntime: {exc}"
        ) from None

    with _quiet():
        with contextlib.suppress(AttributeError):
            transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        model = transformers.AutoModel.from_pretrained(
            str(model_dir),
            attn_implementation="eager",  # eager attention fuses in onnxruntime
        ).eval()

        class _Wrapper(torch.nn.Module):
            # transformers 5 breaks a positional export: call the model with keywords.
            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                return self.inner(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    token_type_ids=token_type_ids,
                ).last_hidden_state

        # A padded row in the example keeps the attention mask a real input of the graph.
        ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.long)
        mask = (ids != 0).long()
        raw, fp32, int8 = work / "raw.onnx", work / "fp32.onnx", work / "int8.onnx"
        query = work / "query.onnx"
        with torch.no_grad():
            torch.onnx.export(
                _Wrapper(model),
                (ids, mask, torch.zeros_like(ids)),
                str(raw),
                dynamo=False,
                opset_version=17,
                input_names=list(_INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes={
                    name: {0: "batch", 1: "sequence"} for name in (*_INPUTS, "last_hidden_state")
                },
            )
        config = model.config
        optimized = optimize_model(
            str(raw),
            model_type="bert",
            num_heads=config.num_attention_heads,
            hidden_size=config.hidden_size,
        )
        optimized.save_model_to_file(str(fp32))
        graph = onnx.load(str(fp32)).graph
        producers = {out: node.op_type for node in graph.node for out in node.output}
        ffn_out = [
            node.name
            for node in graph.node
            if node.op_type == "MatMul" and producers.get(node.input[0]) in _GELU_OPS
        ]
        for target, excluded in ((int8, ffn_out), (query, [])):
            quantize_dynamic(
                str(fp32),
                str(target),
                weight_type=QuantType.QInt8,
                per_channel=True,
                # 7-bit weights: on x86 CPUs without VNNI (AVX2 only) onnxruntime's
                # u8 x s8 products saturate in 16 bits, and full-range weights put the
                # vectors 0.97 from the reference's (an AMD EPYC with AVX2); 7 bits keep
                # them within 0.99 there (tests/test_onnx_embed.py).
                reduce_range=True,
                op_types_to_quantize=["MatMul", "Attention"],
                nodes_to_exclude=excluded,
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            )
    return fp32, int8, query


class OnnxEmbedder:
    """all-MiniLM-L6-v2 on the CPU through onnxruntime, mostly int8: the reference's
    vectors within cosine 0.99, no torch at run time (a cold process has its first query
    vector in under a second), faster batches (benchmarks/embedders.md)."""

    name = MODEL_NAME
    dim = 384

    def __init__(
        self,
        *,
        max_seq_length: int = 256,
        batch_size: int = 32,
        threads: int | None = None,
        cache_dir: Path | None = None,
        model_dir: Path | None = None,
        models: OnnxModels | None = None,
    ) -> None:
        """Cheap: the graphs are exported (once) and loaded on the first `embed`.

        `models` overrides the cached graphs (benchmarks compare quantisations with it).
        """
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self.threads = threads if threads is not None else min(2, os.cpu_count() or 1)
        self._cache_dir = cache_dir
        self._model_dir = Path(model_dir) if model_dir is not None else None
        self._models = models
        self._tokenizer: Any = None
        self._sessions: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def models(self) -> OnnxModels:
        """The graphs in use, exported into the cache on first access if need be."""
        with self._lock:
            if self._models is None:
                self._models = export_models(cache_dir=self._cache_dir, model_dir=self._model_dir)
            return self._models

    def _load_tokenizer(self) -> Any:
        with self._lock:
            if self._tokenizer is None:
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                from tokenizers import Tokenizer

                source = self._model_dir or Path(model_path())
                try:
                    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
                # tokenizers raises Exception itself, no subclass, for a file it cannot
                # read or parse: the one call here is what this catches.
                except Exception as exc:
                    raise EmbedderError(f"cannot load the tokenizer from {source}: {exc}") from exc
                # The file pads every input to 128 and truncates there; the reference
                # truncates at max_seq_length and pads per batch (done in _run).
                tokenizer.no_padding()
                tokenizer.enable_truncation(max_length=self.max_seq_length)
                self._tokenizer = tokenizer
        return self._tokenizer

    def _session(self, kind: str) -> Any:
        path: Path = getattr(self.models, kind)
        with self._lock:
            if kind not in self._sessions:
                try:
                    import onnxruntime as ort
                except ImportError:
                    raise EmbedderError(
                        "the minilm-onnx embedder needs onnxruntime: pip install onnxruntime"
                    ) from None
                options = ort.SessionOptions()
                options.intra_op_num_threads = self.threads
                options.inter_op_num_threads = 1
                # Idle worker threads sleep instead of spinning: a query is embedded while
                # LanceDB searches on the same cores, and spinning threads starved it
                # (benchmarks/RESULTS.md, query latency); batch throughput is unchanged.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.log_severity_level = 3  # errors only: the library never prints
                unusable: tuple[type[Exception], ...] = (OSError, *_runtime_errors())
                try:
                    session = ort.InferenceSession(
                        str(path), options, providers=["CPUExecutionProvider"]
                    )
                except unusable as exc:
                    raise EmbedderError(
                        f"cannot load {path} ({' '.join(str(exc).split())[:200]}); "
                        "delete it to export it again"
                    ) from exc
                self._sessions[kind] = (session, {i.name for i in session.get_inputs()})
        return self._sessions[kind]

    def prepare_queries(self, texts: Sequence[str]) -> threading.Thread | None:
        """Start loading what `embed_queries(texts)` will run on (the tokenizer, the graphs
        those texts take) on a thread of its own, and return it (None without the
        runtime).

        For a caller about to open an index: onnxruntime builds a session without holding
        the GIL, so on a second core a cold process has its graph by the time its
        question is embedded (`embed_queries` waits for what is still loading). The
        runtime's modules are imported here, on the caller's thread: two threads importing
        at once can deadlock on the import locks. Graphs not exported yet are left to the
        first embed, and any failure to `embed_queries`, which reports it.
        """
        try:
            import onnxruntime  # noqa: F401
            import tokenizers  # noqa: F401
        except ImportError:
            return None
        # Not a daemon: the interpreter waits for it at exit instead of stopping it
        # inside onnxruntime's C++.
        thread = threading.Thread(
            target=self._warm, args=(list(texts),), name="dowse-embedder-load"
        )
        thread.start()
        return thread

    def _warm(self, texts: Sequence[str]) -> None:
        try:
            with self._lock:
                models = self._models
            if models is None:
                models = self._exported()
            if models is None:
                return
            long_kind = "query" if models.query is not None else "int8"
            encodings = self._load_tokenizer().encode_batch([str(t) for t in texts])
            kinds = {"fp32" if len(e.ids) <= SHORT_TOKENS else long_kind for e in encodings}
            for kind in sorted(kinds):
                self._session(kind)
        except (DowseError, OSError):  # embed_queries reports it, where it is needed
            return

    def _exported(self) -> OnnxModels | None:
        """The cached graphs when all are there (then kept, as `models` keeps them)."""
        source = self._model_dir or Path(model_path())
        models_dir = (self._cache_dir or default_cache_dir()) / "models"
        found = _paths(models_dir, _cache_key(source))
        if not _complete(found):
            return None
        with self._lock:
            if self._models is None:
                self._models = found
            return self._models

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "int8")

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Like `embed`, with inputs beyond `SHORT_TOKENS` on the query graph."""
        return self._embed(texts, "query" if self.models.query is not None else "int8")

    def _embed(self, texts: Sequence[str], long_kind: str) -> np.ndarray:
        # Imported here: choosing the embedder (a no-op `dowse index`) embeds nothing.
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._load_tokenizer().encode_batch([str(t) for t in texts])
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        # Sorted by length, a float batch pads little.
        order = np.argsort(lengths, kind="stable")
        cut = int(np.searchsorted(lengths[order], SHORT_TOKENS, side="right"))
        for kind, group in (("fp32", order[:cut]), (long_kind, order[cut:])):
            if not len(group):
                continue
            session = self._session(kind)
            # A quantised graph scales its activations by the range of the whole run,
            # padding and batch-mates included: batched, a text's vector would depend on
            # which texts it was embedded with (a fresh build, an incremental one and
            # another parser count ranked differently). One text a run makes its vector
            # a function of the text alone, at about the same CPU (no padding).
            size = self.batch_size if kind == "fp32" else 1
            for start in range(0, len(group), size):
                rows = group[start : start + size]
                out[rows] = self._run(session, [encodings[i] for i in rows])
        return out

    def _run(self, session: tuple[Any, set[str]], encodings: list[Any]) -> np.ndarray:
        import numpy as np

        graph, names = session
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = graph.run(None, {k: v for k, v in feed.items() if k in names})[0]
        # Mean over real tokens, then L2 normalise: sentence-transformers' Pooling + Normalize.
        summed = np.einsum("bld,bl->bd", hidden, mask.astype(hidden.dtype))
        vectors = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: np.ndarray = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit
