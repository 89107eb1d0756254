"""The project's own names (retrieval.project) and the evaluator leaving them out."""

from __future__ import annotations

import pytest

from dowse.indexer.build import build_index
from dowse.indexer.store import Store
from dowse.retrieval.evaluate import OfflineEvaluator
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.loop import run_loop
from dowse.retrieval.pool import Candidate
from dowse.retrieval.project import project_names
from dowse.retrieval.query import analyze


@pytest.mark.parametrize(
    ("files", "names"),
    [
        (
            {"Cargo.toml": '[package]\nname = "ripgrep"\n\n[[bin]]\nname = "rg"\npath = "x.rs"\n'},
            {"ripgrep", "rg"},
        ),
        ({"Cargo.toml": '[package]\nname = "tokio-util"\n'}, {"tokio-util", "tokio_util"}),
        ({"package.json": '{"name": "@org/dayjs", "version": "1.0.0"}'}, {"dayjs"}),
        ({"pyproject.toml": '[project]\nname = "Flask"\n'}, {"flask"}),
        (
            {"setup.py": 'from setuptools import setup\nsetup(\n    name="requests",\n)\n'},
            {"requests"},
        ),
        ({"setup.cfg": "[metadata]\nname = attrs\n"}, {"attrs"}),
        ({"go.mod": "module google.golang.org/grpc/v2\n\ngo 1.21\n"}, {"grpc"}),
        ({"CMakeLists.txt": "cmake_minimum_required(VERSION 3.8)\nproject(FMT CXX)\n"}, {"fmt"}),
        (
            {
                "pom.xml": "<project><parent><artifactId>oss-parent</artifactId></parent>"
                "<artifactId>jackson-core</artifactId><dependencies><dependency>"
                "<artifactId>junit</artifactId></dependency></dependencies></project>"
            },
            {"jackson-core", "jackson_core"},
        ),
        (
            {"settings.gradle.kts": 'plugins { id("x") }\nrootProject.name = "mockito"\n'},
            {"mockito"},
        ),
        ({"settings.gradle": "include ':core'\nrootProject.name = 'jib'\n"}, {"jib"}),
        # A Gradle build that names no root project takes its directory's name: unknown here.
        ({"settings.gradle": "include ':jib-core'\ninclude ':jib-cli'\n"}, set()),
        (
            {
                "Package.swift": "import PackageDescription\n"
                'let package = Package(\n  name: "zstd",\n)\n'
            },
            {"zstd"},
        ),
        # Broken or missing manifests name nothing, and are no error.
        ({"Cargo.toml": "[package\nname = "}, set()),
        ({"package.json": "[1, 2]"}, set()),
        ({"README.md": "# bat\n"}, set()),
    ],
)
def test_the_projects_names_come_from_its_manifests(tmp_path, files, names):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert project_names(tmp_path) == names


def _write(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _crate(name: str) -> str:
    return f'[package]\nname = "{name}"\nversion = "1.0.0"\n'


@pytest.mark.parametrize(
    ("files", "names"),
    [
        # tokio: the crate the others are named after is the project.
        (
            {
                "Cargo.toml": '[workspace]\nmembers = ["tokio", "tokio-util", "benches"]\n',
                "tokio/Cargo.toml": _crate("tokio"),
                "tokio-util/Cargo.toml": _crate("tokio-util"),
                "benches/Cargo.toml": _crate("benches"),
            },
            {"tokio"},
        ),
        # serde: serde_derive_internals is named after serde_derive, which is itself named
        # after serde; only serde is the project's name.
        (
            {
                "Cargo.toml": '[workspace]\nmembers = ["serde", "serde_derive", '
                '"serde_derive_internals", "test_suite"]\n',
                "serde/Cargo.toml": _crate("serde"),
                "serde_derive/Cargo.toml": _crate("serde_derive"),
                "serde_derive_internals/Cargo.toml": _crate("serde_derive_internals"),
            },
            {"serde"},
        ),
        # A member's package name counts, not its directory's; a member without a
        # manifest goes by its directory.
        (
            {
                "Cargo.toml": '[workspace]\nmembers = ["crates/core", "crates/cli"]\n',
                "crates/core/Cargo.toml": _crate("grep"),
                "crates/cli/Cargo.toml": _crate("grep-cli"),
            },
            {"grep"},
        ),
        (
            {"Cargo.toml": '[workspace]\nmembers = ["widget", "widget-macros"]\n'},
            {"widget"},
        ),
        # Members that share no name, globs and paths out of the root name nothing.
        (
            {
                "Cargo.toml": '[workspace]\nmembers = ["parser", "printer"]\n',
                "parser/Cargo.toml": _crate("parser"),
                "printer/Cargo.toml": _crate("printer"),
            },
            set(),
        ),
        (
            {"Cargo.toml": '[workspace]\nmembers = ["crates/*", "../tokio", "../tokio-util"]\n'},
            set(),
        ),
        # A root with its own package is named by it, not by its workspace's members.
        (
            {
                "Cargo.toml": '[package]\nname = "ripgrep"\n\n'
                '[workspace]\nmembers = ["grep", "grep-cli"]\n',
            },
            {"ripgrep"},
        ),
    ],
)
def test_a_cargo_workspace_is_named_after_the_crate_its_members_extend(tmp_path, files, names):
    _write(tmp_path, files)
    assert project_names(tmp_path) == names


def _row(path: str, text: str, language: str) -> dict:
    return {
        "id": path,
        "path": path,
        "language": language,
        "start_line": 1,
        "end_line": text.count("\n") + 1,
        "symbol": None,
        "text": text,
    }


def test_the_projects_own_name_is_no_evidence_for_a_file():
    # A diagnostics script calls the tool by name; the code that wraps lines never does.
    script = _row("diagnostics/info.sh", "bat --version\nbat --list-themes | cat\n", "bash")
    code = _row("src/wrap.rs", "fn wrap_line(line: &str, width: usize) {}\n", "rust")
    cands = [Candidate(script, {"lexical": 1.0}, 1.0), Candidate(code, {"lexical": 0.9}, 0.9)]
    analysis = analyze("`bat` cuts a long line when wrapping at the terminal width")
    evaluator = OfflineEvaluator()
    before = evaluator.features(analysis, cands)
    assert before[0].id_hit == ["bat"]
    analysis.project = ["bat"]
    after = evaluator.features(analysis, cands)
    assert after[0].id_hit == [] and "bat" not in after[0].term_hit
    assert after[0].coverage < before[0].coverage
    # The other words count as before, and the code's share of them grows.
    assert "width" in after[1].term_hit
    assert after[1].coverage > before[1].coverage


def test_the_loop_reads_the_projects_names_from_the_index_root(tmp_path, fake_embedder):
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "widget"\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text("pub fn wrap_line(width: usize) -> usize { width }\n")
    build_index(tmp_path, embedder=fake_embedder)
    searcher = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    result = run_loop(searcher, "`widget` wraps a line at the wrong width of WIDGET_WIDTH")
    assert result.analysis.project == ["widget"]
    # The prose word is no name to look up; a name of the code that holds it still is.
    assert "widget" not in result.analysis.identifiers
    assert "WIDGET_WIDTH" in result.analysis.identifiers
    assert result.items
    assert all("`widget`" not in item.reason for item in result.items)


def test_the_projects_name_is_no_word_of_the_full_text_query():
    from dowse.retrieval.query import base_tokens

    analysis = analyze("bat prints the wrong width when wrapping")
    assert "bat" in base_tokens(analysis)
    analysis.project = ["bat"]
    tokens = base_tokens(analysis)
    assert "bat" not in tokens and "width" in tokens
