"""Secrets through the whole pipeline: a redacted file stays searchable while no byte of
its secret reaches the index directory, rows that held a secret leave the disk in the run
that drops them, and commit messages and explore's quotes pass the same check."""

from __future__ import annotations

import json
import os
import random
import string
from pathlib import Path

import pytest
from conftest import commit_files, git, make_tree

from dowse.explore.git import git_track
from dowse.explore.manifest import manifest_track
from dowse.explore.records import ManifestReport
from dowse.explore.tracks import Context, run_track
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.secrets import REDACTED
from dowse.indexer.store import Store
from dowse.indexer.walk import WalkConfig
from dowse.retrieval.hybrid import HybridSearcher

_RNG = random.Random(5)


def _r(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _on_disk(index_dir: Path, value: str) -> list[str]:
    """The files under `index_dir` holding `value`, in any case (the full-text columns and
    their indexes hold tokens, which may be lower-cased)."""
    needles = {value.encode(), value.lower().encode()}
    found = []
    for dirpath, _, names in os.walk(index_dir):
        for name in names:
            data = (Path(dirpath) / name).read_bytes()
            if any(n in data for n in needles):
                found.append(os.path.relpath(Path(dirpath) / name, index_dir))
    return found


def _settings(password: str) -> str:
    return (
        '"""Settings of the billing service."""\n\n'
        "DEBUG = False\n"
        f'DATABASE_PASSWORD = "{password}"\n\n\n'
        "def invoice_retention_days():\n"
        '    """How long invoices are kept."""\n'
        "    return 3650\n"
    )


def test_a_redacted_file_stays_searchable_and_its_secret_is_nowhere(tmp_path, fake_embedder):
    root = tmp_path / "repo"
    password = _r(18)
    make_tree(root, {"billing/settings.py": _settings(password), "billing/api.py": "x = 1\n"})
    build_index(root, embedder=fake_embedder)
    index_dir = root / ".dowse"

    hits = HybridSearcher.open(index_dir).search("invoice retention days")
    assert hits and hits[0].path == "billing/settings.py"
    store = Store.open(index_dir)
    assert "billing/settings.py" in {r["path"] for r in store.rows("files", ["path"])}
    texts = [r["text"] for r in store.rows("chunks", ["text"])]
    line = f'DATABASE_PASSWORD = "{REDACTED}"'
    assert any(line in t for t in texts)
    assert _on_disk(index_dir, password) == []


def test_rows_holding_a_secret_leave_the_disk_in_the_same_run(tmp_path, fake_embedder):
    root = tmp_path / "repo"
    password, token = _r(18), _r(48)
    cluster = f"users:\n- name: admin\n  user:\n    token: {token}\n"
    make_tree(
        root,
        {"billing/settings.py": _settings(password), "deploy/cluster.yaml": cluster},
    )
    index_dir = root / ".dowse"
    build_index(
        root, embedder=fake_embedder, config=IndexConfig(walk=WalkConfig(include_secrets=True))
    )
    assert _on_disk(index_dir, password)  # the control: included, it is stored

    # Without --include-secrets, the next run redacts the file, unchanged as it is.
    build_index(root, embedder=fake_embedder)
    assert _on_disk(index_dir, password) == []
    hits = HybridSearcher.open(index_dir).search("invoice retention days")
    assert hits and hits[0].path == "billing/settings.py"
    assert Store.read_manifest(index_dir).secret_scan.startswith("detect-secrets")

    # The token was no secret to any rule while the file was not a kubeconfig; it is
    # stored. Once the file says it is one, it is skipped, and the token gone at once.
    assert _on_disk(index_dir, token)
    (root / "deploy/cluster.yaml").write_text("apiVersion: v1\nkind: Config\n" + cluster)
    build_index(root, embedder=fake_embedder)
    assert _on_disk(index_dir, token) == []
    skipped = {r["path"]: r["reason"] for r in Store.open(index_dir).rows("skipped")}
    assert skipped["deploy/cluster.yaml"] == "secret: kubeconfig"
    assert HybridSearcher.open(index_dir).search("invoice retention days")


@pytest.mark.usefixtures("isolated_git")
def test_a_commit_message_secret_is_neither_stored_nor_shown(tmp_path, fake_embedder):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    token = "ghp_" + _r(36)
    commit_files(root, {"app.py": "def run():\n    pass\n", ".gitignore": ".dowse/\n"}, "Start")
    commit_files(
        root,
        {"app.py": "def run():\n    return 1\n"},
        f"Use the deploy token {token} for run\n\nAlso password: {_r(12)}",
        2,
    )
    build_index(root, embedder=fake_embedder)
    subjects = [r["subject"] for r in Store.open(root / ".dowse").rows("commits")]
    assert f"Use the deploy token {REDACTED} for run" in subjects
    assert _on_disk(root / ".dowse", token) == []

    ctx = Context(root=root)
    _, output = run_track(ctx, git_track(ctx))
    recent = output["git"].recent
    assert any(REDACTED in line for line in recent)
    assert not any(token in line for line in recent)


def test_explore_does_not_quote_a_key_from_package_json(tmp_path):
    key = "AKIA" + _r(16, string.ascii_uppercase + string.digits)
    secret = _r(40)
    package = {
        "name": "web",
        "scripts": {
            "deploy": f"AWS_ACCESS_KEY_ID={key} AWS_SECRET_ACCESS_KEY={secret} aws s3 sync .",
            "test": "jest",
        },
        "dependencies": {"private-lib": f"git+https://ci:{_r(20)}@git.example.com/lib.git"},
    }
    root = make_tree(tmp_path / "web", {"package.json": json.dumps(package, indent=2)})
    ctx = Context(root=root)
    result, output = run_track(ctx, manifest_track(ctx))
    report = output["dependencies"]
    assert isinstance(report, ManifestReport)
    shown = result.model_dump_json() + report.model_dump_json()
    assert key not in shown and secret not in shown
    assert package["dependencies"]["private-lib"].split("@")[0] not in shown
    assert report.scripts["deploy"] == (
        f"AWS_ACCESS_KEY_ID={REDACTED} AWS_SECRET_ACCESS_KEY={REDACTED} aws s3 sync ."
    )
