"""Retrieval: hybrid search over an index and the iterative retrieval loop behind `ask`.

The public names are imported on first use (`dowse.lazy`): importing one submodule, say
`dowse.retrieval.records`, must not import the searcher and LanceDB with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dowse.lazy import exports

if TYPE_CHECKING:
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

exports(
    __name__,
    {
        "AskResult": "dowse.retrieval.ask",
        "ask": "dowse.retrieval.ask",
        "HybridSearcher": "dowse.retrieval.hybrid",
        "LoopConfig": "dowse.retrieval.loop",
        "LoopResult": "dowse.retrieval.loop",
        "run_loop": "dowse.retrieval.loop",
        "Hit": "dowse.retrieval.records",
        "SearchOptions": "dowse.retrieval.records",
    },
)
