"""The suite keeps to its temporary directories (tests/conftest.py `hermetic`)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import MEMORY_ROOT, memory_temproot


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


def test_the_tests_processes_keep_their_temporary_files_in_the_sessions_directory():
    # What a killed process leaves there (a parser pool's `pymp-*` directory, a Ray
    # cluster's session) goes with the directory at the session's end, not left in the
    # system's temporary directory, which nothing cleans.
    scratch = Path(os.environ["TMPDIR"])
    assert scratch.is_dir() and scratch.name.startswith("dowse-tests-")
    assert scratch.parent == Path(tempfile.gettempdir())  # short: sockets live there
    code = "import tempfile; print(tempfile.gettempdir())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(scratch)


def test_a_memory_file_system_with_room_takes_the_temporary_trees(tmp_path: Path):
    root = tmp_path / "shm"
    root.mkdir()
    mounts = tmp_path / "mounts"
    mounts.write_text(f"tmpfs {root} tmpfs rw,nosuid,nodev 0 0\n/dev/vda / ext4 rw 0 0\n")
    assert memory_temproot(str(root), str(mounts), room=0) == str(root)
    free = os.statvfs(root).f_bavail * os.statvfs(root).f_frsize
    assert memory_temproot(str(root), str(mounts), room=free + (1 << 30)) is None  # no room
    assert memory_temproot(str(tmp_path), str(mounts), room=0) is None  # not a mount
    mounts.write_text(f"/dev/vdb {root} ext4 rw 0 0\n")
    assert memory_temproot(str(root), str(mounts), room=0) is None  # a disk
    assert memory_temproot(str(root), str(tmp_path / "no-mounts"), room=0) is None
    assert memory_temproot(str(tmp_path / "gone"), str(mounts), room=0) is None


def test_in_memory_the_trees_of_passed_tests_are_not_kept(
    tmp_path: Path, request: pytest.FixtureRequest
):
    # pytest's own variable for its temporary root, which tests/conftest.py sets when it
    # finds a memory file system with room (and leaves alone when the caller set it).
    policy = request.config._tmp_path_factory._retention_policy  # type: ignore[attr-defined]
    if os.environ.get("PYTEST_DEBUG_TEMPROOT") == MEMORY_ROOT:
        assert tmp_path.resolve().is_relative_to(Path(MEMORY_ROOT).resolve())
        assert policy == "failed"  # each passed test's directory goes at its teardown
    else:
        assert policy == "all"  # pytest's default: on a disk, deleting as tests run cost more
