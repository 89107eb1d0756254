"""Screen a query-embedding idea in seconds: where each task's gold file ranks by file closeness.

Usage:
    python benchmarks/summary_rank.py --dataset DEV.jsonl --work DIR [--window N]
        [--no-compact] [--no-title]

For each task, the issue text is embedded as search does (`retrieval.hybrid.
question_vector`: its absolute paths cut short, its first line blended in, on the query
graph) and the repository's files are ranked as search ranks them by their summary and
definition vectors (`file_ranking.file_dense`); it prints the
share of tasks whose gold files all lie in the top 5, 10 and 20, and the MRR. The
indexes are the ones `dowse eval swebench --work DIR` leaves (`DIR/<owner>__<name>/
.dowse-index`, at the last instance's base commit of each repository), so this is a
proxy: a gold file missing from that index leaves its task out, and the summaries are
not those of each task's own commit. It decides which embedding-input ideas deserve a
full evaluation run, not the figures themselves (benchmarks/RESULTS-eval.md, section 13).

`--window N` embeds at most N tokens (the model's window, 256, by default);
`--no-compact` embeds the text as given; `--no-title` leaves the first line's blend out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from dowse.indexer.onnx_embed import OnnxEmbedder  # noqa: E402
from dowse.indexer.store import Store  # noqa: E402
from dowse.retrieval.file_ranking import file_dense  # noqa: E402
from dowse.retrieval.hybrid import HybridSearcher  # noqa: E402
from dowse.retrieval.query import question_vector  # noqa: E402


def gold_ranks(
    dataset: Path, work: Path, embedder: OnnxEmbedder, *, compact: bool = True, title: bool = True
) -> list[int]:
    """For each task whose gold files the repository's work index holds, the place (from
    1) of its lowest-ranked gold file in search's ranking of files by closeness."""
    searchers: dict[str, HybridSearcher] = {}
    ranks = []
    for line in dataset.read_text().splitlines():
        task = json.loads(line)
        repo = task["repo"].replace("/", "__")
        if repo not in searchers:
            index_dir = work / repo / ".dowse-index"
            if not (index_dir / "manifest.json").is_file():
                continue
            searchers[repo] = HybridSearcher(Store.open(index_dir), None)
        held = searchers[repo].questions.file_matrix()
        if held is None:
            continue
        if not task["gold_files"] or any(g not in held.position for g in task["gold_files"]):
            continue
        vector = question_vector(embedder, task["problem_statement"], compact=compact, title=title)
        ranked = file_dense(searchers[repo].questions, vector.tolist(), len(held.paths))
        place = {path: i + 1 for i, (path, _) in enumerate(ranked)}
        ranks.append(max(place[g] for g in task["gold_files"]))
    return ranks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--window", type=int, default=256)
    ap.add_argument("--no-compact", action="store_true")
    ap.add_argument("--no-title", action="store_true")
    args = ap.parse_args()
    embedder = OnnxEmbedder(max_seq_length=args.window)
    ranks = np.asarray(
        gold_ranks(
            args.dataset, args.work, embedder, compact=not args.no_compact, title=not args.no_title
        )
    )
    if not len(ranks):
        sys.exit("no task's gold files are in the work indexes")
    print(
        f"tasks {len(ranks)}  top5 {np.mean(ranks <= 5) * 100:.1f}  "
        f"top10 {np.mean(ranks <= 10) * 100:.1f}  top20 {np.mean(ranks <= 20) * 100:.1f}  "
        f"MRR {np.mean(1 / ranks):.3f}"
    )


if __name__ == "__main__":
    main()
