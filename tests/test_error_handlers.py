"""Each handler that turns a failure into dowse's own error catches what it must, and
nothing else: LanceDB's storage failures leave the store as IndexCorrupt or
IndexWriteError, the index run's OS errors as IndexWriteError, the server's warm-up and
the embedder's preparation pass over dowse's own errors, and a bug (any other exception)
keeps its type and traceback."""

from __future__ import annotations

import errno
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from dowse.errors import EmbedderError, IndexCorrupt, IndexNotFound, IndexWriteError
from dowse.explore import distributions
from dowse.indexer import build as build_module
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.onnx_embed import OnnxEmbedder, OnnxModels
from dowse.indexer.store import Store
from dowse.retrieval.hybrid import HybridSearcher
from dowse.server.workspace import ServedRoot, Workspace

FULL_DISK = RuntimeError(
    "lance error: LanceError(IO): No space left on device (os error 28), "
    "/root/.cargo/registry/src/x/lance-io/src/object_store.rs:1006:34"
)
CUT_SHORT = OSError(
    "LanceError(IO): Generic LocalFileSystem error: failed to fill whole buffer, "
    "/rustc/abc/library/core/src/ops/fn.rs:250:5"
)
GONE = ValueError("Table 'chunks' was not found")


class _Failing:
    """A LanceDB table whose every query fails with `exc`."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def _raise(self, *args: Any, **kwargs: Any) -> Any:
        raise self.exc

    search = count_rows = to_arrow = _raise  # a `lancedb` table (`Store.verify` reads those)
    scan = full_text = nearest = count = _raise  # a reader's table (indexer.lance_read)


@pytest.fixture
def store(tmp_path: Path, indexed_examples) -> Store:
    """The example's lexical index (the session's build, copied: conftest)."""
    root = indexed_examples.copy(tmp_path / "example", IndexConfig(embed=False))
    return Store.open(root / ".dowse")


@pytest.mark.parametrize(
    ("exc", "error", "message"),
    [
        (FULL_DISK, IndexWriteError, "^cannot write the index: No space left on device$"),
        (CUT_SHORT, IndexCorrupt, r"^the index is damaged \(Generic LocalFileSystem error: "),
        (GONE, IndexCorrupt, r"^the index is damaged \(Table 'chunks' was not found\)"),
    ],
)
def test_a_storage_failure_inside_a_query_leaves_the_store_as_a_dowse_error(
    store, exc, error, message
):
    store._read_tables["chunks"] = _Failing(exc)
    for query in (
        lambda: store.rows("chunks", ["id"]),
        lambda: store.scan("chunks", ["id"]),
        lambda: store.full_text("chunks", "token", ["id"], 3),
        lambda: store.count("chunks"),
    ):
        with pytest.raises(error, match=message):
            query()


@pytest.mark.parametrize(
    "bug", [RuntimeError("something else"), KeyError("lance error"), TypeError("lance error")]
)
def test_a_bug_inside_a_query_keeps_its_type(store, bug):
    store._read_tables["chunks"] = _Failing(bug)
    with pytest.raises(type(bug)) as caught:
        store.rows("chunks", ["id"])
    assert caught.value is bug


def test_a_table_lancedb_cannot_open_is_corrupt_and_a_bug_is_not(store, monkeypatch):
    # The reader's own tables (LanceDB's native core) and `lancedb`'s (`verify`) alike.
    store._read_tables.pop("symbols")
    for db, open_ in ((store._reader, store._read_table), (store.db, store.table)):
        monkeypatch.setattr(db, "open_table", _Failing(CUT_SHORT)._raise)
        with pytest.raises(IndexCorrupt, match="the index table 'symbols' .* cannot be read"):
            open_("symbols")
        monkeypatch.setattr(db, "open_table", _Failing(TypeError("a bug"))._raise)
        with pytest.raises(TypeError, match="a bug"):
            open_("symbols")


def test_a_damaged_table_found_by_verify_names_it(store, monkeypatch):
    store._tables["files"] = _Failing(CUT_SHORT)
    with pytest.raises(IndexCorrupt, match="the index table 'files' .* is damaged"):
        store.verify()
    store._tables["files"] = _Failing(RuntimeError("a bug"))
    with pytest.raises(RuntimeError, match="^a bug$"):
        store.verify()


@pytest.mark.parametrize(
    ("exc", "message"),
    [
        (FULL_DISK, "cannot write the index at {}: No space left on device"),
        (
            PermissionError(errno.EACCES, "Permission denied", "x"),
            "cannot write the index at {}: [Errno 13] Permission denied: 'x'",
        ),
    ],
)
def test_an_index_run_the_disk_refuses_is_one_line(
    example_repo, fake_embedder, monkeypatch, exc, message
):
    build_index(example_repo, embedder=fake_embedder, config=IndexConfig(embed=False))
    (example_repo / "new.py").write_text("def added():\n    return 1\n")

    def refused(self: Any) -> Any:
        raise exc

    monkeypatch.setattr(build_module._Run, "run", refused)
    index_dir = example_repo / ".dowse"
    with pytest.raises(IndexWriteError) as caught:
        build_index(example_repo, embedder=fake_embedder, config=IndexConfig(embed=False))
    assert str(caught.value) == (
        message.format(index_dir) + "; the last complete index is unchanged"
    )
    monkeypatch.setattr(build_module._Run, "run", _Failing(KeyError("a bug"))._raise)
    with pytest.raises(KeyError):
        build_index(example_repo, embedder=fake_embedder, config=IndexConfig(embed=False))


def test_the_server_warm_up_passes_over_dowse_errors_only(
    example_repo, fake_embedder, monkeypatch, tmp_path
):
    unindexed = tmp_path / "unindexed"
    unindexed.mkdir()
    build_index(example_repo, embedder=fake_embedder, config=IndexConfig(embed=False))
    workspace = Workspace([ServedRoot(unindexed), ServedRoot(example_repo)])
    with pytest.raises(IndexNotFound):
        workspace._searcher(workspace.roots[0])
    workspace.warm()  # no index for one root: the first call says so
    assert workspace.roots[1].searcher is not None  # the other one is warm
    monkeypatch.setattr(HybridSearcher, "warm", _Failing(IndexCorrupt("damaged"))._raise)
    workspace.warm()
    monkeypatch.setattr(HybridSearcher, "warm", _Failing(AttributeError("a bug"))._raise)
    with pytest.raises(AttributeError, match="a bug"):
        workspace.warm()


def _model_dir(tmp_path: Path) -> Path:
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"")
    return model


def test_a_graph_onnxruntime_cannot_load_is_an_embedder_error(tmp_path):
    garbage = tmp_path / "graph.onnx"
    garbage.write_bytes(b"not an onnx graph")
    models = OnnxModels(int8=garbage, fp32=tmp_path / "missing.onnx", query=None)
    embedder = OnnxEmbedder(cache_dir=tmp_path, model_dir=_model_dir(tmp_path), models=models)
    for kind in ("int8", "fp32"):  # garbled (InvalidProtobuf), missing (NoSuchFile)
        with pytest.raises(EmbedderError, match="^cannot load .*; delete it to export it again$"):
            embedder._session(kind)


def test_a_tokenizer_that_cannot_be_read_is_an_embedder_error(tmp_path):
    model = _model_dir(tmp_path)
    embedder = OnnxEmbedder(cache_dir=tmp_path, model_dir=model)
    with pytest.raises(EmbedderError, match="^cannot load the tokenizer from "):
        embedder._load_tokenizer()  # missing
    (model / "tokenizer.json").write_text("{garbled")
    with pytest.raises(EmbedderError, match="^cannot load the tokenizer from "):
        embedder._load_tokenizer()


def test_preparing_queries_passes_over_an_unusable_model(tmp_path, monkeypatch):
    model = _model_dir(tmp_path)
    embedder = OnnxEmbedder(cache_dir=tmp_path, model_dir=model)
    embedder._warm(["a question"])  # no exported graphs: nothing to prepare
    monkeypatch.setattr(embedder, "_exported", lambda: OnnxModels(int8=model, fp32=model))
    embedder._warm(["a question"])  # no tokenizer.json: EmbedderError, left to the embed
    monkeypatch.setattr(embedder, "_exported", _Failing(OSError(errno.EIO, "I/O error"))._raise)
    embedder._warm(["a question"])
    monkeypatch.setattr(embedder, "_exported", _Failing(NameError("a bug"))._raise)
    with pytest.raises(NameError):
        embedder._warm(["a question"])


@pytest.fixture
def fresh_distributions():
    distributions._installed.cache_clear()
    yield
    distributions._installed.cache_clear()


def test_broken_metadata_in_the_environment_leaves_the_table(
    tmp_path, monkeypatch, fresh_distributions
):
    assert "pydantic" in distributions.distributions("pydantic")
    info = tmp_path / "broken-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n")
    (info / "top_level.txt").write_bytes(b"\xff\xfe not utf-8\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    distributions._installed.cache_clear()
    with pytest.raises(UnicodeDecodeError):
        metadata.packages_distributions()
    assert distributions.distributions("yaml") == {"yaml", "pyyaml"}
    distributions._installed.cache_clear()
    monkeypatch.setattr(metadata, "packages_distributions", _Failing(TypeError("a bug"))._raise)
    with pytest.raises(TypeError):
        distributions.distributions("yaml")
