"""Sibling classes: the listed files whose classes extend the superclass two of the first
files' classes extend move up behind them (retrieval/siblings.py, `ask._siblings_up`)."""

from __future__ import annotations

import importlib

import pytest

from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.store import Store
from dowse.retrieval.fusion import FileFusion
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.records import FileResult
from dowse.retrieval.siblings import superclass_of, with_siblings

ask_module = importlib.import_module("dowse.retrieval.ask")


@pytest.mark.parametrize(
    ("signature", "superclass"),
    [
        ("public class ReaderBasedJsonParser extends ParserBase", "ParserBase"),
        ("public abstract class Base<T extends Number> extends core.Parent<T, List<T>>", "Parent"),
        ("class Cache<K extends Comparable<K>> implements Store<K>", None),
        ("export class View extends React.Component<Props>", "Component"),
        ("public class Plain", None),
    ],
)
def test_a_superclass_is_what_a_class_header_extends(signature, superclass):
    assert superclass_of(signature) == superclass


def _moved(paths: list[str], bases: dict[str, set[str]], top: int = 3) -> tuple[list[str], dict]:
    ordered, moved = with_siblings(paths, lambda p: p, bases, top=top)
    return ordered, moved


def test_a_sibling_of_two_first_files_follows_the_second():
    bases = {"Reader.java": {"ParserBase"}, "Stream.java": {"ParserBase"}}
    bases["DataInput.java"] = {"ParserBase"}
    paths = ["Reader.java", "Factory.java", "Stream.java", "Generator.java", "DataInput.java"]
    ordered, moved = _moved(paths, bases)
    assert ordered == [
        "Reader.java",
        "Factory.java",
        "Stream.java",
        "DataInput.java",
        "Generator.java",
    ]
    assert moved == {"DataInput.java": "ParserBase"}


def test_one_first_file_of_a_family_moves_no_sibling():
    bases = {"Reader.java": {"ParserBase"}, "Stream.java": {"ParserBase"}}
    paths = ["Reader.java", "Factory.java", "Generator.java", "Stream.java"]
    assert _moved(paths, bases) == (paths, {})


def test_a_sibling_already_among_the_first_files_stays_where_it_is():
    bases = {p: {"ParserBase"} for p in ("Reader.java", "Stream.java", "DataInput.java")}
    paths = ["Reader.java", "DataInput.java", "Stream.java", "Factory.java"]
    assert _moved(paths, bases) == (paths, {})


JAVA = {
    "src/main/java/p/ParserBase.java": (
        "package p;\npublic abstract class ParserBase {\n"
        "    protected int parseNumber(String s) { return Integer.parseInt(s); }\n}\n"
    ),
    "src/main/java/p/Factory.java": (
        "package p;\npublic class Factory {\n    public Object create() { return null; }\n}\n"
    ),
    "src/main/java/p/ParseFailure.java": (
        "package p;\npublic class ParseFailure extends RuntimeException {\n}\n"
    ),
    "src/main/java/p/WriteFailure.java": (
        "package p;\npublic class WriteFailure extends RuntimeException {\n}\n"
    ),
}
for _name in ("Reader", "Stream", "DataInput"):
    JAVA[f"src/main/java/p/{_name}Parser.java"] = (
        f"package p;\npublic class {_name}Parser extends ParserBase {{\n"
        "    public int readNumber(String t) { return parseNumber(t); }\n}\n"
    )


def _file(path: str) -> FileResult:
    return FileResult(
        path=f"src/main/java/p/{path}", relevance=0.5, score=0.5, reason="r", citations=[]
    )


def test_ask_moves_a_listed_sibling_class_up_and_says_why(tmp_path, fake_embedder):
    for path, text in JAVA.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    build_index(tmp_path, embedder=fake_embedder, config=IndexConfig(embed=False))
    searcher = HybridSearcher(Store.open(tmp_path / ".dowse"), None)
    files = [_file(p) for p in ("ReaderParser.java", "StreamParser.java", "Factory.java")]
    files.append(_file("DataInputParser.java"))
    ranked = ask_module._siblings_up(searcher, files, FileFusion(siblings=2))
    assert [f.path.rsplit("/", 1)[-1] for f in ranked] == [
        "ReaderParser.java",
        "StreamParser.java",
        "DataInputParser.java",
        "Factory.java",
    ]
    assert ranked[2].reason == (
        "r; its class extends ParserBase, as two of the first files' classes do"
    )
    assert ask_module._siblings_up(searcher, files, FileFusion(siblings=0)) == files
    # `RuntimeException` is no class of the index: extending it makes no family.
    failures = [_file(p) for p in ("ParseFailure.java", "Factory.java", "WriteFailure.java")]
    unrelated = [_file("Factory.java"), *failures]
    assert ask_module._siblings_up(searcher, unrelated, FileFusion(siblings=2)) == unrelated
