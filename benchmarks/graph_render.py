"""Import-graph pictures (`dowse explore --graph`): build, render, and load them offline.

Usage:
    python benchmarks/graph_render.py PATH [PATH ...] [--out DIR] [--max-nodes N]

For each PATH: the time to build the import graph and to render the page and the Mermaid
text, their sizes, and a static check that no element of the page has an external `src` or
`href`. When `chromium` (or `chromium-browser`) is on PATH, the page is then loaded
headless with every host name unresolvable and a NetLog recording every request the
network stack sees: it reports whether the page rendered (a screenshot with content, and
the dumped DOM shows the inline script ran under the page's Content-Security-Policy) and
how many requests left the page (must be 0). The screenshots stay in --out for a look.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

from dowse.explore.graph import render_html, render_mermaid
from dowse.explore.imports import import_graph
from dowse.explore.run import context

BLANK_PNG = 20_000
"""A screenshot smaller than this many bytes is an empty page (a blank 1600x1000 PNG
compresses to a few KB)."""
LINKS = ("src", "href", "xlink:href", "action", "srcset", "poster", "data")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [f"<{tag} {k}={v!r}>" for k, v in attrs if k in LINKS]


def static_links(page: str) -> list[str]:
    parser = _Links()
    parser.feed(page)
    return parser.links


def _requests(netlog: Path) -> tuple[list[str], int]:
    """(URLs the page asked for, how many requests the browser made on its own).

    Every request the network stack starts is a URL_REQUEST_START_JOB event; the browser's
    own (update checks, its clock, accounts) have no initiator ("not an origin"), a page's
    have the page's origin ("null" for a file:// page).
    """
    text = netlog.read_text() if netlog.exists() else ""
    try:
        log = json.loads(text or "{}")
    except json.JSONDecodeError:
        # Chromium may leave the closing brackets off when it exits quickly.
        log = json.loads(text.rstrip().rstrip(",") + "]}")
    start = log.get("constants", {}).get("logEventTypes", {}).get("URL_REQUEST_START_JOB")
    page: set[str] = set()
    own = 0
    for event in log.get("events", []):
        params = event.get("params") or {}
        if event.get("type") != start or "url" not in params:
            continue
        if params.get("initiator", "not an origin") == "not an origin":
            own += 1
        else:
            page.add(params["url"])
    return sorted(page), own


def browse(chromium: str, page: Path, shot: Path) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as profile:
        netlog = Path(profile) / "netlog.json"
        common = [
            chromium,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}/user",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--virtual-time-budget=2000",
            "--window-size=1600,1000",
            "--enable-logging=stderr",
            "--v=0",
        ]
        t0 = time.perf_counter()
        shot_run = subprocess.run(
            [*common, f"--log-net-log={netlog}", f"--screenshot={shot}", page.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
        )
        seconds = time.perf_counter() - t0
        requests, own = _requests(netlog)
        dom = subprocess.run(
            [*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
        )
    log = shot_run.stderr + dom.stderr
    size = shot.stat().st_size if shot.exists() else 0
    return {
        "browser_seconds": round(seconds, 2),
        "screenshot_bytes": size,
        "rendered": size > BLANK_PNG and "<svg" in dom.stdout,
        "script_ran": 'class="live"' in dom.stdout,
        "csp_violations": sum("Content Security Policy" in ln for ln in log.splitlines()),
        "requests": requests,
        "browser_own_requests": own,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "dowse-graphs")
    ap.add_argument("--max-nodes", type=int, default=300)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("chromium is not on PATH: the browser check is skipped", file=sys.stderr)
    failed = False
    if chromium is not None:
        # The detector must see a page's request: one external image, which cannot load.
        control = args.out / "control.html"
        control.write_text('<!DOCTYPE html><img src="http://example.invalid/x.png">')
        seen = browse(chromium, control, args.out / "control.png")["requests"]
        print(json.dumps({"control_page_requests": seen}))
        failed |= not seen
    for i, path in enumerate(args.paths):
        t0 = time.perf_counter()
        graph = import_graph(context(path))
        built = time.perf_counter() - t0
        t0 = time.perf_counter()
        page = render_html(graph, max_nodes=args.max_nodes)
        rendered = time.perf_counter() - t0
        mermaid = render_mermaid(graph, max_nodes=args.max_nodes)
        stem = f"{i}-{path.resolve().name or 'root'}"
        html_file, mmd_file = args.out / f"{stem}.html", args.out / f"{stem}.mmd"
        html_file.write_text(page, encoding="utf-8")
        mmd_file.write_text(mermaid, encoding="utf-8")
        row: dict[str, object] = {
            "path": str(path),
            "modules": len(graph.nodes),
            "edges": len(graph.edges),
            "on_cycles": sum(len(c) for c in graph.components),
            "drawn": min(len(graph.nodes), args.max_nodes),
            "graph_seconds": round(built, 3),
            "html_seconds": round(rendered, 3),
            "html_bytes": len(page.encode()),
            "mermaid_bytes": len(mermaid.encode()),
            "external_links": static_links(page),
            "page": str(html_file),
        }
        if chromium is not None:
            shot = args.out / f"{stem}.png"
            row.update(browse(chromium, html_file, shot), screenshot=str(shot))
            failed |= not row["rendered"] or bool(row["requests"]) or not row["script_ran"]
        failed |= bool(row["external_links"])
        print(json.dumps(row, indent=2))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
