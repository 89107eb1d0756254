"""The report of benchmarks/reliability.py: the figures table, the details under it, the
method paragraph, and the `## Reliability` section of the results file.
"""

from __future__ import annotations

import argparse
import os
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reliability_faults import CORRUPTIONS
from reliability_proc import without_dac

# -- the report -------------------------------------------------------------------------------


def _yes(flag: bool) -> str:
    return "yes" if flag else "**no**"


Figure = tuple[str, str, str]
"""A row of the figures table without its case: (figure, measured, required)."""


def _crash(c: dict[str, Any]) -> list[Figure]:
    phases = ", ".join(f"{n} {p}" for p, n in sorted(c["phases"].items(), key=lambda x: -x[1]))
    return [
        (
            "kills survived / kills (SIGKILL of `dowse index`)",
            f"{c['survived']}/{c['kills']}",
            "all",
        ),
        ("where the kills landed", phases, ""),
        (
            "runs that ended before their kill (checked too, not counted)",
            str(c["ended_before_kill"]),
            "",
        ),
        (
            "index after a kill equals: old state / new state",
            f"{c['matched'].get('old', 0)} / {c['matched'].get('new', 0)}",
            "one of them",
        ),
        ("worker processes still alive 3 s after a kill", str(c["orphans"]), "0"),
        ("next `dowse index` (median wall s)", str(c["recover_median_s"]), "completes"),
    ]


def _concurrency(c: dict[str, Any]) -> list[Figure]:
    cli = sum(v for k, v in c["served"].items() if k.startswith("cli"))
    mcp = sum(v for k, v in c["served"].items() if k.startswith("mcp"))
    return [
        (f"requests served in {c['seconds']:.0f} s: CLI / MCP", f"{cli} / {mcp}", ""),
        ("errors", str(sum(c["errors"].values())), "0"),
        (
            "corrupt states (auditor reads, and the final index)",
            f"{c['corrupt']} of {c['audits']} reads",
            "0",
        ),
        (
            "`dowse index` runs completed / failed",
            f"{c['index_runs'].get('completed', 0)} / {c['index_runs'].get('failed', 0)}",
            "",
        ),
        ("tree changes during the run", str(sum(c["mutations"].values())), ""),
        ("final index = fresh index of the final tree", _yes(c["final_index_equals_fresh"]), "yes"),
    ]


def _hostile(c: dict[str, Any]) -> list[Figure]:
    big = c["big_limit"]["files"]
    return [
        (
            "inputs tried: generated / files created or deleted mid-walk",
            f"{c['generated']} / {sum(c['churned'].values())}",
            "",
        ),
        (f"crashes (exit ≠ 0 or traceback, of {c['runs']} runs)", str(len(c["crashes"])), "0"),
        ("skipped files, each with a reason (listed below)", str(len(c["skipped"])), ""),
        (
            "after changing odd names: index = fresh index",
            _yes(c["incremental_equals_fresh"]),
            "yes",
        ),
        (
            "10 MB one-line files again with --max-file-size 20 MB",
            "; ".join(f"{p}: {what}" for p, what in sorted(big.items()))
            + f" (run {c['big_limit']['seconds']} s)",
            "no crash",
        ),
    ]


def _fuzz(c: dict[str, Any]) -> list[Figure]:
    return [
        (
            f"inputs tried ({c.get('languages', '?')} languages: parse, chunk, "
            "content check, extraction)",
            str(c["inputs"]),
            "",
        ),
        ("crashes", str(len(c["crashes"])), "0"),
    ]


def _secrets(c: dict[str, Any]) -> list[Figure]:
    return [
        ("secret files and in-source tokens seeded", str(c["seeded"]), ""),
        ("seeded secrets found in the index (default options)", str(len(c["found"])), "0"),
        ("… in any file under .dowse/ (every table version)", str(len(c["found_on_disk"])), "0"),
        (
            "… with --include-secrets (control: the search finds them)",
            f"{c['found_with_include_secrets']} of {c['values']}",
            "",
        ),
        (
            "a password literal with no known token format",
            "indexed" if c["generic_password_indexed"] else "not indexed",
            "not indexed",
        ),
    ]


def _diskfull(c: dict[str, Any]) -> list[Figure]:
    return [(f["name"], _fault(f), "all ok") for f in c["faults"]]


def _fault(f: dict[str, Any]) -> str:
    """What one disk-full or read-only fault did, in one cell."""
    said = (
        "one-line error" if f["one_line"] else "completed" if not f["error"] else "**not one line**"
    )
    return (
        f"{said}; previous index "
        f"{'intact' if f['previous_intact'] else '**changed**'}; "
        f"reads {'ok' if f['reads_ok'] else '**fail**'}; "
        f"next index {'ok' if f['next_index_ok'] else '**fails**'}"
    )


def _corrupt(c: dict[str, Any]) -> list[Figure]:
    damaging = sum(1 for _, d, _ in CORRUPTIONS if d)
    return [
        (
            f"status reports the damage ({damaging} snapshot cases) / stays quiet (cache)",
            f"{c['status_reports']}/{c['cases']}",
            "all",
        ),
        ("`index --rebuild` repairs it", f"{c['rebuild_repairs']}/{c['cases']}", "all"),
        (f"tracebacks (of {c['commands']} commands)", str(c["tracebacks"]), "0"),
        ("cases where every error was one line", f"{c['one_line']}/{c['cases']}", "all"),
        (
            "plain `dowse index`: repaired (status clean) / failed in one line",
            f"{c['incremental_repaired']} / {c['incremental_failed_one_line']}",
            f"{c['cases']} in all",
        ),
        ("plain `dowse index` exited 0 with the index still damaged", str(c["exit0_damaged"]), "0"),
    ]


def _untrusted(c: dict[str, Any]) -> list[Figure]:
    p = c["planted_secrets"]
    return [
        (
            "commands (CLI and a `dowse serve` session) that read or wrote the directory "
            "a planted manifest names",
            f"{c['touched_other']}/{c['commands']}",
            "0",
        ),
        ("tracebacks", str(c["tracebacks"]), "0"),
        (
            f"secrets of a shipped --include-secrets index reaching the new index or an "
            f"output ({p['seeded']} seeded, {len(p['runs'])} runs)",
            str(p["reached"]),
            "0",
        ),
    ]


def _gitexec(c: dict[str, Any]) -> list[Figure]:
    return [
        ("execution vectors live with plain git", str(len(c["live_with_plain_git"])), ""),
        (
            f"markers created by dowse (index, explore --depth deep, ask; {c['runs']} runs)",
            str(c["markers"]),
            "0",
        ),
        ("runs that read another repository", str(c["other_repository_read"]), "0"),
    ]


def _swap(c: dict[str, Any]) -> list[Figure]:
    return [
        (
            f"symlink swaps during {c['runs']} `dowse index` runs on {c['files']} files",
            f"{sum(c['swaps'].values()):,}",
            "",
        ),
        (
            "index rows holding the outside file's text / runs with any",
            f"{c['rows_with_outside_text']} / {c['runs_with_outside_text']}",
            "0 / 0",
        ),
        (
            f"answers served with outside text (of {c['served_commands']})",
            str(c["served_outputs_with_outside_text"]),
            "0",
        ),
    ]


def _history(c: dict[str, Any]) -> list[Figure]:
    return [
        (
            f"seeded in git history (commit messages, old blobs; {c['in_git']} in git log)",
            str(c["seeded"]),
            "",
        ),
        (
            f"stored under .dowse or shown by index/ask/explore/eval history "
            f"({c['commands']} commands)",
            f"{len(c['leaked'])}/{c['seeded']}",
            "0",
        ),
    ]


def _inputs(c: dict[str, Any]) -> list[Figure]:
    return [
        (
            "edges answered or refused in one line, no traceback (CLI and MCP)",
            f"{c['clean']}/{c['edges']}",
            "all",
        ),
        (
            "server answers a normal call after every MCP edge",
            _yes(c["server_alive_after"]),
            "yes",
        ),
    ]


_CASES: list[tuple[str, str, Callable[[dict[str, Any]], list[Figure]]]] = [
    ("crash", "crash", _crash),
    ("concurrency", "concurrency", _concurrency),
    ("hostile", "bad input", _hostile),
    ("fuzz", "fuzz", _fuzz),
    ("secrets", "secrets", _secrets),
    ("diskfull", "disk full / read-only", _diskfull),
    ("corrupt", "corrupt index", _corrupt),
    ("untrusted", "untrusted", _untrusted),
    ("gitexec", "gitexec", _gitexec),
    ("swap", "swap", _swap),
    ("history", "history secrets", _history),
    ("inputs", "inputs", _inputs),
]
"""(key in the results, the case the table names, its figures), in the table's order."""


def table(results: dict[str, Any]) -> str:
    """The figures table: one row a figure, of every case the results hold."""
    lines = ["| case | figure | measured | required |", "|---|---|---|---|"]
    for key, case, figures in _CASES:
        if c := results.get(key):
            lines += [f"| {case} | {f} | {m} | {r} |" for f, m, r in figures(c)]
    return "\n".join(lines)


def details(results: dict[str, Any]) -> str:
    out: list[str] = []
    if (c := results.get("crash")) and c["failures"]:
        out += ["Crash failures:", *[f"- {f}" for f in c["failures"]], ""]
    if (c := results.get("concurrency")) and (c["error_messages"] or c["corrupt_examples"]):
        out += [
            "Concurrency errors:",
            *[f"- {n}× {m}" for m, n in c["error_messages"].items()],
            *[f"- corrupt: {m}" for m in c["corrupt_examples"]],
            "",
        ]
    if c := results.get("hostile"):
        if c["crashes"]:
            out += ["Bad-input crashes:", *[f"- {m}" for m in c["crashes"]], ""]
        out += [
            f"Bad input: skipped files and their reasons (`dowse status --skipped`, as "
            f"{c['privileges']}):",
            "",
        ]
        out += _listing([f"{p!r} ({r})" for p, r in c["skipped"]])
        if c["indexed_with_note"]:
            out += ["Indexed as text, with the reason:", ""]
            out += _listing([f"{p} ({n})" for p, n in c["indexed_with_note"]])
    if (c := results.get("fuzz")) and c["crashes"]:
        out += ["Fuzz crashes:", *[f"- {m}" for m in c["crashes"]], ""]
    if c := results.get("secrets"):
        out += ["Secrets seeded, and what the index did with each:", ""]
        out += _listing([f"{p} ({w}: {r})" for p, w, r in c["files"]])
    if c := results.get("inputs"):
        out += ["| input edge | answer |", "|---|---|"]
        out += [f"| {r['edge']} | {r['said'].replace('|', '/')} |" for r in c["results"]]
        out.append("")
    if c := results.get("corrupt"):
        out += ["| damage | `dowse status` says | incremental `dowse index` |", "|---|---|---|"]
        out += [f"| {r['case']} | {r['status']} | {r['incremental_index']} |" for r in c["results"]]
        out.append("")
    return "\n".join(out)


def method(args: argparse.Namespace) -> str:
    """How the faults were made, in a paragraph for the results file."""
    root = os.geteuid() == 0
    read_only = (
        "chmod, with `dowse` run by root without CAP_DAC_OVERRIDE (capsh)"
        if root and without_dac()
        else "chmod"
        if not root
        else "not simulated"
    )
    disk = "RLIMIT_FSIZE (writes fail with EFBIG)" + (
        " and a 64 MB tmpfs filled to a few KiB (ENOSPC)" if args.tmpfs else ""
    )
    return textwrap.fill(
        f"Crash kills are SIGKILL to the `dowse index` process alone, as `kill -9 PID`. "
        f"The disk is made full with {disk}; the index directory read-only with "
        f"{read_only}. Kills with embeddings use all-MiniLM-L6-v2 (minilm-onnx). Every "
        "state a kill is checked against is a fresh `--no-embed` index of the same tree "
        "in another directory. Per-case details (JSON) are kept in `--work`/results.json.",
        width=90,
    )


def _listing(items: list[str]) -> list[str]:
    """A long '; '-separated list as an indented block of short lines."""
    return [
        textwrap.fill(
            "; ".join(items),
            width=92,
            initial_indent="    ",
            subsequent_indent="    ",
            break_long_words=False,
        ),
        "",
    ]


def write_results(path: Path, section: str) -> None:
    """Put `section` (starting with its `## Reliability` heading) into the results file,
    replacing an earlier one; other sections are left as they are."""
    text = path.read_text() if path.exists() else ""
    start = text.find("\n## Reliability")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    else:
        end = text.find("\n## ", start + 1)
        rest = text[end:] if end >= 0 else "\n"
        text = text[:start] + "\n" + section.rstrip("\n") + "\n" + rest
    path.write_text(text)
