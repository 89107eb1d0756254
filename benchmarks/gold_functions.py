"""Gold functions for a localization split that has none: the definitions its fixes change.

Usage:
    python benchmarks/gold_functions.py --dataset DATASET --repos CLONES --out DATASET2
        [--repo OWNER/NAME] [--header-language c|cpp]

SWE-bench Lite names the functions each fix touches (`gold_spans`); Multi-SWE-bench gives
only the changed lines (`gold_lines`). For every instance (of `--repo`), each gold code
file is read at the base commit from the clone (`CLONES/<owner>__<name>`, bare or not)
and parsed as `dowse index` parses it (`.h` as `--header-language`); each changed line
names the innermost definition that holds it, leaving out modules and namespaces and
values (variables, fields, properties, constants: a field changed in a class names the
class, as Lite's spans do). A line outside every definition (imports, a top-level
statement) names nothing. The dataset is written to `--out` with `gold_spans` set (path ->
qualified names, in line order); an instance none of whose lines lies in a definition gets
`{}` and is left out of FuncAcc, as `dowse eval swebench` leaves out an instance without
gold spans.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dowse.retrieval.behaviour import VALUE_KINDS

sys.path.insert(0, str(Path(__file__).parent))
from gold_in_definitions import gold_code_files  # noqa: E402

_NOT_BEHAVIOUR = VALUE_KINDS | {"module", "namespace"}


def gold_spans(instance: dict, clone: Path, header_language: str) -> dict[str, list[str]]:
    """Path -> the qualified names of the definitions the instance's changed lines lie in."""
    out: dict[str, list[str]] = {}
    for path, spans, parsed in gold_code_files(instance, clone, header_language):
        symbols = [s for s in parsed if s.kind not in _NOT_BEHAVIOUR]
        names: dict[str, int] = {}
        for start, end in spans:
            for line in range(start, end + 1):
                around = [s for s in symbols if s.start_line <= line <= s.end_line]
                inner = min(around, key=lambda s: s.end_line - s.start_line, default=None)
                if inner is not None:
                    names.setdefault(inner.qualified_name, inner.start_line)
        if names:
            out[path] = sorted(names, key=lambda n: names[n])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repo", help="only this repository (owner/name)")
    parser.add_argument("--header-language", choices=("c", "cpp"), default="cpp")
    args = parser.parse_args(argv)
    written = named = 0
    with args.out.open("w", encoding="utf-8") as out:
        for line in args.dataset.read_text().splitlines():
            instance = json.loads(line)
            if args.repo and instance["repo"].lower() != args.repo.lower():
                continue
            clone = args.repos / instance["repo"].replace("/", "__")
            instance["gold_spans"] = gold_spans(instance, clone, args.header_language)
            out.write(json.dumps(instance) + "\n")
            written += 1
            named += bool(instance["gold_spans"])
    print(f"{written} instances, {named} with a changed line inside a definition", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
