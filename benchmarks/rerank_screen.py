"""Screen a file re-ranking rule on recorded `ask` predictions, before building it.

Each rule reorders an instance's listed files (`found_files`, the first 20) with what
its base commit's tree and history hold, read from the clone with git; the script
prints Recall@5 before and after per language and the instances that go up and down.
It moves listed files only, so a rule that would bring in an unlisted file is
under-counted. Rules:

    siblings     two of the first 5 files define classes extending the same superclass
                 the tree defines (a class header's `extends`): the other listed files
                 extending it follow the second of them (built on branch lang41 and
                 reverted: benchmarks/RESULTS-multi.md, 2026-12-06)
    siblings-last  the same, the siblings placed after the last of the first 5 files of
                 the family, never ahead of one
    implements   the same as `siblings` with every name after `extends` or `implements`, and Rust
                 traits a file implements (`impl Trait for Type`) that the tree defines
    module-root  the Rust module root of the first file (`mod.rs` beside it, `dir.rs`
                 above it, a `lib.rs` up the tree), when listed below 5, moves to 5
    co-change    the listed file that changed most often with the first file in the
                 history (non-merge commits of 1-10 code files), when below 5, moves to 5

    python benchmarks/rerank_screen.py --dataset multi_swe_dev.jsonl --pred ALL.jsonl \\
        --repos CLONES --rule siblings [--languages java,rust]
    python benchmarks/rerank_screen.py --history HISTORY.json --git-dir CLONE/.git \\
        --rule siblings
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path

TOP = 5
_IMPL = re.compile(r"^\s*impl\b(?:\s*<[^{]*?>)?\s+([\w:]+)(?:<[^{]*?>)?\s+for\s+", re.M)
_NAMES_AFTER = re.compile(r"\b(?:extends|implements)\s+([\w.\s,]+)")
_CODE = (".rs", ".java", ".kt", ".scala", ".js", ".ts", ".go", ".c", ".h", ".cc", ".cpp", ".hpp")


class Tree:
    """One base commit of a clone, read with git."""

    def __init__(self, clone: Path, commit: str) -> None:
        self.clone, self.commit = clone, commit
        self._defined: dict[str, bool] = {}

    def git(self, *args: str) -> str:
        out = subprocess.run(
            ["git", f"--git-dir={self.clone}", *args], capture_output=True, text=True
        )
        return out.stdout if out.returncode == 0 else ""

    def text(self, path: str) -> str:
        return self.git("show", f"{self.commit}:{path}")

    def defines(self, name: str, rust: bool) -> bool:
        if name not in self._defined:
            pattern = rf"\btrait\s+{name}\b" if rust else rf"\b(class|interface)\s+{name}\b"
            self._defined[name] = bool(self.git("grep", "-l", "-E", pattern, self.commit))
        return self._defined[name]

    def commits(self) -> list[list[str]]:
        out, commits = self.git("log", "--no-merges", "--name-only", "--format=@@", self.commit), []
        for block in out.split("@@")[1:]:
            files = [f for f in block.split() if f]
            if 1 <= sum(f.endswith(_CODE) for f in files) <= 10:
                commits.append(files)
        return commits


def superclass_of(header: str) -> str | None:
    """The superclass a class header extends (its last name part), type parameters and
    their bounds (`<T extends Foo>`) left out."""
    text = header
    while (stripped := re.sub(r"<[^<>]*>", " ", text)) != text:
        text = stripped
    m = re.search(r"\bextends\s+([\w$]+(?:\s*\.\s*[\w$]+)*)", text)
    return re.split(r"\s*\.\s*", m.group(1))[-1] if m else None


def with_siblings(
    found: list[str], bases: dict[str, set[str]], top: int, last: bool = False
) -> list[str]:
    """`found` with the listed files sharing a base with two of the first `top` files
    moved right after the second of those (`last`: after the last of them)."""
    shared = Counter(b for p in found[:top] for b in bases.get(p, ()))
    family = {b for b, n in shared.items() if n >= 2}
    members = [i for i, p in enumerate(found[:top]) if bases.get(p, set()) & family]
    moved = [p for p in found[top:] if bases.get(p, set()) & family]
    if len(members) < 2 or not moved:
        return found
    after = (members[-1] if last else members[1]) + 1
    return [*found[:after], *moved, *(p for p in found[after:] if p not in moved)]


def _header(text: str, stem: str) -> str:
    """The class header of `stem` up to its body's brace."""
    m = re.search(rf"\b(?:class|interface)\s+{re.escape(stem)}\b[^{{;]*", text)
    return m.group(0) if m else ""


def _bases(tree: Tree, path: str, every: bool) -> set[str]:
    text = tree.text(path)
    if path.endswith(".rs"):
        names = {m.group(1).split("::")[-1] for m in _IMPL.finditer(text)} if every else set()
        return {n for n in names if tree.defines(n, rust=True)}
    stem = posixpath.basename(path).rsplit(".", 1)[0]
    header = _header(text, stem)
    if every:
        names = {
            part.strip().split(".")[-1]
            for m in _NAMES_AFTER.finditer(re.sub(r"<[^<>]*>", " ", header))
            for part in m.group(1).split(",")
            if part.strip()
        }
        names = {n.split()[0] for n in names if n}
    else:
        names = {b for b in [superclass_of(header)] if b}
    return {n for n in names if tree.defines(n, rust=False)}


def _family(found: list[str], tree: Tree, every: bool, last: bool = False) -> list[str]:
    bases = {p: _bases(tree, p, every) for p in found}
    return with_siblings(found, bases, TOP, last)


def _to_five(found: list[str], path: str | None) -> list[str]:
    if path is None or found.index(path) < TOP:
        return found
    rest = [p for p in found if p != path]
    return [*rest[: TOP - 1], path, *rest[TOP - 1 :]]


def _module_root(found: list[str], tree: Tree) -> list[str]:
    first = found[0]
    if not first.endswith(".rs"):
        return found
    directory = posixpath.dirname(first)
    roots = [posixpath.join(directory, "mod.rs"), f"{directory}.rs"]
    while directory:
        roots.append(posixpath.join(directory, "lib.rs"))
        directory = posixpath.dirname(directory)
    return _to_five(found, next((r for r in roots if r in found and r != first), None))


def _co_change(found: list[str], tree: Tree) -> list[str]:
    together: Counter[str] = Counter()
    for files in tree.commits():
        if found[0] in files:
            together.update(f for f in files if f != found[0] and f in found)
    return _to_five(found, together.most_common(1)[0][0] if together else None)


RULES: dict[str, Callable[[list[str], Tree], list[str]]] = {
    "siblings": lambda found, tree: _family(found, tree, every=False),
    "siblings-last": lambda found, tree: _family(found, tree, every=False, last=True),
    "implements": lambda found, tree: _family(found, tree, every=True),
    "module-root": _module_root,
    "co-change": _co_change,
}


def _clone(repos: Path, repo: str) -> Path:
    name = repo.replace("/", "__").lower()
    return next(p for p in repos.iterdir() if p.name.lower() == name)


def _cases(args: argparse.Namespace) -> list[tuple[str, str, Path, str, list[str], set[str]]]:
    """(id, language, clone, base commit, `ask`'s listing, gold files) of each case."""
    if args.history is not None:  # `dowse eval history --json`: each commit at its parent
        report = json.loads(args.history.read_text())
        return [
            (
                r["commit"][:12],
                "history",
                args.git_dir,
                r["parent"],
                r["found_files"],
                set(r["changed_files"]),
            )
            for r in report["results"]
            if r["method"] == "ask"
        ]
    found = {}
    for line in args.pred.open():
        row = json.loads(line)
        if row["method"] == "ask":
            found[row["instance_id"]] = row["found_files"]
    languages = set(args.languages.split(","))
    return [
        (
            t["instance_id"],
            t["language"],
            _clone(args.repos, t["repo"]),
            t["base_commit"],
            found[t["instance_id"]],
            set(t["gold_files"]),
        )
        for t in map(json.loads, args.dataset.open())
        if t["language"] in languages and t["instance_id"] in found
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--dataset", type=Path)
    ap.add_argument("--pred", type=Path, help="predictions with `ask` rows")
    ap.add_argument("--repos", type=Path, help="clones named owner__name")
    ap.add_argument("--history", type=Path, help="instead: `dowse eval history --json`'s output")
    ap.add_argument("--git-dir", type=Path, help="with --history: the repository's git directory")
    ap.add_argument("--rule", choices=sorted(RULES), required=True)
    ap.add_argument("--languages", default="java,rust")
    args = ap.parse_args()
    if (args.history is None) == (args.dataset is None or args.pred is None or args.repos is None):
        ap.error("give --dataset, --pred and --repos, or --history and --git-dir")
    if args.history is not None and args.git_dir is None:
        ap.error("--history needs --git-dir")
    totals: dict[str, list[float]] = {}
    up, down = [], []
    for case, language, clone, commit, before, gold in _cases(args):
        after = RULES[args.rule](before, Tree(clone, commit)) if before else before
        r_before = len(gold & set(before[:TOP])) / len(gold)
        r_after = len(gold & set(after[:TOP])) / len(gold)
        n = totals.setdefault(language, [0, 0.0, 0.0])
        n[0], n[1], n[2] = n[0] + 1, n[1] + r_before, n[2] + r_after
        if r_after != r_before:
            moved = (case, round(r_before, 2), round(r_after, 2))
            (up if r_after > r_before else down).append(moved)
    for language, (n, b, a) in sorted(totals.items()):
        print(f"{language}: n {n}, Recall@5 {100 * b / n:.2f} -> {100 * a / n:.2f}")
    print("up:", up)
    print("down:", down)


if __name__ == "__main__":
    main()
