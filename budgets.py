"""Token budgets shared by every part: the CLI's defaults, the MCP records, the library's
(`ask`, `explore`'s hand-off) and the evaluation harness'. Imports nothing, so any module
may use it."""

DEFAULT_BUDGET = 8000
"""Tokens of context `ask` packs when no budget is given: room for the files list and
about a dozen whole definitions of an ordinary module."""

EVAL_BUDGET = 4000
"""Tokens of context an evaluation gives each method (`dowse eval swebench` and `dowse eval
history`, their configs): every figure in benchmarks/RESULTS*.md and the README's results
table was measured at this budget, so a run with the defaults compares with them."""
