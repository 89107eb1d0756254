"""indexer.walk: which files get indexed, and why the others do not.

The ignore-rule tests compare the walk with git itself (`git ls-files --others
--exclude-standard`) on hand-built and on seeded random trees: git is the specification.
"""

from __future__ import annotations

import base64
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from indexer import walk as walk_module
from indexer.errors import InvalidPath
from indexer.walk import WalkConfig, WalkResult, check_content, walk

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def make(root: Path, *paths: str, content: str = "x\n") -> None:
    for p in paths:
        target = root / p
        if p.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)


def files(result: WalkResult) -> list[str]:
    return [f.path for f in result.files]


def reasons(result: WalkResult) -> dict[str, str]:
    return {s.path: s.reason for s in result.skipped}


def git(root: Path, *args: str, stdin: str | None = None, ok: tuple[int, ...] = (0,)) -> str:
    # A private HOME: the user's global excludes file must not take part.
    env = {**os.environ, "HOME": str(root.parent), "XDG_CONFIG_HOME": str(root.parent),
           "GIT_CONFIG_NOSYSTEM": "1"}
    proc = subprocess.run(["git", *args], cwd=root, env=env, input=stdin,
                          capture_output=True, text=True)
    assert proc.returncode in ok, proc.stderr
    return proc.stdout


def git_init(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", ".")


def git_files(root: Path) -> list[str]:
    out = git(root, "ls-files", "--others", "--exclude-standard", "-z")
    return sorted(p for p in out.split("\0") if p)


def git_ignored(root: Path, paths: list[str]) -> set[str]:
    out = git(root, "check-ignore", "--stdin", "-z", stdin="\0".join(paths) + "\0",
              ok=(0, 1))  # 1: none of them is ignored
    return {p for p in out.split("\0") if p}


# --- .gitignore parity with git ---------------------------------------------------------

TRICKY_TREE = [
    "README.md", "main.py", "debug.log", "important.log", "notes.tmp",
    "docs/guide.md", "docs/build.txt", "docs/sub/deep.txt", "docs/sub/deep.md",
    "gen/out.py", "gen/keep.py",                      # dir ignored: no re-including inside
    "cache/a.txt", "cache/keep/b.txt", "cache/keep/c.md",
    "src/app.py", "src/app.log", "src/logs/a.log", "src/logs/b.txt", "src/keep.tmp",
    "src/nested/x.py", "src/nested/x.pyc2", "src/nested/tmpdir/f.py", "src/anchored.txt",
    "anchored.txt", "a/b/c/target.txt", "a/target.txt", "a/x/y/z/target.txt",
    "only_dir/file.txt", "only_dir_file", "dir_or_file/inner.txt", "sub/dir_or_file",
    "assets/x/1.txt", "assets/x/keep.txt", "assets/y/2.txt",
    "#hash.txt", "!bang.txt", "trailing.txt", "space name.txt", "[brackets].md",
    "whitelist/a.py", "whitelist/b.txt", "whitelist/deep/c.py", "whitelist/deep/d.txt",
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
    make(tmp_path, "a.py", "b.py", "notes.md", "docs/x.md", "docs/y.md", "src/gen.py",
         "src/keep.py", "vendor/lib.py", "old.log")
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / ".dowseignore").write_text("b.py\n*.md\n!docs/y.md\n!old.log\n!vendor/\n")
    (tmp_path / "src" / ".dowseignore").write_text("gen.py\n")

    result = walk(tmp_path)

    assert files(result) == [
        ".dowseignore", ".gitignore", "a.py", "docs/y.md", "src/.dowseignore", "src/keep.py",
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
    make(tmp_path,
         "app.py",
         "node_modules/left-pad/index.js", "web/bower_components/x.js",
         ".venv/lib/site.py", "myenv/pyvenv.cfg", "myenv/lib/mod.py",
         "venv/__init__.py",  # a package named venv, not a virtualenv
         "pkg/__pycache__/m.cpython-311.pyc", ".tox/py311/x.py", ".mypy_cache/x.json",
         "build/lib/x.py", "dist/x.whl", "rust/target/debug/x.rs", "pkg/build/__init__.py",
         "my_pkg.egg-info/PKG-INFO", "go/vendor/mod/x.go", "third_party/lib/x.c",
         "tool/cache/CACHEDIR.TAG", "tool/cache/blob",
         "package-lock.json", "yarn.lock", "poetry.lock", "Cargo.lock", "go.sum", "uv.lock",
         "static/app.min.js", "static/app.min.css", "static/app.js.map", "static/app.js",
         ".dowse/manifest.json", ".git/HEAD")

    result = walk(tmp_path)

    assert files(result) == ["app.py", "pkg/build/__init__.py", "static/app.js",
                             "venv/__init__.py"]
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
    assert reasons(result) == {".dowse/": "default exclude: .dowse",
                               "var/idx/": "index directory"}


def test_size_limit(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(b"x" * 2_300_000)
    (tmp_path / "ok.txt").write_bytes(b"x" * 1_000_000)
    (tmp_path / "small.txt").write_bytes(b"x" * 150)
    assert reasons(walk(tmp_path)) == {"big.txt": "too large (2.3 MB > 1.0 MB)"}
    assert reasons(walk(tmp_path, WalkConfig(max_file_bytes=100))) == {
        "big.txt": "too large (2.3 MB > 100 B)",
        "ok.txt": "too large (1.0 MB > 100 B)",
        "small.txt": "too large (150 B > 100 B)",
    }


def test_entries_carry_path_size_and_mtime(tmp_path: Path) -> None:
    make(tmp_path, "b/c.py", "a.py")
    (tmp_path / "a.py").write_bytes(b"hello")
    result = walk(tmp_path)
    assert files(result) == ["a.py", "b/c.py"]
    entry = result.files[0]
    st = (tmp_path / "a.py").stat()
    assert (entry.abspath, entry.size, entry.mtime_ns) == (tmp_path / "a.py", 5,
                                                           st.st_mtime_ns)


def test_binary_by_extension_and_unknown_extensions_kept(tmp_path: Path) -> None:
    make(tmp_path, "logo.PNG", "a.zip", "font.woff2", "m.pyc", "lib.so", "x.dll", "A.class",
         "doc.pdf", "clip.mp4", "model.safetensors", ".DS_Store",
         "Makefile", "data.xyz", "Dockerfile", "image.svg")
    result = walk(tmp_path)
    assert files(result) == ["Dockerfile", "Makefile", "data.xyz", "image.svg"]
    assert set(reasons(result).values()) == {"binary (extension)"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_special_files_are_skipped(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    assert reasons(walk(tmp_path)) == {"pipe": "not a regular file"}


# --- secrets ----------------------------------------------------------------------------

SECRET_FILES = {
    ".env": "secret: .env file",
    ".env.local": "secret: .env file",
    "config/prod.env": "secret: .env file",
    ".envrc": "secret: .envrc file",
    "server.pem": "secret: key file (*.pem)",
    "tls/server.key": "secret: key file (*.key)",
    "home/.ssh/config": "secret: .ssh directory",
    "keys/id_rsa": "secret: SSH key",
    "keys/id_ed25519": "secret: SSH key",
    "cert.p12": "secret: key store (*.p12)",
    "cert.pfx": "secret: key store (*.pfx)",
    "app.keystore": "secret: key store (*.keystore)",
    ".netrc": "secret: .netrc",
    ".npmrc": "secret: .npmrc",
    ".pypirc": "secret: .pypirc",
    ".htpasswd": "secret: .htpasswd",
    ".aws/credentials": "secret: credentials file",
    "gcp/credentials.json": "secret: credentials file",
    "gcp/my-service-account-key.json": "secret: service account key",
    "client_secret_123.json": "secret: service account key",
    "home/.docker/config.json": "secret: docker credentials",
    "infra/terraform.tfstate": "secret: terraform state",
}
NOT_SECRET = [".env.example", ".env.sample", ".env.template", "keys/id_rsa.pub",
              "config.json", "environment.py", "docs/keys.md"]


def test_secrets_by_name_are_skipped(tmp_path: Path) -> None:
    make(tmp_path, *SECRET_FILES, *NOT_SECRET)
    result = walk(tmp_path)
    assert files(result) == sorted(NOT_SECRET)
    expected = {p: r for p, r in SECRET_FILES.items() if not p.startswith("home/.ssh")}
    assert reasons(result) == {**expected, "home/.ssh/": "secret: .ssh directory"}


def test_include_secrets_turns_the_secret_rules_off(tmp_path: Path) -> None:
    make(tmp_path, *SECRET_FILES)
    result = walk(tmp_path, WalkConfig(include_secrets=True))
    assert files(result) == sorted(SECRET_FILES)
    assert result.skipped == []


def _fake_private_key(kind: str = "RSA ") -> bytes:
    # Built at run time so that this file does not itself look like it holds a key.
    body = base64.encodebytes(random.Random(0).randbytes(600)).decode()
    dashes = "-" * 5
    return (f"{dashes}BEGIN {kind}PRIVATE KEY{dashes}\n{body}"
            f"{dashes}END {kind}PRIVATE KEY{dashes}\n").encode()


@pytest.mark.parametrize("kind", ["RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", ""])
def test_check_content_finds_private_keys(kind: str) -> None:
    assert check_content("deploy/key.txt", _fake_private_key(kind)) == "secret: private key"
    # Pasted into a string literal, with escaped newlines.
    literal = b'KEY = "' + _fake_private_key(kind).replace(b"\n", b"\\n") + b'"\n'
    assert check_content("settings.py", literal) == "secret: private key"
    assert check_content("key.txt", _fake_private_key(kind),
                         WalkConfig(include_secrets=True)) is None


def test_check_content_finds_private_keys_in_other_layouts() -> None:
    dashes = "-" * 5
    body = base64.b64encode(random.Random(1).randbytes(90)).decode()
    encrypted = (f"{dashes}BEGIN RSA PRIVATE KEY{dashes}\nProc-Type: 4,ENCRYPTED\n"
                 f"DEK-Info: AES-128-CBC,0123456789ABCDEF\n\n{body}\n")
    pgp = f"{dashes}BEGIN PGP PRIVATE KEY BLOCK{dashes}\nVersion: GnuPG v2\n\n{body}\n"
    concatenated = (f'KEY = (\n    "{dashes}BEGIN EC PRIVATE KEY{dashes}\\n"\n'
                    f'    "{body[:64]}\\n"\n)\n')
    for text in (encrypted, pgp, concatenated):
        assert check_content("k.txt", text.encode()) == "secret: private key", text


def test_check_content_survives_backtracking_bait() -> None:
    # A regex with catastrophic backtracking would hang here (no timing is asserted).
    marker = ("-" * 5 + "BEGIN PRIVATE KEY" + "-" * 5 + "\n").encode()
    assert check_content("x.txt", marker + b"a: " * 200_000) is None
    assert check_content("x.txt", marker + b"a:\n" * 200_000) is None


def test_check_content_leaves_key_markers_in_code_alone() -> None:
    marker = "-" * 5 + "BEGIN RSA PRIVATE KEY" + "-" * 5
    source = f'if line.startswith("{marker}"):\n    return parse(lines)\n'.encode()
    assert check_content("pkey.py", source) is None


def test_check_content_finds_tokens() -> None:
    aws = "AKIA" + "Q3ZJ7RLM2XW5TPNB"
    github = "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"
    assert check_content("a.py", f'KEY = "{aws}"\n'.encode()) == "secret: AWS access key"
    assert check_content("a.py", f"token: {github}\n".encode()) == "secret: GitHub token"
    # The documentation's example key is not a secret.
    example = "AKIA" + "IOSFODNN7EXAMPLE"
    assert check_content("a.md", f"aws_access_key_id = {example}\n".encode()) is None


def test_check_content_binary() -> None:
    assert check_content("a.dat", b"abc\0def") == "binary"
    assert check_content("a.dat", bytes(range(1, 32)) * 100) == "binary"
    assert check_content("a.txt", "caf\xe9 cr\xe8me\n".encode("latin-1") * 100) is None
    # A multi-byte character cut by the 8 KiB sample is still text.
    assert check_content("a.txt", b"a" * 8191 + "\u00e9".encode() * 10) is None
    assert check_content("empty.py", b"") is None
    assert check_content("a.bin", b"x" * 9000 + b"\0") is None  # only the first 8 KiB count


def test_check_content_minified() -> None:
    one_line = b"var a=1;" * 2000
    assert check_content("dist/app.js", one_line) == "minified"
    assert check_content("style.css", b"a{b:c}" * 2000) == "minified"
    assert check_content("app.js", b"const a = 1;\n" * 2000) is None
    assert check_content("notes.txt", one_line) is None  # only web assets are judged
    assert check_content("tiny.js", b"export default 1;") is None


# --- symlinks ---------------------------------------------------------------------------


def test_symlinks_inside_the_root_are_followed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make(root, "src/a.py", "src/pkg/b.py", "generated/c.py")
    (root / "link.py").symlink_to("src/a.py")
    (root / "src" / "pkg_alias").symlink_to("pkg")  # the same directory twice
    (root / "src" / "gen").symlink_to("../generated")
    (root / ".dowseignore").write_text("/generated/\n")

    result = walk(root)

    assert files(result) == [".dowseignore", "link.py", "src/a.py", "src/gen/c.py",
                             "src/pkg/b.py"]
    assert result.files[1].abspath == root / "link.py"
    assert reasons(result) == {
        "generated/": "dowseignored",
        "src/pkg_alias/": "symlink to a directory already walked",
    }


def test_symlinks_to_secrets_are_skipped(tmp_path: Path) -> None:
    make(tmp_path, ".env", "home/.ssh/id_rsa", "a.py")
    (tmp_path / "settings.txt").symlink_to(".env")
    (tmp_path / "key.txt").symlink_to("home/.ssh/id_rsa")
    result = walk(tmp_path)
    assert files(result) == ["a.py"]
    assert reasons(result) == {
        ".env": "secret: .env file",
        "home/.ssh/": "secret: .ssh directory",
        "key.txt": "secret: .ssh directory (symlink target)",
        "settings.txt": "secret: .env file (symlink target)",
    }
    assert files(walk(tmp_path, WalkConfig(include_secrets=True))) == [
        ".env", "a.py", "home/.ssh/id_rsa", "key.txt", "settings.txt"]


def test_symlinks_outside_the_root_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make(tmp_path, "outside/secret.py", "outside.py")
    make(root, "a.py")
    (root / "out.py").symlink_to(tmp_path / "outside.py")
    (root / "outdir").symlink_to(tmp_path / "outside")
    (root / "sneaky").symlink_to("../outside")
    (root / "broken.py").symlink_to("missing.py")
    result = walk(root)
    assert files(result) == ["a.py"]
    assert reasons(result) == {
        "broken.py": "broken symlink",
        "out.py": "symlink outside root",
        "outdir/": "symlink outside root",
        "sneaky/": "symlink outside root",
    }


def test_symlink_loops_are_survived(tmp_path: Path) -> None:
    make(tmp_path, "a/b/c.py")
    (tmp_path / "a" / "b" / "up").symlink_to("..")
    (tmp_path / "a" / "self").symlink_to(".")
    (tmp_path / "root").symlink_to(tmp_path)
    (tmp_path / "ping").symlink_to("pong")
    (tmp_path / "pong").symlink_to("ping")
    result = walk(tmp_path)
    assert files(result) == ["a/b/c.py"]
    assert reasons(result) == {
        "a/b/up/": "symlink loop",
        "a/self/": "symlink loop",
        "ping": "symlink loop",
        "pong": "symlink loop",
        "root/": "symlink loop",
    }


def test_a_symlinked_root_is_walked(tmp_path: Path) -> None:
    make(tmp_path, "real/a.py")
    (tmp_path / "alias").symlink_to("real")
    result = walk(tmp_path / "alias")
    assert files(result) == ["a.py"]
    assert result.files[0].abspath == tmp_path / "alias" / "a.py"


# --- unreadable, vanishing and oddly named files ----------------------------------------


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_files_and_dirs_for_real(tmp_path: Path) -> None:
    make(tmp_path, "ok.py", "locked.py", "closed/x.py")
    (tmp_path / "locked.py").chmod(0)
    (tmp_path / "closed").chmod(0)
    try:
        result = walk(tmp_path)
    finally:
        (tmp_path / "closed").chmod(0o755)
    assert files(result) == ["ok.py"]
    assert reasons(result) == {"closed/": "unreadable: permission denied",
                               "locked.py": "unreadable: permission denied"}


def test_unreadable_files_and_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests often run as root, who reads everything: pretend to be someone else for the
    # file's mode bits, and make listing one directory fail as it would for them.
    make(tmp_path, "ok.py", "locked.py", "closed/x.py")
    (tmp_path / "locked.py").chmod(0)
    monkeypatch.setattr(walk_module.os, "geteuid", lambda: 4242)
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if path.endswith("/closed"):
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(walk_module.os, "scandir", scandir)
    result = walk(tmp_path)
    assert files(result) == ["ok.py"]
    assert reasons(result) == {"closed/": "unreadable: permission denied",
                               "locked.py": "unreadable: permission denied"}


def test_files_and_dirs_deleted_during_the_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(tmp_path, "stays.py", "goes.py", "gone/x.py")
    real_scandir = os.scandir

    class Listing:
        """Lists a directory, then deletes things before the walk looks at them."""

        def __init__(self, path: str) -> None:
            with real_scandir(path) as it:
                self.entries = list(it)
            if Path(path) == tmp_path:
                (tmp_path / "goes.py").unlink()
                (tmp_path / "gone" / "x.py").unlink()
                (tmp_path / "gone").rmdir()

        def __enter__(self) -> list[os.DirEntry[str]]:
            return self.entries

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(walk_module.os, "scandir", Listing)
    result = walk(tmp_path)
    assert files(result) == ["stays.py"]
    assert result.skipped == []


def test_odd_file_names(tmp_path: Path) -> None:
    make(tmp_path, "new\nline.py", "ünï cödé.py", "dir with space/a b.py")
    bad = os.path.join(os.fsencode(tmp_path), b"bad\xffname.py")
    with open(bad, "wb") as fh:
        fh.write(b"x")
    os.mkdir(os.path.join(os.fsencode(tmp_path), b"bad\xfedir"))
    result = walk(tmp_path)
    assert files(result) == ["dir with space/a b.py", "new\nline.py", "ünï cödé.py"]
    assert reasons(result) == {"bad\\xfedir": "undecodable file name",
                               "bad\\xffname.py": "undecodable file name"}
    for skipped in result.skipped:
        skipped.model_dump_json()  # stays serialisable


# --- the root ---------------------------------------------------------------------------


def test_invalid_root(tmp_path: Path) -> None:
    with pytest.raises(InvalidPath, match="no such directory"):
        walk(tmp_path / "missing")
    (tmp_path / "file.py").write_text("x")
    with pytest.raises(InvalidPath, match="not a directory"):
        walk(tmp_path / "file.py")


def test_walks_a_few_thousand_files(tmp_path: Path) -> None:
    for d in range(60):
        sub = tmp_path / f"pkg{d}" / "mod"
        sub.mkdir(parents=True)
        for f in range(50):
            (sub / f"m{f}.py").write_text("x")
    (tmp_path / ".gitignore").write_text("*.pyc\n__pycache__/\n/build/\n*.log\n!keep.log\n")
    result = walk(tmp_path)
    assert len(result.files) == 3001
