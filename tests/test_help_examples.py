"""The examples in every command's `--help` run where the README says: from the repository
root, after the quick start (`dowse index fixtures/example`), each exits 0 with an answer.

The examples are the indented lines under `Example:` in each help text (a line ending in
`\\` continues on the next); `> FILE` writes stdout to FILE. They run in-process, the way
tests/test_readme.py runs the README's commands: on a copy of fixtures/example laid out as
in the repository, with the fake embedder, so no model is loaded. Each command's examples
run in order on a fresh copy. What cannot run here is in SKIP, each with its reason, and
every entry there must still be in some help text.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_docs import commands, help_text

SKIP = {
    "dowse serve": "serves MCP on stdio until the client disconnects",
    "dowse serve . fixtures/example": "serves MCP on stdio until the client disconnects",
    'claude mcp add dowse -- dowse serve "$PWD"': "registers the server with Claude Code",
    'dowse ask "how are discounts applied?" --path fixtures/example --evaluator llm': (
        "needs an LLM endpoint (DOWSE_LLM_BASE_URL, DOWSE_LLM_MODEL)"
    ),
    "dowse eval swebench --dataset swebench_lite_dev.jsonl --repos ~/clones": (
        "needs the SWE-bench dataset and clones of its repositories"
    ),
    "dowse eval swebench --dataset swebench_lite_dev.jsonl --repos ~/clones "
    "--repo psf/requests --methods bm25,lexical,ask --no-embed --out pred.jsonl": (
        "needs the SWE-bench dataset and clones of its repositories"
    ),
    "dowse eval history . -n 20 --no-embed": (
        "needs the repository's git history, which the copy the test runs in does not have"
    ),
}
"""Help examples that cannot run in a test, with why."""


def examples(text: str) -> list[str]:
    """The example commands of one help text: the lines indented under `Example:`."""
    lines = text.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        heading = re.match(r"^(\s*)Examples?:\s*$", line)
        if not heading:
            continue
        indent = len(heading.group(1))
        pending = ""
        for body in lines[i + 1 :]:
            if not body.strip() or len(body) - len(body.lstrip()) <= indent:
                break
            pending += body.strip()
            if pending.endswith("\\"):
                pending = pending[:-1].rstrip() + " "
                continue
            out.append(pending)
            pending = ""
        assert not pending, f"an example ends in a continuation: {pending!r}"
    return out


def help_examples() -> dict[str, list[str]]:
    """Every command's examples, by the command's name (`dowse`, `dowse eval history`, ...)."""
    return {" ".join(("dowse", *path)): examples(help_text(path)) for path in commands()}


def test_every_command_has_examples_and_the_skip_list_is_current():
    found = help_examples()
    bare = [name for name, lines in found.items() if not lines]
    assert not bare, f"commands whose --help has no example: {bare}"
    every = [line for lines in found.values() for line in lines]
    assert len(every) >= 20
    stale = [c for c in SKIP if c not in every]
    assert not stale, f"SKIP names examples no help text has any more: {stale}"


def test_examples_are_parsed_with_continuations():
    text = "Usage: x\n\n  Example:\n      dowse a \\\n          --b c\n      dowse d\n\nOptions:\n"
    assert examples(text) == ["dowse a --b c", "dowse d"]


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_embedder, indexed_examples):
    """The repository's layout as far as the examples need it, after the quick start:
    fixtures/example, indexed (as `dowse index fixtures/example` leaves it: the session's
    build, copied, conftest.IndexedExamples)."""
    indexed_examples.copy(tmp_path / "fixtures" / "example")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_example(command: str, cwd: Path) -> None:
    """Run one example in-process; exit 0 and an answer on stdout (or in the `> FILE`)."""
    from dowse.cli import cli

    words = shlex.split(command)
    target = None
    if len(words) >= 2 and words[-2] == ">":
        target, words = cwd / words[-1], words[:-2]
    assert words[0] == "dowse", f"not a dowse command: {command}"
    result = CliRunner().invoke(cli, words[1:], prog_name="dowse", catch_exceptions=False)
    assert result.exit_code == 0, f"{command}\n{result.output}{result.stderr}"
    assert result.stdout.strip(), f"{command} printed nothing on stdout"
    if target is not None:
        target.write_text(result.stdout)


def runnable() -> dict[str, list[str]]:
    """The examples to run, by command; a command whose examples are all skipped is left out."""
    found = {name: [c for c in lines if c not in SKIP] for name, lines in help_examples().items()}
    return {name: lines for name, lines in found.items() if lines}


@pytest.mark.parametrize("name", list(runnable()))
def test_every_help_example_runs(name: str, checkout: Path):
    for command in runnable()[name]:
        run_example(command, checkout)
    if name == "dowse explore":
        assert (checkout / "imports.html").is_file()  # `dowse explore . --graph imports.html`
    if name == "dowse schema":
        assert (checkout / "dowse-schemas.json").read_text().strip()
