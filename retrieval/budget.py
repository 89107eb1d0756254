"""The one token counter, and fitting an answer into a budget by whole-record steps.

Invariants:
- One counter: every budget dowse honours (`ask --budget`, `explore --budget`, the MCP
  tools' `max_tokens`) is counted by `estimate_tokens` on the text as printed: 3 ASCII
  characters a token, and a token for each other character. Measured against four real
  tokenizers (cl100k, o200k, an earlier Claude's, DeepSeek's; `benchmarks/token_counts.py`,
  benchmarks/RESULTS-context.md), dowse's answers count 0.84-0.95 of it (median) and at
  most 1.0 by cl100k, o200k and DeepSeek, 1.06 by the old Claude one; dense source outside
  Python up to 1.3. At 3 characters a token for every character, a Thai or Arabic
  locale file counted 2.9-3.6 times its estimate (1.7-2.2 at most now, dayjs's locales):
  a tokenizer's vocabulary covers such text thinly. A token a character, not a token a
  byte: box drawing, arrows and accented letters are about a token each.
- A fit is a plan of steps, each moving one record one level down (0 whole, 1 cut to
  its short form, 2 left out), applied in the plan's order; `fit` finds the fewest steps
  whose answer, measured whole, is within the budget. A record is never cut mid-way,
  and which records go first is the caller's plan, not this module's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from dowse.errors import BudgetTooSmall

__all__ = ["CHARS_PER_TOKEN", "Entry", "Levels", "Step", "estimate_tokens", "fit", "steps"]

CHARS_PER_TOKEN = 3.0

T = TypeVar("T")

Entry = tuple[Any, Any]
"""A record in its whole form and its short form (None: it cannot be cut, only left out)."""
Step = tuple[int, int, int]
"""(group, record, level): move the record of that group down to that level."""
Levels = list[list[int]]


def estimate_tokens(text: str) -> int:
    """The tokens `text` is counted as (the module's invariants say how and why)."""
    n = len(text)
    if text.isascii():
        return math.ceil(n / CHARS_PER_TOKEN)
    ascii_chars = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / CHARS_PER_TOKEN) + n - ascii_chars


def steps(
    group: int, entries: Sequence[Entry], level: int, only: Callable[[Any], bool] | None = None
) -> list[Step]:
    """Steps moving a group's records to `level`, from the last (the lowest-ranked) up;
    `only` picks the records the steps apply to, and cutting skips records that have no
    short form."""
    return [
        (group, i, level)
        for i in reversed(range(len(entries)))
        if (level != 1 or entries[i][1] is not None) and (only is None or only(entries[i][0]))
    ]


def forms(groups: Sequence[Sequence[Entry]], levels: Levels) -> list[list[Any]]:
    """Each group's kept records in their form at `levels`, in the groups' order."""
    return [
        [entries[i][min(levels[g][i], 1)] for i in range(len(entries)) if levels[g][i] < 2]
        for g, entries in enumerate(groups)
    ]


def fit(
    build: Callable[[Levels, int], T],
    groups: Sequence[Sequence[Entry]],
    plan: Iterable[Step],
    measure: Callable[[T], int],
    budget: int,
) -> T:
    """The answer `build(levels, claimed)` makes after the fewest steps of `plan` that
    bring `measure` of it within `budget`; `claimed` is the count the answer states
    about itself, settled so that it is the answer's own count. BudgetTooSmall when
    even the whole plan does not fit."""
    ordered = list(plan)

    def make(k: int, claimed: int) -> tuple[T, int]:
        levels = [[0] * len(entries) for entries in groups]
        for g, i, lv in ordered[:k]:
            levels[g][i] = max(levels[g][i], lv)
        answer = build(levels, claimed)
        return answer, measure(answer)

    lo, hi = 0, len(ordered)
    if make(hi, budget)[1] > budget:
        raise BudgetTooSmall(f"a budget of {budget} tokens cannot hold even an empty answer here")
    while lo < hi:
        mid = (lo + hi) // 2
        if make(mid, budget)[1] <= budget:
            hi = mid
        else:
            lo = mid + 1
    claimed = budget
    while True:  # the count is part of the answer: settle on the one describing it
        answer, tokens = make(lo, claimed)
        if tokens == claimed:
            return answer
        claimed = tokens  # fewer digits never make the answer longer, so this ends
