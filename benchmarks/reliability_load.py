"""The concurrency case of benchmarks/reliability.py: index loops, CLI and MCP clients,
a mutator and an auditor on one tree at once; the index must end equal to a fresh one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reliability_index import audit, fingerprint
from reliability_proc import DOWSE, REPO, dowse, environment
from reliability_trees import materialize

from dowse.errors import DowseError

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
        pool = sorted(
            p for p in root.rglob("*.py") if p.is_file() and 200 < p.stat().st_size < 60_000
        )
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
            path.write_bytes(
                self.original[path]
                + f"\n\ndef churn_{gen}(value):\n    return value + {gen}\n".encode()
            )
        elif action == "add" or not mine:
            action = "add"
            (self.churn / f"module_{gen}.py").write_text(
                f'"""Churned module {gen}."""\n\n\nclass Churn{gen}:\n'
                f"    def value(self):\n        return {gen}\n"
            )
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
        (
            "ask",
            [
                "ask",
                "where is the value of a churned module returned?",
                "--path",
                str(tree),
                "--json",
                "--budget",
                "1500",
                "--mode",
                "retrieval",
            ],
        ),
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


async def _mcp_client(
    tree: Path, n: int, stop: threading.Event, tally: Tally, log_path: Path
) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=DOWSE[0], args=[*DOWSE[1:], "serve", str(tree)], cwd=str(REPO), env=environment()
    )
    calls = [
        ("search", {"query": "churned module value", "max_tokens": 3000}),
        (
            "ask",
            {"question": "where is the value of a churned module returned?", "max_tokens": 3000},
        ),
        ("symbol", {"name": "Churn", "max_tokens": 2000}),
    ]
    i = n
    with open(log_path, "a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
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


def concurrency_case(
    args: argparse.Namespace, work: Path, rng: random.Random, log: Callable[[str], None]
) -> dict[str, Any]:
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
            await asyncio.gather(
                *[
                    _mcp_client(tree, n, stop, tally, work / "concurrency-serve.log")
                    for n in range(args.mcp_clients)
                ],
                return_exceptions=False,
            )

        try:
            asyncio.run(main())
        except Exception as exc:  # noqa: BLE001
            tally.fail("mcp", f"{type(exc).__name__}: {exc}")

    threads = [
        threading.Thread(target=mutate),
        threading.Thread(target=auditor),
        threading.Thread(target=mcp_clients),
    ]
    threads += [threading.Thread(target=indexer) for _ in range(2)]
    threads += [
        threading.Thread(target=_cli_client, args=(tree, n, stop, tally))
        for n in range(args.cli_clients)
    ]
    log(
        f"concurrency: 2 index loops, {args.cli_clients} CLI and {args.mcp_clients} MCP "
        f"clients, a mutator and an auditor for {args.seconds} s"
    )
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
    log(
        f"concurrency: {sum(tally.served.values())} served, {sum(tally.errors.values())} "
        f"errors, {audits['corrupt']} corrupt of {audits['audits']} audits"
    )
    return {
        "seconds": round(wall, 1),
        "served": dict(tally.served),
        "errors": dict(tally.errors),
        "error_messages": dict(tally.messages.most_common(12)),
        "index_runs": dict(runs),
        "mutations": dict(mutator.count),
        "audits": audits["audits"],
        "corrupt": audits["corrupt"] + len(final_audit),
        "corrupt_examples": corrupt[:5] + final_audit,
        "final_index_equals_fresh": same,
        "final_status_ok": status.code == 0,
    }
