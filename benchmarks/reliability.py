"""Reliability: crash, concurrency, hostile input, fuzzing, secrets, a full disk and a
damaged index, each with figures. Every case drives the real `dowse` CLI as subprocesses
(and `dowse serve` through the MCP client); the index is inspected in-process with
`indexer.store.Store`.

Usage:
    python benchmarks/reliability.py --repo PATH [--embed-repo PATH] [--work DIR]
        [--cases crash,concurrency,hostile,fuzz,secrets,diskfull,corrupt]
        [--cold-kills 6] [--kills 36] [--embed-cold-kills 2] [--embed-kills 6]
        [--seconds 90] [--fuzz-examples 300] [--tmpfs] [--seed 1]
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
  must report it, no command may print a traceback, `index --rebuild` must repair it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import hashlib
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from indexer.errors import DowseError, IndexNotFound  # noqa: E402
from indexer.store import SNAPSHOT_TABLES, Store  # noqa: E402

_installed = Path(sys.executable).with_name("dowse")
DOWSE = [str(_installed)] if _installed.exists() else [
    sys.executable, "-c", "from cli import main; main()"]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
CASES = ("crash", "concurrency", "hostile", "fuzz", "secrets", "diskfull", "corrupt")


# -- running dowse -------------------------------------------------------------------------


@dataclass
class Ran:
    args: list[str]
    code: int
    out: str
    err: str
    seconds: float

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.err or "panicked at" in self.err

    @property
    def last_line(self) -> str:
        lines = [ln for ln in self.err.splitlines() if ln.strip()]
        return lines[-1].strip() if lines else ""

    @property
    def one_line_error(self) -> bool:
        """Exit 1 and a single `Error: ...` line on stderr (progress bars aside)."""
        errors = [ln for ln in self.err.splitlines() if ln.startswith("Error: ")]
        return self.code == 1 and len(errors) == 1 and not self.traceback


def without_dac() -> list[str]:
    """A command prefix that drops root's power to ignore file modes, or [] when not root
    (or capsh is missing: then the figures say so)."""
    if os.geteuid() != 0 or shutil.which("capsh") is None:
        return []
    return ["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--", "-c",
            'exec "$0" "$@"']


def dowse(*args: str, timeout: float = 900, prefix: list[str] | None = None,
          preexec: Callable[[], None] | None = None) -> Ran:
    cmd = [*(prefix or []), *DOWSE, *args]
    t = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=ENV, cwd=REPO,
                           timeout=timeout, preexec_fn=preexec, errors="replace")
        code, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = -999, str(exc.stdout or ""), f"timed out after {timeout}s"
    return Ran(list(args), code, out, err, time.perf_counter() - t)


def launch(*args: str) -> subprocess.Popen[bytes]:
    """`dowse ARGS` in a session of its own (its pid is the process group id)."""
    return subprocess.Popen([*DOWSE, *args], env=ENV, cwd=REPO, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def group_alive(pgid: int) -> list[int]:
    """Live (not zombie) processes in a process group, from /proc."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in "ZX":
            pids.append(int(entry))
    return pids


def reap_group(pgid: int, wait_s: float) -> int:
    """Wait up to `wait_s` for a killed run's processes to exit; kill and count those left."""
    deadline = time.monotonic() + wait_s
    while (alive := group_alive(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    return len(alive)


# -- trees -----------------------------------------------------------------------------------


def materialize(source: Path, dest: Path) -> Path:
    """A private copy of `source` at `dest`: a git repository's HEAD (read with `git
    archive`, nothing written to it), or a plain directory copied without its index."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    is_git = subprocess.run(["git", "-C", str(source), "rev-parse", "--git-dir"],
                            capture_output=True).returncode == 0
    if is_git:
        tar = subprocess.run(["git", "-C", str(source), "archive", "--format=tar", "HEAD"],
                             capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
            archive.extractall(dest, filter="tar")
    else:
        shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".dowse", ".git"))
    return dest


class States:
    """Deterministic states of a tree. State 0 is the tree as written; state k > 0 appends
    a probe function (naming k) to some files, adds probe modules, and for odd k deletes
    some files and renames others. Every state has text no earlier state had."""

    def __init__(self, root: Path, rng: random.Random, *, edits: int = 12, deletes: int = 4,
                 adds: int = 4, renames: int = 2) -> None:
        from indexer.languages import language_for

        self.root = root
        candidates = sorted(
            p.relative_to(root).as_posix() for p in root.rglob("*.py")
            if p.is_file() and not p.is_symlink() and 200 < p.stat().st_size < 60_000
            and language_for(p.name) == "python")
        need = edits + deletes + renames
        if len(candidates) < need:
            raise SystemExit(f"{root} has too few Python files ({len(candidates)} < {need})")
        picked = rng.sample(candidates, need)
        self.edited = picked[:edits]
        self.deleted = picked[edits:edits + deletes]
        self.renamed = picked[edits + deletes:]
        self.added = [f"dowse_probe/probe_{i}.py" for i in range(adds)]
        self.original = {p: (root / p).read_bytes() for p in picked}
        self.state = 0
        # Names for queries: the first definition of each edited and deleted file.
        self.names = {p: _first_def(self.original[p]) for p in self.edited + self.deleted}

    def files(self, k: int) -> dict[str, bytes | None]:
        want: dict[str, bytes | None] = {}
        for i, p in enumerate(self.edited):
            want[p] = self.original[p] + (_probe(k, i) if k else b"")
        for p in self.deleted:
            want[p] = None if k % 2 else self.original[p]
        for p in self.renamed:
            target = p[:-3] + "_renamed.py"
            want[p] = None if k % 2 else self.original[p]
            want[target] = self.original[p] if k % 2 else None
        for i, p in enumerate(self.added):
            want[p] = _probe_module(k, i) if k else None
        return want

    def apply(self, k: int) -> None:
        for rel, data in self.files(k).items():
            path = self.root / rel
            if data is None:
                path.unlink(missing_ok=True)
            elif not path.exists() or path.read_bytes() != data:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        if not k:
            with contextlib.suppress(OSError):
                (self.root / "dowse_probe").rmdir()
        self.state = k

    def queries(self) -> tuple[list[str], list[str]]:
        """(search queries, symbol names) whose answers tell the states apart."""
        names = [n for n in self.names.values() if n]
        return (["dowse probe payload slot", *names[:2]],
                ["dowse_probe", *[n for n in (self.names[p] for p in self.deleted) if n][:1]])


def _first_def(source: bytes) -> str:
    m = re.search(rb"^(?:def|class) ([A-Za-z_][A-Za-z0-9_]*)", source, re.M)
    return m.group(1).decode() if m else ""


def _probe(k: int, i: int) -> bytes:
    return (f'\n\ndef dowse_probe_{k}_{i}(payload):\n'
            f'    """Reliability probe {k}.{i}, written by benchmarks/reliability.py."""\n'
            f'    return {{"probe": {k}, "slot": {i}, "payload": payload}}\n').encode()


def _probe_module(k: int, i: int) -> bytes:
    return (f'"""Probe module {i} of state {k}."""\n\n\n'
            f'class DowseProbe{i}State{k}:\n'
            f'    """Carries payload slot {i} for state {k}."""\n\n'
            f'    def payload(self):\n        return {k * 100 + i}\n\n'
            f'    def slot(self):\n        return "slot {i} of {k}"\n').encode()


# -- looking at an index ----------------------------------------------------------------------


def fingerprint(index_dir: Path) -> str | None:
    """A digest of a snapshot's content (files, symbols, chunks, imports, skipped files),
    None when there is no index. Vectors are checked by `audit`, not here."""
    try:
        store = Store.open(index_dir)
    except IndexNotFound:
        return None
    parts: list[Any] = [
        sorted((r["path"], r["hash"], r["n_symbols"], r["n_chunks"], r["parser"])
               for r in store.rows("files")),
        sorted((r["path"], r["qualified_name"], r["kind"], r["start_line"], r["end_line"])
               for r in store.rows("symbols")),
        sorted((r["id"], r["hash"], r["start_line"], r["end_line"])
               for r in store.rows("chunks", ["id", "hash", "start_line", "end_line"])),
        sorted((r["path"], r["module"], r["line"], r["resolved"] or "")
               for r in store.rows("imports")),
        # The index directory is skipped under a different reason when it lies elsewhere.
        sorted((r["path"], r["reason"]) for r in store.rows("skipped")
               if not r["path"].startswith(".dowse")),
    ]
    return hashlib.blake2b(json.dumps(parts).encode(), digest_size=12).hexdigest()


def audit(index_dir: Path) -> list[str]:
    """What is inconsistent inside the snapshot (empty: nothing). A snapshot mixing two
    commits shows here: per-file counts disagree with the rows of the other tables."""
    try:
        store = Store.open(index_dir)
    except IndexNotFound:
        return []
    problems = []
    files = {r["path"]: r for r in store.rows("files", ["path", "n_symbols", "n_chunks"])}
    symbols = Counter(r["path"] for r in store.rows("symbols", ["path"]))
    chunk_rows = store.rows("chunks", ["id", "path", "hash"])
    chunks = Counter(r["path"] for r in chunk_rows)
    for path, row in files.items():
        if symbols.get(path, 0) != row["n_symbols"] or chunks.get(path, 0) != row["n_chunks"]:
            problems.append(f"{path}: counts disagree")
    problems += [f"{p}: rows without a file" for p in (set(symbols) | set(chunks)) - set(files)]
    hashes = {r["id"]: r["hash"] for r in chunk_rows}
    if len(hashes) != len(chunk_rows):
        problems.append("duplicate chunk ids")
    for r in store.rows("vectors", ["id", "hash"]):
        if hashes.get(r["id"]) != r["hash"]:
            problems.append(f"vector {r['id']}: no chunk with its text")
            break
    if store.manifest.embedded and store.count("vectors") != len(chunk_rows):
        problems.append("manifest says embedded, vectors are missing")
    return problems[:5]


def answers(index_dir: Path, queries: tuple[list[str], list[str]]) -> Any:
    """The top hits of fixed lexical searches and symbol look-ups (None: no index)."""
    from retrieval.hybrid import HybridSearcher
    from retrieval.records import SearchOptions
    from retrieval.symbols import find_symbols

    try:
        store = Store.open(index_dir)
    except IndexNotFound:
        return None
    searcher = HybridSearcher(store)  # no embedder: lexical, as with --no-embed
    found: dict[str, Any] = {}
    for q in queries[0]:
        found[q] = [(h.path, h.start_line, h.end_line)
                    for h in searcher.search(q, SearchOptions(limit=5))]
    for name in queries[1]:
        found["symbol " + name] = [(m.path, m.start_line, m.end_line)
                                   for m in find_symbols(store, name, limit=5)]
    return found


def cli_hits(ran: Ran) -> Any:
    """`dowse search --json` as comparable data; None for 'no index'."""
    if ran.code == 1 and "no index" in ran.err:
        return None
    if ran.code != 0:
        return ("error", ran.last_line)
    return [(h["path"], h["start_line"], h["end_line"]) for h in json.loads(ran.out)]


def table_heads(index_dir: Path) -> dict[str, int]:
    """The newest version of each snapshot table (ahead of the manifest mid-write)."""
    import lancedb

    db = lancedb.connect(str(index_dir / "db"))
    have = set(db.list_tables().tables)
    return {name: db.open_table(name).version for name in SNAPSHOT_TABLES if name in have}


# -- crash ---------------------------------------------------------------------------------------


@dataclass
class Reference:
    fingerprint: str | None
    answers: Any
    cli: Any


@dataclass
class CrashTally:
    kills: int = 0
    survived: int = 0
    phases: Counter[str] = field(default_factory=Counter)
    matched: Counter[str] = field(default_factory=Counter)
    orphans: int = 0
    failures: list[str] = field(default_factory=list)
    recover_s: list[float] = field(default_factory=list)


class CrashRig:
    """Kills `dowse index` runs on one tree and checks what each kill leaves."""

    def __init__(self, tree: Path, work: Path, rng: random.Random, *, embed: bool,
                 tally: CrashTally, label: str) -> None:
        self.tree, self.work, self.rng, self.embed = tree, work, rng, embed
        self.index_dir = tree / ".dowse"
        self.states = States(tree, rng)
        self.queries = self.states.queries()
        self.cli_query = self.queries[0][0]
        self.refs: dict[int, Reference] = {}
        self.tally, self.label = tally, label
        self.timing: dict[str, tuple[float, float]] = {}
        """kind -> (seconds until LanceDB is loaded, seconds of the whole run)"""

    def index_args(self, *extra: str) -> list[str]:
        return ["index", str(self.tree), "-q", *extra, *([] if self.embed else ["--no-embed"])]

    def reference(self, k: int) -> Reference:
        """State k's expected content: a fresh lexical index of the tree in that state."""
        if k not in self.refs:
            assert self.states.state == k
            ref_dir = self.work / f"ref-{self.label}-{k}"
            shutil.rmtree(ref_dir, ignore_errors=True)
            ran = dowse("index", str(self.tree), "--no-embed", "-q", "--index-dir", str(ref_dir))
            if ran.code:
                raise SystemExit(f"reference index failed: {ran.err}")
            cli = cli_hits(dowse("search", self.cli_query, "--json", "-n", "5",
                                 "--index-dir", str(ref_dir)))
            self.refs[k] = Reference(fingerprint(ref_dir), answers(ref_dir, self.queries), cli)
            shutil.rmtree(ref_dir)
        return self.refs[k]

    def run_to_end(self, kind: str) -> Ran:
        """An uninterrupted run, timed like the killed ones (LanceDB connected, end)."""
        t = time.monotonic()
        proc = launch(*self.index_args())
        ready = self._wait_ready(proc, t + 900)
        _, err = proc.communicate(timeout=900)
        total = time.monotonic() - t
        if kind not in self.timing:
            self.timing[kind] = (ready - t if ready else total, total)
        return Ran(self.index_args(), proc.returncode, "", err.decode(errors="replace"), total)

    @staticmethod
    def _wait_ready(proc: subprocess.Popen[bytes], deadline: float) -> float | None:
        """When `proc` has connected to LanceDB (its runtime's threads are up: the lock is
        held and the index is about to be read), None if it ended first. Before that
        point a run is importing modules; the kills aimed at the work wait for it."""
        tasks = f"/proc/{proc.pid}/task"
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                for tid in os.listdir(tasks):
                    with contextlib.suppress(OSError), open(f"{tasks}/{tid}/comm") as fh:
                        if fh.read().startswith("lancedb-tokio"):
                            return time.monotonic()
            time.sleep(0.01)
        return None

    def calibrate(self) -> None:
        """Reference states 0 and 1 and the timing of cold and incremental runs."""
        self.states.apply(0)
        self.reference(0)
        shutil.rmtree(self.index_dir, ignore_errors=True)
        self._expect(self.run_to_end("cold"), 0, "calibration (cold)")
        self.states.apply(1)
        self.reference(1)
        self._expect(self.run_to_end("incremental"), 1, "calibration (incremental)")

    def _expect(self, ran: Ran, k: int, what: str) -> None:
        if ran.code or fingerprint(self.index_dir) != self.reference(k).fingerprint:
            raise SystemExit(f"{self.label}: {what} did not give state {k}: {ran.err[-2000:]}")

    def kill(self, kind: str, old: int | None, new: int) -> None:
        """One run towards state `new` (from `old`; None: from no index), killed."""
        before = (self.index_dir / "manifest.json").read_bytes() if old is not None else b""
        ready_s, total_s = self.timing[kind]
        anywhere = self.rng.random() < 0.25
        t = time.monotonic()
        proc = launch(*self.index_args())
        if anywhere:
            delay = self.rng.uniform(0, total_s)
            while proc.poll() is None and time.monotonic() - t < delay:
                time.sleep(0.005)
        else:
            ready = self._wait_ready(proc, t + 900)
            delay = self.rng.uniform(0, max(total_s - ready_s, 0.05))
            while ready and proc.poll() is None and time.monotonic() - ready < delay:
                time.sleep(0.005)
        finished = proc.poll() is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)  # the main process only, as `kill -9 PID`
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
        self.tally.kills += 1
        self.tally.orphans += reap_group(proc.pid, 3.0)
        phase = "run had already ended" if finished else self._phase(before)
        self.tally.phases[phase] += 1
        problems = self._check(old, new)
        if not problems:
            self.tally.survived += 1
        else:
            self.tally.failures.append(f"{self.label} {kind} kill {self.tally.kills} "
                                       f"({phase}): {'; '.join(problems)}")

    def _phase(self, before: bytes) -> str:
        try:
            after = (self.index_dir / "manifest.json").read_bytes()
        except FileNotFoundError:
            after = b""
        if not after:
            return "before the first commit"
        manifest = json.loads(after)
        ahead = any(v > manifest["versions"].get(name, 0)
                    for name, v in table_heads(self.index_dir).items())
        if after == before:
            return "mid-write (uncommitted table versions)" if ahead else "before any write"
        if self.embed and not manifest["embedded"]:
            return "after the lexical commit, embedding"
        return "mid-write after a commit" if ahead else "after the last commit"

    def _check(self, old: int | None, new: int) -> list[str]:
        problems: list[str] = []
        status, search = _parallel(
            lambda: dowse("status", str(self.tree), "--json"),
            lambda: dowse("search", self.cli_query, "--path", str(self.tree), "--json",
                          "-n", "5"))
        for ran in (status, search):
            if ran.traceback or not (ran.code == 0 or (old is None and "no index" in ran.err)):
                problems.append(f"`dowse {ran.args[0]}` exit {ran.code}: {ran.last_line}")
        fp = fingerprint(self.index_dir)
        got = answers(self.index_dir, self.queries)
        refs = {"old": self.reference(old) if old is not None else Reference(None, None, None),
                "new": self.reference(new)}
        match = [name for name, ref in refs.items()
                 if fp == ref.fingerprint and got == ref.answers
                 and (self.embed or cli_hits(search) == ref.cli)]
        if not match:
            problems.append(f"after the kill the index is neither state (content {fp})")
        else:
            self.tally.matched[match[0]] += 1
        if bad := audit(self.index_dir):
            problems.append("inconsistent snapshot: " + "; ".join(bad))
        ran = dowse(*self.index_args())
        self.tally.recover_s.append(ran.seconds)
        if ran.code or ran.traceback:
            problems.append(f"the next index failed: {ran.last_line}")
        elif fingerprint(self.index_dir) != refs["new"].fingerprint:
            problems.append("the next index did not reach the new state")
        elif answers(self.index_dir, self.queries) != refs["new"].answers:
            problems.append("the next index answers differently from a fresh index")
        elif bad := audit(self.index_dir):
            problems.append("inconsistent after the next index: " + "; ".join(bad))
        elif self.embed and not Store.open(self.index_dir).manifest.embedded:
            problems.append("the next index left vectors pending")
        return problems


def _parallel(*jobs: Callable[[], Any]) -> list[Any]:
    out: list[Any] = [None] * len(jobs)

    def run(i: int) -> None:
        out[i] = jobs[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def crash_case(args: argparse.Namespace, work: Path, rng: random.Random,
               log: Callable[[str], None]) -> dict[str, Any]:
    tally = CrashTally()
    runs = [("lexical", args.repo, False, args.cold_kills, args.kills),
            ("embed", args.embed_repo, True, args.embed_cold_kills, args.embed_kills)]
    timing: dict[str, Any] = {}
    for label, source, embed, cold, incremental in runs:
        if not cold and not incremental:
            continue
        tree = materialize(source, work / f"crash-{label}")
        rig = CrashRig(tree, work, rng, embed=embed, tally=tally, label=label)
        log(f"crash/{label}: calibrating on {source}")
        rig.calibrate()  # leaves the index at state 1
        timing[label] = {k: [round(x, 1) for x in v] for k, v in rig.timing.items()}
        log(f"crash/{label}: runs take {timing[label]} s (LanceDB connected, end)")
        current = 1
        for n in range(cold):
            rig.states.apply(0)
            shutil.rmtree(rig.index_dir, ignore_errors=True)
            rig.kill("cold", None, 0)
            current = 0
            log(f"crash/{label}: cold kill {n + 1}/{cold}: {tally.survived}/{tally.kills} survived")
        for n in range(incremental):
            # Lexical runs toggle between states 0 and 1; with embeddings every run goes to
            # a state not seen before, so that it has text to embed.
            new = 1 - current if not embed else n + 2
            rig.states.apply(new)
            rig.reference(new)
            rig.kill("incremental", current, new)
            current = new
            log(f"crash/{label}: incremental kill {n + 1}/{incremental}: "
                f"{tally.survived}/{tally.kills} survived")
    recover = sorted(tally.recover_s)
    return {
        "kills": tally.kills, "survived": tally.survived, "phases": dict(tally.phases),
        "matched": dict(tally.matched), "orphans": tally.orphans,
        "failures": tally.failures, "timing": timing,
        "recover_median_s": round(recover[len(recover) // 2], 1) if recover else None,
    }



# -- concurrency ------------------------------------------------------------------------------


class Tally:
    """Thread-safe counters: requests served and errors (by message) per client kind."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.served: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.messages: Counter[str] = Counter()

    def ok(self, kind: str) -> None:
        with self.lock:
            self.served[kind] += 1

    def fail(self, kind: str, message: str) -> None:
        with self.lock:
            self.errors[kind] += 1
            self.messages[f"{kind}: {message[:160]}"] += 1


class Mutator:
    """Edits, adds, deletes and renames files under a tree until stopped."""

    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root, self.rng = root, rng
        pool = sorted(p for p in root.rglob("*.py")
                      if p.is_file() and 200 < p.stat().st_size < 60_000)
        self.edit = rng.sample(pool, min(30, len(pool)))
        self.original = {p: p.read_bytes() for p in self.edit}
        self.churn = root / "dowse_churn"
        self.churn.mkdir(exist_ok=True)
        self.count = Counter[str]()

    def step(self, gen: int) -> None:
        action = self.rng.choice(["edit", "edit", "add", "delete", "rename"])
        mine = sorted(self.churn.glob("*.py"))
        if action == "edit":
            path = self.rng.choice(self.edit)
            path.write_bytes(self.original[path] + f"\n\ndef churn_{gen}(value):\n"
                             f"    return value + {gen}\n".encode())
        elif action == "add" or not mine:
            action = "add"
            (self.churn / f"module_{gen}.py").write_text(
                f'"""Churned module {gen}."""\n\n\nclass Churn{gen}:\n'
                f"    def value(self):\n        return {gen}\n")
        elif action == "delete":
            self.rng.choice(mine).unlink()
        else:
            source = self.rng.choice(mine)
            source.rename(self.churn / f"renamed_{gen}.py")
        self.count[action] += 1

    def restore(self) -> None:
        for path, data in self.original.items():
            path.write_bytes(data)


def _cli_client(tree: Path, n: int, stop: threading.Event, tally: Tally) -> None:
    requests = [
        ("search", ["search", "churned module value", "--path", str(tree), "--json"]),
        ("ask", ["ask", "where is the value of a churned module returned?", "--path", str(tree),
                 "--json", "--budget", "1500", "--mode", "retrieval"]),
        ("symbol", ["symbol", "Churn", "--path", str(tree), "--json"]),
    ]
    i = n
    while not stop.is_set():
        kind, argv = requests[i % len(requests)]
        i += 1
        ran = dowse(*argv, timeout=300)
        if ran.code == 0 and not ran.traceback:
            json.loads(ran.out)
            tally.ok(f"cli {kind}")
        else:
            tally.fail(f"cli {kind}", f"exit {ran.code}: {ran.last_line}")


async def _mcp_client(tree: Path, n: int, stop: threading.Event, tally: Tally,
                      log_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=DOWSE[0], args=[*DOWSE[1:], "serve", str(tree)],
                                   cwd=str(REPO), env=ENV)
    calls = [("search", {"query": "churned module value", "max_tokens": 3000}),
             ("ask", {"question": "where is the value of a churned module returned?",
                      "max_tokens": 3000}),
             ("symbol", {"name": "Churn", "max_tokens": 2000})]
    i = n
    with open(log_path, "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            while not stop.is_set():
                tool, arguments = calls[i % len(calls)]
                i += 1
                try:
                    result = await asyncio.wait_for(session.call_tool(tool, arguments), 300)
                except Exception as exc:  # noqa: BLE001 - a dead server is an error to count
                    tally.fail(f"mcp {tool}", f"{type(exc).__name__}: {exc}")
                    return
                text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
                if result.is_error:
                    tally.fail(f"mcp {tool}", text.splitlines()[0] if text else "error")
                else:
                    json.loads(text)
                    tally.ok(f"mcp {tool}")


def concurrency_case(args: argparse.Namespace, work: Path, rng: random.Random,
                     log: Callable[[str], None]) -> dict[str, Any]:
    tree = materialize(args.repo, work / "concurrency")
    index_dir = tree / ".dowse"
    first = dowse("index", str(tree), "--no-embed", "-q")
    if first.code:
        raise SystemExit(f"concurrency: the first index failed: {first.err}")
    mutator = Mutator(tree, random.Random(rng.random()))
    stop = threading.Event()
    tally = Tally()
    runs: Counter[str] = Counter()
    audits = Counter[str]()
    corrupt: list[str] = []

    def mutate() -> None:
        gen = 0
        while not stop.is_set():
            gen += 1
            mutator.step(gen)
            time.sleep(0.3)

    def indexer() -> None:
        while not stop.is_set():
            ran = dowse("index", str(tree), "--no-embed", "-q", timeout=900)
            if ran.code == 0 and not ran.traceback:
                runs["completed"] += 1
            else:
                runs["failed"] += 1
                tally.fail("index", f"exit {ran.code}: {ran.last_line}")

    def auditor() -> None:
        while not stop.is_set():
            try:
                problems = audit(index_dir)
            except DowseError as exc:
                problems = [str(exc)]
            except Exception as exc:  # noqa: BLE001 - a reader failing is what we count
                problems = [f"{type(exc).__name__}: {str(exc)[:200]}"]
            audits["audits"] += 1
            if problems:
                audits["corrupt"] += 1
                corrupt.append("; ".join(problems))
            time.sleep(0.2)

    def mcp_clients() -> None:
        async def main() -> None:
            await asyncio.gather(*[
                _mcp_client(tree, n, stop, tally, work / "concurrency-serve.log")
                for n in range(args.mcp_clients)], return_exceptions=False)
        try:
            asyncio.run(main())
        except Exception as exc:  # noqa: BLE001
            tally.fail("mcp", f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=mutate), threading.Thread(target=auditor),
               threading.Thread(target=mcp_clients)]
    threads += [threading.Thread(target=indexer) for _ in range(2)]
    threads += [threading.Thread(target=_cli_client, args=(tree, n, stop, tally))
                for n in range(args.cli_clients)]
    log(f"concurrency: 2 index loops, {args.cli_clients} CLI and {args.mcp_clients} MCP "
        f"clients, a mutator and an auditor for {args.seconds} s")
    started = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    # Nothing lost: once the tree is still, the index equals a fresh one of the same tree.
    last = dowse("index", str(tree), "--no-embed", "-q")
    status = dowse("status", str(tree), "--json")
    ref_dir = work / "concurrency-ref"
    shutil.rmtree(ref_dir, ignore_errors=True)
    dowse("index", str(tree), "--no-embed", "-q", "--index-dir", str(ref_dir))
    same = last.code == 0 and fingerprint(index_dir) == fingerprint(ref_dir)
    final_audit = audit(index_dir)
    log(f"concurrency: {sum(tally.served.values())} served, {sum(tally.errors.values())} "
        f"errors, {audits['corrupt']} corrupt of {audits['audits']} audits")
    return {
        "seconds": round(wall, 1), "served": dict(tally.served), "errors": dict(tally.errors),
        "error_messages": dict(tally.messages.most_common(12)),
        "index_runs": dict(runs), "mutations": dict(mutator.count),
        "audits": audits["audits"], "corrupt": audits["corrupt"] + len(final_audit),
        "corrupt_examples": corrupt[:5] + final_audit,
        "final_index_equals_fresh": same, "final_status_ok": status.code == 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--embed-repo", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--cold-kills", type=int, default=6)
    parser.add_argument("--kills", type=int, default=36)
    parser.add_argument("--embed-cold-kills", type=int, default=2)
    parser.add_argument("--embed-kills", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=90)
    parser.add_argument("--cli-clients", type=int, default=4)
    parser.add_argument("--mcp-clients", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    args.embed_repo = args.embed_repo or args.repo
    work = args.work or Path("/tmp/dowse-reliability")
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    cases = args.cases.split(",")
    out = {}
    if "crash" in cases:
        out["crash"] = crash_case(args, work, rng, log)
    if "concurrency" in cases:
        out["concurrency"] = concurrency_case(args, work, rng, log)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
