"""The configuration explorer on small trees with known settings: exact names and lines,
every claim verifies, tests and tool files left out, a broad question's settings kept."""

from __future__ import annotations

from pathlib import Path

from conftest import make_tree

from dowse.explore.config import config_track
from dowse.explore.records import ConfigReport
from dowse.explore.tracks import Context, run_track, verify_citation

TREE = {
    "app/settings.py": "DEBUG = False\n",
    "app/cli.py": (
        "import os\n"  # 1
        "import click\n"
        "\n"
        "\n"
        '@click.option("-p", "--port", envvar="APP_PORT")\n'  # 5
        "def serve(port):\n"
        '    token = os.environ.get("APP_TOKEN")\n'  # 7
        '    home = os.environ["HOME"]\n'  # 8
        "    return token, home\n"
    ),
    "app/options.py": (
        "import argparse\n"  # 1
        "\n"
        "\n"
        "class ServerConfig:\n"  # 4
        "    pass\n"
        "\n"
        "\n"
        "def parse():\n"  # 8
        "    p = argparse.ArgumentParser()\n"
        '    p.add_argument("--workers", type=int)\n'  # 10
        '    return p.parse_args(), os.getenv("APP_TOKEN")\n'  # 11
    ),
    "cmd/main.go": (
        "package main\n"  # 1
        "\n"
        'import ("flag"; "os")\n'
        "\n"
        "type ClientOptions struct{}\n"  # 5
        "\n"
        "func main() {\n"
        '\tflag.String("addr", "localhost", "where")\n'  # 8
        '\t_ = os.Getenv("GO_LEVEL")\n'  # 9
        "}\n"
    ),
    "config/defaults.yaml": "level: info\n",
    ".env.example": "APP_TOKEN=\n",
    "tox.ini": "[tox]\n",  # the test runner's file, not the project's settings
    "tests/test_cli.py": 'import os\nos.environ["ONLY_IN_TESTS"] = "1"\n',
}


def _run(root: Path, **kwargs):
    ctx = Context(root=root)
    found, out = run_track(ctx, config_track(ctx, **kwargs))
    return ctx, found, out.get("config")


def test_settings_files_environment_flags_and_config_types_are_found(tmp_path):
    root = make_tree(tmp_path / "repo", TREE)
    _, found, report = _run(root)
    assert isinstance(report, ConfigReport)
    assert sorted(report.files) == [".env.example", "app/settings.py", "config/defaults.yaml"]
    env = {s.name: (s.path, s.line, s.sites) for s in report.env}
    assert env == {
        "APP_TOKEN": ("app/cli.py", 7, 2),  # read in two files: the first site, two sites
        "APP_PORT": ("app/cli.py", 5, 1),  # click's envvar=
        "HOME": ("app/cli.py", 8, 1),
        "GO_LEVEL": ("cmd/main.go", 9, 1),
    }
    assert {(s.name, s.path, s.line) for s in report.flags} == {
        ("port", "app/cli.py", 5),
        ("workers", "app/options.py", 10),
        ("addr", "cmd/main.go", 8),
    }
    assert {(s.name, s.line) for s in report.classes} == {
        ("ServerConfig", 4),
        ("ClientOptions", 5),
    }
    assert [g.passed for g in found.gates] == [True, True, True]
    # Every claim cites the line that names its setting, and verifies against the file.
    for f in found.findings:
        c = f.citations[0]
        assert verify_citation(root, c) is None
        name = f.claim.split("`")[1].lstrip("-") if "`" in f.claim else c.path
        assert name in (root / c.path).read_text().split("\n")[c.start_line - 1] or (
            f.claim == f"{c.path} is a settings file"
        )
    claims = " ".join(f.claim for f in found.findings)
    assert "ONLY_IN_TESTS" not in claims and "tox.ini" not in claims


def test_a_question_keeps_the_settings_it_names_or_that_sit_in_its_files(tmp_path):
    root = make_tree(tmp_path / "repo", TREE)
    _, found, report = _run(root, relevant=lambda: ({"token"}, ["cmd/main.go"]))
    assert [s.name for s in report.env] == ["APP_TOKEN", "GO_LEVEL"]
    assert [s.name for s in report.flags] == ["addr"]  # in a file that answers it
    assert [s.name for s in report.classes] == ["ClientOptions"]
    assert report.files == []
    # Nothing shares the question's words: nothing to report, and a gap that says so.
    _, found, report = _run(root, relevant=lambda: ({"unrelated"}, []))
    assert report == ConfigReport() and found.findings == []
    assert any("none of the 12 settings found shares a word" in g for g in found.gaps)


def test_a_tree_without_settings_fails_its_first_gate_with_the_reason(tmp_path):
    root = make_tree(tmp_path / "repo", {"lib.py": "def f():\n    return 1\n"})
    _, found, report = _run(root)
    assert report == ConfigReport() and found.findings == []
    assert found.gates[0].passed is False
    assert (
        found.gates[0].detail == "no settings files, environment reads, flags or config types in ."
    )


def test_explore_leaves_out_a_configuration_track_that_found_nothing(tmp_path):
    from dowse.explore.run import explore

    bare = explore(make_tree(tmp_path / "bare", {"lib.py": "def f():\n    return 1\n"}))
    assert "configuration" not in [t.track.name for t in bare.tracks]
    assert bare.config == ConfigReport()
    full = explore(make_tree(tmp_path / "full", TREE))
    assert "configuration" in [t.track.name for t in full.tracks]
    assert full.config is not None and [s.name for s in full.config.flags]


OWN_SYSTEMS = {
    # grpc-go's envconfig: a reader of its own, passing its parameter to os.Getenv.
    "internal/envconfig/envconfig.go": (
        "package envconfig\n"  # 1
        "\n"
        'import "os"\n'
        "\n"
        "var (\n"  # 5
        '\tRetry = boolFromEnv("APP_RETRY", true)\n'  # 6
        '\tlevel = lower("not-a-variable")\n'  # lower reads no environment
        ")\n"
        "\n"
        "func boolFromEnv(envVar string, def bool) bool {\n"  # 10
        '\treturn os.Getenv(envVar) == "true" || def\n'
        "}\n"
        "\n"
        "func lower(s string) string { return s }\n"
    ),
    # another module calling the Python reader below
    "app/main.py": 'from app import env\n\nPORT = env.env_flag("APP_PORT")\n',
    # ripgrep's flags: a trait method returns each flag's long name; no clap.
    "crates/core/flags/defs.rs": (
        "trait Flag {\n"  # 1
        "    fn name_long(&self) -> &'static str;\n"  # the trait's declaration: no flag
        "}\n"
        "\n"
        "impl Flag for AfterContext {\n"  # 5
        "    fn name_long(&self) -> &'static str {\n"
        '        "after-context"\n'  # 7
        "    }\n"
        "}\n"
    ),
    # a Python reader: a helper taking the variable's name.
    "app/env.py": (
        "import os\n"  # 1
        "\n"
        "\n"
        "def env_flag(name, default=False):\n"  # 4
        "    return os.environ.get(name, default)\n"
        "\n"
        "\n"
        'DEBUG = env_flag("APP_DEBUG")\n'  # 8
        'LABEL = env_flag("lower-case is not a variable")\n'
    ),
}


def test_a_projects_own_env_readers_and_flag_system_are_found(tmp_path):
    root = make_tree(tmp_path / "repo", OWN_SYSTEMS)
    _, found, report = _run(root)
    assert isinstance(report, ConfigReport)
    assert {(s.name, s.path, s.line) for s in report.env} == {
        ("APP_RETRY", "internal/envconfig/envconfig.go", 6),
        ("APP_DEBUG", "app/env.py", 8),
        ("APP_PORT", "app/main.py", 3),
    }
    assert {(s.name, s.path, s.line) for s in report.flags} == {
        ("after-context", "crates/core/flags/defs.rs", 7)
    }
    assert all(verify_citation(root, f.citations[0]) is None for f in found.findings)


NAMED = {
    "conf/global_settings.py": (
        "# Number formatting\n"  # 1
        "DECIMAL_SEPARATOR = '.'\n"
        "NUMBER_GROUPING = 0\n"  # 3
    ),
    "conf/locale/es_CO/formats.py": "DECIMAL_SEPARATOR = ','\nNUMBER_GROUPING = 3\n",
    "utils/numberformat.py": (
        "from conf import settings\n"  # 1
        "\n"
        "\n"
        "def format(number):\n"  # 4
        "    return settings.NUMBER_GROUPING\n"
    ),
    "commands/makemessages.py": (
        "def add_arguments(parser):\n"  # 1
        '    parser.add_argument("--locale", "-l")\n'  # 2: shares "locale", answers nothing
        '    return os.environ.get("LOCALE_DIR")\n'  # 3
    ),
    "plugin/tmpdir.py": (
        "def get(config):\n"  # 1
        '    return int(config.getini("tmp_path_retention_count"))\n'  # 2: a read
        "\n"
        "\n"
        "def pytest_addoption(parser):\n"  # 5
        "    parser.addini(\n"
        '        "tmp_path_retention_count",\n'  # 7: the registration
        '        help="How many sessions to keep",\n'
        "        default=3,\n"
        "    )\n"
    ),
    "tests/test_numberformat.py": "NUMBER_GROUPING = 5\n",  # a test's, not the project's
    "runtime/pool.py": (
        "import os\n"  # 1
        'ENV_WORKERS = "APP_WORKER_THREADS"\n'  # 2: tokio keeps its variable's name so
        "\n"
        "\n"
        "def workers():\n"
        "    return os.environ.get(ENV_WORKERS)\n"
        "\n"
        "\n"
        "def read(path):\n"  # 9
        '    return open(path).read("read")\n'
    ),
}


def test_a_question_that_names_a_setting_gets_it_not_the_flags_sharing_its_words(
    tmp_path, fake_embedder
):
    from dowse.indexer.build import IndexConfig, build_index

    root = make_tree(tmp_path / "repo", NAMED)
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    # "what is the default NUMBER_GROUPING and how do the locale formats set it?"
    ctx = Context(root=root, index_dir=root / ".dowse")
    track = config_track(
        ctx,
        relevant=lambda: ({"default", "number_grouping", "locale", "formats"}, []),
        named=["NUMBER_GROUPING"],
    )
    found, out = run_track(ctx, track)
    report = out["config"]
    # The constant the question names, the settings module's definition first (django's
    # global_settings.py, then the locales' formats.py); the `--locale` flag and the
    # LOCALE_DIR variable only share a word with it.
    assert [(s.name, s.path, s.line, s.sites) for s in report.named] == [
        ("NUMBER_GROUPING", "conf/global_settings.py", 3, 2)
    ]
    assert report.flags == [] and report.env == []
    assert [(f.claim, f.citations[0].ref) for f in found.findings] == [
        (
            "`NUMBER_GROUPING` is set at conf/global_settings.py:3 (2 definitions)",
            "conf/global_settings.py:3",
        )
    ]
    assert all(g.passed for g in found.gates)
    # An option registered by the name the question writes: the registering call before
    # the reads, cited at the line that names it.
    track = config_track(
        ctx,
        relevant=lambda: ({"default", "retention", "count"}, []),
        named=["tmp_path_retention_count"],
    )
    found, out = run_track(ctx, track)
    assert [(f.claim, f.citations[0].ref) for f in found.findings] == [
        (
            "the option `tmp_path_retention_count` is registered at plugin/tmpdir.py:7",
            "plugin/tmpdir.py:7",
        )
    ]
    # The name kept in a constant, read through it: the line that writes the name.
    track = config_track(
        ctx, relevant=lambda: ({"worker", "threads"}, []), named=["APP_WORKER_THREADS"]
    )
    found, _ = run_track(ctx, track)
    assert [(f.claim, f.citations[0].ref) for f in found.findings] == [
        ("the setting `APP_WORKER_THREADS` is named at runtime/pool.py:2", "runtime/pool.py:2")
    ]
    # A method the question names is no setting, even where a string spells it.
    track = config_track(ctx, relevant=lambda: ({"config", "read"}, []), named=["Config.read"])
    found, out = run_track(ctx, track)
    assert out["config"].named == []


def test_c_flags_compared_by_hand_or_in_getopt_tables_cited_in_the_main_parser(tmp_path):
    """C has no flag library: zstd compares each argument (`strcmp(argument, "--list")`,
    `longCommandWArg(&argument, "--memory=")`), others fill getopt_long's table. A flag
    several files define is cited in the file that defines most flags: the project's own
    parser, not a contribution's."""
    root = make_tree(
        tmp_path / "repo",
        {
            "programs/cli.c": (
                "#include <string.h>\n\n"
                "int main(int argc, const char **argv) {\n"
                "    const char *argument = argv[1];\n"
                '    if (!strcmp(argument, "--list")) return 1;\n'  # 5
                '    if (longCommandWArg(&argument, "--memory=")) return 2;\n'  # 6
                '    if (!strcmp(argument, "--verbose")) return 3;\n'  # 7
                '    printf("--list shows the frames\\n");\n'  # help text: no flag
                "    return 0;\n}\n"
            ),
            "contrib/tool/opts.c": (
                "#include <getopt.h>\n\nstatic struct option long_options[] = {\n"
                "    {\"verbose\", no_argument, 0, 'v'},\n"  # 4
                "    {\"threads\", required_argument, 0, 'T'},\n"  # 5
                "};\n"
            ),
        },
    )
    _, found, report = _run(root)
    assert report is not None
    assert {(s.name, s.path, s.line, s.sites) for s in report.flags} == {
        ("list", "programs/cli.c", 5, 1),
        ("memory", "programs/cli.c", 6, 1),
        ("verbose", "programs/cli.c", 7, 2),  # both files: the main parser's line first
        ("threads", "contrib/tool/opts.c", 5, 1),
    }
    for f in found.findings:
        assert verify_citation(root, f.citations[0]) is None
