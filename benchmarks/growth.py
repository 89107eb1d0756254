"""Growth: how indexing costs grow with the tree, for trees of about 1k, 5k and 20k files.

Usage:
    python benchmarks/growth.py --work DIR --repos GIT_DIR [GIT_DIR ...]
        [--sizes 1000,5000,20000] [--queries FILE.jsonl] [--limit N] [--no-queries]

Each tree is assembled in `--work` from the `--repos` checkouts (bare git directories
or work trees), side by side at their HEAD (`git archive`), in the order given, until it
holds the size's number of files: whole repositories first, then the first files (by
path) of the next one. The trees and their indexes stay in `--work`; nothing is
fetched. Each tree is indexed cold, lexical and symbols only (`dowse index --no-embed
--no-history`, a process of its own), and the row printed per size: files in the tree,
files indexed, symbols, chunks, wall seconds (and the run's own walk / parse / write
split), the peak resident memory of the indexing process and of its process tree (parse
workers included; sampled every 50 ms from /proc), and the index's size on disk. Then
`benchmarks/query_bench.py` times warm `ask` and `search` on the largest tree
(`--queries`: SWE-bench-style JSONL, else its built-in questions).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


def _head_files(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", f"--git-dir={_git_dir(repo)}", "ls-tree", "-r", "--name-only", "-z", "HEAD"],
        capture_output=True,
        check=True,
    ).stdout
    return sorted(p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p)


def _git_dir(repo: Path) -> Path:
    return repo / ".git" if (repo / ".git").exists() else repo


def _export(repo: Path, dest: Path, keep: set[str] | None) -> int:
    """`repo`'s HEAD into `dest` (only `keep` when given); the number of files written."""
    dest.mkdir(parents=True)
    archive = subprocess.Popen(
        ["git", f"--git-dir={_git_dir(repo)}", "archive", "--format=tar", "HEAD"],
        stdout=subprocess.PIPE,
    )
    assert archive.stdout is not None
    written = 0
    with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
        for member in tar:
            if member.isdir() or (keep is not None and member.name not in keep):
                continue
            if member.isfile():
                written += 1
            tar.extract(member, dest, filter="data")
    if archive.wait() != 0:
        raise SystemExit(f"git archive failed in {repo}")
    return written


def assemble(repos: list[Path], size: int, dest: Path) -> tuple[int, list[str]]:
    """A tree of `size` files from `repos`, side by side; (files, names used)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    total, used = 0, []
    for repo in repos:
        if total >= size:
            break
        files = _head_files(repo)
        keep = None if total + len(files) <= size else set(files[: size - total])
        total += _export(repo, dest / repo.name.removesuffix(".git"), keep)
        used.append(repo.name if keep is None else f"{repo.name} ({len(keep)} files)")
    return total, used


class TreeRss:
    """Peak resident memory of a process and of its descendants, sampled from /proc."""

    def __init__(self, pid: int, every_s: float = 0.05) -> None:
        self.pid, self.every_s = pid, every_s
        self.peak_self = self.peak_tree = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _rss(self) -> dict[int, tuple[int, int]]:
        """pid -> (ppid, rss bytes) of every process."""
        out = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            out[int(entry)] = (int(fields[1]), int(fields[21]) * PAGE)
        return out

    def _run(self) -> None:
        while not self._stop.is_set():
            procs = self._rss()
            tree, frontier = {self.pid}, [self.pid]
            while frontier:
                parent = frontier.pop()
                for pid, (ppid, _) in procs.items():
                    if ppid == parent and pid not in tree:
                        tree.add(pid)
                        frontier.append(pid)
            self.peak_self = max(self.peak_self, procs.get(self.pid, (0, 0))[1])
            self.peak_tree = max(self.peak_tree, sum(procs[p][1] for p in tree if p in procs))
            self._stop.wait(self.every_s)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def index_tree(tree: Path) -> dict:
    index_dir = tree / ".dowse"
    if index_dir.exists():
        shutil.rmtree(index_dir)
    cmd = [sys.executable, "-m", "dowse", "index", str(tree), "--no-embed", "--no-history"]
    cmd += ["--quiet", "--json"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rss = TreeRss(proc.pid)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    rss.stop()
    if proc.returncode != 0:
        raise SystemExit(f"dowse index {tree} failed:\n{err.decode()[-2000:]}")
    stats = json.loads(out)
    return {
        "stats": stats,
        "wall": wall,
        "rss_self": rss.peak_self,
        "rss_tree": rss.peak_tree,
        "index_bytes": _du(index_dir),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--repos", type=Path, nargs="+", required=True)
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--queries", type=Path)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--no-queries", action="store_true", help="skip the warm queries")
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()}")
    print(
        "files | indexed | symbols | chunks | wall s | walk | parse | write | "
        "peak RSS MB (index process) | peak RSS MB (with workers) | index MB | trees"
    )
    print("--- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | ---")
    largest = None
    for size in sizes:
        tree = opts.work / f"tree-{size}"
        files, used = assemble(opts.repos, size, tree)
        r = index_tree(tree)
        s = r["stats"]
        secs = s.get("seconds", {})
        print(
            f"{files} | {s['files']} | {s['symbols']} | {s['chunks']} | {r['wall']:.1f} | "
            f"{secs.get('walk', 0):.1f} | {secs.get('parse', 0):.1f} | "
            f"{secs.get('write', 0):.1f} | {r['rss_self'] / 1e6:.0f} | "
            f"{r['rss_tree'] / 1e6:.0f} | {r['index_bytes'] / 1e6:.1f} | {', '.join(used)}",
            flush=True,
        )
        largest = tree
    print(f"load after indexing {os.getloadavg()}")
    if largest is not None and not opts.no_queries:
        bench = Path(__file__).resolve().parent / "query_bench.py"
        cmd = [sys.executable, str(bench), "--index-root", str(largest)]
        cmd += ["--limit", str(opts.limit)]
        if opts.queries:
            cmd += ["--queries", str(opts.queries)]
        print(f"warm queries on {largest.name}:", flush=True)
        subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
