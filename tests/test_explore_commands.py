"""dowse.explore.commands: how to install, build, test, lint and run a repository, each
command at the line that states it, what CI runs first for test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_tree

from dowse.explore import explore, render_markdown
from dowse.explore.commands import classify, commands_track, kind_of_name
from dowse.explore.records import Command, Finding, TrackFindings
from dowse.explore.tracks import Context, run_track

Row = tuple[str, str, str, str]  # kind, command, runs, citation ref


def run(root: Path, scope: str = "") -> tuple[TrackFindings, list[Command], list[Finding]]:
    ctx = Context(root=root, scope=scope)
    result, output = run_track(ctx, commands_track(ctx))
    return result, output.get("commands", []), output.get("instructions", [])


def rows(commands: list[Command]) -> list[Row]:
    return [(c.kind, c.command, c.runs, c.citation.ref) for c in commands]


def assert_clean(result: TrackFindings) -> None:
    assert [g.passed for g in result.gates] == [True, True, True], result.gates
    assert result.dropped == []


PYPROJECT = """\
[project]
name = "demo"
version = "1.0"

[project.optional-dependencies]
dev = ["pytest", "ruff"]

[project.scripts]
demo = "demo.cli:main"

[tool.pytest.ini_options]
testpaths = ["tests"]

[tool.ruff]
line-length = 100

[tool.hatch.envs.default.scripts]
cov = "pytest --cov"
"""

TOX = """\
[tox]
envlist = py312, lint

[testenv]
deps = pytest
commands =
    pytest -q {posargs}

[testenv:lint]
commands = ruff check .

[testenv:update-deps]
commands = pip-compile
"""

WORKFLOW = """\
name: CI
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pip install -e ".[dev]"
      - name: Test
        run: |
          echo starting
          python -m pytest -x \\
            --maxfail=1
      - run: "ruff check ."
"""

AGENTS = """\
# Working here

Run the tests before you commit:

```sh
$ make test
```

- Never edit `generated/` by hand: run `make gen` instead.
- Keep functions short.
- Public functions must have
  docstrings.
"""


def test_a_python_repository_reports_ci_first_then_the_others_each_cited(tmp_path):
    make_tree(
        tmp_path,
        {
            "pyproject.toml": PYPROJECT,
            "tox.ini": TOX,
            ".github/workflows/ci.yml": WORKFLOW,
            "AGENTS.md": AGENTS,
            "demo/__init__.py": "",
        },
    )
    result, commands, rules = run(tmp_path)
    assert_clean(result)
    assert rows(commands) == [
        ("install", 'pip install -e ".[dev]"', "", ".github/workflows/ci.yml:8"),
        ("test", "python -m pytest -x --maxfail=1", "", ".github/workflows/ci.yml:12"),
        ("test", "make test", "", "AGENTS.md:6"),
        ("test", "hatch run cov", "pytest --cov", "pyproject.toml:18"),
        ("test", "tox -e py", "pytest -q {posargs}", "tox.ini:6"),
        ("test", "pytest", "testpaths tests", "pyproject.toml:11"),
        ("lint", "ruff check .", "", ".github/workflows/ci.yml:14"),
        ("lint", "tox -e lint", "ruff check .", "tox.ini:10"),
        ("lint", "ruff check", "", "pyproject.toml:14"),
        ("run", "demo", "demo.cli:main", "pyproject.toml:9"),
    ]
    # the rules, paragraph by paragraph, with their line ranges; `echo`, `pip-compile`
    # (a chore env) and the `generated/` span are no commands
    assert [(f.claim, f.citations[0].ref) for f in rules] == [
        ("Never edit `generated/` by hand: run `make gen` instead.", "AGENTS.md:9"),
        ("Public functions must have docstrings.", "AGENTS.md:11-12"),
    ]
    assert result.gates[-1].detail.startswith(
        "test with `python -m pytest -x --maxfail=1` (CI, .github/workflows/ci.yml:12)"
    )


def test_go_rust_and_cmake_builds_imply_their_commands(tmp_path):
    go = make_tree(
        tmp_path / "go",
        {
            "go.mod": "// the module\nmodule example.com/demo\n\ngo 1.22\n",
            "Makefile": "all: test\n\ntest:\n\tgo test -race ./...\n\n%.o: %.c\n\tcc $<\n",
            "main.go": "package main\n\nfunc main() {}\n",
        },
    )
    result, commands, _ = run(go)
    assert_clean(result)
    assert rows(commands) == [
        ("build", "make all", "", "Makefile:1"),
        ("build", "go build ./...", "", "go.mod:2"),
        ("test", "make test", "go test -race ./...", "Makefile:3"),
        ("test", "go test ./...", "", "go.mod:2"),
        ("lint", "go vet ./...", "", "go.mod:2"),
    ]
    rust = make_tree(
        tmp_path / "rust",
        {
            "Cargo.toml": '[workspace]\nmembers = ["crates/a"]\n',
            "crates/a/Cargo.toml": '[package]\nname = "a"\n',
        },
    )
    _, commands, _ = run(rust)
    assert rows(commands) == [
        ("build", "cargo build --workspace", "", "Cargo.toml:1"),
        ("test", "cargo test --workspace", "", "Cargo.toml:1"),
    ]
    cmake = make_tree(
        tmp_path / "cmake",
        {
            "CMakeLists.txt": "cmake_minimum_required(VERSION 3.20)\n"
            "project(demo)\nenable_testing()\n"
        },
    )
    _, commands, _ = run(cmake)
    assert rows(commands) == [
        ("build", "cmake -B build && cmake --build build", "", "CMakeLists.txt:2"),
        ("test", "ctest --test-dir build", "", "CMakeLists.txt:3"),
    ]


def test_package_json_scripts_use_the_lock_files_package_manager(tmp_path):
    package = {
        "name": "web",
        "scripts": {
            "test": "vitest run",
            "lint": "eslint .",
            "build": "vite build",
            "dev": "vite",
            "postinstall": "node setup.js",
        },
        "devDependencies": {"vite": "^5"},
    }
    make_tree(tmp_path, {"package.json": json.dumps(package, indent=2) + "\n", "yarn.lock": ""})
    result, commands, _ = run(tmp_path)
    assert_clean(result)
    assert rows(commands) == [
        ("install", "yarn install", "", "package.json:10"),
        ("build", "yarn build", "vite build", "package.json:6"),
        ("test", "yarn test", "vitest run", "package.json:4"),
        ("lint", "yarn lint", "eslint .", "package.json:5"),
        ("run", "yarn dev", "vite", "package.json:7"),
    ]


def test_gitlab_ci_nox_and_a_contributing_guide_in_restructuredtext(tmp_path):
    make_tree(
        tmp_path,
        {
            ".gitlab-ci.yml": (
                "test:\n  script:\n    - nox -s tests\n  before_script: pip install nox\n"
            ),
            "noxfile.py": (
                "import nox\n\n\n@nox.session\ndef tests(session):\n"
                '    session.install("-e", ".")\n    session.run("pytest", "-q")\n\n\n'
                '@nox.session(name="lint")\ndef run_lint(session):\n'
                '    session.run("ruff", "check")\n'
            ),
            "CONTRIBUTING.rst": (
                "Contributing\n============\n\nSet up a virtualenv, then::\n\n"
                "    $ pip install -e .\n    $ nox\n\nYou should add a test for each fix.\n"
            ),
        },
    )
    result, commands, rules = run(tmp_path)
    assert_clean(result)
    assert rows(commands) == [
        ("install", "pip install -e .", "", "CONTRIBUTING.rst:6"),
        ("install", "pip install nox", "", ".gitlab-ci.yml:4"),
        ("test", "nox -s tests", "pytest -q", ".gitlab-ci.yml:3"),
        ("test", "nox", "", "CONTRIBUTING.rst:7"),
        ("lint", "nox -s lint", "ruff check", "noxfile.py:10"),
    ]
    assert [(f.claim, f.citations[0].ref) for f in rules] == [
        ("You should add a test for each fix.", "CONTRIBUTING.rst:9")
    ]


def test_python_tests_without_a_configured_runner_imply_pytest(tmp_path):
    make_tree(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup(name='x')\n",
            "tests/test_x.py": "import x\n\n\ndef test_x():\n    assert x\n",
        },
    )
    result, commands, _ = run(tmp_path)
    assert_clean(result)
    assert rows(commands) == [
        ("install", "pip install -e .", "", "setup.py:2"),
        ("test", "pytest", "", "tests/test_x.py:4"),
    ]


def test_a_repository_stating_no_command_fails_understood_and_says_so(tmp_path):
    make_tree(tmp_path, {"notes.txt": "nothing to run here\n"})
    result, commands, _ = run(tmp_path)
    assert commands == []
    assert [g.passed for g in result.gates] == [False, False, False]
    assert result.gaps == [
        "no file states a command to install, build, test, lint or run (CI, instructions "
        "files, task runners, manifests)"
    ]


def test_a_scope_uses_the_nearest_build_files_above_it(tmp_path):
    make_tree(
        tmp_path,
        {
            "go.mod": "module example.com/demo\n",
            "pkg/a/a.go": "package a\n",
            "examples/go.mod": "module example.com/demo/examples\n",
        },
    )
    _, commands, _ = run(tmp_path, "pkg/a")
    assert {c.citation.ref for c in commands} == {"go.mod:1"}
    _, commands, _ = run(tmp_path)
    assert "examples/go.mod" not in {c.citation.path for c in commands}


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("pytest -q", "test"),
        ("python -m pytest", "test"),
        ("uv run --group dev tox run", "test"),
        ("uv run --locked --group dev tox run -e typing", "lint"),
        ("tox -e docs", "build"),
        ("${{ env.CARGO }} test --workspace", "test"),
        ("cargo fmt --all --check", "lint"),
        ("go test -race ./...", "test"),
        ("go vet ./...", "lint"),
        ("GOFLAGS=-mod=mod go build ./...", "build"),
        ("pip install -e . && pytest", "test"),
        ("python -m build", "build"),
        ("npm ci", "install"),
        ("npm run lint:fix", "lint"),
        ("make", "build"),
        ("make -j4 check", "test"),
        ("./scripts/vet.sh -install", "lint"),
        ("ci/test-complete", "test"),
        ("sudo apt-get install -y libpcre2-dev", "install"),
        ("cargo run --release", "run"),
        ("echo done", None),
        ("git diff --exit-code", None),
        ("cd docs", None),
        # a Python script runs as itself: django's CI test command, tox's `{envpython}`
        ("python tests/runtests.py -v2", "test"),
        ("{envpython} runtests.py {posargs}", "test"),
        ("python utils/convert_attestations.py x", None),  # "attestations" is no test
        ("npx prettier@3.5 --check .", "lint"),
        # Maven and Gradle: options before the goals, several goals, the wrapper scripts
        ("./mvnw -B -q -ff -ntp verify", "test"),
        ("mvn -B clean install", "build"),
        ("mvnw.cmd test", "test"),
        ("./gradlew --no-daemon check", "test"),
        ("gradlew.bat build", "build"),
        ("./gradlew clean goJF build integrationTest", "test"),  # jib's task of its own
        ("./mvnw -B -q -ff -DskipTests source:jar deploy", None),
    ],
)
def test_classify(command, kind):
    assert classify(command) == kind


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("test", "test"),
        ("tests-min", "test"),
        ("py3.12", "test"),
        ("typing", "lint"),
        ("fmt", "lint"),
        ("docs", "build"),
        ("deps", "install"),
        ("serve", "run"),
        ("prepublish", None),
        ("changelog", None),
        ("runtests", "test"),
        ("unittest", "test"),
        ("attestations", None),
        ("contests-page", "test"),
    ],
)
def test_kind_of_name(name, kind):
    assert kind_of_name(name) == kind


def test_explore_puts_the_commands_first_in_markdown_and_json(tmp_path):
    make_tree(
        tmp_path,
        {
            "pyproject.toml": PYPROJECT,
            ".github/workflows/ci.yml": WORKFLOW,
            "demo/__init__.py": "VALUE = 1\n",
        },
    )
    result = explore(tmp_path, depth="shallow")
    assert result.tracks[0].track.name == "commands"
    assert result.commands[0].kind == "install"
    assert "test with `python -m pytest -x --maxfail=1` (.github/workflows/ci.yml:12)" in (
        result.summary
    )
    text = render_markdown(result)
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections[0] == "## How to work in this repository"
    assert "- test: `python -m pytest -x --maxfail=1` — `.github/workflows/ci.yml:12` (CI)" in text
    fields = list(json.loads(result.model_dump_json()))
    assert fields.index("commands") < fields.index("tree")


def test_a_shell_comment_after_a_command_in_agent_docs_is_no_part_of_it(tmp_path):
    root = make_tree(
        tmp_path,
        {
            "CLAUDE.md": "# Guide\n\n## Run tests\n\n```bash\n"
            "uv run pytest pkg -n auto  # All tests in parallel\n"
            "pytest -k 'a # b'\n```\n",
            "pkg/__init__.py": "",
        },
    )
    _, commands, _ = run(root)
    tests = [(c.command, c.citation.ref) for c in commands if c.kind == "test"]
    # The comment is dropped; a `#` inside quotes is the command's own.
    assert ("uv run pytest pkg -n auto", "CLAUDE.md:6") in tests
    assert ("pytest -k 'a # b'", "CLAUDE.md:7") in tests
    assert not any("All tests" in c for c, _ in tests)


FOLDED_AND_JS = """\
jobs:
  js:
    steps:
      - run: npm test
      - run: >
          npx prettier@3.5
          --check
          "tests/js/**/*.js"

      - run: python tests/runtests.py -v2
"""


def test_a_folded_run_block_is_one_command_and_js_beside_python_comes_after(tmp_path):
    # sphinx and django: a package.json for their JavaScript beside pyproject.toml; a
    # `run: >` block whose lines YAML folds into one `npx prettier` command.
    make_tree(
        tmp_path,
        {
            ".github/workflows/tests.yml": FOLDED_AND_JS,
            "pyproject.toml": '[project]\nname = "p"\n',
            "package.json": '{"name": "p-js", "scripts": {"test": "jest"}}\n',
        },
    )
    _, commands, _ = run(tmp_path)
    assert [r for r in rows(commands) if r[0] in ("test", "lint")] == [
        ("test", "python tests/runtests.py -v2", "", ".github/workflows/tests.yml:10"),
        ("test", "npm test", "jest", ".github/workflows/tests.yml:4"),
        (
            "lint",
            'npx prettier@3.5 --check "tests/js/**/*.js"',
            "",
            ".github/workflows/tests.yml:6",
        ),
    ]
    # Without the other language's manifest, the JavaScript test is the project's own.
    (tmp_path / "pyproject.toml").unlink()
    _, commands, _ = run(tmp_path)
    assert [c.command for c in commands if c.kind == "test"][0] == "npm test"


PYTEST_GUIDE = """\
Contributing
============

Preparing
~~~~~~~~~

Tox is used to run all the tests.

Submitting
~~~~~~~~~~

.. note::
    Build the documentation locally with the following command:

    .. code:: bash

        $ tox -e docs

#. Enable and install `pre-commit <https://pre-commit.com>`_ to ensure style-guides.
#. Run ``tox -e linting`` before you push.
#. The pages land in ``doc/en/_build/html``; name your plugin ``joedoe/pytest-xyz``.
#. Or run ``scripts/check.sh``.
#. Install tox::

     $ pip install tox

   Tox is used to run all the tests.
"""

CHORES = """\
jobs:
  t:
    steps:
      - run: tox -e update-plugin-list
      - run: tox -e prepare-release-pr -- "$BRANCH"
      - run: tox -e generate-gh-release-notes -- "$VERSION" notes.md
      - run: tox run -e py312
"""


def test_a_note_is_prose_a_single_backquote_pair_in_rst_is_a_link_and_chores_are_no_tests(
    tmp_path,
):
    # pytest's CONTRIBUTING.rst and CI: `~~~` underlines a section (no fence), a `#.` item's
    # literal block ends with its indentation, `.. note::` holds a sentence, not a command; the
    # code directive inside it holds one; `pre-commit <...>`_ is a link; its CI's tox
    # envs that update, prepare a release or generate notes test nothing.
    # A lone path in a code span names a place; a script the tree holds is a command.
    make_tree(
        tmp_path,
        {
            "CONTRIBUTING.rst": PYTEST_GUIDE,
            ".github/workflows/main.yml": CHORES,
            "scripts/check.sh": "#!/bin/sh\n",
        },
    )
    _, commands, _ = run(tmp_path)
    assert rows(commands) == [
        ("install", "pip install tox", "", "CONTRIBUTING.rst:25"),
        ("build", "tox -e docs", "", "CONTRIBUTING.rst:17"),
        ("test", "tox run -e py312", "", ".github/workflows/main.yml:7"),
        ("test", "scripts/check.sh", "", "CONTRIBUTING.rst:22"),
        ("lint", "tox -e linting", "", "CONTRIBUTING.rst:20"),
    ]


def test_the_projects_install_comes_before_a_tools(tmp_path):
    # pytest's CONTRIBUTING.rst: pre-commit and tox are installed before the project.
    guide = (
        "Setup\n=====\n\n::\n\n    $ pip install --user pre-commit\n    $ pip install tox\n"
        "    $ pip install -e . --group dev\n"
    )
    make_tree(tmp_path, {"CONTRIBUTING.rst": guide})
    _, commands, _ = run(tmp_path)
    assert [c.command for c in commands if c.kind == "install"] == [
        "pip install -e . --group dev",
        "pip install --user pre-commit",
        "pip install tox",
    ]


def test_a_run_lines_chain_ending_in_and_is_one_command(tmp_path):
    """simdjson's CI chains its steps over lines ending in `&&`: the shell reads on, so it is
    one command (a test, at its first line), not `make install &&` on its own."""
    make_tree(
        tmp_path,
        {
            ".github/workflows/ci.yml": (
                "jobs:\n  build:\n    steps:\n      - run: |\n"
                "          mkdir build &&\n"  # 5
                "          cd build &&\n"
                "          cmake --build . &&\n"
                "          ctest --output-on-failure &&\n"
                "          make install\n"
                "      - run: |\n"
                "          cat results.txt |\n"  # 11: a pipe reads on too
                "            grep FAIL\n"
            ),
            "CMakeLists.txt": "project(demo)\n",
        },
    )
    _, commands, _ = run(tmp_path)
    ci = [r for r in rows(commands) if r[3].startswith(".github/")]
    assert ci == [
        (
            "test",
            "mkdir build && cd build && cmake --build . && ctest --output-on-failure && "
            "make install",
            "",
            ".github/workflows/ci.yml:5",
        )
    ]


def test_a_backslash_before_a_blank_line_is_no_part_of_the_command(tmp_path):
    make_tree(
        tmp_path,
        {
            ".github/workflows/ci.yml": (
                "jobs:\n  build:\n    steps:\n      - run: |\n"
                "          make check \\\n"  # 5
                "\n"
                "          echo done\n"
            ),
        },
    )
    _, commands, _ = run(tmp_path)
    assert [r for r in rows(commands) if r[3].startswith(".github/")] == [
        ("test", "make check", "", ".github/workflows/ci.yml:5")
    ]
