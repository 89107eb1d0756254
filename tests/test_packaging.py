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
    # A fresh virtual environment (no pip, so its site-packages starts empty); the
    # running environment's pip installs the wheel into it.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    (site,) = venv.glob("lib/python3*/site-packages")
    assert sorted(p.name for p in site.iterdir()) == []
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q"]
        + [str(wheel)],
        check=True,
        capture_output=True,
    )
    assert sorted(p.name for p in site.iterdir()) == [
        "dowse",
        wheel.name.split("-py3")[0] + ".dist-info",
    ]
    # Its dependencies come from the running environment, after the venv's own
    # site-packages (a .pth line appends a path; the running environment's own .pth
    # files, an editable dowse among them, are not read from there).
    deps = [p for p in sys.path if p.endswith("site-packages")]
    (site / "zz_dependencies.pth").write_text("\n".join(deps) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # Run from outside the repository: the installed copy of dowse is the one imported.
    code = "import dowse, dowse.cli; print(dowse.__file__)"
    where = subprocess.run(
        [str(python), "-c", code],
        env=env,
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(site)
    for command in ([str(python), "-m", "dowse"], [str(venv / "bin" / "dowse")]):
        usage = subprocess.run(
            [*command, "--help"], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        assert usage.returncode == 0, usage.stderr
        assert usage.stdout.startswith("Usage: dowse [OPTIONS] COMMAND [ARGS]...")
    assert "from dowse.cli import main" in (venv / "bin" / "dowse").read_text()
