"""Retrieval: hybrid search over an index and the iterative retrieval loop behind `ask`."""

from retrieval.ask import AskResult, ask
from retrieval.hybrid import HybridSearcher
from retrieval.loop import LoopConfig, LoopResult, run_loop
from retrieval.records import Hit, SearchOptions

__all__ = [
    "AskResult",
    "Hit",
    "HybridSearcher",
    "LoopConfig",
    "LoopResult",
    "SearchOptions",
    "ask",
    "run_loop",
]
