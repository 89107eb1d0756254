"""The quick start as a user runs it: real processes, the real packaged model, a real
LanceDB on disk."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE, REPO, cache_env

pytestmark = pytest.mark.model


def _dowse(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "dowse", *args],
        cwd=REPO,
        env=env,
        text=True,
        capture_output=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_index_then_ask_with_the_real_model(tmp_path, onnx_cache):
    repo = tmp_path / "example"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns(".dowse"))
    env = cache_env(onnx_cache["dir"])
    stats = json.loads(_dowse("index", str(repo), "--json", "--quiet", env=env).stdout)
    assert stats["embedded"] > 0 and stats["vectors_pending"] == 0
    manifest = json.loads((repo / ".dowse" / "manifest.json").read_text())
    assert (manifest["model"], manifest["dim"], manifest["embedded"]) == (
        "all-MiniLM-L6-v2",
        384,
        True,
    )
    status = json.loads(_dowse("status", str(repo), "--json", env=env).stdout)
    # One summary per file and one text per definition, no chunk vectors.
    assert status["file_vectors"] == stats["files"] and status["definition_vectors"] > 0
    assert stats["embedded"] == stats["files"] + status["definition_vectors"]
    assert status["vectors"] == 0

    # Plain language, none of the code's identifiers: the semantic signal has to carry it,
    # from the file summaries by default, from the chunks too with --embed all.
    query = [
        "search",
        "apply price reductions to a shopping basket",
        "--path",
        str(repo),
        "--grain",
        "file",
        "--json",
    ]
    hits = json.loads(_dowse(*query, env=env).stdout)
    assert hits[0]["path"] == "shop/pricing.py"
    assert hits[0]["signals"].get("summary", 0) > 0 and "dense" not in hits[0]["signals"]
    wide = json.loads(
        _dowse("index", str(repo), "--embed", "all", "--json", "--quiet", env=env).stdout
    )
    assert wide["parsed"] == 0 and wide["embedded"] >= wide["chunks"] > 0  # chunks only
    hits = json.loads(_dowse(*query, env=env).stdout)
    assert hits[0]["path"] == "shop/pricing.py" and hits[0]["signals"].get("dense", 0) > 0

    answer = json.loads(
        _dowse(
            "ask",
            "how are failed card payments retried?",
            "--path",
            str(repo),
            "--json",
            "--budget",
            "1500",
            env=env,
        ).stdout
    )
    assert answer["files"][0]["path"] == "shop/payments.py"
    assert answer["tokens"] <= 1500
    # The module that defines a named function outranks the package that re-exports it.
    named = json.loads(
        _dowse("ask", "validate_token expiry", "--path", str(repo), "--json", env=env).stdout
    )
    assert [f["path"] for f in named["files"][:2]] == [
        "shop/auth/tokens.py",
        "shop/auth/__init__.py",
    ]
    assert named["files"][0]["relevance"] >= 0.8
    top = answer["context"][0]
    lines = (repo / top["path"]).read_text().split("\n")
    assert top["text"] == "\n".join(lines[top["start_line"] - 1 : top["end_line"]])

    # The reference backend queries the same index (same model name, vectors within 0.99).
    env_ref = {**env, "DOWSE_EMBEDDER": "minilm"}
    again = json.loads(_dowse("index", str(repo), "--json", "--quiet", env=env_ref).stdout)
    assert again["parsed"] == 0 and again["embedded"] == 0


def test_markdown_answer_has_citations(tmp_path, onnx_cache):
    repo = tmp_path / "example"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns(".dowse"))
    env = cache_env(onnx_cache["dir"])
    _dowse("index", str(repo), "--quiet", env=env)
    text = _dowse(
        "ask", "where are expired session tokens rejected?", "--path", str(repo), env=env
    ).stdout
    assert text.startswith("# where are expired session tokens rejected?")
    assert "`shop/auth/tokens.py:" in text
    assert Path(repo / ".dowse" / "manifest.json").exists()


def test_an_incremental_index_has_a_fresh_builds_vectors(tmp_path, onnx_cache):
    # The incremental run embeds only the added file's texts, the fresh build every text
    # in one call: the vectors must not depend on that, or the two rank differently.
    import lancedb

    repo = tmp_path / "example"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns(".dowse"))
    env = cache_env(onnx_cache["dir"])
    pricing = repo / "shop" / "pricing.py"
    aside = tmp_path / "pricing.py"
    incremental, fresh = tmp_path / "incremental", tmp_path / "fresh"
    pricing.rename(aside)
    _dowse("index", str(repo), "--index-dir", str(incremental), "--quiet", env=env)
    aside.rename(pricing)
    stats = json.loads(
        _dowse("index", str(repo), "--index-dir", str(incremental), "--json", env=env).stdout
    )
    assert stats["parsed"] == 1 and stats["embedded"] > 0
    _dowse("index", str(repo), "--index-dir", str(fresh), "--quiet", env=env)

    def vectors(index: Path) -> dict[str, list[float]]:
        table = lancedb.connect(str(index / "db")).open_table("file_vectors")
        return {r["id"]: r["vector"] for r in table.to_arrow().select(["id", "vector"]).to_pylist()}

    got, expected = vectors(incremental), vectors(fresh)
    assert any(key.startswith("shop/pricing.py") for key in expected)
    assert got == expected
