"""The definitions dowse's parser finds in a tree: counts by kind, or every one of them.

Usage:
    python benchmarks/symbol_counts.py TREE [--header-language c|cpp] [--list]

Parses every C, C++ and other code file under TREE as `dowse index` would (`.h` files as
`--header-language`) and prints the number of files, of files that fell back to text,
and of definitions by kind. `--list` prints one line per definition instead
(`path kind qualified_name start-end`), to diff two versions of the parser: run it with
each version first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from pathlib import Path

from dowse.indexer.parse import parse_source
from dowse.languages import CODE_LANGUAGES, HEADER, language_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--header-language", choices=("c", "cpp"), default="cpp")
    parser.add_argument("--list", action="store_true", help="every definition, one a line")
    args = parser.parse_args(argv)
    kinds: collections.Counter[str] = collections.Counter()
    files = fallback = 0
    for directory, subdirs, names in os.walk(args.tree):
        subdirs.sort()
        for name in sorted(names):
            path = Path(directory) / name
            rel = path.relative_to(args.tree).as_posix()
            language = language_for(rel)
            if language == "c" and rel.lower().endswith(HEADER):
                language = args.header_language
            if language not in CODE_LANGUAGES:
                continue
            parsed = parse_source(rel, path.read_bytes(), language, timeout_s=30.0)
            files += 1
            fallback += parsed.tree is None
            for symbol in parsed.symbols:
                kinds[symbol.kind] += 1
                if args.list:
                    print(
                        rel,
                        symbol.kind,
                        symbol.qualified_name,
                        f"{symbol.start_line}-{symbol.end_line}",
                    )
    if not args.list:
        by_kind = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
        print(f"{files} files, {fallback} as text, {sum(kinds.values())} definitions: {by_kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
