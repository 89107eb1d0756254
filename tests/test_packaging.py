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

# The per-user places, relative to HOME, that a pip run (and the rustup it calls) would
# write into, and where `pip_env` puts them instead.
_PLACES = {
    "HOME": ".",
    "XDG_CACHE_HOME": ".cache",
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
    "RUSTUP_HOME": ".rustup",
    "CARGO_HOME": ".cargo",
}


@pytest.fixture(scope="module")
def pip_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of the tests' pip runs, whose every per-user place is a temporary
    directory: pip's user agent runs `rustc --version`, and rustup writes
    `~/.rustup/settings.toml` when there is none; pip reads its config from the user's
    and writes its cache and version check there. No config file is read (the runs
    install a local wheel, no index) and pip does not ask PyPI for its latest version."""
    home = tmp_path_factory.mktemp("pip-home")
    return {
        **os.environ,
        **{name: str(home / place) for name, place in _PLACES.items()},
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory, pip_env: dict[str, str]) -> Path:
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
    _pip(
        ["wheel", str(source), "--no-deps", "--no-build-isolation", "-q", "-w", str(out)],
        pip_env,
        cwd=out,
    )
    (built,) = out.glob("dowse-*.whl")
    return built


def _home_entries() -> set[str]:
    """What the user's own per-user places hold at their top (`_PLACES` under HOME)."""
    home = Path.home()
    return {
        f"{place}/{name}"
        for place in _PLACES.values()
        if (home / place).is_dir()
        for name in os.listdir(home / place)
    }


def _pip(args: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
    """Run pip with `args` in `env`, and check that it added nothing to the user's home
    directory or its caches (a place another process fills at that moment would fail
    this too; none did in the suite's runs)."""
    before = _home_entries()
    subprocess.run(
        [sys.executable, "-m", "pip", *args], env=env, cwd=cwd, check=True, capture_output=True
    )
    assert _home_entries() <= before


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


def test_installed_wheel_runs(wheel: Path, tmp_path: Path, pip_env: dict[str, str]):
    # A fresh virtual environment (no pip, so its site-packages starts empty); the
    # running environment's pip installs the wheel into it.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    (site,) = venv.glob("lib/python3*/site-packages")
    assert sorted(p.name for p in site.iterdir()) == []
    _pip(["--python", str(python), "install", "--no-deps", "-q", str(wheel)], pip_env)
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
