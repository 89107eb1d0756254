"""The fast subset of benchmarks/reliability.py: kills, bad input, secrets, a full disk, a
read-only and a damaged index, and the fuzzing property the benchmark runs at length.

`fuzz(language, examples)` is that property (the benchmark calls it with hundreds of
examples per language); here each language gets DOWSE_FUZZ_EXAMPLES (default 15).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import load_benchmark, written_before
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_chunk import _check_cover

from dowse.errors import IndexCorrupt, IndexWriteError
from dowse.indexer import ignore as ignore_module
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.chunk import ChunkConfig, chunk_file
from dowse.indexer.extract import ExtractConfig, FileJob, process_file
from dowse.indexer.ignore import compile_rules, decide
from dowse.indexer.parse import parse_source
from dowse.indexer.status import index_status
from dowse.indexer.store import Store
from dowse.indexer.walk import WalkConfig, check_content
from dowse.languages import CODE_LANGUAGES, TEXT_LANGUAGES, language_for

rel = load_benchmark("reliability")

# -- fuzzing: parser, chunker, content checks and extraction on random input ----------------

FUZZ_LANGUAGES = sorted(CODE_LANGUAGES | TEXT_LANGUAGES)
FUZZ_EXAMPLES = int(os.environ.get("DOWSE_FUZZ_EXAMPLES", "15"))
NAMES = {
    "python": "f.py",
    "javascript": "f.js",
    "typescript": "f.ts",
    "tsx": "f.tsx",
    "go": "f.go",
    "rust": "f.rs",
    "java": "F.java",
    "c": "f.c",
    "cpp": "f.cpp",
    "csharp": "f.cs",
    "ruby": "f.rb",
    "php": "f.php",
    "kotlin": "f.kt",
    "swift": "f.swift",
    "scala": "f.scala",
    "bash": "f.sh",
    "markdown": "f.md",
    "rst": "f.rst",
    "yaml": "f.yaml",
    "toml": "f.toml",
    "json": "f.json",
    "text": "f.txt",
}
_SOUP = [
    b"def ",
    b"class ",
    b"function ",
    b"fn ",
    b"func ",
    b"fun ",
    b"sub ",
    b"struct ",
    b"impl ",
    b"trait ",
    b"interface ",
    b"enum ",
    b"object ",
    b"module ",
    b"namespace ",
    b"package ",
    b"import ",
    b"from ",
    b"#include <a.h>\n",
    b"use ",
    b"require ",
    b"return ",
    b"if ",
    b"else ",
    b"end",
    b"do",
    b"{",
    b"}",
    b"(",
    b")",
    b"[",
    b"]",
    b"<",
    b">",
    b";",
    b",",
    b":",
    b"::",
    b".",
    b"=",
    b"=>",
    b"->",
    b"@deco\n",
    b"x",
    b"Name",
    b"_y1",
    b"\xc3\xbcn\xc3\xaf",
    b"'",
    b'"',
    b'"""',
    b"`",
    b"/*",
    b"*/",
    b"//",
    b"#",
    b"<?php ",
    b"?>",
    b"$v",
    b"\\",
    b"\n",
    b"\r\n",
    b"\r",
    b"\t",
    b"    ",
    b" ",
    b"\xff",
    b"\xc3\x28",
    b"\x00",
    b"\xe2\x82",
    b"---\n",
    b"- ",
    b"[table]\n",
    b"# Heading\n",
    b"```\n",
    b"0x1F",
    b"1e9",
    b"\xef\xbb\xbf",
]
_INPUTS = st.one_of(
    st.binary(max_size=3000),
    st.lists(st.sampled_from(_SOUP), max_size=150).map(b"".join),
    st.text(max_size=400).map(lambda t: t.encode("utf-8", "surrogatepass")),
)


def check_file(language: str, data: bytes, workdir: Path) -> None:
    """Everything the indexer does with one file's bytes, with its invariants."""
    name = NAMES[language]
    parsed = parse_source(name, data, language, timeout_s=2.0)
    cfg = ChunkConfig(max_chars=300, min_chars=60)
    chunks = chunk_file(name, data, language, tree=parsed.tree, symbols=parsed.symbols, config=cfg)
    if chunks or data.replace(b"\xef\xbb\xbf", b"").strip():
        # A file of nothing but byte-order marks and blanks may have no chunk at all.
        _check_cover(data, chunks, cfg)
    lines = max(len(data.decode("utf-8", "replace").split("\n")), 1)
    for s in parsed.symbols:
        assert 1 <= s.start_line <= s.end_line <= lines, s
    for i in parsed.imports:
        assert 1 <= i.line <= lines, i
    check_content(name, data, WalkConfig())
    path = workdir / name
    path.write_bytes(data)
    out = process_file(FileJob(name, str(path), len(data), 0), ExtractConfig())
    assert out.skipped or out.file["n_chunks"] == len(out.chunks)


def fuzz(language: str, examples: int) -> dict[str, Any]:
    """Run `check_file` on `examples` generated inputs; {"tried": n, "error": None or the
    first failure, after shrinking}."""
    tried = 0
    workdir = Path(tempfile.mkdtemp(prefix="dowse-fuzz-"))

    @settings(
        max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(_INPUTS)
    def prop(data: bytes) -> None:
        nonlocal tried
        tried += 1
        check_file(language, data, workdir)

    try:
        prop()
        error = None
    except Exception as exc:  # noqa: BLE001 - the failure is the result
        error = f"{type(exc).__name__}: {str(exc)[:500]}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {"tried": tried, "error": error}


def test_fuzz_names_match_their_languages():
    assert {lang: language_for(name) for lang, name in NAMES.items()} == {
        lang: lang for lang in FUZZ_LANGUAGES
    }


@pytest.mark.parametrize("language", FUZZ_LANGUAGES)
def test_random_input_never_breaks_extraction(language: str):
    result = fuzz(language, FUZZ_EXAMPLES)
    assert result["error"] is None, result["error"]
    assert result["tried"] >= min(FUZZ_EXAMPLES, 5)


def test_deep_nesting_keeps_its_symbols_and_every_line(tmp_path):
    source = b"function f(){\n" * 1500 + b"}\n" * 1500  # 3,000 levels of syntax tree
    parsed = parse_source("deep.js", source, "javascript")
    cfg = ChunkConfig()
    chunks = chunk_file(
        "deep.js", source, "javascript", tree=parsed.tree, symbols=parsed.symbols, config=cfg
    )  # RecursionError before
    _check_cover(source, chunks, cfg)
    (tmp_path / "deep.js").write_bytes(source)
    out = process_file(
        FileJob("deep.js", str(tmp_path / "deep.js"), len(source), 0), ExtractConfig()
    )
    assert out.file["parser"] == "tree-sitter" and out.file["note"] == ""
    assert out.file["n_symbols"] == 1500


def test_text_outside_every_node_is_still_chunked():
    parsed = parse_source("lone.rb", b"\\", "ruby")  # found by the fuzzer
    assert parsed.tree is not None and parsed.tree.root_node.child_count == 0
    chunks = chunk_file("lone.rb", b"\\", "ruby", tree=parsed.tree)
    assert [(c.start_line, c.end_line, c.text) for c in chunks] == [(1, 1, "\\")]


def test_a_long_gitignore_keeps_git_precedence_in_bounded_regexes():
    lines = ["*.log", *[f"filler_{i}/" for i in range(3000)], "!keep.log", "drop_me.py"]
    rules = compile_rules("\n".join(lines), strip=0, prepend="")
    assert rules is not None
    assert decide((rules,), "a/b/other.log", False) is True
    assert decide((rules,), "a/b/keep.log", False) is False  # the last matching line wins
    assert decide((rules,), "drop_me.py", False) is True
    assert decide((rules,), "filler_2999", True) is True
    assert decide((rules,), "src/app.py", False) is None

    # Matching stays linear in the file's lines because no regex holds more than a
    # block of them (one alternation of all 3,002 took 14 s for 100 deep paths); the time
    # itself is measured by benchmarks, not asserted here.
    def lines_in(regex: re.Pattern[str]) -> int:
        return len(re.findall(r"\(\?P<p\d+>", regex.pattern))  # one named group a line

    assert len(rules.file_regexes) > 1
    assert max(map(lines_in, (*rules.file_regexes, *rules.dir_regexes))) <= ignore_module._BLOCK
    assert sum(map(lines_in, rules.file_regexes)) == len(lines)


# -- kills ------------------------------------------------------------------------------------


def _modules(root: Path, n: int, tag: str, body_lines: int = 3) -> None:
    for i in range(n):
        body = "".join(f"    value_{j} = request.get('{tag}{j}')\n" for j in range(body_lines))
        (root / f"mod{i}.py").write_text(
            f'"""Module {i}."""\n\n\ndef handler_{tag}_{i}(request):\n'
            f'    """Handle request {i}."""\n{body}    return request\n'
        )
    # Not racy: indexes of the tree built at other moments hold the same rows.
    written_before(*(root / f"mod{i}.py" for i in range(n)))


def _model_stand_in() -> Any:
    """The CLI's embedding backend, never asked to embed (IndexConfig(embed=False)): an
    index built in-process then has the model name `dowse index --no-embed` writes."""
    from dowse.indexer.embed import get_embedder

    return get_embedder()


def _build(root: Path, index_dir: Path | None = None) -> str | None:
    """A lexical index of `root` as it is now (in-process); its content's fingerprint."""
    build_index(
        root, index_dir=index_dir, config=IndexConfig(embed=False), embedder=_model_stand_in()
    )
    return rel.fingerprint(index_dir or root / ".dowse")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_sigkill_leaves_the_old_or_the_new_snapshot_and_the_next_run_finishes(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _modules(repo, 60, "t0")
    before = _build(repo)
    rng = random.Random(4)
    for n in range(1, 4):
        _modules(repo, 60, f"t{n}")
        (repo / f"mod{n}.py").unlink()  # and a deletion
        after = _build(repo, tmp_path / f"ref{n}")
        proc = rel.launch("index", str(repo), "--no-embed", "-q")
        ready = rel.CrashRig._wait_ready(proc, time.monotonic() + 60)
        delay = rng.uniform(0, 0.5)
        while ready and proc.poll() is None and time.monotonic() - ready < delay:
            time.sleep(0.005)
        if proc.poll() is None:  # a run may finish inside its delay: then it is checked too
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        assert rel.reap_group(proc.pid, 5.0) == 0  # no worker left behind
        assert rel.fingerprint(repo / ".dowse") in (before, after)
        assert rel.audit(repo / ".dowse") == []
        assert rel.answers(repo / ".dowse", (["handler request"], ["handler"]))
        assert _build(repo) == after  # the next run finishes the work
        before = after


@pytest.mark.skipif(
    (os.cpu_count() or 1) < 2 or not Path("/proc").is_dir(),
    reason="the parser pool needs 2 CPUs; group members are read from /proc",
)
def test_a_killed_index_takes_its_parser_workers_along(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _modules(repo, 300, "big", body_lines=400)  # ~4 s of parsing in the worker pool
    proc = rel.launch("index", str(repo), "--no-embed", "-q")
    deadline = time.monotonic() + 60
    try:
        while len(rel.group_alive(proc.pid)) < 4 and time.monotonic() < deadline:
            time.sleep(0.02)  # main, fork server, resource tracker and workers
        assert proc.poll() is None, "the run ended before its workers were seen"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        gone = time.monotonic() + 10
        while rel.group_alive(proc.pid) and time.monotonic() < gone:
            time.sleep(0.05)
        assert rel.group_alive(proc.pid) == []
    finally:
        rel.reap_group(proc.pid, 0)


# -- bad input and secrets -------------------------------------------------------------------


def test_a_hostile_repository_is_indexed_with_every_skip_explained(tmp_path):
    root = tmp_path / "hostile"
    root.mkdir()
    made = rel.hostile_repo(
        root, big_bytes=2_000_000, line_bytes=90_000, nesting=1500, dir_depth=60, ignore_lines=200
    )
    assert len(made) > 60
    prefix = rel.without_dac()
    try:
        ran = rel.dowse("index", str(root), "--no-embed", "-q", "--json", prefix=prefix)
        assert ran.code == 0 and not ran.traceback, ran.err
    finally:
        rel._restore_modes(root)
    store = Store.open(root / ".dowse")
    reasons = {r["path"]: r["reason"] for r in store.rows("skipped")}
    for path, reason in {
        "bin/looks_like.py": "binary",
        "huge/one_line.js": "too large (2.0 MB > 1.0 MB)",
        "links/self": "symlink loop",
        "links/ping": "symlink loop",
        "links/broken.py": "broken symlink",
        "links/devzero.py": "symlink outside root",
        "links/etc/": "symlink outside root",
        "perm/fifo.py": "not a regular file",
        "names/bad\\xffbyte.py": "undecodable file name",
        "node_modules/": "default exclude: node_modules",
        "venv/": "default exclude: virtualenv",
        "package-lock.json": "lockfile",
        "web/app.min.js": "minified",
        "web/bundle.js": "minified",
        "ignored/": "gitignored",
    }.items():
        assert reasons.get(path) == reason, (path, reasons.get(path))
    if prefix or os.geteuid() != 0:
        assert reasons["perm/unreadable.py"].startswith("unreadable")
        assert reasons["perm/closed/"].startswith("unreadable")
    files = {r["path"]: r for r in store.rows("files", ["path", "parser", "note"])}
    assert {
        "names/new\nline.py",
        "names/quote'single.py",
        "names/sql'); DROP TABLE files;--.py",
        "ok/normal.py",
    } <= set(files)
    # UTF-16 is text, and CR-only line ends count lines as editors do.
    assert files["enc/utf16.java"]["parser"] == "tree-sitter"
    cr_symbols = store.rows("symbols", ["name", "start_line"], where="path = 'enc/cr_only.rb'")
    assert sorted(r["start_line"] for r in cr_symbols)[:3] == [1, 4, 7]
    assert files["nest/braces.c"]["note"] == "" and reasons["nest/functions.js"] == "minified"
    # Deleting, editing and renaming the odd names goes through the store's filters.
    for i, path in enumerate(sorted((root / "names").iterdir())):
        if i % 3 == 0:
            path.unlink()
        elif i % 3 == 1:
            path.write_bytes(path.read_bytes() + b"\ndef changed():\n    pass\n")
        else:
            path.rename(path.with_name("moved_" + os.fsdecode(path.name)[-20:]))
    assert _build(root) == _build(root, tmp_path / "ref")


def test_seeded_secrets_never_reach_the_index(tmp_path, fake_embedder):
    root = tmp_path / "secrets"
    root.mkdir()
    seeded = rel.secrets_repo(root, random.Random(3))
    values = sorted({v for _, _, v in seeded})
    build_index(root, embedder=fake_embedder)
    assert rel._values_in_index(root / ".dowse", values) == set()
    assert rel._values_on_disk(root / ".dowse", values) == set()
    store = Store.open(root / ".dowse")
    skipped = {r["path"] for r in store.rows("skipped", ["path"])}
    indexed = {r["path"] for r in store.rows("files", ["path"])}
    # Files of code and configuration holding a token stay indexed, the value redacted;
    # secret files (by name or as a whole by content) are skipped.
    redacted = {path for path, _, _ in seeded if path in indexed}
    assert {"app/settings.py", "web/pay.js", "bots/slack.go", "proj/settings.py"} <= redacted
    assert len(redacted) == 16
    assert {path for path, _, _ in seeded} - {".ssh/id_ed25519"} - redacted <= skipped
    assert ".ssh/" in skipped
    assert {"app/keys.py", "ops/cluster-admin.yaml", "k8s/db-secret.yaml"} <= skipped
    # The control: with --include-secrets the files of known text types are indexed, and
    # the search finds their values.
    control = tmp_path / "control"
    build_index(
        root,
        index_dir=control,
        embedder=fake_embedder,
        config=IndexConfig(walk=WalkConfig(include_secrets=True)),
    )
    in_source = {v for path, _, v in seeded if path in redacted}
    assert len(in_source) == 16 and in_source <= rel._values_in_index(control, values)


# -- a full disk, a read-only or damaged index ------------------------------------------------


@pytest.fixture
def indexed_copy(tmp_path: Path, indexed_examples) -> Path:
    """An indexed copy of the example with one edit since: the next `index` has work."""
    # `_build`'s index, from the session's build (conftest.IndexedExamples).
    root = indexed_examples.copy(tmp_path / "example", IndexConfig(embed=False), _model_stand_in)
    with open(root / "shop" / "payments.py", "a") as fh:
        fh.write("\n\ndef refund_later():\n    return None\n")
    # Safely old: an index of a racy file must write once more when it ages (its row's
    # mark cleared), and these tests' second run is one with nothing to write.
    written_before(root / "shop" / "payments.py")
    return root


def _searches(root: Path) -> bool:
    from dowse.retrieval.hybrid import HybridSearcher

    return bool(HybridSearcher(Store.open(root / ".dowse")).search("charge payment"))


def test_a_full_disk_is_one_line_and_keeps_the_last_index(indexed_copy):
    before = rel.fingerprint(indexed_copy / ".dowse")
    ran = rel.dowse(
        "index", str(indexed_copy), "--no-embed", "-q", preexec=rel._fsize_limit(2048)
    )  # writes past 2 kB fail with EFBIG
    assert ran.one_line_error, ran.err  # a traceback before
    assert ran.last_line == (
        f"Error: cannot write the index at {indexed_copy / '.dowse'}: "
        "File too large; the last complete index is unchanged"
    )
    assert rel.fingerprint(indexed_copy / ".dowse") == before
    assert _searches(indexed_copy)
    _build(indexed_copy)
    names = {r["name"] for r in Store.open(indexed_copy / ".dowse").rows("symbols", ["name"])}
    assert "refund_later" in names


def test_a_disk_too_full_for_the_lock_file_is_one_line(indexed_copy):
    no_writes = rel._fsize_limit(0)  # not even the pid into write.lock
    ran = rel.dowse("index", str(indexed_copy), "--no-embed", "-q", preexec=no_writes)
    assert ran.one_line_error, ran.err  # a traceback from WriteLock before
    assert "File too large; the last complete index is unchanged" in ran.last_line
    _build(indexed_copy)
    ran = rel.dowse("index", str(indexed_copy), "--no-embed", "-q", preexec=no_writes)
    assert ran.code == 0, ran.err  # nothing changed: nothing to write


@pytest.mark.skipif(
    os.geteuid() == 0 and not rel.without_dac(),
    reason="root ignores file modes, and capsh is not there to drop that",
)
@pytest.mark.parametrize("read_only", [".", "db"])
def test_a_read_only_index_is_one_line_and_still_answers(indexed_copy, read_only):
    target = indexed_copy / ".dowse" / read_only
    before = rel.fingerprint(indexed_copy / ".dowse")
    rel._chmod_tree(target, writable=False)
    try:
        ran = rel.dowse("index", str(indexed_copy), "--no-embed", "-q", prefix=rel.without_dac())
        assert ran.one_line_error, ran.err  # a traceback before, for db/
        assert f"cannot write the index at {indexed_copy / '.dowse'}" in ran.last_line
        assert "Permission denied" in ran.last_line
        assert index_status(indexed_copy / ".dowse").files > 0 and _searches(indexed_copy)
    finally:
        rel._chmod_tree(target, writable=True)
    assert rel.fingerprint(indexed_copy / ".dowse") == before
    _build(indexed_copy)


def test_a_damaged_table_file_is_reported_and_rebuild_repairs_it(
    tmp_path, indexed_examples, fake_embedder, run
):
    example_repo = indexed_examples.copy(tmp_path / "example")
    index_dir = example_repo / ".dowse"
    for data in (index_dir / "db" / "chunks.lance" / "data").glob("*.lance"):
        with open(data, "r+b") as fh:
            fh.truncate(data.stat().st_size // 2)
    with pytest.raises(IndexCorrupt, match="the index table 'chunks' .* is damaged .* --rebuild"):
        index_status(index_dir)
    result = run("search", "validate token", "--path", str(example_repo), code=1)
    assert result.output.startswith("Error: the index is damaged (")
    assert result.output.count("\n") == 1
    run("index", str(example_repo), "--rebuild", "--quiet")
    assert index_status(index_dir).chunks == Store.open(index_dir).count("chunks") > 0
    run("search", "validate token", "--path", str(example_repo))


def test_the_store_turns_a_failure_inside_a_query_into_its_own_error(tmp_path, indexed_examples):
    # The tables are open (as a warm searcher's are) when their files are damaged: the
    # failure comes from inside the query, and leaves the store as IndexCorrupt.
    example_repo = indexed_examples.copy(tmp_path / "example")
    index_dir = example_repo / ".dowse"
    store = Store.open(index_dir)
    assert store.full_text("chunks", "validate token", ["id", "_score"], 3)
    for data in (index_dir / "db" / "chunks.lance" / "data").glob("*.lance"):
        with open(data, "r+b") as fh:
            fh.truncate(data.stat().st_size // 2)
    damaged = r"^the index is damaged \(.*\); run `dowse index --rebuild`$"
    with pytest.raises(IndexCorrupt, match=damaged):
        store.full_text("chunks", "validate token", ["id", "text", "_score"], 3)
    with pytest.raises(IndexCorrupt, match=damaged):
        store.scan("chunks", ["id", "text"])
    with pytest.raises(IndexCorrupt, match=damaged):
        store.rows("chunks", ["id", "text"])


def test_the_mcp_tools_report_a_damaged_index_in_one_line(tmp_path, indexed_examples):
    from mcp.server.mcpserver.exceptions import ToolError

    from dowse.server.app import TOOLS, ServedRoot, Workspace, _tool_function

    # `_build`'s index, from the session's build (conftest.IndexedExamples).
    root = indexed_examples.copy(tmp_path / "example", IndexConfig(embed=False), _model_stand_in)
    for data in (root / ".dowse" / "db" / "chunks.lance" / "data").glob("*.lance"):
        data.write_bytes(b"")
    search = _tool_function(
        next(t for t in TOOLS if t.name == "search"), Workspace([ServedRoot(root)])
    )
    with pytest.raises(ToolError) as caught:  # LanceDB's RuntimeError before
        search(query="validate token")
    message = str(caught.value)
    assert message.startswith("the index is damaged (") and "\n" not in message
    assert message.endswith("run `dowse index --rebuild`")


def test_an_index_run_with_nothing_to_do_commits_nothing(example_repo, fake_embedder):
    build_index(
        example_repo,
        embedder=fake_embedder,
        config=IndexConfig(walk=WalkConfig(exclude=("docs/",))),
    )
    manifest = (example_repo / ".dowse" / "manifest.json").read_bytes()
    heads = rel.table_heads(example_repo / ".dowse")
    # The walk options read back from the manifest (a JSON list) once compared unequal to
    # the same options in memory (a tuple): every run rewrote the index and its manifest.
    for exclude in (("docs/",), ("docs/",)):
        stats = build_index(
            example_repo,
            embedder=fake_embedder,
            config=IndexConfig(walk=WalkConfig(exclude=exclude)),
        )
        assert stats.parsed == 0
    assert (example_repo / ".dowse" / "manifest.json").read_bytes() == manifest
    assert rel.table_heads(example_repo / ".dowse") == heads


def test_a_missing_table_is_not_recreated_empty(tmp_path, indexed_examples, fake_embedder):
    example_repo = indexed_examples.copy(tmp_path / "example")
    shutil.rmtree(example_repo / ".dowse" / "db" / "symbols.lance")
    # Recreating it empty would lose every symbol while the files table says "indexed".
    with pytest.raises(IndexCorrupt, match="'symbols' .* is missing; run `dowse index --rebuild`"):
        build_index(example_repo, embedder=fake_embedder)
    build_index(example_repo, embedder=fake_embedder, config=IndexConfig(rebuild=True))
    assert Store.open(example_repo / ".dowse").count("symbols") > 0


def test_rebuild_repairs_a_damaged_embedding_cache(example_repo, fake_embedder):
    build_index(example_repo, embedder=fake_embedder, config=IndexConfig(embed_chunks=True))
    for data in (example_repo / ".dowse" / "db" / "embed_cache.lance" / "data").glob("*.lance"):
        with open(data, "r+b") as fh:
            fh.truncate(100)
    stats = build_index(
        example_repo, embedder=fake_embedder, config=IndexConfig(rebuild=True, embed_chunks=True)
    )
    store = Store.open(example_repo / ".dowse")
    # The cache started afresh: every chunk, summary and definition again.
    assert stats.embedded == stats.chunks + store.count("file_vectors") > stats.files
    assert store.manifest.embedded and store.count("vectors") == store.count("chunks")


def test_storage_errors_become_one_line_errors(tmp_path):
    from dowse.indexer.store import storage_error

    full = RuntimeError(
        "lance error: LanceError(IO): No space left on device (os error 28), "
        "/root/.cargo/registry/src/x/lance-io/src/object_store.rs:1006:34"
    )
    error = storage_error(full, tmp_path)
    assert isinstance(error, IndexWriteError)
    assert str(error) == f"cannot write the index at {tmp_path}: No space left on device"
    damaged = RuntimeError(
        "lance error: LanceError(IO): Generic LocalFileSystem error: failed "
        "to fill whole buffer, /rustc/abc/library/core/src/ops/fn.rs:250:5"
    )
    assert str(storage_error(damaged)) == (
        "the index is damaged (Generic LocalFileSystem error: failed to fill whole buffer); "
        "run `dowse index --rebuild`"
    )
    assert storage_error(RuntimeError("something else")) is None
    assert storage_error(KeyError("lance error")) is None


# -- the corrupt, history and inputs cases, tiny -------------------------------------------------

_QUICK_DAMAGES = [
    "chunks data file truncated to half",
    "chunks data file overwritten with garbage",
    "manifest.json garbled",
    "manifest.json deleted",
    "manifest.json names a future format",
    "manifest.json names a table version that does not exist",
]


@pytest.mark.parametrize("damage", _QUICK_DAMAGES)
def test_a_plain_index_repairs_each_damage_or_fails_in_one_line(
    tmp_path, indexed_examples, fake_embedder, damage
):
    from click.testing import CliRunner

    from dowse.cli import cli

    [corrupt] = [how for what, _, how in rel.CORRUPTIONS if what == damage]
    example_repo = indexed_examples.copy(tmp_path / "example", IndexConfig(embed=False))
    index_dir = example_repo / ".dowse"
    corrupt(index_dir)
    result = CliRunner().invoke(cli, ["index", str(example_repo), "-q"], catch_exceptions=False)
    if result.exit_code == 0:
        index_status(index_dir)  # repaired: reads every table whole, raises if damaged
        assert Store.open(index_dir).count("chunks") > 0
    else:
        assert result.exit_code == 1 and result.output.startswith("Error: ")
        assert result.output.count("\n") == 1, result.output


def test_secrets_in_git_history_are_neither_stored_nor_shown(tmp_path, fake_embedder, run):
    root = tmp_path / "history"
    seeded = rel.history_repo(root, random.Random(5))
    values = [v for _, v in seeded]
    question = "how are the cart totals rounded and which billing keys are used?"
    outputs = [
        run("index", str(root), "--no-embed", "-q").output,
        run("ask", question, "--path", str(root)).output,
        run("ask", question, "--path", str(root), "--format", "agent").output,
        run("explore", str(root), "--depth", "deep", "--json").output,
        run(
            "eval",
            "history",
            str(root),
            "-n",
            "2",
            "--methods",
            "bm25",
            "--no-embed",
            "-q",
            "--json",
        ).output,
    ]
    assert json.loads(run("status", str(root), "--json").output)["commits"] >= len(seeded)
    assert [w for w, v in seeded if any(v in out for out in outputs)] == []
    assert rel._values_in_index(root / ".dowse", values) == set()
    assert rel._values_on_disk(root / ".dowse", values) == set()


def test_input_edges_answer_or_fail_in_one_line(tmp_path, indexed_examples, fake_embedder):
    from click.testing import CliRunner

    from dowse.cli import cli

    example_repo = indexed_examples.copy(tmp_path / "example", IndexConfig(embed=False))
    runner = CliRunner()
    for name, argv in rel._cli_edges(example_repo):
        result = runner.invoke(cli, argv, catch_exceptions=False)
        errors = [ln for ln in result.output.splitlines() if ln.startswith("Error: ")]
        assert result.exit_code == 0 or (result.exit_code == 1 and len(errors) == 1), name
    edges = rel._mcp_edges()
    answers = rel.mcp_calls(
        example_repo, [(tool, args) for _, tool, args in edges] + [("search", {"query": "token"})]
    )
    assert len(answers) == len(edges) + 1 and not answers[-1][0]
    for (name, _, _), (is_error, text) in zip(edges, answers, strict=False):
        assert "Traceback" not in text, name
        assert (is_error and len(text.strip().splitlines()) == 1) or text.startswith("{"), name
    unknown = answers[0][1]
    assert unknown.startswith("Error executing tool search: max_token: unknown field")


_READS = [
    ["search", "validate token", "--no-refresh"],
    ["search", "validate token", "--grain", "file"],
    ["ask", "where are expired session tokens rejected?", "--no-refresh"],
    ["ask", "how are discounts applied?", "--format", "agent"],
    ["symbol", "validate_token"],
    ["symbol", "validate_token", "--callers"],
    ["symbol", "validat"],
]
"""Read commands over a damaged index, each given `--path ROOT`."""


@pytest.mark.parametrize("damage", [what for what, _, _ in rel.CORRUPTIONS])
def test_every_read_over_a_damaged_index_answers_or_fails_in_one_line(
    tmp_path, indexed_examples, fake_embedder, damage
):
    # The store converts LanceDB's failures itself: neither the CLI seam nor the MCP tools
    # catch anything but dowse's own errors, so each read either answers or says one line.
    from click.testing import CliRunner
    from mcp.server.mcpserver.exceptions import ToolError

    from dowse.cli import cli
    from dowse.server.app import TOOLS, ServedRoot, Workspace, _tool_function

    [corrupt] = [how for what, _, how in rel.CORRUPTIONS if what == damage]
    example_repo = indexed_examples.copy(tmp_path / "example")
    index_dir = example_repo / ".dowse"
    corrupt(index_dir)
    runner = CliRunner()
    calls = [[*argv, "--path", str(example_repo)] for argv in _READS] + [
        ["status", str(example_repo)],
        ["explore", str(example_repo), "--depth", "deep"],
    ]
    for argv in calls:
        result = runner.invoke(cli, argv, catch_exceptions=False)
        assert result.exit_code in (0, 1), (argv, result.output)
        if result.exit_code:
            assert result.output.startswith("Error: "), (argv, result.output)
            assert result.output.count("\n") == 1, (argv, result.output)
    workspace = Workspace([ServedRoot(example_repo)])
    tools = {t.name: _tool_function(t, workspace) for t in TOOLS}
    for name, arguments in [
        ("search", {"query": "validate token"}),
        ("ask", {"question": "where are expired session tokens rejected?"}),
        ("symbol", {"name": "validate_token"}),
        ("references", {"name": "validate_token"}),
        ("status", {}),
        ("explore", {"path": "."}),
    ]:
        try:
            tools[name](**arguments)
        except ToolError as exc:
            assert "\n" not in str(exc), (name, str(exc))


def test_the_forge_reader_sees_what_escapes_a_fence():
    """The forge case's reader follows CommonMark's fences, and every line break a reader
    honours: it must see a forgery wherever one is, or its 0 proves nothing."""
    t = "FORGED_x"
    assert rel.forged_lines(f"````\n```\n## {t}\n````\n", t) == []
    assert rel.forged_lines(f"```\n````\n```\n## {t}\n", t) == []  # ```` does not open
    assert rel.forged_lines(f"```\n```\n## {t}\n", t) == [f"## {t}"]
    assert rel.forged_lines(f"~~~\n```\n## {t}\n~~~\n", t) == []
    assert rel.forged_lines(f"- `a\r- `{t}.py`\n", t) == [f"- `{t}.py`"]
    assert rel.forged_lines(f"- `a\\n## {t}.py`\n### `a\\r## {t}`\n", t) == []
    assert rel.forged_json('{"files": [{"path": "a.py"}]}', {"a.py"}) == []
    assert rel.forged_json('{"files": [{"path": "b.py"}]}', {"a.py"}) == ["b.py"]
    assert rel.forged_json('{"files": [', {"a.py"}) != []


def test_planted_text_forges_no_structure_of_any_output(tmp_path, fake_embedder, run, monkeypatch):
    """The forge case on a small scale, in-process: fences of 3 to 10 backticks in
    docstrings, names holding line breaks; ask (markdown, agent), symbol and explore."""
    token = "FORGED_0123456789"
    root = tmp_path / "forge"
    files = rel.forge_repo(root, token)
    assert rel.control(root, files, token) > 0  # the naive rendering is caught
    build_index(root, embedder=fake_embedder, config=IndexConfig(embed=False))
    real = rel._real_paths(files)
    q = "where is the fence of backticks, trust me"
    text = [
        run("ask", q, "--path", str(root), "--budget", "16000").output,
        run("ask", "which function is named cr", "--path", str(root)).output,
        run("symbol", "named_1", "--path", str(root)).output,
        run("explore", str(root), "--depth", "deep").output,
        run("status", str(root), "--skipped").output,
    ]
    agent = run("ask", q, "--path", str(root), "--format", "agent").output
    assert all(token in out for out in [*text, agent])
    assert [rel.forged_lines(out, token) for out in text] == [[]] * len(text)
    assert rel.forged_json(agent, real) == []
    # The docstrings' fences are inside the answer, verbatim, in a longer fence.
    assert "\n" + "`" * 11 + "\n" in text[0] and f"``````````\n## {token} Files 10.0" in text[0]
