"""Bad input for benchmarks/reliability.py: the hostile case (a generated repository of
bad inputs, indexed while files come and go) and the fuzz case (the property of
tests/test_reliability.py at length, in a subprocess).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reliability_index import fingerprint
from reliability_proc import REPO, Ran, dowse, environment, without_dac

from dowse.errors import DowseError
from dowse.indexer.store import Store

# -- hostile input ----------------------------------------------------------------------------


def hostile_repo(
    root: Path,
    *,
    big_bytes: int = 10_000_000,
    line_bytes: int = 900_000,
    nesting: int = 5000,
    dir_depth: int = 200,
    ignore_lines: int = 3000,
    rng: random.Random | None = None,
) -> list[str]:
    """Write a repository of bad inputs under `root`; return what was written (one line
    each). Everything here must be indexed or skipped with a reason, never crash a run."""
    rng = rng or random.Random(0)
    made: list[str] = []
    base = os.fsencode(root)

    def put(rel: str | bytes, data: bytes, what: str, mode: int | None = None) -> None:
        path = os.path.join(base, os.fsencode(rel) if isinstance(rel, str) else rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
        if mode is not None:
            os.chmod(path, mode)
        made.append(what)

    def link(rel: str, target: str, what: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
        made.append(what)

    noise = bytes(rng.randrange(256) for _ in range(16_384))
    # Binary content under source extensions.
    put("bin/looks_like.py", noise, "random bytes named .py")
    put("bin/image.js", b"\x89PNG\r\n\x1a\n" + noise, "a PNG named .js")
    put("bin/program.c", b"\x7fELF\x02\x01\x01" + noise, "an ELF binary named .c")
    put("bin/no_nul.go", bytes(b | 0x80 for b in noise), "high bytes without NUL named .go")
    put(
        "bin/late_nul.py",
        b"def early():\n    return 1\n" * 500 + b"\0" + b"x = 1\n" * 10,
        "a NUL byte after the first 8 KiB",
    )
    # Invalid UTF-8 and odd encodings.
    put(
        "enc/invalid.py",
        b"def f(\xff\xfe):\n    return '\xc3\x28 \xa0\xa1'\n" * 300,
        "invalid UTF-8 in Python",
    )
    put(
        "enc/latin1.go",
        "package main\n// café señor\nfunc Café() {}\n".encode("latin-1") * 100,
        "Latin-1 Go",
    )
    put("enc/bom.ts", b"\xef\xbb\xbfexport function withBom(): number { return 1 }\n", "a BOM")
    put("enc/cr_only.rb", b"def cr_only\r  1\rend\r" * 200, "CR-only line ends")
    put("enc/utf16.java", "class Utf16 { int x; }\n".encode("utf-16") * 50, "UTF-16 source")
    put("enc/crlf.cs", b"class Crlf {\r\n  void M() {}\r\n}\r\n" * 200, "CRLF line ends")
    put(
        "enc/surrogates.rs",
        b"fn s() {}\n" + b"\xed\xa0\x80\xed\xbf\xbf\n" * 100,
        "encoded surrogates in Rust",
    )
    # Huge one-line files.
    put(
        "huge/one_line.js",
        b"var a=1;" * (big_bytes // 8),
        f"{big_bytes / 1e6:.0f} MB of JavaScript on one line",
    )
    put(
        "huge/one_line.c",
        b"int a=1;" * (big_bytes // 8),
        f"{big_bytes / 1e6:.0f} MB of C on one line",
    )
    put(
        "huge/one_line.py",
        b"x = [" + b"1, " * (line_bytes // 3) + b"]",
        f"{line_bytes / 1000:.0f} kB on one line (under the limit)",
    )
    put(
        "huge/long_identifier.py",
        b"def " + b"a" * 500_000 + b"():\n    pass\n",
        "a 500,000-character identifier",
    )
    put("huge/many_lines.py", b"\n" * 200_000 + b"def last():\n    pass\n", "200,000 blank lines")
    # Deep nesting.
    put(
        "nest/parens.py",
        b"x = " + b"(" * nesting + b"1" + b")" * nesting,
        f"{nesting}-level parentheses",
    )
    put("nest/brackets.json", b"[" * nesting + b"]" * nesting, f"{nesting}-level JSON")
    put("nest/braces.c", b"int f() " + b"{" * nesting + b"}" * nesting, f"{nesting}-level braces")
    put(
        "nest/functions.js",
        b"function f(){" * nesting + b"}" * nesting,
        f"{nesting} nested functions",
    )
    put("nest/unclosed.ts", b"(" * nesting + b"[" * nesting, f"{2 * nesting} unclosed brackets")
    put(
        "nest/indent.py",
        b"".join(b" " * i + b"if x:\n" for i in range(1000)) + b" " * 1000 + b"pass\n",
        "1,000-level indentation",
    )
    put("nest/tags.html", b"<div>" * nesting + b"</div>" * nesting, f"{nesting}-level HTML")
    # Deeply nested directories.
    put(
        "/".join(["deep"] + ["d"] * dir_depth + ["leaf.py"]),
        b"def leaf():\n    pass\n",
        f"a file {dir_depth} directories deep",
    )
    # Symlink loops and links leading out.
    link("links/self", "self", "a symlink to itself")
    link("links/dot", ".", "a symlink to its own directory")
    link("links/up", "../..", "a symlink to an ancestor")
    link("links/ping", "pong", "two symlinks pointing at each other")
    link("links/pong", "ping", "two symlinks pointing at each other")
    link("links/broken.py", "missing.py", "a broken symlink")
    link("links/devzero.py", "/dev/zero", "a symlink to /dev/zero")
    link("links/etc", "/etc", "a symlink out of the root")
    # Unreadable files and directories; a FIFO.
    put("perm/unreadable.py", b"def secret():\n    pass\n", "an unreadable file", mode=0)
    put("perm/closed/inside.py", b"def inside():\n    pass\n", "a file in an unreadable directory")
    os.chmod(root / "perm" / "closed", 0)
    put(
        "perm/no_search/inside.py",
        b"def hidden():\n    pass\n",
        "a file in a directory without search permission",
    )
    os.chmod(root / "perm" / "no_search", 0o644)
    os.mkfifo(root / "perm" / "fifo.py")
    made.append("a FIFO named .py")
    # Names.
    odd_names: list[str | bytes] = [
        "names/new\nline.py",
        "names/tab\tname.py",
        "names/carriage\rreturn.py",
        b"names/bad\xffbyte.py",
        b"names/latin1_caf\xe9.py",
        "names/quote'single.py",
        'names/quote"double.py',
        "names/back\\slash.py",
        "names/ünïcödé.py",
        "names/emoji_\U0001f642.py",
        "names/-leading-dash.py",
        "names/ leading space.py",
        "names/trailing space .py",
        "names/" + "x" * 250 + ".py",
        "names/percent%s%d.py",
        "names/glob[*]?.py",
        "names/sql'); DROP TABLE files;--.py",
        "names/.hidden.py",
        "names/colon:name.py",
        "names/star*.py",
    ]
    for i, name in enumerate(odd_names):
        put(name, f"def odd_name_{i}():\n    return {i}\n".encode(), f"file name {name!r}")
    # Empty, degenerate and junk files.
    put("odd/empty.py", b"", "an empty file")
    put("odd/whitespace.go", b" \t" * 250_000, "500 kB of whitespace")
    put("odd/control.txt", bytes(range(1, 32)) * 100, "control characters")
    put("web/bundle.js", b"var a=" + b"1+" * 100_000 + b"1;", "a minified bundle without .min")
    put("web/app.min.js", b"var b=1;" * 1000, "a .min.js file")
    put("web/app.js.map", b'{"version":3}', "a source map")
    put("node_modules/left-pad/index.js", b"module.exports = 1\n", "node_modules")
    put("__pycache__/m.cpython-311.pyc", noise, "__pycache__")
    put("venv/pyvenv.cfg", b"home = /usr\n", "a virtualenv")
    put("venv/lib/site.py", b"x = 1\n", "a file inside a virtualenv")
    put("dist/bundle.js", b"var c = 1;\n", "build output")
    put("package-lock.json", b'{"lockfileVersion": 3}\n', "a lockfile")
    put(
        ".gitignore",
        b"".join(b"**/**/**/*a*b*c*d*e*f*g*h*%d\n" % i for i in range(ignore_lines))
        + b"ignored/\n",
        f"a .gitignore of {ignore_lines:,} backtracking patterns",
    )
    put("ignored/x.py", b"x = 1\n", "a gitignored directory")
    put(
        "ok/normal.py",
        b'"""A normal module."""\n\n\ndef normal_function(value):\n'
        b'    """Return value."""\n    return value\n',
        "a normal Python file",
    )
    return made


def _restore_modes(root: Path) -> None:
    for d in ("perm/closed", "perm/no_search"):
        with contextlib.suppress(OSError):
            os.chmod(root / d, 0o755)


def _churn(directory: Path, stop: threading.Event, made: Counter[str]) -> None:
    """Create and delete files all the time (about 500 a second), so that some vanish
    between the walk listing them and the indexer reading them."""
    directory.mkdir(parents=True, exist_ok=True)
    i = 0
    while not stop.is_set():
        path = directory / f"c{i % 50}.py"
        if path.exists():
            path.unlink()
            made["deleted"] += 1
        else:
            path.write_text(f"def churn_{i}():\n    return {i}\n")
            made["created"] += 1
        i += 1
        time.sleep(0.002)


def hostile_case(
    args: argparse.Namespace, work: Path, rng: random.Random, log: Callable[[str], None]
) -> dict[str, Any]:
    root = work / "hostile"
    if root.exists():
        _restore_modes(root)
        shutil.rmtree(root)
    root.mkdir(parents=True)
    made = hostile_repo(root, rng=rng)
    prefix = without_dac()
    runs: list[Ran] = []
    churned: Counter[str] = Counter()
    stop = threading.Event()
    churn = threading.Thread(target=_churn, args=(root / "churn", stop, churned))
    churn.start()
    try:
        runs.append(
            dowse("index", str(root), "--no-embed", "-q", "--json", timeout=600, prefix=prefix)
        )
        runs.append(dowse("index", str(root), "--no-embed", "-q", timeout=600, prefix=prefix))
    finally:
        stop.set()
        churn.join()
    log(
        f"hostile: {len(made)} inputs, {sum(churned.values())} churned files; "
        f"cold index {runs[0].seconds:.1f} s"
    )
    status = dowse("status", str(root), "--skipped", "--json", prefix=prefix)
    runs.append(status)
    for query in ("odd_name", "DROP TABLE files", "ünïcödé", "leaf", "normal_function"):
        runs.append(dowse("search", query, "--path", str(root), "--json", prefix=prefix))
    runs.append(dowse("symbol", "odd_name_5", "--path", str(root), "--json", prefix=prefix))
    runs.append(
        dowse(
            "ask",
            "where is normal_function defined?",
            "--path",
            str(root),
            "--json",
            "--mode",
            "retrieval",
            prefix=prefix,
        )
    )
    # Change the odd files and index again: deletes and renames of odd names go through
    # the store's SQL filters.
    names = root / "names"
    for i, path in enumerate(sorted(names.iterdir())):
        if i % 3 == 0:
            path.unlink()
        elif i % 3 == 1:
            path.write_bytes(path.read_bytes() + b"\n\ndef changed():\n    pass\n")
        else:
            path.rename(names / (os.fsdecode(path.name)[:-3] + "_moved.py"))
    (root / "churn").mkdir(exist_ok=True)
    runs.append(dowse("index", str(root), "--no-embed", "-q", prefix=prefix))
    ref_dir = work / "hostile-ref"
    shutil.rmtree(ref_dir, ignore_errors=True)
    runs.append(
        dowse("index", str(root), "--no-embed", "-q", "--index-dir", str(ref_dir), prefix=prefix)
    )
    same = fingerprint(root / ".dowse") == fingerprint(ref_dir)
    # The same repository with a 20 MB limit: the 10 MB one-line file is read and chunked.
    big = dowse(
        "index",
        str(root),
        "--no-embed",
        "-q",
        "--max-file-size",
        "20000000",
        "--index-dir",
        str(work / "hostile-big"),
        timeout=900,
        prefix=prefix,
    )
    runs.append(big)
    big_rows: dict[str, str] = {}
    with contextlib.suppress(DowseError):
        store = Store.open(work / "hostile-big")
        for row in store.rows(
            "files", ["path", "parser", "note", "n_chunks"], where="path LIKE 'huge/one_line.%'"
        ):
            note = f" ({row['note']})" if row["note"] else ""
            big_rows[row["path"]] = f"{row['parser']}{note}, {row['n_chunks']} chunk(s)"
        for row in store.rows("skipped", where="path LIKE 'huge/one_line.%'"):
            big_rows[row["path"]] = f"skipped: {row['reason']}"
    _restore_modes(root)
    crashes = [
        f"`dowse {' '.join(r.args[:2])}` exit {r.code}: {r.last_line}"
        for r in runs
        if r.code != 0 or r.traceback
    ]
    report = json.loads(status.out) if status.code == 0 else {"skipped": []}
    indexed = {}
    with contextlib.suppress(DowseError):
        for row in Store.open(root / ".dowse").rows("files", ["path", "parser", "note"]):
            if row["note"]:
                indexed[row["path"]] = f"{row['parser']}: {row['note']}"
    return {
        "inputs": len(made) + sum(churned.values()),
        "generated": len(made),
        "churned": dict(churned),
        "runs": len(runs),
        "crashes": crashes,
        "privileges": "root without CAP_DAC_OVERRIDE"
        if prefix
        else ("root (reads any file)" if os.geteuid() == 0 else "ordinary user"),
        "cold_index_s": round(runs[0].seconds, 1),
        "skipped": [
            (s["path"], s["reason"])
            for s in report["skipped"]
            if not s["path"].startswith("churn/")
        ],
        "indexed_with_note": sorted(indexed.items()),
        "incremental_equals_fresh": same,
        "big_limit": {"seconds": round(big.seconds, 1), "files": big_rows},
    }


# -- fuzzing -------------------------------------------------------------------------------


def fuzz_case(
    args: argparse.Namespace, work: Path, rng: random.Random, log: Callable[[str], None]
) -> dict[str, Any]:
    """tests/test_reliability.py's property with more examples, in a subprocess (a grammar
    that crashes the process is a crash too)."""
    code = (
        "import json, sys; sys.path.insert(0, 'tests'); "
        "from test_reliability import FUZZ_LANGUAGES, fuzz; "
        f"print(json.dumps({{lang: fuzz(lang, {args.fuzz_examples}) "
        "for lang in FUZZ_LANGUAGES}))"
    )
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=environment()
    )
    seconds = time.perf_counter() - t
    if p.returncode != 0:
        return {
            "inputs": None,
            "crashes": [f"exit {p.returncode}: {p.stderr[-2000:]}"],
            "seconds": round(seconds, 1),
        }
    per = json.loads(p.stdout)
    log(f"fuzz: {sum(v['tried'] for v in per.values())} inputs in {seconds:.0f} s")
    return {
        "inputs": sum(v["tried"] for v in per.values()),
        "languages": len(per),
        "crashes": [f"{lang}: {v['error']}" for lang, v in per.items() if v["error"]],
        "per_language": {lang: v["tried"] for lang, v in per.items()},
        "seconds": round(seconds, 1),
    }


# -- input edges: queries and MCP requests at their limits ------------------------------------


def _cli_edges(tree: Path) -> list[tuple[str, list[str]]]:
    big = "token " * 3400  # 20,400 characters: past the 20,000 limit
    bad = os.fsdecode(b"where \xff\xfe tokens")  # invalid UTF-8 in argv
    return [
        ("empty search query", ["search", "", "--path", str(tree)]),
        ("empty ask question", ["ask", "", "--path", str(tree)]),
        ("whitespace symbol name", ["symbol", "   ", "--path", str(tree)]),
        ("20,400-character query", ["search", big, "--path", str(tree)]),
        ("20,400-character question", ["ask", big, "--path", str(tree), "--format", "agent"]),
        ("invalid UTF-8 query", ["search", bad, "--path", str(tree)]),
        ("invalid UTF-8 question", ["ask", bad, "--path", str(tree)]),
        ("control characters in a query", ["search", "tok\x1b[2J\x07en", "--path", str(tree)]),
    ]


def _mcp_edges() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        ("MCP unknown field (max_token)", "search", {"query": "token", "max_token": 100}),
        ("MCP empty query", "search", {"query": ""}),
        ("MCP NUL byte in a query", "search", {"query": "tok\x00en"}),
        ("MCP NUL byte in a path", "ask", {"question": "tokens", "path": "shop\x00/x"}),
        ("MCP 25,000-character question", "ask", {"question": "token " * 4200}),
        ("MCP 5,000-character path", "search", {"query": "token", "path": "a/" * 2500}),
        ("MCP wrong type (max_tokens as text)", "search", {"query": "t", "max_tokens": "many"}),
        ("MCP unknown tool argument on symbol", "symbol", {"name": "Token", "fuzzy": True}),
    ]


def inputs_case(
    args: argparse.Namespace, work: Path, rng: random.Random, log: Callable[[str], None]
) -> dict[str, Any]:
    """Each edge must end in an answer or a one-line error (CLI: exit != 0, a single
    `Error:` line; MCP: an error result whose text is one line) and never a traceback;
    the server must still answer a normal call after all of them."""
    from reliability_proc import mcp_calls

    tree = work / "inputs"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(REPO / "fixtures" / "example", tree, ignore=shutil.ignore_patterns(".dowse"))
    dowse("index", str(tree), "--no-embed", "-q")
    edges: list[dict[str, Any]] = []
    for name, argv in _cli_edges(tree):
        ran = dowse(*argv)
        clean = not ran.traceback and (ran.code == 0 or ran.one_line_error)
        said = ran.last_line if ran.code else "answered"
        edges.append({"edge": name, "clean": clean, "said": said[:160], "code": ran.code})
    mcp = _mcp_edges()
    answers = mcp_calls(
        tree,
        [(tool, arguments) for _, tool, arguments in mcp]
        + [("search", {"query": "validate token"})],
    )
    for (name, _, _), (is_error, text) in zip(mcp, answers, strict=False):
        one_line = is_error and len(text.strip().splitlines()) == 1
        answered = not is_error and text.startswith("{")
        clean = "Traceback" not in text and (one_line or answered)
        edges.append(
            {"edge": name, "clean": clean, "said": text.splitlines()[0][:160] if text else ""}
        )
    alive = len(answers) == len(mcp) + 1 and not answers[-1][0]
    log(f"inputs: {sum(e['clean'] for e in edges)} of {len(edges)} edges clean")
    return {
        "edges": len(edges),
        "clean": sum(e["clean"] for e in edges),
        "server_alive_after": alive,
        "results": edges,
    }
