"""Chunking invariants on real files and on generated input."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dowse.indexer.chunk import ChunkConfig, chunk_file
from dowse.indexer.parse import parse_source
from dowse.languages import language_for

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SOURCES = sorted(
    p
    for p in FIXTURES.rglob("*")
    if p.is_file() and language_for(p.name) and ".dowse" not in p.parts
)


def _check_cover(source: bytes, chunks, cfg: ChunkConfig) -> None:
    lines = source.decode("utf-8", "replace").split("\n")
    if source.endswith(b"\n"):
        lines.pop()
    covered: list[int] = []
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        covered.extend(range(c.start_line, c.end_line + 1))
    assert covered == sorted(set(covered)), "chunks overlap or are out of order"
    missing = [i for i in range(1, len(lines) + 1) if i not in set(covered)]
    assert all(not lines[i - 1].strip() for i in missing), "a non-blank line is uncovered"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_chunks_cover_every_line_once(path: Path):
    source = path.read_bytes()
    language = language_for(path.name)
    parsed = parse_source(path.name, source, language)
    for cfg in (ChunkConfig(), ChunkConfig(max_chars=200, min_chars=40)):
        chunks = chunk_file(
            path.name, source, language, tree=parsed.tree, symbols=parsed.symbols, config=cfg
        )
        _check_cover(source, chunks, cfg)


def test_chunks_split_along_definitions_and_name_their_symbol():
    source = b"".join(
        f"def f{i}(x):\n    '''Doc {i}.'''\n".encode()
        + b"    y = x + 1\n" * 60
        + b"    return y\n\n\n"
        for i in range(4)
    )
    parsed = parse_source("m.py", source, "python")
    chunks = chunk_file(
        "m.py",
        source,
        "python",
        tree=parsed.tree,
        symbols=parsed.symbols,
        config=ChunkConfig(max_chars=150, min_chars=40),
    )
    starts = {s.start_line for s in parsed.symbols}
    # Every function starts a chunk, and each chunk lies inside one function.
    assert starts <= {c.start_line for c in chunks}
    assert all(c.symbol and c.symbol.startswith("f") for c in chunks)
    assert all(c.header == f"m.py :: {c.symbol}" for c in chunks)
    sizes = [len(c.text.replace(" ", "").replace("\n", "")) for c in chunks]
    assert max(sizes) < 150 + 40 and len(chunks) > 4


def test_small_siblings_are_merged():
    source = b"".join(f"def f{i}():\n    return {i}\n\n".encode() for i in range(10))
    parsed = parse_source("m.py", source, "python")
    chunks = chunk_file("m.py", source, "python", tree=parsed.tree, symbols=parsed.symbols)
    assert len(chunks) == 1 and chunks[0].symbol is None and chunks[0].header == "m.py"


def test_non_ascii_keeps_lines_exact():
    source = "# héllo wörld ✓\n".encode() * 3 + b"def g():\n    return '\xc3\xa9'\n"
    parsed = parse_source("u.py", source, "python")
    chunks = chunk_file(
        "u.py",
        source,
        "python",
        tree=parsed.tree,
        symbols=parsed.symbols,
        config=ChunkConfig(max_chars=30, min_chars=1),
    )
    _check_cover(source, chunks, ChunkConfig())
    assert chunks[-1].text.endswith("return 'é'")


def test_markdown_splits_at_headings():
    source = b"# Title\nintro\n\n## Install\npip install x\n\n## Use\nrun it\n"
    chunks = chunk_file("README.md", source, "markdown", config=ChunkConfig(min_chars=1))
    assert [c.start_line for c in chunks] == [1, 4, 7]


def test_a_single_huge_line_is_one_chunk():
    source = b"x = [" + b"1, " * 5000 + b"]\n"
    parsed = parse_source("big.py", source, "python")
    chunks = chunk_file("big.py", source, "python", tree=parsed.tree, symbols=parsed.symbols)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 1)]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "def f(a):\n",
                "    return a\n",
                "class C:\n",
                "    x = 1\n",
                "\n",
                "    if a:\n",
                "        pass\n",
                "# comment ü\n",
                "@deco\n",
                "    def m(self):\n",
                "\t\n",
                "'''doc\n",
                "x = (\n",
                ")\n",
                "\xff\xfe\n",
            ]
        ),
        max_size=80,
    ),
    st.integers(min_value=20, max_value=400),
)
def test_random_python_is_always_covered(parts, max_chars):
    source = "".join(parts).encode("utf-8", "surrogateescape")
    parsed = parse_source("r.py", source, "python")
    cfg = ChunkConfig(max_chars=max_chars, min_chars=max_chars // 4)
    chunks = chunk_file(
        "r.py", source, "python", tree=parsed.tree, symbols=parsed.symbols, config=cfg
    )
    _check_cover(source, chunks, cfg)


def _name_line(symbol, lines: list[str]) -> int:
    """The line the signature starts on: past the decorators and doc comments."""
    for number in range(symbol.start_line, symbol.end_line + 1):
        text = lines[number - 1].strip()
        if text and symbol.signature[:12] in text:
            return number
    raise AssertionError(f"no line of {symbol.qualified_name} opens {symbol.signature!r}")


LANGUAGE_FIXTURES = sorted((FIXTURES / "languages").iterdir())


@pytest.mark.parametrize("path", LANGUAGE_FIXTURES, ids=lambda p: p.name)
@pytest.mark.parametrize("cfg", [ChunkConfig(), ChunkConfig(max_chars=120, min_chars=30)])
def test_the_chunk_of_a_definition_opens_with_its_decorators_and_doc_comment(path, cfg):
    source = path.read_bytes()
    language = language_for(path.name)
    parsed = parse_source(path.name, source, language)
    chunks = chunk_file(
        path.name, source, language, tree=parsed.tree, symbols=parsed.symbols, config=cfg
    )
    lines = source.decode().split("\n")
    led = 0
    for symbol in parsed.symbols:
        name_line = _name_line(symbol, lines)
        led += name_line > symbol.start_line
        (holding,) = [c for c in chunks if c.start_line <= name_line <= c.end_line]
        assert holding.start_line <= symbol.start_line, (symbol.qualified_name, holding.id)
    assert led or path.suffix == ".sh"  # every fixture but bash's has a led definition


def test_a_large_decorated_definition_keeps_its_decorators_with_its_signature():
    options = "".join(
        f'@click.option("--option-{i}", default={i}, help="Option {i}.")\n' for i in range(6)
    )
    body = "".join(f"    value_{i} = option_{i} * {i}\n" for i in range(40))
    source = (
        "import click\n\n"
        + "x = 1\n" * 30
        + "# Runs the job.\n@click.command()\n"
        + options
        + "def job(**options):\n"
        + body
    ).encode()
    parsed = parse_source("cli.py", source, "python")
    (job,) = [s for s in parsed.symbols if s.name == "job"]
    assert job.start_line == 33 and len(job.decorators) == 7
    chunks = chunk_file("cli.py", source, "python", tree=parsed.tree, symbols=parsed.symbols)
    _check_cover(source, chunks, ChunkConfig())
    (holding,) = [c for c in chunks if c.start_line <= 41 <= c.end_line]  # the def line
    assert holding.start_line == 33 and holding.symbol == "job"
    assert holding.text.startswith("# Runs the job.\n@click.command()\n@click.option(")
    # The chunk before holds the module's lines, none of the command's.
    assert [c.end_line for c in chunks if c.end_line < 33] == [32]


# A run of line comments above a definition, one comment node a line (Rust's `///` nodes
# each end where the next one starts): the whole run leads the definition.
COMMENT_RUNS = [
    (
        "lib.rs",
        "rust",
        "impl Pool {\n    fn size(&self) -> usize {\n        self.items.len()\n    }\n\n"
        "    /// Takes an item out of the pool.\n    /// Blocks while the pool is empty.\n"
        "    #[inline]\n    pub fn take(&mut self) -> Item {\n"
        + "        let item = self.items.pop();\n" * 12
        + "        item.unwrap()\n    }\n}\n",
        "Pool.take",
        6,
    ),
    (
        "pool.go",
        "go",
        "package pool\n\nfunc Size() int {\n\treturn 0\n}\n\n"
        "// Take takes an item out of the pool.\n// It blocks while the pool is empty.\n"
        "func Take() int {\n" + "\titem := pop()\n" * 12 + "\treturn item\n}\n",
        "Take",
        7,
    ),
    (
        "Pool.java",
        "java",
        "class Pool {\n    int size() {\n        return 0;\n    }\n\n"
        "    // Takes an item out of the pool.\n    // Blocks while the pool is empty.\n"
        "    @Override\n    public Item take() {\n"
        + "        Item item = pop();\n" * 12
        + "        return item;\n    }\n}\n",
        "Pool.take",
        6,
    ),
    (
        "pool.c",
        "c",
        "int size(void) {\n    return 0;\n}\n\n"
        "// take takes an item out of the pool.\n// It blocks while the pool is empty.\n"
        "int take(void) {\n" + "    int item = pop();\n" * 12 + "    return item;\n}\n",
        "take",
        5,
    ),
]


@pytest.mark.parametrize(("name", "language", "text", "symbol", "first"), COMMENT_RUNS)
def test_a_run_of_line_comments_leads_its_definition(name, language, text, symbol, first):
    source = text.encode()
    parsed = parse_source(name, source, language)
    (sym,) = [s for s in parsed.symbols if s.qualified_name == symbol]
    assert sym.start_line == first
    cfg = ChunkConfig(max_chars=150, min_chars=10)
    chunks = chunk_file(
        name, source, language, tree=parsed.tree, symbols=parsed.symbols, config=cfg
    )
    _check_cover(source, chunks, cfg)
    (holding,) = [c for c in chunks if c.start_line <= first + 2 <= c.end_line]
    assert holding.start_line == first and holding.symbol == symbol
    # The definition before ends its chunk without the comments.
    assert all(c.end_line < first for c in chunks if c.start_line < first)
