"""`ask`'s ranked definitions (retrieval/definitions.py): the definitions of its first
files by the rankings over all of them, with the file's place; the first few listed in
room the packing leaves them, the others in the room the context leaves."""

from __future__ import annotations

import json

import pytest

from dowse.explore.handoff import fit_report, investigate, render_report
from dowse.indexer.store import Store
from dowse.retrieval.ask import Frame, ask, fit_result, render_markdown
from dowse.retrieval.budget import estimate_tokens
from dowse.retrieval.definitions import (
    DefinitionRanking,
    RankedDefinition,
    _by_behaviour,
    _by_words,
    _key,
    is_declaration,
    own_behaviour,
    question_stems,
    rank_definitions,
    shown_definitions,
)
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.query import analyze, naming


@pytest.fixture
def searcher(tmp_path, fake_embedder, indexed_examples):
    root = indexed_examples.copy(tmp_path / "example")
    return HybridSearcher(Store.open(root / ".dowse"), lambda: fake_embedder)


def _candidate(name: str, file_rank: int, **rankings: float) -> RankedDefinition:
    return RankedDefinition(
        path=f"f{file_rank}.py",
        start_line=1,
        end_line=2,
        qualified_name=name,
        score=0.0,
        file_rank=file_rank,
        rankings=rankings,
    )


def test_a_definition_first_in_more_rankings_ranks_higher():
    cands = [
        _candidate("shown_only", 0, context=0.0),
        _candidate("named_and_close", 0, names=0.0, closeness=0.0, context=4.0),
        _candidate("unranked", 0),
    ]
    ranked = rank_definitions(cands, DefinitionRanking(file_weight=1.0, context_weight=1.0))
    assert [d.qualified_name for d in ranked] == ["named_and_close", "shown_only", "unranked"]
    assert ranked[0].reason.startswith("the question names it; closest in meaning;")
    assert ranked[0].score == pytest.approx(1.0 + 1.0 + 1.0 + 1 / 5)


def test_the_files_place_weighs_by_file_weight():
    cands = [_candidate("first_file", 0), _candidate("second_file_named", 1, names=0.0)]
    by_file = rank_definitions(cands, DefinitionRanking(file_weight=4.0))
    assert [d.qualified_name for d in by_file] == ["first_file", "second_file_named"]
    by_rankings = rank_definitions(cands, DefinitionRanking(file_weight=1.0))
    assert [d.qualified_name for d in by_rankings] == ["second_file_named", "first_file"]


def test_context_weight_zero_leaves_the_context_out():
    cands = [_candidate("shown", 0, context=0.0), _candidate("close", 0, closeness=1.0)]
    ranked = rank_definitions(cands, DefinitionRanking(context_weight=0.0))
    assert [d.qualified_name for d in ranked] == ["close", "shown"]


def _defs(*spans: tuple[str, int, int]) -> list[dict]:
    return [
        {"path": "p.py", "qualified_name": n, "kind": "method", "start_line": a, "end_line": b}
        for n, a, b in spans
    ]


def test_a_chunk_shows_the_definitions_whose_name_line_it_holds_then_those_around_it():
    defs = _defs(("Pool", 1, 40), ("Pool.open", 2, 10), ("Pool.close", 11, 20), ("retry", 50, 60))
    assert [d["qualified_name"] for d in shown_definitions(defs, 2, 20)] == [
        "Pool.open",
        "Pool.close",
        "Pool",
    ]
    named = naming(analyze("Pool.close leaks"))
    assert shown_definitions(defs, 2, 20, named)[0]["qualified_name"] == "Pool.close"
    assert shown_definitions(defs, 41, 45) == []


def test_of_a_chunks_definitions_those_holding_the_questions_words_come_first():
    """A chunk of two short methods: the one whose own lines hold the question's words
    takes the chunk's place; the class around them counts only its own lines."""
    defs = {"p.py": _defs(("Pool", 1, 9), ("Pool.open", 2, 4), ("Pool.close", 6, 9))}
    text = "\n".join(
        [
            "class Pool:",
            "    def open(self):",
            "        self.conn = connect()",
            "",
            "",
            "    def close(self):",
            "        self.conn.release()",
            "        self.leaked = False",
            "",
        ]
    )
    row = {"path": "p.py", "start_line": 1, "end_line": 9, "text": text}
    groups = list(_by_words([(row, 1.0)], defs, {"release", "leaked"}, lambda _: 0))
    assert [[d["qualified_name"] for d in g] for _, g in groups] == [
        ["Pool.close"],
        ["Pool", "Pool.open"],
    ]


def test_ask_ranks_the_first_files_definitions_beyond_those_its_context_shows(searcher):
    """At 600 tokens the context shows `shop/pricing.py`'s `cart_total` whole and no other
    definition of it; the ranking lists the method the question names first, from the
    first file, with why, though no block shows it."""
    question = "BulkDiscount.discount gives the wrong amount for large carts"
    result = ask(searcher, question, budget=600)
    shown = {(b.path, b.symbol) for b in result.context}
    assert ("shop/pricing.py", "BulkDiscount.discount") not in shown
    first = [d for d in result.definitions if d.path == "shop/pricing.py"][0]
    assert first.qualified_name == "BulkDiscount.discount"
    assert first.rankings["names"] == 0.0 and "the question names it" in first.reason
    top = {f.path for f in result.files[: DefinitionRanking().files]}
    assert {d.path for d in result.definitions} <= top
    assert len(result.definitions) == DefinitionRanking().limit
    assert all(
        d.kind not in ("variable", "field", "property", "constant") for d in result.definitions
    )


def test_the_definitions_are_listed_in_the_room_the_rest_leaves(searcher):
    """Printed one line each, and the first to go when the answer does not fit: the
    context a fit keeps is the same with them as without them."""
    result = ask(searcher, "where are expired session tokens rejected?", budget=8000)
    wide = render_markdown(result)
    assert "## Definitions" in wide
    first = result.definitions[0]
    assert f"- `{first.citation}` `{first.qualified_name}`" in wide
    for budget in (700, 1200, 1500):
        fitted = fit_result(result, budget, render_markdown)
        bare = fit_result(result.model_copy(update={"definitions": []}), budget, render_markdown)
        assert fitted.context == bare.context and fitted.files == bare.files, budget
        assert len(render_markdown(fitted)) >= len(render_markdown(bare))
    tight = fit_result(result, 700, render_markdown)
    assert tight.definitions == [] and "## Definitions" not in render_markdown(tight)


def test_the_json_answer_carries_the_ranked_definitions(searcher):
    result = ask(searcher, "the cart total ignores discounts", budget=8000)
    data = json.loads(result.model_dump_json())
    first = data["definitions"][0]
    assert set(first) == {
        "path",
        "start_line",
        "end_line",
        "qualified_name",
        "kind",
        "score",
        "file_rank",
        "rankings",
        "declaration",
        "reason",
    }
    assert first["path"] == result.files[0].path and first["reason"]


def test_the_agents_answer_lists_the_ranked_definitions_in_the_room_left(
    tmp_path, fake_embedder, indexed_examples
):
    from dowse.server.workspace import ask_for_agent

    root = indexed_examples.copy(tmp_path / "example")
    question = "BulkDiscount.discount gives the wrong amount for large carts"
    wide = ask_for_agent(root, root / ".dowse", question, max_tokens=8000, refresh=False)
    assert any(
        d.startswith("shop/pricing.py:") and d.endswith(" BulkDiscount.discount")
        for d in wide.definitions
    )
    assert all(len(d.split(" ")) == 2 and ":" in d for d in wide.definitions)
    tight = ask_for_agent(root, root / ".dowse", question, max_tokens=900, refresh=False)
    assert len(tight.definitions) < len(wide.definitions)
    assert tight.budget.tokens <= 900


def test_a_files_only_definition_is_not_first_in_every_ranking(searcher):
    """`web/app.js` holds one definition, `submitCheckout`: counted among its own file's,
    it is first in every ranking that counts it and lists above `validate_token`, the
    answer. Counted among all the first files' definitions, its places are what its
    evidence earns, and the answer ranks above it."""
    question = "where are expired session tokens rejected?"

    def order(ranking: DefinitionRanking) -> list[str]:
        result = ask(searcher, question, budget=4000, ranking=ranking)
        return [d.qualified_name for d in result.definitions]

    by_file = order(DefinitionRanking(places="file", file_weight=2.0))  # the old defaults
    assert by_file.index("submitCheckout") < by_file.index("validate_token")
    mine = order(DefinitionRanking())
    assert "validate_token" in mine
    assert "submitCheckout" not in mine or mine.index("validate_token") < mine.index(
        "submitCheckout"
    )
    assert DefinitionRanking().places == "answer"


def test_from_4000_tokens_ten_definitions_keep_their_room():
    frame = Frame()
    assert [frame.kept_definitions(b) for b in (2000, 3999, 4000, 8000, None)] == [
        0,
        0,
        10,
        10,
        10,
    ]


@pytest.mark.parametrize("budget", [1000, 1200])
def test_the_first_definitions_keep_their_room_inside_the_budget(searcher, budget):
    """The first `Frame.kept_definitions` lines are printed whenever a block is: the
    source is packed beside them. Without that room (`definition_lines` 0, the list
    only in the room the rest leaves) the same budget prints fewer. (The example is
    small: the budgets here are those at which it is cut; at 900 the list without its
    room fits two lines in what the packing leaves.)"""
    question = "where are expired session tokens rejected?"
    frame = Frame(definitions_budget=0)
    kept = frame.kept_definitions(budget)
    assert kept == budget // 400
    result = ask(searcher, question, budget=budget, frame=frame)
    printed = fit_result(result, budget, render_markdown, kept_definitions=kept)
    text = render_markdown(printed)
    assert estimate_tokens(text) <= budget and printed.context
    assert printed.definitions[:kept] == result.definitions[:kept]
    for d in result.definitions[:kept]:
        assert f"`{d.citation}` `{d.qualified_name}`" in text
    bare = ask(searcher, question, budget=budget, frame=Frame(definition_lines=0))
    old = fit_result(bare, budget, render_markdown)
    assert len(old.definitions) < kept


def test_the_printed_answer_keeps_the_definitions_room_at_4000_tokens(searcher):
    question = "where are expired session tokens rejected?"
    report = investigate(searcher, question, budget=4000)
    printed = fit_report(report, 4000, "markdown")
    assert estimate_tokens(render_report(printed)) <= 4000
    assert printed.definitions == report.definitions[:10]


def test_the_definition_whose_branches_reject_the_question_ranks_above_declarations(searcher):
    """fixtures/example: `validate_token` raises `TokenError("token expired")`; the
    question's words on its deciding lines (`behaviour`) lift it above `tokens.py`'s
    exception class (declared without code: `declaration`), its signing helper and the
    client's `submitCheckout` (main listed it fifth, after all three)."""
    result = ask(searcher, "where are expired session tokens rejected?", budget=4000)
    names = [d.qualified_name for d in result.definitions]
    assert names.index("validate_token") < 3
    for other in ("_sign", "submitCheckout"):
        assert names.index("validate_token") < names.index(other), other
    answer = result.definitions[names.index("validate_token")]
    assert "behaviour" in answer.rankings and "hold the question's words" in answer.reason
    declared = result.definitions[names.index("TokenError")]
    assert declared.declaration and "behaviour" not in declared.rankings
    assert not answer.declaration


def test_a_declaration_scores_the_penalty_less():
    cands = [
        _candidate("TokenError", 0, closeness=0.0).model_copy(update={"declaration": True}),
        _candidate("validate", 0, closeness=0.5),
    ]
    ranked = rank_definitions(cands, DefinitionRanking())
    assert [d.qualified_name for d in ranked] == ["validate", "TokenError"]
    assert ranked[1].score == pytest.approx(1.0 - DefinitionRanking().declaration_penalty)
    assert "declared without code of its own" in ranked[1].reason
    same = rank_definitions(cands, DefinitionRanking(declaration_penalty=0.0))
    assert [d.qualified_name for d in same] == ["TokenError", "validate"]


def test_the_behaviour_ranking_counts_the_questions_words_not_their_lines():
    """Three branches about one word do not outrank one branch holding two of them."""
    lines = [
        "def expire(token):",
        "    if token.expired:",
        '        raise TokenError("token expired")',
        "def parse(value):",
        "    if value.kind == 1:",
        "        return value",
        "    if value.kind == 2:",
        "        return value",
        "    if value.kind == 3:",
        "        return value",
    ]
    defs = {
        "p.py": [
            {
                "path": "p.py",
                "qualified_name": "expire",
                "kind": "function",
                "start_line": 1,
                "end_line": 3,
            },
            {
                "path": "p.py",
                "qualified_name": "parse",
                "kind": "function",
                "start_line": 4,
                "end_line": 10,
            },
        ]
    }
    bodies = {_key(d): own_behaviour(lines, d, defs["p.py"]) for d in defs["p.py"]}
    stems = question_stems(analyze("expired token kinds are kept"))
    groups = [
        [d["qualified_name"] for d in g] for _, g in _by_behaviour(bodies, defs, stems, False)
    ]
    assert groups == [["expire"], ["parse"]]
    assert is_declaration("class", 1) and not is_declaration("function", 1)
