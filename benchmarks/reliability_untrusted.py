"""Untrusted repositories for benchmarks/reliability.py: the untrusted case (a planted
`.dowse` naming another directory, a planted `include_secrets`), the gitexec case (a
repository whose git config, and a `GIT_*` environment, name commands that create marker
files) and the swap case (files swapped for symlinks leading out of the root while
`dowse index` runs).

Invariants of the figures: a command "touched" the other directory when its output or the
index names that directory's unique content, or the directory's listing (names, sizes,
mtimes) changed; a vector "fired" when its marker file exists; outside content "reached"
the index when any text of any table holds the outside file's unique name.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reliability_proc import REPO, Ran, dowse, mcp_calls
from reliability_secrets import _values_in_index

GIT_ID = {
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
}


def _git(root: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    """Plain git, as a user would run it (it runs what the repository configures)."""
    return subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ID, **(env or {})},
        check=check,
        stdin=subprocess.DEVNULL,
        timeout=60,
    ).stdout


def _commit(root: Path, message: str) -> None:
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", message)


def _listing(root: Path) -> list[tuple[str, int, int]]:
    """Every entry under `root` with its size and mtime: a write anywhere changes it."""
    out = []
    for dirpath, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            st = os.lstat(os.path.join(dirpath, name))
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            out.append((rel, st.st_size, st.st_mtime_ns))
    return sorted(out)


def _copy_example(dest: Path) -> Path:
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(REPO / "fixtures" / "example", dest, ignore=shutil.ignore_patterns(".dowse"))
    return dest


def _edit_manifest(index_dir: Path, **changes: Any) -> None:
    path = index_dir / "manifest.json"
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if key == "walk":
            data["walk"] = {**data["walk"], **value}
        else:
            data[key] = value
    path.write_text(json.dumps(data))


# -- a planted index ----------------------------------------------------------------------------


def _planted_commands(tree: Path, marker: str) -> list[tuple[str, list[str], Path | None]]:
    """(name, argv, cwd) of every CLI command pointed at `tree`, or run below it."""
    q = f"where is {marker} defined?"
    p = str(tree)
    return [
        ("index", ["index", p, "--no-embed", "-q"], None),
        ("status", ["status", p], None),
        ("search", ["search", marker, "--path", p, "--json"], None),
        ("symbol", ["symbol", marker, "--path", p, "--json"], None),
        ("ask", ["ask", q, "--path", p, "--mode", "retrieval"], None),
        ("ask --format agent", ["ask", q, "--path", p, "--format", "agent"], None),
        ("explore", ["explore", p, "--json"], None),
        ("status, run below it", ["status"], tree / "sub"),
        ("search, run below it", ["search", marker, "--json"], tree / "sub"),
        ("symbol, run below it", ["symbol", marker, "--json"], tree / "sub"),
        ("ask --format agent, run below it", ["ask", q, "--format", "agent"], tree / "sub"),
    ]


def untrusted_case(
    args: argparse.Namespace, work: Path, rng: random.Random, log: Callable[[str], None]
) -> dict[str, Any]:
    marker = f"victim_only_{rng.getrandbits(40):010x}"
    victim = _copy_example(work / "untrusted-victim")
    (victim / "victim_marker.py").write_text(f"def {marker}():\n    return 'victim'\n")
    before = _listing(victim)
    # The tarball: its own small tree, indexed here, then its manifest rewritten as a
    # shipped one would be: another root, include_secrets on.
    template = work / "untrusted-template"
    shutil.rmtree(template, ignore_errors=True)
    (template / "sub").mkdir(parents=True)
    (template / "t.py").write_text('def tarball_only():\n    """Shipped."""\n    return 1\n')
    (template / "sub" / "u.py").write_text("def below():\n    return 2\n")
    built = dowse("index", str(template), "--no-embed", "-q")
    if built.code:
        raise SystemExit(f"untrusted: index failed: {built.err}")
    _edit_manifest(template / ".dowse", root=str(victim), walk={"include_secrets": True})

    def touched(ran_texts: list[str], tree: Path) -> bool:
        from dowse.errors import DowseError

        in_index: set[str] = set()
        try:
            in_index = _values_in_index(tree / ".dowse", [marker, "shop/"])
        except DowseError:
            pass
        return (
            any(marker in t or "shop/" in t for t in ran_texts)
            or bool(in_index)
            or _listing(victim) != before
        )

    rows: list[dict[str, Any]] = []
    for n, (name, argv, _) in enumerate(_planted_commands(template, marker)):
        tree = work / f"untrusted-{n}"
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(template, tree)
        argv_here = [str(tree) if a == str(template) else a for a in argv]
        cwd = tree / "sub" if name.endswith("run below it") else None
        ran = dowse(*argv_here, cwd=cwd, timeout=600)
        rows.append(
            {
                "command": f"dowse {name}",
                "touched_other": touched([ran.out, _without_warning(ran.err, victim)], tree),
                "said": ran.last_line.replace(str(tree), "…")[:160] if ran.code else "ok",
                "traceback": ran.traceback,
            }
        )
    # An MCP session on a planted tree: every tool, then a re-index and the tools again.
    tree = work / "untrusted-mcp"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(template, tree)
    tools: list[tuple[str, dict[str, Any]]] = [
        ("status", {}),
        ("search", {"query": marker}),
        ("symbol", {"name": marker}),
        ("ask", {"question": f"where is {marker} defined?"}),
        ("explore", {}),
        ("reindex", {}),
        ("search", {"query": marker}),
    ]
    answers = mcp_calls(tree, tools)
    mcp_touched = [touched([text], tree) for _, text in answers]
    rows.append(
        {
            "command": f"dowse serve: {len(tools)} tool calls",
            "touched_other": any(mcp_touched),
            "said": "; ".join(
                f"{t}: {'error' if e else 'ok'}"
                for (t, _), (e, _) in zip(tools, answers, strict=True)
            ),
            "traceback": any("Traceback" in text for _, text in answers),
        }
    )
    log(f"untrusted: {sum(r['touched_other'] for r in rows)} of {len(rows)} touched the victim")
    secrets = _planted_secrets(work, rng, log)
    forged = _planted_rows(work, rng, log)
    return {
        "commands": len(rows),
        "touched_other": sum(r["touched_other"] for r in rows),
        "tracebacks": sum(r["traceback"] for r in rows),
        "victim_indexed": (victim / ".dowse").exists(),
        "results": rows,
        "planted_secrets": secrets,
        "planted_rows": forged,
    }


def _without_warning(err: str, victim: Path) -> str:
    """stderr without the lines that only name the other directory (the warning that the
    planted index was ignored): naming it is not reading it."""
    return "\n".join(ln for ln in err.splitlines() if str(victim) not in ln)


def _planted_secrets(work: Path, rng: random.Random, log: Callable[[str], None]) -> dict[str, Any]:
    """An index built with --include-secrets on another machine (another signing key),
    shipped with its tree: `dowse index`, `explore` and an MCP reindex here must drop the
    secrets it holds and read none anew."""
    from reliability_secrets import _alnum

    tree = work / "untrusted-secrets"
    shutil.rmtree(tree, ignore_errors=True)
    (tree / "conf").mkdir(parents=True)
    values = [_alnum(rng, 32) for _ in range(3)]
    (tree / "app.py").write_text("def main():\n    return 0\n")
    (tree / "conf" / "secrets.yaml").write_text(f"db_password: {values[0]}\n")
    (tree / "settings.py").write_text(f'SECRET_KEY = "{values[1]}"\n')
    (tree / "conf" / "signing.pem").write_text(
        f"-----BEGIN RSA PRIVATE KEY-----\n{values[2]}\n-----END RSA PRIVATE KEY-----\n"
    )
    elsewhere = {"DOWSE_CACHE_DIR": str(work / "untrusted-another-machine")}
    shipped = dowse("index", str(tree), "--no-embed", "-q", "--include-secrets", env=elsewhere)
    control = len(_values_in_index(tree / ".dowse", values)) if shipped.code == 0 else 0
    template = work / "untrusted-secrets-template"
    shutil.rmtree(template, ignore_errors=True)
    shutil.copytree(tree, template)
    runs: list[tuple[str, Ran | None, str]] = []
    ran = dowse("index", str(tree), "--no-embed", "-q")
    runs.append(("dowse index", ran, ran.out))
    shutil.rmtree(tree)
    shutil.copytree(template, tree)
    ran = dowse("explore", str(tree), "--json")
    runs.append(("dowse explore", ran, ran.out))
    shutil.rmtree(tree)
    shutil.copytree(template, tree)
    answers = mcp_calls(tree, [("reindex", {}), ("explore", {}), ("search", {"query": "password"})])
    runs.append(("dowse serve: reindex, explore, search", None, "\n".join(t for _, t in answers)))
    reached = 0
    for _, _, text in runs:
        in_output = {v for v in values if v in text}
        # The index after each (explore and the server refresh it too).
        in_index = (
            _values_in_index(tree / ".dowse", values) if (tree / ".dowse").exists() else set()
        )
        reached += len(in_output | in_index)
    asked_again = sum("--include-secrets" in (r.err if r else "") for _, r, _ in runs)
    log(f"untrusted: planted include_secrets: {reached} secrets reached an index or output")
    return {
        "seeded": len(values),
        "in_shipped_index": control,
        "runs": [name for name, _, _ in runs],
        "reached": reached,
        "asked_for_the_flag": asked_again,
    }


def _planted_rows(work: Path, rng: random.Random, log: Callable[[str], None]) -> dict[str, Any]:
    """An index built on another machine (another signing key) for the very directory the
    tree is unpacked in, whose rows show a file's text that the file no longer holds,
    under the file's size and mtime: outputs that serve the shipped text."""
    tree = work / "untrusted-rows"
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    shown = f"shipped_{rng.getrandbits(40):010x}"
    real = f"ondisk_{rng.getrandbits(44):011x}"
    assert len(shown) == len(real)
    path = tree / "auth.py"
    path.write_text(f"def check(user):\n    return '{shown}'\n")
    elsewhere = {"DOWSE_CACHE_DIR": str(work / "untrusted-another-machine")}
    if dowse("index", str(tree), "--no-embed", "-q", env=elsewhere).code:
        raise SystemExit("untrusted: the shipped index could not be built")
    st = path.stat()
    path.write_text(f"def check(user):\n    return '{real}'\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    p = str(tree)
    runs = [
        dowse("search", "check user", "--path", p, "--json", "--no-refresh"),
        dowse("search", "check user", "--path", p, "--json"),
        dowse("symbol", "check", "--path", p, "--json"),
        dowse("ask", "what does check return?", "--path", p, "--format", "agent"),
        dowse("explore", p, "--json"),
    ]
    texts = [r.out for r in runs]
    texts += [
        t
        for _, t in mcp_calls(
            tree,
            [("search", {"query": "check user"}), ("ask", {"question": "what does check return?"})],
        )
    ]
    after = dowse("index", p, "--no-embed", "-q")
    served = dowse("search", "check user", "--path", p, "--json")
    texts += [served.out]
    n = sum(shown in t for t in texts)
    log(f"untrusted: a shipped index of this very root: {n} outputs served its rows")
    return {
        "outputs": len(texts),
        "served_shipped_text": n,
        "tracebacks": sum(r.traceback for r in [*runs, after, served]),
        "real_text_after_index": real in served.out,
        "index_said": after.last_line[:200],
    }


# -- git config that runs commands ------------------------------------------------------------


def _sign_head(root: Path) -> None:
    """HEAD rewritten with a (bogus) PGP signature: `git log --show-signature` hands it
    to gpg.program."""
    raw = _git(root, "cat-file", "commit", "HEAD")
    headers, _, message = raw.partition("\n\n")
    sig = " -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----"
    signed = f"{headers}\ngpgsig{sig}\n\n{message}"
    sha = subprocess.run(
        ["git", "-C", str(root), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=signed,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    _git(root, "update-ref", "HEAD", sha)


HOOKS = (
    "post-index-change",
    "reference-transaction",
    "post-checkout",
    "pre-commit",
    "post-commit",
    "pre-auto-gc",
    "fsmonitor-watchman",
)


def gitexec_case(
    args: argparse.Namespace, work: Path, rng: random.Random, log: Callable[[str], None]
) -> dict[str, Any]:
    repo = _copy_example(work / "gitexec")
    markers = work / "gitexec-markers"
    bin_dir = work / "gitexec-bin"
    for d in (markers, bin_dir):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)

    def script(vector: str) -> str:
        # A plain file name: git runs some of these through the shell.
        path = bin_dir / (re.sub(r"[^A-Za-z0-9]+", "_", vector) + ".sh")
        path.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(markers / vector))}\ncat >/dev/null\n")
        path.chmod(0o755)
        return str(path)

    def shell(vector: str, tail: str = "cat") -> str:
        return f"touch {shlex.quote(str(markers / vector))}; {tail}"

    (repo / ".gitattributes").write_text("*.py filter=x diff=x\n*.md diff=y\n")
    _git(repo, "init", "-q", "-b", "main")
    _commit(repo, "Add the shop")
    with open(repo / "shop" / "payments.py", "a") as fh:
        fh.write("\n\ndef refund():\n    return None\n")
    _commit(repo, "Refund payments")
    _sign_head(repo)
    hooks = work / "gitexec-hooks"
    shutil.rmtree(hooks, ignore_errors=True)
    hooks.mkdir()
    hook = script("hooks (core.hooksPath)")
    for name in HOOKS:
        (hooks / name).write_bytes(Path(hook).read_bytes())
        (hooks / name).chmod(0o755)
    config: dict[str, list[tuple[str, str]]] = {
        "core.fsmonitor": [("core.fsmonitor", shell("core.fsmonitor", "echo"))],
        "log.showSignature + gpg.program": [
            ("log.showSignature", "true"),
            ("gpg.program", script("log.showSignature + gpg.program")),
            ("gpg.ssh.program", script("log.showSignature + gpg.program")),
        ],
        "filter driver": [
            ("filter.x.clean", shell("filter driver")),
            ("filter.x.smudge", shell("filter driver")),
            ("filter.x.process", shell("filter driver")),
            ("filter.x.required", "true"),
        ],
        "diff driver (command, textconv, diff.external)": [
            ("diff.x.command", script("diff driver (command, textconv, diff.external)")),
            ("diff.y.textconv", script("diff driver (command, textconv, diff.external)")),
            ("diff.external", script("diff driver (command, textconv, diff.external)")),
        ],
        "hooks (core.hooksPath)": [("core.hooksPath", str(hooks))],
        "core.pager": [
            ("core.pager", shell("core.pager")),
            ("pager.log", shell("core.pager")),
            ("pager.status", shell("core.pager")),
        ],
        "core.sshCommand": [("core.sshCommand", script("core.sshCommand"))],
    }
    for settings in config.values():
        for key, value in settings:
            _git(repo, "config", key, value)
    # Another repository, for GIT_DIR: its commits must not show in dowse's answers.
    other = work / "gitexec-other"
    shutil.rmtree(other, ignore_errors=True)
    other.mkdir()
    (other / "elsewhere.py").write_text("def elsewhere():\n    return 0\n")
    _git(other, "init", "-q", "-b", "main")
    elsewhere_subject = f"elsewhere-only commit {rng.getrandbits(32):08x}"
    _commit(other, elsewhere_subject)
    environment: dict[str, dict[str, str]] = {
        "GIT_CONFIG_COUNT (core.fsmonitor)": {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "core.fsmonitor",
            "GIT_CONFIG_VALUE_0": shell("GIT_CONFIG_COUNT (core.fsmonitor)", "echo"),
        },
        "GIT_CONFIG_PARAMETERS (gpg.program)": {
            "GIT_CONFIG_PARAMETERS": (
                f"'gpg.program'='{script('GIT_CONFIG_PARAMETERS (gpg.program)')}' "
                "'log.showsignature'='true'"
            )
        },
        "GIT_EXTERNAL_DIFF": {"GIT_EXTERNAL_DIFF": script("GIT_EXTERNAL_DIFF")},
        "GIT_PAGER": {"GIT_PAGER": shell("GIT_PAGER")},
        "GIT_SSH_COMMAND": {"GIT_SSH_COMMAND": script("GIT_SSH_COMMAND")},
    }
    redirect = {
        "GIT_DIR": str(other / ".git"),
        "GIT_WORK_TREE": str(other),
        "GIT_INDEX_FILE": str(other / ".git" / "index"),
    }

    def dirty() -> None:
        # A modified file for `git status`, and a stat-dirty one it must hash again
        # (through the clean filter).
        with open(repo / "shop" / "pricing.py", "a") as fh:
            fh.write("# wip\n")
        stamp = time.time() + rng.randrange(1, 10_000)
        os.utime(repo / "shop" / "payments.py", (stamp, stamp))

    def fired() -> set[str]:
        return {p.name for p in markers.iterdir()}

    def clear() -> None:
        for p in markers.iterdir():
            p.unlink()

    # Live with plain git: the commands dowse runs, as a user would run them.
    merged_env = {k: v for e in environment.values() for k, v in e.items()}
    merged_env.pop("GIT_CONFIG_PARAMETERS")  # one config injection at a time
    for env in (None, merged_env, environment["GIT_CONFIG_PARAMETERS (gpg.program)"]):
        dirty()
        for argv in (
            ["status"],
            ["log", "-1"],
            ["-p", "log", "-1"],
            ["diff"],
            ["log", "-p", "-2"],
            ["checkout", "-q", "-b", "gitexec-live"],  # hooks
            ["checkout", "-q", "main"],
            ["branch", "-q", "-D", "gitexec-live"],
            ["ls-remote", "ssh://git@example.invalid/x.git"],  # the ssh command, offline
        ):
            try:
                _git(repo, *argv, env=env, check=False)
            except subprocess.TimeoutExpired:
                pass  # ssh waiting on an unresolvable host: the marker says if it ran
    live = fired()
    clear()
    q = "where are payments refunded?"
    commands = [
        ("index", ["index", str(repo), "--no-embed", "-q"]),
        ("explore --depth deep", ["explore", str(repo), "--depth", "deep", "--json"]),
        ("ask", ["ask", q, "--path", str(repo), "--json", "--mode", "retrieval"]),
    ]
    rows: list[dict[str, Any]] = []
    for label, env in (
        ("repository config", None),
        *((f"environment {name}", e) for name, e in environment.items()),
        ("environment GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE", redirect),
    ):
        for name, argv in commands:
            dirty()
            ran = dowse(*argv, env=env, timeout=600)
            rows.append(
                {
                    "command": f"dowse {name}",
                    "vectors": label,
                    "exit": ran.code,
                    "markers": sorted(fired()),
                    "other_repository": elsewhere_subject in ran.out or "elsewhere.py" in ran.out,
                    "traceback": ran.traceback,
                    "said": ran.last_line[:160] if ran.code else "ok",
                }
            )
            clear()
    vectors = [*config, *environment]
    log(
        f"gitexec: {len(live)} of {len(vectors)} vectors fire with plain git; "
        f"{sum(len(r['markers']) for r in rows)} markers after {len(rows)} dowse runs"
    )
    return {
        "vectors": vectors,
        "live_with_plain_git": sorted(live),
        "runs": len(rows),
        "markers": sum(len(r["markers"]) for r in rows),
        "other_repository_read": sum(r["other_repository"] for r in rows),
        "failed": sum(r["exit"] != 0 or r["traceback"] for r in rows),
        "results": rows,
    }


# -- symlinks swapped in while indexing ---------------------------------------------------------


def _swapper(
    tree: Path, outside: Path, stop: threading.Event, count: Counter[str], rng: random.Random
) -> None:
    """Swap files for symlinks to `outside` and back, atomically (rename over), as fast as
    it goes: some are links when listed and files when read, or the other way round."""
    files = sorted(tree.glob("m*.py"))
    original = {p: p.read_bytes() for p in files}
    while not stop.is_set():
        path = rng.choice(files)
        tmp = path.with_name(f".swap-{path.name}")
        if path.is_symlink():
            tmp.write_bytes(original[path])
            count["back to a file"] += 1
        else:
            tmp.unlink(missing_ok=True)
            os.symlink(outside, tmp)
            count["to a symlink"] += 1
        os.replace(tmp, path)
    for path, data in original.items():  # the tree as it was
        tmp = path.with_name(f".swap-{path.name}")
        tmp.unlink(missing_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)


def swap_case(
    args: argparse.Namespace, work: Path, rng: random.Random, log: Callable[[str], None]
) -> dict[str, Any]:
    tree = work / "swap"
    outside_dir = work / "swap-outside"
    for d in (tree, outside_dir):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    marker = f"outside_only_{rng.getrandbits(40):010x}"
    outside = outside_dir / "secret.py"
    outside.write_text(
        "".join(f"def {marker}_{i}():\n    return 'outside {i}'\n\n\n" for i in range(40))
    )
    for i in range(args.swap_files):
        (tree / f"m{i}.py").write_text(
            f'"""Module {i}."""\n\n\ndef inside_{i}(value):\n    return value + {i}\n'
        )
    stop = threading.Event()
    swaps: Counter[str] = Counter()
    runs: list[Ran] = []
    reached_runs = 0
    rows_with_outside = 0
    thread = threading.Thread(
        target=_swapper, args=(tree, outside, stop, swaps, random.Random(rng.random()))
    )
    thread.start()
    try:
        for _ in range(args.swap_runs):
            ran = dowse("index", str(tree), "--no-embed", "-q", timeout=600)
            runs.append(ran)
            if ran.code == 0:
                n = _rows_holding(tree / ".dowse", marker)
                rows_with_outside += n
                reached_runs += n > 0
    finally:
        stop.set()
        thread.join()
    # Serving re-checks confinement: with every file swapped for a link after the index
    # run, the answers (no refresh, so the index still lists them) show no outside text.
    for path in sorted(tree.glob("m*.py")):
        path.unlink()
        os.symlink(outside, path)
    served = [
        dowse("search", marker, "--path", str(tree), "--json", "--no-refresh"),
        dowse(
            "ask",
            "which function returns value plus its index?",
            "--path",
            str(tree),
            "--mode",
            "retrieval",
            "--no-refresh",
        ),
        dowse("search", "inside value", "--path", str(tree), "--json"),  # refreshes first
    ]
    served_outside = sum(marker in r.out for r in served)
    failed = [r.last_line for r in [*runs, *served] if r.code or r.traceback]
    log(
        f"swap: {sum(swaps.values())} swaps over {len(runs)} index runs; "
        f"{rows_with_outside} index rows held outside text"
    )
    return {
        "runs": len(runs),
        "files": args.swap_files,
        "swaps": dict(swaps),
        "runs_with_outside_text": reached_runs,
        "rows_with_outside_text": rows_with_outside,
        "served_outputs_with_outside_text": served_outside,
        "served_commands": len(served),
        "failed": failed[:5],
        "index_seconds": round(sum(r.seconds for r in runs) / max(len(runs), 1), 1),
    }


def _rows_holding(index_dir: Path, marker: str) -> int:
    """Rows of any snapshot table with `marker` in a text."""
    from dowse.indexer.store import SNAPSHOT_TABLES, Store

    store = Store.open(index_dir)
    n = 0
    for name in SNAPSHOT_TABLES:
        for row in store.rows(name):
            cells = [c for v in row.values() for c in (v if isinstance(v, list) else [v])]
            n += any(isinstance(c, str) and marker in c for c in cells)
    return n
