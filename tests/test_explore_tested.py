"""The tests explorer: test files found through the index's references and by each
ecosystem's naming convention, each cited."""

from __future__ import annotations

import pytest
from conftest import make_tree

from dowse.explore import tested
from dowse.explore.callers import callers_track
from dowse.explore.tracks import Context, run_track
from dowse.indexer.build import IndexConfig, build_index
from dowse.indexer.store import Store
from dowse.languages import is_test_support_path
from dowse.retrieval.hybrid import HybridSearcher


def _context(root, embedder, *, index=False) -> Context:
    """A track's context over `root`'s index (built first, without vectors, if `index`),
    searched with `embedder`."""
    if index:
        build_index(root, config=IndexConfig(embed=False), embedder=embedder)
    ctx = Context(root=root)
    ctx.use_searcher(HybridSearcher(Store.open(root / ".dowse"), lambda: embedder))
    return ctx


@pytest.mark.parametrize(
    "path, name",
    [
        ("testing/test_tmpdir.py", "tmpdir"),
        ("tests/tmpdir_test.py", "tmpdir"),
        ("pkg/sleep_test.go", "sleep"),
        ("test/plugin/utc.test.js", "utc"),
        ("src/__tests__/format.spec.ts", "format"),
        ("src/test/java/org/x/ConfigTest.java", "Config"),
        ("src/test/java/org/x/TestConfig.java", "Config"),
        ("tokio/tests/time_sleep.rs", "time_sleep"),
        ("src/__tests__/format.js", "format"),
        ("src/tmpdir.py", None),  # no test
        # Under a test directory, but not named as a test: an app or helper the tests use.
        ("tests/test_apps/cliapp/inner1/inner2/flask.py", None),
        ("testing/apps/app.py", None),
        ("src/test/java/org/x/Fixtures.java", None),
    ],
)
def test_a_test_files_name_is_its_subject_without_the_test_affixes(path, name):
    assert tested.tested_name(path) == name


def test_a_generic_file_name_goes_by_its_directory():
    assert tested.subject_of("src/plugin/utc/index.js") == "utc"
    assert tested.subject_of("src/_pytest/config/__init__.py") == "config"
    assert tested.subject_of("tokio/src/time/mod.rs") == "time"
    assert tested.subject_of("src/lib.rs") == "lib"  # a crate's root is no directory's name


REPO = {
    "src/pkg/__init__.py": "",
    "src/pkg/tmpdir.py": (
        "def make_tmp(base):\n"  # 1
        "    return base + '/tmp'\n"
        "\n"
        "\n"
        "class Factory:\n"  # 5
        "    pass\n"
        "\n"
        "\n"
        "def clean(base):\n"  # 9
        "    return base\n"
    ),
    "src/pkg/other.py": "def rotate():\n    return 1\n",
    "testing/test_misc.py": (
        "from pkg import tmpdir\n"  # 1
        "\n"
        "\n"
        "def test_misc():\n"  # 4
        "    assert tmpdir.make_tmp('a')\n"  # 5: through the module
    ),
    "testing/test_tmpdir.py": (
        "from pkg.tmpdir import Factory, make_tmp\n"  # 1
        "\n"
        "\n"
        "def test_make():\n"  # 4
        "    assert make_tmp('a') == 'a/tmp'\n"  # 5
        "\n"
        "\n"
        "def test_again():\n"  # 8
        "    assert make_tmp('b')\n"  # 9
    ),
    "testing/test_other.py": "import os\n\n\ndef test_it():\n    assert os.sep\n",
    # An app the tests load, at a test path: after the files named as tests.
    "testing/apps/app.py": "from pkg.tmpdir import make_tmp\n\nBASE = make_tmp('app')\n",
    # A fixture: the only code at a test path that calls `clean`.
    "testing/conftest.py": (
        "from pkg.tmpdir import clean\n\n\ndef cleaned():\n    return clean('x')\n"
    ),
    "web/src/plugin/utc/index.js": "export default function utc() {\n  return 0\n}\n",
    "web/test/plugin/utc.test.js": (
        "import dayjs from '../../src'\n"  # 1
        "import utc from '../../src/plugin/utc'\n"  # 2
        "\n"
        "it('works', () => {})\n"
    ),
    # An example of how to write a test is no test of the code (pytest's doc/en/example/).
    "doc/example/test_tmpdir.py": "from pkg.tmpdir import make_tmp\n\nmake_tmp('x')\n",
    "srv/sleep.go": "package srv\n\nfunc Sleep() {}\n",
    "srv/sleep_test.go": 'package srv\n\nimport "testing"\n\nfunc TestSleep(t *testing.T) {}\n',
}


@pytest.fixture
def repo(tmp_path, fake_embedder):
    root = make_tree(tmp_path / "repo", REPO)
    (root / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    build_index(root, config=IndexConfig(embed=False), embedder=fake_embedder)
    return root


def test_the_tests_are_those_that_reference_the_definitions_and_those_named_after_answers(
    repo, fake_embedder
):
    ctx = _context(repo, fake_embedder)
    answers = ["src/pkg/other.py", "web/src/plugin/utc/index.js", "srv/sleep.go"]
    track = tested.tests_track(ctx, "how does make_tmp work?", answer_files=lambda: answers)
    found, _ = run_track(ctx, track)
    assert [(f.claim, f.citations[0].ref, f.citations[0].quote) for f in found.findings] == [
        # By reference: the test file named after the definition's file first, its first
        # call cited; then the one that reaches it through `from pkg import tmpdir`.
        (
            "`test_make` in testing/test_tmpdir.py calls `make_tmp` (src/pkg/tmpdir.py:1-2) "
            "(and 1 more test in the file)",
            "testing/test_tmpdir.py:5",
            "assert make_tmp('a') == 'a/tmp'",
        ),
        (
            "`test_misc` in testing/test_misc.py calls `make_tmp` (src/pkg/tmpdir.py:1-2)",
            "testing/test_misc.py:5",
            "assert tmpdir.make_tmp('a')",
        ),
        # By name: each ecosystem's convention, cited where the test names the subject.
        (
            "testing/test_other.py is named after src/pkg/other.py (`test_other.py` for `other`)",
            "testing/test_other.py:1",
            "import os",
        ),
        (
            "web/test/plugin/utc.test.js is named after web/src/plugin/utc/index.js and "
            "names `utc` at line 2",
            "web/test/plugin/utc.test.js:2",
            "import utc from '../../src/plugin/utc'",
        ),
        (
            "srv/sleep_test.go is named after srv/sleep.go (`sleep_test.go` for `sleep`)",
            "srv/sleep_test.go:1",
            "package srv",
        ),
        # A file under a test directory that is not named as a test is an app or a helper
        # the tests use: test support, after every test, said so.
        (
            "test support: `BASE` in testing/apps/app.py calls `make_tmp` (src/pkg/tmpdir.py:1-2)",
            "testing/apps/app.py:3",
            "BASE = make_tmp('app')",
        ),
    ]
    assert all(g.passed for g in found.gates)
    assert found.gates[0].detail.startswith("5 test files (and 1 test support file) for ")


def test_a_definition_only_test_support_references_is_untested(repo, fake_embedder):
    ctx = _context(repo, fake_embedder)
    found, _ = run_track(ctx, tested.tests_track(ctx, "how does clean work?"))
    assert [(f.claim, f.citations[0].ref) for f in found.findings] == [
        (
            "test support: `cleaned` in testing/conftest.py calls `clean` (src/pkg/tmpdir.py:9-10)",
            "testing/conftest.py:5",
        )
    ]
    assert "no test references `clean`" in found.gaps


@pytest.mark.parametrize(
    "path, support",
    [
        ("tests/conftest.py", True),  # pytest's fixtures
        ("tests/test_apps/cliapp/app.py", True),  # flask's apps the tests load
        ("tests/helpers.py", True),
        ("tests/test_basic.py", False),
        ("tests/basic_test.py", False),
        ("tests/admin_views/tests.py", False),  # django's tests.py
        ("pkg/testdata/input_test.go", True),  # Go's testdata is never built
        ("internal/tests/helpers.go", True),
        ("cmd_test.go", False),
        ("tests/common/mod.rs", True),  # a module the Rust test crates share
        ("tests/cli.rs", False),  # a Rust test crate
        ("tests/suite/main.rs", False),
        ("src/test/java/org/x/Fixtures.java", True),
        ("src/test/java/org/x/ConfigTest.java", False),
        ("spec/spec_helper.rb", True),
        ("spec/user_spec.rb", False),
        ("test/app.js", False),  # mocha runs every file in test/
        ("test/fixtures/app.js", True),
        ("t/t0001-init.sh", False),
        ("src/pkg/tmpdir.py", False),  # no test path at all
    ],
)
def test_test_support_is_code_at_a_test_path_that_is_no_test(path, support):
    assert is_test_support_path(path) is support


# Where the runner collects tests by directory (Rust's tests/, mocha's test/), a helper
# module is known by what imports it: the tests import it, nothing imports a test.
HELPERS = {
    "Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\n',
    "src/lib.rs": "pub fn checkout() -> u32 {\n    1\n}\n",
    "tests/suite.rs": "mod flow;\nmod util;\n",  # the test crate's root (autotests off)
    "tests/util.rs": "use shop::checkout;\n\npub fn ready() -> u32 {\n    checkout()\n}\n",
    "tests/flow.rs": (
        "use crate::util::ready;\n"  # 1
        "use shop::checkout;\n"
        "\n"
        "#[test]\n"
        "fn flows() {\n"  # 5
        "    assert_eq!(checkout(), ready());\n"  # 6
        "}\n"
    ),
    "web/src/cart.js": "export function total() {\n  return 1\n}\n",
    "web/test/helpers.js": (
        "import { total } from '../src/cart'\n\nexport function made() {\n  return total()\n}\n"
    ),
    "web/test/cart.js": (
        "import { made } from './helpers'\n"  # 1
        "import { total } from '../src/cart'\n"
        "\n"
        "it('totals', () => {\n"  # 4
        "  total(made())\n"  # 5
        "})\n"
    ),
}


@pytest.mark.parametrize(
    "question, test, helper",
    [
        (
            "how does checkout work?",
            "`flows` in tests/flow.rs calls `checkout` (src/lib.rs:1-3)",
            "test support: `ready` in tests/util.rs calls `checkout` (src/lib.rs:1-3)",
        ),
        (
            "how does total work?",
            "web/test/cart.js calls `total` (web/src/cart.js:1-3)",
            "test support: `made` in web/test/helpers.js calls `total` (web/src/cart.js:1-3)",
        ),
    ],
)
def test_a_helper_other_tests_import_is_test_support(
    tmp_path, fake_embedder, question, test, helper
):
    root = make_tree(tmp_path / "repo", HELPERS)
    ctx = _context(root, fake_embedder, index=True)
    found, _ = run_track(ctx, tested.tests_track(ctx, question))
    assert [f.claim for f in found.findings] == [test, helper]
    assert found.gates[0].detail.startswith("1 test file (and 1 test support file) for ")


def test_a_helper_of_a_rust_mod_tests_is_no_definition_to_find_tests_of(tmp_path, fake_embedder):
    files = {
        "Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\n',
        "src/lib.rs": (
            "pub fn checkout() -> u32 {\n"  # 1
            "    1\n"
            "}\n"
            "\n"
            "#[cfg(test)]\n"  # 5
            "mod tests {\n"
            "    fn sample() -> u32 {\n"  # 7: a helper of the tests
            "        super::checkout()\n"
            "    }\n"
            "\n"
            "    #[test]\n"
            "    fn samples() {\n"  # 12
            "        assert_eq!(sample(), 1);\n"
            "    }\n"
            "}\n"
        ),
    }
    root = make_tree(tmp_path / "repo", files)
    ctx = _context(root, fake_embedder, index=True)
    found, _ = run_track(ctx, tested.tests_track(ctx, "how does sample work?"))
    assert not found.findings  # `tests.samples` calling `tests.sample` tests no code
    found, _ = run_track(ctx, tested.tests_track(ctx, "how does checkout work?"))
    assert [f.claim for f in found.findings] == [
        "`tests.sample` in src/lib.rs calls `checkout` (src/lib.rs:1-3)"
    ]


def test_no_test_found_fails_the_first_gate_with_what_was_looked_for(repo, fake_embedder):
    ctx = _context(repo, fake_embedder)
    found, _ = run_track(ctx, tested.tests_track(ctx, "how does rotate work?"))
    assert not found.findings
    assert found.gates[0].passed is False
    assert found.gates[0].detail == "no test references or is named after rotate"


def test_the_names_a_questions_words_make_are_each_looked_up_the_tested_first(
    tmp_path, fake_embedder
):
    # tokio: "who calls spawn?" names three `spawn_task` methods (spawn + task) before
    # the `spawn` its tests call.
    files = {
        "src/sched.py": "".join(
            f"class S{i}:\n    def spawn_task(self):\n        return {i}\n\n\n" for i in range(3)
        )
        + "def spawn(task):\n    return task\n",
        "tests/test_runtime.py": "from sched import spawn\n\n\ndef test_it():\n    spawn(1)\n",
    }
    root = make_tree(tmp_path / "repo", files)
    ctx = _context(root, fake_embedder, index=True)
    found, _ = run_track(ctx, tested.tests_track(ctx, "how is a task spawned and run?"))
    assert [(f.claim, f.citations[0].ref) for f in found.findings] == [
        (
            "`test_it` in tests/test_runtime.py calls `spawn` (src/sched.py:16-17)",
            "tests/test_runtime.py:5",
        )
    ]


# A Rust crate whose test helper lives under src/, compiled for the tests alone by its
# declaration (ripgrep's crates/searcher/src/testutil.rs, `#[cfg(test)] mod testutil;`).
TEST_MODULE = {
    "Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\n',
    "src/lib.rs": "pub mod search;\n\n#[cfg(test)]\nmod testutil;\n",
    "src/search.rs": (
        "pub fn search(x: u32) -> u32 {\n"  # 1
        "    x + 1\n"
        "}\n"
        "\n"
        "pub fn run() -> u32 {\n"  # 5
        "    search(1)\n"
        "}\n"
        "\n"
        "#[cfg(test)]\n"
        "mod tests {\n"  # 10
        "    use crate::testutil::Tester;\n"
        "\n"
        "    #[test]\n"
        "    fn finds() {\n"
        "        Tester::new().check();\n"  # 15
        "    }\n"
        "}\n"
    ),
    "src/testutil.rs": (
        "use crate::search::search;\n"
        "\n"
        "pub struct Tester;\n"
        "\n"
        "impl Tester {\n"  # 5
        "    pub fn new() -> Tester {\n"
        "        Tester\n"
        "    }\n"
        "\n"
        "    pub fn check(&self) -> u32 {\n"  # 10
        "        search(2)\n"
        "    }\n"
        "}\n"
    ),
}


def test_a_rust_module_declared_for_the_tests_is_test_code(tmp_path, fake_embedder):
    root = make_tree(tmp_path / "repo", TEST_MODULE)
    ctx = _context(root, fake_embedder, index=True)
    assert ctx.test_modules() == {"src/testutil.rs"}
    # Its calls are test support's, not code's: not a test either (it is named as none).
    found, _ = run_track(ctx, tested.tests_track(ctx, "how does search work?"))
    assert [f.claim for f in found.findings] == [
        "test support: `Tester.check` in src/testutil.rs calls `search` (src/search.rs:1-3)"
    ]
    # Its definitions are the tests', not code to find the tests of.
    found, _ = run_track(ctx, tested.tests_track(ctx, "how does check work?"))
    assert not found.findings
    # The callers track leaves it out with the tests, unless the question asks for them.
    found, _ = run_track(ctx, callers_track(ctx, "who calls search?"))
    assert [f.claim.split(" calls ")[0] for f in found.findings] == ["`run` in src/search.rs"]
    # The retrieval ranks it as a test.
    analysis = ctx.searcher().analyze("how does search work?")
    assert analysis.unasked_role("src/testutil.rs") == "a test"
    assert analysis.unasked_role("src/search.rs") is None


def test_a_test_crates_macro_module_is_test_support(tmp_path, fake_embedder):
    # ripgrep's tests/tests.rs: `#[macro_use] mod macros;` lends `rgtest!` to the test
    # modules it declares after it; tests/macros.rs is no test, the tests use it.
    files = {
        "Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\n',
        "src/lib.rs": "pub fn search(x: u32) -> u32 {\n    x + 1\n}\n",
        "tests/tests.rs": "#[macro_use]\nmod macros;\n\nmod feature;\n",
        "tests/macros.rs": (
            "#[macro_export]\n"
            "macro_rules! rgtest {\n"
            "    ($name:ident) => {\n"
            "        #[test]\n"
            "        fn $name() {\n"  # 5
            "            shop::search(1);\n"
            "        }\n"
            "    };\n"
            "}\n"
        ),
        "tests/feature.rs": "rgtest!(finds);\n\n#[test]\nfn direct() {\n    shop::search(2);\n}\n",
    }
    root = make_tree(tmp_path / "repo", files)
    ctx = _context(root, fake_embedder, index=True)
    assert tested.imported_support(ctx.searcher(), ["tests/macros.rs", "tests/feature.rs"]) == {
        "tests/macros.rs"
    }
