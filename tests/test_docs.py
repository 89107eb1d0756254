"""Every command has help with an example, and docs/cli.md is that help, current.

docs/cli.md is generated from the commands' `--help`; when a help text changes, refresh it:

    python tests/test_docs.py
"""

from __future__ import annotations

import importlib
import re
import sys

import click
from click.testing import CliRunner
from conftest import REPO, repository_sources

CLI_DOC = REPO / "docs" / "cli.md"
README = REPO / "README.md"
CHANGELOG = REPO / "CHANGELOG.md"


def commands() -> list[tuple[str, ...]]:
    """Every command path of the `dowse` group, depth first, the group itself first."""
    from dowse.cli import cli

    found: list[tuple[str, ...]] = []

    def walk(cmd: click.Command, path: tuple[str, ...]) -> None:
        found.append(path)
        if isinstance(cmd, click.Group):
            for name in sorted(cmd.commands):
                walk(cmd.commands[name], (*path, name))

    walk(cli, ())
    return found


def help_text(path: tuple[str, ...]) -> str:
    from dowse.cli import cli

    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="dowse", terminal_width=100)
    assert result.exit_code == 0, result.output
    return result.output


def reference() -> str:
    parts = [
        "# Command reference\n",
        "Generated from each command's `--help` by `python tests/test_docs.py`; "
        "tests/test_docs.py fails when it is out of date.\n",
        "Exit codes: 0 success; 1 an error, printed as one line `Error: ...` on stderr "
        "(a missing index, a bad path or config file, an empty question); 2 a usage error, "
        "printed by click as the usage line, a `Try 'dowse CMD --help' for help.` hint and "
        "one `Error: ...` line (an unknown option or command, a missing argument, a value "
        "out of range); 130 interrupted.\n",
        "Output: `--json` on `index`, `status`, `search`, `symbol`, `ask` and `explore` "
        "prints the pydantic records (`IndexStats`, `StatusReport`, `Hit`, `SymbolMatch`, "
        "`AskReport`, `ExploreResult`); `dowse schema NAME` prints each one's JSON Schema, "
        "generated from the same models. `ask` and `explore` without `--json` print markdown "
        "meant to be pasted into an agent's context; `ask --format agent` prints the MCP "
        "`ask` answer.\n",
        'Shell completion (click\'s): add `eval "$(_DOWSE_COMPLETE=bash_source dowse)"` to '
        '`~/.bashrc`, `eval "$(_DOWSE_COMPLETE=zsh_source dowse)"` to `~/.zshrc`, or '
        "`_DOWSE_COMPLETE=fish_source dowse | source` to "
        "`~/.config/fish/completions/dowse.fish`.\n",
    ]
    for path in commands():
        title = " ".join(("dowse", *path))
        parts.append(f"## `{title}`\n\n```\n{help_text(path).rstrip()}\n```\n")
    return "\n".join(parts)


def test_every_command_has_help_with_an_example():
    for path in commands():
        text = help_text(path)
        assert "Example" in text, f"dowse {' '.join(path)} --help has no example"


def test_cli_reference_is_current():
    assert CLI_DOC.read_text() == reference(), (
        "docs/cli.md is out of date: run `python tests/test_docs.py`"
    )


def test_the_readme_stays_short():
    # The README is for users (what, install, the commands, configuration, MCP, results);
    # ranking internals and tuning history belong in docs/.
    size = len(README.read_bytes())
    assert size <= 8 * 1024, f"README.md is {size} bytes, over 8 KB: move internals to docs/"


def test_the_changelog_is_in_keep_a_changelog_form():
    lines = CHANGELOG.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# Changelog"
    version: str | None = None
    sections: list[str] = []
    for n, line in enumerate(lines[1:], 2):
        where = f"CHANGELOG.md:{n}"
        if line.startswith("## "):
            version, sections = line[3:], []
            assert version == "Unreleased" or re.match(r"\d+\.\d+\.\d+\b", version), where
        elif line.startswith("### "):
            assert version is not None, f"{where}: a section outside a version"
            assert line[4:] in {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
            assert line[4:] not in sections, f"{where}: {line[4:]} twice in {version}"
            sections.append(line[4:])
        elif line.startswith("- "):
            assert sections, f"{where}: an entry outside an Added / Changed / Fixed section"
        elif line.strip():
            # Only the preamble is prose: an entry is one line starting "- ".
            assert version is None, f"{where}: an entry is one line starting '- '"


_PACKAGES = ("indexer", "retrieval", "explore", "server", "evaluation")
_REFERENCE = re.compile(
    r"`((?:dowse\.)?(?:" + "|".join(_PACKAGES) + r")(?:\.\w+)+|dowse\.\w+(?:\.\w+)*)[`(]"
)
"""A backquoted dotted name of dowse's: `indexer.build.changed_since`, `dowse.tokens`."""


def _resolves(name: str) -> bool:
    parts = ("dowse." + name.removeprefix("dowse.")).split(".")
    for i in range(len(parts), 1, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attribute in parts[i:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def test_module_references_in_docstrings_and_docs_resolve():
    # Modules moved when the packages got their folders (`retrieval.history` became
    # `evaluation.history`): a docstring or doc naming the old place misleads its reader.
    library = [
        p
        for p in repository_sources()
        if not {"tests", "benchmarks", "fixtures", "build"} & set(p.relative_to(REPO).parts)
    ]
    stale = [
        f"{path.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(1)}"
        for path in [*library, *sorted((REPO / "docs").glob("*.md")), README]
        for text in [path.read_text(encoding="utf-8")]
        for m in _REFERENCE.finditer(text)
        if not _resolves(m.group(1))
    ]
    assert library
    assert stale == []


if __name__ == "__main__":
    CLI_DOC.write_text(reference())
    sys.stdout.write(f"wrote {CLI_DOC}\n")
