"""Pictures of the import graph (`dowse explore --graph`): the record, the self-contained
page, the Mermaid text, and the CLI option, on a little repo with two packages, a cycle and
hostile file names.

The Mermaid golden file is regenerated with `python tests/test_explore_graph.py`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dowse.explore.graph import graph_format, render_html, render_mermaid, write_graph
from dowse.explore.imports import import_graph, imports_track
from dowse.explore.records import ImportGraph
from dowse.explore.run import explore
from dowse.explore.tracks import Context, run_track

GOLDEN = Path(__file__).parent / "golden" / "graph_fixture.mmd"
IMG = "lib/<img src=x onerror=alert(1)>.py"
SCRIPT = "lib/a<script>alert(1)</script>.py"  # a directory `a<script>alert(1)<`, then a file
FILES = {
    "app/__init__.py": "",
    "app/main.py": "from app import models\nfrom lib import util\n",
    # models -> views -> models is the cycle.
    "app/models.py": "from app import views\nfrom lib.util import helper\n",
    "app/views.py": "from app import models\nfrom lib.util import helper\n",
    "lib/__init__.py": "",
    "lib/util.py": "def helper():\n    return 1\n",
    IMG: "from lib import util\n",
    SCRIPT: "import lib.util\n",
    "README.md": "# demo\n",
}
NODES = sorted(p for p in FILES if p.endswith(".py"))
EDGES = {
    ("app/main.py", "app/models.py"),
    ("app/main.py", "lib/util.py"),
    ("app/models.py", "app/views.py"),
    ("app/models.py", "lib/util.py"),
    ("app/views.py", "app/models.py"),
    ("app/views.py", "lib/util.py"),
    (IMG, "lib/util.py"),
    (SCRIPT, "lib/util.py"),
}
CYCLE = ["app/models.py", "app/views.py"]


def _repo(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _graph(root: Path) -> ImportGraph:
    return import_graph(Context(root=root))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return _repo(tmp_path / "repo")


class _Page(HTMLParser):
    """Every tag with its attributes, the script's text, and each node's tooltip."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.titles: dict[str, str] = {}  # node class + data-i -> tooltip
        self._node: str | None = None
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "g" and (a.get("class") or "").split()[:1] == ["n"]:
            self._node = f"{a['class']}#{a['data-i']}"
        self._in = tag

    def handle_endtag(self, tag: str) -> None:
        self._in = None
        if tag == "g":
            self._node = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "title" and self._node is not None:
            self.titles[self._node] = data


def _page(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


def test_import_graph_is_the_graph_the_track_reports(repo):
    graph = _graph(repo)
    assert [n.path for n in graph.nodes] == NODES
    assert {n.path: n.package for n in graph.nodes} == {p: p.split("/")[0] for p in NODES}
    assert {(e.source, e.target) for e in graph.edges} == EDGES
    assert {(e.source, e.target) for e in graph.edges if e.cycle} == {
        ("app/models.py", "app/views.py"),
        ("app/views.py", "app/models.py"),
    }
    assert graph.components == [CYCLE] and graph.cycles == [CYCLE]
    assert {n.path for n in graph.nodes if n.component == 0} == set(CYCLE)
    assert max(graph.nodes, key=lambda n: n.rank).path == "lib/util.py"
    # The same numbers as the imports track on the same files.
    _, output = run_track(ctx := Context(root=repo), imports_track(ctx))
    report = output["imports"]
    assert (report.modules, report.edges, report.cycles) == (len(NODES), len(EDGES), [CYCLE])
    rank = {n.path: round(n.rank, 4) for n in graph.nodes}
    assert all(rank[p] == r for p, r in report.central)


@pytest.mark.parametrize("depth", ["deep", "standard"])
def test_explore_hands_over_the_graph_its_imports_track_built(repo, depth, monkeypatch):
    import dowse.explore.imports as imports

    parses = []
    gather = imports._gather
    monkeypatch.setattr(imports, "_gather", lambda *a: parses.append(1) or gather(*a))
    graphs: list[ImportGraph] = []
    explore(repo, depth=depth, on_graph=graphs.append)
    # The track's parse is the graph's at depth deep: one parse, not two.
    assert len(parses) == 1
    assert graphs == [_graph(repo)]


@pytest.mark.parametrize(
    "layout, expected",
    [
        # One top directory is looked through, down to where the files part.
        ({"src/pkg/a/x.py", "src/pkg/b/y.py"}, {"src/pkg/a", "src/pkg/b"}),
        ({"top.py", "pkg/x.py"}, {".", "pkg"}),
    ],
)
def test_packages_are_the_first_level_that_splits_the_files(tmp_path, layout, expected):
    for rel in layout:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("import os\n")
    assert {n.package for n in _graph(tmp_path).nodes} == expected


def test_page_has_every_node_marks_the_cycle_and_fetches_nothing(repo):
    text = render_html(_graph(repo))
    page = _page(text)
    tooltips = {title.split("\n")[0]: node for node, title in page.titles.items()}
    assert sorted(tooltips) == NODES
    on_cycle = {p for p, node in tooltips.items() if " cy" in node.split("#")[0]}
    assert on_cycle == set(CYCLE)
    red = [a for tag, a in page.tags if tag == "path" and "cy" in (a.get("class") or "").split()]
    assert len(red) == 2  # models -> views and back
    for tag, attrs in page.tags:
        for name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
            assert name not in attrs, (tag, attrs)
    assert not re.search(r"@import|url\((?!#)|@font-face", text)
    # The policy lets nothing load and runs exactly the page's own script.
    policy = next(a["content"] for t, a in page.tags if a.get("http-equiv"))
    assert policy is not None and "default-src 'none'" in policy
    (script,) = page.scripts
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy


def test_hostile_file_names_are_text_not_markup(repo):
    text = render_html(_graph(repo))
    page = _page(text)
    assert [t for t, _ in page.tags].count("script") == 1
    assert "img" not in [t for t, _ in page.tags]
    assert "<script>alert" not in text and "<img src" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;.py" in text
    labels = set(page.titles.values())
    assert any(t.startswith(IMG + "\n") for t in labels)
    assert any(t.startswith(SCRIPT + "\n") for t in labels)


def test_page_and_mermaid_are_deterministic(repo, tmp_path):
    first, second = _graph(repo), _graph(_repo(tmp_path / "copy" / "repo"))
    assert render_html(first) == render_html(second)
    assert render_mermaid(first) == render_mermaid(second)


def test_mermaid_matches_the_golden_file(repo):
    assert render_mermaid(_graph(repo)) == GOLDEN.read_text()


def test_mermaid_has_subgraphs_edges_and_cycle_styling(repo):
    text = render_mermaid(_graph(repo))
    lines = text.splitlines()
    body = [ln for ln in lines if not ln.startswith("%%")]
    assert body[0] == "flowchart LR"
    assert [ln.strip() for ln in lines if ln.strip().startswith("subgraph")] == [
        'subgraph g0 ["app"]',  # as large as lib: by name
        'subgraph g1 ["lib"]',
    ]
    assert sum(ln.strip() == "end" for ln in lines) == 2
    nodes = [m.groups() for ln in lines if (m := re.match(r'\s+(n\d+)\["(.*)"\]$', ln))]
    assert len(nodes) == len(NODES)
    ids = {label: node for node, label in nodes}
    assert ids["&lt;img src=x onerror=alert(1)&gt;.py"]  # escaped, never raw
    assert ids["a&lt;script&gt;alert(1)&lt;/script&gt;.py"]
    assert not any("<" in ln for ln in body)
    links = [ln.strip() for ln in lines if re.match(r"\s+n\d+ (-->|==>) n\d+$", ln)]
    assert len(links) == len(EDGES)
    thick = [i for i, ln in enumerate(links) if "==>" in ln]
    assert {links[i] for i in thick} == {
        f"{ids['models.py']} ==> {ids['views.py']}",
        f"{ids['views.py']} ==> {ids['models.py']}",
    }
    assert f"  linkStyle {','.join(map(str, thick))} stroke:#d62728,stroke-width:3px" in lines
    assert f"  class {','.join(sorted([ids['models.py'], ids['views.py']]))} cycle" in lines
    assert f"  class {ids['util.py']} hub" in lines


def test_mermaid_labels_escape_markup_entities_and_control_characters():
    from dowse.explore.graph import _mermaid_label

    # Mermaid reads "#35;" as its own entity code and a leading backtick as Markdown.
    assert _mermaid_label('`a"b#35;<c>&\nd') == '"&grave;a&quot;b&num;35;&lt;c&gt;&amp;\ufffdd"'


def test_only_the_most_central_modules_are_drawn(repo):
    graph = _graph(repo)
    page = _page(render_html(graph, max_nodes=3))
    drawn = sorted(t.split("\n")[0] for t in page.titles.values())
    top = sorted(n.path for n in sorted(graph.nodes, key=lambda n: (-n.rank, n.path))[:3])
    assert drawn == top
    assert "the 3 most central modules; 5 less central modules are left out" in "".join(
        render_html(graph, max_nodes=3).split("\n")
    )
    mermaid = render_mermaid(graph, max_nodes=3)
    assert "%% Drawn: the 3 most central modules; 5 less central ones are left out." in mermaid
    assert len(re.findall(r"^\s+n\d+\[", mermaid, re.M)) == 3


@pytest.mark.parametrize(
    "name, fmt",
    [("g.html", "html"), ("g.HTM", "html"), ("g.mmd", "mermaid"), ("g.mermaid", "mermaid")],
)
def test_the_suffix_picks_the_format(repo, tmp_path, name, fmt):
    out = tmp_path / name
    assert graph_format(out) == fmt
    assert write_graph(_graph(repo), out) == fmt
    assert out.read_text().startswith("<!DOCTYPE html>" if fmt == "html" else "%% Import graph")


def _report(stdout: str) -> dict:
    """The JSON report without its timings (which differ from run to run)."""
    report = json.loads(stdout)
    del report["timings"]
    for track in report["tracks"]:
        del track["seconds"]
    return report


def test_cli_writes_the_graph_and_leaves_the_report_alone(repo, tmp_path, run):
    plain = _report(run("explore", str(repo), "--json").stdout)
    for name, start in (("g.html", "<!DOCTYPE html>"), ("g.mmd", "%% Import graph")):
        out = tmp_path / name
        result = run("explore", str(repo), "--json", "--graph", str(out))
        assert _report(result.stdout) == plain
        assert result.stderr == (f"wrote the import graph (8 modules, 8 edges, 1 cycle) to {out}\n")
        assert out.read_text().startswith(start)


@pytest.mark.parametrize(
    "name, message",
    [
        ("graph.png", "the file must end in .html, .htm, .mmd or .mermaid"),
        ("graph", "the file must end in .html, .htm, .mmd or .mermaid"),
        ("missing/graph.html", "No such file or directory"),
    ],
)
def test_cli_bad_graph_file_is_a_one_line_error(repo, tmp_path, run, name, message):
    out = tmp_path / name
    result = run("explore", str(repo), "--graph", str(out), code=1)
    assert result.output == f"Error: cannot write the graph to {out}: {message}\n"
    assert not out.exists()


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        GOLDEN.write_text(render_mermaid(_graph(_repo(Path(tmp)))))
    sys.stdout.write(f"wrote {GOLDEN}\n")
