"""Cold start: what a command imports, and the no-op `dowse index` that opens no table."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import fresh_python

from dowse.indexer import build as build_module
from dowse.indexer import settled
from dowse.indexer import store as store_module
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.store import Retention
from dowse.indexer.walk import WalkConfig

HEAVY = (
    "lancedb",
    "torch",
    "sentence_transformers",
    "onnxruntime",
    "mcp",
    "detect_secrets",
    "requests",  # detect-secrets imports it to verify secrets online, never asked here
)


def _imported(code: str, cwd: Path) -> set[str]:
    """The HEAVY top-level packages in `sys.modules` after `code` ran in a fresh Python."""
    probe = (
        f"{code}\n"
        "import json, sys\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    return set(fresh_python(probe, cwd)) & set(HEAVY)


def _cli(*args: str) -> str:
    """Run the CLI in-process in the probe (SystemExit is its normal end)."""
    return (
        "import contextlib, io, sys\n"
        "from dowse.cli import cli\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        f"    cli.main({list(args)!r})\n"
    )


def test_importing_the_cli_imports_no_heavy_package(tmp_path):
    assert _imported("import dowse.cli", tmp_path) == set()


def test_the_dowse_process_collects_cycles_less_often(tmp_path):
    code = (
        "import contextlib, gc, io, json, sys\n"
        "from dowse.cli import GC_YOUNG_THRESHOLD, main\n"
        "sys.argv = ['dowse', '--help']\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main()\n"
        "print(json.dumps([gc.isenabled(), gc.get_threshold()[0] == GC_YOUNG_THRESHOLD]))"
    )
    assert fresh_python(code, tmp_path) == [True, True]


def test_the_exit_collections_skip_what_the_command_kept(tmp_path):
    # At its end the interpreter collects every object the command kept (its modules,
    # models, held rows): frozen after the other exit handlers, they are left out.
    code = (
        "import atexit, contextlib, gc, io, json, sys\n"
        "atexit.register(lambda: print(json.dumps([frozen, gc.get_freeze_count() > 1000])))\n"
        "from dowse.cli import main\n"
        "frozen = gc.get_freeze_count()\n"
        "sys.argv = ['dowse', '--help']\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main()\n"
    )
    assert fresh_python(code, tmp_path) == [0, True]


def test_help_imports_no_heavy_package(tmp_path):
    assert _imported(_cli("--help"), tmp_path) == set()
    assert _imported(_cli("index", "--help"), tmp_path) == set()


@pytest.fixture
def lexical_example(tmp_path, indexed_examples):
    """The example, indexed without vectors (the session's build, copied: conftest)."""
    return indexed_examples.copy(tmp_path / "example", IndexConfig(embed=False))


def _main(*args: str) -> str:
    """Run `dowse ARGS` in-process in the probe as the `dowse` command does (`main`)."""
    return (
        "import contextlib, io, sys\n"
        "from dowse.cli import main\n"
        f"sys.argv = ['dowse', *{list(args)!r}]\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main()\n"
    )


QUESTION = "where are expired session tokens rejected?"
AGENT = ("--format", "agent")


@pytest.fixture(scope="module")
def asked(tmp_path_factory, indexed_examples) -> Callable[..., dict[str, Any]]:
    """`asked(*options)`: what a fresh process holds after `dowse ask QUESTION --path
    EXAMPLE OPTIONS` answered as the command does (`main`), on the example indexed without
    vectors: its modules, and then (its modules recorded) whether pydantic's plugin
    loader read the installed distributions. One process for each options, which the
    module's tests share: each looks at its own part of what the same command imported."""
    root = indexed_examples.copy(
        tmp_path_factory.mktemp("asked") / "example", IndexConfig(embed=False)
    )
    seen: dict[tuple[str, ...], dict[str, Any]] = {}

    def after(*options: str) -> dict[str, Any]:
        if options not in seen:
            code = _main("ask", QUESTION, "--path", str(root), *options) + (
                "import json\n"
                "modules = sorted(sys.modules)\n"
                "from pydantic.plugin import _loader\n"
                "print(json.dumps({'modules': modules,\n"
                "                  'metadata': 'importlib.metadata' in sys.modules,\n"
                "                  'plugins': list(_loader.get_plugins())}))"
            )
            seen[options] = fresh_python(code, root)
        return seen[options]

    return after


def test_status_imports_only_the_index_reader(lexical_example):
    example_repo = lexical_example
    # LanceDB reads the tables status reports on; nothing else heavy is needed.
    assert _imported(_cli("status", str(example_repo)), example_repo) <= {"lancedb"}


@pytest.mark.parametrize("fmt", [(), AGENT])
def test_an_ask_on_a_lexical_index_loads_no_model(asked, fmt):
    # No vectors to compare the question with: no embedder is imported or loaded, and no
    # MCP SDK for the agent's answer.
    modules = asked(*fmt)["modules"]
    assert "dowse.retrieval.loop" in modules
    assert {m.split(".")[0] for m in modules} & set(HEAVY) <= {"lancedb", "detect_secrets"}


@pytest.mark.parametrize("fmt", [(), AGENT])
def test_an_answer_of_one_loop_imports_no_exploration_rendering(asked, fmt):
    # The agent's answer imported explore's rendering (and through it the parsers) for
    # an explored answer's synthesis, which an answer of one loop has none of.
    modules = asked(*fmt)["modules"]
    assert "dowse.explore.render" not in modules and "tree_sitter" not in modules


LANCEDB_LAYER = ("lancedb.db", "lancedb.table", "lancedb.query", "lance_namespace", "pandas")
"""`lancedb`'s Python layer (and what it brings): a reader needs its native core alone."""


def _lancedb_layer(modules: list[str]) -> list[str]:
    layer = [m for m in LANCEDB_LAYER if m in modules]
    return layer + [m for m in modules if m.startswith("pyarrow.dataset")]


@pytest.mark.parametrize("fmt", [(), AGENT])
def test_reading_the_index_imports_lancedbs_core_alone(asked, fmt):
    modules = asked(*fmt)["modules"]
    assert _lancedb_layer(modules) == [] and "lancedb._lancedb" in modules


def test_a_search_imports_lancedbs_core_alone(lexical_example):
    code = _main("search", "session token", "--path", str(lexical_example)) + (
        "import json\nprint(json.dumps(sorted(sys.modules)))"
    )
    modules = fresh_python(code, lexical_example)
    assert _lancedb_layer(modules) == [] and "lancedb._lancedb" in modules


def test_an_ask_the_loop_answers_alone_imports_no_explorer(asked):
    explorers = [m for m in asked()["modules"] if m.startswith("dowse.explore.")]
    # The answer's records and its rendering; the tracks, the explorers and their
    # rendering only for a question split into tracks.
    assert explorers == ["dowse.explore.handoff", "dowse.explore.records"]


ANSWER_MODULES = ("dowse.server.workspace", "dowse.retrieval.ask", "dowse.explore.handoff")
"""What an answer imports (pyarrow, LanceDB, every ranking module's records): the bulk of
a cold query's imports."""


@pytest.mark.parametrize(
    "command",
    [
        ["ask", "where are expired session tokens rejected?"],
        ["ask", "where are expired session tokens rejected?", "--format", "agent"],
        ["search", "session token"],
    ],
)
def test_the_question_embedder_starts_loading_before_the_answer_is_imported(
    indexed_example, command
):
    # The query graph's session builds without the GIL: started before the answer's
    # imports, it is ready when the question is embedded instead of holding the answer
    # up. Once per question: the agent's workspace finds the command's load started.
    code = (
        "import json, sys\n"
        "import numpy as np\n"
        "from dowse.indexer import embed\n"
        "class Embedder:\n"
        "    name, dim = 'fake-hash', 384\n"
        "    def embed(self, texts):\n"
        "        return np.ones((len(texts), self.dim), dtype=np.float32)\n"
        "    def prepare_queries(self, texts):\n"
        f"        loaded.append([m for m in {ANSWER_MODULES!r} if m in sys.modules])\n"
        "loaded = []\n"
        "made = Embedder()\n"
        "embed.EMBEDDERS['fake'] = type('Made', (), {'name': made.name, "
        "'__call__': lambda self: made})()\n"
        + _cli(*command, "--path", str(indexed_example))
        + f"print(json.dumps([loaded, all(m in sys.modules for m in {ANSWER_MODULES[:2]!r})]))"
    )
    assert fresh_python(code, indexed_example) == [[[]], True]


@pytest.mark.parametrize("fmt", [(), AGENT])
def test_the_command_builds_its_validators_without_looking_for_plugins(asked, fmt):
    # pydantic's plugin loader imports importlib.metadata and reads every installed
    # distribution's entry points; the command's records have no use for plugins.
    answered = asked(*fmt)
    assert "dowse.retrieval.loop" in answered["modules"]
    assert not answered["metadata"] and answered["plugins"] == []


@pytest.mark.parametrize("setting", [None, "some_plugin"])
def test_plugins_are_left_to_pydantic_outside_the_command(tmp_path, monkeypatch, setting):
    # A library caller's process, or a command run with pydantic's own setting, keeps
    # pydantic's loader (which reads the setting).
    if setting is None:
        monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
        code = "from dowse.retrieval.records import SearchOptions\nSearchOptions()\n"
    else:
        monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", setting)
        code = _main("--help")
    code += (
        "import json, sys\n"
        "from pydantic import BaseModel\n"
        "class Probe(BaseModel):\n"
        "    n: int = 0\n"
        "loader = sys.modules['pydantic.plugin._loader']\n"
        "print(json.dumps([loader.__file__ is not None, 'importlib.metadata' in sys.modules]))"
    )
    assert fresh_python(code, tmp_path) == [True, True]


def test_the_onnx_cache_key_is_the_runtime_versions_without_importlib_metadata(tmp_path):
    pytest.importorskip("onnxruntime")
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    code = (
        "import hashlib, json, sys\n"
        "from pathlib import Path\n"
        "from dowse.indexer.onnx_embed import EXPORT_VERSION, _cache_key\n"
        f"model = Path({str(tmp_path)!r})\n"
        "key = _cache_key(model)\n"
        "before = 'importlib.metadata' in sys.modules\n"
        "import importlib.metadata\n"
        "st = (model / 'model.safetensors').stat()\n"
        'source = f"{EXPORT_VERSION}:{st.st_size}:{st.st_mtime_ns}:"\n'
        "source += importlib.metadata.version('onnxruntime')\n"
        "then = hashlib.blake2b(source.encode(), digest_size=5).hexdigest()\n"
        "print(json.dumps([before, key == then]))"
    )
    # The key the exported graphs are cached under is what it was with the distribution's
    # metadata: the graphs exported before are found.
    assert fresh_python(code, tmp_path) == [False, True]


def _mimalloc_options(code: str, cwd: Path, **env: str) -> dict[str, str]:
    """mimalloc's options as it reports them (`MIMALLOC_VERBOSE`) in a process running
    `code`, which imports pyarrow."""
    run_env = {k: v for k, v in os.environ.items() if k != "MIMALLOC_ALLOW_THP"}
    run_env.update(MIMALLOC_VERBOSE="1", PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env={**run_env, **env},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    found = re.findall(r"option '(\w+)': (\S+)", out.stderr)
    return dict(found)


@pytest.mark.parametrize("given", [None, "1"])
def test_the_command_gives_arrows_allocator_no_huge_pages(lexical_example, given):
    pa = pytest.importorskip("pyarrow")
    if pa.default_memory_pool().backend_name != "mimalloc":
        pytest.skip("pyarrow is not built with mimalloc here")
    args = ["ask", "where are expired session tokens rejected?", "--path", str(lexical_example)]
    env = {} if given is None else {"MIMALLOC_ALLOW_THP": given}
    options = _mimalloc_options(_main(*args), lexical_example, **env)
    # A 2 MB page zeroed at the first touch of any of its bytes; a value given is kept.
    assert options.get("allow_thp") == ("0" if given is None else given)


def test_a_library_process_leaves_arrows_allocator_as_it_is(tmp_path):
    pa = pytest.importorskip("pyarrow")
    if pa.default_memory_pool().backend_name != "mimalloc":
        pytest.skip("pyarrow is not built with mimalloc here")
    code = "from dowse.indexer.lance import import_pyarrow\nimport_pyarrow().array([1])\n"
    assert _mimalloc_options(code, tmp_path).get("allow_thp") == "1"


def test_redacting_imports_requests_only_when_detect_secrets_uses_it(tmp_path):
    code = (
        "import json, sys\n"
        "from dowse.indexer.secrets import redact\n"
        "shown = redact('token = \"ghp_' + 'a1B2' * 9 + '\"\\n')\n"
        "before = 'requests' in sys.modules\n"
        "from detect_secrets.plugins import base\n"
        "error = base.requests.exceptions.RequestException\n"  # what verifying would catch
        "import requests\n"
        "print(json.dumps([shown, before, error is requests.exceptions.RequestException,\n"
        "                  type(requests).__name__]))"
    )
    shown, before, same, kind = fresh_python(code, tmp_path)
    assert shown == 'token = "[REDACTED]"\n' and not before
    assert same and kind == "module"


def test_redacting_a_text_no_plugin_could_match_imports_no_detect_secrets(tmp_path):
    code = (
        "from dowse.indexer.secrets import redact\n"
        "assert redact('def total(cart):\\n    return sum(cart)\\n', 'a.py') == "
        "'def total(cart):\\n    return sum(cart)\\n'\n"
    )
    assert _imported(code, tmp_path) == set()
    found = code + "redact('password = \"' + 'x' * 12 + '\"\\n', 'a.py')\n"
    assert "detect_secrets" in _imported(found, tmp_path)


def test_the_mcp_handshake_imports_no_searcher_and_no_sdk_client(lexical_example):
    # What `dowse serve` imports before it answers `initialize` and `tools/list`: the
    # records and the SDK's server. The searcher (numpy, pyarrow, LanceDB) is imported
    # by the thread that opens the workspace, the SDK's client never.
    code = (
        "import asyncio, json, sys\n"
        "from pathlib import Path\n"
        "from dowse.server.app import _Opening, build_server\n"
        "from dowse.server.roots import ServedRoot\n"
        f"server = build_server(_Opening([ServedRoot(Path({str(lexical_example)!r}))]))\n"
        "tools = [t.name for t in asyncio.run(server.list_tools())]\n"
        "heavy = ('numpy', 'pyarrow', 'lancedb', 'tree_sitter', 'detect_secrets', 'mcp.client')\n"
        "print(json.dumps([tools, [m for m in heavy if m in sys.modules]]))"
    )
    tools, heavy = fresh_python(code, lexical_example)
    assert len(tools) == 7 and heavy == []


def test_the_package_roots_import_no_stage(tmp_path):
    code = "import dowse.indexer, dowse.retrieval, dowse.explore, dowse.indexer.walk"
    assert _imported(code, tmp_path) == set()


def test_the_cli_process_imports_lancedb_without_pandas(tmp_path):
    code = (
        "import importlib.util, json, sys\n"
        "import overrides\n"
        "real = overrides.override\n"
        "from dowse.indexer import lance\n"
        "lance.leave_out_pandas()\n"
        "lance.import_lancedb()\n"
        "without = 'pandas' not in sys.modules\n"
        "there = importlib.util.find_spec('pandas') is not None\n"
        "if there:\n"
        "    import pandas, pyarrow\n"  # still importable, and to_pandas still works
        "    pyarrow.table({'a': [1]}).to_pandas()\n"
        "from pydantic import BaseModel\n"
        "print(json.dumps([without, overrides.override is real, BaseModel.model_config]))"
    )
    # What the import changed for its own sake is as it was after it.
    assert fresh_python(code, tmp_path) == [True, True, {}]


def test_a_library_process_keeps_pandas_for_pyarrow(tmp_path):
    pytest.importorskip("pandas")
    code = (
        "import json\n"
        "from dowse.indexer import lance\n"
        "lance.import_lancedb()\n"
        "import pandas, pyarrow\n"
        "print(json.dumps([pyarrow.table(pandas.DataFrame({'a': [1]})).num_rows]))"
    )
    assert fresh_python(code, tmp_path) == [1]


def test_lancedb_imports_only_the_namespace_models_it_asks_for(tmp_path):
    code = (
        "import json, sys\n"
        "from dowse.indexer import lance\n"
        "lance.import_lancedb()\n"
        "models = 'lance_namespace_urllib3_client.models.'\n"
        "before = sum(m.startswith(models) for m in sys.modules)\n"
        "import lance_namespace as ns\n"
        "from lance_namespace_urllib3_client import models as m\n"
        "same = [ns.AlterTableAddColumnsRequest is m.AlterTableAddColumnsRequest,\n"
        "        ns.CreateEmptyTableRequest is m.CreateTableRequest,\n"
        "        issubclass(lance.import_lancedb().db.LanceNamespace, ns.LanceNamespace)]\n"
        "after = sum(m.startswith(models) for m in sys.modules)\n"
        "exec('from lance_namespace import *', {})\n"
        "print(json.dumps([before, after, same]))"
    )
    before, after, same = fresh_python(code, tmp_path)
    # lancedb's own imports take a few dozen; the package defines more than a hundred.
    assert before < after / 2 and after > 100
    assert same == [True, True, True]


def test_a_model_name_used_at_run_time_keeps_the_namespace_import_as_it_is():
    import ast

    from dowse.indexer.lance import _uses_at_run_time

    def uses(source: str) -> bool:
        return _uses_at_run_time(ast.parse(source).body, {"Request"})

    # Only annotations, which `from __future__ import annotations` leaves unevaluated.
    assert not uses("class A:\n    def f(self, r: Request) -> Request:\n        pass\n")
    assert not uses("x: Request = 1\n")
    assert uses("def f():\n    return Request()\n")
    assert uses("def f(r=Request):\n    pass\n")
    assert uses("class B(Request):\n    pass\n")
    assert uses("Request = 1\n")
    assert uses("def __getattr__(name):\n    pass\n")
    assert uses("from elsewhere import Request\n")


# -- the no-op run -----------------------------------------------------------------------


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the runs that import LanceDB to open the index."""
    calls: list[int] = []
    real = store_module.import_lancedb

    def counting():
        calls.append(1)
        return real()

    monkeypatch.setattr(store_module, "import_lancedb", counting)
    return calls


AT_ONCE = Retention(grace=timedelta(0))
"""No grace period to wait for after the last commit: a `settled` record is usable at once."""


def _index(repo: Path, embedder, retention: Retention = AT_ONCE, **kw):
    return build_index(repo, config=IndexConfig(retention=retention, **kw), embedder=embedder)


@pytest.fixture
def indexed_example(tmp_path, indexed_examples):
    """The example after its first `_index` (the session's build, copied: conftest). Not
    for a test of how long after its commit a record is used: the copy's commit was
    made when the session's build was."""
    return indexed_examples.copy(tmp_path / "example")


def _report(stats) -> dict:
    return stats.model_dump(exclude={"seconds"})


def test_a_no_op_run_after_a_no_op_run_opens_no_table(indexed_example, fake_embedder, opens):
    example_repo = indexed_example
    slow = _index(example_repo, fake_embedder)  # finds nothing to do: records it
    assert (example_repo / ".dowse" / settled.SETTLED).is_file()
    opened = len(opens)
    fast = _index(example_repo, fake_embedder)
    assert len(opens) == opened
    assert _report(fast) == _report(slow)
    assert fast.parsed == 0 and fast.unchanged == fast.files > 0


@pytest.mark.parametrize(
    "change",
    ["modify", "touch", "delete", "add", "add-unknown", "options", "versions", "embed"],
)
def test_anything_changed_opens_the_index(indexed_example, fake_embedder, opens, change):
    example_repo = indexed_example
    _index(example_repo, fake_embedder)
    source = next(p for p in sorted(example_repo.rglob("*.py")) if ".dowse" not in p.parts)
    kw: dict = {}
    if change == "modify":
        source.write_text(source.read_text() + "\n\ndef added_later():\n    return 1\n")
    elif change == "touch":
        os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10**9))
    elif change == "delete":
        source.unlink()
    elif change == "add":
        (example_repo / "later.py").write_text("def later():\n    return 2\n")
    elif change == "add-unknown":
        (example_repo / "notes.unknownext").write_text("not a known type\n")
    elif change == "options":
        kw["walk"] = WalkConfig(exclude=("docs/",))
    elif change == "versions":
        # A table written past the manifest (an interrupted run): the writer's start must
        # restore it, so the run opens the index.
        versions = next((example_repo / ".dowse" / "db").glob("files*.lance")) / "_versions"
        (versions / "stray").write_text("")
    elif change == "embed":
        kw["embed"] = False
    opened = len(opens)
    stats = _index(example_repo, fake_embedder, **kw)
    assert len(opens) == opened + 1
    if change == "modify":
        assert stats.parsed == 1
    if change == "delete":
        assert stats.deleted == 1


def test_a_commit_makes_the_record_stale(indexed_example, fake_embedder, opens):
    example_repo = indexed_example
    _index(example_repo, fake_embedder)
    (example_repo / "later.py").write_text("def later():\n    return 2\n")
    changed = _index(example_repo, fake_embedder)
    assert changed.parsed == 1
    (example_repo / "later.py").unlink()
    opened = len(opens)
    again = _index(example_repo, fake_embedder)  # the record predates two commits
    assert len(opens) == opened + 1
    assert again.deleted == 1


def test_the_first_no_op_run_after_an_index_opens_no_table(example_repo, fake_embedder, opens):
    # The run that committed records what a run finding nothing to do would: the next
    # run is answered from it, with the report of a run that opens the index.
    _index(example_repo, fake_embedder, Retention())
    opened = len(opens)
    fast = _index(example_repo, fake_embedder, Retention())
    assert len(opens) == opened
    (example_repo / ".dowse" / settled.SETTLED).unlink()
    slow = _index(example_repo, fake_embedder, Retention())
    assert len(opens) == opened + 1
    assert _report(fast) == _report(slow)
    assert fast.parsed == 0 and fast.unchanged == fast.files > 0


def test_a_run_that_leaves_vectors_owed_records_nothing(example_repo, fake_embedder, monkeypatch):
    # A run stopped after its first commit (the vectors not embedded yet): the next run
    # has them to embed.
    monkeypatch.setattr(build_module._Run, "_commit_vectors", lambda self, missing, catch_up: 0)
    stats = _index(example_repo, fake_embedder, Retention())
    assert stats.vectors_pending > 0
    assert not (example_repo / ".dowse" / settled.SETTLED).exists()
    monkeypatch.undo()
    assert _index(example_repo, fake_embedder, Retention()).embedded > 0


class _Clock:
    """The writer's clock (`build_index(clock=...)`), moved on by the test instead of
    waited for."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def test_a_record_is_used_until_a_writer_has_something_to_drop(example_repo, fake_embedder, opens):
    # Right after a commit the writer keeps what it replaced for the grace period: a
    # writer's start finds nothing to drop until that period ends, so the record answers
    # no-op runs meanwhile, and the first run after it opens the index to prune.
    clock = _Clock()
    config = IndexConfig(retention=Retention())
    index_dir = example_repo / ".dowse"
    build_index(example_repo, config=config, embedder=fake_embedder, clock=clock)
    clock.now += 1
    slow = build_index(example_repo, config=config, embedder=fake_embedder, clock=clock)
    opened = len(opens)
    clock.now += 1
    fast = build_index(example_repo, config=config, embedder=fake_embedder, clock=clock)
    assert len(opens) == opened
    assert _report(fast) == _report(slow)
    manifest = store_module.Store.read_manifest(index_dir)
    recorded = json.loads((index_dir / settled.SETTLED).read_text())
    until = settled.until(manifest, Retention().grace, recorded["checked"])
    assert until is not None and until > clock.now
    options = recorded["options"]
    assert settled.load(index_dir, manifest, options, now=until - 0.5)
    assert settled.load(index_dir, manifest, options, now=until) is None
    clock.now = until
    build_index(example_repo, config=config, embedder=fake_embedder, clock=clock)
    assert len(opens) == opened + 1


def test_a_damaged_record_is_ignored(indexed_example, fake_embedder, opens):
    example_repo = indexed_example
    slow = _index(example_repo, fake_embedder)
    (example_repo / ".dowse" / settled.SETTLED).write_text("{not json")
    opened = len(opens)
    again = _index(example_repo, fake_embedder)
    assert len(opens) == opened + 1
    assert _report(again) == _report(slow)
