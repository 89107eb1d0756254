"""Focused excerpts: a long definition shown by its signature and the lines that carry the
question's evidence, the rest elided with line numbers kept (retrieval/excerpts.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import make_tree

from dowse.evaluation.swebench import _ask_spans, _ask_units
from dowse.indexer.build import build_index
from dowse.indexer.store import Store
from dowse.retrieval.ask import (
    AskResult,
    ContextBlock,
    Packing,
    _cost,
    ask,
    fit_result,
    render_markdown,
)
from dowse.retrieval.budget import estimate_tokens
from dowse.retrieval.excerpts import (
    Evidence,
    choose_windows,
    excerpt_text,
    is_marker,
    line_scores,
    marker,
)
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.query import analyze

QUESTION = "process_order raises CouponExpiredError 'coupon has expired' for a valid coupon"
RAISE_LINE = 67  # the line that raises, deep inside `process_order` (4-127)


def _orders(root: Path) -> Path:
    """A module whose one long function raises the error the question names deep inside,
    and short helpers after it."""
    lines = ['"""Order processing."""', "", "", "def process_order(order, inventory, ledger):"]
    lines += ['    """Process one order end to end."""']
    lines += [f"    step_{i} = order.items[{i % 5}] if order.items else None" for i in range(60)]
    lines += [
        "    if order.coupon and order.coupon.expired:",
        "        raise CouponExpiredError('coupon has expired')",
        "    total = sum(item.price for item in order.items)",
    ]
    lines += [f"    tally_{i} = ledger.entries[{i % 7}] if ledger else None" for i in range(58)]
    lines += ["    return total", "", "", "class CouponExpiredError(Exception):"]
    lines += ['    """The coupon is past its date."""', ""]
    assert lines[RAISE_LINE - 1].startswith("        raise CouponExpiredError")
    return make_tree(root, {"shop/orders.py": "\n".join(lines) + "\n"})


def _printed(block: ContextBlock) -> dict[int, str]:
    """An excerpt's printed lines by their line number, read back from its text and its
    markers alone, as a reader would."""
    out: dict[int, str] = {}
    at = block.start_line
    for line in block.text.split("\n"):
        if is_marker(line):
            numbers = [int(n) for n in re.findall(r"\d+", line)]
            assert numbers[0] == at, (line, at)
            at = numbers[-1] + 1
        else:
            out[at] = line
            at += 1
    assert at == block.end_line + 1
    return out


def test_an_excerpt_keeps_every_printed_line_at_its_number():
    lines = [f"line {n}" for n in range(10, 41)]
    windows = [(10, 11), (20, 24), (39, 40)]
    text = excerpt_text(lines, 10, 40, windows)
    block = ContextBlock(
        path="a.py",
        start_line=10,
        end_line=40,
        relevance=1.0,
        reason="",
        form="excerpt",
        text=text,
        tokens=0,
        windows=windows,
    )
    printed = _printed(block)
    assert printed == {n: f"line {n}" for a, b in windows for n in range(a, b + 1)}
    assert text.split("\n")[2] == marker(12, 19) == "⋮ (lines 12-19)"
    assert marker(5, 5) == "⋮ (line 5)"


def test_windows_grow_around_the_strongest_evidence_while_they_fit():
    lines = ["def f(order):"] + [f"    x{n} = order.total" for n in range(1, 40)]
    lines[20] = "    raise CouponExpiredError('coupon has expired')"
    lines[30] = "    coupon = order.coupon"
    evidence = Evidence.of(analyze(QUESTION))
    scores = line_scores(lines, 1, evidence)
    assert max(scores, key=lambda n: scores[n]) == 21  # the name and the quoted message
    assert 31 in scores  # a rarer word of the question
    assert 5 not in scores  # `order` is on every line: no evidence
    one = choose_windows(scores, 1, 40, [(1, 1)], lambda w: sum(b - a + 1 for a, b in w) <= 8)
    assert one == [(1, 1), (18, 24)]
    both = choose_windows(scores, 1, 40, [(1, 1)], lambda w: True)
    assert both == [(1, 1), (18, 24), (28, 34)]


@pytest.fixture
def orders(tmp_path, fake_embedder) -> HybridSearcher:
    root = _orders(tmp_path / "repo")
    build_index(root, embedder=fake_embedder)
    return HybridSearcher(Store.open(root / ".dowse"), lambda: fake_embedder)


def test_a_long_function_is_shown_by_its_signature_and_the_lines_the_question_names(orders):
    result = ask(orders, QUESTION, budget=1000)
    excerpt = next(b for b in result.context if b.form == "excerpt")
    where = (excerpt.path, excerpt.start_line, excerpt.symbol)
    assert where == ("shop/orders.py", 4, "process_order")
    source = (orders.root / "shop/orders.py").read_text().split("\n")
    printed = _printed(excerpt)
    assert printed, "an excerpt prints lines"
    for n, line in printed.items():
        assert line == source[n - 1], n
    assert printed[4] == "def process_order(order, inventory, ledger):"
    assert RAISE_LINE in printed
    assert sorted(printed) == [n for a, b in excerpt.windows for n in range(a, b + 1)]
    assert len(printed) < excerpt.end_line - 4 + 1, "the lines between the windows are left out"
    # Without excerpts the function is a chunk of it or its signature line.
    plain = ask(orders, QUESTION, budget=1000, packing=Packing(excerpts=False))
    assert all(b.form != "excerpt" for b in plain.context)


def test_only_the_windows_count_as_shown(orders, tmp_path):
    result = ask(orders, QUESTION, budget=1000)
    excerpt = next(b for b in result.context if b.form == "excerpt")
    spans = [(s.start, s.end) for s in _ask_spans(orders.root, result) if s.path == excerpt.path]
    assert set(excerpt.windows) <= set(spans)
    elided = set(range(excerpt.start_line, excerpt.end_line + 1)) - set(_printed(excerpt))
    shown = {n for a, b in spans for n in range(a, b + 1)}
    assert elided and not elided & shown
    # found_functions reads the definitions each window shows, as it does a full block's.
    units = [u for u in _ask_units(result) if u[0] == excerpt.path]
    assert {(a, b) for _, a, b, _, lines in units if lines} >= set(excerpt.windows)


@pytest.mark.parametrize("budget", [256, 400, 600, 800, 1000, 1500, 2000, 4000, 20000])
def test_excerpts_stay_within_every_budget(orders, budget):
    result = ask(orders, QUESTION, budget=budget)
    printed = fit_result(result, budget, render_markdown)
    assert estimate_tokens(render_markdown(printed)) <= budget
    assert isinstance(printed, AskResult)
    for block in printed.context:
        if block.form == "excerpt":
            _printed(block)  # its markers account for every line of its range
            assert block.tokens == _cost(block)
