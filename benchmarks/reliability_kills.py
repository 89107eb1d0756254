"""The crash case of benchmarks/reliability.py: `dowse index` killed with SIGKILL (cold,
incremental and with embeddings), and what each kill leaves checked against the old and
the new state of the tree.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliability_index import answers, cli_hits, fingerprint, inspect, table_heads
from reliability_proc import Ran, dowse, launch, reap_group
from reliability_trees import States, materialize

from dowse.indexer.store import Store

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

    def __init__(
        self,
        tree: Path,
        work: Path,
        rng: random.Random,
        *,
        embed: bool,
        tally: CrashTally,
        label: str,
    ) -> None:
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
            cli = (
                None
                if self.embed
                else cli_hits(
                    dowse(
                        "search", self.cli_query, "--json", "-n", "5", "--index-dir", str(ref_dir)
                    )
                )
            )
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
            self.tally.failures.append(
                f"{self.label} {kind} kill {self.tally.kills} ({phase}): {'; '.join(problems)}"
            )
        return True

    def _phase(self, before: bytes) -> str:
        try:
            after = (self.index_dir / "manifest.json").read_bytes()
        except FileNotFoundError:
            after = b""
        if not after:
            return "before the first commit"
        manifest = json.loads(after)
        ahead = any(
            v > manifest["versions"].get(name, 0) for name, v in table_heads(self.index_dir).items()
        )
        if after == before:
            return "mid-write (uncommitted table versions)" if ahead else "before any write"
        if self.embed and not manifest["embedded"]:
            return "after the lexical commit, embedding"
        return "mid-write after a commit" if ahead else "after the last commit"

    def _check(self, old: int | None, new: int, *, count: bool) -> list[str]:
        problems: list[str] = []
        status, search, inspected, got = _parallel(
            lambda: dowse("status", str(self.tree), "--json"),
            lambda: dowse("search", self.cli_query, "--path", str(self.tree), "--json", "-n", "5"),
            lambda: inspect(self.index_dir),
            lambda: answers(self.index_dir, self.queries),
        )
        for result in (inspected, got):
            if isinstance(result, Exception):
                problems.append(f"the index cannot be read: {type(result).__name__}: {result}")
                return problems
        fp, bad = inspected
        for ran in (status, search):
            if ran.traceback or not (ran.code == 0 or (old is None and "no index" in ran.err)):
                problems.append(f"`dowse {ran.args[0]}` exit {ran.code}: {ran.last_line}")
        refs = {
            "old": self.reference(old) if old is not None else Reference(None, None, None),
            "new": self.reference(new),
        }
        match = [
            name
            for name, ref in refs.items()
            if fp == ref.fingerprint
            and got == ref.answers
            and (self.embed or cli_hits(search) == ref.cli)
        ]
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


def crash_case(
    args: argparse.Namespace, work: Path, rng: random.Random, log: Callable[[str], None]
) -> dict[str, Any]:
    tally = CrashTally()
    runs = [
        ("lexical", args.repo, False, args.cold_kills, args.kills),
        ("embed", args.embed_repo, True, args.embed_cold_kills, args.embed_kills),
    ]
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
            log(
                f"crash/{label}: cold run {attempt + 1}: {done}/{cold} kills, "
                f"{tally.survived}/{tally.kills} survived so far"
            )
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
            log(
                f"crash/{label}: incremental run {attempt + 1}: {done}/{incremental} kills, "
                f"{tally.survived}/{tally.kills} survived so far"
            )
    recover = sorted(tally.recover_s)
    return {
        "kills": tally.kills,
        "survived": tally.survived,
        "phases": dict(tally.phases),
        "ended_before_kill": tally.too_late,
        "matched": dict(tally.matched),
        "orphans": tally.orphans,
        "failures": tally.failures,
        "timing": timing,
        "recover_median_s": round(recover[len(recover) // 2], 1) if recover else None,
    }
