"""Token budgets shared by every part: the CLI's defaults, the MCP records and the
library's (`ask`, `explore`'s hand-off). Imports nothing, so any module may use it."""

DEFAULT_BUDGET = 8000
"""Tokens of context `ask` packs when no budget is given: room for the files list and
about a dozen whole definitions of an ordinary module."""
