"""The suite keeps to its temporary directories (tests/conftest.py `hermetic`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def test_caches_point_at_the_runs_temporary_directory(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.getbasetemp()
    for name in ("DOWSE_CACHE_DIR", "XDG_CACHE_HOME", "DOWSE_CONFIG"):
        assert Path(os.environ[name]).is_relative_to(base), name


def test_a_process_importing_onnxruntime_leaves_the_home_cache_alone(tmp_path: Path):
    # onnxruntime may write a telemetry database on import, into $XDG_CACHE_HOME (else
    # ~/.cache); a test's processes inherit the suite's environment, so whatever it
    # writes lands in the run's temporary directory, never under the user's home. (It
    # does not write in every environment: under CI it wrote nothing at all.)
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    subprocess.run([sys.executable, "-c", "import onnxruntime"], check=True, cwd=tmp_path, env=env)
    assert not (home / ".cache").exists()
