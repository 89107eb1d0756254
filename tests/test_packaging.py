"""An install adds one import namespace, `dowse`, to site-packages, and runs from there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy, so that the build leaves nothing in the checkout (and nothing a
    # stale build/ directory of the checkout holds gets in); the environment's own
    # setuptools builds it: no download, the same backend pip uses.
    source = out / "source"
    shutil.copytree(
        REPO,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.egg-info", ".dowse", "__pycache__", ".*_cache"
        ),
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(source),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
        ],
        check=True,
        capture_output=True,
        cwd=out,
    )
    (built,) = out.glob("dowse-*.whl")
    return built


def test_wheel_holds_only_the_dowse_namespace(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/", 1)[0] for n in names} == {
        "dowse",
        wheel.name.split("-py3")[0] + ".dist-info",
    }
    for module in [
        "dowse/__main__.py",
        "dowse/cli.py",
        "dowse/errors.py",
        "dowse/indexer/walk.py",
        "dowse/indexer/queries/python-tags.scm",
        "dowse/retrieval/ask.py",
        "dowse/explore/run.py",
        "dowse/server/app.py",
        "dowse/evaluation/swebench.py",
        "dowse/py.typed",
    ]:
        assert module in names
    # Nothing of the repository that is not the library: tests, fixtures, benchmarks.
    assert not [
        n for n in names if n.startswith(("dowse/tests/", "dowse/fixtures/", "dowse/benchmarks/"))
    ]


def test_installed_wheel_runs(wheel: Path, tmp_path: Path):
    target = tmp_path / "site-packages"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    assert sorted(p.name for p in target.iterdir() if p.name != "bin") == [
        "dowse",
        wheel.name.split("-py3")[0] + ".dist-info",
    ]
    # Run from outside the repository with only the installed copy of dowse importable.
    env = {**os.environ, "PYTHONPATH": str(target)}
    code = "import dowse, dowse.cli; print(dowse.__file__)"
    where = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(target)
    usage = subprocess.run(
        [sys.executable, "-m", "dowse", "--help"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert usage.returncode == 0, usage.stderr
    assert usage.stdout.startswith("Usage: dowse [OPTIONS] COMMAND [ARGS]...")
    entry = (target / "bin" / "dowse").read_text()
    assert "from dowse.cli import main" in entry
