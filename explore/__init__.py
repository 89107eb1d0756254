"""Exploration: explorers on gated tracks run in parallel, their cited findings checked
against the files and merged into one report; and `ask`'s hand-off to them.

The public names are imported on first use (`dowse.lazy`): importing one submodule must
not import every explorer and the searcher with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dowse.lazy import exports

if TYPE_CHECKING:
    from dowse.explore.handoff import AskReport, investigate, plan
    from dowse.explore.records import ExploreResult, Finding, TrackFindings
    from dowse.explore.render import fit_budget, render_markdown
    from dowse.explore.run import explore
    from dowse.explore.tracks import Context, Track, run_track

__all__ = [
    "AskReport",
    "Context",
    "ExploreResult",
    "Finding",
    "Track",
    "TrackFindings",
    "explore",
    "fit_budget",
    "investigate",
    "plan",
    "render_markdown",
    "run_track",
]

exports(
    __name__,
    {
        **dict.fromkeys(["AskReport", "investigate", "plan"], "dowse.explore.handoff"),
        **dict.fromkeys(["ExploreResult", "Finding", "TrackFindings"], "dowse.explore.records"),
        **dict.fromkeys(["fit_budget", "render_markdown"], "dowse.explore.render"),
        "explore": "dowse.explore.run",
        **dict.fromkeys(["Context", "Track", "run_track"], "dowse.explore.tracks"),
    },
)
