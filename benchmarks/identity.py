"""Record what dowse prints, to show that a refactoring changes nothing.

Writes one file per output into OUT: every command's `--help` text, and `search` (chunk
and file grain, JSON), `ask --json`, `ask --format agent`, `symbol`, `explore --json` and
`eval history` on a copy of fixtures/example made into a small git repository (fixed
authors and dates, so its commit ids are the same on every run), indexed three times:
lexical only (`--no-embed`), with file vectors (the default) and with chunk vectors too
(`--embed all`, the real packaged model). Timings are blanked; nothing else is.

Run it on the old and the new code and diff the two directories:

    PYTHONPATH=<old> python benchmarks/identity.py /tmp/identity-old
    PYTHONPATH=<new> python benchmarks/identity.py /tmp/identity-new
    diff -r /tmp/identity-old /tmp/identity-new && echo identical

The copies are built under /tmp/dowse-identity (always the same place: paths appear in
the output).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

from dowse.cli import cli

WORK = Path("/tmp/dowse-identity")
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "example"
QUESTIONS = [
    "where are expired session tokens rejected?",
    "how are discounts applied to a cart?",
    "charge a card with retries and exponential backoff",
    "validate_token signature",
    "where are orders persisted in SQLite?",
    "which HTTP routes map to handlers?",
    "format a price in the browser client",
    "shop/payments.py charge",
    'Traceback (most recent call last):\n  File "shop/pricing.py", line 10, in apply\n'
    "KeyError: 'code'",
    "tests for token expiry",
    "how does authentication work?",
]
SYMBOLS = ["validate_token", "apply", "charge", "Order", "format", "zzz_nothing"]
INDEXES = {"none": ["--no-embed"], "files": ["--embed", "files"], "all": ["--embed", "all"]}
COMMITS = [
    ("shop/auth", "Reject expired session tokens"),
    ("shop/pricing.py", "Apply discount rules per cart line"),
    ("shop/payments.py", "Retry card charges with exponential backoff"),
    ("shop/storage", "Persist orders in SQLite"),
    ("shop/api", "Route HTTP requests to handlers"),
    (".", "Add the browser client, tests and docs"),
]
EDITS = [
    ("shop/pricing.py", "Note that discounts never stack"),
    ("shop/auth/tokens.py", "Document why expired tokens are rejected"),
    ("shop/payments.py", "Explain the backoff cap on card retries"),
]
"""Commits that change a source file, for `eval history` to replay."""
VOLATILE = {"seconds", "seconds_median", "snapshot", "timings", "wall"}
"""Keys whose values are times (a run's, or the index snapshot's commit time)."""


def _help_texts(group: click.Group, prefix: list[str]) -> dict[str, list[str]]:
    """Every command's argv for `--help`, by a file name."""
    out = {"-".join(prefix) or "dowse": [*prefix, "--help"]}
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            out.update(_help_texts(command, [*prefix, name]))
        else:
            out["-".join([*prefix, name])] = [*prefix, name, "--help"]
    return out


def _git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.com",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.com",
        "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z",
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


def _repo(name: str) -> Path:
    repo = WORK / name
    shutil.copytree(FIXTURE, repo)
    _git(repo, "init", "-q", "-b", "main")
    for path, message in COMMITS:
        _git(repo, "add", path)
        _git(repo, "commit", "-q", "-m", message)
    for path, message in EDITS:
        with (repo / path).open("a") as f:
            f.write(f"# {message}.\n")
        _git(repo, "commit", "-q", "-am", message)
    return repo


def _blank(value: Any) -> Any:
    """`value` with every time in it zeroed; where a record holds its timings or its
    snapshot's time, its size in tokens too (the size of its rendering, times included)."""
    if isinstance(value, list):
        return [_blank(v) for v in value]
    if not isinstance(value, dict):
        return value
    timed = "timings" in value
    out = {
        k: 0 if k in VOLATILE or (timed and k == "tokens") else _blank(v) for k, v in value.items()
    }
    if "freshness" in value and isinstance(out.get("budget"), dict):
        # The agent answer's size counts the digits of its snapshot's time.
        out["budget"] = {**out["budget"], "tokens": 0}
    return out


def _scrub(text: str) -> str:
    """JSON output with its times zeroed (`_blank`); any other text as it is."""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    return json.dumps(_blank(data), indent=1, sort_keys=True) + "\n"


def main(out: Path) -> None:
    runner = CliRunner()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if WORK.exists():
        shutil.rmtree(WORK)
    WORK.mkdir(parents=True)

    def record(name: str, argv: list[str]) -> None:
        result = runner.invoke(cli, argv, catch_exceptions=False)
        body = f"exit {result.exit_code}\n{_scrub(result.stdout)}"
        (out / f"{name}.txt").write_text(body)

    for name, argv in _help_texts(cli, []).items():
        record(f"help-{name}", argv)
    for kind, flags in INDEXES.items():
        repo = _repo(kind)
        done = runner.invoke(cli, ["index", str(repo), "-q", *flags], catch_exceptions=False)
        assert done.exit_code == 0, done.output
        where = ["--path", str(repo), "--no-refresh"]
        for i, question in enumerate(QUESTIONS):
            tag = f"{kind}-q{i:02d}"
            record(f"{tag}-search", ["search", question, *where, "--json"])
            record(f"{tag}-search-file", ["search", question, *where, "--grain", "file", "--json"])
            record(f"{tag}-ask", ["ask", question, *where, "--json", "--mode", "retrieval"])
            record(f"{tag}-ask-auto", ["ask", question, *where, "--json", "--budget", "3000"])
            record(f"{tag}-agent", ["ask", question, *where, "--format", "agent"])
        for name in SYMBOLS:
            record(f"{kind}-symbol-{name}", ["symbol", name, "--path", str(repo), "--json"])
        record(f"{kind}-callers", ["symbol", "validate_token", "--path", str(repo), "--callers"])
        focus = QUESTIONS[0]
        record(
            f"{kind}-explore",
            ["explore", str(repo), "--depth", "deep", "--focus", focus, "--json"],
        )
        work = str(WORK / f"{kind}-eval")
        history = ["eval", "history", str(repo), "-n", "5", "-q", "--work", work, "--json"]
        record(f"{kind}-eval-history", [*history, *flags])
    print(json.dumps({"outputs": len(list(out.iterdir())), "dir": str(out)}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
