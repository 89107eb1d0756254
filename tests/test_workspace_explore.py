"""MCP `explore`'s answer fitted to `max_tokens`: the report's sections share the budget
inside the whole answer, the budget record it carries included."""

from __future__ import annotations

from dowse.errors import BudgetTooSmall
from dowse.explore.records import Dependency, ExploreResult, ManifestReport
from dowse.server.records import Budget, ExploreAnswer, Freshness
from dowse.server.workspace import explore_answer


def test_an_explore_answer_fits_whatever_count_of_items_it_says_it_left_out():
    # xarray at max_tokens 3000: the sections were fitted with a budget record saying
    # nothing was left out, the answer then said 769 were: one token over, refused.
    deps = [
        Dependency(name=f"package-{i}", manifest="requirements.txt", line=i + 1)
        for i in range(1500)
    ]
    result = ExploreResult(
        path=".",
        root="/r",
        depth="deep",
        dependencies=ManifestReport(manifests=["requirements.txt"], dependencies=deps),
    )

    def answer(fitted: ExploreResult, budget: Budget) -> ExploreAnswer:
        return ExploreAnswer(
            root="/r", result=fitted, freshness=Freshness(snapshot=0), budget=budget
        )

    refused = []
    for max_tokens in range(500, 700, 5):
        try:
            fitted = explore_answer(result, max_tokens, answer)
        except BudgetTooSmall as e:
            refused.append((max_tokens, str(e)))
            continue
        assert fitted.budget.tokens <= max_tokens
        assert fitted.budget.omitted == 1500 - len(fitted.result.dependencies.dependencies)
    # Only a budget too small for the report's outline is refused, and as such.
    assert all("cannot hold an explore report" in e for _, e in refused)
