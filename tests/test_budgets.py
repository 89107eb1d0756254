"""Each default budget is written once, in dowse/budgets.py, and every part that takes a
budget defaults to it: the CLI options, the settings key, the MCP `ask` record, the
evaluation configs."""

from __future__ import annotations

import click

from dowse.budgets import DEFAULT_BUDGET, EVAL_BUDGET
from dowse.cli import cli
from dowse.evaluation.history import HistoryConfig
from dowse.evaluation.swebench import EvalConfig
from dowse.server.records import AskRequest
from dowse.settings import KEYS


def option(*path: str, name: str) -> click.Parameter:
    command: click.Command = cli
    for part in path:
        assert isinstance(command, click.Group)
        command = command.commands[part]
    (param,) = [p for p in command.params if p.name == name]
    return param


def test_ask_defaults_to_the_one_default_budget():
    # `dowse ask --budget` has no default of its own: the settings' key supplies it.
    assert option("ask", name="budget").default is None
    assert KEYS["budget"].default == DEFAULT_BUDGET
    assert AskRequest.model_fields["max_tokens"].default == DEFAULT_BUDGET


def test_evaluations_default_to_the_one_eval_budget():
    assert EvalConfig.model_fields["budget"].default == EVAL_BUDGET
    assert HistoryConfig.model_fields["budget"].default == EVAL_BUDGET
    assert option("eval", "swebench", name="budget").default == EVAL_BUDGET
    assert option("eval", "history", name="budget").default == EVAL_BUDGET
