"""Rust paths in a question (`tokio::sync::watch::Receiver`, `broadcast::Sender::len`):
the item each names, and the module that says which of the index's definitions it is
(retrieval/query.py `rust_paths`, `with_rust_paths`; retrieval/pool.py `in_modules`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.store import Store
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.pool import rust_modules
from dowse.retrieval.query import analyze, rust_paths


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("use tokio::sync::watch::Receiver", [("Receiver", ("tokio", "sync", "watch"))]),
        ("Add broadcast::Sender::len", [("Sender.len", ("broadcast",))]),
        ("mpsc::channel hangs", [("channel", ("mpsc",))]),
        ("see crate::select", [("select", ())]),
        ("Interest::ERROR and Ready::ERROR", [("Interest.ERROR", ()), ("Ready.ERROR", ())]),
        ("grep_regex::literal::LiteralSets::new", [("LiteralSets.new", ("grep_regex", "literal"))]),
        ("std::num::Saturating, core::fmt::Write and usize::MAX", []),
        ("a plain sentence: no path", []),
    ],
)
def test_a_rust_path_names_an_item_in_its_modules(text, named):
    assert rust_paths(text) == named


@pytest.mark.parametrize(
    ("path", "qualified", "modules"),
    [
        ("tokio/src/sync/watch.rs", "Receiver", ("tokio", "sync", "watch")),
        ("tokio-util/src/sync/mod.rs", "CancellationToken", ("tokio_util", "sync")),
        ("src/lib.rs", "util.count", ("util",)),
        (
            "crates/regex/src/literal.rs",
            "LiteralSets.new",
            ("crates", "regex", "literal", "LiteralSets"),
        ),
    ],
)
def test_a_definitions_rust_module_is_its_file_and_nesting(path, qualified, modules):
    assert rust_modules(path, qualified) == modules


CHANNELS = {
    "Cargo.toml": '[package]\nname = "chan"\nversion = "0.1.0"\n',
    "src/lib.rs": "pub mod sync;\n",
    "src/sync/mod.rs": "pub mod broadcast;\npub mod mpsc;\npub mod oneshot;\npub mod watch;\n",
}
for _module in ("broadcast", "mpsc", "oneshot", "watch"):
    CHANNELS[f"src/sync/{_module}.rs"] = (
        f"/// The receiving half of a {_module} channel.\n"
        "pub struct Receiver<T> {\n    value: Option<T>,\n}\n\n"
        "impl<T> Receiver<T> {\n"
        "    pub fn len(&self) -> usize {\n        self.value.iter().count()\n    }\n}\n\n"
        "pub struct Sender<T> {\n    value: Option<T>,\n}\n\n"
        "impl<T> Sender<T> {\n"
        "    pub fn len(&self) -> usize {\n        self.value.iter().count()\n    }\n}\n"
    )


def _searcher(root: Path, files: dict[str, str], fake_embedder) -> HybridSearcher:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    build_index(root, embedder=fake_embedder, config=IndexConfig(embed=False))
    return HybridSearcher(Store.open(root / ".dowse"), lambda: fake_embedder)


def _symbol_strength(searcher: HybridSearcher, text: str) -> dict[str, float]:
    """Each file's strongest symbol signal among the candidates for `text`."""
    strength: dict[str, float] = {}
    for c in searcher.candidates(searcher.analyze(text)).values():
        if "symbol" in c.signals:
            path = c.row["path"]
            strength[path] = max(strength.get(path, 0.0), c.signals["symbol"])
    return strength


def test_a_rust_path_in_prose_names_the_definition_in_its_module(tmp_path, fake_embedder):
    searcher = _searcher(tmp_path, CHANNELS, fake_embedder)
    text = "Add a way to mark the value seen on chan::sync::watch::Receiver"
    analysis = searcher.analyze(text)
    assert "Receiver" in analysis.identifiers
    assert analysis.scopes == {"receiver": [("chan", "sync", "watch")]}
    strength = _symbol_strength(searcher, text)
    # The module's own definition is the one named, as surely as a qualified name.
    assert strength.pop("src/sync/watch.rs") == 1.0
    assert strength and max(strength.values()) < 1.0


def test_a_rust_paths_type_and_member_name_the_method_of_that_module(tmp_path, fake_embedder):
    searcher = _searcher(tmp_path, CHANNELS, fake_embedder)
    strength = _symbol_strength(searcher, "Add broadcast::Sender::len, as the Receiver has")
    assert strength.pop("src/sync/broadcast.rs") == 1.0
    assert strength and max(strength.values()) < 1.0


def test_a_rust_path_into_the_standard_library_or_undefined_names_nothing(tmp_path, fake_embedder):
    searcher = _searcher(tmp_path, CHANNELS, fake_embedder)
    text = "It returns Option::None from std::sync::mpsc::Receiver and Poll::Pending"
    analysis = searcher.analyze(text)
    assert analysis.identifiers == analyze(text).identifiers
    assert analysis.scopes == {}


def test_a_path_with_colons_is_no_rust_path_in_a_project_of_another_language(
    tmp_path, fake_embedder
):
    files = {
        "include/chan/receiver.hpp": "namespace chan {\nclass Receiver {\n public:\n"
        "  int size() const;\n};\n}\n",
        "src/receiver.cpp": '#include "chan/receiver.hpp"\n'
        "int chan::Receiver::size() const { return 0; }\n",
    }
    searcher = _searcher(tmp_path, files, fake_embedder)
    text = "chan::Receiver::size is wrong"
    analysis = searcher.analyze(text)
    assert analysis.main_language == "cpp"
    assert analysis.identifiers == analyze(text).identifiers
    assert analysis.scopes == {}


READINESS = {
    "Cargo.toml": '[package]\nname = "poll"\nversion = "0.1.0"\n',
    "src/lib.rs": "pub mod interest;\npub mod ready;\npub mod socket;\n",
    "src/interest.rs": (
        "pub struct Interest(u8);\n\n"
        "impl Interest {\n    pub const READABLE: Interest = Interest(1);\n}\n"
    ),
    "src/ready.rs": (
        "pub struct Ready(u8);\n\nimpl Ready {\n    pub const READABLE: Ready = Ready(1);\n}\n"
    ),
    "src/socket.rs": (
        "pub struct Socket;\n\nimpl Socket {\n"
        "    pub async fn readable(&self) -> bool {\n        true\n    }\n}\n"
    ),
}


def test_a_rust_paths_member_is_its_types_however_often_the_text_names_its_word(
    tmp_path, fake_embedder
):
    searcher = _searcher(tmp_path, READINESS, fake_embedder)
    # `readable` comes first as a plain name (a call), then as a type's member.
    text = "`socket.readable()` never returns when Interest::READABLE is asked for"
    analysis = searcher.analyze(text)
    assert analysis.scopes == {"readable": [("Interest",)]}
    strength = _symbol_strength(searcher, text)
    assert strength.pop("src/interest.rs") == 1.0
    assert strength and max(strength.values()) < 1.0


def test_a_rust_path_to_a_module_names_no_definition_of_its_name(tmp_path, fake_embedder):
    files = {
        "Cargo.toml": '[workspace]\nmembers = ["grep"]\n',
        "grep/Cargo.toml": '[package]\nname = "grep"\nversion = "0.1.0"\n',
        "grep/src/lib.rs": "pub mod literal;\npub mod matcher;\n",
        "grep/src/literal.rs": "pub struct LiteralSets;\n",
        "grep/src/matcher.rs": (
            "pub struct Matcher {\n    literal: bool,\n}\n\n"
            "pub fn literal(m: &Matcher) -> bool {\n    m.literal\n}\n"
        ),
    }
    searcher = _searcher(tmp_path, files, fake_embedder)
    # `grep::literal` is the module of grep/src/literal.rs, not the function `literal`.
    text = "grep::literal misses a match that grep::matcher::Matcher finds"
    analysis = searcher.analyze(text)
    assert "literal" not in analysis.identifiers
    assert "Matcher" in analysis.identifiers
    assert analysis.scopes == {"matcher": [("grep", "matcher")]}
