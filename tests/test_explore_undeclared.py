"""The "imported but declared in no manifest" divergence is true: import names map to their
distributions; TYPE_CHECKING-only, optional, test and example imports are not needed;
examples' manifests are not the project's; open questions are about the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import git, make_tree

from dowse.explore import explore
from dowse.explore.distributions import distributions
from dowse.explore.import_guards import guard
from dowse.explore.records import (
    Citation,
    Dependency,
    ExploreResult,
    GateResult,
    ImportReport,
    ManifestReport,
    TrackFindings,
    TrackSpec,
)
from dowse.explore.synthesis import synthesize
from dowse.explore.tree import NO_ENTRY_POINT

GUARDED = """\
from __future__ import annotations

import typing as t

import requests

if t.TYPE_CHECKING:
    from typing_extensions import Self
    import yaml
else:
    import json

try:
    import ujson
except ImportError:
    import simplejson as ujson


def f():
    try:
        import orjson
    except (ModuleNotFoundError, ValueError):
        orjson = None
    import toml
    return toml
"""


def sites(*packages: str) -> dict[str, Citation]:
    """An import of each package, as the imports track records it."""
    return {
        p: Citation(
            path=f"src/{re.sub(r'[^a-z]', '_', p)}_user.py",
            start_line=1,
            end_line=1,
            quote=f"import {p}",
        )
        for p in packages
    }


def line_at(root: Path, ref: str) -> str:
    path, line = ref.rsplit(":", 1)
    return (root / path).read_text().splitlines()[int(line) - 1]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (5, None),  # requests
        (8, "TYPE_CHECKING"),
        (9, "TYPE_CHECKING"),
        (11, None),  # the else branch runs
        (14, "optional"),
        (16, "optional"),  # the fallback
        (21, "optional"),  # in a function, still optional
        (24, None),  # a lazy import, but unconditional
    ],
)
def test_guard_reads_the_enclosing_blocks(line, why):
    assert guard(GUARDED.splitlines(), line) == why


CHECKED = """\
def namespace(x):
    if hasattr(x, "__array_namespace__"):
        return x.__array_namespace__()
    elif isinstance(x, array_type("cupy")):
        import cupy as cp

        return cp
    if HAS_SPARSE:
        import sparse
    if x:
        import toml
"""


@pytest.mark.parametrize(
    ("line", "package", "why"),
    [
        (5, "cupy", "checked"),  # xarray: only where a cupy array was passed
        (9, "sparse", "checked"),
        (11, "toml", None),  # a condition that does not name it
        (5, "", None),
    ],
)
def test_an_import_under_a_check_that_names_its_package_is_not_needed(line, package, why):
    assert guard(CHECKED.splitlines(), line, package) == why


def test_import_names_map_to_distributions():
    assert "python-dotenv" in distributions("dotenv")
    assert "pyyaml" in distributions("yaml")
    assert "pillow" in distributions("PIL")
    assert "scikit-learn" in distributions("sklearn")
    assert "opencv-python" in distributions("cv2")
    assert "beautifulsoup4" in distributions("bs4")
    assert "requests" in distributions("requests")
    # installed metadata: pydantic_core is installed with dowse, as pydantic-core
    assert "pydantic-core" in distributions("pydantic_core")


PROJECT = {
    "pyproject.toml": (
        '[project]\nname = "app"\ndependencies = ["python-dotenv", "PyYAML"]\n\n'
        '[project.optional-dependencies]\nfast = ["ujson"]\n'
    ),
    "app/__init__.py": "",
    # dotenv and yaml are declared under their distributions' names
    "app/config.py": "import dotenv\nimport yaml\n",
    "app/load.py": "import dotenv\nimport yaml\nimport missingpkg\n",
    "app/more.py": "import missingpkg\n",
    # typing_extensions only for the type checker, ujson optional, pytest in tests only
    "app/types.py": "import typing\n\nif typing.TYPE_CHECKING:\n    import typing_extensions\n",
    "app/types2.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
    "    from typing_extensions import Self\n",
    "app/fast.py": "try:\n    import ujson as json\nexcept ImportError:\n    import json\n",
    "app/fast2.py": "try:\n    import ujson\nexcept ImportError:\n    ujson = None\n",
    "tests/test_a.py": "import pytest\nimport _pytest\n",
    "tests/test_b.py": "import pytest\nimport _pytest\n",
    # an example's own dependency, declared by the example's manifest only
    "examples/demo/requirements.txt": "celery\nrequests\n",
    "examples/demo/a.py": "import celery\nimport requests\n",
    "examples/demo/b.py": "import celery\nimport requests\n",
}


def test_only_what_the_project_needs_and_does_not_declare_is_undeclared(tmp_path):
    make_tree(tmp_path, PROJECT)
    result = explore(tmp_path, depth="deep")
    assert result.imports is not None
    assert result.imports.conditional == {
        "pytest": "only in tests",
        "_pytest": "only in tests",
        "typing_extensions": "only under TYPE_CHECKING",
        "ujson": "only in try/except ImportError",
        "celery": "only in examples or docs",
        "requests": "only in examples or docs",
    }
    undeclared = [n for n in result.synthesis.divergences if "no manifest declares" in n]
    # Each side cited: an import of the package, and the project's declared dependencies.
    assert undeclared == [
        "`missingpkg` is imported by 2 files (as at app/load.py:3) but no manifest declares "
        "it under that name (pyproject.toml declares the runtime dependencies from "
        "pyproject.toml:3, `python-dotenv` first)"
    ]
    assert line_at(tmp_path, "app/load.py:3") == "import missingpkg"
    assert "python-dotenv" in line_at(tmp_path, "pyproject.toml:3")
    # the project's manifest first, the example's after it and named as such
    assert result.dependencies.manifests == [
        "pyproject.toml",
        "examples/demo/requirements.txt",
    ]
    assert result.dependencies.examples == ["examples/demo/requirements.txt"]
    assert (
        "3 dependencies declared in pyproject.toml "
        "(and 1 manifest of examples, tests, benchmarks and docs)" in result.summary
    )


def test_an_explored_example_is_the_project_its_manifest_declares_for(tmp_path):
    """Exploring `examples/demo` makes the example the subject: its manifest is the
    project's, not one of the examples' (what the path above the scope says)."""
    make_tree(tmp_path, PROJECT)
    git(tmp_path, "init", "-q")  # the repository's root, above the explored example
    result = explore(tmp_path / "examples" / "demo")
    assert result.dependencies.manifests == ["examples/demo/requirements.txt"]
    assert result.dependencies.examples == []
    assert [d.name for d in result.dependencies.dependencies] == ["celery", "requests"]
    assert "2 dependencies declared in examples/demo/requirements.txt;" in result.summary


def test_a_declared_entry_point_answers_the_trees_open_question(tmp_path: Path):
    """No file's name makes an entry point, but the manifest declares one or makes a
    package: no open question."""
    spec = TrackSpec(name="tree", focus=".", approach="", gates=[], deliverable="")
    result = ExploreResult(
        path=".",
        root=str(tmp_path),
        depth="deep",
        tracks=[TrackFindings(track=spec, gaps=[NO_ENTRY_POINT])],
    )
    assert synthesize(result).open_questions == [NO_ENTRY_POINT]
    result.dependencies = ManifestReport(
        manifests=["pyproject.toml"], entry_points={"shop": "shop.api.routes:main"}
    )
    assert synthesize(result).open_questions == []
    # a manifest that makes a package (a library, entered through its API) answers it too
    result.dependencies = ManifestReport(manifests=["pom.xml"], names=["jackson-core"])
    assert synthesize(result).open_questions == []


def test_an_examples_manifest_declares_nothing_for_the_project():
    spec = TrackSpec(name="imports", focus=".", approach="", gates=[], deliverable="")
    result = ExploreResult(
        path=".",
        root="/r",
        depth="deep",
        dependencies=ManifestReport(
            manifests=["pyproject.toml", "examples/x/pyproject.toml"],
            examples=["examples/x/pyproject.toml"],
            dependencies=[
                Dependency(name="click", manifest="pyproject.toml", line=4),
                Dependency(name="celery", manifest="examples/x/pyproject.toml", line=4),
            ],
        ),
        imports=ImportReport(
            external=[("celery", 3), ("click", 4)], sites=sites("celery", "click")
        ),
        tracks=[TrackFindings(track=spec, gates=[GateResult(name="x", passed=True, detail="")])],
    )
    assert synthesize(result).divergences == [
        "`celery` is imported by 3 files (as at src/celery_user.py:1) but no manifest "
        "declares it under that name (pyproject.toml declares the runtime dependencies from "
        "pyproject.toml:4, `click` first)"
    ]
    # Without a line where the package is imported, that side is not cited: no divergence.
    assert result.imports is not None
    result.imports.sites.pop("celery")
    assert synthesize(result).divergences == []


def test_open_questions_are_about_the_repository(tmp_path: Path):
    spec = TrackSpec(name="t", focus=".", approach="", gates=[], deliverable="")
    gaps = [
        "no README in scope",
        "measured on a sample of 40 of 83 files in 21 directories: counts are estimates",
        "no pattern rules for bash (1 file): structure only",
        "without an index, imports of the scope from outside it are not known",
        "edges follow import statements only: dynamic imports are not seen",
        "docs/README.md names none of docs's functions and no usage rule: no specialist",
        "listed 30 of 52 key files by convention",
        "2 directories list only their first 25 children",
        "3 relative imports name no file here (generated or missing modules)",
        "2 more test commands not listed",
    ]
    result = ExploreResult(
        path=".",
        root=str(tmp_path),
        depth="deep",
        tracks=[TrackFindings(track=spec, gaps=gaps)],
    )
    assert synthesize(result).open_questions == [
        "no README in scope",
        "3 relative imports name no file here (generated or missing modules)",
    ]


def test_a_package_is_declared_by_its_module_path_or_an_extra_named_after_it():
    spec = TrackSpec(name="imports", focus=".", approach="", gates=[], deliverable="")
    result = ExploreResult(
        path=".",
        root="/r",
        depth="deep",
        dependencies=ManifestReport(
            manifests=["go.mod"],
            dependencies=[
                Dependency(name="google.golang.org/protobuf", manifest="go.mod", line=5),
                Dependency(name="github.com/cncf/xds/go", manifest="go.mod"),
                Dependency(name="h5netcdf", spec="[h5py, scipy]>=1.8", manifest="go.mod"),
            ],
        ),
        imports=ImportReport(
            external=[
                ("google.golang.org/protobuf/types", 9),  # a package of a declared module
                ("github.com/cncf/xds", 4),  # the part of a module path it imports from
                ("github.com/other/thing", 3),
                ("h5py", 5),  # pulled in by an extra named after it
                ("scipy", 2),
            ],
            sites=sites("github.com/other/thing"),
        ),
        tracks=[TrackFindings(track=spec, gates=[GateResult(name="x", passed=True, detail="")])],
    )
    assert synthesize(result).divergences == [
        "`github.com/other/thing` is imported by 3 files (as at "
        "src/github_com_other_thing_user.py:1) but no manifest declares it under that name "
        "(go.mod declares the runtime dependencies from go.mod:5, "
        "`google.golang.org/protobuf` first)"
    ]


def test_the_projects_own_package_and_newer_stdlib_modules_are_not_undeclared(tmp_path):
    make_tree(
        tmp_path,
        {
            # dayjs: its plugins and tests import `dayjs`, the package its manifest makes
            "package.json": (
                '{\n  "name": "dayjs",\n  "dependencies": {\n    "tslib": "^2"\n  }\n}\n'
            ),
            "src/plugin/a.js": "import dayjs from 'dayjs'\nimport pad from 'leftpad'\n",
            "src/plugin/b.js": "import dayjs from 'dayjs'\nimport pad from 'leftpad'\n",
            # sphinx on Python 3.14: `annotationlib` is the standard library's
            "pyproject.toml": '[project]\nname = "sphinxish"\ndependencies = ["docutils"]\n',
            "sphinxish/__init__.py": "",
            "sphinxish/a.py": "import annotationlib\nimport docutils\n",
            "sphinxish/b.py": "import annotationlib\nimport docutils\n",
        },
    )
    result = explore(tmp_path, depth="deep")
    assert result.dependencies.names == ["dayjs", "sphinxish"]
    undeclared = [n for n in result.synthesis.divergences if "no manifest declares" in n]
    assert [n.split("`")[1] for n in undeclared] == ["leftpad"]
    assert line_at(tmp_path, undeclared[0].split("as at ")[1].split(")")[0]).endswith("'leftpad'")


def test_a_rust_path_through_the_files_own_module_is_no_package(tmp_path):
    # clap_builder's str.rs and os_str.rs: `pub(crate) use inner::Inner;` names the
    # file's own `mod inner { ... }`, not a crate named `inner`.
    own = (
        "pub(crate) mod inner {\n"
        "    pub(crate) struct Inner;\n"
        "}\n"
        "\n"
        "pub(crate) use inner::Inner;\n"
        "use missing::Thing;\n"
    )
    make_tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\n\n'
            '[dependencies]\nserde = "1"\n',
            "src/lib.rs": "mod str;\nmod os_str;\n",
            "src/str.rs": own,
            "src/os_str.rs": own,
        },
    )
    result = explore(tmp_path, depth="deep")
    undeclared = [n for n in result.synthesis.divergences if "no manifest declares" in n]
    assert [n.split("`")[1] for n in undeclared] == ["missing"]
