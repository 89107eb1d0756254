"""Which gold hunks of a localization split lie inside a definition the parser finds.

Usage:
    python benchmarks/gold_in_definitions.py --dataset DATASET --repos CLONES
        [--repo OWNER/NAME] [--header-language c|cpp] [--list]

For every instance (of `--repo`), each gold code file is read at the base commit from the
clone (`CLONES/<owner>__<name>`, bare or not), parsed as `dowse index` parses it (`.h` as
`--header-language`), and each hunk of `gold_lines` is counted as inside a definition
when one definition other than a namespace or module spans all its lines. `--list` prints
each hunk with its innermost definition (`kind qualified_name start-end`, or `-`), to
diff two versions of the parser: run it with each version first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dowse.indexer.parse import parse_source
from dowse.indexer.records import Symbol
from dowse.languages import CODE_LANGUAGES, HEADER, language_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--repo", help="only this repository (owner/name)")
    parser.add_argument("--header-language", choices=("c", "cpp"), default="cpp")
    parser.add_argument("--list", action="store_true", help="every hunk and its definition")
    args = parser.parse_args(argv)
    hunks = inside = 0
    for line in args.dataset.read_text().splitlines():
        instance = json.loads(line)
        if args.repo and instance["repo"].lower() != args.repo.lower():
            continue
        clone = args.repos / instance["repo"].replace("/", "__")
        for path, spans, parsed in gold_code_files(instance, clone, args.header_language):
            symbols = [s for s in parsed if s.kind != "module"]
            for start, end in spans:
                hunks += 1
                around = [s for s in symbols if s.start_line <= start and end <= s.end_line]
                inside += bool(around)
                if args.list:
                    inner = min(around, key=lambda s: s.end_line - s.start_line, default=None)
                    where = (
                        f"{inner.kind} {inner.qualified_name} {inner.start_line}-{inner.end_line}"
                        if inner is not None
                        else "-"
                    )
                    print(instance["instance_id"], path, f"{start}-{end}", where)
    print(f"{hunks} hunks of gold code files, {inside} inside a definition")
    return 0


def gold_code_files(
    instance: dict[str, Any], clone: Path, header_language: str
) -> Iterator[tuple[str, list[list[int]], list[Symbol]]]:
    """Each gold code file of `instance` that its clone holds at the base commit: its path,
    its changed lines (`gold_lines`) and the symbols `dowse index` parses in it (`.h` as
    `header_language`)."""
    for path, spans in instance.get("gold_lines", {}).items():
        language = language_for(path)
        if language == "c" and path.lower().endswith(HEADER):
            language = header_language
        if language not in CODE_LANGUAGES:
            continue
        shown = subprocess.run(
            ["git", f"--git-dir={_git_dir(clone)}", "show", f"{instance['base_commit']}:{path}"],
            capture_output=True,
            check=False,
        )
        if shown.returncode != 0:
            continue
        yield path, spans, parse_source(path, shown.stdout, language, timeout_s=30.0).symbols


def _git_dir(clone: Path) -> Path:
    return clone / ".git" if (clone / ".git").exists() else clone


if __name__ == "__main__":
    sys.exit(main())
