"""The best parts of the first files: each file's chunks ranked on their own."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import make_tree

from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.store import Store
from dowse.retrieval.behaviour import behaviour_share
from dowse.retrieval.file_parts import (
    RANKINGS,
    Part,
    best_parts,
    definition_of,
    distinct_parts,
    printed_lines,
)
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.query import analyze
from dowse.retrieval.references import called_within

ask_module = importlib.import_module("dowse.retrieval.ask")
definitions_of = ask_module.definitions_of


def _row(path: str, start: int, end: int, text: str, symbol: str | None = None) -> dict:
    return {
        "id": f"{path}:{start}",
        "path": path,
        "start_line": start,
        "end_line": end,
        "text": text,
        "symbol": symbol,
        "language": "python",
    }


class _Searcher:
    """Full-text hits in a fixed order; no vectors; definitions' chunks by line."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows
        self.asked: list[str | None] = []
        self.lookups = self.questions = self.store = self  # the searcher's parts, in one fake
        self.root = Path("/nonexistent")  # no file to read: only the chunks' texts

    def has_table(self, name):
        return False  # no references: nothing is called

    def lexical(self, tokens, k, where=None):
        self.asked.append(where)
        return [(r, 1.0 / (i + 1)) for i, r in enumerate(self.rows)][:k]

    def question_cosines(self, text):
        return None

    def spans_of(self, paths):
        out: dict[str, list[dict]] = {}
        for r in self.rows:
            if r["path"] in paths:
                out.setdefault(r["path"], []).append(r)
        return out

    def rows_of(self, spans):
        return dict(spans)

    def definition_chunks(self, symbols):
        out = {}
        for s in symbols:
            for r in self.rows:
                if r["path"] == s["path"] and r["start_line"] <= s["start_line"] <= r["end_line"]:
                    out[(s["path"], s["start_line"])] = r
        return out


HEADER = '"""Pricing."""\n\nimport math\nimport os\nimport re\n'
BODY = "def apply_discount(cart):\n    total = cart.total\n    return total * 0.9\n"


def test_a_named_definition_outranks_the_words_best_chunk_in_its_file():
    rows = [
        _row("a.py", 1, 5, HEADER),
        _row("a.py", 10, 30, "def other():\n    return discount_total()\n", "other"),
        _row("a.py", 40, 45, BODY, "apply_discount"),
        _row("b.py", 1, 9, BODY, "apply_discount"),
    ]
    searcher = _Searcher(rows)
    symbols = {
        "a.py": [
            {
                "path": "a.py",
                "qualified_name": "other",
                "kind": "function",
                "start_line": 10,
                "end_line": 30,
            },
            {
                "path": "a.py",
                "qualified_name": "apply_discount",
                "kind": "function",
                "start_line": 40,
                "end_line": 45,
            },
        ]
    }
    parts = best_parts(
        searcher,  # type: ignore[arg-type]
        analyze("why does `apply_discount` round the cart total wrong?"),
        ["a.py", "b.py"],
        symbols=symbols,
    )
    # The search is restricted to the files asked about.
    assert searcher.asked == ["path IN ('a.py', 'b.py')"]
    assert [p.row["start_line"] for p in parts["a.py"]][0] == 40
    assert "defines a name the question mentions" in parts["a.py"][0].why
    # The module's import header matched the words first, yet it holds no behaviour.
    assert parts["a.py"][-1].row["start_line"] == 1
    assert [p.row["start_line"] for p in parts["b.py"]] == [1]


def test_a_header_that_defines_the_named_constant_is_not_demoted():
    header = (
        '"""Logging."""\nimport logging\nimport os\nimport re\nimport sys\n\n'
        'DEFAULT_LOG_FORMAT = "%(x)s"\n'
    )
    rows = [
        _row("a.py", 1, 7, header),
        _row(
            "a.py",
            10,
            30,
            "def add_options(parser):\n    parser.add('--log-format')\n",
            "add_options",
        ),
    ]
    question = "DEFAULT_LOG_FORMAT should show the module name"
    parts = best_parts(_Searcher(rows), analyze(question), ["a.py"])  # type: ignore[arg-type]
    assert [p.row["start_line"] for p in parts["a.py"]] == [1, 10]
    # The same header, for a question that names nothing it defines, yields to the code.
    parts = best_parts(
        _Searcher(rows), analyze("the log format should show the module name"), ["a.py"]
    )  # type: ignore[arg-type]
    assert [p.row["start_line"] for p in parts["a.py"]] == [10, 1]


RUST_HEADER = (
    "//! Channels.\n//!\n//! Queues of values.\nuse std::sync::Arc;\nuse std::cell::Cell;\n"
)
RUST_IMPL = (
    "impl<T> Receiver<T> {\n"
    + "".join(f"    /// Example line {i}.\n" for i in range(20))
    + "    pub fn len(&self) -> usize {\n        self.tail - self.next\n    }\n"
    + "".join(f"    /// Example line {i}.\n" for i in range(20))
    + "    pub fn is_empty(&self) -> bool {\n        self.len() == 0\n    }\n"
)


def test_documented_definitions_whole_in_a_chunk_are_code_not_a_header():
    """A chunk of an `impl` block's methods under their `///` examples belongs to no one
    definition (it opens with the `impl` line), yet its prose documents the methods it
    shows whole: it is not demoted as a module header is. The module's own doc comment
    and imports still yield to it; so does a Python module header that also holds a
    short function, its docstring and imports being the module's."""
    rows = [
        {**_row("a.rs", 1, 5, RUST_HEADER), "language": "rust"},
        {**_row("a.rs", 7, 53, RUST_IMPL), "language": "rust"},
    ]
    symbols = {
        "a.rs": [
            {"qualified_name": "Receiver.len", "kind": "method", "start_line": 8, "end_line": 30},
            {
                "qualified_name": "Receiver.is_empty",
                "kind": "method",
                "start_line": 31,
                "end_line": 53,
            },
        ]
    }
    question = analyze("how many values does the receiver hold?")
    parts = best_parts(_Searcher(rows), question, ["a.rs"], symbols=symbols)  # type: ignore[arg-type]
    assert [p.row["start_line"] for p in parts["a.rs"]] == [7, 1]
    # Without the definitions the same chunk is read as prose, as before.
    parts = best_parts(_Searcher(rows), question, ["a.rs"], symbols={})  # type: ignore[arg-type]
    assert [p.row["start_line"] for p in parts["a.rs"]] == [1, 7]
    header = '"""Pricing.\n\nRules.\n"""\nimport math\nimport os\nimport re\n\n'
    small = 'def helper():\n    """Helps."""\n    return 1\n'
    py_rows = [_row("b.py", 1, 11, header + small), _row("b.py", 13, 15, BODY, "apply_discount")]
    py_symbols = {
        "b.py": [{"qualified_name": "helper", "kind": "function", "start_line": 9, "end_line": 11}]
    }
    parts = best_parts(
        _Searcher(py_rows), analyze("how is the discount applied?"), ["b.py"], symbols=py_symbols
    )  # type: ignore[arg-type]
    assert [p.row["start_line"] for p in parts["b.py"]] == [13, 1]


def test_a_long_named_definition_is_ranked_by_its_body():
    """The question names a function too long to show whole: the chunk of its body that
    the question's words match best outranks its few signature lines' chunk and the
    words' best chunk elsewhere in the file."""
    rows = [
        _row(
            "a.py",
            1,
            30,
            "def cart_rounding(cart):\n    return round(cart.total)\n",
            "cart_rounding",
        ),
        _row("a.py", 40, 43, "def check_array(array, dtype='numeric'):\n", "check_array"),
        _row("a.py", 44, 100, "    if dtype_orig is None:\n        warn()\n", "check_array"),
        _row("a.py", 101, 200, "    array = np.asarray(array, dtype=dtype)\n", "check_array"),
    ]
    searcher = _Searcher([rows[0], rows[3], rows[1], rows[2]])  # the words' order
    symbols = {
        "a.py": [
            {
                "path": "a.py",
                "qualified_name": "cart_rounding",
                "kind": "function",
                "start_line": 1,
                "end_line": 30,
            },
            {
                "path": "a.py",
                "qualified_name": "check_array",
                "kind": "function",
                "start_line": 40,
                "end_line": 200,
            },
        ]
    }
    parts = best_parts(
        searcher,  # type: ignore[arg-type]
        analyze("check_array converts the dtype of a DataFrame without a warning"),
        ["a.py"],
        symbols=symbols,
    )
    ranked = [p.row["start_line"] for p in parts["a.py"]]
    assert ranked[0] == 101
    assert "in the body of a long definition the question names" in parts["a.py"][0].why
    # Short enough to show whole, the definition is widened from its first chunk instead.
    symbols["a.py"][1]["end_line"] = 120
    parts = best_parts(
        searcher, analyze("check_array converts the dtype"), ["a.py"], symbols=symbols
    )  # type: ignore[arg-type]
    assert not any("in the body" in w for p in parts["a.py"] for w in p.why)
    # A long class is many behaviours: naming it ranks none of its chunks as its body.
    symbols["a.py"][1].update(kind="class", end_line=200)
    parts = best_parts(
        searcher, analyze("check_array converts the dtype"), ["a.py"], symbols=symbols
    )  # type: ignore[arg-type]
    assert not any("in the body" in w for p in parts["a.py"] for w in p.why)


def test_the_loops_evaluations_count_as_a_ranking():
    rows = [
        _row("a.py", 1, 9, "def first():\n    return cart\n", "first"),
        _row("a.py", 20, 29, "def second():\n    return cart\n", "second"),
    ]
    evaluated = {"a.py": [({"path": "a.py", "start_line": 20}, 0.9)]}
    parts = best_parts(
        _Searcher(rows),  # type: ignore[arg-type]
        analyze("how is the cart built?"),
        ["a.py"],
        evaluated=evaluated,
    )
    # Words put `first` ahead, the evaluation `second`: a tie on score breaks by line,
    # and each keeps the reason of the ranking it led.
    assert {p.row["start_line"]: p.why for p in parts["a.py"]} == {
        1: ["matches the question's words best in its file"],
        20: ["scored most relevant in its file"],
    }
    assert best_parts(_Searcher(rows), analyze("x"), []) == {}  # type: ignore[arg-type]
    # A chunk only the loop evaluated comes as its path and first line, nothing more.
    evaluated["a.py"].append(({"path": "a.py", "start_line": 40}, 0.5))
    parts = best_parts(
        _Searcher(rows),  # type: ignore[arg-type]
        analyze("how is the cart built?"),
        ["a.py"],
        evaluated=evaluated,
    )
    assert [p.row["start_line"] for p in parts["a.py"]] == [20, 1, 40]


class _LinkedSearcher(_Searcher):
    """`_Searcher` with the look-ups a link needs: the chunk at a line, files by path tail."""

    def chunks_at(self, spots):
        return {
            (path, line): r
            for path, line in spots
            for r in self.rows
            if r["path"] == path and r["start_line"] <= line <= r["end_line"]
        }

    def files_named(self, paths):
        files = {r["path"] for r in self.rows}
        out = {p: sorted(f for f in files if f == p or f.endswith("/" + p)) for p in paths}
        return {p: found for p, found in out.items() if found}


def test_a_line_range_the_question_links_to_ranks_its_chunk_in_its_file():
    rows = [
        _row("lib/cover.c", 1, 30, "int cover_build(int k) { return total / k; }", "cover_build"),
        _row("lib/cover.c", 40, 60, "int cover_check(int k) { return k > 0; }", "cover_check"),
        _row("lib/cover.c", 61, 80, "int cover_train(int k) { return k; }", "cover_train"),
    ]

    def ranked(question: str, rankings: frozenset[str] = RANKINGS) -> list[Part]:
        searcher: Any = _LinkedSearcher(rows)
        return best_parts(searcher, analyze(question), ["lib/cover.c"], rankings=rankings)[
            "lib/cover.c"
        ]

    plain = "Division by zero in cover training when the total is small"
    link = " at https://github.com/acme/zz/blob/dev/lib/cover.c#L45-L62"
    assert [p.row["start_line"] for p in ranked(plain)] == [1, 40, 61]  # the words' order
    # The range's first line is in the second chunk: first; its last in the third, which
    # that ranking places second (behind the words' first, ahead of their last).
    parts = ranked(plain + link)
    assert [p.row["start_line"] for p in parts] == [40, 1, 61]
    assert "the question links to its lines" in parts[0].why
    # A bare "#L45" links nowhere: only the URL's line counts.
    later = ranked(plain + " and #L45 of https://github.com/acme/zz/blob/dev/lib/cover.c#L62")
    assert later[0].row["start_line"] == 61
    # A fork's link names the same path; one into another repository's file, or to a
    # file not asked about, ranks nothing.
    for other in (
        " at https://github.com/other/lib/blob/main/tests/cover_test.c#L45",
        " at https://github.com/acme/zz/blob/dev/lib/zz.h#L45",
    ):
        assert [p.row["start_line"] for p in ranked(plain + other)] == [1, 40, 61]
    # Without the ranking (benchmarks/part_ranking.py), the link counts for nothing.
    without = ranked(plain + link, RANKINGS - {"links"})
    assert [p.row["start_line"] for p in without] == [1, 40, 61]


QUESTION = "how are discounts applied to the cart total?"


def _loop_keeping(
    example_repo, fake_embedder, monkeypatch, keep: Callable[[Any], bool]
) -> tuple[HybridSearcher, list[ask_module.ContextItem]]:
    """The example indexed, and `ask`'s loop for QUESTION made to return only the items
    `keep` accepts (what the loop evaluated stays out of the test's way); the searcher and
    those items."""
    build_index(example_repo, embedder=fake_embedder)
    searcher = HybridSearcher(Store.open(example_repo / ".dowse"), lambda: fake_embedder)
    loop = ask_module.run_loop(searcher, QUESTION)
    kept = [it for it in loop.items if keep(it)]
    monkeypatch.setattr(
        ask_module, "run_loop", lambda *a, **k: loop.model_copy(update={"items": kept})
    )
    return searcher, kept


def test_the_first_file_shows_its_best_part_though_the_loop_scored_another_file(
    example_repo, fake_embedder, monkeypatch
):
    """The files ranking puts a file first whose parts the loop never evaluated: its best
    part is delivered whole, with a reason saying why, before the loop's items."""
    searcher, others = _loop_keeping(
        example_repo, fake_embedder, monkeypatch, lambda it: it.hit.path != "shop/pricing.py"
    )
    question = QUESTION
    result = ask_module.ask(searcher, question, budget=3000)
    scored = {it.hit.path for it in others}
    n, lead = next(
        (n, f) for n, f in enumerate(result.files[:3], 1) if f.path not in scored
    )  # a first file found by its words or meaning, none of its parts evaluated
    block = next(b for b in result.context if b.path == lead.path)
    assert block.form == "full"
    assert block.reason.startswith(f"the best part of the file ranked {n} for the question")
    text = (example_repo / block.path).read_text().split("\n")
    assert block.text == "\n".join(text[block.start_line - 1 : block.end_line])
    # Without the lead pass that file shows no code at all.
    plain = ask_module.ask(
        searcher, question, budget=3000, packing=ask_module.Packing(lead_files=0)
    )
    assert not any(b.path == lead.path and b.form == "full" for b in plain.context)


def _class_and_method(class_end: int) -> tuple[list[dict], dict]:
    prose = '    """' + "Explains the class at length.\n    " * 30 + '"""\n'
    rows = [
        _row("a.py", 1, 33, "class Big:\n" + prose, "Big"),
        _row("a.py", 40, 45, "    def run(self):\n        return self.total * 2\n", "Big.run"),
    ]
    symbols = {
        "a.py": [
            {"qualified_name": "Big", "kind": "class", "start_line": 1, "end_line": class_end},
            {"qualified_name": "Big.run", "kind": "method", "start_line": 40, "end_line": 45},
        ]
    }
    return rows, symbols


def test_a_long_definitions_prose_yields_to_its_code():
    """A class too long to show whole shows only its docstring from that chunk: the code
    of one of its methods ranks first. A class short enough to show whole keeps its
    chunk's place: widened, it shows the methods too."""
    question = analyze("how does the big total run?")
    rows, symbols = _class_and_method(class_end=400)
    parts = best_parts(_Searcher(rows), question, ["a.py"], symbols=symbols)  # type: ignore[arg-type]
    assert [p.row["symbol"] for p in parts["a.py"]] == ["Big.run", "Big"]
    rows, symbols = _class_and_method(class_end=60)
    parts = best_parts(_Searcher(rows), question, ["a.py"], symbols=symbols)  # type: ignore[arg-type]
    assert [p.row["symbol"] for p in parts["a.py"]] == ["Big", "Big.run"]


def test_the_first_file_shows_its_next_parts_within_its_share(
    example_repo, fake_embedder, monkeypatch
):
    """Beyond its best part, the first file shows its next-best parts while it holds at
    most `Packing.first_file_share` of the room; with no share, none."""
    searcher, _ = _loop_keeping(example_repo, fake_embedder, monkeypatch, lambda it: False)
    question = QUESTION
    result = ask_module.ask(searcher, question, budget=6000)
    first = result.files[0].path
    nexts = [b for b in result.context if b.reason.startswith("a next-best part of the file")]
    assert nexts and all(b.path == first and b.form == "full" for b in nexts)
    assert len({(b.start_line, b.end_line) for b in result.context if b.path == first}) >= 2
    plain = ask_module.ask(
        searcher, question, budget=6000, packing=ask_module.Packing(first_file_share=0)
    )
    assert not any(b.reason.startswith("a next-best part") for b in plain.context)


def test_the_first_files_next_parts_keep_their_rank_though_the_loop_scored_them(monkeypatch):
    """The first file's next-best parts are offered in their rank among the file's parts,
    the loop's own item (its relevance and reason) where it evaluated that chunk: before,
    an evaluated next part waited for its place in the loop's order, after every other
    file's items (pytest-11143 showed 3 of the 12 parts the loop scored 0.81-0.94)."""
    from dowse.retrieval.file_parts import Part
    from dowse.retrieval.pool import Candidate

    rows = [
        _row("a.py", 10 * n, 10 * n + 8, f"def f{n}():\n    return {n}\n", f"f{n}")
        for n in (1, 2, 3)
    ]
    scored = ask_module.ContextItem(
        hit=ask_module.chunk_hit(Candidate(rows[1], {}, score=0.0)),
        relevance=0.3,
        reason="scored by the loop",
        cycle=2,
    )
    monkeypatch.setattr(
        ask_module, "best_parts", lambda *a, **k: {"a.py": [Part(r, 1.0, ["why"]) for r in rows]}
    )
    file = type("F", (), {"path": "a.py"})()
    mine = ask_module._lead_items(None, analyze("f"), [file], [scored], {}, set())  # type: ignore[arg-type]
    assert [[it.hit.start_line for it in m] for m in mine] == [[10, 20, 30]]
    assert mine[0][1] is scored  # the loop's own item, at the part's place
    assert mine[0][2].reason.startswith("a next-best part of the file ranked 1")


def _item(
    path: str, start: int, reason: str, *, relevance: float = ask_module.Packing().min_relevance
) -> ask_module.ContextItem:
    """An item of 14 lines (one of the two-function files the order tests write)."""
    from dowse.retrieval.pool import Candidate

    row = _row(path, start, start + 13, "", None)
    return ask_module.ContextItem(
        hit=ask_module.chunk_hit(Candidate(row, {}, score=0.0)),
        relevance=relevance,
        reason=reason,
        cycle=1,
    )


def _where_one_fits_the_order_decides(
    searcher: HybridSearcher,
    one: ask_module.Packing,
    other: ask_module.Packing,
    first: str,
    second: str,
) -> None:
    """Of two blocks of one cost (their reasons `first` and `second`), at every budget
    with room for only one, packing `one` shows `first` and packing `other` `second`;
    some budget has room for only one."""

    def shown(budget: int, packing: ask_module.Packing) -> set[str]:
        result = ask_module.ask(searcher, QUESTION, budget=budget, packing=packing)
        return {b.reason for b in result.context if b.form == "full"} & {first, second}

    budgets = [b for b in range(300, 2500, 20) if len(shown(b, one)) == 1]
    assert budgets
    for budget in budgets:
        assert shown(budget, one) == {first}
        assert shown(budget, other) == {second}


def test_the_first_files_early_parts_come_before_the_other_files_best_parts(
    example_repo, fake_embedder, monkeypatch
):
    """`Packing.first_file_leads` of the first file's parts are placed before the other
    files' best parts, the rest after them: of the first file's second part and the
    second file's best part (the same size), a budget with room for one shows the one
    placed first (the first file's share of the room lifted, to see the order alone)."""

    body = "".join(f"    total += {n}\n" for n in range(12))
    for name in ("first", "second"):
        text = "".join(f"def {name}_{part}(total):\n{body}    return total\n\n\n" for part in "ab")
        (example_repo / "shop" / f"{name}.py").write_text(text)
    searcher, _ = _loop_keeping(example_repo, fake_embedder, monkeypatch, lambda it: False)
    lead = _item("shop/first.py", 1, "the first file's best part")
    nxt = _item("shop/first.py", 17, "the first file's second part")
    other = _item("shop/second.py", 1, "the second file's best part")
    monkeypatch.setattr(ask_module, "_lead_items", lambda *a, **k: [[lead, nxt], [other]])
    _where_one_fits_the_order_decides(
        searcher,
        ask_module.Packing(first_file_leads=1, lead_files=2, first_file_share=1),
        ask_module.Packing(first_file_leads=2, lead_files=2, first_file_share=1),
        other.reason,
        nxt.reason,
    )


def test_only_the_paired_leads_place_their_loop_item_before_the_first_files_next_parts(
    example_repo, fake_embedder, monkeypatch
):
    """The first `Packing.paired_leads` files have the loop's best item in them placed
    right after their best part; a later file's waits for the loop's order, after the
    first file's next parts: of the third file's loop item and the first file's second
    part (the same size), a budget with room for one shows the third file's item only
    when the third file is paired (the first file's share lifted, to see the order)."""

    body = "".join(f"    total += {n}\n" for n in range(12))
    for name in ("first", "second", "third"):
        text = "".join(f"def {name}_{part}(total):\n{body}    return total\n\n\n" for part in "ab")
        (example_repo / "shop" / f"{name}.py").write_text(text)
    build_index(example_repo, embedder=fake_embedder)
    searcher = HybridSearcher(Store.open(example_repo / ".dowse"), lambda: fake_embedder)
    lead = _item("shop/first.py", 1, "first best")
    nxt = _item("shop/first.py", 17, "next part")  # reasons of one length: one cost
    second = _item("shop/second.py", 1, "second best")
    third = _item("shop/third.py", 1, "third best")
    scored = _item("shop/third.py", 17, "loop item", relevance=0.9)
    loop = ask_module.run_loop(searcher, QUESTION)
    monkeypatch.setattr(
        ask_module, "run_loop", lambda *a, **k: loop.model_copy(update={"items": [scored]})
    )
    monkeypatch.setattr(ask_module, "_lead_items", lambda *a, **k: [[lead, nxt], [second], [third]])
    _where_one_fits_the_order_decides(
        searcher,
        ask_module.Packing(paired_leads=3, first_file_share=1),
        ask_module.Packing(paired_leads=2, first_file_share=1),
        scored.reason,
        nxt.reason,
    )


def test_parts_that_print_what_an_earlier_part_prints_are_left_out():
    """The chunks of one short function all print that function: the first file's next
    parts are distinct places, not the same block again."""
    symbols = [
        {"qualified_name": "resolve", "start_line": 10, "end_line": 60},
        {"qualified_name": "Session", "start_line": 100, "end_line": 400},  # too long
    ]
    parts = [
        Part(_row("s.py", 30, 45, "", "resolve")),
        Part(_row("s.py", 10, 29, "", "resolve")),  # the same function
        Part(_row("s.py", 200, 230, "", "Session")),  # a part of a long class
        Part(_row("s.py", 46, 60, "", "resolve")),
        Part(_row("s.py", 231, 260, "", "Session")),  # another part of it
        Part(_row("s.py", 205, 220, "", None)),  # inside the first Session part
    ]
    assert printed_lines(parts[0].row, symbols) == (10, 60)
    assert printed_lines(parts[2].row, symbols) == (200, 230)
    kept = distinct_parts(parts, symbols)
    assert [p.row["start_line"] for p in kept] == [30, 200, 231]


def test_a_chunk_widens_to_its_own_definition_of_a_name_defined_twice():
    """A C function's prototype at the top of its file and its body below share one name
    (zstd's `ZSTD_getCParams_internal`), as overloads do: a chunk of the body widens to
    the body, not to everything from the prototype on."""
    symbols = [
        {"qualified_name": "get_params", "start_line": 12, "end_line": 12},  # the prototype
        {"qualified_name": "get_params", "start_line": 700, "end_line": 729},  # the body
        {"qualified_name": "Reader.read", "start_line": 800, "end_line": 810},  # an overload
        {"qualified_name": "Reader.read", "start_line": 812, "end_line": 830},  # and another
    ]
    assert printed_lines(_row("z.c", 700, 705, "", "get_params"), symbols) == (700, 729)
    assert printed_lines(_row("z.c", 12, 12, "", "get_params"), symbols) == (12, 12)
    assert printed_lines(_row("z.c", 815, 830, "", "Reader.read"), symbols) == (812, 830)
    assert definition_of(_row("z.c", 706, 729, "", "get_params"), symbols) == symbols[1]
    # `ask` widens the context's blocks the same way: the body's chunk, then its body.
    from dowse.retrieval.pool import Candidate

    row = _row("z.c", 700, 705, "", "get_params")
    item = ask_module.ContextItem(
        hit=ask_module.chunk_hit(Candidate(row, {}, score=0.0)),
        relevance=1.0,
        reason="scored",
        cycle=1,
    )
    rows = [{**s, "kind": "function"} for s in symbols]
    ((_, ranges, _, kind),) = ask_module._widen([item], {"z.c": rows})
    assert ranges == [(700, 729), (700, 705)]


def test_a_part_records_each_rankings_places_and_its_prose_share():
    rows = [
        _row("lib/cover.c", 1, 30, "int cover_build(int k) { return total / k; }", "cover_build"),
        _row("lib/cover.c", 40, 60, "int cover_check(int k) { return k > 0; }", "cover_check"),
        _row("lib/cover.c", 61, 80, "int cover_train(int k) { return k; }", "cover_train"),
        _row("lib/cover.py", 1, 5, HEADER),
        _row("lib/cover.py", 10, 12, BODY, "apply_discount"),
    ]
    question = (
        "Division by zero in cover training when the total is small"
        " at https://github.com/acme/zz/blob/dev/lib/cover.c#L45-L62"
    )
    searcher: Any = _LinkedSearcher(rows)
    parts = best_parts(searcher, analyze(question), ["lib/cover.c", "lib/cover.py"])
    # The words place the C chunks 1, 40, 61; the link 40 (its first line), then 61:
    # the places that scored each part, from which any weighting can be scored again
    # (benchmarks/part_weights.py).
    assert [p.row["start_line"] for p in parts["lib/cover.c"]] == [40, 1, 61]
    assert {p.row["start_line"]: p.places for p in parts["lib/cover.c"]} == {
        40: {"words": [1], "links": [0]},
        1: {"words": [0]},
        61: {"words": [2], "links": [1]},
    }
    # The module's docstring and imports count by their share of code, and say so.
    shares = {p.row["start_line"]: p.share for p in parts["lib/cover.py"]}
    assert 0 < shares[1] < 1
    assert shares[10] == 1.0


def _indexed(root, files: dict[str, str], embedder) -> HybridSearcher:
    make_tree(root, files)
    build_index(root, config=IndexConfig(embed=False), embedder=embedder)
    return HybridSearcher(Store.open(root / ".dowse"), None)


def _evaluated(searcher: HybridSearcher, path: str, symbol: str, relevance: float) -> dict:
    chunk = next(r for r in searcher.lookups.spans_of([path])[path] if r["symbol"] == symbol)
    row = {k: chunk[k] for k in ("path", "start_line", "end_line", "symbol")}
    return {path: [(row, relevance)]}


_WALKER = (
    "def is_hidden(path):\n"
    "    name = path.rsplit('/', 1)[-1]\n"
    + "".join(f"    step_{i} = len(name) + {i}\n" for i in range(30))
    + "    return _dot_name(name)\n\n\n"
    "def describe_hidden_files(walker):\n"
    "    hidden = [f for f in walker.files if f.hidden]\n"
    + "".join(
        f"    walker.hidden_files_{i} = hidden[{i}:]  # hidden file walker\n" for i in range(20)
    )
    + "    return hidden\n\n\n"
    "def _dot_name(name):\n"
    "    if name.startswith('.') and name not in ('.', '..'):\n"
    "        return True\n"
    + "".join(f"    width_{i} = len(name) * {i}\n" for i in range(30))
    + "    return False\n"
)


def test_the_function_a_relevant_function_calls_outranks_a_sibling_of_its_words(
    tmp_path, fake_embedder
):
    """`is_hidden` scored relevant hands the decision to `_dot_name`, whose own lines
    hardly name the question's words; a sibling that repeats them and decides nothing
    ranked above it. What the relevant code calls is evidence for the callee's chunk."""
    path = "walker/paths.py"
    searcher = _indexed(tmp_path / "repo", {path: _WALKER}, fake_embedder)
    question = analyze("how does the walker decide that a file is hidden?")

    def order(relevance: float, rankings: frozenset[str] = RANKINGS) -> list[str]:
        evaluated = _evaluated(searcher, path, "is_hidden", relevance)
        parts = best_parts(searcher, question, [path], evaluated=evaluated, rankings=rankings)
        return [p.row["symbol"] for p in parts[path]]

    assert order(0.9) == ["is_hidden", "_dot_name", "describe_hidden_files"]
    parts = best_parts(
        searcher, question, [path], evaluated=_evaluated(searcher, path, "is_hidden", 0.9)
    )
    assert "the code scored relevant calls it" in parts[path][1].why
    assert order(0.9, RANKINGS - {"calls"}) == ["is_hidden", "describe_hidden_files", "_dot_name"]
    # A caller the loop scored below "directly relevant" (`LoopConfig.high`) is no evidence.
    assert order(0.5) == ["is_hidden", "describe_hidden_files", "_dot_name"]


_PAGER = (
    "/// The pager command that bat runs, and where the pager command came from.\n"
    "pub struct Pager {\n"
    + "".join(
        f"    /// The pager command's part {i}: the command of the pager.\n"
        f"    pub command_{i}: String,\n"
        for i in range(12)
    )
    + "}\n\n"
    "pub fn get_pager(config_pager: Option<&str>) -> Option<Pager> {\n"
    '    let from_env = std::env::var("BAT_PAGER").ok();\n'
    "    let chosen = match (config_pager, from_env) {\n"
    "        (Some(given), _) => given.to_string(),\n"
    "        (None, Some(env)) => env,\n"
    '        (None, None) => String::from("less"),\n'
    "    };\n"
    + "".join(f"    let width_{i} = chosen.len() * {i};\n" for i in range(30))
    + "    None\n"
    "}\n"
)


def test_a_function_another_file_delegates_to_outranks_its_files_type_declaration(
    tmp_path, fake_embedder
):
    """bat: `config.rs`'s `pager_executable`, scored relevant, calls
    `crate::pager::get_pager`; in `pager.rs` the `Pager` struct's field docs repeat the
    question's words, while `get_pager` is where the command is chosen."""
    files = {
        "src/lib.rs": "pub mod config;\npub mod pager;\n",
        "src/config.rs": (
            "pub fn pager_executable(config_pager: Option<&str>) -> Option<String> {\n"
            "    crate::pager::get_pager(config_pager).map(|pager| pager.command_0)\n"
            "}\n"
        ),
        "src/pager.rs": _PAGER,
    }
    searcher = _indexed(tmp_path / "repo", files, fake_embedder)
    question = analyze("where is the pager command chosen?")
    evaluated = _evaluated(searcher, "src/config.rs", "pager_executable", 0.9)
    for rankings, expected in (
        (RANKINGS, ["get_pager", "Pager"]),
        (RANKINGS - {"calls"}, ["Pager", "get_pager"]),
    ):
        parts = best_parts(
            searcher, question, ["src/pager.rs"], evaluated=evaluated, rankings=rankings
        )
        assert [p.row["symbol"] for p in parts["src/pager.rs"]] == expected


def test_the_context_shows_the_function_a_relevant_function_delegates_to(
    tmp_path, fake_embedder, monkeypatch
):
    """End to end: with `is_hidden` the loop's one directly relevant item, the first
    file's next block is the function it delegates to, not the sibling that repeats the
    question's words."""
    path = "walker/paths.py"
    searcher = _indexed(tmp_path / "repo", {path: _WALKER}, fake_embedder)
    question = "how does the walker decide that a file is hidden?"
    loop = ask_module.run_loop(searcher, question)
    items = [
        it.model_copy(update={"relevance": 0.9})
        for it in loop.items
        if it.hit.symbol == "is_hidden"
    ]
    monkeypatch.setattr(
        ask_module, "run_loop", lambda *a, **k: loop.model_copy(update={"items": items})
    )
    result = ask_module.ask(searcher, question, budget=1500)
    assert [(b.symbol, b.form) for b in result.context] == [
        ("is_hidden", "full"),
        ("_dot_name", "full"),
    ]


def test_a_call_that_means_several_definitions_is_no_evidence(tmp_path, fake_embedder):
    """`handler.on_year()` may be either handler class's method: it says nothing of
    which acts (fmt's chrono handlers, each a chunk of `on_*` methods, all voted for by
    the parser that calls them). A C prototype and its body are one definition: the
    call means the body."""
    files = {
        "chrono.py": (
            "class NullHandler:\n    def on_year(self):\n        return None\n\n\n"
            "class Checker:\n    def on_year(self):\n        raise ValueError('year')\n\n\n"
            "def parse(handler):\n    handler.on_year()\n    return pick(handler)\n\n\n"
            "def pick(handler):\n    return handler\n"
        ),
        "level.c": (
            "static int pick_level(int x);\n\n"
            "int compress(int level) {\n    return pick_level(level);\n}\n\n"
            "static int pick_level(int x) {\n    if (x > 3) return 3;\n    return x;\n}\n"
        ),
    }
    searcher = _indexed(tmp_path / "repo", files, fake_embedder)
    store, lookups = searcher.store, searcher.lookups
    called = called_within(store, [("chrono.py", 11, 13, "parse")], ["chrono.py"], lookups=lookups)
    assert [d.qualified_name for d in called] == ["pick"]
    called = called_within(store, [("level.c", 3, 5, "compress")], ["level.c"], lookups=lookups)
    assert [(d.qualified_name, d.start_line) for d in called] == [("pick_level", 7)]


def test_a_chunk_that_begins_inside_a_docstring_or_comment_is_read_from_above():
    """A chunk cut from a long definition can begin inside the docstring or block
    comment its definition opened above it: read alone, the comment's rest is code and
    its closing quote opens a docstring that swallows the code after it."""
    above = 'def url_for(endpoint):\n    """Build a URL.\n'
    chunk = (
        "    An endpoint that starts with a dot is relative to the blueprint.\n"
        "    The blueprint's name is prepended to it.\n"
        "    Values are appended as the query string.\n"
        '    """\n'
        "    return build(endpoint)\n"
    )
    assert behaviour_share(chunk, "python") == 1.0
    assert behaviour_share(chunk, "python", preceding=above) == round(2 / 5, 3)
    c_above = "int pick_level(int x) {\n    /* The level is\n"
    c_chunk = (
        "     * clamped to the largest level the window\n"
        "     * size allows, then to the smallest.\n"
        "     */\n"
        "    return x > 3 ? 3 : x;\n"
    )
    assert behaviour_share(c_chunk, "c") == 1.0
    assert behaviour_share(c_chunk, "c", preceding=c_above) == round(2 / 4, 3)


def _url_for(doc_lines: int, body_lines: int) -> str:
    return (
        "def url_for(endpoint, values):\n"
        '    """Build a URL for an endpoint name.\n'
        + "".join(
            f"    The endpoint name is built into a URL with values, note {i}.\n"
            for i in range(doc_lines)
        )
        + '    """\n'
        + "".join(f"    values = dict(values, step_{i}=len(values))\n" for i in range(body_lines))
        + "    if endpoint[:1] == '.':\n"
        "        endpoint = current_blueprint() + endpoint\n"
        "    return adapter.build(endpoint, values)\n"
    )


def test_the_rest_of_a_long_functions_docstring_yields_to_its_code(tmp_path, fake_embedder):
    """flask's `url_for`: a function too long to show whole is cut into chunks, one of
    them the rest of its docstring, which repeats the question's words; the chunk with
    the branch that answers ranks above it."""
    path = "app/routing.py"
    searcher = _indexed(tmp_path / "repo", {path: _url_for(70, 60)}, fake_embedder)
    spans = searcher.lookups.spans_of([path])[path]
    inside = [r for r in spans if r["start_line"] > 2 and r["start_line"] < 73]
    assert inside, "a chunk begins inside the docstring"
    question = analyze("how is an endpoint name built into a URL when it starts with a dot?")
    symbols = {
        path: searcher.lookups.rows_in(
            "symbols", ["path", "qualified_name", "kind", "start_line", "end_line"], "path", [path]
        )
    }
    parts = best_parts(searcher, question, [path], symbols=symbols)
    order = [(p.row["start_line"], p.share) for p in parts[path]]
    docstring_rest = next(
        i for i, (start, _) in enumerate(order) if start == inside[0]["start_line"]
    )
    branch = next(
        i for i, p in enumerate(parts[path]) if "endpoint[:1]" in (p.row.get("text") or "")
    )
    assert order[docstring_rest][1] < 1
    assert branch < docstring_rest


def _long_callee(language: str) -> tuple[str, str]:
    """`handle` calls `build_url`, a function too long to show whole whose branch on a
    leading dot lies in a later chunk of its body."""
    if language == "python":
        pad = "".join(f"    step_{i} = len(values) + {i}\n" for i in range(70))
        return "urls.py", (
            "def handle(request):\n"
            f"{pad[: pad.index('    step_25')].replace('values', 'request.values')}"
            "    return build_url(request.endpoint, request.values)\n\n\n"
            "def build_url(endpoint, values):\n"
            f"{pad}"
            "    if endpoint.startswith('.'):\n"
            "        endpoint = blueprint_name() + endpoint  # a relative endpoint name\n"
            f"{pad.replace('step_', 'more_')}"
            "    return endpoint\n"
        )
    pad = "".join(f"  const step{i} = values.length + {i}\n" for i in range(70))
    return "urls.js", (
        "function handle(request) {\n"
        f"{pad[: pad.index('  const step25')].replace('values', 'request.values')}"
        "  return buildUrl(request.endpoint, request.values)\n}\n\n"
        "function buildUrl(endpoint, values) {\n"
        f"{pad}"
        "  if (endpoint.startsWith('.')) {\n"
        "    endpoint = blueprintName() + endpoint  // a relative endpoint name\n  }\n"
        f"{pad.replace('step', 'more')}"
        "  return endpoint\n}\n"
    )


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_a_long_callee_is_placed_by_the_chunk_of_its_body_the_question_matches(
    language, tmp_path, fake_embedder
):
    """flask's `url_for` (120 lines): the definitions a ranking places (the callees of
    relevant code, those closest in meaning) stood for a long function by its first
    chunk, its signature; the chunk of its body that the question's words match does."""
    path, text = _long_callee(language)
    searcher = _indexed(tmp_path / "repo", {path: text}, fake_embedder)
    symbols = definitions_of(searcher, [path])
    assert any(s["end_line"] - s["start_line"] >= 120 for s in symbols[path])
    parts = best_parts(
        searcher,
        analyze("how is a relative endpoint name with a leading dot built?"),
        [path],
        evaluated=_evaluated(searcher, path, "handle", 0.9),
        symbols=symbols,
    )
    first = parts[path][0]
    assert "startsWith('.')" in first.row["text"] or "startswith('.')" in first.row["text"]
    assert "calls" in first.places


def test_the_loop_orders_the_rest_of_a_docstring_after_code(tmp_path, fake_embedder):
    """The loop's own order reads a chunk with the lines of its definition above it too:
    the rest of `url_for`'s docstring is prose there, and says so."""
    path = "app/routing.py"
    searcher = _indexed(tmp_path / "repo", {path: _url_for(70, 60)}, fake_embedder)
    first = min(
        r["start_line"] for r in searcher.lookups.spans_of([path])[path] if r["start_line"] > 2
    )
    loop = ask_module.run_loop(
        searcher, "how is an endpoint name built into a URL when it starts with a dot?"
    )
    rest = next(it for it in loop.items if it.hit.start_line == first)
    assert rest.behaviour < 1
    assert "mostly docstring" in rest.reason
