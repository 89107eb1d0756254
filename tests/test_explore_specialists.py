"""Module specialists: an internal module with an AGENTS.md and an installed package with
docstrings, each judging how the rest of the code uses it. Misuse, missed conveniences and
uses are reported with verified citations; nothing is written."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from conftest import make_tree

from dowse.explore.specialists import MAX_SPECIALISTS, specialist_tracks
from dowse.explore.tracks import Context, run_track

AGENTS = """\
# app.config

Settings for the whole app.

- `load_config()` returns the parsed settings.
- Use `load_config()` instead of reading settings.json directly.
- `old_settings()` is deprecated; use `load_config()` instead.
- `slugify(text)` turns a title into a URL slug.
- Do not call `raw_env()`; use `env()` instead.

```python
cfg = load_config()
```
"""

REPO = {
    "app/__init__.py": "",
    "app/config/AGENTS.md": AGENTS,
    "app/config/__init__.py": """\
import json
import os


def load_config():
    with open("settings.json") as f:
        return json.load(f)


def old_settings():
    return load_config()


def slugify(text):
    return "-".join(text.lower().split())


def raw_env(key):
    return os.environ[key]


def env(key):
    return raw_env(key)
""",
    "app/views.py": """\
from app.config import load_config, old_settings


def show():
    cfg = load_config()
    legacy = old_settings()
    return cfg, legacy
""",
    "app/report.py": """\
import json


def read_settings():
    # settings.json is read here by hand
    with open("settings.json") as f:
        return json.load(f)
""",
    "app/util.py": """\
from app.config import load_config


def slugify(title):
    return title.lower().replace(" ", "-")


def load_config_helper():
    return load_config()
""",
    "web/slug.js": "export function slugify(text) {\n  return text;\n}\n",
    "tests/test_views.py": """\
from app.config import old_settings


def test_old():
    assert old_settings() is not None
""",
    "README.md": "# app\n\nUse `load_config()` instead of reading settings.json directly.\n",
}

LIBRARY = {
    "__init__.py": '''\
"""dowsefakelib: small helpers."""
import warnings

from .text import make_title

__all__ = ["fetch_json", "old_fetch", "legacy_get", "make_title", "Client"]


def fetch_json(url, strict=None):
    """Fetch `url` and decode its JSON body."""
    if strict is not None:
        warnings.warn("strict is deprecated", DeprecationWarning)


def old_fetch(url):
    """Fetch a URL.

    .. deprecated:: 2.0
       Use :func:`fetch_json` instead.
    """


def legacy_get(url):
    """Get a URL."""
    warnings.warn("legacy_get is deprecated, use fetch_json instead", DeprecationWarning)


def _private():
    """Not documented for users."""


class Client:
    """A reusable session.

    Args:
        retries: how often to retry; ``timeout`` is deprecated, use ``deadline``.
    """
''',
    "text.py": 'def make_title(text):\n    """Title-case `text` like a headline."""\n',
}

USERS = {
    "app/__init__.py": "",
    "app/use1.py": "import dowsefakelib\n\n\ndef go():\n    return dowsefakelib.fetch_json('u')\n",
    "app/use2.py": "import dowsefakelib as lib\nfrom dowsefakelib import make_title\n\n\n"
    "def go():\n    data = lib.old_fetch('u')\n    return make_title(data)\n",
    "app/use3.py": "from dowsefakelib import legacy_get, Client\n\n\n"
    "def go():\n    return legacy_get('u'), Client()\n",
    "app/titles.py": "import dowsefakelib\n\n\ndef make_title(text):\n"
    "    return text.title()\n\n\ndef fetch_json_impl(url):\n"
    "    return dowsefakelib.fetch_json(url)\n",
    "app/missing.py": "import notinstalledpkg4711\n",
    "app/missing2.py": "import notinstalledpkg4711\n",
    "app/missing3.py": "import notinstalledpkg4711.sub\n",
}


def _tree_hash(root: Path) -> str:
    digest = hashlib.blake2b()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            digest.update(str(p.relative_to(root)).encode() + p.read_bytes())
    return digest.hexdigest()


def _run_all(ctx: Context):
    return {t.spec.name: run_track(ctx, t)[0] for t in specialist_tracks(ctx)}


def _claims(result, prefix: str) -> list:
    return [f for f in result.findings if f.claim.startswith(prefix)]


@pytest.fixture
def library(tmp_path, monkeypatch):
    site = make_tree(tmp_path / "site" / "dowsefakelib", LIBRARY).parent
    monkeypatch.syspath_prepend(str(site))
    return site


def test_an_internal_module_with_agents_md(tmp_path):
    root = make_tree(tmp_path / "repo", REPO)
    before = _tree_hash(root)
    results = _run_all(Context(root=root))
    assert _tree_hash(root) == before  # review only
    # The root README documents the repository, not a module.
    assert list(results) == ["uses of app/config"]
    result = results["uses of app/config"]
    assert [g.passed for g in result.gates] == [True, True, True]
    assert result.dropped == []

    misuse = _claims(result, "Misuse")
    assert [f.claim for f in misuse] == [
        "Misuse of app/config: 'settings.json' is used directly at app/report.py:6, but "
        "app/config/AGENTS.md:6 says: 'Use `load_config()` instead of reading settings.json "
        "directly.'; idiomatic alternative: `load_config()`",
        "Misuse of app/config: `old_settings()` is called at app/views.py:6, but "
        "app/config/AGENTS.md:7 says: '`old_settings()` is deprecated; use `load_config()` "
        "instead.'; idiomatic alternative: `load_config()`",
    ]
    assert [[(c.ref, c.quote) for c in f.citations] for f in misuse] == [
        [
            ("app/report.py:6", 'with open("settings.json") as f:'),
            (
                "app/config/AGENTS.md:6",
                "- Use `load_config()` instead of reading settings.json directly.",
            ),
        ],
        [
            ("app/views.py:6", "legacy = old_settings()"),
            (
                "app/config/AGENTS.md:7",
                "- `old_settings()` is deprecated; use `load_config()` instead.",
            ),
        ],
    ]
    # The comment in report.py, the test calling old_settings() and the module's own
    # load_config() reading settings.json are not misuse.

    missed = _claims(result, "Missed convenience")
    assert [f.claim for f in missed] == [
        "Missed convenience: app/util.py:4 defines `slugify`, re-implementing app/config's "
        "`slugify` (defined at app/config/__init__.py:14, documented at "
        "app/config/AGENTS.md:8); idiomatic alternative: call `slugify` from app/config"
    ]
    assert [c.ref for c in missed[0].citations] == ["app/util.py:4", "app/config/AGENTS.md:8"]
    # load_config_helper wraps load_config(): not a re-implementation; web/slug.js cannot
    # call the Python slugify.

    used = [f.claim for f in result.findings if " is used at " in f.claim]
    assert used == [
        "`load_config` (documented at app/config/AGENTS.md:5) is used at 2 sites in 2 "
        "files: app/util.py:9, app/views.py:5",
        "`old_settings` (documented at app/config/AGENTS.md:7) is used at 2 sites in 2 "
        "files: app/views.py:6, tests/test_views.py:5",
    ]
    assert result.findings[0].claim == (
        "app/config documents 5 of its APIs in app/config/AGENTS.md: env, load_config, "
        "old_settings, raw_env, slugify"
    )
    assert "documented but not used outside app/config: env, raw_env, slugify" in result.conclusions
    assert result.gates[2].detail == ("2 documented APIs used, 1 missed conveniences, 2 misuses")


def test_a_literal_a_helper_is_documented_to_handle(tmp_path):
    files = {**REPO, "app/config/AGENTS.md": "`load_config()` reads settings.json and caches it.\n"}
    result = _run_all(Context(root=make_tree(tmp_path, files)))["uses of app/config"]
    assert result.dropped == [] and all(g.passed for g in result.gates)
    assert [f.claim for f in _claims(result, "Missed")] == [
        "Missed convenience: 'settings.json' is handled by hand at app/report.py:6, but "
        "app/config/AGENTS.md:1 says: '`load_config()` reads settings.json and caches it.'; "
        "idiomatic alternative: `load_config()`"
    ]


def test_an_installed_package_read_from_its_docstrings(tmp_path, library):
    root = make_tree(tmp_path / "repo", USERS)
    before = _tree_hash(root)
    results = _run_all(Context(root=root))
    assert _tree_hash(root) == before
    assert list(results) == ["uses of dowsefakelib"]
    result = results["uses of dowsefakelib"]
    assert [g.passed for g in result.gates] == [True, True, True]
    assert result.dropped == []
    assert result.findings[0].claim == (
        "`dowsefakelib` is imported by 4 files in scope: app/titles.py:1, app/use1.py:1, "
        "app/use2.py:1 and 1 more"
    )
    assert [f.claim for f in _claims(result, "Misuse")] == [
        "Misuse of dowsefakelib: `old_fetch()` is called at app/use2.py:6, but the "
        "documentation of `old_fetch` says: '.. deprecated:: 2.0 Use :func:`fetch_json` "
        "instead.'; idiomatic alternative: `fetch_json`",
        "Misuse of dowsefakelib: `legacy_get()` is called at app/use3.py:5, but the "
        "documentation of `legacy_get` says: 'legacy_get is deprecated, use fetch_json "
        "instead'; idiomatic alternative: `fetch_json`",
    ]
    # fetch_json only warns about an argument; Client's deprecation is about an argument.
    assert [f.claim for f in _claims(result, "Missed")] == [
        "Missed convenience: app/titles.py:4 defines `make_title`, re-implementing "
        "dowsefakelib's `make_title` (documented: 'Title-case `text` like a headline.'); "
        "idiomatic alternative: call `make_title` from dowsefakelib"
    ]
    used = {f.claim.split("`")[1]: f for f in result.findings if " is used at " in f.claim}
    assert sorted(used) == ["Client", "fetch_json", "legacy_get", "make_title", "old_fetch"]
    assert [c.ref for c in used["fetch_json"].citations] == ["app/titles.py:9", "app/use1.py:5"]
    assert [c.ref for c in used["old_fetch"].citations] == ["app/use2.py:6"]
    # An import the code makes but dowse cannot read the docs of: a gap, no specialist.
    assert result.gaps[0] == (
        "`notinstalledpkg4711` is imported by 3 of 8 Python files but is not installed here "
        "as Python source: no offline documentation, no specialist"
    )


def test_internal_modules_and_packages_alternate_up_to_the_cap(tmp_path, library):
    files = dict(USERS)
    for i in range(5):
        files[f"mod{i}/AGENTS.md"] = f"Call `helper{i}()` for everything.\n"
        files[f"mod{i}/core.py"] = f"def helper{i}():\n    return {i}\n"
    files["README.md"] = "# root\n"
    files["docs/README.md"] = "`helper0()` is documented here too.\n"  # no code: no module
    root = make_tree(tmp_path / "repo", files)
    names = [t.spec.name for t in specialist_tracks(Context(root=root))]
    assert len(names) == MAX_SPECIALISTS
    assert names == [
        "uses of mod0",
        "uses of dowsefakelib",
        "uses of mod1",
        "uses of mod2",
    ]


def test_a_doc_that_names_no_function_makes_no_specialist(tmp_path):
    files = {
        "pkg/README.md": "# pkg\n\nThe `pkg/core.py` module does the work.\n",
        "pkg/core.py": "def work():\n    return 1\n",
    }
    assert specialist_tracks(Context(root=make_tree(tmp_path, files))) == []


def test_the_scope_limits_what_is_reviewed(tmp_path):
    root = make_tree(tmp_path, REPO)
    # Inside app/config only the module itself is in scope: it is not its own specialist.
    assert specialist_tracks(Context(root=root, scope="app/config")) == []
    result = _run_all(Context(root=root, scope="app"))["uses of app/config"]
    assert result.track.focus == "how app uses app/config"
    assert all(c.path.startswith("app/") for f in result.findings for c in f.citations)


def test_a_track_run_twice_reports_the_same(tmp_path, library):
    files = {**USERS, **{k: v for k, v in REPO.items() if k.startswith("app/config")}}
    ctx = Context(root=make_tree(tmp_path / "repo", files))
    for track in specialist_tracks(ctx):
        first, _ = run_track(ctx, track)
        again, _ = run_track(ctx, track)
        assert again.findings == first.findings and again.gates == first.gates
        assert first.passed
