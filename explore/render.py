"""Rendering an ExploreResult as markdown, and fitting it to a token budget.

A budget is divided across sections by weight instead of cutting the end off: a section
that needs less than its share gives the rest to the others (water-filling), and each
section keeps its first (best) items whole. What was left out is counted per section in
`omitted`. Costs are estimated for the output format that will be printed (markdown lines
or JSON records) with the one counter (`retrieval.budget.estimate_tokens`), and the
fitted report is then measured as printed: it never exceeds the budget. In JSON, each
track's gate records give way to one `verdict` line, so the sections get the budget.
Text from the repository (names, claims, script lines) is escaped onto one line, and
the tree's fence is longer than any backtick run in it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any, Literal

from pydantic import BaseModel

from dowse.errors import BudgetTooSmall
from dowse.explore.records import (
    Command,
    ConfigReport,
    ExploreResult,
    Finding,
    TrackFindings,
    TreeNode,
)
from dowse.explore.tree import tree_rank
from dowse.quote import code_span, fence, one_line
from dowse.retrieval.budget import estimate_tokens

__all__ = [
    "command_line",
    "compact_tracks",
    "finding_line",
    "fit_budget",
    "render_json",
    "render_markdown",
    "verdict",
]

Format = Literal["markdown", "json"]
_OVERHEAD = 12  # tokens for a section's heading and spacing


def finding_line(f: Finding) -> str:
    """One cited claim as a markdown list item."""
    return f"- {one_line(f.claim)} — " + ", ".join(code_span(c.ref) for c in f.citations)


def command_line(c: Command) -> str:
    """One command as a markdown list item: its kind, the command, what a wrapper runs, and
    where it is stated."""
    runs = f" → {code_span(c.runs)}" if c.runs and c.runs != c.command else ""
    return (
        f"- {c.kind}: {code_span(c.command)}{runs} — {code_span(c.citation.ref)} "
        f"({one_line(c.source)})"
    )


def _md_item(section: str, item: Any) -> str:
    """One rendered markdown line for an item of `section` (also its budget cost)."""
    if isinstance(item, Finding):
        return finding_line(item)
    if isinstance(item, Command):
        return command_line(item)
    if section == "tree":
        node, level = item
        label = one_line(node.path.rsplit("/", 1)[-1]) + ("/" if node.kind == "dir" else "")
        indent: str = "  " * level
        return indent + label + (f" ({node.files})" if node.kind == "dir" else "")
    if section == "key_files":
        return f"- {code_span(item.path)} — {one_line(item.role)}"
    if section == "dependencies":
        where = f"{item.manifest}:{item.line}" if item.line else item.manifest
        line = f"- {one_line(item.name)} {one_line(item.spec)} ({one_line(item.group)})"
        return f"{line} — {code_span(where)}".replace("  ", " ")
    if section == "scripts":
        kind, name, value = item
        return f"- {kind} {code_span(name)}: {code_span(value)}"
    if section == "patterns":
        refs = ", ".join(code_span(c.ref) for c in item.examples)
        line = f"- **{one_line(item.name)}**: {one_line(item.description)}"
        return line + (f" ({refs})" if refs else "")
    if section == "config":
        kind, value = item
        if kind == "settings file":
            return f"- {kind} {code_span(value)}"
        more = f" ({value.sites} sites)" if value.sites > 1 else ""
        name = f"--{value.name}" if kind == "flag" else value.name
        return f"- {kind} {code_span(name)} — {code_span(f'{value.path}:{value.line}')}{more}"
    if section in ("imports", "git"):
        kind, value = item
        return f"- {kind}: {one_line(value)}"
    return f"- {one_line(str(item))}"


@dataclass
class _Section:
    name: str
    weight: float
    items: list[Any]
    keep: Callable[[int], None]


def _tree_nodes(root: TreeNode) -> list[tuple[TreeNode, int]]:
    """Breadth first within each `tree_rank`, source before tests before docs and
    examples, so a budget keeps the upper levels of the source first."""
    out: list[tuple[TreeNode, int]] = []
    frontier, level = [root], 0
    while frontier:
        out.extend((n, level) for n in frontier)
        frontier = [c for n in frontier for c in n.children]
        level += 1
    return sorted(out, key=lambda nl: tree_rank(nl[0].path, nl[0].kind))  # stable


def _prune(node: TreeNode, kept: set[int]) -> TreeNode:
    children = [c for c in node.children if id(c) in kept]
    return node.model_copy(
        update={
            "children": [_prune(c, kept) for c in children],
            "truncated": node.truncated + len(node.children) - len(children),
        }
    )


def _config_items(cfg: ConfigReport) -> list[tuple[str, Any]]:
    """The configuration's items, round robin over the kinds: a small budget keeps a
    few of each."""
    return [
        it
        for row in zip_longest(
            [("named setting", x) for x in cfg.named],
            [("environment variable", x) for x in cfg.env],
            [("flag", x) for x in cfg.flags],
            [("configuration type", x) for x in cfg.classes],
            [("settings file", x) for x in cfg.files],
        )
        for it in row
        if it is not None
    ]


def _sections(r: ExploreResult) -> list[_Section]:
    s: list[_Section] = []

    def add(name: str, weight: float, items: list[Any], keep: Callable[[int], None]) -> None:
        if items:
            s.append(_Section(name, weight, items, keep))

    add("commands", 0.10, r.commands, lambda k: setattr(r, "commands", r.commands[:k]))
    add(
        "instructions",
        0.04,
        r.instructions,
        lambda k: setattr(r, "instructions", r.instructions[:k]),
    )
    syn = r.synthesis

    def keep_findings(k: int) -> None:
        syn.unified, syn.findings = syn.unified[:k], syn.findings[:k]

    add("unified", 0.08, syn.unified, keep_findings)
    add(
        "divergences",
        0.06,
        syn.divergences,
        lambda k: setattr(syn, "divergences", syn.divergences[:k]),
    )
    add(
        "open_questions",
        0.05,
        syn.open_questions,
        lambda k: setattr(syn, "open_questions", syn.open_questions[:k]),
    )
    add(
        "focus",
        0.25,
        r.focus_findings,
        lambda k: setattr(r, "focus_findings", r.focus_findings[:k]),
    )
    add("key_files", 0.08, r.key_files, lambda k: setattr(r, "key_files", r.key_files[:k]))
    if r.tree is not None:
        tree, nodes = r.tree, _tree_nodes(r.tree)
        add(
            "tree",
            0.08,
            nodes,
            lambda k: setattr(r, "tree", _prune(tree, {id(n) for n, _ in nodes[:k]})),
        )
    deps = r.dependencies
    add(
        "dependencies",
        0.07,
        deps.dependencies,
        lambda k: setattr(deps, "dependencies", deps.dependencies[:k]),
    )
    scripts = [("script", k, v) for k, v in deps.scripts.items()] + [
        ("entry point", k, v) for k, v in deps.entry_points.items()
    ]

    def keep_scripts(k: int) -> None:
        kept = scripts[:k]
        deps.scripts = {n: v for kind, n, v in kept if kind == "script"}
        deps.entry_points = {n: v for kind, n, v in kept if kind == "entry point"}

    add("scripts", 0.03, scripts, keep_scripts)
    add("patterns", 0.12, r.patterns, lambda k: setattr(r, "patterns", r.patterns[:k]))
    if r.config is not None:
        cfg = r.config
        citems = _config_items(cfg)

        def keep_config(k: int) -> None:
            kept = citems[:k]
            cfg.named = [x for kind, x in kept if kind == "named setting"]
            cfg.env = [x for kind, x in kept if kind == "environment variable"]
            cfg.flags = [x for kind, x in kept if kind == "flag"]
            cfg.classes = [x for kind, x in kept if kind == "configuration type"]
            cfg.files = [x for kind, x in kept if kind == "settings file"]

        add("config", 0.06, citems, keep_config)
    if r.imports is not None:
        imp = r.imports
        items = (
            [("cycle", " → ".join(c)) for c in imp.cycles]
            + [("central", f"{p} ({score:.3f})") for p, score in imp.central]
            + [("external", f"{p} ({n} files)") for p, n in imp.external]
        )

        def keep_imports(k: int) -> None:
            kinds = [kind for kind, _ in items[:k]]
            imp.cycles = imp.cycles[: kinds.count("cycle")]
            imp.central = imp.central[: kinds.count("central")]
            imp.external = imp.external[: kinds.count("external")]
            imp.sites = {p: c for p, c in imp.sites.items() if p in dict(imp.external)}

        add("imports", 0.06, items, keep_imports)
    if r.git is not None:
        git = r.git
        gitems = (
            [("uncommitted", u) for u in git.uncommitted]
            + [("recent", c) for c in git.recent]
            + [("hot", f"{p} ({n} commits)") for p, n in git.hot_files]
            + [("co-change", f"{a} + {b} ({n})") for a, b, n in git.co_change]
        )

        def keep_git(k: int) -> None:
            kinds = [kind for kind, _ in gitems[:k]]
            git.uncommitted = git.uncommitted[: kinds.count("uncommitted")]
            git.recent = git.recent[: kinds.count("recent")]
            git.hot_files = git.hot_files[: kinds.count("hot")]
            git.co_change = git.co_change[: kinds.count("co-change")]

        add("git", 0.06, gitems, keep_git)
    # Track findings repeat the sections above, except the specialists': those come first.
    ordered = sorted(r.tracks, key=lambda t: not t.track.name.startswith("specialist"))
    tfind = [(t, f) for t in ordered for f in t.findings]

    def keep_tracks(k: int) -> None:
        kept = tfind[:k]
        for t in r.tracks:
            t.findings = [f for tt, f in kept if tt is t]

    add("tracks", 0.06, [f for _, f in tfind], keep_tracks)
    concl = [(t, c) for t in r.tracks for c in t.conclusions]

    def keep_conclusions(k: int) -> None:
        kept = concl[:k]
        for t in r.tracks:
            t.conclusions = [c for tt, c in kept if tt is t]

    add("conclusions", 0.04, [c for _, c in concl], keep_conclusions)
    return s


def _all_tracks(tracks: list[TrackFindings]) -> list[TrackFindings]:
    return [x for t in tracks for x in (t, *_all_tracks(t.subtracks))]


def _cost(section: str, item: Any, fmt: Format) -> int:
    if fmt == "markdown":
        return estimate_tokens(_md_item(section, item)) + 1
    if isinstance(item, BaseModel):
        return estimate_tokens(item.model_dump_json())
    if section == "tree":
        return estimate_tokens(item[0].model_dump_json(exclude={"children"}))
    return estimate_tokens(str(item)) + 4


def verdict(t: TrackFindings) -> str:
    """A track's gates and claims in one line."""
    gates = " ".join(f"{g.name} {'✓' if g.passed else ('✗' if g.ran else '–')}" for g in t.gates)
    dropped = f", {len(t.dropped)} dropped" if t.dropped else ""
    return f"{gates or 'no gates'}; {t.claims} claims{dropped}"


def _fold_tracks(r: ExploreResult) -> None:
    """In JSON, each track's bookkeeping is one line of `track_lines` (its gates and
    claims); a track the budget left with nothing to say is that line alone, one with
    findings keeps them under `tracks` without repeating the line."""
    kept = []
    for t in r.tracks:
        r.track_lines.append(f"{t.track.name}: {t.verdict or verdict(t)}")
        if t.findings or t.conclusions or t.subtracks or t.evidence:
            t.verdict = ""
            kept.append(t)
    r.tracks = kept


def compact_tracks(tracks: list[TrackFindings]) -> None:
    """Each track's bookkeeping in one line (`verdict`), in place: the gates and the
    spec's prose go, so a budget's tokens go to what the tracks found. The gaps go too:
    the synthesis' open questions (a budgeted section) repeat them."""
    for t in _all_tracks(tracks):
        if t.gates or not t.verdict:
            t.verdict = verdict(t)
        t.track = t.track.model_copy(update={"approach": "", "gates": [], "deliverable": ""})
        t.gates, t.gaps, t.dropped = [], [], []


def render_json(result: ExploreResult) -> str:
    """The report as `explore --json` prints it: indented, with its final newline."""
    return result.model_dump_json(indent=2) + "\n"


def fit_budget(
    result: ExploreResult,
    budget: int,
    fmt: Format = "markdown",
    *,
    printed: Callable[[ExploreResult], str] | None = None,
) -> ExploreResult:
    """A copy of `result` whose sections share `budget` tokens, whole items only, and
    whose printed form (`printed`, by default what `explore` prints in `fmt`) is at most
    `budget` tokens. BudgetTooSmall when not even its skeleton fits."""
    show = printed or (render_json if fmt == "json" else render_markdown)
    inner = budget
    fitting = _Fitting(result, fmt)
    while True:
        r = fitting.fit(inner)
        r.budget = budget
        over = estimate_tokens(show(r)) - budget
        if over <= 0:
            # The attempts share the report's items; the answer is a copy of its own.
            return r.model_copy(deep=True)
        if inner <= 1 and result.summary:
            # Even the outline is too long: its summary, which the sections spell out, goes.
            result, inner = result.model_copy(update={"summary": ""}), budget
            fitting = _Fitting(result, fmt)
            continue
        if inner <= 1:
            raise BudgetTooSmall(
                f"a budget of {budget} tokens cannot hold this report's outline; "
                "ask for more or a narrower path"
            )
        # The estimates missed what printing adds (indentation, escapes): shrink the
        # sections' share by the overshoot and fit again.
        inner = max(1, inner - over)


def _shell(r: ExploreResult) -> ExploreResult:
    """A copy of `r` that fitting may cut without touching `r`: the records and
    containers `_sections`' `keep`, `_fold_tracks`, `compact_tracks` and the omitted
    counts change are new; the items themselves (findings, dependencies, tree nodes),
    which fitting never changes, are shared. Two deep copies per attempt were most of a
    fit's time."""
    return r.model_copy(
        update={
            "synthesis": r.synthesis.model_copy(),
            "dependencies": r.dependencies.model_copy(),
            "config": r.config.model_copy() if r.config is not None else None,
            "imports": r.imports.model_copy() if r.imports is not None else None,
            "git": r.git.model_copy() if r.git is not None else None,
            "tracks": _shell_tracks(r.tracks),
            "track_lines": list(r.track_lines),
            "omitted": dict(r.omitted),
        }
    )


def _shell_tracks(tracks: list[TrackFindings]) -> list[TrackFindings]:
    return [t.model_copy(update={"subtracks": _shell_tracks(t.subtracks)}) for t in tracks]


class _Fitting:
    """One report fitted to one budget after another: what does not depend on the
    budget (the compacted tracks, each item's cost, the outline without its sections) is
    worked out once."""

    def __init__(self, result: ExploreResult, fmt: Format) -> None:
        self.fmt = fmt
        self.base = _shell(result)
        if fmt == "json":
            compact_tracks(self.base.tracks)
        self.costs = {
            s.name: [_cost(s.name, it, fmt) for it in s.items] for s in _sections(self.base)
        }
        self.skeleton = _shell(self.base)
        for sec in _sections(self.skeleton):
            sec.keep(0)
        if fmt == "json":
            _fold_tracks(self.skeleton)
        self.skeleton.omitted = {name: 1 for name in self.costs}  # the notes cost room too

    def fit(self, budget: int) -> ExploreResult:
        r = _shell(self.base)
        r.budget = self.skeleton.budget = budget
        fixed = estimate_tokens(
            self.skeleton.model_dump_json()
            if self.fmt == "json"
            else render_markdown(self.skeleton)
        )
        sections = _sections(r)
        costs = self.costs
        need = {s.name: sum(costs[s.name]) + _OVERHEAD for s in sections}
        remaining = max(budget - fixed, 0)
        share: dict[str, float] = {}
        active = list(sections)
        while active:  # water-filling: satisfied sections return their surplus to the others
            total_w = sum(s.weight for s in active)
            fair = {s.name: remaining * s.weight / total_w for s in active}
            done = [s for s in active if need[s.name] <= fair[s.name]]
            if not done:
                share.update(fair)
                break
            for s in done:
                share[s.name] = need[s.name]
                remaining -= need[s.name]
                active.remove(s)
        kept: dict[str, int] = {}
        spare = max(budget - fixed, 0)
        for s in sections:
            room, k = share[s.name] - _OVERHEAD, 0
            for c in costs[s.name]:
                if c > room:
                    break
                room -= c
                k += 1
            kept[s.name] = k
            spare -= sum(costs[s.name][:k]) + (_OVERHEAD if k else 0)
        # Whole items leave part of each share unused: the heaviest sections take their
        # next items from what is left, so a section whose first item outweighs its share
        # still shows it when the budget has the room.
        for s in sorted(sections, key=lambda s: -s.weight):
            while kept[s.name] < len(s.items):
                c = costs[s.name][kept[s.name]] + (0 if kept[s.name] else _OVERHEAD)
                if c > spare:
                    break
                spare -= c
                kept[s.name] += 1
        for s in sections:
            if kept[s.name] < len(s.items):
                r.omitted[s.name] = len(s.items) - kept[s.name]
                s.keep(kept[s.name])
        if self.fmt == "json":
            _fold_tracks(r)
        return r


def render_markdown(r: ExploreResult) -> str:
    title = f"# Explore `{r.path}` ({r.depth}"
    title += f", focus: {r.focus!r})" if r.focus else ")"
    lines = [one_line(title), ""] + ([one_line(r.summary), ""] if r.summary else [])
    syn = r.synthesis
    timing = ""
    if "wall" in r.timings:
        timing = (
            f"; {len(r.tracks)} tracks in {r.timings['wall']:.2f} s wall "
            f"({r.timings.get('sum', 0):.2f} s summed)"
        )
    lines += [f"_Confidence: {syn.confidence} — {one_line(syn.basis)}{timing}_", ""]
    if syn.statement:
        lines += [f"In short: {one_line(syn.statement)}", ""]

    gone: list[str] = []  # sections the budget emptied: one line for all, at the end

    def section(title: str, name: str, items: list[Any]) -> None:
        omitted = r.omitted.get(name, 0)
        if not items:
            if omitted:
                gone.append(f"{name.replace('_', ' ')} {omitted}")
            return
        lines.extend([f"## {title}", ""])
        lines.extend(_md_item(name, it) for it in items)
        if omitted:
            lines.append(f"- _{omitted} more left out for the token budget_")
        lines.append("")

    section("How to work in this repository", "commands", r.commands)
    section("Rules its instructions state", "instructions", r.instructions)
    section("Findings", "unified", syn.unified)
    section("Divergences", "divergences", syn.divergences)
    section("Open questions", "open_questions", syn.open_questions)
    if r.focus:
        section(f"Focus: {one_line(r.focus)}", "focus", r.focus_findings)
    section("Key files", "key_files", r.key_files)
    if r.tree is not None:
        lines += ["## Tree", ""]
        lines += fence("\n".join(_md_item("tree", n) for n in _depth_first(r.tree)))
        lines.append("")
    deps = r.dependencies
    section("Dependencies", "dependencies", deps.dependencies)
    section(
        "Scripts and entry points",
        "scripts",
        [("script", k, v) for k, v in deps.scripts.items()]
        + [("entry point", k, v) for k, v in deps.entry_points.items()],
    )
    section("Patterns", "patterns", r.patterns)
    if r.config is not None:
        section("Configuration", "config", _config_items(r.config))
    if r.imports is not None:
        imp = r.imports
        lines += [
            f"_Import graph: {imp.modules} modules, {imp.edges} edges; entry points: "
            + (", ".join(code_span(e) for e in imp.entry_points[:6]) or "none")
            + "_",
            "",
        ]
        section(
            "Imports",
            "imports",
            [("cycle", " → ".join(c)) for c in imp.cycles]
            + [("central", f"{p} ({s:.3f})") for p, s in imp.central]
            + [("external", f"{p} ({n} files)") for p, n in imp.external],
        )
    if r.git is not None:
        g = r.git
        lines += [f"_Git: branch {one_line(g.branch or '?')} at {(g.head or '?')[:12]}_", ""]
        section(
            "Git",
            "git",
            [("uncommitted", u) for u in g.uncommitted]
            + [("recent", c) for c in g.recent]
            + [("hot", f"{p} ({n} commits)") for p, n in g.hot_files]
            + [("co-change", f"{a} + {b} ({n})") for a, b, n in g.co_change],
        )
    lines += [
        "## Tracks",
        "",
        "| track | gates | claims | dropped | seconds |",
        "|---|---|---|---|---|",
    ]
    for t in r.tracks:
        gates = " ".join(
            f"{g.name} {'✓' if g.passed else ('✗' if g.ran else '–')}" for g in t.gates
        )
        name = one_line(t.track.name).replace("|", "\\|")
        lines.append(f"| {name} | {gates} | {t.claims} | {len(t.dropped)} | {t.seconds:.2f} |")
    lines.append("")
    for t in r.tracks:
        if t.track.name.startswith("specialist") and t.findings:
            lines += [f"### {one_line(t.track.name)}", ""]
            lines += [finding_line(f) for f in t.findings]
            lines.append("")
    if gone:
        lines += [f"_Left out for the token budget: {', '.join(gone)}._", ""]
    if r.budget:
        lines.append(f"_Fitted to a budget of {r.budget} tokens._")
    return "\n".join(lines).rstrip() + "\n"


def _depth_first(root: TreeNode) -> list[tuple[TreeNode, int]]:
    out: list[tuple[TreeNode, int]] = []
    stack = [(root, 0)]
    while stack:
        node, level = stack.pop()
        out.append((node, level))
        if node.truncated:
            more = TreeNode(path=f"… {node.truncated} more", kind="file")
            stack.append((more, level + 1))
        stack.extend((c, level + 1) for c in reversed(node.children))
    return out
