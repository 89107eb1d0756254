"""The code is linted and formatted by ruff (pyproject.toml's settings): CI checks both."""

from __future__ import annotations

import subprocess
import sys

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
