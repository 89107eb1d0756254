"""What a localization split's gold holds, and where `ask`'s predictions lose it.

Reads a SWE-bench-style dataset (`gold_files`, `gold_lines`, `base_commit`, `repo`,
optionally `language`), the clones it was run on and a predictions file of
`dowse eval swebench` (one method's lines, `--method`), and prints:

- the gold files that are no code (documentation, changelogs, manifests, build and CI
  files: no language dowse parses, or documentation by `languages.is_documentation`) per
  language, and the instances whose gold is all code (the ceiling of Acc@k for a ranking
  of code);
- the hunks whose base lines are all blank: insertion points between two definitions,
  which no chunk holds;
- Acc@k and Recall@k with each instance's gold cut to its code files (instances with no
  code gold left out), per language;
- every gold hunk by the rank of its file in `found_files` (1, 2-5, 6-20, not listed) and
  whether the delivered context (`context_spans`) shows it whole, in part, shows its file
  but not it, or not its file;
- every hunk of a gold code file in the top 5 that the context does not show whole, by
  why (`why_not_shown`): the file has no block in the context, or only signature lines;
  the hunk's function (the innermost function or method of the base file, parsed as
  dowse parses it, holding its first non-blank line) is shown by another piece of it,
  is too long to show whole (`WHOLE_DEFINITION_LINES`) and not shown, or is short and
  not shown (the within-file ranking chose other parts); or the hunk lies outside every
  function: blank lines (an insertion point), imports and module declarations, comments,
  preprocessor lines, or declarations and data (struct, enum, field, const, prototype).

    python benchmarks/gold_breakdown.py --dataset multi_swe_dev.jsonl --repos CLONES \\
        --pred PRED.jsonl --method ask

CLONES holds the repositories as `<owner>__<name>` (bare or not), as for `dowse eval`.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from dowse.indexer.parse import parse_source
from dowse.languages import HEADER, header_language, is_documentation, language_for
from dowse.retrieval.behaviour import WHOLE_DEFINITION_LINES


def is_code(path: str) -> bool:
    language = language_for(path)
    return language is not None and not is_documentation(path, language)


@functools.lru_cache(maxsize=4096)
def base_lines(git_dir: str, commit: str, path: str) -> tuple[str, ...]:
    out = subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
        capture_output=True,
        text=True,
        errors="replace",
    )
    return tuple(out.stdout.split("\n"))


def git_dir(repos: Path, repo: str) -> str:
    clone = repos / repo.replace("/", "__")
    return str(clone / ".git" if (clone / ".git").exists() else clone)


_FUNCTIONS = frozenset({"function", "method", "constructor"})
_IMPORT = re.compile(r"^\s*(?:pub\s+)?(?:use|mod|import|package|#include)\b")


@functools.lru_cache(maxsize=256)
def _header_language(git: str, commit: str) -> str:
    out = subprocess.run(
        ["git", "--git-dir", git, "ls-tree", "-r", "--name-only", commit],
        capture_output=True,
        text=True,
    )
    return header_language(out.stdout.split("\n"))


@functools.lru_cache(maxsize=1024)
def functions(git: str, commit: str, path: str) -> tuple[tuple[int, int], ...]:
    """The (start, end) lines of the base file's functions and methods."""
    language = language_for(path)
    if path.lower().endswith(HEADER):
        language = _header_language(git, commit)
    source = "\n".join(base_lines(git, commit, path)).encode()
    parsed = parse_source(path, source, language or "text", timeout_s=20)
    return tuple((s.start_line, s.end_line) for s in parsed.symbols if s.kind in _FUNCTIONS)


def why_not_shown(
    lines: tuple[str, ...],
    start: int,
    spans: list[tuple[int, int]],
    fns: tuple[tuple[int, int], ...],
) -> str:
    """Why a hunk (`lines`: its base lines, the first numbered `start`) of a file in the
    top 5 is not shown whole by the file's context `spans` (see the module docstring)."""
    if not spans:
        return "file not in the context"
    if all(a == b for a, b in spans):
        return "signature lines only"
    filled = [n for n, text in enumerate(lines) if text.strip()]
    if not filled:
        return "outside functions: blank (an insertion point)"
    first = start + filled[0]
    inside = [f for f in fns if f[0] <= first <= f[1]]
    if inside:
        lo, hi = min(inside, key=lambda f: f[1] - f[0])
        if any(a <= hi and b >= lo for a, b in spans if b > a):
            return "function shown by another piece"
        if hi - lo >= WHOLE_DEFINITION_LINES:
            return "function too long to show whole, not shown"
        return "function not shown (within-file ranking)"
    texts = [lines[n].strip() for n in filled]
    if _IMPORT.match(texts[0]):
        return "outside functions: imports, module declarations"
    if all(t.startswith(("//", "/*", "*")) for t in texts):
        return "outside functions: comments"
    if all(t.startswith("#") for t in texts):
        return "outside functions: preprocessor"
    return "outside functions: declarations and data"


def band(rank: int | None) -> str:
    if rank is None:
        return "not listed"
    return "1" if rank == 1 else "2-5" if rank <= 5 else "6-20" if rank <= 20 else ">20"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--pred", type=Path, required=True)
    ap.add_argument("--method", default="ask")
    args = ap.parse_args()

    rows = [json.loads(line) for line in args.dataset.open()]
    preds: dict[str, dict[str, Any]] = {}
    for line in args.pred.open():
        p = json.loads(line)
        if p["method"] == args.method:
            preds[p["instance_id"]] = p

    print("## Gold files that are no code")
    kinds: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for d in rows:
        for lang in {"all", d.get("language", "all")}:
            k = kinds[lang]
            k["instances"] += 1
            k["gold"] += len(d["gold_files"])
            k["not code"] += sum(not is_code(g) for g in d["gold_files"])
            k["all code"] += all(is_code(g) for g in d["gold_files"])
    for lang, k in sorted(kinds.items()):
        print(
            f"{lang}: {k['instances']} instances, {k['gold']} gold files, "
            f"{k['not code']} no code ({100 * k['not code'] / max(k['gold'], 1):.0f} %), "
            f"all gold code in {k['all code']} "
            f"({100 * k['all code'] / max(k['instances'], 1):.0f} %)"
        )

    print("\n## Hunks on blank lines (insertion points)")
    hunks = blank = 0
    for d in rows:
        g = git_dir(args.repos, d["repo"])
        for path, spans in d.get("gold_lines", {}).items():
            text = base_lines(g, d["base_commit"], path)
            for a, b in spans:
                hunks += 1
                seg = text[a - 1 : b]
                blank += bool(seg) and all(not x.strip() for x in seg)
    print(f"{blank} of {hunks} hunks ({100 * blank / max(hunks, 1):.1f} %)")

    print(f"\n## {args.method}: Acc@k / Recall@k on the code files of the gold")
    agg: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for d in rows:
        p = preds.get(d["instance_id"])
        code = [g for g in d["gold_files"] if is_code(g)]
        if not code:
            continue
        found = p["found_files"] if p else []
        for key in {"all", d.get("language", "all")}:
            a = agg[key]
            a["n"] += 1
            for k in (1, 5, 10):
                hit = sum(g in found[:k] for g in code)
                a[f"Acc@{k}"] += hit == len(code)
                a[f"R@{k}"] += hit / len(code)
    for key, a in sorted(agg.items()):
        n = a["n"]
        cells = " ".join(
            f"{m} {100 * a[m] / n:.1f}" for m in ("Acc@1", "Acc@5", "Acc@10", "R@1", "R@5", "R@10")
        )
        print(f"{key} (n {n}): {cells}")

    print(f"\n## {args.method}: gold hunks by their file's rank and what the context shows")
    states = ("whole", "in part", "its file, not it", "not its file")
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for d in rows:
        p = preds.get(d["instance_id"])
        if p is None:
            continue
        shown: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
        for s in p.get("context_spans", []):
            shown[s["path"]].append((s["start"], s["end"]))
        found = p["found_files"]
        for path, spans in d.get("gold_lines", {}).items():
            rank = found.index(path) + 1 if path in found else None
            ranges = shown.get(path)
            for a, b in spans:
                if ranges is None:
                    state = "not its file"
                else:
                    n = sum(any(s <= x <= e for s, e in ranges) for x in range(a, b + 1))
                    state = "whole" if n == b - a + 1 else "in part" if n else "its file, not it"
                table[band(rank)][state] += 1
    for b in ("1", "2-5", "6-20", ">20", "not listed"):
        if table[b]:
            row = ", ".join(f"{s} {table[b][s]}" for s in states)
            print(f"rank {b}: {sum(table[b].values())} hunks: {row}")

    print(f"\n## {args.method}: why a hunk of a gold code file in the top 5 is not shown whole")
    why: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for d in rows:
        p = preds.get(d["instance_id"])
        if p is None:
            continue
        g = git_dir(args.repos, d["repo"])
        top = p["found_files"][:5]
        for path, hunks in d.get("gold_lines", {}).items():
            if path not in top or not is_code(path):
                continue
            spans = [(s["start"], s["end"]) for s in p["context_spans"] if s["path"] == path]
            text = base_lines(g, d["base_commit"], path)
            fns = functions(g, d["base_commit"], path)
            for a, b in hunks:
                if all(any(s <= x <= e for s, e in spans) for x in range(a, b + 1)):
                    why[d.get("language", "all")]["shown"] += 1
                    continue
                reason = why_not_shown(text[a - 1 : b], a, spans, fns)
                why[d.get("language", "all")][reason] += 1
    for lang, counts in sorted(why.items()):
        print(f"{lang}: {sum(counts.values())} hunks")
        for reason, n in counts.most_common():
            print(f"  {n:4d} {reason}")


if __name__ == "__main__":
    main()
