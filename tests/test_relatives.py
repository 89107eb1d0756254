"""Relatives: a Rust first file's module root and the sibling classes of two first files
move up to them in `ask`'s file ranking (retrieval/relatives.py, `ask._relatives_up`)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.store import Store
from dowse.retrieval.fusion import FileFusion
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.records import FileResult
from dowse.retrieval.relatives import superclass_of, with_module_root, with_siblings

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


def _siblings(paths: list[str], bases: dict[str, set[str]], top: int = 5):
    return with_siblings(paths, lambda p: p, bases, top=top)


def test_a_sibling_follows_the_last_member_of_its_family_among_the_first_files():
    bases = {p: {"ParserBase"} for p in ("Reader.java", "Stream.java", "DataInput.java")}
    bases["Async.java"] = {"ParserBase"}
    paths = ["Reader.java", "Factory.java", "Stream.java", "DataInput.java", "Generator.java"]
    paths += ["Context.java", "Async.java"]
    ordered, moved = _siblings(paths, bases)
    # After DataInput, the third member: never ahead of a member already in the top 5.
    assert ordered == [
        "Reader.java",
        "Factory.java",
        "Stream.java",
        "DataInput.java",
        "Async.java",
        "Generator.java",
        "Context.java",
    ]
    assert moved == {"Async.java": "ParserBase"}


def test_one_first_file_of_a_family_moves_no_sibling():
    bases = {p: {"ParserBase"} for p in ("Reader.java", "Stream.java")}
    paths = ["Reader.java", "Factory.java", "Generator.java", "Stream.java"]
    assert _siblings(paths, bases, top=3) == (paths, {})


def test_a_sibling_already_among_the_first_files_stays_where_it_is():
    bases = {p: {"ParserBase"} for p in ("Reader.java", "Stream.java", "DataInput.java")}
    paths = ["Reader.java", "DataInput.java", "Stream.java", "Factory.java"]
    assert _siblings(paths, bases, top=3) == (paths, {})


PARENTS = {
    "src/de/impls.rs": "src/de/mod.rs",
    "src/de/value.rs": "src/de/mod.rs",
    "src/de/mod.rs": "src/lib.rs",
    "src/ser.rs": "src/lib.rs",
}


def _root(paths: list[str], top: int = 3):
    return with_module_root(paths, lambda p: p, PARENTS, top=top)


def test_the_first_files_nearest_listed_module_root_moves_to_the_top_place():
    paths = ["src/de/impls.rs", "src/ser.rs", "src/de/value.rs", "build.rs", "src/lib.rs"]
    # src/de/mod.rs, its parent, is not listed: the root above it moves.
    assert _root(paths) == (
        ["src/de/impls.rs", "src/ser.rs", "src/lib.rs", "src/de/value.rs", "build.rs"],
        {"src/lib.rs": "src/de/impls.rs"},
    )
    nearer = [*paths, "src/de/mod.rs"]
    assert _root(nearer)[0][2] == "src/de/mod.rs"


@pytest.mark.parametrize(
    "paths",
    [
        ["src/de/impls.rs", "src/lib.rs", "src/ser.rs", "build.rs"],  # already in the top 3
        ["src/lib.rs", "src/ser.rs", "build.rs", "src/de/mod.rs"],  # a crate root is first
        ["build.rs", "src/ser.rs", "src/de/value.rs", "src/lib.rs"],  # no module is first
    ],
)
def test_no_module_root_moves(paths):
    assert _root(paths) == (paths, {})


def _write(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def _searcher(root: Path, fake_embedder) -> HybridSearcher:
    build_index(root, embedder=fake_embedder, config=IndexConfig(embed=False))
    return HybridSearcher(Store.open(root / ".dowse"), None)


def _listed(paths: list[str]) -> list[FileResult]:
    return [FileResult(path=p, relevance=0.5, score=0.5, reason="r", citations=[]) for p in paths]


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


def test_ask_moves_a_listed_sibling_class_up_and_says_why(tmp_path, fake_embedder):
    searcher = _searcher(_write(tmp_path, JAVA), fake_embedder)
    java = "src/main/java/p/"
    files = _listed([java + n for n in ("ReaderParser.java", "StreamParser.java")])
    files += _listed([java + n for n in ("Factory.java", "DataInputParser.java")])
    ranked = ask_module._relatives_up(searcher.lookups, files, FileFusion(siblings=2))
    assert [f.path.rsplit("/", 1)[-1] for f in ranked] == [
        "ReaderParser.java",
        "StreamParser.java",
        "DataInputParser.java",
        "Factory.java",
    ]
    assert ranked[2].reason == (
        "r; its class extends ParserBase, as two of the first files' classes do"
    )
    assert ask_module._relatives_up(searcher.lookups, files, FileFusion(siblings=0)) == files
    # `RuntimeException` is no class of the index: extending it makes no family.
    unrelated = _listed([java + n for n in ("ParseFailure.java", "WriteFailure.java")])
    unrelated.append(_listed([java + "Factory.java"])[0])
    assert ask_module._relatives_up(searcher.lookups, unrelated, FileFusion(siblings=2)) == (
        unrelated
    )


RUST = {
    "Cargo.toml": '[package]\nname = "shapes"\nversion = "0.1.0"\n',
    "src/lib.rs": "pub mod de;\nmod ser;\n\npub use de::Deserialize;\n",
    "src/de/mod.rs": "mod impls;\n\npub trait Deserialize {\n    fn read() -> Self;\n}\n",
    "src/de/impls.rs": (
        "use super::Deserialize;\n\nimpl Deserialize for u8 {\n    fn read() -> Self { 0 }\n}\n"
    ),
    "src/ser.rs": "pub fn write(v: u8) -> u8 {\n    v\n}\n",
    "build.rs": "fn main() {}\n",
}


def test_ask_moves_the_first_files_module_root_up_and_says_why(tmp_path, fake_embedder):
    searcher = _searcher(_write(tmp_path, RUST), fake_embedder)
    assert searcher.lookups.module_parents() == {
        "src/de/mod.rs": "src/lib.rs",
        "src/de/impls.rs": "src/de/mod.rs",
        "src/ser.rs": "src/lib.rs",
    }
    files = _listed(["src/de/impls.rs", "src/ser.rs", "build.rs", "src/lib.rs"])
    ranked = ask_module._relatives_up(searcher.lookups, files, FileFusion(module_root=2))
    assert [f.path for f in ranked] == ["src/de/impls.rs", "src/lib.rs", "src/ser.rs", "build.rs"]
    assert ranked[1].reason == "r; the module root of the first file, src/de/impls.rs"
    off = FileFusion(module_root=0)
    assert ask_module._relatives_up(searcher.lookups, files, off) == files
