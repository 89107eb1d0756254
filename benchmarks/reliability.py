"""Reliability: crash, concurrency, hostile input, fuzzing, secrets, a full disk and a
damaged index, each with figures. Every case drives the real `dowse` CLI as subprocesses
(and `dowse serve` through the MCP client); the index is inspected in-process with
`indexer.store.Store`.

Usage:
    python benchmarks/reliability.py --repo PATH [--embed-repo PATH] [--work DIR]
        [--cases crash,concurrency,hostile,fuzz,secrets,diskfull,corrupt,untrusted,gitexec,swap,
                 history,inputs,forge]
        [--cold-kills 4] [--kills 34] [--embed-cold-kills 2] [--embed-kills 10]
        [--seconds 90] [--fuzz-examples 300] [--swap-runs 10] [--swap-files 200]
        [--tmpfs] [--seed 1]
        [--json] [--write-results benchmarks/RESULTS.md]

`--repo` and `--embed-repo` take a git work tree, a bare clone (its HEAD is written out
with `git archive`, the clone is only read) or a plain directory (copied); each case works
on its own copy under `--work`. `--embed-repo` (default: `--repo`) is indexed with
embeddings, so pick a medium one (psf/requests: 550 chunks). The default configuration
takes about 20 minutes on 2 cores with django as `--repo`.

Cases and what each figure means:

- crash: `dowse index` is killed with SIGKILL at a random moment: cold runs from no index,
  incremental runs between two states of the tree (files edited, deleted, added and
  renamed), and runs with embeddings on `--embed-repo` (each of its states has new text to
  embed, so kills land while vectors are written and committed). A quarter of the kills
  fall anywhere in the run (start-up included), the rest once it has connected to
  LanceDB (the lock is held; before that it is importing modules).
  After each kill: `dowse status` and `dowse search` (CLI) answer, the snapshot's
  content and a fixed set of queries equal those of the old or of the new state (each
  state's reference is a fresh `--no-embed` index of that tree in another directory), the
  snapshot is internally consistent, no worker process is left alive, and the next
  `dowse index` completes with the new state.
- concurrency: two `dowse index` loops, four CLI clients (`search`, `ask`, `symbol`) and
  four MCP clients (each its own `dowse serve`, which also re-indexes what changed) on one
  tree that a mutator edits, adds to, deletes from and renames in, for `--seconds`. An
  auditor opens the index over and over and checks the snapshot's consistency. At the
  end, the index must equal a fresh index of the final tree.
- hostile: a generated repository of bad inputs (listed in `hostile_repo`), indexed while
  a thread creates and deletes files, then changed and indexed again; then again with a
  20 MB size limit so that the 10 MB one-line file is read. When run as root, `dowse`
  runs without CAP_DAC_OVERRIDE (capsh) so that unreadable files are unreadable.
- fuzz: the property of tests/test_reliability.py (parser, chunker and content checks on
  random bytes and token soup, per language) with `--fuzz-examples` inputs per language,
  in a subprocess, so that a crash of a grammar counts too.
- secrets: a repository seeded with secret files and tokens inside source; every text
  column of every table is searched for the seeded values (default options, then
  `--include-secrets` as the control that shows the search finds them).
- diskfull: `dowse index` with RLIMIT_FSIZE at several limits (writes fail with EFBIG),
  a read-only index directory (the whole of it, its db/, one table), and with `--tmpfs`
  (root only) an index on a small tmpfs that fills up (ENOSPC).
- corrupt: table files truncated, zeroed or deleted in an index with vectors; `status`
  must report it, no command may print a traceback, a plain `dowse index` must repair it
  or fail in one line (status clean after it, or still reporting the damage), and
  `index --rebuild` must repair it. Damages include garbage over a data file, a manifest
  naming a future format and one naming a table version that does not exist; a plain
  `dowse index` that exits 0 must leave `status` clean (exit 0 while damaged is counted).
- untrusted: a tree shipped with a `.dowse` whose manifest names another directory (and
  switches include_secrets on), for each CLI command pointed at it or run below it and
  for a `dowse serve` session: commands that read or wrote the other directory; and an
  index built with --include-secrets on another machine (another signing key): secrets
  that reach the index or the output after `dowse index`, `explore` and an MCP reindex.
- gitexec: a repository whose .git/config sets each execution vector (core.fsmonitor,
  log.showSignature with gpg.program, filter and diff drivers, hooks, pagers,
  core.sshCommand), then each `GIT_*` environment vector on its own, to a command that
  creates a marker; `dowse index`, `explore --depth deep` and `ask` under each: markers
  created (plain git on the same repository shows which vectors are live).
- swap: `--swap-runs` runs of `dowse index` on `--swap-files` files while a thread swaps
  them for symlinks to a file outside the root and back; index rows holding the outside
  file's text, then answers served after every file became such a link.
- history: a copy of fixtures/example whose git history holds seeded secrets (commit
  subjects and bodies, a blob a later commit removed, a password a later commit
  changed); seeded values stored under .dowse (any table, any file) or printed by
  `index`, `ask` (markdown, JSON, agent), `explore --depth deep` (markdown, JSON) and
  `eval history` (text, JSON).
- inputs: CLI queries and MCP requests at their edges (empty, past 20,000 characters,
  invalid UTF-8, NUL bytes, control characters, unknown fields, a 5,000-character path,
  a wrong type); each must answer or fail in one line, and the server still answers.
- forge: a repository whose docstrings hold fences of 3 to 10 backticks (and tildes)
  before fake "## Files" headings, and whose file names, a package.json script and a
  commit subject hold line breaks (newline, CR, VT, FF, NEL, U+2028, ANSI) before fake
  headings; `ask` (markdown, JSON, agent), `symbol`, `search`, `explore`, `status
  --skipped` and an MCP session: planted lines that pass for dowse's structure (outside
  every fence, or a path in JSON that is no file of the repository).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

# The cases live in reliability_*.py beside this file; its directory is on sys.path when
# it runs as a script, not when the tests load it by path.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from reliability_faults import (  # noqa: E402
    CORRUPTIONS,
    _chmod_tree,
    _fsize_limit,
    corrupt_case,
    diskfull_case,
)
from reliability_forge import (  # noqa: E402
    _real_paths,
    control,
    forge_case,
    forge_repo,
    forged_json,
    forged_lines,
)
from reliability_index import answers, audit, fingerprint, table_heads  # noqa: E402
from reliability_inputs import (  # noqa: E402
    _cli_edges,
    _mcp_edges,
    _restore_modes,
    fuzz_case,
    hostile_case,
    hostile_repo,
    inputs_case,
)
from reliability_kills import CrashRig, crash_case  # noqa: E402
from reliability_load import concurrency_case  # noqa: E402
from reliability_proc import (  # noqa: E402
    dowse,
    group_alive,
    launch,
    mcp_calls,
    reap_group,
    without_dac,
)
from reliability_report import details, method, table, write_results  # noqa: E402
from reliability_secrets import (  # noqa: E402
    _values_in_index,
    _values_on_disk,
    history_case,
    history_repo,
    secrets_case,
    secrets_repo,
)
from reliability_untrusted import gitexec_case, swap_case, untrusted_case  # noqa: E402

# tests/test_reliability.py and tests/test_rebuild.py load this file as `rel` and use
# these helpers as `rel.<name>`.
__all__ = [
    "CORRUPTIONS",
    "CrashRig",
    "_chmod_tree",
    "_cli_edges",
    "_fsize_limit",
    "_mcp_edges",
    "_real_paths",
    "_restore_modes",
    "_values_in_index",
    "_values_on_disk",
    "answers",
    "audit",
    "control",
    "dowse",
    "fingerprint",
    "forge_repo",
    "forged_json",
    "forged_lines",
    "group_alive",
    "history_case",
    "history_repo",
    "hostile_repo",
    "inputs_case",
    "launch",
    "mcp_calls",
    "reap_group",
    "secrets_repo",
    "table_heads",
    "without_dac",
]

CASES = (
    "crash",
    "concurrency",
    "hostile",
    "fuzz",
    "secrets",
    "diskfull",
    "corrupt",
    "untrusted",
    "gitexec",
    "swap",
    "history",
    "inputs",
    "forge",
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Crash, concurrency, bad-input, fuzz, secrets, disk-full, corruption and "
        "untrusted-repository figures for dowse."
    )
    parser.add_argument(
        "--repo",
        type=Path,
        required=True,
        help="git work tree, bare clone or directory: crash and concurrency",
    )
    parser.add_argument(
        "--embed-repo",
        type=Path,
        default=None,
        help="a medium repository for the runs with embeddings and the "
        "disk-full cases (default: --repo)",
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=Path("/tmp/dowse-reliability"),
        help="scratch directory (emptied of earlier runs' copies)",
    )
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated subset")
    parser.add_argument("--cold-kills", type=int, default=4)
    parser.add_argument("--kills", type=int, default=34, help="incremental lexical kills")
    parser.add_argument("--embed-cold-kills", type=int, default=2)
    parser.add_argument("--embed-kills", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=90, help="concurrency run time")
    parser.add_argument("--cli-clients", type=int, default=4)
    parser.add_argument("--mcp-clients", type=int, default=4)
    parser.add_argument("--fuzz-examples", type=int, default=300, help="per language")
    parser.add_argument("--swap-runs", type=int, default=10, help="index runs while swapping")
    parser.add_argument("--swap-files", type=int, default=200, help="files the swapper swaps")
    parser.add_argument(
        "--fsize-limits",
        type=lambda v: [int(x) for x in v.split(",")],
        default=[0, 1024, 16_384, 262_144],
        help="RLIMIT_FSIZE values, bytes",
    )
    parser.add_argument(
        "--tmpfs", action="store_true", help="also fill a small tmpfs (ENOSPC); needs root"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--write-results",
        type=Path,
        default=None,
        metavar="RESULTS.md",
        help="put the table into this file's '## Reliability' section",
    )
    args = parser.parse_args()
    args.embed_repo = args.embed_repo or args.repo
    unknown = set(args.cases.split(",")) - set(CASES)
    if unknown:
        parser.error(f"unknown case(s) {', '.join(sorted(unknown))}; choose from {CASES}")
    args.work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    runners = {
        "crash": crash_case,
        "concurrency": concurrency_case,
        "hostile": hostile_case,
        "fuzz": fuzz_case,
        "secrets": secrets_case,
        "diskfull": diskfull_case,
        "corrupt": corrupt_case,
        "untrusted": untrusted_case,
        "gitexec": gitexec_case,
        "swap": swap_case,
        "history": history_case,
        "inputs": inputs_case,
        "forge": forge_case,
    }
    results: dict[str, Any] = {}
    started = time.monotonic()
    for name in CASES:
        if name in args.cases.split(","):
            t = time.monotonic()
            results[name] = runners[name](args, args.work, random.Random(rng.random()), log)
            results[name]["case_seconds"] = round(time.monotonic() - t, 1)
    minutes = (time.monotonic() - started) / 60
    command = "python benchmarks/reliability.py " + " ".join(sys.argv[1:])
    (args.work / "results.json").write_text(json.dumps(results, indent=2, default=str))
    log(f"{minutes:.1f} minutes; every figure in {args.work / 'results.json'}")
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    else:
        print(table(results))
        print()
        print(details(results))
    if args.write_results:
        section = "\n".join(
            [
                "## Reliability (`benchmarks/reliability.py`)",
                "",
                f"Measured {dt.date.today().isoformat()} on this machine ({os.cpu_count()} cores), "
                f"{minutes:.0f} minutes in all:",
                "",
                "    " + command,
                "",
                method(args),
                "",
                table(results),
                "",
                details(results),
            ]
        )
        write_results(args.write_results, section)


if __name__ == "__main__":
    main()
