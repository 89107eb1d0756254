"""Per-file extraction, inline and in worker processes."""

from __future__ import annotations

import os
from pathlib import Path

import crashing_parser
import pytest

from dowse.indexer import extract
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.extract import ExtractConfig, FileJob, Pooling, extract_files, process_file
from dowse.indexer.store import Store
from dowse.indexer.walk import WalkConfig, walk
from dowse.retrieval.grains import read_lines
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.records import SearchOptions


def _jobs(root: Path, config: WalkConfig | None = None) -> list[FileJob]:
    return [
        FileJob(e.path, str(e.abspath), e.size, e.mtime_ns, dev=e.dev, ino=e.ino)
        for e in walk(root, config or WalkConfig()).files
    ]


def test_worker_pool_gives_the_same_rows_as_inline(example_repo):
    jobs = _jobs(example_repo)
    inline = {o.path: o for o in extract_files(jobs, ExtractConfig(), workers=1)}
    seen: list[int] = []
    pooled = {
        o.path: o
        for o in extract_files(
            jobs,
            ExtractConfig(),
            workers=2,
            progress=lambda d, n: seen.append(d),
            pooling=Pooling(min_files=1, batch=3),
        )
    }
    assert pooled.keys() == inline.keys() == {j.path for j in jobs}
    for path, out in inline.items():
        assert pooled[path] == out, path
    assert seen[-1] == len(jobs)


def test_outcomes_skip_touch_or_extract(example_repo):
    cfg = ExtractConfig()
    tokens = next(j for j in _jobs(example_repo) if j.path == "shop/auth/tokens.py")
    out = process_file(tokens, cfg)
    assert out.file["n_symbols"] == len(out.symbols) > 0 and out.chunks
    again = process_file(FileJob(**{**tokens.__dict__, "old_hash": out.hash}), cfg)
    assert again.touched and not again.chunks
    (example_repo / "blob.py").write_bytes(b"\x00\x01binary")
    blob = FileJob("blob.py", str(example_repo / "blob.py"), 8, 0)
    assert process_file(blob, cfg).skipped == "binary"
    gone = FileJob("gone.py", str(example_repo / "gone.py"), 1, 0)
    assert process_file(gone, cfg).skipped.startswith("unreadable")


def test_a_worker_crash_loses_no_file(example_repo, monkeypatch):
    jobs = _jobs(example_repo)
    # Dies like a segfaulting grammar on shop/payments.py, in whichever worker has it.
    monkeypatch.setattr(extract, "process_batch", crashing_parser.crashing_batch)
    monkeypatch.setattr(extract, "_safe", crashing_parser.crashing_safe)
    pooled = Pooling(min_files=1, batch=2)
    outs = {o.path: o for o in extract_files(jobs, ExtractConfig(), workers=2, pooling=pooled)}
    assert outs.keys() == {j.path for j in jobs}
    crashed = outs["shop/payments.py"]
    assert crashed.file["parser"] == "text" and "crashed" in crashed.file["note"]
    assert crashed.chunks and not crashed.symbols
    assert outs["shop/pricing.py"].symbols  # everything else parsed normally


def test_an_unexpected_error_indexes_the_file_as_text(example_repo, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("grammar bug")

    monkeypatch.setattr(extract, "parse_source", boom)
    job = next(j for j in _jobs(example_repo) if j.path == "shop/pricing.py")
    out = list(extract_files([job], ExtractConfig(), workers=1))[0]
    assert out.file["parser"] == "text"
    assert out.file["note"] == "extraction failed (RuntimeError: grammar bug)"
    assert out.chunks


def test_a_script_without_a_main_guard_gets_an_error_not_a_hang(tmp_path):
    # The pool's workers run the parent's main script again; one that indexes at its top
    # level would wait on the parent's write lock (for minutes) and every file would then
    # be retried one by one. The run must stop at once and say why.
    import subprocess
    import sys

    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(Pooling().min_files + 6):  # enough files for the pool
        (repo / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    script = tmp_path / "unguarded.py"
    script.write_text(
        f"import sys\n"
        f"sys.argv = ['dowse', 'index', {str(repo)!r}, '--no-embed', '--quiet']\n"
        "from dowse.cli import main\nmain()\n"
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert result.returncode == 1
    assert result.stderr == "Error: " + extract.UNGUARDED_SCRIPT + "\n"  # one line, once
    assert not (repo / ".dowse" / "manifest.json").exists()  # nothing half-built committed


# -- what is read is what the walk checked ------------------------------------------------

SECRET = "def outside_secret():\n    return 'OUTSIDE'\n"


@pytest.fixture
def swap(tmp_path: Path) -> tuple[Path, Path]:
    """A root holding pkg/a.py, and a directory outside it holding the same name."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("def inside():\n    return 1\n")
    (outside / "pkg").mkdir(parents=True)
    (outside / "pkg" / "a.py").write_text(SECRET)
    return root, outside


def _job(root: Path, path: str = "pkg/a.py") -> FileJob:
    return next(j for j in _jobs(root) if j.path == path)


def _read(job: FileJob, root: Path) -> extract.FileOutcome:
    return process_file(job, ExtractConfig(root=os.path.realpath(root)))


def test_a_file_swapped_for_a_symlink_after_the_walk_is_not_read(swap):
    root, outside = swap
    job = _job(root)
    (root / "pkg" / "a.py").unlink()
    (root / "pkg" / "a.py").symlink_to(outside / "pkg" / "a.py")
    out = _read(job, root)
    assert out.skipped == "changed during indexing (now a symlink)"
    assert not out.chunks and not out.symbols


def test_a_file_replaced_by_another_or_a_fifo_is_not_read(swap):
    root, outside = swap
    job = _job(root)
    (outside / "pkg" / "a.py").replace(root / "pkg" / "a.py")  # another inode, same path
    assert _read(job, root).skipped == "changed during indexing (replaced by another file)"
    job = _job(root)
    (root / "pkg" / "a.py").unlink()
    os.mkfifo(root / "pkg" / "a.py")  # opening it for reading must not wait for a writer
    assert _read(job, root).skipped == "changed during indexing (not a regular file)"


def test_a_directory_swapped_for_a_symlink_cannot_lead_the_read_outside(swap):
    root, outside = swap
    # The same inode outside (a hard link), reached through a directory on the way that
    # became a symlink: the identity matches, the opened file's path does not.
    (outside / "pkg" / "a.py").unlink()
    os.link(root / "pkg" / "a.py", outside / "pkg" / "a.py")
    job = _job(root)
    (root / "pkg").rename(root / "moved")
    (root / "pkg").symlink_to(outside / "pkg", target_is_directory=True)
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("no /proc/self/fd: the opened file's path cannot be checked")
    assert _read(job, root).skipped == "changed during indexing (leads outside the root)"


def test_the_index_records_the_stat_of_what_it_read(swap):
    root, _ = swap
    job = _job(root)
    target = root / "pkg" / "a.py"
    target.write_text("def inside():\n    return 1\n\ndef added_later():\n    return 2\n")
    os.utime(target, ns=(job.mtime_ns + 5_000_000_000, job.mtime_ns + 5_000_000_000))
    out = _read(job, root)
    st = target.stat()
    assert (out.file["size"], out.file["mtime_ns"]) == (st.st_size, st.st_mtime_ns)
    assert {s["name"] for s in out.symbols} == {"inside", "added_later"}
    # Grown past the size limit since the walk: refused, and never read beyond it.
    small = next(j for j in _jobs(root, WalkConfig(max_file_bytes=100)) if j.path == "pkg/a.py")
    target.write_text("x = 1\n" * 100)
    cfg = ExtractConfig(walk=WalkConfig(max_file_bytes=100))
    assert process_file(small, cfg).skipped == "too large (grew past 100 bytes during indexing)"


def test_a_swap_during_indexing_keeps_outside_content_out_and_serving_rechecks(
    swap, fake_embedder, monkeypatch
):
    root, outside = swap
    from dowse.indexer import build

    def walk_then_swap(*args, **kwargs):
        result = walk(*args, **kwargs)
        (root / "pkg" / "a.py").unlink()
        (root / "pkg" / "a.py").symlink_to(outside / "pkg" / "a.py")
        return result

    monkeypatch.setattr(build, "walk", walk_then_swap)
    stats = build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    assert stats.parsed == 0
    searcher = HybridSearcher.open(root / ".dowse")
    assert not searcher.search("outside_secret OUTSIDE")
    skipped = {r["path"]: r["reason"] for r in searcher.store.rows("skipped", ["path", "reason"])}
    assert skipped["pkg/a.py"] == "changed during indexing (now a symlink)"

    # Served: a file indexed inside the root that now leads out is not shown or read.
    monkeypatch.undo()
    (root / "pkg" / "a.py").unlink()
    (root / "pkg" / "a.py").write_text("def inside():\n    return 1\n")
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    searcher = HybridSearcher.open(root / ".dowse")
    assert [h.path for h in searcher.search("inside")] == ["pkg/a.py"]
    (root / "pkg" / "a.py").unlink()
    (root / "pkg" / "a.py").symlink_to(outside / "pkg" / "a.py")
    assert searcher.search("inside") == []
    assert searcher.search("inside", SearchOptions(grain="symbol")) == []
    assert read_lines(root, "pkg/a.py", 1, 2) is None
    assert read_lines(root, "../outside/pkg/a.py", 1, 2) is None


# -- one text form: UTF-16, CR-only line endings ---------------------------------------------

CR_SOURCE = "def first():\r    return 1\r\rdef second():\r    return 2\r"


@pytest.mark.parametrize(
    "name, data",
    [
        ("utf16le.py", "\ufeff" + CR_SOURCE.replace("\r", "\n")),
        ("utf16be.py", "\ufeff" + CR_SOURCE.replace("\r", "\r\n")),
        ("mac.py", CR_SOURCE),
    ],
)
def test_utf16_and_cr_only_files_are_text_with_editor_line_numbers(tmp_path, name, data):
    encoding = {"utf16le.py": "utf-16-le", "utf16be.py": "utf-16-be"}.get(name, "utf-8")
    (tmp_path / name).write_bytes(data.encode(encoding))
    out = process_file(_job(tmp_path, name), ExtractConfig())
    assert out.skipped is None, out.skipped
    lines = {s["name"]: (s["start_line"], s["end_line"]) for s in out.symbols}
    assert lines == {"first": (1, 2), "second": (4, 5)}
    assert [(c["start_line"], c["end_line"]) for c in out.chunks] == [(1, 5)]
    assert "def second():" in out.chunks[0]["text"]
    # Read back when serving, the same lines hold the same text.
    shown = read_lines(tmp_path, name, 4, 5)
    assert shown is not None and shown.replace("\r", "") == "def second():\n    return 2"


def test_a_binary_file_that_starts_like_utf16_stays_binary(tmp_path):
    (tmp_path / "blob.py").write_bytes(b"\xff\xfe" + b"\x00\xd8" * 64)  # lone surrogates
    assert process_file(_job(tmp_path, "blob.py"), ExtractConfig()).skipped == "binary"


def test_headers_parse_as_cpp_where_cpp_sources_are_the_most(tmp_path, fake_embedder):
    from dowse.languages import header_language

    assert header_language(["src/format.cc", "include/fmt/core.h", "src/os.cc", "x.c"]) == "cpp"
    assert header_language(["lib/zstd.c", "lib/zstd.h", "lib/x.c", "contrib/p.cpp"]) == "c"
    assert header_language(["include/only.h"]) == "c"
    header = "namespace fmt {\nclass buffer {\n public:\n  void push_back(char c);\n};\n}\n"
    for sources, language, names in (
        ({"src/format.cc": "int f() { return 0; }\n"}, "cpp", {"buffer"}),
        ({"src/format.c": "int f(void) { return 0; }\n"}, "c", set()),
    ):
        root = tmp_path / language
        for rel, text in {"include/fmt/core.h": header, **sources}.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
        store = Store.open(root / ".dowse")
        rows = [r for r in store.rows("symbols", ["path", "name"]) if r["path"].endswith(".h")]
        assert {r["name"] for r in rows} >= names
        files = {r["path"]: r["language"] for r in store.rows("files", ["path", "language"])}
        assert files["include/fmt/core.h"] == language
