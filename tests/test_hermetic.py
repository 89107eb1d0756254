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


def test_a_process_importing_onnxruntime_writes_into_the_temporary_cache(tmp_path: Path):
    # onnxruntime writes a telemetry database on import, into $XDG_CACHE_HOME (else
    # ~/.cache); a test's processes inherit the suite's environment.
    cache = Path(os.environ["XDG_CACHE_HOME"])
    subprocess.run([sys.executable, "-c", "import onnxruntime"], check=True, cwd=tmp_path)
    assert (cache / "Microsoft" / "DeveloperTools" / ".onnxruntime").is_dir()
