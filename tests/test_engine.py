"""`dowse index --engine`: the choice of engine, without Ray running (tests/test_engine_ray.py
runs the Ray engine itself)."""

from __future__ import annotations

import sys

import pytest
from conftest import fresh_python

from dowse.errors import EngineError
from dowse.indexer.engine import LocalEngine, load_engine


def test_the_ray_engine_without_ray_is_one_line_naming_the_extra(
    run, example_repo, fake_embedder, monkeypatch
):
    # `None` in sys.modules makes `import ray` fail as if it were not installed.
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "ray.data", None)
    result = run("index", str(example_repo), "--engine", "ray", "-q", code=1)
    assert result.output == "Error: the Ray engine needs Ray: pip install 'dowse[ray]'\n"
    assert not (example_repo / ".dowse").exists()  # nothing written


def test_an_address_without_the_ray_engine_is_refused(run, example_repo, fake_embedder):
    result = run("index", str(example_repo), "--address", "ray://head:10001", "-q", code=1)
    assert result.output == "Error: --address names a Ray cluster: pass it with --engine ray\n"
    assert not (example_repo / ".dowse").exists()


def test_a_repository_file_cannot_choose_the_engine(run, example_repo, fake_embedder):
    (example_repo / ".dowse.toml").write_text('engine = "ray"\n')
    result = run("index", str(example_repo), "-q", code=1)
    assert result.output.startswith(f"Error: {example_repo / '.dowse.toml'}:1: ")
    assert "engine" in result.output


def test_unknown_engine():
    with pytest.raises(EngineError, match="unknown engine 'spark'"):
        load_engine("spark", embedder=lambda: None)  # type: ignore[arg-type,return-value]
    assert isinstance(load_engine("local", embedder=lambda: None), LocalEngine)  # type: ignore[arg-type,return-value]


def test_the_default_engine_never_imports_ray(example_repo):
    code = (
        "import contextlib, io, sys\n"
        "from dowse.cli import cli\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        f"    cli.main(['index', {str(example_repo)!r}, '--no-embed', '-q'])\n"
        "assert (sys.modules.get('dowse.indexer.build') is not None), 'nothing was indexed'\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n"
    )
    assert fresh_python(code, timeout=300) == []
    assert (example_repo / ".dowse" / "manifest.json").exists()
