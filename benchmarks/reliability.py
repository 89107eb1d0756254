"""Reliability: crash, concurrency, hostile input, fuzzing, secrets, a full disk and a
damaged index, each with figures. Every case drives the real `dowse` CLI as subprocesses
(and `dowse serve` through the MCP client); the index is inspected in-process with
`indexer.store.Store`.

Usage:
    python benchmarks/reliability.py --repo PATH [--embed-repo PATH] [--work DIR]
        [--cases crash,concurrency,hostile,fuzz,secrets,diskfull,corrupt]
        [--cold-kills 4] [--kills 34] [--embed-cold-kills 2] [--embed-kills 10]
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
import textwrap
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from indexer.errors import DowseError, IndexNotFound  # noqa: E402
from indexer.store import SNAPSHOT_TABLES, Store  # noqa: E402

# Subprocesses with a preexec_fn are started by fork() then exec(): LanceDB, loaded here to
# read indexes, warns about the fork although the child runs no Python code of ours.
warnings.filterwarnings("ignore", message="lancedb fork support")

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


def inspect(index_dir: Path) -> tuple[str | None, list[str]]:
    """(fingerprint, problems) of the snapshot at `index_dir`, reading each table once.

    The fingerprint digests the snapshot's content (files, symbols, chunks, imports,
    skipped files; None: no index); vectors are checked, not digested. Problems are what
    is inconsistent inside the snapshot: one that mixed two commits shows here, as per-file
    counts that disagree with the rows of the other tables.
    """
    try:
        store = Store.open(index_dir)
    except IndexNotFound:
        return None, []
    files = store.rows("files", ["path", "hash", "n_symbols", "n_chunks", "parser"])
    symbols = store.rows("symbols", ["path", "qualified_name", "kind", "start_line",
                                     "end_line"])
    chunks = store.rows("chunks", ["id", "path", "hash", "start_line", "end_line"])
    parts: list[Any] = [
        sorted((r["path"], r["hash"], r["n_symbols"], r["n_chunks"], r["parser"])
               for r in files),
        sorted((r["path"], r["qualified_name"], r["kind"], r["start_line"], r["end_line"])
               for r in symbols),
        sorted((r["id"], r["hash"], r["start_line"], r["end_line"]) for r in chunks),
        sorted((r["path"], r["module"], r["line"], r["resolved"] or "")
               for r in store.rows("imports", ["path", "module", "line", "resolved"])),
        # The index directory is skipped under a different reason when it lies elsewhere.
        sorted((r["path"], r["reason"]) for r in store.rows("skipped")
               if not r["path"].startswith(".dowse")),
    ]
    digest = hashlib.blake2b(json.dumps(parts).encode(), digest_size=12).hexdigest()
    problems = []
    per_symbol = Counter(r["path"] for r in symbols)
    per_chunk = Counter(r["path"] for r in chunks)
    known = {r["path"] for r in files}
    for r in files:
        if per_symbol.get(r["path"], 0) != r["n_symbols"] or \
                per_chunk.get(r["path"], 0) != r["n_chunks"]:
            problems.append(f"{r['path']}: counts disagree")
    problems += [f"{p}: rows without a file" for p in (set(per_symbol) | set(per_chunk)) - known]
    hashes = {r["id"]: r["hash"] for r in chunks}
    if len(hashes) != len(chunks):
        problems.append("duplicate chunk ids")
    vectors = store.rows("vectors", ["id", "hash"])
    if any(hashes.get(r["id"]) != r["hash"] for r in vectors):
        problems.append("a vector without a chunk of its text")
    if store.manifest.embedded and len(vectors) != len(chunks):
        problems.append("manifest says embedded, vectors are missing")
    return digest, problems[:5]


def fingerprint(index_dir: Path) -> str | None:
    return inspect(index_dir)[0]


def audit(index_dir: Path) -> list[str]:
    return inspect(index_dir)[1]


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
    """The newest version of each snapshot table (ahead of the manifest mid-write), in
    the tables the manifest names (a rebuild writes a new generation under new names)."""
    import lancedb

    try:
        physical = Store.read_manifest(index_dir).tables
    except DowseError:
        physical = {}
    db = lancedb.connect(str(index_dir / "db"))
    have = set(db.list_tables().tables)
    names = {name: physical.get(name, name) for name in SNAPSHOT_TABLES}
    return {name: db.open_table(table).version for name, table in names.items()
            if table in have}


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
    too_late: int = 0
    """runs that had ended before their kill: checked, not counted as kills"""
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
            cli = None if self.embed else cli_hits(dowse(
                "search", self.cli_query, "--json", "-n", "5", "--index-dir", str(ref_dir)))
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

    def kill(self, kind: str, old: int | None, new: int) -> bool:
        """One run towards state `new` (from `old`; None: from no index), killed; False
        when the run had ended before the kill (it is checked all the same, and counted
        apart, not as a kill)."""
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
        self.tally.orphans += reap_group(proc.pid, 3.0)
        phase = "" if finished else self._phase(before)
        problems = self._check(old, new, count=not finished)
        if finished:
            self.tally.too_late += 1
            if problems:
                self.tally.failures.append(f"{self.label} {kind} run: {'; '.join(problems)}")
            return False
        self.tally.kills += 1
        self.tally.phases[phase] += 1
        if not problems:
            self.tally.survived += 1
        else:
            self.tally.failures.append(f"{self.label} {kind} kill {self.tally.kills} "
                                       f"({phase}): {'; '.join(problems)}")
        return True

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

    def _check(self, old: int | None, new: int, *, count: bool) -> list[str]:
        problems: list[str] = []
        status, search, inspected, got = _parallel(
            lambda: dowse("status", str(self.tree), "--json"),
            lambda: dowse("search", self.cli_query, "--path", str(self.tree), "--json",
                          "-n", "5"),
            lambda: inspect(self.index_dir),
            lambda: answers(self.index_dir, self.queries))
        for result in (inspected, got):
            if isinstance(result, Exception):
                problems.append(f"the index cannot be read: {type(result).__name__}: {result}")
                return problems
        fp, bad = inspected
        for ran in (status, search):
            if ran.traceback or not (ran.code == 0 or (old is None and "no index" in ran.err)):
                problems.append(f"`dowse {ran.args[0]}` exit {ran.code}: {ran.last_line}")
        refs = {"old": self.reference(old) if old is not None else Reference(None, None, None),
                "new": self.reference(new)}
        match = [name for name, ref in refs.items()
                 if fp == ref.fingerprint and got == ref.answers
                 and (self.embed or cli_hits(search) == ref.cli)]
        if not match:
            problems.append(f"after the kill the index is neither state (content {fp})")
        elif count:
            self.tally.matched[match[0]] += 1
        if bad:
            problems.append("inconsistent snapshot: " + "; ".join(bad))
        ran = dowse(*self.index_args())
        self.tally.recover_s.append(ran.seconds)
        inspected = _parallel(lambda: inspect(self.index_dir))[0]
        if isinstance(inspected, Exception):
            problems.append(f"after the next index the index cannot be read: {inspected}")
            return problems
        fp, bad = inspected
        if ran.code or ran.traceback:
            problems.append(f"the next index failed: {ran.last_line}")
        elif fp != refs["new"].fingerprint:
            problems.append("the next index did not reach the new state")
        elif answers(self.index_dir, self.queries) != refs["new"].answers:
            problems.append("the next index answers differently from a fresh index")
        elif bad:
            problems.append("inconsistent after the next index: " + "; ".join(bad))
        elif self.embed and not Store.open(self.index_dir).manifest.embedded:
            problems.append("the next index left vectors pending")
        return problems


def _parallel(*jobs: Callable[[], Any]) -> list[Any]:
    """The jobs' results, run in threads; a job that raised gives its exception."""
    out: list[Any] = [None] * len(jobs)

    def run(i: int) -> None:
        try:
            out[i] = jobs[i]()
        except Exception as exc:  # noqa: BLE001 - the caller counts it as a failure
            out[i] = exc

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
        done = 0
        for attempt in range(2 * cold):  # a run may end before its kill: try again
            if done == cold:
                break
            rig.states.apply(0)
            shutil.rmtree(rig.index_dir, ignore_errors=True)
            done += rig.kill("cold", None, 0)
            current = 0
            log(f"crash/{label}: cold run {attempt + 1}: {done}/{cold} kills, "
                f"{tally.survived}/{tally.kills} survived so far")
        done = 0
        for attempt in range(2 * incremental):
            if done == incremental:
                break
            # Lexical runs toggle between states 0 and 1; with embeddings every run goes to
            # a state not seen before, so that it has text to embed.
            new = 1 - current if not embed else attempt + 2
            rig.states.apply(new)
            rig.reference(new)
            done += rig.kill("incremental", current, new)
            current = new
            log(f"crash/{label}: incremental run {attempt + 1}: {done}/{incremental} kills, "
                f"{tally.survived}/{tally.kills} survived so far")
    recover = sorted(tally.recover_s)
    return {
        "kills": tally.kills, "survived": tally.survived, "phases": dict(tally.phases),
        "ended_before_kill": tally.too_late,
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



# -- hostile input ----------------------------------------------------------------------------


def hostile_repo(root: Path, *, big_bytes: int = 10_000_000, line_bytes: int = 900_000,
                 nesting: int = 5000, dir_depth: int = 200, ignore_lines: int = 3000,
                 rng: random.Random | None = None) -> list[str]:
    """Write a repository of bad inputs under `root`; return what was written (one line
    each). Everything here must be indexed or skipped with a reason, never crash a run."""
    rng = rng or random.Random(0)
    made: list[str] = []
    base = os.fsencode(root)

    def put(rel: str | bytes, data: bytes, what: str, mode: int | None = None) -> None:
        path = os.path.join(base, os.fsencode(rel) if isinstance(rel, str) else rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
        if mode is not None:
            os.chmod(path, mode)
        made.append(what)

    def link(rel: str, target: str, what: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
        made.append(what)

    noise = bytes(rng.randrange(256) for _ in range(16_384))
    # Binary content under source extensions.
    put("bin/looks_like.py", noise, "random bytes named .py")
    put("bin/image.js", b"\x89PNG\r\n\x1a\n" + noise, "a PNG named .js")
    put("bin/program.c", b"\x7fELF\x02\x01\x01" + noise, "an ELF binary named .c")
    put("bin/utf16.java", "class Utf16 { int x; }\n".encode("utf-16") * 50, "UTF-16 source")
    put("bin/no_nul.go", bytes(b | 0x80 for b in noise), "high bytes without NUL named .go")
    put("bin/late_nul.py", b"def early():\n    return 1\n" * 500 + b"\0" + b"x = 1\n" * 10,
        "a NUL byte after the first 8 KiB")
    # Invalid UTF-8 and odd encodings.
    put("enc/invalid.py", b"def f(\xff\xfe):\n    return '\xc3\x28 \xa0\xa1'\n" * 300,
        "invalid UTF-8 in Python")
    put("enc/latin1.go", "package main\n// café señor\nfunc Café() {}\n".encode("latin-1") * 100,
        "Latin-1 Go")
    put("enc/bom.ts", b"\xef\xbb\xbfexport function withBom(): number { return 1 }\n", "a BOM")
    put("enc/cr_only.rb", b"def cr_only\r  1\rend\r" * 200, "CR-only line ends")
    put("enc/crlf.cs", b"class Crlf {\r\n  void M() {}\r\n}\r\n" * 200, "CRLF line ends")
    put("enc/surrogates.rs", b"fn s() {}\n" + b"\xed\xa0\x80\xed\xbf\xbf\n" * 100,
        "encoded surrogates in Rust")
    # Huge one-line files.
    put("huge/one_line.js", b"var a=1;" * (big_bytes // 8),
        f"{big_bytes / 1e6:.0f} MB of JavaScript on one line")
    put("huge/one_line.c", b"int a=1;" * (big_bytes // 8),
        f"{big_bytes / 1e6:.0f} MB of C on one line")
    put("huge/one_line.py", b"x = [" + b"1, " * (line_bytes // 3) + b"]",
        f"{line_bytes / 1000:.0f} kB on one line (under the limit)")
    put("huge/long_identifier.py", b"def " + b"a" * 500_000 + b"():\n    pass\n",
        "a 500,000-character identifier")
    put("huge/many_lines.py", b"\n" * 200_000 + b"def last():\n    pass\n", "200,000 blank lines")
    # Deep nesting.
    put("nest/parens.py", b"x = " + b"(" * nesting + b"1" + b")" * nesting,
        f"{nesting}-level parentheses")
    put("nest/brackets.json", b"[" * nesting + b"]" * nesting, f"{nesting}-level JSON")
    put("nest/braces.c", b"int f() " + b"{" * nesting + b"}" * nesting, f"{nesting}-level braces")
    put("nest/functions.js", b"function f(){" * nesting + b"}" * nesting,
        f"{nesting} nested functions")
    put("nest/unclosed.ts", b"(" * nesting + b"[" * nesting, f"{2 * nesting} unclosed brackets")
    put("nest/indent.py", b"".join(b" " * i + b"if x:\n" for i in range(1000)) + b" " * 1000
        + b"pass\n", "1,000-level indentation")
    put("nest/tags.html", b"<div>" * nesting + b"</div>" * nesting, f"{nesting}-level HTML")
    # Deeply nested directories.
    put("/".join(["deep"] + ["d"] * dir_depth + ["leaf.py"]), b"def leaf():\n    pass\n",
        f"a file {dir_depth} directories deep")
    # Symlink loops and links leading out.
    link("links/self", "self", "a symlink to itself")
    link("links/dot", ".", "a symlink to its own directory")
    link("links/up", "../..", "a symlink to an ancestor")
    link("links/ping", "pong", "two symlinks pointing at each other")
    link("links/pong", "ping", "two symlinks pointing at each other")
    link("links/broken.py", "missing.py", "a broken symlink")
    link("links/devzero.py", "/dev/zero", "a symlink to /dev/zero")
    link("links/etc", "/etc", "a symlink out of the root")
    # Unreadable files and directories; a FIFO.
    put("perm/unreadable.py", b"def secret():\n    pass\n", "an unreadable file", mode=0)
    put("perm/closed/inside.py", b"def inside():\n    pass\n", "a file in an unreadable directory")
    os.chmod(root / "perm" / "closed", 0)
    put("perm/no_search/inside.py", b"def hidden():\n    pass\n",
        "a file in a directory without search permission")
    os.chmod(root / "perm" / "no_search", 0o644)
    os.mkfifo(root / "perm" / "fifo.py")
    made.append("a FIFO named .py")
    # Names.
    odd_names: list[str | bytes] = [
        "names/new\nline.py", "names/tab\tname.py", "names/carriage\rreturn.py",
        b"names/bad\xffbyte.py", b"names/latin1_caf\xe9.py", "names/quote'single.py",
        'names/quote"double.py', "names/back\\slash.py", "names/ünïcödé.py",
        "names/emoji_\U0001f642.py", "names/-leading-dash.py", "names/ leading space.py",
        "names/trailing space .py", "names/" + "x" * 250 + ".py", "names/percent%s%d.py",
        "names/glob[*]?.py", "names/sql'); DROP TABLE files;--.py", "names/.hidden.py",
        "names/colon:name.py", "names/star*.py",
    ]
    for i, name in enumerate(odd_names):
        put(name, f"def odd_name_{i}():\n    return {i}\n".encode(), f"file name {name!r}")
    # Empty, degenerate and junk files.
    put("odd/empty.py", b"", "an empty file")
    put("odd/whitespace.go", b" \t" * 250_000, "500 kB of whitespace")
    put("odd/control.txt", bytes(range(1, 32)) * 100, "control characters")
    put("web/bundle.js", b"var a=" + b"1+" * 100_000 + b"1;", "a minified bundle without .min")
    put("web/app.min.js", b"var b=1;" * 1000, "a .min.js file")
    put("web/app.js.map", b'{"version":3}', "a source map")
    put("node_modules/left-pad/index.js", b"module.exports = 1\n", "node_modules")
    put("__pycache__/m.cpython-311.pyc", noise, "__pycache__")
    put("venv/pyvenv.cfg", b"home = /usr\n", "a virtualenv")
    put("venv/lib/site.py", b"x = 1\n", "a file inside a virtualenv")
    put("dist/bundle.js", b"var c = 1;\n", "build output")
    put("package-lock.json", b'{"lockfileVersion": 3}\n', "a lockfile")
    put(".gitignore", b"".join(b"**/**/**/*a*b*c*d*e*f*g*h*%d\n" % i
                               for i in range(ignore_lines))
        + b"ignored/\n", f"a .gitignore of {ignore_lines:,} backtracking patterns")
    put("ignored/x.py", b"x = 1\n", "a gitignored directory")
    put("ok/normal.py", b'"""A normal module."""\n\n\ndef normal_function(value):\n'
        b'    """Return value."""\n    return value\n', "a normal Python file")
    return made


def _restore_modes(root: Path) -> None:
    for d in ("perm/closed", "perm/no_search"):
        with contextlib.suppress(OSError):
            os.chmod(root / d, 0o755)


def _churn(directory: Path, stop: threading.Event, made: Counter[str]) -> None:
    """Create and delete files all the time (about 500 a second), so that some vanish
    between the walk listing them and the indexer reading them."""
    directory.mkdir(parents=True, exist_ok=True)
    i = 0
    while not stop.is_set():
        path = directory / f"c{i % 50}.py"
        if path.exists():
            path.unlink()
            made["deleted"] += 1
        else:
            path.write_text(f"def churn_{i}():\n    return {i}\n")
            made["created"] += 1
        i += 1
        time.sleep(0.002)


def hostile_case(args: argparse.Namespace, work: Path, rng: random.Random,
                 log: Callable[[str], None]) -> dict[str, Any]:
    root = work / "hostile"
    if root.exists():
        _restore_modes(root)
        shutil.rmtree(root)
    root.mkdir(parents=True)
    made = hostile_repo(root, rng=rng)
    prefix = without_dac()
    runs: list[Ran] = []
    churned: Counter[str] = Counter()
    stop = threading.Event()
    churn = threading.Thread(target=_churn, args=(root / "churn", stop, churned))
    churn.start()
    try:
        runs.append(dowse("index", str(root), "--no-embed", "-q", "--json", timeout=600,
                          prefix=prefix))
        runs.append(dowse("index", str(root), "--no-embed", "-q", timeout=600, prefix=prefix))
    finally:
        stop.set()
        churn.join()
    log(f"hostile: {len(made)} inputs, {sum(churned.values())} churned files; "
        f"cold index {runs[0].seconds:.1f} s")
    status = dowse("status", str(root), "--skipped", "--json", prefix=prefix)
    runs.append(status)
    for query in ("odd_name", "DROP TABLE files", "ünïcödé", "leaf", "normal_function"):
        runs.append(dowse("search", query, "--path", str(root), "--json", prefix=prefix))
    runs.append(dowse("symbol", "odd_name_5", "--path", str(root), "--json", prefix=prefix))
    runs.append(dowse("ask", "where is normal_function defined?", "--path", str(root),
                      "--json", "--mode", "retrieval", prefix=prefix))
    # Change the odd files and index again: deletes and renames of odd names go through
    # the store's SQL filters.
    names = root / "names"
    for i, path in enumerate(sorted(names.iterdir())):
        if i % 3 == 0:
            path.unlink()
        elif i % 3 == 1:
            path.write_bytes(path.read_bytes() + b"\n\ndef changed():\n    pass\n")
        else:
            path.rename(names / (os.fsdecode(path.name)[:-3] + "_moved.py"))
    (root / "churn").mkdir(exist_ok=True)
    runs.append(dowse("index", str(root), "--no-embed", "-q", prefix=prefix))
    ref_dir = work / "hostile-ref"
    shutil.rmtree(ref_dir, ignore_errors=True)
    runs.append(dowse("index", str(root), "--no-embed", "-q", "--index-dir", str(ref_dir),
                      prefix=prefix))
    same = fingerprint(root / ".dowse") == fingerprint(ref_dir)
    # The same repository with a 20 MB limit: the 10 MB one-line file is read and chunked.
    big = dowse("index", str(root), "--no-embed", "-q", "--max-file-size", "20000000",
                "--index-dir", str(work / "hostile-big"), timeout=900, prefix=prefix)
    runs.append(big)
    big_rows: dict[str, str] = {}
    with contextlib.suppress(DowseError):
        store = Store.open(work / "hostile-big")
        for row in store.rows("files", ["path", "parser", "note", "n_chunks"],
                              where="path LIKE 'huge/one_line.%'"):
            note = f" ({row['note']})" if row["note"] else ""
            big_rows[row["path"]] = f"{row['parser']}{note}, {row['n_chunks']} chunk(s)"
        for row in store.rows("skipped", where="path LIKE 'huge/one_line.%'"):
            big_rows[row["path"]] = f"skipped: {row['reason']}"
    _restore_modes(root)
    crashes = [f"`dowse {' '.join(r.args[:2])}` exit {r.code}: {r.last_line}" for r in runs
               if r.code != 0 or r.traceback]
    report = json.loads(status.out) if status.code == 0 else {"skipped": []}
    indexed = {}
    with contextlib.suppress(DowseError):
        for row in Store.open(root / ".dowse").rows("files", ["path", "parser", "note"]):
            if row["note"]:
                indexed[row["path"]] = f"{row['parser']}: {row['note']}"
    return {
        "inputs": len(made) + sum(churned.values()), "generated": len(made),
        "churned": dict(churned), "runs": len(runs), "crashes": crashes,
        "privileges": "root without CAP_DAC_OVERRIDE" if prefix else
        ("root (reads any file)" if os.geteuid() == 0 else "ordinary user"),
        "cold_index_s": round(runs[0].seconds, 1),
        "skipped": [(s["path"], s["reason"]) for s in report["skipped"]
                    if not s["path"].startswith("churn/")],
        "indexed_with_note": sorted(indexed.items()),
        "incremental_equals_fresh": same,
        "big_limit": {"seconds": round(big.seconds, 1), "files": big_rows},
    }


# -- fuzzing -------------------------------------------------------------------------------


def fuzz_case(args: argparse.Namespace, work: Path, rng: random.Random,
              log: Callable[[str], None]) -> dict[str, Any]:
    """tests/test_reliability.py's property with more examples, in a subprocess (a grammar
    that crashes the process is a crash too)."""
    code = ("import json, sys; sys.path.insert(0, 'tests'); "
            "from test_reliability import FUZZ_LANGUAGES, fuzz; "
            f"print(json.dumps({{lang: fuzz(lang, {args.fuzz_examples}) "
            "for lang in FUZZ_LANGUAGES}))")
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                       env=ENV)
    seconds = time.perf_counter() - t
    if p.returncode != 0:
        return {"inputs": None, "crashes": [f"exit {p.returncode}: {p.stderr[-2000:]}"],
                "seconds": round(seconds, 1)}
    per = json.loads(p.stdout)
    log(f"fuzz: {sum(v['tried'] for v in per.values())} inputs in {seconds:.0f} s")
    return {"inputs": sum(v["tried"] for v in per.values()), "languages": len(per),
            "crashes": [f"{lang}: {v['error']}" for lang, v in per.items() if v["error"]],
            "per_language": {lang: v["tried"] for lang, v in per.items()},
            "seconds": round(seconds, 1)}


# -- secrets --------------------------------------------------------------------------------


def _alnum(rng: random.Random, n: int, alphabet: str = "") -> str:
    alphabet = alphabet or "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(rng.choice(alphabet) for _ in range(n))


def _pem(rng: random.Random, kind: str = "RSA PRIVATE KEY") -> tuple[str, str]:
    """A private key block (random base64) and its first line, the value to look for."""
    import base64

    body = base64.b64encode(bytes(rng.randrange(256) for _ in range(600))).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return (f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----\n",
            lines[0])


def secrets_repo(root: Path, rng: random.Random) -> list[tuple[str, str, str]]:
    """Write a repository seeded with secrets; return (path, what, value to look for)."""
    import base64

    seeded: list[tuple[str, str, str]] = []

    def put(rel: str, text: str, what: str, value: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        seeded.append((rel, what, value))

    upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    v = _alnum(rng, 32)
    put(".env", f"DATABASE_URL=postgres://app@db/prod\nSECRET_KEY={v}\n", ".env", v)
    v = _alnum(rng, 32)
    put("services/api/.env.production", f"API_TOKEN={v}\n", ".env.production", v)
    v = _alnum(rng, 32)
    put(".envrc", f"export DEPLOY_TOKEN={v}\n", ".envrc", v)
    for rel in ("deploy/id_rsa", "deploy/server.pem", "certs/tls.key", ".ssh/id_ed25519"):
        key, first = _pem(rng)
        put(rel, key, f"private key file {rel.rpartition('/')[2]}", first)
    akia, secret = "AKIA" + _alnum(rng, 16, upper), _alnum(rng, 40)
    put(".aws/credentials", f"[default]\naws_access_key_id = {akia}\n"
        f"aws_secret_access_key = {secret}\n", "AWS credentials file", secret)
    key, first = _pem(rng, "PRIVATE KEY")
    put("config/gcp-service-account.json", json.dumps(
        {"type": "service_account", "private_key_id": _alnum(rng, 40), "private_key": key,
         "client_email": "bot@project.iam.gserviceaccount.com"}), "GCP service account", first)
    v = _alnum(rng, 24)
    put("client_secret_1234.apps.googleusercontent.com.json",
        json.dumps({"installed": {"client_secret": v}}), "OAuth client secret", v)
    v = "npm_" + _alnum(rng, 36)
    put(".npmrc", f"//registry.npmjs.org/:_authToken={v}\n", ".npmrc token", v)
    v = _alnum(rng, 28)
    put(".netrc", f"machine api.example.com login bot password {v}\n", ".netrc", v)
    v = "ghp_" + _alnum(rng, 36)
    put(".git-credentials", f"https://bot:{v}@github.com\n", ".git-credentials", v)
    v = "pypi-" + _alnum(rng, 60)
    put(".pypirc", f"[pypi]\nusername = __token__\npassword = {v}\n", ".pypirc", v)
    v = base64.b64encode(f"bot:{_alnum(rng, 24)}".encode()).decode()
    put(".docker/config.json", json.dumps({"auths": {"registry.example.com": {"auth": v}}}),
        "docker config", v)
    v = _alnum(rng, 48)
    put(".kube/config", f"apiVersion: v1\nusers:\n- name: admin\n  user:\n    token: {v}\n",
        "kubeconfig", v)
    v = _alnum(rng, 32)
    put("infra/terraform.tfstate", json.dumps({"outputs": {"db_password": {"value": v}}}),
        "terraform state", v)
    v = _alnum(rng, 32)
    put("config/secrets.yaml", f"signing_key: {v}\n", "secrets.yaml", v)
    # Tokens inside source files.
    v = "AKIA" + _alnum(rng, 16, upper)
    put("app/settings.py", f'DEBUG = False\nAWS_ACCESS_KEY_ID = "{v}"\n\n\ndef region():\n'
        '    return "eu-west-1"\n', "AWS key in Python source", v)
    v = "ghp_" + _alnum(rng, 36)
    put("app/github_client.py", f'TOKEN = "{v}"\n\n\ndef headers():\n'
        '    return {"Authorization": f"token {TOKEN}"}\n', "GitHub token in Python", v)
    v = "sk_live_" + _alnum(rng, 24)
    put("web/pay.js", f'const stripe = Stripe("{v}");\nexport function pay() {{ return 1 }}\n',
        "Stripe key in JavaScript", v)
    v = f"xoxb-{_alnum(rng, 12, '0123456789')}-{_alnum(rng, 12, '0123456789')}-{_alnum(rng, 24)}"
    put("bots/slack.go", f'package bots\n\nconst token = "{v}"\n\nfunc Post() {{}}\n',
        "Slack token in Go", v)
    key, first = _pem(rng)
    escaped = key.replace("\n", "\\n")
    put("app/keys.py", f'PRIVATE_KEY = "{escaped}"\n\n\ndef sign(data):\n    return data\n',
        "private key in a Python string", first)
    key, first = _pem(rng, "OPENSSH PRIVATE KEY")
    put("docs/deploy.md", f"# Deploy\n\nUse this key:\n\n```\n{key}```\n",
        "private key in Markdown", first)
    # A symlink with a harmless name to a secret.
    (root / "config" / "innocent.txt").symlink_to("../.env")
    seeded.append(("config/innocent.txt", "symlink to .env", seeded[0][2]))
    (root / "app" / "normal.py").write_text('"""Ordinary code."""\n\n\ndef add(a, b):\n'
                                            "    return a + b\n")
    return seeded


def _values_in_index(index_dir: Path, values: list[str]) -> set[str]:
    """The values that appear in any text of any table of the snapshot."""
    store = Store.open(index_dir)
    found: set[str] = set()
    lowered = {v: v.lower() for v in values}
    for name in SNAPSHOT_TABLES:
        for row in store.rows(name):
            for cell in row.values():
                texts = cell if isinstance(cell, list) else [cell]
                for text in texts:
                    if not isinstance(text, str):
                        continue
                    low = text.lower()
                    found.update(v for v, lv in lowered.items() if v in text or lv in low)
    return found


def _values_on_disk(index_dir: Path, values: list[str]) -> set[str]:
    """The values found as bytes in any file under the index directory (every version)."""
    found: set[str] = set()
    for dirpath, _, files in os.walk(index_dir):
        for f in files:
            data = (Path(dirpath) / f).read_bytes()
            found.update(v for v in values if v.encode() in data)
    return found


def secrets_case(args: argparse.Namespace, work: Path, rng: random.Random,
                 log: Callable[[str], None]) -> dict[str, Any]:
    root = work / "secrets"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    seeded = secrets_repo(root, rng)
    # A password literal with no recognisable format: not claimed, shown for honesty.
    generic = _alnum(rng, 20)
    (root / "app" / "db.py").write_text(f'DB_PASSWORD = "{generic}"\n')
    values = sorted({v for _, _, v in seeded})
    runs = [dowse("index", str(root), "--no-embed", "-q")]
    status = dowse("status", str(root), "--skipped", "--json")
    runs.append(status)
    found = _values_in_index(root / ".dowse", values)
    on_disk = _values_on_disk(root / ".dowse", values)
    control_dir = work / "secrets-included"
    shutil.rmtree(control_dir, ignore_errors=True)
    runs.append(dowse("index", str(root), "--no-embed", "-q", "--include-secrets",
                      "--index-dir", str(control_dir)))
    control = _values_in_index(control_dir, values)
    reasons = {s["path"]: s["reason"] for s in json.loads(status.out)["skipped"]} \
        if status.code == 0 else {}
    indexed = {r["path"] for r in Store.open(root / ".dowse").rows("files", ["path"])}

    def outcome(path: str) -> str:
        if path in indexed:
            return "**indexed**"
        parts = path.split("/")
        for n in range(len(parts) - 1, 0, -1):  # a skipped directory holding it
            if "/".join(parts[:n]) + "/" in reasons:
                return reasons["/".join(parts[:n]) + "/"]
        return reasons.get(path, "left out")
    log(f"secrets: {len(found)} of {len(values)} seeded values in the index")
    return {
        "seeded": len(seeded), "values": len(values), "found": sorted(found),
        "found_on_disk": sorted(on_disk), "found_with_include_secrets": len(control),
        "generic_password_indexed": bool(_values_in_index(root / ".dowse", [generic])),
        "files": [(path, what, outcome(path)) for path, what, _ in seeded],
        "errors": [r.last_line for r in runs if r.code or r.traceback],
    }



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
        return (self.one_line or not self.error) and self.previous_intact and self.reads_ok \
            and self.next_index_ok and not self.traceback


def diskfull_case(args: argparse.Namespace, work: Path, rng: random.Random,
                  log: Callable[[str], None]) -> dict[str, Any]:
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

    def attempt(name: str, run: Ran, readers_prefix: list[str] | None = None,
                restore: Callable[[], None] = lambda: None, cold: bool = False) -> None:
        now = snapshot()
        intact = now == (None if cold else fp0) or (run.code == 0 and now == fp1)
        reads = [dowse("search", search_q, "--path", str(tree), "--json", prefix=readers_prefix),
                 dowse("status", str(tree), "--json", prefix=readers_prefix)]
        reads_ok = all(r.code == 0 or (cold and "no index" in r.err) for r in reads)
        restore()
        again = dowse("index", str(tree), "--no-embed", "-q")
        faults.append(Fault(
            name, run.last_line if run.code else "", run.one_line_error, intact, reads_ok,
            again.code == 0 and snapshot() == fp1,
            any(r.traceback for r in (run, *reads, again))))
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
            attempt(f"read-only {'.dowse/' + rel if rel != '.' else '.dowse/'}", run,
                    readers_prefix=prefix,
                    restore=lambda t=target: _chmod_tree(t, writable=True))  # type: ignore[misc]
    if args.tmpfs:
        faults += _tmpfs_faults(tree, states, work, search_q, log)
    return {"faults": [vars(f) | {"ok": f.ok} for f in faults],
            "ok": sum(f.ok for f in faults), "cases": len(faults),
            "read_only_as": "root without CAP_DAC_OVERRIDE" if prefix else "current user"}


def _tmpfs_faults(tree: Path, states: States, work: Path, search_q: str,
                  log: Callable[[str], None]) -> list[Fault]:
    """An index on a small tmpfs that fills up (ENOSPC): root only."""
    mount = work / "tmpfs"
    mount.mkdir(exist_ok=True)
    faults: list[Fault] = []
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)],
                      capture_output=True).returncode:
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
            reads = [dowse("search", search_q, "--index-dir", str(index_dir), "--json"),
                     dowse("status", str(tree), "--index-dir", str(index_dir), "--json")]
            filler.unlink()
            again = dowse("index", str(tree), "--no-embed", "-q", "--index-dir", str(index_dir))
            faults.append(Fault(
                f"tmpfs with {free_kb} KiB free (ENOSPC), incremental",
                run.last_line if run.code else "", run.one_line_error, intact,
                all(r.code == 0 for r in reads), again.code == 0,
                any(r.traceback for r in (run, *reads, again))))
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


def _latest(paths: list[Path]) -> list[Path]:
    """The newest version manifest among `paths` (lance numbers them downwards)."""
    return sorted(paths, key=lambda p: p.name)[:1]


CORRUPTIONS: list[tuple[str, bool, Callable[[Path], None]]] = [
    # (what, does it damage the snapshot (status must report it), how)
    ("chunks data file truncated to half", True,
     lambda d: _truncate(_files(d, "db/chunks.lance/data/*.lance"), 0.5)),
    ("symbols data file emptied", True,
     lambda d: _truncate(_files(d, "db/symbols.lance/data/*.lance"), 0)),
    ("files data file deleted", True,
     lambda d: [p.unlink() for p in _files(d, "db/files.lance/data/*.lance")]),
    ("vectors data file truncated", True,
     lambda d: _truncate(_files(d, "db/vectors.lance/data/*.lance"), 0.3)),
    ("chunks table directory deleted", True,
     lambda d: shutil.rmtree(d / "db" / "chunks.lance")),
    ("imports version manifest truncated", True,
     lambda d: _truncate(_latest(_files(d, "db/imports.lance/_versions/*.manifest")), 0.2)),
    ("skipped _versions directory deleted", True,
     lambda d: shutil.rmtree(d / "db" / "skipped.lance" / "_versions")),
    ("chunks full-text index file emptied", True,
     lambda d: _truncate(_files(d, "db/chunks.lance/_indices/*/part_0_invert.lance"), 0)),
    ("symbols B-tree index file deleted", True,
     lambda d: [p.unlink() for p in _files(d, "db/symbols.lance/_indices/*/page_data.lance")]),
    ("embedding cache data file truncated", False,
     lambda d: _truncate(_files(d, "db/embed_cache.lance/data/*.lance"), 0.3)),
    ("manifest.json garbled", True,
     lambda d: (d / "manifest.json").write_text('{"format": 2, "model": ')),
    ("manifest.json deleted", True, lambda d: (d / "manifest.json").unlink()),
]


def corrupt_case(args: argparse.Namespace, work: Path, rng: random.Random,
                 log: Callable[[str], None]) -> dict[str, Any]:
    base = work / "corrupt-base"
    shutil.rmtree(base, ignore_errors=True)
    shutil.copytree(REPO / "fixtures" / "example", base,
                    ignore=shutil.ignore_patterns(".dowse"))
    built = dowse("index", str(base), "-q")  # with vectors: every table has rows
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
        manifest = tree / ".dowse" / "manifest.json"
        manifest.write_text(manifest.read_text().replace(json.dumps(str(base)),
                                                         json.dumps(str(tree))))
        corrupt(tree / ".dowse")
        status = dowse("status", str(tree))
        readers = [dowse("search", "validate token", "--path", str(tree), "--json"),
                   dowse("ask", "where are expired tokens rejected?", "--path", str(tree),
                         "--json", "--mode", "retrieval")]
        with open(tree / edit[0], "a") as fh:
            fh.write(edit[1])
        incremental = dowse("index", str(tree), "-q")
        rebuild = dowse("index", str(tree), "-q", "--rebuild")
        after = dowse("status", str(tree))  # reads every table whole, probes every index
        runs = [status, *readers, incremental, rebuild, after]
        reported = status.one_line_error and ("rebuild" in status.err or "no index" in status.err)

        def said(ran: Ran) -> str:
            return ran.last_line.replace(str(tree), "…") if ran.code else "ok"

        return {
            "case": what, "status": said(status),
            "status_reports": reported if damages else status.code == 0,
            "readers": [said(r) for r in readers], "incremental_index": said(incremental),
            "rebuild_repairs": rebuild.code == 0 and after.code == 0
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
        "results": results,
    }


# -- the report -------------------------------------------------------------------------------


def _yes(flag: bool) -> str:
    return "yes" if flag else "**no**"


def table(results: dict[str, Any]) -> str:
    rows: list[tuple[str, str, str, str]] = []
    if c := results.get("crash"):
        phases = ", ".join(f"{n} {p}" for p, n in sorted(c["phases"].items(), key=lambda x: -x[1]))
        rows += [
            ("crash", "kills survived / kills (SIGKILL of `dowse index`)",
             f"{c['survived']}/{c['kills']}", "all"),
            ("crash", "where the kills landed", phases, ""),
            ("crash", "runs that ended before their kill (checked too, not counted)",
             str(c["ended_before_kill"]), ""),
            ("crash", "index after a kill equals: old state / new state",
             f"{c['matched'].get('old', 0)} / {c['matched'].get('new', 0)}", "one of them"),
            ("crash", "worker processes still alive 3 s after a kill", str(c["orphans"]), "0"),
            ("crash", "next `dowse index` (median wall s)", str(c["recover_median_s"]),
             "completes"),
        ]
    if c := results.get("concurrency"):
        cli = sum(v for k, v in c["served"].items() if k.startswith("cli"))
        mcp = sum(v for k, v in c["served"].items() if k.startswith("mcp"))
        rows += [
            ("concurrency", f"requests served in {c['seconds']:.0f} s: CLI / MCP",
             f"{cli} / {mcp}", ""),
            ("concurrency", "errors", str(sum(c["errors"].values())), "0"),
            ("concurrency", "corrupt states (auditor reads, and the final index)",
             f"{c['corrupt']} of {c['audits']} reads", "0"),
            ("concurrency", "`dowse index` runs completed / failed",
             f"{c['index_runs'].get('completed', 0)} / {c['index_runs'].get('failed', 0)}", ""),
            ("concurrency", "tree changes during the run", str(sum(c["mutations"].values())), ""),
            ("concurrency", "final index = fresh index of the final tree",
             _yes(c["final_index_equals_fresh"]), "yes"),
        ]
    if c := results.get("hostile"):
        big = c["big_limit"]["files"]
        rows += [
            ("bad input", "inputs tried: generated / files created or deleted mid-walk",
             f"{c['generated']} / {sum(c['churned'].values())}", ""),
            ("bad input", f"crashes (exit ≠ 0 or traceback, of {c['runs']} runs)",
             str(len(c["crashes"])), "0"),
            ("bad input", "skipped files, each with a reason (listed below)",
             str(len(c["skipped"])), ""),
            ("bad input", "after changing odd names: index = fresh index",
             _yes(c["incremental_equals_fresh"]), "yes"),
            ("bad input", "10 MB one-line files again with --max-file-size 20 MB",
             "; ".join(f"{p}: {what}" for p, what in sorted(big.items()))
             + f" (run {c['big_limit']['seconds']} s)", "no crash"),
        ]
    if c := results.get("fuzz"):
        rows += [
            ("fuzz", f"inputs tried ({c.get('languages', '?')} languages: parse, chunk, "
             "content check, extraction)", str(c["inputs"]), ""),
            ("fuzz", "crashes", str(len(c["crashes"])), "0"),
        ]
    if c := results.get("secrets"):
        rows += [
            ("secrets", "secret files and in-source tokens seeded", str(c["seeded"]), ""),
            ("secrets", "seeded secrets found in the index (default options)",
             str(len(c["found"])), "0"),
            ("secrets", "… in any file under .dowse/ (every table version)",
             str(len(c["found_on_disk"])), "0"),
            ("secrets", "… with --include-secrets (control: the search finds them)",
             f"{c['found_with_include_secrets']} of {c['values']}", ""),
            ("secrets", "a password literal with no known token format",
             "indexed" if c["generic_password_indexed"] else "not indexed",
             "not claimed"),
        ]
    if c := results.get("diskfull"):
        for f in c["faults"]:
            said = ("one-line error" if f["one_line"] else
                    "completed" if not f["error"] else "**not one line**")
            rows.append(("disk full / read-only", f["name"],
                         f"{said}; previous index "
                         f"{'intact' if f['previous_intact'] else '**changed**'}; "
                         f"reads {'ok' if f['reads_ok'] else '**fail**'}; "
                         f"next index {'ok' if f['next_index_ok'] else '**fails**'}",
                         "all ok"))
    if c := results.get("corrupt"):
        damaging = sum(1 for _, d, _ in CORRUPTIONS if d)
        rows += [
            ("corrupt index", f"status reports the damage ({damaging} snapshot cases) / "
             f"stays quiet (cache)", f"{c['status_reports']}/{c['cases']}", "all"),
            ("corrupt index", "`index --rebuild` repairs it",
             f"{c['rebuild_repairs']}/{c['cases']}", "all"),
            ("corrupt index", f"tracebacks (of {c['commands']} commands)", str(c["tracebacks"]),
             "0"),
            ("corrupt index", "cases where every error was one line",
             f"{c['one_line']}/{c['cases']}", "all"),
        ]
    lines = ["| case | figure | measured | required |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines)


def details(results: dict[str, Any]) -> str:
    out: list[str] = []
    if (c := results.get("crash")) and c["failures"]:
        out += ["Crash failures:", *[f"- {f}" for f in c["failures"]], ""]
    if (c := results.get("concurrency")) and (c["error_messages"] or c["corrupt_examples"]):
        out += ["Concurrency errors:", *[f"- {n}× {m}" for m, n in c["error_messages"].items()],
                *[f"- corrupt: {m}" for m in c["corrupt_examples"]], ""]
    if c := results.get("hostile"):
        if c["crashes"]:
            out += ["Bad-input crashes:", *[f"- {m}" for m in c["crashes"]], ""]
        out += [f"Bad input: skipped files and their reasons (`dowse status --skipped`, as "
                f"{c['privileges']}):", ""]
        out += _listing([f"{p!r} ({r})" for p, r in c["skipped"]])
        if c["indexed_with_note"]:
            out += ["Indexed as text, with the reason:", ""]
            out += _listing([f"{p} ({n})" for p, n in c["indexed_with_note"]])
    if (c := results.get("fuzz")) and c["crashes"]:
        out += ["Fuzz crashes:", *[f"- {m}" for m in c["crashes"]], ""]
    if c := results.get("secrets"):
        out += ["Secrets seeded, and what the index did with each:", ""]
        out += _listing([f"{p} ({w}: {r})" for p, w, r in c["files"]])
    if c := results.get("corrupt"):
        out += ["| damage | `dowse status` says | incremental `dowse index` |", "|---|---|---|"]
        out += [f"| {r['case']} | {r['status']} | {r['incremental_index']} |"
                for r in c["results"]]
        out.append("")
    return "\n".join(out)


def method(args: argparse.Namespace) -> str:
    """How the faults were made, in a paragraph for the results file."""
    root = os.geteuid() == 0
    read_only = ("chmod, with `dowse` run by root without CAP_DAC_OVERRIDE (capsh)"
                 if root and without_dac() else "chmod" if not root else "not simulated")
    disk = "RLIMIT_FSIZE (writes fail with EFBIG)" + (
        " and a 64 MB tmpfs filled to a few KiB (ENOSPC)" if args.tmpfs else "")
    return textwrap.fill(
        f"Crash kills are SIGKILL to the `dowse index` process alone, as `kill -9 PID`. "
        f"The disk is made full with {disk}; the index directory read-only with "
        f"{read_only}. Kills with embeddings use all-MiniLM-L6-v2 (minilm-onnx). Every "
        "state a kill is checked against is a fresh `--no-embed` index of the same tree "
        "in another directory. Per-case details (JSON) are kept in `--work`/results.json.",
        width=90)


def _listing(items: list[str]) -> list[str]:
    """A long '; '-separated list as an indented block of short lines."""
    return [textwrap.fill("; ".join(items), width=92, initial_indent="    ",
                          subsequent_indent="    ", break_long_words=False), ""]


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



def main() -> None:
    parser = argparse.ArgumentParser(
        description="Crash, concurrency, bad-input, fuzz, secrets, disk-full and corruption "
                    "figures for dowse.")
    parser.add_argument("--repo", type=Path, required=True,
                        help="git work tree, bare clone or directory: crash and concurrency")
    parser.add_argument("--embed-repo", type=Path, default=None,
                        help="a medium repository for the runs with embeddings and the "
                             "disk-full cases (default: --repo)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/dowse-reliability"),
                        help="scratch directory (emptied of earlier runs' copies)")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated subset")
    parser.add_argument("--cold-kills", type=int, default=4)
    parser.add_argument("--kills", type=int, default=34, help="incremental lexical kills")
    parser.add_argument("--embed-cold-kills", type=int, default=2)
    parser.add_argument("--embed-kills", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=90, help="concurrency run time")
    parser.add_argument("--cli-clients", type=int, default=4)
    parser.add_argument("--mcp-clients", type=int, default=4)
    parser.add_argument("--fuzz-examples", type=int, default=300, help="per language")
    parser.add_argument("--fsize-limits", type=lambda v: [int(x) for x in v.split(",")],
                        default=[0, 1024, 16_384, 262_144], help="RLIMIT_FSIZE values, bytes")
    parser.add_argument("--tmpfs", action="store_true",
                        help="also fill a small tmpfs (ENOSPC); needs root")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--write-results", type=Path, default=None, metavar="RESULTS.md",
                        help="put the table into this file's '## Reliability' section")
    args = parser.parse_args()
    args.embed_repo = args.embed_repo or args.repo
    unknown = set(args.cases.split(",")) - set(CASES)
    if unknown:
        parser.error(f"unknown case(s) {', '.join(sorted(unknown))}; choose from {CASES}")
    args.work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    runners = {"crash": crash_case, "concurrency": concurrency_case, "hostile": hostile_case,
               "fuzz": fuzz_case, "secrets": secrets_case, "diskfull": diskfull_case,
               "corrupt": corrupt_case}
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
        section = "\n".join([
            "## Reliability (`benchmarks/reliability.py`)", "",
            f"Measured {dt.date.today().isoformat()} on this machine ({os.cpu_count()} cores), "
            f"{minutes:.0f} minutes in all:", "", "    " + command, "",
            method(args), "", table(results), "", details(results)])
        write_results(args.write_results, section)


if __name__ == "__main__":
    main()
