"""dowse.indexer.walk: what the walk does with the files the ignore rules let through.

Sizes, binaries and special files, secrets (by name and by content), symlinks, unreadable,
vanishing and oddly named files, and the root. The ignore rules themselves (.gitignore,
.dowseignore, configured and default excludes) are in test_walk_ignore.py.
"""

from __future__ import annotations

import base64
import os
import random
from pathlib import Path

import pytest
from conftest import files, make, reasons

from dowse.errors import InvalidPath
from dowse.indexer import walk as walk_module
from dowse.indexer.secrets import redact
from dowse.indexer.walk import WalkConfig, check_content, walk

# --- sizes, binaries and special files --------------------------------------------------


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
    assert (entry.abspath, entry.size, entry.mtime_ns) == (tmp_path / "a.py", 5, st.st_mtime_ns)


def test_binary_by_extension_and_unknown_extensions_kept(tmp_path: Path) -> None:
    make(
        tmp_path,
        "logo.PNG",
        "a.zip",
        "font.woff2",
        "m.pyc",
        "lib.so",
        "x.dll",
        "A.class",
        "doc.pdf",
        "clip.mp4",
        "model.safetensors",
        ".DS_Store",
        "Makefile",
        "data.xyz",
        "Dockerfile",
        "image.svg",
    )
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
NOT_SECRET = [
    ".env.example",
    ".env.sample",
    ".env.template",
    "keys/id_rsa.pub",
    "config.json",
    "environment.py",
    "docs/keys.md",
]


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
    return (
        f"{dashes}BEGIN {kind}PRIVATE KEY{dashes}\n{body}{dashes}END {kind}PRIVATE KEY{dashes}\n"
    ).encode()


@pytest.mark.parametrize("kind", ["RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", ""])
def test_check_content_finds_private_keys(kind: str) -> None:
    assert check_content("deploy/key.txt", _fake_private_key(kind)) == "secret: private key"
    # Pasted into a string literal, with escaped newlines.
    literal = b'KEY = "' + _fake_private_key(kind).replace(b"\n", b"\\n") + b'"\n'
    assert check_content("settings.py", literal) == "secret: private key"
    assert (
        check_content("key.txt", _fake_private_key(kind), WalkConfig(include_secrets=True)) is None
    )


def test_check_content_finds_private_keys_in_other_layouts() -> None:
    dashes = "-" * 5
    body = base64.b64encode(random.Random(1).randbytes(90)).decode()
    encrypted = (
        f"{dashes}BEGIN RSA PRIVATE KEY{dashes}\nProc-Type: 4,ENCRYPTED\n"
        f"DEK-Info: AES-128-CBC,0123456789ABCDEF\n\n{body}\n"
    )
    pgp = f"{dashes}BEGIN PGP PRIVATE KEY BLOCK{dashes}\nVersion: GnuPG v2\n\n{body}\n"
    concatenated = (
        f'KEY = (\n    "{dashes}BEGIN EC PRIVATE KEY{dashes}\\n"\n    "{body[:64]}\\n"\n)\n'
    )
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


def test_check_content_leaves_tokens_to_redaction() -> None:
    # A token inside an ordinary file does not skip it: the indexer redacts the value
    # (tests/test_secrets.py), so the file stays searchable.
    aws = "AKIA" + "Q3ZJ7RLM2XW5TPNB"
    github = "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"
    assert check_content("a.py", f'KEY = "{aws}"\n'.encode()) is None
    assert redact(f'KEY = "{aws}"\n', "a.py") == 'KEY = "[REDACTED]"\n'
    assert redact(f"token: {github}\n", "a.py") == "token: [REDACTED]\n"
    # The documentation's example key is not a secret.
    example = "AKIA" + "IOSFODNN7EXAMPLE"
    assert redact(f"aws_access_key_id = {example}\n", "a.md") == f"aws_access_key_id = {example}\n"


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


def test_check_content_skips_a_tree_sitter_generated_parser() -> None:
    generated = (
        b'#include "tree_sitter/parser.h"\n\n#if defined(__GNUC__)\n#pragma GCC diagnostic'
        b" push\n#endif\n\n#define LANGUAGE_VERSION 14\n#define STATE_COUNT 2048\n"
    ) + b"  [1] = {.entry = {.count = 1}}, SHIFT(2),\n" * 100
    assert check_content("src/parser.c", generated) == "generated parser"
    # A parser written by hand, even one using tree-sitter's API, is indexed.
    written = b'#include "tree_sitter/parser.h"\n\nstatic int scan(void) { return 0; }\n'
    assert check_content("src/parser.c", written) is None
    assert check_content("src/scanner.c", written) is None
    assert check_content("src/parser.h", generated) is None  # only the .c is generated


# --- symlinks ---------------------------------------------------------------------------


def test_symlinks_inside_the_root_are_followed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make(root, "src/a.py", "src/pkg/b.py", "generated/c.py")
    (root / "link.py").symlink_to("src/a.py")
    (root / "src" / "pkg_alias").symlink_to("pkg")  # the same directory twice
    (root / "src" / "gen").symlink_to("../generated")
    (root / ".dowseignore").write_text("/generated/\n")

    result = walk(root)

    assert files(result) == [".dowseignore", "link.py", "src/a.py", "src/gen/c.py", "src/pkg/b.py"]
    # Listed under the link's path, opened at the target the walk checked (the read
    # does not follow symlinks: the link may be changed to lead elsewhere later).
    assert result.files[1].abspath == (root / "src" / "a.py").resolve()
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
        ".env",
        "a.py",
        "home/.ssh/id_rsa",
        "key.txt",
        "settings.txt",
    ]


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
    assert reasons(result) == {
        "closed/": "unreadable: permission denied",
        "locked.py": "unreadable: permission denied",
    }


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

    # `walk_module.os` is `os`: the listing is patched for the walk alone, not for the
    # removal of tmp_path after the test (tests/conftest.py, the suite's temporary trees).
    with monkeypatch.context() as mp:
        mp.setattr(walk_module.os, "scandir", scandir)
        result = walk(tmp_path)
    assert files(result) == ["ok.py"]
    assert reasons(result) == {
        "closed/": "unreadable: permission denied",
        "locked.py": "unreadable: permission denied",
    }


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

    with monkeypatch.context() as mp:  # for the walk alone, as above
        mp.setattr(walk_module.os, "scandir", Listing)
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
    assert reasons(result) == {
        "bad\\xfedir": "undecodable file name",
        "bad\\xffname.py": "undecodable file name",
    }
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
