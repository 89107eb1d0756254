"""Retrieval: hybrid search over an index and the iterative retrieval loop behind `ask`."""

from dowse.retrieval.ask import AskResult, ask
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.loop import LoopConfig, LoopResult, run_loop
from dowse.retrieval.records import Hit, SearchOptions

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
