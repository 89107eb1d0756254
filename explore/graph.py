"""Pictures of the import graph: a self-contained HTML page, and Mermaid text.

The page is an inline SVG laid out here, in Python: one box per package (coloured, packed
in rows, tallest first), the package's modules in a grid inside it, most central first;
PageRank sizes each node. Edges are curves, so that a→b and b→a stay apart; an edge whose
ends are on one import cycle (a strongly connected component) is red, and so is the ring
of every module on a cycle. A little inline script highlights a module's imports on hover
and pans and zooms. The Mermaid text is the same graph as `flowchart LR`: a `subgraph` per
package, thick red edges for cycles, bigger and bolder labels for the central modules.

Invariants:
- Self-contained: no element has an external `src` or `href`, the style and the script are
  inline, fonts are the system's. A Content-Security-Policy meta tag allows no fetch at all
  and runs only the page's own script (by its hash): a name that got past escaping could
  still neither run nor load anything.
- Every name is escaped where it is written (paths and packages are file names: untrusted):
  `html.escape` in HTML text and attributes; in Mermaid only generated ids are bare, and
  labels are quoted, with `&`, `<`, `>`, quotes, `#` and backticks as HTML entities (which
  mermaid shows as text) and control characters replaced. No name is written into the
  script or a Mermaid comment.
- Deterministic: the same graph gives the same bytes (no randomness, no clock).
- At most `max_nodes` modules are drawn, the most central (ties by path); Mermaid keeps at
  most MAX_MERMAID_EDGES edges (mermaid's own default limit), cycle edges first. What was
  left out is said on the page and in the Mermaid text.
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from dowse.errors import InvalidPath
from dowse.explore.records import GraphEdge, GraphNode, ImportGraph

__all__ = [
    "MAX_MERMAID_EDGES",
    "MAX_NODES",
    "GraphFormat",
    "graph_format",
    "render_html",
    "render_mermaid",
    "write_graph",
]

GraphFormat = Literal["html", "mermaid"]

MAX_NODES = 300
"""Modules drawn at most: the most central ones."""
MAX_MERMAID_EDGES = 500
"""Mermaid refuses to draw more edges than this by default (its `maxEdges`)."""
MAX_LISTED = 10
"""Cycles and central modules listed beside the picture."""

_SUFFIXES: dict[str, GraphFormat] = {
    ".html": "html",
    ".htm": "html",
    ".mmd": "mermaid",
    ".mermaid": "mermaid",
}
_CYCLE = "#d62728"
_EDGE = "#8795a8"
# Tableau-like colours without red, which marks cycles.
_PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#b07aa1",
    "#76b7b2",
    "#edc948",
    "#9c755f",
    "#ff9da7",
    "#6b6ecf",
    "#8cd17d",
    "#bab0ac",
    "#d4a6c8",
)

# Layout, in SVG units.
_FONT = 11.0
_CHAR = 0.58 * _FONT  # a system sans-serif's average character width
_R_MIN, _R_MAX = 4.5, 22.0
_PAD, _HEADER, _COL_GAP, _ROW_GAP, _BOX_GAP = 14.0, 26.0, 18.0, 10.0, 30.0
_ASPECT = 1.3
"""Width over height of the picture's part of a laptop window, the sidebar aside."""
_FAINT_FROM = 400
"""Above this many drawn edges, edges fade with the square root of their number."""
_MIN_VIEW = (820.0, 580.0)
"""A small graph is drawn at this size or less, not blown up to fill the window."""


def graph_format(out: Path) -> GraphFormat:
    """The format a graph file's suffix asks for (.html/.htm or .mmd/.mermaid)."""
    fmt = _SUFFIXES.get(out.suffix.lower())
    if fmt is None:
        raise InvalidPath(
            f"cannot write the graph to {out}: the file must end in .html, .htm, .mmd or .mermaid"
        )
    return fmt


def write_graph(graph: ImportGraph, out: Path, *, max_nodes: int = MAX_NODES) -> GraphFormat:
    """Write `graph` to `out` as its suffix asks; the format written."""
    fmt = graph_format(out)
    text = (
        render_html(graph, max_nodes=max_nodes)
        if fmt == "html"
        else render_mermaid(graph, max_nodes=max_nodes)
    )
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InvalidPath(f"cannot write the graph to {out}: {exc.strerror or exc}") from None
    return fmt


# -- what is drawn -------------------------------------------------------------------------


@dataclass
class _Drawn:
    nodes: list[GraphNode]
    """Sorted by path; a node's position here is its id."""
    edges: list[GraphEdge]
    left_out: int
    index: dict[str, int] = field(default_factory=dict)
    packages: list[str] = field(default_factory=list)
    """Largest first; a package's position here picks its colour."""

    def colour(self, package: str) -> str:
        return _PALETTE[self.packages.index(package) % len(_PALETTE)]


def _drawn(graph: ImportGraph, max_nodes: int) -> _Drawn:
    ranked = sorted(graph.nodes, key=lambda n: (-n.rank, n.path))
    kept = sorted(ranked[: max(max_nodes, 0)], key=lambda n: n.path)
    index = {n.path: i for i, n in enumerate(kept)}
    edges = [e for e in graph.edges if e.source in index and e.target in index]
    sizes: dict[str, int] = defaultdict(int)
    for n in kept:
        sizes[n.package] += 1
    packages = sorted(sizes, key=lambda p: (-sizes[p], p))
    return _Drawn(kept, edges, len(graph.nodes) - len(kept), index, packages)


def _label(path: str, package: str) -> str:
    """The path inside its package (a basename, unless the package has subdirectories)."""
    prefix = "" if package == "." else package + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


def _scale(drawn: _Drawn) -> dict[str, float]:
    """Each node's radius: the square root of its PageRank, between _R_MIN and _R_MAX."""
    ranks = [n.rank for n in drawn.nodes]
    low, high = min(ranks, default=0.0), max(ranks, default=0.0)
    spread = high - low
    return {
        n.path: _R_MIN + (_R_MAX - _R_MIN) * (math.sqrt((n.rank - low) / spread) if spread else 0.5)
        for n in drawn.nodes
    }


# -- layout --------------------------------------------------------------------------------


@dataclass
class _Box:
    package: str
    nodes: list[GraphNode]
    w: float = 0.0
    h: float = 0.0
    x: float = 0.0
    y: float = 0.0
    at: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Node centres relative to the box."""


def _text_width(text: str, size: float = _FONT) -> float:
    return len(text) * _CHAR * size / _FONT


def _lay_box(box: _Box, radius: dict[str, float]) -> None:
    """The box's modules in a grid, most central first, columns as wide as their labels."""
    n = len(box.nodes)
    cols = max(1, math.ceil(math.sqrt(n * 0.3)))
    rows = math.ceil(n / cols)
    grid = [box.nodes[i : i + cols] for i in range(0, n, cols)]
    col_r = [max(radius[r[c].path] for r in grid if c < len(r)) for c in range(cols)]
    col_w = [
        col_r[c]
        + max(
            radius[r[c].path] + 4 + _text_width(_label(r[c].path, box.package))
            for r in grid
            if c < len(r)
        )
        for c in range(cols)
    ]
    row_h = [max(max(2 * radius[m.path] for m in r), _FONT + 4) for r in grid]
    y = _HEADER
    for ri in range(rows):
        x = _PAD
        for ci, m in enumerate(grid[ri]):
            box.at[m.path] = (x + col_r[ci], y + row_h[ri] / 2)
            x += col_w[ci] + _COL_GAP
        y += row_h[ri] + _ROW_GAP
    inner = sum(col_w) + _COL_GAP * (cols - 1)
    title = _text_width(_box_title(box), 13) + 8
    box.w = 2 * _PAD + max(inner, title)
    box.h = y - _ROW_GAP + _PAD


def _package_title(package: str) -> str:
    return "(top level)" if package == "." else package


def _box_title(box: _Box) -> str:
    return f"{_package_title(box.package)} · {len(box.nodes)}"


def _shelves(boxes: list[_Box], target: float) -> tuple[float, float]:
    """Place `boxes` in rows no wider than `target` (unless one box is); (width, height)."""
    x = y = row_h = width = 0.0
    for b in boxes:
        if x and x + b.w > target:
            x, y, row_h = 0.0, y + row_h + _BOX_GAP, 0.0
        b.x, b.y = x, y
        x += b.w + _BOX_GAP
        row_h = max(row_h, b.h)
        width = max(width, b.x + b.w)
    return width, y + row_h


def _pack(boxes: list[_Box]) -> tuple[float, float]:
    """Shelf packing, tallest first, at the row width whose picture fills a window of
    _ASPECT best (the smallest picture once scaled to fit); (width, height)."""
    boxes.sort(key=lambda b: (-b.h, b.package))
    widest = max((b.w for b in boxes), default=0.0)
    total = sum(b.w + _BOX_GAP for b in boxes)
    steps = 40
    targets = [widest + (total - widest) * i / steps for i in range(steps + 1)]

    def fitted(target: float) -> float:
        w, h = _shelves(boxes, target)
        return max(w, h * _ASPECT)

    best = min(targets, key=fitted)  # the first of equals: min keeps order
    return _shelves(boxes, best)


def _layout(drawn: _Drawn, radius: dict[str, float]) -> tuple[list[_Box], float, float]:
    members: dict[str, list[GraphNode]] = defaultdict(list)
    for n in sorted(drawn.nodes, key=lambda n: (-n.rank, n.path)):
        members[n.package].append(n)
    boxes = [_Box(p, members[p]) for p in drawn.packages]
    for b in boxes:
        _lay_box(b, radius)
    width, height = _pack(boxes)
    return boxes, width, height


def _curve(a: tuple[float, float], b: tuple[float, float], ra: float, rb: float) -> str | None:
    """An SVG path from circle a to circle b, bent to its left, ending at b's rim."""
    (x0, y0), (x1, y1) = a, b
    dx, dy = x1 - x0, y1 - y0
    length = math.hypot(dx, dy)
    if length <= ra + rb + 2:
        return None
    bend = min(0.18 * length, 70.0)
    cx, cy = (x0 + x1) / 2 - dy / length * bend, (y0 + y1) / 2 + dx / length * bend

    def rim(px: float, py: float, r: float) -> tuple[float, float]:
        ux, uy = cx - px, cy - py
        d = math.hypot(ux, uy) or 1.0
        return px + ux / d * r, py + uy / d * r

    sx, sy = rim(x0, y0, ra)
    ex, ey = rim(x1, y1, rb + 2)
    return f"M{sx:.1f} {sy:.1f}Q{cx:.1f} {cy:.1f} {ex:.1f} {ey:.1f}"


# -- HTML ----------------------------------------------------------------------------------

_STYLE = """
*{box-sizing:border-box}
html,body{margin:0;height:100%;font:13px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
"Helvetica Neue",Arial,sans-serif;color:#1f2933;background:#f7f8fa}
body{display:flex}
aside{width:320px;flex:none;height:100%;overflow:auto;padding:16px 18px;background:#fff;
border-right:1px solid #dde1e6}
main{flex:1;position:relative;min-width:0}
svg{width:100%;height:100%;display:block;user-select:none}
svg.live{cursor:grab}
svg.live:active{cursor:grabbing}
h1{font-size:17px;margin:0 0 2px}
h2{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:#66707d;
margin:16px 0 6px}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
.muted{color:#66707d}
ul{list-style:none;margin:0;padding:0}
li{margin:2px 0;overflow-wrap:anywhere}
.sw{display:inline-block;width:11px;height:11px;border-radius:3px;margin-right:6px;
vertical-align:-1px}
.ring{display:inline-block;width:11px;height:11px;border-radius:50%;margin-right:6px;
vertical-align:-1px;border:2.5px solid #d62728;background:#cfd6df}
.warn{background:#fff4e5;border:1px solid #f5c98b;border-radius:6px;padding:6px 8px;
margin:10px 0}
#info{position:absolute;left:12px;bottom:12px;max-width:70%;background:rgba(255,255,255,.95);
border:1px solid #dde1e6;border-radius:6px;padding:6px 9px;white-space:pre-wrap;
font-size:12px;pointer-events:none}
#info:empty{display:none}
.box rect{stroke-width:1.2}
.box text{font-size:13px;font-weight:600}
.e{fill:none;stroke-width:1.1;opacity:calc(.42 * var(--k, 1))}
.e.cy{stroke:#d62728;opacity:calc(.32 * var(--k, 1))}
.e.sc{stroke-width:2.4;opacity:.95}
.n circle{stroke:#fff;stroke-width:1.5}
.n.cy circle{stroke:#d62728;stroke-width:3}
.n text{font-size:11px;fill:#1f2933;paint-order:stroke;stroke:#f7f8fa;stroke-width:3px;
stroke-linejoin:round}
.n.big text{font-weight:600}
svg.focus .e{opacity:.05}
svg.focus .n{opacity:.3}
svg.focus .e.hi{opacity:1;stroke-width:2.2}
svg.focus .n.hi{opacity:1}
"""

_SCRIPT = """
(function () {
  var svg = document.querySelector("main svg");
  svg.classList.add("live");  // panning works: say so with the cursor
  var info = document.getElementById("info");
  var nodes = Array.prototype.slice.call(svg.querySelectorAll(".n"));
  var edges = Array.prototype.slice.call(svg.querySelectorAll(".e"));
  var touching = {};
  edges.forEach(function (e) {
    [e.getAttribute("data-s"), e.getAttribute("data-t")].forEach(function (k) {
      (touching[k] = touching[k] || []).push(e);
    });
  });
  function clear() {
    svg.classList.remove("focus");
    svg.querySelectorAll(".hi").forEach(function (x) { x.classList.remove("hi"); });
    info.textContent = "";
  }
  nodes.forEach(function (n) {
    n.addEventListener("mouseenter", function () {
      svg.classList.add("focus");
      n.classList.add("hi");
      (touching[n.getAttribute("data-i")] || []).forEach(function (e) {
        e.classList.add("hi");
        nodes[+e.getAttribute("data-s")].classList.add("hi");
        nodes[+e.getAttribute("data-t")].classList.add("hi");
      });
      info.textContent = n.querySelector("title").textContent;
    });
    n.addEventListener("mouseleave", clear);
  });
  var vb = svg.viewBox.baseVal;
  var home = [vb.x, vb.y, vb.width, vb.height];
  function at(ev) {
    return new DOMPoint(ev.clientX, ev.clientY).matrixTransform(svg.getScreenCTM().inverse());
  }
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var k = ev.deltaY > 0 ? 1.15 : 1 / 1.15, p = at(ev);
    vb.x = p.x - (p.x - vb.x) * k;
    vb.y = p.y - (p.y - vb.y) * k;
    vb.width *= k;
    vb.height *= k;
  }, { passive: false });
  var grip = null;
  svg.addEventListener("pointerdown", function (ev) { grip = at(ev); });
  svg.addEventListener("pointermove", function (ev) {
    if (!grip) return;
    var p = at(ev);
    vb.x += grip.x - p.x;
    vb.y += grip.y - p.y;
  });
  ["pointerup", "pointerleave"].forEach(function (t) {
    svg.addEventListener(t, function () { grip = null; });
  });
  svg.addEventListener("dblclick", function () {
    vb.x = home[0]; vb.y = home[1]; vb.width = home[2]; vb.height = home[3];
  });
})();
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _arrow(name: str, colour: str) -> str:
    return (
        f'<marker id="{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        f'markerHeight="7" markerUnits="userSpaceOnUse" orient="auto">'
        f'<path d="M0 1L10 5L0 9z" fill="{colour}"/></marker>'
    )


def _ink(colour: str) -> str:
    """`colour` darkened for text on a light background."""
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{int(c * 0.62):02x}" for c in (r, g, b))


def _cycle_edges(graph: ImportGraph) -> set[tuple[str, str]]:
    """The edges of the shortest cycles the imports explorer reports."""
    return {(a, b) for c in graph.cycles for a, b in zip(c, c[1:] + c[:1], strict=True)}


def _svg(graph: ImportGraph, drawn: _Drawn) -> str:
    radius = _scale(drawn)
    boxes, width, height = _layout(drawn, radius)
    centre = {p: (b.x + x, b.y + y) for b in boxes for p, (x, y) in b.at.items()}
    importers: dict[str, int] = defaultdict(int)
    imported: dict[str, int] = defaultdict(int)
    for e in graph.edges:
        importers[e.target] += 1
        imported[e.source] += 1
    big = sorted(drawn.nodes, key=lambda n: (-n.rank, n.path))[: max(1, len(drawn.nodes) // 10)]
    big_paths = {n.path for n in big}
    view_w, view_h = max(width + 48, _MIN_VIEW[0]), max(height + 48, _MIN_VIEW[1])
    out = [
        f'<svg viewBox="{(width - view_w) / 2:.0f} {(height - view_h) / 2:.0f} '
        f'{view_w:.0f} {view_h:.0f}" role="img" aria-label="import graph" '
        # Many edges: each fainter, so that the picture stays a picture.
        f'style="--k:{min(1.0, math.sqrt(_FAINT_FROM / max(len(drawn.edges), 1))):.2f}">',
        "<defs>",
        _arrow("a", _EDGE),
        _arrow("ac", _CYCLE),
        "</defs>",
        '<g class="boxes">',
    ]
    for b in boxes:
        colour = drawn.colour(b.package)
        out.append(
            f'<g class="box"><rect x="{b.x:.1f}" y="{b.y:.1f}" width="{b.w:.1f}" '
            f'height="{b.h:.1f}" rx="10" fill="{colour}" fill-opacity=".09" stroke="{colour}" '
            f'stroke-opacity=".55"/><text x="{b.x + _PAD:.1f}" y="{b.y + 18:.1f}" '
            f'fill="{_ink(colour)}">{_e(_box_title(b))}</text></g>'
        )
    out.append('</g><g class="edges">')
    package = {n.path: n.package for n in drawn.nodes}
    shortest = _cycle_edges(graph)
    # Cycle edges last, the shortest cycles' on top, so that they are drawn over the others.
    for e in sorted(drawn.edges, key=lambda e: (e.cycle, (e.source, e.target) in shortest)):
        d = _curve(centre[e.source], centre[e.target], radius[e.source], radius[e.target])
        if d is None:
            continue
        same = package[e.source] == package[e.target]
        stroke = (
            "" if e.cycle else f' stroke="{drawn.colour(package[e.source]) if same else _EDGE}"'
        )
        kind = (" cy" if e.cycle else "") + (" sc" if (e.source, e.target) in shortest else "")
        out.append(
            f'<path class="e{kind}" d="{d}"{stroke} '
            f'marker-end="url(#{"ac" if e.cycle else "a"})" '
            f'data-s="{drawn.index[e.source]}" data-t="{drawn.index[e.target]}"/>'
        )
    out.append('</g><g class="nodes">')
    for i, n in enumerate(drawn.nodes):
        x, y = centre[n.path]
        r = radius[n.path]
        classes = (
            "n"
            + (" cy" if n.component is not None else "")
            + (" big" if n.path in big_paths else "")
        )
        tip = (
            f"{n.path}\n{n.package} · PageRank {n.rank:.4f} · imported by "
            f"{importers[n.path]}, imports {imported[n.path]}"
            + (
                f" · on an import cycle (component #{n.component + 1} of "
                f"{len(graph.components[n.component])} modules)"
                if n.component is not None
                else ""
            )
        )
        out.append(
            f'<g class="{classes}" data-i="{i}"><title>{_e(tip)}</title>'
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{drawn.colour(n.package)}"/>'
            f'<text x="{x + r + 4:.1f}" y="{y + 3.8:.1f}">'
            f"{_e(_label(n.path, n.package))}</text></g>"
        )
    out.append("</g></svg>")
    return "\n".join(out)


def _common_dir(paths: list[str]) -> str:
    """The directory every path is under ('src/pkg/'), or ''."""
    dirs = [p.split("/")[:-1] for p in paths]
    common: list[str] = []
    for parts in zip(*dirs, strict=False):
        if len(set(parts)) > 1:
            break
        common.append(parts[0])
    return "".join(d + "/" for d in common) if dirs else ""


def _short_path(path: str, prefix: str) -> str:
    return f'<span class="mono" title="{_e(path)}">{_e(path.removeprefix(prefix))}</span>'


def _sidebar(graph: ImportGraph, drawn: _Drawn) -> str:
    on_cycles = sum(len(c) for c in graph.components)
    prefix = _common_dir([n.path for n in graph.nodes])
    where = Path(graph.root).name + ("" if graph.scope == "." else "/" + graph.scope)
    parts = [
        f'<h1>Import graph</h1><div class="mono muted">{_e(where)}</div>',
        f"<p>{len(graph.nodes)} modules · {len(graph.edges)} import edges · "
        f"{len(drawn.packages)} packages<br>"
        + (
            f"{on_cycles} modules on import cycles, in {len(graph.components)} "
            f"strongly connected component{'s' if len(graph.components) != 1 else ''}"
            if graph.components
            else "no import cycles"
        )
        + "</p>",
    ]
    if drawn.left_out:
        parts.append(
            f'<p class="warn">Drawn: the {len(drawn.nodes)} most central modules; '
            f"{drawn.left_out} less central modules are left out.</p>"
        )
    parts.append(
        '<p class="muted">Size: PageRank (how central a module is). '
        '<span class="ring"></span>on an import cycle; red edges join modules of one '
        "cycle, bold red ones make its shortest cycles. "
        "Hover a module for its imports; drag to pan, wheel to zoom, double-click to reset.</p>"
    )
    sizes: dict[str, int] = defaultdict(int)
    for n in drawn.nodes:
        sizes[n.package] += 1
    parts.append("<h2>Packages</h2><ul>")
    parts.extend(
        f'<li><span class="sw" style="background:{drawn.colour(p)}"></span>'
        f'<span class="mono">{_e(_package_title(p))}</span> '
        f'<span class="muted">{sizes[p]}</span></li>'
        for p in drawn.packages
    )
    parts.append("</ul>")
    if graph.cycles:
        parts.append("<h2>Shortest cycles</h2>")
        if prefix:
            parts.append(f'<p class="muted">paths under <span class="mono">{_e(prefix)}</span></p>')
        parts.append("<ul>")
        for cycle in graph.cycles[:MAX_LISTED]:
            ring = " → ".join(_short_path(p, prefix) for p in [*cycle, cycle[0]])
            parts.append(f"<li>{ring}</li>")
        parts.append("</ul>")
    central = sorted(graph.nodes, key=lambda n: (-n.rank, n.path))[:MAX_LISTED]
    if central:
        parts.append("<h2>Most central</h2><ul>")
        parts.extend(
            f'<li>{_short_path(n.path, prefix)} <span class="muted">{n.rank:.4f}</span></li>'
            for n in central
        )
        parts.append("</ul>")
    if graph.gaps:
        parts.append("<h2>Not shown</h2><ul>")
        parts.extend(f'<li class="muted">{_e(g)}</li>' for g in graph.gaps)
        parts.append("</ul>")
    return "\n".join(parts)


def render_html(graph: ImportGraph, *, max_nodes: int = MAX_NODES) -> str:
    """A self-contained page of `graph` (see the module's invariants)."""
    drawn = _drawn(graph, max_nodes)
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
    policy = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>Import graph of {_e(graph.scope)}</title>\n"
        f"<style>{_STYLE}</style></head>\n<body>\n"
        f"<aside>\n{_sidebar(graph, drawn)}\n</aside>\n"
        f'<main>\n{_svg(graph, drawn)}\n<div id="info"></div>\n</main>\n'
        f"<script>{_SCRIPT}</script>\n</body></html>\n"
    )


# -- Mermaid -------------------------------------------------------------------------------

_MERMAID_ENTITIES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    # Mermaid reads `#name;` as its own entity codes, and a leading backtick as Markdown.
    "#": "&num;",
    "`": "&grave;",
}


def _mermaid_label(text: str) -> str:
    """`text` as a quoted Mermaid label, its markup characters as HTML entities.

    Mermaid's own `#60;` codes are not used: mermaid 11 shows them undecoded. Control
    characters (a file name may hold a newline) become U+FFFD.
    """
    escaped = "".join(
        _MERMAID_ENTITIES.get(ch, "\ufffd" if ord(ch) < 32 or ord(ch) == 127 else ch) for ch in text
    )
    return f'"{escaped}"'


def render_mermaid(graph: ImportGraph, *, max_nodes: int = MAX_NODES) -> str:
    """`graph` as a Mermaid flowchart (see the module's invariants)."""
    drawn = _drawn(graph, max_nodes)
    ranked = sorted(drawn.nodes, key=lambda n: (-n.rank, n.path))
    hubs = {n.path for n in ranked[: max(1, min(10, len(ranked) // 20))]}
    mids = {n.path for n in ranked[len(hubs) : len(hubs) + max(1, len(ranked) * 3 // 20)]}
    shortest = _cycle_edges(graph)
    rank = {n.path: n.rank for n in drawn.nodes}
    # Over the limit, the cycles' edges are kept first, then those between central modules.
    chosen = sorted(
        drawn.edges,
        key=lambda e: (
            (e.source, e.target) not in shortest,
            not e.cycle,
            -(rank[e.source] + rank[e.target]),
            e.source,
            e.target,
        ),
    )
    edges = sorted(chosen[:MAX_MERMAID_EDGES], key=lambda e: (e.source, e.target))
    on_cycles = sum(len(c) for c in graph.components)
    lines = [
        f"%% Import graph: {len(graph.nodes)} modules, {len(graph.edges)} edges, "
        f"{on_cycles} modules on import cycles.",
    ]
    if drawn.left_out:
        lines.append(
            f"%% Drawn: the {len(drawn.nodes)} most central modules; "
            f"{drawn.left_out} less central ones are left out."
        )
    if len(edges) < len(drawn.edges):
        lines.append(f"%% {len(drawn.edges) - len(edges)} edges left out (Mermaid's limit).")
    lines += [
        "flowchart LR",
        "  classDef hub font-size:20px,font-weight:bold,stroke-width:3px",
        "  classDef mid font-size:15px,font-weight:bold",
        f"  classDef cycle stroke:{_CYCLE},stroke-width:3px,color:#8b0000",
    ]
    members: dict[str, list[GraphNode]] = defaultdict(list)
    for n in drawn.nodes:
        members[n.package].append(n)
    for g, package in enumerate(drawn.packages):
        lines.append(f"  subgraph g{g} [{_mermaid_label(_package_title(package))}]")
        for n in members[package]:
            lines.append(f"    n{drawn.index[n.path]}[{_mermaid_label(_label(n.path, package))}]")
        lines.append("  end")
    bold: list[int] = []  # on a shortest cycle
    thin: list[int] = []  # between modules of one cycle
    for i, e in enumerate(edges):
        on_shortest = (e.source, e.target) in shortest
        if on_shortest:
            bold.append(i)
        elif e.cycle:
            thin.append(i)
        arrow = "==>" if on_shortest else "-->"
        lines.append(f"  n{drawn.index[e.source]} {arrow} n{drawn.index[e.target]}")
    for name, paths in (("hub", hubs), ("mid", mids)):
        ids = [f"n{drawn.index[p]}" for p in sorted(paths, key=drawn.index.__getitem__)]
        if ids:
            lines.append(f"  class {','.join(ids)} {name}")
    on_cycle = [f"n{i}" for i, n in enumerate(drawn.nodes) if n.component is not None]
    if on_cycle:
        lines.append(f"  class {','.join(on_cycle)} cycle")
    for links, width in ((bold, 3), (thin, 1.5)):
        if links:
            lines.append(
                f"  linkStyle {','.join(map(str, links))} stroke:{_CYCLE},stroke-width:{width}px"
            )
    return "\n".join(lines) + "\n"
