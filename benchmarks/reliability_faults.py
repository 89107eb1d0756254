"""Storage faults for benchmarks/reliability.py: the diskfull case (RLIMIT_FSIZE, a
read-only index directory, a full tmpfs) and the corrupt case (table files damaged in an
index with vectors, then `index --rebuild`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reliability_index import fingerprint
from reliability_proc import REPO, Ran, dowse, without_dac
from reliability_trees import States, materialize

from dowse.indexer.store import Store

# -- a full disk, a read-only index ------------------------------------------------------------


def _fsize_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def _chmod_tree(path: Path, writable: bool) -> None:
    for dirpath, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            target = os.path.join(dirpath, name)
            mode = os.stat(target).st_mode
            os.chmod(target, mode | 0o200 if writable else mode & ~0o222)
    mode = path.stat().st_mode
    path.chmod(mode | 0o200 if writable else mode & ~0o222)


@dataclass
class Fault:
    name: str
    error: str
    one_line: bool
    previous_intact: bool
    reads_ok: bool
    next_index_ok: bool
    traceback: bool

    @property
    def ok(self) -> bool:
        return (
            (self.one_line or not self.error)
            and self.previous_intact
            and self.reads_ok
            and self.next_index_ok
            and not self.traceback
        )


def diskfull_case(
    args: argparse.Namespace, work: Path, rng: random.Random, log: Callable[[str], None]
) -> dict[str, Any]:
    tree = materialize(args.embed_repo, work / "diskfull")
    index_dir = tree / ".dowse"
    states = States(tree, random.Random(rng.random()))
    search_q = states.queries()[0][0]
    faults: list[Fault] = []

    def snapshot() -> str | None:
        return fingerprint(index_dir)

    def settle(k: int) -> str | None:
        states.apply(k)
        ran = dowse("index", str(tree), "--no-embed", "-q")
        if ran.code:
            raise SystemExit(f"diskfull: index failed: {ran.err}")
        return snapshot()

    fp0 = settle(0)
    states.apply(1)
    fp1 = settle(1)
    settle(0)

    def attempt(
        name: str,
        run: Ran,
        readers_prefix: list[str] | None = None,
        restore: Callable[[], None] = lambda: None,
        cold: bool = False,
    ) -> None:
        now = snapshot()
        intact = now == (None if cold else fp0) or (run.code == 0 and now == fp1)
        reads = [
            dowse("search", search_q, "--path", str(tree), "--json", prefix=readers_prefix),
            dowse("status", str(tree), "--json", prefix=readers_prefix),
        ]
        reads_ok = all(r.code == 0 or (cold and "no index" in r.err) for r in reads)
        restore()
        again = dowse("index", str(tree), "--no-embed", "-q")
        faults.append(
            Fault(
                name,
                run.last_line if run.code else "",
                run.one_line_error,
                intact,
                reads_ok,
                again.code == 0 and snapshot() == fp1,
                any(r.traceback for r in (run, *reads, again)),
            )
        )
        settle(0)
        log(f"diskfull: {name}: {faults[-1].error or 'completed'}")

    for limit in args.fsize_limits:
        states.apply(1)
        run = dowse("index", str(tree), "--no-embed", "-q", preexec=_fsize_limit(limit))
        attempt(f"file size limit {limit:,} B (EFBIG), incremental", run)
    shutil.rmtree(index_dir)
    states.apply(1)
    run = dowse("index", str(tree), "--no-embed", "-q", preexec=_fsize_limit(4096))
    attempt("file size limit 4,096 B (EFBIG), cold", run, cold=True)

    prefix = without_dac()
    if os.geteuid() == 0 and not prefix:
        log("diskfull: root without capsh: read-only directories cannot be simulated")
    else:
        for rel in (".", "db", "db/chunks.lance"):
            target = index_dir / rel
            states.apply(1)
            _chmod_tree(target, writable=False)
            run = dowse("index", str(tree), "--no-embed", "-q", prefix=prefix)
            attempt(
                f"read-only {'.dowse/' + rel if rel != '.' else '.dowse/'}",
                run,
                readers_prefix=prefix,
                restore=lambda t=target: _chmod_tree(t, writable=True),
            )  # type: ignore[misc]
    if args.tmpfs:
        faults += _tmpfs_faults(tree, states, work, search_q, log)
    return {
        "faults": [vars(f) | {"ok": f.ok} for f in faults],
        "ok": sum(f.ok for f in faults),
        "cases": len(faults),
        "read_only_as": "root without CAP_DAC_OVERRIDE" if prefix else "current user",
    }


def _tmpfs_faults(
    tree: Path, states: States, work: Path, search_q: str, log: Callable[[str], None]
) -> list[Fault]:
    """An index on a small tmpfs that fills up (ENOSPC): root only."""
    mount = work / "tmpfs"
    mount.mkdir(exist_ok=True)
    faults: list[Fault] = []
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)], capture_output=True
    ).returncode:
        log("diskfull: cannot mount a tmpfs here (root only): skipped")
        return faults
    try:
        index_dir = mount / "index"
        for free_kb in (4, 64, 512):
            shutil.rmtree(index_dir, ignore_errors=True)
            states.apply(0)
            dowse("index", str(tree), "--no-embed", "-q", "--index-dir", str(index_dir))
            fp0 = fingerprint(index_dir)
            filler = mount / "filler"
            st = os.statvfs(mount)
            with open(filler, "wb") as fh:
                fh.write(b"\0" * max(st.f_bavail * st.f_frsize - free_kb * 1024, 0))
            states.apply(1)
            run = dowse("index", str(tree), "--no-embed", "-q", "--index-dir", str(index_dir))
            intact = fingerprint(index_dir) == fp0 or run.code == 0
            reads = [
                dowse("search", search_q, "--index-dir", str(index_dir), "--json"),
                dowse("status", str(tree), "--index-dir", str(index_dir), "--json"),
            ]
            filler.unlink()
            again = dowse("index", str(tree), "--no-embed", "-q", "--index-dir", str(index_dir))
            faults.append(
                Fault(
                    f"tmpfs with {free_kb} KiB free (ENOSPC), incremental",
                    run.last_line if run.code else "",
                    run.one_line_error,
                    intact,
                    all(r.code == 0 for r in reads),
                    again.code == 0,
                    any(r.traceback for r in (run, *reads, again)),
                )
            )
            log(f"diskfull: {faults[-1].name}: {faults[-1].error or 'completed'}")
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)
        states.apply(0)
    return faults


# -- a damaged index -------------------------------------------------------------------------


def _files(index_dir: Path, pattern: str) -> list[Path]:
    return sorted(index_dir.glob(pattern))


def _truncate(paths: list[Path], keep: float) -> None:
    for path in paths:
        with open(path, "r+b") as fh:
            fh.truncate(int(path.stat().st_size * keep))


def _delete(paths: list[Path]) -> None:
    for path in paths:
        path.unlink()


def _latest(paths: list[Path]) -> list[Path]:
    """The newest version manifest among `paths` (lance numbers them downwards)."""
    return sorted(paths, key=lambda p: p.name)[:1]


CORRUPTIONS: list[tuple[str, bool, Callable[[Path], object]]] = [
    # (what, does it damage the snapshot (status must report it), how)
    (
        "chunks data file truncated to half",
        True,
        lambda d: _truncate(_files(d, "db/chunks.lance/data/*.lance"), 0.5),
    ),
    (
        "symbols data file emptied",
        True,
        lambda d: _truncate(_files(d, "db/symbols.lance/data/*.lance"), 0),
    ),
    ("files data file deleted", True, lambda d: _delete(_files(d, "db/files.lance/data/*.lance"))),
    (
        "vectors data file truncated",
        True,
        lambda d: _truncate(_files(d, "db/vectors.lance/data/*.lance"), 0.3),
    ),
    (
        "file_vectors data file truncated",
        True,
        lambda d: _truncate(_files(d, "db/file_vectors.lance/data/*.lance"), 0.3),
    ),
    ("chunks table directory deleted", True, lambda d: shutil.rmtree(d / "db" / "chunks.lance")),
    (
        "imports version manifest truncated",
        True,
        lambda d: _truncate(_latest(_files(d, "db/imports.lance/_versions/*.manifest")), 0.2),
    ),
    (
        "skipped _versions directory deleted",
        True,
        lambda d: shutil.rmtree(d / "db" / "skipped.lance" / "_versions"),
    ),
    (
        "chunks full-text index file emptied",
        True,
        lambda d: _truncate(_files(d, "db/chunks.lance/_indices/*/part_0_invert.lance"), 0),
    ),
    (
        "symbols B-tree index file deleted",
        True,
        lambda d: _delete(_files(d, "db/symbols.lance/_indices/*/page_data.lance")),
    ),
    (
        "embedding cache data file truncated",
        False,
        lambda d: _truncate(_files(d, "db/embed_cache.lance/data/*.lance"), 0.3),
    ),
    (
        "manifest.json garbled",
        True,
        lambda d: (d / "manifest.json").write_text('{"format": 2, "model": '),
    ),
    ("manifest.json deleted", True, lambda d: (d / "manifest.json").unlink()),
    (
        "chunks data file overwritten with garbage",
        True,
        lambda d: _garble(_files(d, "db/chunks.lance/data/*.lance")),
    ),
    ("manifest.json names a future format", True, lambda d: _edit(d, format=99)),
    (
        "manifest.json names a table version that does not exist",
        True,
        lambda d: _edit(d, versions={**_manifest(d)["versions"], "files": 9999}),
    ),
]


def _garble(paths: list[Path]) -> None:
    for path in paths:
        size = path.stat().st_size
        path.write_bytes(random.Random(size).randbytes(size))


def _manifest(index_dir: Path) -> dict[str, Any]:
    return dict(json.loads((index_dir / "manifest.json").read_text()))


def _edit(index_dir: Path, **changes: Any) -> None:
    (index_dir / "manifest.json").write_text(json.dumps({**_manifest(index_dir), **changes}))


def _move_index(index_dir: Path, root: Path) -> None:
    """The copied index made the index of `root`, as if it had been built there: its
    manifest names `root` and carries this user's signature for it (indexer.trust)."""
    from dowse.indexer.trust import sign

    path = index_dir / "manifest.json"
    data = json.loads(path.read_text())
    data["root"] = str(root)
    data["signature"] = sign(str(root), data.get("walk", {}))
    path.write_text(json.dumps(data))


def corrupt_case(
    args: argparse.Namespace, work: Path, rng: random.Random, log: Callable[[str], None]
) -> dict[str, Any]:
    base = work / "corrupt-base"
    shutil.rmtree(base, ignore_errors=True)
    shutil.copytree(REPO / "fixtures" / "example", base, ignore=shutil.ignore_patterns(".dowse"))
    # Chunk and file vectors both (the default scope embeds file summaries only, and an
    # empty table has no data file to damage): every table has rows.
    built = dowse("index", str(base), "-q", "--embed", "all")
    if built.code:
        raise SystemExit(f"corrupt: index failed: {built.err}")
    edit = ("shop/auth/tokens.py", "\n\ndef after_damage():\n    return 1\n")
    # The expected content after the repair: a fresh index of the edited tree.
    ref_tree = work / "corrupt-ref-tree"
    shutil.rmtree(ref_tree, ignore_errors=True)
    shutil.copytree(base, ref_tree, ignore=shutil.ignore_patterns(".dowse"))
    with open(ref_tree / edit[0], "a") as fh:
        fh.write(edit[1])
    dowse("index", str(ref_tree), "--no-embed", "-q")
    expected = fingerprint(ref_tree / ".dowse")

    def one(n: int) -> dict[str, Any]:
        what, damages, corrupt = CORRUPTIONS[n]
        tree = work / f"corrupt-{n}"
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(base, tree, symlinks=True)
        _move_index(tree / ".dowse", tree)
        corrupt(tree / ".dowse")
        status = dowse("status", str(tree))
        readers = [
            dowse("search", "validate token", "--path", str(tree), "--json"),
            dowse(
                "ask",
                "where are expired tokens rejected?",
                "--path",
                str(tree),
                "--json",
                "--mode",
                "retrieval",
            ),
        ]
        with open(tree / edit[0], "a") as fh:
            fh.write(edit[1])
        incremental = dowse("index", str(tree), "-q")
        # A plain run must repair the index or fail: exit 0 and still damaged is the bug.
        checked = dowse("status", str(tree))
        rebuild = dowse("index", str(tree), "-q", "--rebuild")
        after = dowse("status", str(tree))  # reads every table whole, probes every index
        runs = [status, *readers, incremental, checked, rebuild, after]
        reported = status.one_line_error and ("rebuild" in status.err or "no index" in status.err)

        def said(ran: Ran) -> str:
            return ran.last_line.replace(str(tree), "…") if ran.code else "ok"

        return {
            "case": what,
            "status": said(status),
            "status_reports": reported if damages else status.code == 0,
            "readers": [said(r) for r in readers],
            "incremental_index": said(incremental),
            "incremental_repaired": incremental.code == 0 and checked.code == 0,
            "incremental_failed_one_line": incremental.code != 0 and incremental.one_line_error,
            "exit0_damaged": incremental.code == 0 and checked.code != 0,
            "rebuild_repairs": rebuild.code == 0
            and after.code == 0
            and fingerprint(tree / ".dowse") == expected
            and Store.open(tree / ".dowse").manifest.embedded,
            "tracebacks": sum(r.traceback for r in runs),
            "errors_one_line": all(r.one_line_error for r in runs if r.code),
            "commands": len(runs),
        }

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as pool:  # each case is a chain of processes
        results = list(pool.map(one, range(len(CORRUPTIONS))))
    for r in results:
        log(f"corrupt: {r['case']}: status {r['status'][:90]}")
    return {
        "cases": len(results),
        "status_reports": sum(r["status_reports"] for r in results),
        "rebuild_repairs": sum(r["rebuild_repairs"] for r in results),
        "tracebacks": sum(r["tracebacks"] for r in results),
        "commands": sum(r["commands"] for r in results),
        "one_line": sum(r["errors_one_line"] for r in results),
        "incremental_repaired": sum(r["incremental_repaired"] for r in results),
        "incremental_failed_one_line": sum(r["incremental_failed_one_line"] for r in results),
        "exit0_damaged": sum(r["exit0_damaged"] for r in results),
        "results": results,
    }
