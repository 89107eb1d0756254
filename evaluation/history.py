"""Evaluation on a repository's own history: `dowse eval history`.

For the last N non-merge commits that modify source files, the tree at the commit's
parent is indexed (incrementally, commit after commit, as `run_swebench` does), the commit
message is the query and the source files the commit modified are the truth; each method
is scored by Recall@k (share of those files within the top k) and MRR. A user learns how
well dowse works on their own code, no dataset needed.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from dowse.budgets import EVAL_BUDGET
from dowse.errors import EvalError
from dowse.evaluation.gittree import git, git_dir_of, sync_tree
from dowse.evaluation.swebench import (
    Method,
    MethodRunner,
    Progress,
    no_progress,
    resolve_methods,
)
from dowse.indexer.build import IndexConfig
from dowse.indexer.commits import HistorySource
from dowse.indexer.embed import Embedder
from dowse.indexer.secrets import redact
from dowse.languages import CODE_LANGUAGES, language_for

__all__ = [
    "HISTORY_KS",
    "HistoryConfig",
    "HistoryReport",
    "HistoryResult",
    "HistoryScore",
    "run_history",
]

HISTORY_KS = (1, 5, 10)


class HistoryConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repo: Path = Field(description="a git repository (bare or not)")
    work: Path = Field(description="where the tree and its index live")
    commits: int = Field(default=50, gt=0, description="the last N qualifying commits")
    methods: list[Method] | None = None
    budget: int = Field(default=EVAL_BUDGET, gt=0)
    embed: bool = True
    embed_chunks: bool = IndexConfig.embed_chunks
    found_limit: int = Field(default=20, gt=0, le=1000)
    index_workers: int | None = Field(default=1, gt=0)


class HistoryResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    commit: str
    parent: str
    subject: str
    changed_files: list[str] = Field(description="source files the commit modified")
    method: Method
    found_files: list[str]
    seconds: float


class HistoryScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n: int
    recall: dict[int, float] = Field(description="k -> Recall@k, percent")
    mrr: float
    seconds_median: float | None = None


class HistoryReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repo: str
    commits: list[str] = Field(description="commits evaluated, oldest first")
    methods: list[Method]
    results: list[HistoryResult]
    scores: dict[str, HistoryScore] = Field(description="method -> score")


def _source_commits(git_dir: Path, n: int) -> list[tuple[str, str, str, list[str]]]:
    """The last n non-merge commits that modify source files, newest first:
    (commit, parent, message, modified source files)."""
    out: list[tuple[str, str, str, list[str]]] = []
    log = git(git_dir, "log", "--no-merges", "-z", "--format=%H %P%x1f%B").split(b"\0")
    for entry in log:
        if not entry.strip():
            continue
        head, _, body = entry.decode("utf-8", "replace").partition("\x1f")
        ids = head.strip().split()
        if len(ids) != 2:
            continue  # a root commit has nothing to index before it
        commit, parent = ids
        status = git(
            git_dir, "diff-tree", "-r", "-z", "--no-renames", "--name-status", parent, commit
        ).split(b"\0")
        changed = [
            status[i + 1].decode("utf-8", "surrogateescape")
            for i in range(0, len(status) - 1, 2)
            if status[i] == b"M"
            and language_for(status[i + 1].decode("utf-8", "surrogateescape")) in CODE_LANGUAGES
        ]
        if changed and body.strip():
            # The message is the query and its subject is printed: redacted as every
            # text dowse shows (a key pasted into a commit message stays in git only).
            out.append((commit, parent, redact(body.strip()), changed))
            if len(out) == n:
                break
    return out


def run_history(
    config: HistoryConfig, *, embedder: Embedder, progress: Progress = no_progress
) -> HistoryReport:
    """Query the tree at each recent commit's parent with the commit message; score
    Recall@k and MRR of the source files the commit modified."""
    git_dir = git_dir_of(config.repo)
    methods = resolve_methods(config.methods, config.embed)
    commits = list(reversed(_source_commits(git_dir, config.commits)))  # oldest first
    if not commits:
        raise EvalError(f"no non-merge commit modifying source files in {config.repo}")
    run = MethodRunner(
        config.work / "tree",
        config.work / ".dowse-index",
        methods=methods,
        embedder=embedder,
        embed=config.embed,
        embed_chunks=config.embed_chunks,
        budget=config.budget,
        found_limit=config.found_limit,
        workers=config.index_workers,
        progress=progress,
    )
    results: list[HistoryResult] = []
    progress("commits", 0, len(commits))
    for n, (commit, parent, message, changed) in enumerate(commits, 1):
        files = sync_tree(git_dir, parent, config.work / "tree")
        run.prepare(files, methods, HistorySource(git_dir, parent))
        for method in methods:
            answer = run.query(method, message)
            results.append(
                HistoryResult(
                    commit=commit,
                    parent=parent,
                    subject=message.splitlines()[0][:200],
                    changed_files=changed,
                    method=method,
                    found_files=answer.found,
                    seconds=round(answer.seconds, 4),
                )
            )
        progress("commits", n, len(commits))
    scores: dict[str, HistoryScore] = {
        m: _history_score([r for r in results if r.method == m]) for m in methods
    }
    return HistoryReport(
        repo=str(config.repo),
        commits=[c[0] for c in commits],
        methods=methods,
        results=results,
        scores=scores,
    )


def _history_score(results: Sequence[HistoryResult]) -> HistoryScore:
    recall = dict.fromkeys(HISTORY_KS, 0.0)
    mrr = 0.0
    for r in results:
        gold = set(r.changed_files)
        for k in HISTORY_KS:
            recall[k] += len(gold & set(r.found_files[:k])) / len(gold)
        mrr += next((1.0 / (i + 1) for i, f in enumerate(r.found_files) if f in gold), 0.0)
    n = len(results) or 1
    seconds = [r.seconds for r in results]
    return HistoryScore(
        n=len(results),
        recall={k: round(100 * v / n, 2) for k, v in recall.items()},
        mrr=round(mrr / n, 4),
        seconds_median=round(statistics.median(seconds), 3) if seconds else None,
    )
