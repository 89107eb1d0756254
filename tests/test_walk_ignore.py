"""dowse.indexer.walk's ignore rules: .gitignore, .dowseignore, configured and default excludes.

The .gitignore tests compare the walk with git itself (`git ls-files --others
--exclude-standard`) on hand-built and on seeded random trees: git is the specification.
How the walk handles the files these rules let through is in test_walk.py.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import files, make, reasons

from dowse.indexer.walk import WalkConfig, walk

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(root: Path, *args: str, stdin: str | None = None, ok: tuple[int, ...] = (0,)) -> str:
    # A private HOME: the user's global excludes file must not take part.
    env = {
        **os.environ,
        "HOME": str(root.parent),
        "XDG_CONFIG_HOME": str(root.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    proc = subprocess.run(
        ["git", *args], cwd=root, env=env, input=stdin, capture_output=True, text=True
    )
    assert proc.returncode in ok, proc.stderr
    return proc.stdout


def git_init(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", ".")


def git_files(root: Path) -> list[str]:
    out = git(root, "ls-files", "--others", "--exclude-standard", "-z")
    return sorted(p for p in out.split("\0") if p)


def git_ignored(root: Path, paths: list[str]) -> set[str]:
    out = git(
        root, "check-ignore", "--stdin", "-z", stdin="\0".join(paths) + "\0", ok=(0, 1)
    )  # 1: none of them is ignored
    return {p for p in out.split("\0") if p}


# --- .gitignore parity with git ---------------------------------------------------------

TRICKY_TREE = [
    "README.md",
    "main.py",
    "debug.log",
    "important.log",
    "notes.tmp",
    "docs/guide.md",
    "docs/build.txt",
    "docs/sub/deep.txt",
    "docs/sub/deep.md",
    "gen/out.py",
    "gen/keep.py",  # dir ignored: no re-including inside
    "cache/a.txt",
    "cache/keep/b.txt",
    "cache/keep/c.md",
    "src/app.py",
    "src/app.log",
    "src/logs/a.log",
    "src/logs/b.txt",
    "src/keep.tmp",
    "src/nested/x.py",
    "src/nested/x.pyc2",
    "src/nested/tmpdir/f.py",
    "src/anchored.txt",
    "anchored.txt",
    "a/b/c/target.txt",
    "a/target.txt",
    "a/x/y/z/target.txt",
    "only_dir/file.txt",
    "only_dir_file",
    "dir_or_file/inner.txt",
    "sub/dir_or_file",
    "assets/x/1.txt",
    "assets/x/keep.txt",
    "assets/y/2.txt",
    "#hash.txt",
    "!bang.txt",
    "trailing.txt",
    "space name.txt",
    "[brackets].md",
    "whitelist/a.py",
    "whitelist/b.txt",
    "whitelist/deep/c.py",
    "whitelist/deep/d.txt",
]

ROOT_GITIGNORE = """\
# comments and blank lines are not patterns

*.log
!important.log
*.tmp
/gen/
!gen/keep.py
cache/*
!cache/keep/
cache/keep/*.md
/anchored.txt
a/**/target.txt
only_dir/
dir_or_file
docs/*.txt
assets/**
!assets/x/
!assets/x/keep.txt
\\#hash.txt
\\!bang.txt
trailing.txt<SPACES>
[[]brackets].md
whitelist/*
!whitelist/*/
!whitelist/**/*.py
""".replace("<SPACES>", "   ")  # git strips trailing spaces


@needs_git
def test_gitignore_matches_git_on_a_tricky_tree(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    git_init(root)
    make(root, *TRICKY_TREE)
    (root / ".gitignore").write_text(ROOT_GITIGNORE)
    # Nested files: patterns relative to their own directory, the deepest file wins.
    (root / "src" / ".gitignore").write_text("!keep.tmp\n!logs\nnested/*.pyc2\n/tmpdir/\n")
    (root / "src" / "nested" / ".gitignore").write_text("tmpdir/\n")
    (root / ".git" / "info" / "exclude").write_text("space name.txt\n")

    result = walk(root)

    assert files(result) == git_files(root)
    # Every "gitignored" record is ignored for git too, and a directory is reported once.
    gitignored = [s.path for s in result.skipped if s.reason == "gitignored"]
    assert git_ignored(root, gitignored) == set(gitignored)
    assert "gen/" in gitignored and "gen/keep.py" not in gitignored
    # `!logs` in src/ does not match src/logs/a.log: the root's *.log still applies.
    assert "src/logs/a.log" in gitignored


@needs_git
def test_gitignore_above_the_root_applies(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    git_init(root)
    make(root, "pkg/a.py", "pkg/a.gen.py", "pkg/lib/b.py", "pkg/lib/b.gen.py", "pkg/x.local")
    (root / ".gitignore").write_text("*.gen.py\n/pkg/lib/b.py\n")
    (root / ".git" / "info" / "exclude").write_text("*.local\n")

    result = walk(root / "pkg")

    assert files(result) == ["a.py"]
    assert git_files(root / "pkg") == ["a.py"]


def _random_pattern(rng: random.Random) -> str:
    segments = ["a", "b", "*", "**", "?", "[ab]", "[!a]*", "*.txt", "logs", "x", "c.txt"]
    pattern = "/".join(rng.choice(segments) for _ in range(rng.choice([1, 1, 2, 2, 3])))
    if rng.random() < 0.2:
        pattern = "/" + pattern
    if rng.random() < 0.25:
        pattern += "/"
    if rng.random() < 0.3:
        pattern = "!" + pattern
    return pattern


@needs_git
@pytest.mark.parametrize("seed", range(40))
def test_gitignore_matches_git_on_random_trees(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "repo"
    git_init(root)
    names = ["a", "b", "c.txt", "d.log", "logs", "x"]
    dirs = [""]
    for _ in range(rng.randint(3, 9)):
        d = "/".join(filter(None, [rng.choice(dirs), rng.choice(names)]))
        if d not in dirs and not (root / d).is_file():
            (root / d).mkdir(parents=True, exist_ok=True)
            dirs.append(d)
    for _ in range(rng.randint(5, 25)):
        f = root / rng.choice(dirs) / rng.choice(names)
        if not f.exists():
            f.write_text("x")
    for d in rng.sample(dirs, min(len(dirs), 3)):
        lines = [_random_pattern(rng) for _ in range(rng.randint(1, 5))]
        (root / d / ".gitignore").write_text("\n".join(lines) + "\n")

    assert files(walk(root)) == git_files(root)


# --- .dowseignore and configured excludes -----------------------------------------------


def test_dowseignore_excludes_more_at_any_level(tmp_path: Path) -> None:
    make(
        tmp_path,
        "a.py",
        "b.py",
        "notes.md",
        "docs/x.md",
        "docs/y.md",
        "src/gen.py",
        "src/keep.py",
        "vendor/lib.py",
        "old.log",
    )
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / ".dowseignore").write_text("b.py\n*.md\n!docs/y.md\n!old.log\n!vendor/\n")
    (tmp_path / "src" / ".dowseignore").write_text("gen.py\n")

    result = walk(tmp_path)

    assert files(result) == [
        ".dowseignore",
        ".gitignore",
        "a.py",
        "docs/y.md",
        "src/.dowseignore",
        "src/keep.py",
        "vendor/lib.py",  # a '!' in .dowseignore overrides a default exclude
    ]
    got = reasons(result)
    assert got["b.py"] == got["notes.md"] == got["src/gen.py"] == "dowseignored"
    assert got["old.log"] == "gitignored"  # .dowseignore cannot re-include


def test_configured_excludes(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "tests/t.py", "docs/x.md", "docs/keep.md")
    result = walk(tmp_path, WalkConfig(exclude=("tests/", "docs/*", "!docs/keep.md")))
    assert files(result) == ["a.py", "docs/keep.md"]
    assert reasons(result) == {"tests/": "excluded by config", "docs/x.md": "excluded by config"}


# --- defaults ---------------------------------------------------------------------------


def test_default_excludes_without_any_ignore_file(tmp_path: Path) -> None:
    make(
        tmp_path,
        "app.py",
        "node_modules/left-pad/index.js",
        "web/bower_components/x.js",
        ".venv/lib/site.py",
        "myenv/pyvenv.cfg",
        "myenv/lib/mod.py",
        "venv/__init__.py",  # a package named venv, not a virtualenv
        "pkg/__pycache__/m.cpython-311.pyc",
        ".tox/py311/x.py",
        ".mypy_cache/x.json",
        "build/lib/x.py",
        "dist/x.whl",
        "rust/target/debug/x.rs",
        "pkg/build/__init__.py",
        "my_pkg.egg-info/PKG-INFO",
        "go/vendor/mod/x.go",
        "third_party/lib/x.c",
        "tool/cache/CACHEDIR.TAG",
        "tool/cache/blob",
        "package-lock.json",
        "yarn.lock",
        "poetry.lock",
        "Cargo.lock",
        "go.sum",
        "uv.lock",
        "static/app.min.js",
        "static/app.min.css",
        "static/app.js.map",
        "static/app.js",
        ".dowse/manifest.json",
        ".git/HEAD",
    )

    result = walk(tmp_path)

    assert files(result) == ["app.py", "pkg/build/__init__.py", "static/app.js", "venv/__init__.py"]
    assert reasons(result) == {
        ".dowse/": "index directory",
        ".git/": "default exclude: .git",
        ".mypy_cache/": "default exclude: .mypy_cache",
        ".tox/": "default exclude: .tox",
        ".venv/": "default exclude: .venv",
        "Cargo.lock": "lockfile",
        "build/": "default exclude: build",
        "dist/": "default exclude: dist",
        "go.sum": "lockfile",
        "go/vendor/": "default exclude: vendor",
        "my_pkg.egg-info/": "default exclude: *.egg-info",
        "myenv/": "default exclude: virtualenv",
        "node_modules/": "default exclude: node_modules",
        "package-lock.json": "lockfile",
        "pkg/__pycache__/": "default exclude: __pycache__",
        "poetry.lock": "lockfile",
        "rust/target/": "default exclude: target",
        "static/app.js.map": "source map",
        "static/app.min.css": "minified",
        "static/app.min.js": "minified",
        "third_party/": "default exclude: third_party",
        "tool/cache/": "default exclude: cache directory (CACHEDIR.TAG)",
        "uv.lock": "lockfile",
        "web/bower_components/": "default exclude: bower_components",
        "yarn.lock": "lockfile",
    }


def test_index_dir_elsewhere_in_the_root(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "var/idx/data.json", ".dowse/x.py")
    result = walk(tmp_path, index_dir=tmp_path / "var" / "idx")
    assert files(result) == ["a.py"]
    assert reasons(result) == {".dowse/": "default exclude: .dowse", "var/idx/": "index directory"}
