"""Follow `ask`'s first files' imports on recorded predictions: why gold files are missed,
and what an import-following re-ranking rule would do, before building it.

Each instance's base tree is read from its clone with git; the listed files are parsed
with dowse's own parser and their imports resolved with dowse's own resolver
(`indexer.resolve.ImportResolver`, the manifests of that tree), so "imported" means what
the index's `imports.resolved` would hold at that commit. The question's names are
`retrieval.query.analyze`'s identifiers.

`--misses`: each code gold file outside the top 5, with its rank, the question's names
it defines, and which of the first 5 files import it. `--rule`: R@5 before and after
reordering the first 20 listed files (listed files only: a rule that would bring in an
unlisted file is under-counted):

    first-named   the first listed file below 5 that the first file imports and that
                  defines a name the question mentions moves to 5
    top3-named    the same, imported by any of the first 3 files
    first-any     the first listed file below 5 that the first file imports moves to 5
    disambiguate  of a name the question mentions that 2+ listed files define, the one
                  the first file imports, listed below 5, moves to 5

    PYTHONPATH=CODE python benchmarks/import_screen.py --dataset multi_swe_dev.jsonl \\
        --repos CLONES --pred PRED.jsonl [--pred ...] (--misses | --rule RULE ...)
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from dowse.indexer.parse import Parsed, parse_source
from dowse.indexer.resolve import ImportResolver, read_layout
from dowse.languages import CODE_LANGUAGES, language_for
from dowse.retrieval.query import QueryAnalysis, analyze

TOP, DEPTH = 5, 20


class Tree:
    """One base commit of a clone: its files, their parses and resolved imports."""

    def __init__(self, clone: Path, commit: str) -> None:
        self.clone, self.commit = clone, commit
        listing = self._git("ls-tree", "-r", "--name-only", commit).decode()
        self.paths = listing.splitlines()
        self._parsed: dict[str, Parsed | None] = {}
        self.resolver = ImportResolver(self.paths, read_layout(self.paths, self.read))

    def _git(self, *args: str) -> bytes:
        out = subprocess.run(["git", f"--git-dir={self.clone}", *args], capture_output=True)
        return out.stdout if out.returncode == 0 else b""

    def read(self, path: str) -> bytes | None:
        return self._git("show", f"{self.commit}:{path}") or None

    def parsed(self, path: str) -> Parsed | None:
        if path not in self._parsed:
            language, data = language_for(path), self.read(path)
            ok = language in CODE_LANGUAGES and data
            self._parsed[path] = parse_source(path, data, language) if ok else None
        return self._parsed[path]

    def imports(self, path: str) -> list[str]:
        """The files `path`'s imports resolve to, each once."""
        parsed, out = self.parsed(path), []
        for imp in parsed.imports if parsed else []:
            for found in self.resolver.resolve(imp.module, path, language_for(path), imp.names):
                if found not in out:
                    out.append(found)
        return out

    def defines(self, path: str) -> set[str]:
        parsed = self.parsed(path)
        return {s.name for s in parsed.symbols} if parsed else set()


def _to_top(found: list[str], path: str) -> list[str]:
    rest = [f for f in found if f != path]
    return [*rest[: TOP - 1], path, *rest[TOP - 1 :]]


def _imported(sources: int, named: bool) -> Callable[[list[str], Tree, QueryAnalysis], list[str]]:
    def rule(found: list[str], tree: Tree, question: QueryAnalysis) -> list[str]:
        reached = {p for s in found[:sources] for p in tree.imports(s)}
        for path in found[TOP:DEPTH]:
            if path in reached and (not named or tree.defines(path) & set(question.identifiers)):
                return _to_top(found, path)
        return found

    return rule


def _disambiguate(found: list[str], tree: Tree, question: QueryAnalysis) -> list[str]:
    reached, head = set(tree.imports(found[0])), found[:DEPTH]
    for name in question.identifiers:
        defining = [p for p in head if name in tree.defines(p)]
        if len(defining) >= 2:
            path = next((p for p in defining if p in reached), None)
            if path is not None and head.index(path) >= TOP:
                return _to_top(found, path)
    return found


RULES: dict[str, Callable[[list[str], Tree, QueryAnalysis], list[str]]] = {
    "first-named": _imported(1, named=True),
    "top3-named": _imported(3, named=True),
    "first-any": _imported(1, named=False),
    "disambiguate": _disambiguate,
}


def _clone(repos: Path, repo: str) -> Path:
    name = repo.replace("/", "__").lower()
    return next(p for p in repos.iterdir() if p.name.lower() == name)


def _recall(found: list[str], gold: list[str]) -> float:
    return sum(g in found[:TOP] for g in gold) / len(gold)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--repos", type=Path, required=True, help="clones named owner__name")
    ap.add_argument("--pred", type=Path, action="append", required=True)
    ap.add_argument("--rule", choices=sorted(RULES), action="append", default=[])
    ap.add_argument("--misses", action="store_true")
    args = ap.parse_args()
    if not args.rule and not args.misses:
        ap.error("give --misses or --rule")
    tasks = {t["instance_id"]: t for t in map(json.loads, args.dataset.open())}
    totals: dict[tuple[str, str], list[float]] = {}
    for pred in args.pred:
        for row in map(json.loads, pred.open()):
            task = tasks.get(row["instance_id"])
            if row["method"] != "ask" or task is None or not row["found_files"]:
                continue
            found, gold = row["found_files"], task["gold_files"]
            tree = Tree(_clone(args.repos, task["repo"]), task["base_commit"])
            question = analyze(task["problem_statement"])
            if args.misses:
                code = [g for g in gold if language_for(g) in CODE_LANGUAGES]
                missed = [g for g in code if g not in found[:TOP]]
                if missed:
                    print(f"{task['instance_id']} code gold {len(code)}, top 5 {found[:TOP]}")
                imports = [set(tree.imports(p)) for p in found[:TOP]]
                for g in missed:
                    rank = found.index(g) + 1 if g in found else None
                    named = sorted(tree.defines(g) & set(question.identifiers))
                    by = [i + 1 for i, reached in enumerate(imports) if g in reached]
                    print(f"    {g} rank {rank} defines {named} imported by {by}")
            for rule in args.rule:
                after = RULES[rule](found, tree, question)
                before_r, after_r = _recall(found, gold), _recall(after, gold)
                n = totals.setdefault((rule, task["language"]), [0, 0.0, 0.0])
                n[0], n[1], n[2] = n[0] + 1, n[1] + before_r, n[2] + after_r
                if after_r != before_r:
                    print(f"{rule} {task['instance_id']} R@5 {before_r:.2f} -> {after_r:.2f}")
    for (rule, language), (n, b, a) in sorted(totals.items()):
        print(f"{rule} {language}: n {n:.0f}, R@5 {100 * b / n:.2f} -> {100 * a / n:.2f}")


if __name__ == "__main__":
    main()
