"""dowse's callers against a grep of the same name, on indexed trees the project did not write.

Usage:
    python benchmarks/callers_bench.py INDEX_DIR [INDEX_DIR ...] [--sample N] [--misses K]
    python benchmarks/callers_bench.py INDEX_DIR [INDEX_DIR ...] --questions Q.txt [Q.txt ...]

For each index (built with `dowse index TREE --index-dir INDEX_DIR`; `--no-embed` is
enough, references need no vectors), a deterministic sample of N function and method
names defined exactly once in the index (at least 6 characters, not dunder, not in a test
file, not a method of the language's own types such as `update`, `contains`: grep cannot
tell `d.update()` on a dict from the project's `update`) is looked up two ways:

    dowse   `find_references(store, name)`'s callers (what `dowse symbol --callers`, the
            callers track and REFINE read), their lines of kind "call"
    grep    every `name(` at a word boundary in the indexed files of the definition's
            language family, with comments and string literals blanked first, minus
            definition lines (`def name(`, `fn name(`, `func name(`, `function name(`,
            Go interface method lines) and the definition's own lines; in Python a
            decorator line naming it (`@bp.before_app_request`) is a call too

Both are sets of (path, line). Prints per tree: names sampled, grep sites, dowse sites,
precision (dowse sites grep also finds) and recall (grep sites dowse finds), the refs
table's own recall before resolution (a "call" row named `name` on the line: what the
parser saw), the grep sites inside the definition's own lines (recursion: no caller, by
`retrieval.references`' design) and the recall outside them, and K misses of each kind
to read. A unique name makes grep a fair ground
truth; its own errors (a same-named method of a library, a call spread over lines) are
left in and show up as misses to read, not as fixes.

With `--questions` (one file of questions, one a line, per index, in the same order),
the callers track of `ask` is measured instead: for each question, the definitions it
targets (named by the question's identifiers, else by its words through the index, else
the retrieval's first definitions: how each was found is printed), and for each target
name, every definition of that name's callers of kind "call" against a grep of the name
(a name defined several times is grepped once: grep cannot tell its definitions apart,
so all of theirs are compared). The call sites the track itself reports ("`C` in p
calls `X`", at most its MAX_CALLERS a target) are checked against the same grep.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from dowse.indexer.store import Store, quote_list
from dowse.languages import is_test_path
from dowse.retrieval.builtin_names import builtin_methods
from dowse.retrieval.references import find_references

FAMILY = {
    "python": "python",
    "go": "go",
    "rust": "rust",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "java": "java",
    "c": "c",
    "cpp": "c",
}
_DEF = {
    "python": r"\bdef\s+{n}\s*\(",
    "go": r"\bfunc\s+(?:\([^)]*\)\s*)?{n}\s*[\[(]",
    "rust": r"\bfn\s+{n}\s*[<(]",
    "js": r"\bfunction\s*\*?\s*{n}\s*\("
    r"|^\s*(?:async\s+|static\s+|get\s+|set\s+)*{n}\s*\([^)]*\)\s*\{{",
    "java": r"^\s*(?:[\w<>\[\],?]+\s+)+{n}\s*\([^)]*\)\s*(?:throws [\w., ]+)?\s*[{{;]",
    "c": r"^\s*(?:[\w*&<>:]+\s+)+\**{n}\s*\([^;]*$",
}


def blank(text: str, family: str) -> str:
    """`text` with comments and string literals replaced by spaces (newlines kept)."""
    out: list[str] = []
    i, n = 0, len(text)
    hash_comments = family == "python"
    while i < n:
        c = text[i]
        if hash_comments and c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif not hash_comments and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif not hash_comments and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif (
            family == "rust"
            and re.match(r'r#*"', text[i:])
            and (i == 0 or not text[i - 1].isalnum())
        ):
            m = re.match(r'r(#*)"', text[i:])
            assert m is not None
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'`":
            if family == "python" and text.startswith(c * 3, i):
                q = c * 3
            elif c == "'" and family in ("rust", "go", "c", "java"):
                # A char literal ('a', '\n'); a Rust lifetime ('a) is not a string.
                m = re.match(r"'(?:\\.|[^\\'\n])'", text[i:])
                if m is None:
                    out.append(c)
                    i += 1
                    continue
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
                continue
            elif c == "`" and family not in ("go", "js"):
                out.append(c)
                i += 1
                continue
            else:
                q = c
            j = i + len(q)
            while j < n:
                if text[j] == "\\" and q != "`":
                    j += 2
                    continue
                if text.startswith(q, j):
                    j += len(q)
                    break
                if text[j] == "\n" and len(q) == 1 and q != "`":
                    break
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _go_interface_lines(lines: list[str]) -> set[int]:
    """1-based lines inside Go `interface { ... }` bodies (method declarations, not calls)."""
    inside, depth, out = False, 0, set()
    for i, line in enumerate(lines, 1):
        if not inside and re.search(r"\binterface\s*\{", line) and "}" not in line:
            inside, depth = True, 0
        if inside:
            out.add(i)
            depth += line.count("{") - line.count("}")
            if depth <= 0:
                inside = False
    return out


class Tree:
    """An index's files, read and blanked once per language family."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.root = Path(store.manifest.root)
        self.by_family: dict[str, list[str]] = defaultdict(list)
        for r in store.rows("files", ["path", "language"]):
            fam = FAMILY.get(r["language"] or "")
            if fam:
                self.by_family[fam].append(r["path"])
        self._blanked: dict[str, list[str]] = {}
        self._iface: dict[str, set[int]] = {}

    def lines(self, path: str, family: str) -> list[str]:
        if path not in self._blanked:
            try:
                text = (self.root / path).read_text(errors="replace")
            except OSError:
                text = ""
            self._blanked[path] = blank(text, family).split("\n")
            self._iface[path] = (
                _go_interface_lines(self._blanked[path]) if family == "go" else set()
            )
        return self._blanked[path]

    def grep(self, name: str, family: str, definition: dict[str, Any]) -> set[tuple[str, int]]:
        call = re.compile(rf"(?<![\w$]){re.escape(name)}\s*(?:::<[^>]*>\s*)?\(")
        if family == "python":  # a decorator applies (calls) what it names: `@app.route`
            call = re.compile(rf"{call.pattern}|^\s*@[\w.]*\b{re.escape(name)}\s*$")
        define = re.compile(_DEF[family].format(n=re.escape(name)))
        out: set[tuple[str, int]] = set()
        for path in self.by_family[family]:
            for i, line in enumerate(self.lines(path, family), 1):
                if not call.search(line) or define.search(line):
                    continue
                if (
                    path == definition["path"]
                    and definition["start_line"] <= i <= definition["name_line"]
                ):
                    continue
                if i in self._iface.get(path, ()):
                    continue
                out.add((path, i))
        return out


def sample(store: Store, n: int) -> list[dict[str, Any]]:
    rows = store.rows(
        "symbols",
        [
            "id",
            "path",
            "name",
            "qualified_name",
            "kind",
            "start_line",
            "name_line",
            "end_line",
            "language",
        ],
        where="kind IN ('function', 'method')",
    )
    count: dict[str, int] = defaultdict(int)
    for r in rows:
        count[r["name"]] += 1
    eligible = [
        r
        for r in rows
        if count[r["name"]] == 1
        and len(r["name"]) >= 6
        and not r["name"].startswith("__")
        and not r["name"].lower().startswith("test")
        and not is_test_path(r["path"])
        and FAMILY.get(r["language"] or "")
        and r["name"] not in builtin_methods(r["language"])
    ]
    eligible.sort(key=lambda r: hashlib.blake2b(r["name"].encode(), digest_size=8).digest())
    return eligible[:n]


def measure(index_dir: Path, n: int, k: int) -> None:
    store = Store.open(index_dir)
    tree = Tree(store)
    defs = sample(store, n)
    tp = fp = fn = 0
    parsed_hit = own_sites = 0
    misses: list[str] = []
    extras: list[str] = []
    for d in defs:
        family = FAMILY[d["language"]]
        truth = tree.grep(d["name"], family, d)
        refs = find_references(store, d["name"], callees=False, limit=100_000)
        found = {
            (c.path, line)
            for c in refs.callers
            for line, kind in zip(c.lines, c.kinds, strict=True)
            if kind == "call"
        }
        rows = store.rows(
            "refs", ["path", "line"], where=f"name IN ({quote_list([d['name']])}) AND kind = 'call'"
        )
        parsed = {(r["path"], r["line"]) for r in rows}
        parsed_hit += len(truth & parsed)
        tp += len(found & truth)
        fp += len(found - truth)
        fn += len(truth - found)
        # A call inside the definition's own lines (recursion) is no caller by design.
        own = {(p, i) for p, i in truth if p == d["path"] and d["start_line"] <= i <= d["end_line"]}
        own_sites += len(own)
        for path, line in sorted(truth - found)[:2]:
            why = "parsed, not resolved" if (path, line) in parsed else "not parsed"
            if (path, line) in own:
                why = "inside its own definition"
            text = (tree.root / path).read_text(errors="replace").split("\n")[line - 1].strip()
            misses.append(f"{d['name']} {path}:{line} ({why}): {text[:100]}")
        for path, line in sorted(found - truth)[:2]:
            text = (tree.root / path).read_text(errors="replace").split("\n")[line - 1].strip()
            extras.append(f"{d['name']} {path}:{line}: {text[:100]}")
    grep_sites, dowse_sites = tp + fn, tp + fp
    precision = tp / dowse_sites if dowse_sites else 1.0
    recall = tp / grep_sites if grep_sites else 1.0
    parsed_recall = parsed_hit / grep_sites if grep_sites else 1.0
    outside = grep_sites - own_sites
    recall_outside = tp / outside if outside else 1.0
    print(f"## {tree.root.name} ({index_dir})")
    print(
        f"names {len(defs)}, grep sites {grep_sites}, dowse sites {dowse_sites}, "
        f"precision {precision:.3f}, recall {recall:.3f}, parsed recall {parsed_recall:.3f}, "
        f"grep sites inside their own definition {own_sites}, "
        f"recall outside them {recall_outside:.3f}"
    )
    for line in misses[:k]:
        print(f"  miss  {line}")
    for line in extras[:k]:
        print(f"  extra {line}")


def _definitions_named(store: Store, name: str) -> list[dict[str, Any]]:
    return store.rows(
        "symbols",
        ["id", "path", "name", "kind", "start_line", "name_line", "language"],
        where=f"name IN ({quote_list([name])}) AND kind != 'heading'",
    )


def _called(
    store: Store, tree: Tree, name: str
) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(grep's call sites of `name`, dowse's call sites of every definition of it)."""
    defs = _definitions_named(store, name)
    truth: set[tuple[str, int]] = set()
    for family in {FAMILY[d["language"]] for d in defs if FAMILY.get(d["language"] or "")}:
        own = [d for d in defs if FAMILY.get(d["language"] or "") == family]
        sites = tree.grep(name, family, own[0])
        truth |= {
            (p, i)
            for p, i in sites
            if not any(p == d["path"] and d["start_line"] <= i <= d["name_line"] for d in own)
        }
    refs = find_references(store, name, callees=False, limit=100_000)
    found = {
        (c.path, line)
        for c in refs.callers
        for line, kind in zip(c.lines, c.kinds, strict=True)
        if kind == "call"
    }
    return truth, found


def measure_track(index_dir: Path, questions: list[str], k: int) -> None:
    from dowse.explore.callers import _targets, callers_track, named_by_words
    from dowse.explore.tracks import Context, run_track
    from dowse.retrieval.ask import ask
    from dowse.retrieval.hybrid import HybridSearcher
    from dowse.retrieval.query import analyze

    searcher = HybridSearcher.open(index_dir)
    store = searcher.store
    tree = Tree(store)
    ctx = Context(root=tree.root)
    ctx.use_searcher(searcher)
    tp = fp = fn = 0
    track_sites = track_hold = 0
    how: dict[str, int] = defaultdict(int)
    misses: list[str] = []
    print(f"## {tree.root.name} ({index_dir}): the callers track on {len(questions)} questions")
    for q in questions:
        a = analyze(q)
        named = [i for i in a.identifiers if i.replace(".", "").isidentifier()]
        worded = named_by_words(store, a.terms, skip=a.unasked_test)

        def seeds(q: str = q) -> list[str]:
            return [b.symbol for b in ask(searcher, q).context if b.symbol]

        targets, _ = _targets(ctx, a, seeds, with_callers=True)
        names = {d.qualified_name for r in targets for d in r.definitions}
        source = (
            "identifiers"
            if any(r.name in named for r in targets)
            else "words"
            if any(r.name in worded for r in targets)
            else "retrieval"
            if targets
            else "none"
        )
        how[source] += 1
        last = sorted({n.rsplit(".", 1)[-1] for n in names})
        truth_all: set[tuple[str, int]] = set()
        for name in last:
            truth, found = _called(store, tree, name)
            truth_all |= truth
            tp += len(found & truth)
            fp += len(found - truth)
            fn += len(truth - found)
            for path, line in sorted(truth - found)[:1]:
                misses.append(f"{name} {path}:{line}")
        found_track, _ = run_track(ctx, callers_track(ctx, q, seeds=seeds))
        calls = [f for f in found_track.findings if " calls `" in f.claim]
        track_sites += len(calls)
        track_hold += sum(
            (f.citations[0].path, f.citations[0].start_line) in truth_all for f in calls
        )
        print(f"  {q!r}: {source}: {found_track.track.name}; {len(calls)} call sites reported")
    sites = tp + fn
    found_n = tp + fp
    print(
        f"questions {len(questions)} (targets from: "
        + ", ".join(f"{k} {v}" for k, v in sorted(how.items()))
        + f"); targets' grep sites {sites}, dowse sites {found_n}, "
        f"precision {tp / found_n if found_n else 1.0:.3f}, "
        f"recall {tp / sites if sites else 1.0:.3f}; "
        f"track's reported call sites {track_sites}, in grep {track_hold}"
    )
    for line in misses[:k]:
        print(f"  miss  {line}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("indexes", nargs="+", type=Path)
    ap.add_argument("--sample", type=int, default=60)
    ap.add_argument("--misses", type=int, default=8)
    ap.add_argument("--questions", nargs="+", type=Path, default=[])
    args = ap.parse_args()
    if args.questions and len(args.questions) != len(args.indexes):
        ap.error("give one questions file per index")
    for i, index_dir in enumerate(args.indexes):
        if args.questions:
            lines = args.questions[i].read_text().splitlines()
            measure_track(index_dir, [q for q in lines if q.strip()], args.misses)
        else:
            measure(index_dir, args.sample, args.misses)


if __name__ == "__main__":
    main()
