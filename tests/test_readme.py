"""The README's shell examples run where it says: from the repository root, after the quick
start, each exits 0 with an answer on stdout.

The commands are the lines of the README's shell code blocks (indented or fenced without
another language, and beginning with a command); `a && b` chains run link by link, and
`.venv/bin/dowse` is `dowse`. They run in-process on a copy of fixtures/example laid out
as in the repository, with the fake embedder, so no model is loaded. What cannot run here
is in SKIP, each with its reason, and every entry there must still be in the README.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import EXAMPLE, REPO

README = REPO / "README.md"

SKIP = {
    "python3 -m venv .venv": "creates a virtual environment",
    ".venv/bin/pip install torch==2.13.0": "installs packages from the network",
    ".venv/bin/pip install -e .": "installs packages from the network",
    ".venv/bin/pip install -e '.[test]'": "installs packages from the network",
    ".venv/bin/pytest": "the test suite itself",
    "dowse index ~/src/myrepo": "names the reader's own repository",
    "dowse eval swebench --dataset swebench_lite_dev.jsonl --repos ~/clones --methods ask": (
        "needs the SWE-bench dataset and clones of its repositories"
    ),
    "dowse eval history ~/src/myrepo -n 20 --no-embed": "names the reader's own repository",
}
"""README commands that cannot run in a test, with why."""

_PROGRAMS = ("dowse ", "python3 ", ".venv/")


def _blocks(text: str) -> list[list[str]]:
    """The README's code blocks, as lists of lines: indented ones, and fenced ones without
    a language or marked as a shell."""
    blocks: list[list[str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if fence:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if fence.group(1) in ("", "sh", "bash", "shell", "console"):
                blocks.append(lines[i + 1 : j])
            i = j + 1
            continue
        if lines[i].startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            blocks.append([line[4:] for line in lines[i:j] if line.strip()])
            i = j
            continue
        i += 1
    return blocks


def readme_commands() -> list[str]:
    """Every command in the README's shell blocks, `&&` chains split, in order."""
    out: list[str] = []
    for block in _blocks(README.read_text()):
        if not block or not block[0].startswith(_PROGRAMS):
            continue  # a diagram, or another language
        for line in block:
            for part in line.split("&&"):
                out.append(re.sub(r"\s+#.*$", "", part).strip())
    return [c for c in out if c]


def test_the_readme_has_examples_and_the_skip_list_is_current():
    commands = readme_commands()
    assert sum(c.startswith(("dowse ", ".venv/bin/dowse ")) for c in commands) >= 10
    stale = [c for c in SKIP if c not in commands]
    assert not stale, f"SKIP names commands the README no longer has: {stale}"


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The repository's layout as far as the examples need it: fixtures/example."""
    shutil.copytree(
        EXAMPLE, tmp_path / "fixtures" / "example", ignore=shutil.ignore_patterns(".dowse")
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_readme_example_runs(checkout, fake_embedder):
    from dowse.cli import cli

    ran = []
    runner = CliRunner()
    for command in readme_commands():
        if command in SKIP:
            continue
        words = shlex.split(command)
        assert words[0] in ("dowse", ".venv/bin/dowse"), f"not a dowse command: {command}"
        result = runner.invoke(cli, words[1:], prog_name="dowse", catch_exceptions=False)
        assert result.exit_code == 0, f"{command}\n{result.output}{result.stderr}"
        assert result.stdout.strip(), f"{command} printed nothing on stdout"
        ran.append(command)
    assert len(ran) >= 10
    assert (checkout / "imports.html").is_file()  # `dowse explore . --graph imports.html`
