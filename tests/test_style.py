"""The code is linted and formatted by ruff and the library type-checked by mypy, with
pyproject.toml's settings: CI runs all three, mypy as a step of its own (`.ci/run`)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib

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
    # errors from CI's mypy step (test_ci_type_checks_the_library). The only overrides
    # name dependencies that ship no types, and only let their imports be Any: a missing
    # module of dowse's own stays an error (`ignore_missing_imports` for all would pass a
    # misspelt deferred `from dowse.x import y`).
    mypy = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy.get("strict") is True
    assert "ignore_missing_imports" not in mypy
    for override in mypy.get("overrides", []):
        modules = override["module"]
        assert not [m for m in modules if m.split(".")[0] == "dowse"], modules
        assert set(override) == {"module", "ignore_missing_imports"}, override


_CONSTANT = re.compile(r"_?[A-Z][A-Z0-9_]*")


def _patched_constants(source: str) -> list[tuple[int, str]]:
    """(line, name) of each module constant the source patches: `setattr(x, "NAME", ...)`
    (monkeypatch's, mock's `patch.object`) or `setattr("pkg.mod.NAME", ...)`, `patch(...)`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in ("setattr", "object", "patch"):
            continue
        strings = [a.value for a in node.args[:2] if isinstance(a, ast.Constant)]
        for text in strings:
            if isinstance(text, str) and _CONSTANT.fullmatch(text.rsplit(".", 1)[-1]):
                found.append((node.lineno, text))
    return found


def test_tests_pass_config_records_instead_of_patching_module_constants():
    # A knob a test needs to move is a config record the code takes (`FusionWeights`,
    # `Retention`, `dowse.git.ConfigReads`); patching a module's constant changes it for
    # every caller in the process, and hides that the code has no way to be told.
    assert _patched_constants('monkeypatch.setattr(git, "RACY_S", 0.0)') == [(1, "RACY_S")]
    assert _patched_constants('mock.patch("dowse.retrieval.ask.DEFAULT_BUDGET", 1)') != []
    assert _patched_constants('monkeypatch.setattr(walk.os, "geteuid", f)') == []
    patched = [
        f"{path.name}:{line}: {name}"
        for path in sorted((REPO / "tests").glob("*.py"))
        for line, name in _patched_constants(path.read_text(encoding="utf-8"))
    ]
    assert patched == []


def test_ci_type_checks_the_library():
    # mypy is a step of CI's own (.ci/run), not a test of the suite: from cold it reads
    # torch, transformers and ray, some 45 s of CPU, a fifth of the fast lane, in every
    # fresh checkout (docs/testing.md). Run from the repository root, so with
    # pyproject.toml's settings; under `set -e`, so its failure is CI's.
    steps = [
        line.strip()
        for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert "set -euo pipefail" in steps
    assert 'cd "$(dirname "$0")/.."' in steps
    typed = [i for i, step in enumerate(steps) if re.search(r"\bmypy -p dowse$", step)]
    assert typed and typed[0] < steps.index(".venv/bin/pytest"), steps
