"""File summaries: what one vector per file is computed from, and the embed scopes."""

from __future__ import annotations

import json

import pytest

from dowse.indexer.build import IndexConfig, build_index, resolve_embed_scope
from dowse.indexer.records import Symbol
from dowse.indexer.store import Store
from dowse.indexer.summary import DEFINITION_KINDS, DOC_CHARS, MAX_CHARS, file_summary, leading_doc
from dowse.languages import is_test_path


def _sym(name: str, kind: str, parent: str | None = None) -> Symbol:
    qualified = f"{parent}.{name}" if parent else name
    return Symbol(
        id=f"a.py#{qualified}@1",
        path="a.py",
        name=name,
        qualified_name=qualified,
        kind=kind,
        start_line=1,
        end_line=2,
        name_line=1,
        parent=parent,
    )  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "language", "doc"),
    [
        (
            "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n"
            '"""Write migration files.\n\nMore."""\n',
            "python",
            "Write migration files. More.",
        ),
        ("r'''Raw doc.'''\nx = 1\n", "python", "Raw doc."),
        ("import os\n'''not a docstring'''\n", "python", ""),
        (
            "// Copyright 2020 ACME\n// Package cache keeps\n// recent entries.\n\npackage cache\n",
            "go",
            "Package cache keeps recent entries.",
        ),
        (
            "/*\n * SPDX-License-Identifier: MIT\n * Parses CSV rows.\n */\nint x;\n",
            "c",
            "Parses CSV rows.",
        ),
        ("# Licensed under a 3-clause BSD style license\nimport os\n", "python", ""),
        ("#!/bin/sh\n# Deploy the site.\nset -e\n", "bash", "Deploy the site."),
        ("# Title\n\nSome words here.\n", "markdown", "# Title Some words here."),
    ],
)
def test_leading_doc(text, language, doc):
    assert leading_doc(text, language) == doc


def test_file_summary_puts_path_doc_then_names_by_kind():
    symbols = [
        _sym("Writer", "class"),
        _sym("write", "method", "Writer"),
        _sym("helper", "function"),
        _sym("write", "method", "Other"),
        _sym("Other", "class"),
        _sym("LIMIT", "constant"),
    ]
    text = '"""Serializes models."""\n'
    assert file_summary("pkg/writer.py", text, "python", symbols) == (
        "pkg/writer.py\nSerializes models.\nclasses: Writer, Other\nfunctions: helper\n"
        "methods: write"
    )


def test_file_summary_without_names_keeps_the_opening_words_and_stays_short():
    assert file_summary("conf/settings.toml", "[tool]\nname = 'x'\n", "toml", []) == (
        "conf/settings.toml\n[tool] name = 'x'"
    )
    many = [_sym(f"function_number_{i}", "function") for i in range(500)]
    assert len(file_summary("big.py", "", "python", many)) == MAX_CHARS
    # A long text file: its opening words, whitespace collapsed, as if read whole.
    for text in ("\n\n  Title\t\n" + "word  " * 200_000, " \n" * 50_000 + "late start"):
        assert leading_doc(text, "markdown") == " ".join(text.split())[:DOC_CHARS]


def _defined(store):
    """The ids of the definitions that get a vector: those outside tests and examples."""
    return {
        r["id"]
        for r in store.rows("symbols", ["id", "path", "kind"])
        if r["kind"] in DEFINITION_KINDS
        and not is_test_path(r["path"])
        and not r["path"].startswith("examples/")
    }


def test_embed_files_scope_gives_one_vector_per_file_and_no_chunk_vectors(
    example_repo, fake_embedder
):
    stats = build_index(example_repo, embedder=fake_embedder)  # the default scope
    store = Store.open(example_repo / ".dowse")
    ids = {r["id"] for r in store.rows("file_vectors", ["id"])}
    files = {r["path"] for r in store.rows("files", ["path"])}
    defined = _defined(store)
    # One vector per file summary (its id the path) and per definition.
    assert defined and ids == files | defined
    assert store.count("file_vectors") == len(files) + len(defined) == stats.embedded
    assert store.count("vectors") == 0 and store.manifest.embedded
    assert not store.manifest.embed_chunks and stats.vectors_pending == 0
    assert resolve_embed_scope(example_repo / ".dowse", None) == (True, False)
    # Widening to all embeds the chunks and nothing else; narrowing drops them again.
    stats = build_index(example_repo, config=IndexConfig(embed_chunks=True), embedder=fake_embedder)
    store = Store.open(example_repo / ".dowse")
    assert stats.parsed == 0 and stats.embedded == len(
        {r["hash"] for r in store.rows("chunks", ["hash"])}
    )
    assert store.count("vectors") == store.count("chunks") and store.manifest.embed_chunks
    build_index(example_repo, config=IndexConfig(embed_chunks=False), embedder=fake_embedder)
    store = Store.open(example_repo / ".dowse")
    assert store.count("vectors") == 0
    assert store.count("file_vectors") == store.count("files") + len(_defined(store))


@pytest.mark.model
def test_cli_remembers_the_embed_scope(example_repo, run):
    run("index", str(example_repo), "--embed", "files", "-q", "--embedder", "minilm-onnx")
    store = Store.open(example_repo / ".dowse")
    assert store.count("vectors") == 0 and store.count("file_vectors") > 0
    (example_repo / "shop" / "new.py").write_text("def fresh():\n    return 1\n")
    run("index", str(example_repo), "-q")
    store = Store.open(example_repo / ".dowse")
    assert store.count("vectors") == 0
    assert store.count("file_vectors") == store.count("files") + len(_defined(store))
    status = run("status", str(example_repo)).output
    assert (
        f"{store.count('files')}/{store.count('files')} files, "
        f"{len(_defined(store))} definitions, no chunks (--embed files)"
    ) in status
    # The real model's summary vectors rank a file by what it is about.
    hits = json.loads(
        run(
            "search",
            "apply price reductions to a shopping basket",
            "--path",
            str(example_repo),
            "--grain",
            "file",
            "--json",
        ).output
    )
    assert hits[0]["path"] == "shop/pricing.py" and hits[0]["signals"]["summary"] > 0.5
    assert "dense" not in hits[0]["signals"]
    result = run("index", str(example_repo), "--no-embed", "--embed", "files", code=1)
    assert "--no-embed contradicts --embed files" in result.output


def test_summary_vectors_rank_files_and_bring_their_best_chunk(example_repo, fake_embedder):
    from dowse.retrieval.hybrid import HybridSearcher
    from dowse.retrieval.pool import PoolLimits, _Pool, _summary_signal, summary_chunks
    from dowse.retrieval.query import analyze

    build_index(example_repo, config=IndexConfig(embed_chunks=False), embedder=fake_embedder)
    searcher = HybridSearcher(Store.open(example_repo / ".dowse"), lambda: fake_embedder)
    assert searcher.questions.has_file_vectors and not searcher.questions.has_vectors
    # Words of one file's docstring only: its summary is the closest.
    cands = searcher.candidates(analyze("gateway retries"), k=5)
    best = max(cands.values(), key=lambda c: c.score)
    assert best.row["path"] == "shop/payments.py"
    assert best.signals["summary"] == 1.0 and 0 < best.signals["file_cosine"] <= 1
    assert all(c.signals.get("summary", 0) <= 1.0 for c in cands.values())
    # A file found by its summary alone enters the pool with its best chunk for the
    # query's words, or its first chunk when no word matches.
    for tokens, first_line in ((["charge"], None), (["nowordmatchesthis"], 1)):
        pool = _Pool(lambda p: True, [])
        found: dict = {}
        nearest = [("shop/payments.py", 0.5), ("shop/pricing.py", 0.25)]

        def keep(p):
            return p != "shop/pricing.py"

        # As the search's embedding thread does: the chunks of the kept nearest files.
        summary_chunks(searcher.lookups, [p for p, _ in nearest if keep(p)], tokens, [], found)
        _summary_signal(pool, nearest, keep, found, PoolLimits())
        [cand] = pool.cands.values()
        assert found == {"shop/payments.py": [cand.row]}  # kept for the loop's next cycle
        assert cand.row["path"] == "shop/payments.py"
        assert cand.signals == {"summary": 1.0, "file_cosine": 0.5}
        if first_line is None:
            assert "charge" in cand.row["text"]
        else:
            assert cand.row["start_line"] == first_line


def test_summary_scan_in_memory_matches_lancedb(example_repo, fake_embedder):
    from dowse.retrieval.file_ranking import file_dense
    from dowse.retrieval.hybrid import HybridSearcher
    from dowse.retrieval.questions import QuestionVectors

    build_index(example_repo, config=IndexConfig(embed_chunks=False), embedder=fake_embedder)
    store = Store.open(example_repo / ".dowse")
    searcher = HybridSearcher(store, lambda: fake_embedder)
    vector = searcher.questions.embed_query("gateway retries for card payments")
    in_memory = file_dense(searcher.questions, vector, 5)
    # Too many rows to hold: LanceDB scans them.
    scanned = file_dense(QuestionVectors(store, lambda: fake_embedder, matrix_rows=1), vector, 5)
    assert len(in_memory) == 5 == len(scanned)
    assert [p for p, _ in in_memory] == [p for p, _ in scanned]
    assert all(abs(a - b) < 1e-3 for (_, a), (_, b) in zip(in_memory, scanned, strict=True))
    assert in_memory[0][0] == "shop/payments.py"
    assert file_dense(searcher.questions, vector, 1000) == sorted(
        file_dense(searcher.questions, vector, 1000), key=lambda r: -r[1]
    )  # all files, best first
    assert len(file_dense(searcher.questions, vector, 1000)) == store.count(
        "files"
    )  # each file once


def test_embed_scopes_are_one_list():
    from dowse.cli import cli
    from dowse.indexer.build import EMBED_SCOPES, embed_flags

    option = next(p for p in cli.commands["index"].params if p.name == "embed_scope")
    assert tuple(option.type.choices) == EMBED_SCOPES
    assert [embed_flags(s) for s in EMBED_SCOPES] == [(True, True), (True, False), (False, False)]
    with pytest.raises(ValueError, match="unknown embed scope"):
        embed_flags("some")
