"""Exploration: explorers on gated tracks run in parallel, their cited findings checked
against the files and merged into one report; and `ask`'s hand-off to them."""

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
