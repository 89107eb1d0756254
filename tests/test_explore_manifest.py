"""dowse.explore.manifest: dependencies, scripts and entry points, each at its declaring line."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_tree

from dowse.explore.manifest import manifest_track
from dowse.explore.records import Dependency, ManifestReport, TrackFindings
from dowse.explore.tracks import Context, run_track

EXAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "example"

Dep = tuple[str, str, str, int | None]  # name, spec, group, line


def explore(root: Path, scope: str = "") -> tuple[TrackFindings, ManifestReport | None]:
    ctx = Context(root=root, scope=scope)
    result, output = run_track(ctx, manifest_track(ctx))
    return result, output.get("dependencies")


def deps(report: ManifestReport) -> list[Dep]:
    return [(d.name, d.spec, d.group, d.line) for d in report.dependencies]


def assert_clean(result: TrackFindings) -> None:
    assert [g.passed for g in result.gates] == [True, True, True], result.gates
    assert result.dropped == []


PYPROJECT = """\
[build-system]
requires = ["hatchling"]

[project]
name = "demo"
version = "1.2.0"
requires-python = ">=3.10"
dependencies = [
    "httpx>=0.27",
    'rich',  # comment
    "tomli>=1; python_version < '3.11'",
]

[project.optional-dependencies]
cli = ["click>=8"]
"all-extras" = ["click>=8", "pyyaml"]

[project.scripts]
demo = "demo.cli:main"

[project.entry-points."pytest11"]
demo = "demo.plugin"

[dependency-groups]
dev = ["pytest>=8", "ruff"]
docs = ["mkdocs"]
"""
POETRY = """\
[tool.poetry]
name = "poem"
version = "0.1.0"

[tool.poetry.dependencies]
python = "^3.11"
requests = "^2.31"
local = { path = "../local", develop = true }

[tool.poetry.group.test.dependencies]
pytest = "^8.0"

[tool.poetry.dev-dependencies]
black = "*"

[tool.poetry.scripts]
poem = "poem.main:run"
"""
SETUP_CFG = """\
[metadata]
name = cfgpkg

[options]
python_requires = >=3.9
install_requires =
    attrs>=22
    # a comment
    packaging

[options.extras_require]
Fast = ujson

[options.entry_points]
console_scripts =
    cfgtool = cfgpkg.cli:main
"""
SETUP_PY = """\
from setuptools import setup

setup(
    name="oldpkg",
    install_requires=[
        "six",
        "requests>=2",
    ],
    extras_require={
        "yaml": ["pyyaml"],
    },
    entry_points={"console_scripts": ["oldtool = oldpkg.main:main"]},
)
"""
REQUIREMENTS = """\
# runtime
-r requirements/base.txt
flask==3.0  # web
-e ./libs/shared
gunicorn[gevent]>=21 ; sys_platform != "win32"
--index-url https://example.org/simple
"""
PACKAGE_JSON = """\
{
  "name": "webapp",
  "version": "2.0.0",
  "main": "dist/index.js",
  "bin": {"webapp": "bin/cli.js"},
  "scripts": {
    "build": "tsc -p .",
    "test": "vitest"
  },
  "dependencies": {
    "react": "^18.2.0"
  },
  "devDependencies": {
    "typescript": "~5.4.0",
    "react": "^18.2.0"
  },
  "peerDependencies": {"react-dom": ">=18"},
  "optionalDependencies": {"fsevents": "2.3.3"}
}
"""
TSCONFIG = """\
{
  // comments are allowed here
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "strict": true, /* block */
    "outDir": "dist",
  },
  "include": ["src"],
}
"""
DENO = """\
{
  "imports": {
    "@std/assert": "jsr:@std/assert@^1.0.0"
  },
  "tasks": {
    "dev": "deno run --watch main.ts"
  }
}
"""
GO_MOD = """\
module example.com/svc

go 1.22

require github.com/spf13/cobra v1.8.0

require (
    golang.org/x/sync v0.7.0
    github.com/pkg/errors v0.9.1 // indirect
)
"""
CARGO = """\
[package]
name = "rtool"
version = "0.1.0"

[dependencies]
serde = { version = "1.0", features = ["derive"] }
anyhow = "1"

[dependencies.tokio]
version = "1.37"

[dev-dependencies]
tempfile = "3"

[build-dependencies]
cc = "1.0"

[[bin]]
name = "rtool-cli"
path = "src/cli.rs"
"""
POM = """\
<?xml version="1.0"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <groupId>org.demo</groupId>
  <artifactId>app</artifactId>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>com.google.guava</groupId>
        <artifactId>guava</artifactId>
        <version>32.0</version>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>com.google.guava</groupId>
      <artifactId>guava</artifactId>
    </dependency>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
</project>
"""
GRADLE = """\
plugins {
    application
}

dependencies {
    implementation("com.squareup.okhttp3:okhttp:4.12.0")
    implementation(project(":core"))
    testImplementation("org.junit.jupiter:junit-jupiter:5.10.0")
    compileOnly(libs.lombok)
}

application {
    mainClass.set("org.demo.MainKt")
}
"""
GEMFILE = """\
source "https://rubygems.org"

ruby "3.2.2"

gem "rails", "~> 7.1", ">= 7.1.3"
gem "pg"

group :development, :test do
  gem "rspec-rails"
end

gem "rubocop", require: false, group: :lint
"""
COMPOSER = """\
{
    "name": "demo/app",
    "require": {
        "php": ">=8.1",
        "monolog/monolog": "^3.0"
    },
    "require-dev": {
        "phpunit/phpunit": "^10"
    },
    "scripts": {
        "test": "phpunit",
        "lint": ["phpcs", "phpstan"]
    },
    "bin": ["bin/demo"]
}
"""

# files, dependencies, scripts, entry points, conclusions after the summary line
FORMATS: dict[str, tuple[dict[str, str], list[Dep], dict[str, str], dict[str, str], list[str]]] = {
    "pyproject": (
        {"pyproject.toml": PYPROJECT},
        [
            ("httpx", ">=0.27", "runtime", 9),
            ("rich", "", "runtime", 10),
            ("tomli", ">=1; python_version < '3.11'", "runtime", 11),
            ("click", ">=8", "optional:cli", 15),
            ("click", ">=8", "optional:all-extras", 16),
            ("pyyaml", "", "optional:all-extras", 16),
            ("pytest", ">=8", "dev", 25),
            ("ruff", "", "dev", 25),
            ("mkdocs", "", "group:docs", 26),
            ("hatchling", "", "build", 2),
        ],
        {},
        {"demo": "demo.cli:main", "demo (pytest11)": "demo.plugin"},
        ["pyproject.toml: requires Python >=3.10"],
    ),
    "poetry": (
        {"pyproject.toml": POETRY},
        [
            ("requests", "^2.31", "runtime", 7),
            ("local", "path ../local", "runtime", 8),
            ("black", "*", "dev", 14),
            ("pytest", "^8.0", "group:test", 11),
        ],
        {},
        {"poem": "poem.main:run"},
        ["pyproject.toml: requires Python ^3.11"],
    ),
    "setup.cfg": (
        {"setup.cfg": SETUP_CFG},
        [
            ("attrs", ">=22", "runtime", 7),
            ("packaging", "", "runtime", 9),
            ("ujson", "", "optional:Fast", 12),
        ],
        {},
        {"cfgtool": "cfgpkg.cli:main"},
        ["setup.cfg: requires Python >=3.9"],
    ),
    "setup.py": (
        {"setup.py": SETUP_PY},
        [
            ("six", "", "runtime", 6),
            ("requests", ">=2", "runtime", 7),
            ("pyyaml", "", "optional:yaml", 10),
        ],
        {},
        {"oldtool": "oldpkg.main:main"},
        [],
    ),
    "requirements": (
        {
            "requirements.txt": REQUIREMENTS,
            "requirements/base.txt": "sqlalchemy>=2\n",
            "requirements-dev.txt": "pytest\n",
            "tests/requirements.txt": "hypothesis\n",
        },
        [
            ("pytest", "", "dev", 1),
            ("flask", "==3.0", "runtime", 3),
            ("shared", "-e ./libs/shared", "runtime", 4),
            ("gunicorn", '[gevent]>=21 ; sys_platform != "win32"', "runtime", 5),
            ("sqlalchemy", ">=2", "runtime", 1),
            ("hypothesis", "", "test", 1),
        ],
        {},
        {},
        ["requirements.txt: includes requirements/base.txt (line 2)"],
    ),
    "package.json": (
        {"package.json": PACKAGE_JSON},
        [
            ("react", "^18.2.0", "runtime", 11),
            ("typescript", "~5.4.0", "dev", 14),
            ("react", "^18.2.0", "dev", 15),
            ("react-dom", ">=18", "peer", 17),
            ("fsevents", "2.3.3", "optional", 18),
        ],
        {"build": "tsc -p .", "test": "vitest"},
        {"webapp": "bin/cli.js", "main": "dist/index.js"},
        [],
    ),
    "tsconfig": (
        {"tsconfig.json": TSCONFIG},
        [],
        {},
        {},
        [
            'tsconfig.json: compilerOptions target="ES2022", module="NodeNext", strict=true, '
            'outDir="dist"'
        ],
    ),
    "deno": (
        {"deno.json": DENO},
        [
            ("@std/assert", "jsr:@std/assert@^1.0.0", "runtime", 3),
        ],
        {"dev": "deno run --watch main.ts"},
        {},
        [],
    ),
    "go.mod": (
        {"go.mod": GO_MOD},
        [
            ("github.com/spf13/cobra", "v1.8.0", "runtime", 5),
            ("golang.org/x/sync", "v0.7.0", "runtime", 8),
            ("github.com/pkg/errors", "v0.9.1", "indirect", 9),
        ],
        {},
        {},
        ["go.mod: go 1.22"],
    ),
    "cargo": (
        {"Cargo.toml": CARGO, "src/cli.rs": "fn main() {}\n"},
        [
            ("serde", "1.0", "runtime", 6),
            ("anyhow", "1", "runtime", 7),
            ("tokio", "1.37", "runtime", 9),
            ("tempfile", "3", "dev", 13),
            ("cc", "1.0", "build", 16),
        ],
        {},
        {"rtool-cli": "src/cli.rs"},
        [],
    ),
    "pom.xml": (
        {"pom.xml": POM},
        [
            ("com.google.guava:guava", "", "runtime", 17),  # not the dependencyManagement entry
            ("junit:junit", "4.13.2", "test", 21),
        ],
        {},
        {},
        [],
    ),
    "gradle": (
        {"build.gradle.kts": GRADLE},
        [
            ("com.squareup.okhttp3:okhttp", "4.12.0", "runtime", 6),
            (":core", "project", "runtime", 7),
            ("org.junit.jupiter:junit-jupiter", "5.10.0", "test", 8),
            ("libs.lombok", "version catalog", "provided", 9),
        ],
        {},
        {"application": "org.demo.MainKt"},
        [],
    ),
    "gemfile": (
        {"Gemfile": GEMFILE},
        [
            ("rails", "~> 7.1, >= 7.1.3", "runtime", 5),
            ("pg", "", "runtime", 6),
            ("rspec-rails", "", "dev,test", 9),
            ("rubocop", "", "lint", 12),
        ],
        {},
        {},
        ["Gemfile: requires Ruby 3.2.2"],
    ),
    "composer": (
        {"composer.json": COMPOSER},
        [
            ("monolog/monolog", "^3.0", "runtime", 5),
            ("phpunit/phpunit", "^10", "dev", 8),
        ],
        {"test": "phpunit", "lint": "phpcs && phpstan"},
        {"demo": "bin/demo"},
        ["composer.json: requires PHP >=8.1"],
    ),
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_manifest_formats(tmp_path: Path, fmt: str) -> None:
    files, want_deps, scripts, entries, notes = FORMATS[fmt]
    result, report = explore(make_tree(tmp_path, files))
    assert_clean(result)
    assert report is not None
    assert deps(report) == want_deps
    assert report.scripts == scripts
    assert report.entry_points == entries
    assert result.conclusions[1:] == notes
    assert result.gaps == []
    # every dependency, script and entry point here is claimed, citing its own line
    claimed = {(f.citations[0].path, f.citations[0].start_line) for f in result.findings}
    assert {(d.manifest, d.line) for d in report.dependencies} <= claimed


def test_example_repository() -> None:
    result, report = explore(EXAMPLE)
    assert_clean(result)
    assert report == ManifestReport(
        manifests=["pyproject.toml"],
        dependencies=[
            Dependency(
                name="itsdangerous",
                spec=">=2.1",
                manifest="pyproject.toml",
                line=4,
                group="runtime",
            )
        ],
        names=["shop"],
        entry_points={"shop": "shop.api.routes:main"},
    )
    assert [(f.claim, f.citations[0].ref, f.citations[0].quote) for f in result.findings] == [
        (
            "pyproject.toml declares the Python project shop 0.3.0",
            "pyproject.toml:2",
            'name = "shop"',
        ),
        (
            "pyproject.toml declares the runtime dependency itsdangerous >=2.1",
            "pyproject.toml:4",
            'dependencies = ["itsdangerous>=2.1"]',
        ),
        (
            "pyproject.toml declares the entry point shop: shop.api.routes:main",
            "pyproject.toml:7",
            'shop = "shop.api.routes:main"',
        ),
    ]
    assert result.conclusions == [
        "1 manifests: 1 dependencies (runtime 1), 0 scripts, 1 entry points"
    ]


def test_malformed_manifest_is_a_gap(tmp_path: Path) -> None:
    root = make_tree(
        tmp_path,
        {
            "pyproject.toml": '[project\nname = "x"\n',
            "web/package.json": '{"name": "web",}\n',
            "go.mod": "module example.com/ok\n",
        },
    )
    result, report = explore(root)
    assert_clean(result)  # the good manifest still answers
    assert report is not None
    assert report.manifests == ["go.mod", "pyproject.toml", "web/package.json"]
    assert [g.split(":", 2)[:2] for g in result.gaps] == [
        ["pyproject.toml", " could not parse"],
        ["web/package.json", " could not parse"],
    ]
    assert result.gates[2].detail == "1 of 3 manifests parsed"


def test_a_tests_manifest_is_not_the_projects_and_its_malformed_fixture_no_gap(
    tmp_path: Path,
) -> None:
    """bat's tests/syntax-tests/ hold a go.mod and a deliberately broken Cargo.toml to
    highlight: a test's manifests come after the project's, declare nothing for it, and one
    that does not parse is a conclusion, not an open question about the project."""
    root = make_tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "tool"\n\n[dependencies]\nserde = "1"\n',
            "tests/syntax/Go/go.mod": "module example.com/x\n\nrequire golang.org/x/net v0.1.0\n",
            "tests/syntax/TOML/Cargo.toml": "= not toml\n",
            "tests/syntax/Python/requirements.txt": "flask==3.0\n",  # a file to highlight
            "tests/requirements.txt": "hypothesis\n",  # the tests' own needs: the project's
            "benches/Cargo.toml": '[package]\nname = "benches"\n',  # a benchmark's crate
        },
    )
    result, report = explore(root)
    assert_clean(result)
    assert report is not None
    assert report.manifests == [
        "Cargo.toml",
        "tests/requirements.txt",
        "benches/Cargo.toml",
        "tests/syntax/Go/go.mod",
        "tests/syntax/Python/requirements.txt",
        "tests/syntax/TOML/Cargo.toml",
    ]
    assert report.examples == [
        "benches/Cargo.toml",
        "tests/syntax/Go/go.mod",
        "tests/syntax/Python/requirements.txt",
        "tests/syntax/TOML/Cargo.toml",
    ]
    assert report.names == ["tool"]
    assert result.gaps == []
    assert any(
        c.startswith("tests/syntax/TOML/Cargo.toml: could not parse: ") for c in result.conclusions
    )
    # Explored on its own, the fixture is the project and its manifest's failure a gap.
    result, report = explore(root, "tests/syntax/TOML")
    assert report is not None and report.examples == []
    assert result.gaps[0].startswith("tests/syntax/TOML/Cargo.toml: could not parse: ")


def test_only_malformed_manifests_fail_the_gates_without_raising(tmp_path: Path) -> None:
    result, report = explore(make_tree(tmp_path, {"Cargo.toml": "[package\n"}))
    assert report is not None and report.dependencies == []
    assert [(g.name, g.passed) for g in result.gates] == [
        ("understood", True),
        ("evidence", False),
        ("complete", False),
    ]
    assert result.gaps[0].startswith("Cargo.toml: could not parse: ")


def test_scope_without_manifest_uses_the_nearest_above(tmp_path: Path) -> None:
    root = make_tree(
        tmp_path,
        {
            "Cargo.toml": CARGO,
            "src/cli.rs": "fn main() {}\n",
            "crates/a/Cargo.toml": '[package]\nname = "a"\n',
            "crates/a/src/lib.rs": "pub fn a() {}\n",
        },
    )
    result, report = explore(root, "src/cli.rs")  # a single-file scope
    assert_clean(result)
    assert report is not None and report.manifests == ["Cargo.toml"]
    assert result.conclusions[1] == "no manifest in src/cli.rs; using the nearest above: Cargo.toml"
    result, report = explore(root, "crates/a/src")
    assert report is not None and report.manifests == ["crates/a/Cargo.toml"]
    result, report = explore(root, "crates/a/Cargo.toml")  # the manifest itself
    assert report is not None and report.manifests == ["crates/a/Cargo.toml"]


def test_cargo_binary_from_src_main(tmp_path: Path) -> None:
    root = make_tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "app"\n',
            "src/main.rs": "use std::env;\n\nfn main() {}\n",
        },
    )
    result, report = explore(root)
    assert_clean(result)
    assert report is not None and report.entry_points == {"app": "src/main.rs"}
    assert [f.citations[0].ref for f in result.findings] == ["Cargo.toml:2", "src/main.rs:3"]


def test_a_maven_project_makes_its_artifact_unless_it_only_aggregates(tmp_path: Path) -> None:
    _, report = explore(make_tree(tmp_path / "jar", {"pom.xml": POM}))
    assert report is not None and report.names == ["app"]
    aggregator = POM.replace(
        "<artifactId>app</artifactId>",
        "<artifactId>parent</artifactId>\n  <packaging>pom</packaging>",
    )
    _, report = explore(make_tree(tmp_path / "pom", {"pom.xml": aggregator}))
    assert report is not None and report.names == []


def test_repeated_names_keep_both(tmp_path: Path) -> None:
    root = make_tree(
        tmp_path,
        {
            "package.json": '{"scripts": {"test": "jest"}}\n',
            "web/package.json": '{"scripts": {"test": "vitest"}}\n',
        },
    )
    result, report = explore(root)
    assert_clean(result)
    assert report is not None
    assert report.scripts == {"test": "jest", "test (web/package.json)": "vitest"}


def test_setup_py_computed_requirements_are_a_gap(tmp_path: Path) -> None:
    root = make_tree(
        tmp_path,
        {
            "setup.py": 'from setuptools import setup\n\nREQS = ["a"]\n'
            'setup(name="x", install_requires=REQS)\n'
        },
    )
    result, report = explore(root)
    assert report is not None and report.dependencies == []
    assert result.gaps == ["setup.py: install_requires is computed, not a literal: not evaluated"]


def test_no_manifest_anywhere(tmp_path: Path) -> None:
    result, report = explore(make_tree(tmp_path, {"src/a.py": "x = 1\n"}), "src")
    assert report is None
    assert [(g.name, g.passed) for g in result.gates][0] == ("understood", False)
    assert result.gaps == ["no dependency manifest in src or above it"]


def test_spec(tmp_path: Path) -> None:
    ctx = Context(root=make_tree(tmp_path, {"go.mod": "module m\n"}))
    track = manifest_track(ctx)
    assert track.spec.name == "manifest" and track.spec.focus == "."
    assert len(track.spec.gates) == 3
    assert track.make is manifest_track
    assert track.split is None  # a sub-scope would only repeat the manifests above it


def test_gemfile_blocks_and_conditionals(tmp_path: Path) -> None:
    gemfile = """\
source "https://rubygems.org"
gemspec

if ENV["RACK"]
  gem "rack", ENV["RACK"]
end

group :test do
  platforms :mri do
    gem "stackprof"
  end
  gem "brakeman"
end

platforms :jruby do
  if ENV["JDBC"]
    group :db do
      gem "jdbc-mysql"
    end
  else
    gem "jdbc-sqlite", ">= 1.3"
  end
  gem "after-if"
end
gem "tzinfo-data", platforms: [:windows], group: "tz"
"""
    result, report = explore(make_tree(tmp_path, {"Gemfile": gemfile}))
    assert_clean(result)
    assert report is not None
    assert deps(report) == [
        ("rack", "", "runtime", 5),
        ("stackprof", "", "test", 10),
        ("brakeman", "", "test", 12),
        ("jdbc-mysql", "", "db", 18),
        ("jdbc-sqlite", ">= 1.3", "runtime", 21),
        ("after-if", "", "runtime", 23),
        ("tzinfo-data", "", "tz", 25),
    ]
    assert result.conclusions[1:] == ["Gemfile: takes dependencies from the gemspec (line 2)"]


def test_cargo_tables_are_searched_within_their_bounds(tmp_path: Path) -> None:
    cargo = """\
[package]
name = "web"

[dependencies.tokio]
version = "1"

[dependencies]
base64 = { optional = true, version = "0.13" }

[dev-dependencies]
tokio = { version = "1.6", features = ["macros"] }

[target.'cfg(unix)'.dependencies]
nix = "0.27"
"""
    result, report = explore(make_tree(tmp_path, {"Cargo.toml": cargo}))
    assert_clean(result)
    assert report is not None
    assert deps(report) == [
        ("tokio", "1", "runtime", 4),
        ("base64", "0.13", "optional", 8),
        ("tokio", "1.6", "dev", 11),
        ("nix", "0.27", "runtime", 14),
    ]


def test_manifest_without_declarations_is_still_cited(tmp_path: Path) -> None:
    result, report = explore(
        make_tree(tmp_path, {"setup.cfg": "\n[flake8]\nmax-line-length = 100\n"})
    )
    assert_clean(result)
    assert report is not None and report.dependencies == []
    assert [(f.claim, f.citations[0].ref) for f in result.findings] == [
        ("setup.cfg declares no dependencies, scripts or entry points", "setup.cfg:2")
    ]
