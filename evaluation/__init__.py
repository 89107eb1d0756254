"""Evaluation harness: SWE-bench-style file localization (`swebench`), a repository's own
history replayed (`history`), on trees synced from git clones (`gittree`).

The public names are imported on first use (`dowse.lazy`), as the other packages' are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dowse.lazy import exports

if TYPE_CHECKING:
    from dowse.evaluation.history import HistoryConfig, HistoryReport, run_history
    from dowse.evaluation.swebench import (
        EvalConfig,
        EvalReport,
        Prediction,
        load_dataset,
        load_predictions,
        run_swebench,
        score,
    )

__all__ = [
    "EvalConfig",
    "EvalReport",
    "HistoryConfig",
    "HistoryReport",
    "Prediction",
    "load_dataset",
    "load_predictions",
    "run_history",
    "run_swebench",
    "score",
]

exports(
    __name__,
    {
        **dict.fromkeys(
            ["HistoryConfig", "HistoryReport", "run_history"], "dowse.evaluation.history"
        ),
        **dict.fromkeys(
            [
                "EvalConfig",
                "EvalReport",
                "Prediction",
                "load_dataset",
                "load_predictions",
                "run_swebench",
                "score",
            ],
            "dowse.evaluation.swebench",
        ),
    },
)
