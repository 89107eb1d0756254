"""The Ray engine on a local Ray cluster of two workers, on a node apart from the
driver's: the index it writes is the local engine's, row for row, and stays so through
an incremental run.

Slow (a Ray cluster takes seconds to start); skipped only when Ray is not installed
(`pip install 'dowse[ray]'`; CI installs it). Ray is imported by the test's fixture, not
by the module: every pytest-xdist worker collects the module, one runs the test, and
importing Ray is some 0.7 s of CPU."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import written_before

from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.engine import load_engine
from dowse.indexer.store import Store

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("ray") is None,
        reason="Ray is not installed: pip install 'dowse[ray]'",
    ),
]

TABLES = {
    "files": "path",
    "symbols": "id",
    "chunks": "id",
    "refs": None,
    "imports": None,
    "skipped": "path",
    "vectors": "id",
    "file_vectors": "id",
}
"""Each table compared, with its row key (None: the whole row is the key)."""


@pytest.fixture(scope="module")
def cluster():
    """A head that runs nothing and one worker node of two CPUs: every task and actor runs
    on the worker node, up to two at a time, and what they return crosses from its
    object store to the driver's node. The services the test does not use are not
    started: the autoscaler's monitor and the head's log monitor (`log_to_driver` is
    off), each a Python process, and the dashboard's process loads none of the
    dashboard's modules. (Two one-CPU worker nodes ran the same tasks on as many
    workers and started a raylet and its two agents more: docs/testing.md, "The Ray
    test's cluster, and the lane's whole CPU".)"""
    import ray
    from ray import cluster_utils

    # The nodes' workers import what this process does: the same `dowse`, and the
    # fake embedder from conftest (tests/ is on this process's path, not a package).
    mp = pytest.MonkeyPatch()
    mp.setenv("PYTHONPATH", os.pathsep.join(filter(None, [*dowse_path(), TESTS])))
    # No usage reports: the cluster would start an actor to collect them and try to send
    # them over the network, neither of which the test is about.
    mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
    head = {"no_monitor": True, "include_log_monitor": False, "include_dashboard": False}
    c = cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 0, **head})
    c.add_node(num_cpus=2)  # (the cluster starts a log monitor on its head only)
    c.wait_for_nodes()
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()
    mp.undo()


TESTS = str(Path(__file__).parent)


def dowse_path() -> list[str]:
    """The directory this `dowse` is imported from (a checkout may come before the
    installed one)."""
    import dowse

    return [str(Path(dowse.__file__).parent.parent)]


def _fake() -> Any:
    from conftest import FakeEmbedder

    return FakeEmbedder()


def _tables(index_dir: Path) -> dict[str, list[Any]]:
    store = Store.open(index_dir)
    out: dict[str, list[Any]] = {}
    for name, key in TABLES.items():
        # mtime_ns aside: the two copies were edited a moment apart.
        rows = [
            {
                k: (v.tolist() if hasattr(v, "tolist") else v)
                for k, v in r.items()
                if k != "mtime_ns"
            }
            for r in store.rows(name)
        ]
        out[name] = sorted(rows, key=lambda r: str(r[key]) if key else repr(sorted(r.items())))
    return out


def _config() -> IndexConfig:
    # Chunk vectors too: every vector table gets rows. One local parser process, so
    # that the Ray run's parsing cannot be the local engine's in disguise.
    return IndexConfig(embed=True, embed_chunks=True, history=False, workers=1)


def _edit(root: Path) -> None:
    (root / "shop" / "pricing.py").write_text(
        (root / "shop" / "pricing.py").read_text() + "\n\ndef rounding(x):\n    return x\n"
    )
    (root / "shop" / "payments.py").unlink()
    (root / "shop" / "refunds.py").write_text('def refund(order):\n    """Refund it."""\n')
    # Not racy: the two copies are indexed seconds apart (the Ray run waits on its
    # cluster), and a file read within `RACY_NS` of its write has its row marked.
    written_before(root / "shop" / "pricing.py", root / "shop" / "refunds.py")


def test_the_ray_index_is_the_local_index(cluster, example_repo, tmp_path):
    on_ray = tmp_path / "on-ray"
    shutil.copytree(example_repo, on_ray)
    local_embedder, ray_embedder = _fake(), _fake()
    engine = load_engine("ray", embedder=_fake, address=cluster.address, embedders=2)
    local = build_index(example_repo, config=_config(), embedder=local_embedder)
    with engine:
        stats = build_index(on_ray, config=_config(), embedder=ray_embedder, engine=engine)
    assert engine.recovered == []  # every file came back from Ray
    # The vectors were made by the workers' embedders, none by this process's.
    assert local_embedder.calls and not ray_embedder.calls
    assert (stats.files, stats.symbols, stats.chunks, stats.embedded) == (
        local.files,
        local.symbols,
        local.chunks,
        local.embedded,
    )
    assert stats.embedded > 0 and stats.vectors_pending == 0
    a, b = _tables(example_repo / ".dowse"), _tables(on_ray / ".dowse")
    for name in TABLES:
        assert a[name] == b[name], name
    assert a["vectors"] and a["file_vectors"] and a["symbols"]

    # Incremental: an edit, a deletion, a new file; only they are read and embedded.
    _edit(example_repo)
    _edit(on_ray)
    local = build_index(example_repo, config=_config(), embedder=local_embedder)
    with engine:
        again = build_index(on_ray, config=_config(), embedder=ray_embedder, engine=engine)
    assert (again.parsed, again.deleted, again.unchanged) == (2, 1, local.unchanged)
    assert (again.parsed, again.embedded) == (local.parsed, local.embedded)
    assert not ray_embedder.calls
    a, b = _tables(example_repo / ".dowse"), _tables(on_ray / ".dowse")
    for name in TABLES:
        assert a[name] == b[name], name
    assert any(r["path"] == "shop/refunds.py" for r in b["symbols"])
    assert not any(r["path"] == "shop/payments.py" for r in b["chunks"])
    # Ray the test started is Ray the engine used: it is left running.
    import ray

    assert ray.is_initialized()
