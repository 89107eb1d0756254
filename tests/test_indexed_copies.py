"""The suite's indexed copies of the example (conftest.IndexedExamples) are what a build
in their place leaves: the tests that start from one read the index they would have
built themselves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FakeEmbedder, IndexedExamples

from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.locate import locate_index
from dowse.indexer.status import index_status
from dowse.indexer.store import MANIFEST, SNAPSHOT_TABLES, Store
from dowse.indexer.walked import WALKED

PLACE = {"root", "signature", "created", "updated"}
"""The manifest's fields that say where and when the index was built."""


def _tables(index_dir: Path) -> dict[str, list[str]]:
    store = Store.open(index_dir)
    return {
        name: sorted(json.dumps(row, sort_keys=True, default=list) for row in store.rows(name))
        for name in SNAPSHOT_TABLES
    }


def _manifest(index_dir: Path) -> dict[str, Any]:
    """The manifest but for where and when it was built (the times of its versions too)."""
    manifest = json.loads((index_dir / MANIFEST).read_text(encoding="utf-8"))
    for name, versions in manifest.get("superseded", {}).items():
        manifest["superseded"][name] = [version for version, _ in versions]
    manifest["retired"] = sorted(manifest.get("retired", {}))
    return {k: v for k, v in manifest.items() if k not in PLACE}


def _walked(root: Path) -> list[tuple[str, str]]:
    """What the record of the last walk saw inside `root` (the root's own stat aside: its
    listing changed when the index directory was made), by path under the root."""
    seen = json.loads((root / ".dowse" / WALKED).read_text(encoding="utf-8"))["seen"]
    inside = str(root.resolve()) + "/"
    return sorted(
        (p.removeprefix(inside), json.dumps(rest)) for p, *rest in seen if p.startswith(inside)
    )


@pytest.mark.parametrize("config", [IndexConfig(), IndexConfig(embed=False)], ids=["files", "none"])
def test_a_copy_is_the_index_a_build_in_its_place_makes(
    tmp_path: Path, indexed_examples: IndexedExamples, example_repo: Path, config: IndexConfig
):
    copy = indexed_examples.copy(tmp_path / "copy" / "example", config)
    build_index(example_repo, config=config, embedder=FakeEmbedder())
    built, copied = example_repo / ".dowse", copy / ".dowse"
    assert _tables(copied) == _tables(built)
    assert _manifest(copied) == _manifest(built)
    assert _walked(copy) == _walked(example_repo) != []
    # Its own, where it lies: found and vouched for, and up to date with the files.
    location = locate_index(copy)
    assert location.root == copy.resolve() and location.passed_over == []
    assert Store.read_manifest(copied).root == str(copy.resolve())
    assert index_status(copied).changed == {"modified": 0, "added": 0, "deleted": 0}
    assert build_index(copy, config=config, embedder=FakeEmbedder()).parsed == 0
