"""Settings (dowse.settings): precedence, one-line errors naming file and line, and the rule
that a repository's own config file may narrow what dowse reads but never widen it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import make_tree

from dowse.indexer.walk import WalkConfig
from dowse.settings import DEFAULT_MAX_FILE_SIZE, KEYS, load_settings


@pytest.fixture
def user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "user" / "config.toml"
    path.parent.mkdir()
    monkeypatch.setenv("DOWSE_CONFIG", str(path))
    return path


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = make_tree(tmp_path / "repo", {"app.py": "def main():\n    return 1\n", **files})
    (root / ".git").mkdir(exist_ok=True)  # the repository root
    return root


def test_the_default_max_file_size_is_the_walks():
    assert DEFAULT_MAX_FILE_SIZE == WalkConfig().max_file_bytes


def test_precedence_flag_env_dowse_toml_pyproject_user_default(tmp_path, user_file):
    root = repo(
        tmp_path,
        {
            ".dowse.toml": 'embedder = "minilm"\nbudget = 3000\n',
            "pyproject.toml": '[project]\nname = "x"\n\n[tool.dowse]\nbudget = 2000\n'
            "history = false\nmax_file_size = 500\n",
        },
    )
    user_file.write_text("budget = 1000\nhistory = true\nexclude = ['docs/']\nmax_file_size = 9\n")
    env = {"DOWSE_EMBEDDER": "fake", "DOWSE_CONFIG": str(user_file)}
    settings = load_settings(root / "app.py", env)
    assert settings.root == root.resolve()
    # the command line over everything
    assert settings.pick("embedder", "minilm-onnx").source == "--embedder"
    # the environment over the files
    assert settings.pick("embedder").model_dump() == {
        "name": "embedder",
        "value": "fake",
        "source": "DOWSE_EMBEDDER",
    }
    # .dowse.toml over pyproject.toml over the user's file
    assert settings.pick("budget").source == f"{root.resolve() / '.dowse.toml'}:2"
    assert settings.value("budget") == 3000
    assert settings.pick("history").source == f"{root.resolve() / 'pyproject.toml'}:6"
    assert settings.value("history") is False
    assert settings.value("max_file_size") == 500
    # the user's file over the default
    assert settings.pick("exclude").source == f"{user_file}:3"
    assert settings.value("exclude") == ["docs/"]
    # the default, and `given` leaves it to what an index remembers
    assert settings.pick("evaluator").source == "default"
    assert settings.value("evaluator") == "offline"
    assert settings.given("evaluator") is None
    assert [s.name for s in settings.report()] == list(KEYS)


def test_the_repository_root_is_found_above_the_path(tmp_path, user_file):
    root = repo(tmp_path, {".dowse.toml": "budget = 700\n", "src/pkg/mod.py": "x = 1\n"})
    assert load_settings(root / "src" / "pkg", {}).value("budget") == 700


def test_cli_flag_over_file_and_status_says_where_each_value_came_from(
    tmp_path, user_file, run, fake_embedder
):
    root = repo(
        tmp_path,
        {
            ".dowse.toml": "embed = 'none'\nexclude = ['docs/']\n",
            "docs/guide.py": "def guide():\n    pass\n",
        },
    )
    run("index", str(root), "-q")
    status = json.loads(run("status", str(root), "--json").output)
    assert status["files"] == 2  # app.py and .dowse.toml; docs/ left out
    shown = {s["name"]: s for s in status["settings"]}
    assert shown["exclude"] == {
        "name": "exclude",
        "value": ["docs/"],
        "source": f"{root.resolve() / '.dowse.toml'}:2",
    }
    assert shown["embed"]["value"] == "none"
    assert shown["embedder"]["source"] == "DOWSE_EMBEDDER"
    assert shown["index_dir"] == {
        "name": "index_dir",
        "value": str(root.resolve() / ".dowse"),
        "source": "default",
    }
    text = run("status", str(root)).output
    assert f"exclude          docs/                   {root.resolve() / '.dowse.toml'}:2" in text

    # A flag beats the file; without the file, the index remembers the last run.
    run("index", str(root), "-q", "--exclude", "nothing/")
    assert json.loads(run("status", str(root), "--json").output)["files"] == 3
    (root / ".dowse.toml").unlink()
    run("index", str(root), "-q")
    shown = {
        s["name"]: s for s in json.loads(run("status", str(root), "--json").output)["settings"]
    }
    assert shown["exclude"] == {"name": "exclude", "value": ["nothing/"], "source": "the index"}
    assert shown["embed"] == {"name": "embed", "value": "none", "source": "the index"}


def test_a_repositorys_index_dir_lies_inside_it(tmp_path, user_file, run, fake_embedder):
    root = repo(tmp_path, {"pyproject.toml": '[tool.dowse]\nindex_dir = ".cache/dowse"\n'})
    run("index", str(root), "-q", "--no-embed")
    assert (root / ".cache" / "dowse" / "manifest.json").is_file()
    assert not (root / ".dowse").exists()
    assert "function main" in run("symbol", "main", "--path", str(root)).output


BAD_FILES = [
    # (file, text, the error after "Error: <file>")
    (".dowse.toml", "budgett = 100\n", ":1: budgett is not a setting (did you mean budget?)"),
    (
        ".dowse.toml",
        "budget = 1\nembed = 'some'\n",
        ":1: budget must be a whole number of at least 50 (got 1)",
    ),
    (
        ".dowse.toml",
        "\n\nembed = 'some'\n",
        ":3: embed must be one of 'all', 'files', 'none' (got 'some')",
    ),
    (
        ".dowse.toml",
        "exclude = 'docs/'\n",
        ":1: exclude must be a list of non-empty strings (got 'docs/')",
    ),
    (".dowse.toml", "history = 'yes'\n", ":1: history must be true or false (got 'yes')"),
    (".dowse.toml", "budget = = 3\n", ": not valid TOML: Invalid value (at line 1, column 10)"),
    (
        "pyproject.toml",
        "[tool.dowse]\n\nmax-file-size = 10\n",
        ":3: max-file-size is not a setting (did you mean max_file_size?)",
    ),
    (
        "pyproject.toml",
        "[tool.dowse.walk]\nexclude = []\n",
        ":1: walk is not a setting; known: " + ", ".join(KEYS),
    ),
]


@pytest.mark.parametrize(("name", "text", "error"), BAD_FILES)
def test_a_bad_file_is_a_one_line_error_naming_file_and_line(
    tmp_path, user_file, run, name, text, error
):
    root = repo(tmp_path, {name: text})
    result = run("index", str(root), "-q", code=1)
    assert result.output == f"Error: {root.resolve() / name}{error}\n"
    assert not (root / ".dowse").exists()


def test_a_bad_variable_or_user_file_is_an_error_too(tmp_path, user_file, run, monkeypatch):
    root = repo(tmp_path, {})
    monkeypatch.setenv("DOWSE_LLM_BASE_URL", "localhost:11434")
    result = run("search", "main", "--path", str(root), code=1)
    assert result.output == (
        "Error: DOWSE_LLM_BASE_URL='localhost:11434': must start with http:// or https://\n"
    )
    monkeypatch.delenv("DOWSE_LLM_BASE_URL")
    user_file.write_text("\nllm_api_key = 'sk-123'\n")
    result = run("status", str(root), code=1)
    assert result.output == (
        f"Error: {user_file}:2: llm_api_key is refused: a key never goes in a file: "
        "set DOWSE_LLM_API_KEY\n"
    )
    user_file.write_text("index_dir = '/tmp/all-indexes'\n")
    assert run("status", str(root), code=1).output == (
        f"Error: {user_file}:1: index_dir belongs to a repository: set it in its .dowse.toml\n"
    )


def test_the_user_file_may_turn_the_llm_evaluator_on(tmp_path, user_file, run, fake_embedder):
    root = repo(tmp_path, {})
    run("index", str(root), "-q")
    user_file.write_text("evaluator = 'llm'\nllm_model = 'm'\n")
    result = run("ask", "where is main?", "--path", str(root), code=1)
    assert result.output.startswith("Error: --evaluator llm needs DOWSE_LLM_BASE_URL")
    assert run("ask", "where is main?", "--path", str(root), "--evaluator", "offline").stdout


# -- an untrusted repository cannot widen what is read ---------------------------------

WIDENING = [
    ("include_secrets = true", "include_secrets cannot be set by a repository's own file"),
    ("max_file_size = 1000001", "max_file_size = 1000001 is refused in a repository's file"),
    ("evaluator = 'llm'", "evaluator cannot be set by a repository's own file"),
    ("llm_base_url = 'https://attacker.example/v1'", "llm_base_url cannot be set by a"),
    ("llm_model = 'gpt'", "llm_model cannot be set by a repository's own file"),
    ("index_dir = '/tmp/elsewhere'", "index_dir = '/tmp/elsewhere' must be a path relative"),
    ("index_dir = '../elsewhere'", "index_dir = '../elsewhere' leads out of the repository"),
    ("index_dir = 'out/idx'", "index_dir = 'out/idx' leads out of the repository"),  # a link
    ("index_dir = '.'", "index_dir = '.' leads out of the repository"),
]


@pytest.mark.parametrize("where", [".dowse.toml", "pyproject.toml"])
@pytest.mark.parametrize(("line", "error"), WIDENING)
def test_a_repositorys_file_cannot_widen_what_is_read(tmp_path, user_file, run, where, line, error):
    text = line + "\n" if where == ".dowse.toml" else f"[tool.dowse]\n{line}\n"
    root = repo(tmp_path, {where: text, ".env": "AWS_SECRET_ACCESS_KEY=abc\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "out").symlink_to(outside)
    result = run("index", str(root), "-q", "--no-embed", code=1)
    lineno = 1 if where == ".dowse.toml" else 2
    assert result.output.startswith(f"Error: {root.resolve() / where}:{lineno}: {error}")
    assert result.output.count("\n") == 1
    assert not (root / ".dowse").exists() and not any(outside.iterdir())
    # The same setting from the user's own file (or a flag) is taken.
    if line.startswith("include_secrets"):
        (root / where).unlink()
        user_file.write_text(line + "\n")
        run("index", str(root), "-q", "--no-embed")
        status = json.loads(run("status", str(root), "--json").output)
        shown = {s["name"]: s for s in status["settings"]}
        assert shown["include_secrets"] == {
            "name": "include_secrets",
            "value": True,
            "source": f"{user_file}:1",
        }


def test_a_repositorys_file_may_narrow_what_is_read(tmp_path, user_file, run):
    root = repo(tmp_path, {".dowse.toml": "max_file_size = 20\n", "big.py": "x = 1\n" * 10})
    run("index", str(root), "-q", "--no-embed")
    status = json.loads(run("status", str(root), "--json", "--skipped").output)
    assert {s["path"] for s in status["skipped"]} >= {"big.py"}


def test_serve_gives_each_root_its_own_settings(tmp_path, user_file, monkeypatch, fake_embedder):
    """`dowse serve` resolves each root's settings, and the reindex tool applies them."""
    from click.testing import CliRunner

    from dowse.cli import cli
    from dowse.server.records import ReindexRequest
    from dowse.server.workspace import Workspace

    root = repo(
        tmp_path,
        {
            ".dowse.toml": "exclude = ['gen/']\nembed = 'none'\nindex_dir = 'idx'\n",
            "gen/made.py": "def made():\n    pass\n",
        },
    )
    served: list = []
    monkeypatch.setattr("dowse.server.app.serve", lambda roots, **kw: served.extend(roots))
    result = CliRunner().invoke(cli, ["serve", str(root)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [one] = served
    assert one.index_dir == root.resolve() / "idx"
    assert one.options.walk["exclude"] == ["gen/"]
    assert one.options.embed_scope == "none"
    Workspace(served).reindex(ReindexRequest())
    status = json.loads(
        CliRunner().invoke(cli, ["status", str(root), "--json"], catch_exceptions=False).output
    )
    assert status["files"] == 2 and status["no_embed"]
    assert os.path.isdir(root / "idx")
