"""Where the flags a question quotes are defined or read, against the fixed files.

For every instance of a SWE-bench-style dataset whose question names a long flag
(`QueryAnalysis.literals`: `--paging`), reads its repository at the base commit and
lists, per flag, the code files (tests and documentation left out) that:

- hold it verbatim, as `--name` or `"name"` (what `pool.literal_rows` counted before);
- define or read it by `flag_rules.flag_sites` (clap's `.long("name")` and
  `get_one::<String>("name")`, argparse's `add_argument("--name")` and `args.name`, ...).

Prints per flag the two counts and which of them are fixed files, then totals: how many
flags have a site file, how often a site file / a word-only file is a fixed file. With
`--pred` (a `dowse eval swebench` predictions file, one method's lines), also the rank of
the best site file and of the best fixed file in `found_files`.

    python benchmarks/flag_sites.py --dataset multi_swe_dev.jsonl --repos CLONES \\
        [--repo OWNER/NAME] [--pred PRED.jsonl --method ask] [--json]

CLONES holds the repositories as `<owner>__<name>` (bare or not), as for `dowse eval`.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from dowse.flag_rules import flag_forms, flag_sites
from dowse.languages import is_documentation, is_test_path, language_for
from dowse.retrieval.query import analyze

LONG_FLAG = re.compile(r"--[A-Za-z0-9][\w-]*")
"""A literal that is one long flag, as `pool.literal_rows` takes it."""


def git_dir(repos: Path, repo: str) -> Path:
    name = repo.replace("/", "__")
    for cand in (repos / name, repos / name.lower()):
        if (cand / ".git").is_dir():
            return cand / ".git"
        if cand.is_dir():
            return cand
    raise SystemExit(f"error: no clone of {repo} in {repos}")


def holding(gd: Path, commit: str, forms: list[str]) -> list[str]:
    """The files at `commit` holding any of `forms` verbatim."""
    args = ["git", "--git-dir", str(gd), "grep", "-l", "-F"]
    for form in forms:
        args += ["-e", form]
    out = subprocess.run([*args, commit], capture_output=True, text=True, errors="replace")
    return [line.split(":", 1)[1] for line in out.stdout.splitlines() if ":" in line]


def show(gd: Path, commit: str, path: str) -> str:
    out = subprocess.run(
        ["git", "--git-dir", str(gd), "show", f"{commit}:{path}"],
        capture_output=True,
        text=True,
        errors="replace",
    )
    return out.stdout


def code_file(path: str) -> str | None:
    language = language_for(path)
    if language is None or is_documentation(path, language) or is_test_path(path):
        return None
    return language


def rank(found: list[str], wanted: set[str]) -> int | None:
    return next((i for i, p in enumerate(found, 1) if p in wanted), None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--repo", help="only this repository (owner/name)")
    ap.add_argument("--pred", type=Path, help="predictions of `dowse eval swebench`")
    ap.add_argument("--method", default="ask")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    preds: dict[str, list[str]] = {}
    if a.pred:
        for line in a.pred.read_text().splitlines():
            row = json.loads(line)
            if row.get("method") == a.method:
                preds[row["instance_id"]] = row.get("found_files") or []
    rows: list[dict[str, Any]] = []
    for line in a.dataset.read_text().splitlines():
        inst = json.loads(line)
        if a.repo and inst["repo"] != a.repo:
            continue
        if a.pred and inst["instance_id"] not in preds:
            continue
        literals = analyze(inst["problem_statement"]).literals
        flags = [x[2:] for x in literals if LONG_FLAG.fullmatch(x)]
        if not flags:
            continue
        gd = git_dir(a.repos, inst["repo"])
        commit = inst["base_commit"]
        gold = set(inst["gold_files"])
        found = preds.get(inst["instance_id"], [])
        for flag in flags:
            words, sites = set(), set()
            for path in holding(gd, commit, flag_forms(flag)):
                language = code_file(path)
                if language is None:
                    continue
                text = show(gd, commit, path)
                if f"--{flag}" in text or f'"{flag}"' in text:
                    words.add(path)
                if flag_sites(text, language, flag):
                    sites.add(path)
            rows.append(
                {
                    "instance": inst["instance_id"],
                    "flag": flag,
                    "flags": len(flags),
                    "word_files": len(words),
                    "site_files": sorted(sites),
                    "gold_sites": sorted(sites & gold),
                    "gold_words_only": sorted((words - sites) & gold),
                    "site_rank": rank(found, sites) if found else None,
                    "gold_rank": rank(found, gold) if found else None,
                }
            )
    with_sites = [r for r in rows if r["site_files"]]
    totals = {
        "flags": len(rows),
        "instances": len({r["instance"] for r in rows}),
        "flags_with_sites": len(with_sites),
        "flags_held_by_at_most_3_files": sum(1 for r in rows if 0 < r["word_files"] <= 3),
        "flags_whose_sites_hold_a_fixed_file": sum(1 for r in with_sites if r["gold_sites"]),
        "flags_whose_word_only_files_hold_a_fixed_file": sum(
            1 for r in rows if r["gold_words_only"]
        ),
        "instances_with_a_fixed_site": len({r["instance"] for r in rows if r["gold_sites"]}),
    }
    if a.json:
        print(json.dumps({"totals": totals, "flags": rows}, indent=2))
        return
    for r in rows:
        print(
            f"{r['instance']:32} --{r['flag']:24} words {r['word_files']:3} "
            f"sites {len(r['site_files']):2} fixed {','.join(r['gold_sites']) or '-'}"
            + (f"  rank site {r['site_rank']} fixed {r['gold_rank']}" if a.pred else "")
        )
    for k, v in totals.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
