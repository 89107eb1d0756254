"""Per-file extraction, inline and in worker processes."""

from __future__ import annotations

import os
from pathlib import Path

from dowse.indexer import extract
from dowse.indexer.extract import ExtractConfig, FileJob, extract_files, process_file
from dowse.indexer.walk import walk


def _jobs(root: Path) -> list[FileJob]:
    return [FileJob(e.path, str(e.abspath), e.size, e.mtime_ns) for e in walk(root).files]


def test_worker_pool_gives_the_same_rows_as_inline(example_repo, monkeypatch):
    jobs = _jobs(example_repo)
    inline = {o.path: o for o in extract_files(jobs, ExtractConfig(), workers=1)}
    monkeypatch.setattr(extract, "POOL_MIN_FILES", 1)
    monkeypatch.setattr(extract, "BATCH", 3)
    seen: list[int] = []
    pooled = {
        o.path: o
        for o in extract_files(
            jobs, ExtractConfig(), workers=2, progress=lambda d, n: seen.append(d)
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


def _crashing_safe(job, cfg):
    """Stands in for extract._safe in worker processes: dies like a segfaulting grammar."""
    if job.path.endswith("payments.py"):
        os._exit(139)
    return process_file(job, cfg)


def _crashing_batch(jobs, cfg):
    return [_crashing_safe(job, cfg) for job in jobs]


def test_a_worker_crash_loses_no_file(example_repo, monkeypatch):
    jobs = _jobs(example_repo)
    monkeypatch.setattr(extract, "POOL_MIN_FILES", 1)
    monkeypatch.setattr(extract, "BATCH", 2)
    monkeypatch.setattr(extract, "_process_batch", _crashing_batch)
    monkeypatch.setattr(extract, "_safe", _crashing_safe)
    outs = {o.path: o for o in extract_files(jobs, ExtractConfig(), workers=2)}
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
    for i in range(extract.POOL_MIN_FILES + 6):
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
