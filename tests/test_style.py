"""The code is linted and formatted by ruff and the library type-checked by mypy, with
pyproject.toml's settings: CI runs all three."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import REPO


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=REPO, capture_output=True, text=True
    )


def test_ruff_lint_passes():
    done = ruff("check", "--output-format", "concise", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_is_applied():
    done = ruff("format", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_checks_the_whole_library_strictly():
    # No module of the library is let off a strict check: an override would hide its
    # errors from test_mypy_passes_on_the_library.
    mypy = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy.get("strict") is True
    assert [o["module"] for o in mypy.get("overrides", [])] == []


@pytest.mark.slow
def test_mypy_passes_on_the_library(tmp_path: Path, request: pytest.FixtureRequest):
    # mypy's incremental cache is kept in pytest's cache directory (.pytest_cache) when
    # there is one: a run after the first checks again only what changed (seconds,
    # against a minute and a half of CPU from cold, most of it reading torch,
    # transformers and ray). mypy invalidates its cache by content and options: the
    # check is the same.
    cache = getattr(request.config, "cache", None)
    cache_dir = (cache.mkdir("mypy") if cache is not None else tmp_path) / "cache"
    # mypy sees the repository root as the package `dowse` through a folder of that name:
    # this run's own, so that runs side by side never move each other's link. The cache
    # stays warm through a new link: a cached module whose path changed is checked by its
    # hash, not analysed again.
    (tmp_path / "dowse").symlink_to(REPO, target_is_directory=True)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "-p",
            "dowse",
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",
            str(cache_dir),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
