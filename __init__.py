"""dowse: local, index-backed code retrieval.

The repository's folders are this package's parts (`pyproject.toml` maps them under one
import namespace, so an install adds `dowse` to site-packages and nothing else):

    files ─ dowse.indexer (walk → parse → chunk → embed → store) ─▶ LanceDB index
    question ─ dowse.retrieval (hybrid search, iterative loop) ─▶ ranked, cited context
    context ─ dowse.explore (tracks in parallel, gates, synthesis) ─▶ report
    dowse.server (MCP tools over the same library), dowse.evaluation (benchmarks' harness)
    dowse.cli: parse options, call one library function, render

`dowse.errors`, `dowse.languages` and `dowse.tokens` are the basics every part shares.
"""

__version__ = "0.1.0"
