"""Records the explorers pass around and return: citations, findings, gates, tracks, and
the `ExploreResult` that `dowse explore` prints.

Every claim an explorer makes is a `Finding` with at least one `Citation`; a citation
names a file, a line range and a short quote that must occur in those lines. The evidence
gate (explore/tracks.py) checks each one against the file and drops claims that fail.

Each record builds its validator on first use (`defer_build`): an `ask` that the loop
answers alone imports this module and makes none of them (pydantic from 2.14 on builds a
record once when tracks first make it on several threads at once).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Citation",
    "Command",
    "CommandKind",
    "ConfigReport",
    "Dependency",
    "Depth",
    "Evidence",
    "ExploreResult",
    "Finding",
    "GateResult",
    "GitReport",
    "GraphEdge",
    "GraphNode",
    "ImportGraph",
    "ImportReport",
    "KeyFile",
    "ManifestReport",
    "Pattern",
    "Setting",
    "Synthesis",
    "TrackFindings",
    "TrackSpec",
    "TreeNode",
]

Depth = Literal["shallow", "standard", "deep"]
CommandKind = Literal["install", "build", "test", "lint", "run"]


class Citation(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str = Field(description="POSIX path relative to the explored root")
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    quote: str = Field(description="text that occurs in the cited lines (whitespace-normalized)")

    @property
    def ref(self) -> str:
        if self.start_line == self.end_line:
            return f"{self.path}:{self.start_line}"
        return f"{self.path}:{self.start_line}-{self.end_line}"


class Finding(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    claim: str
    citations: list[Citation] = Field(min_length=1)
    topic: str = Field(default="", description="what the claim is about, for aggregation")


class Evidence(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str
    line: int = Field(ge=1)
    description: str


class GateResult(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str = Field(description="understood, evidence or complete")
    passed: bool
    ran: bool = Field(default=True, description="false when an earlier gate failed")
    detail: str


class TrackSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    focus: str = Field(description="the track's scope: a path, a question or both")
    approach: str
    gates: list[str] = Field(description="the checkpoints, each verified by code")
    deliverable: str
    source: str = Field(
        default="",
        description="what the track's findings are drawn from, when other tracks draw on "
        "it too (the callers and the callees of the same definitions): tracks of one "
        "source are not independent support",
    )
    role: Literal["", "answer", "callers", "callees", "tests", "config", "history"] = Field(
        default="",
        description="what the track's findings tell about the question, for the "
        "synthesis' statement: where the answer is, who calls it, what it calls, its "
        "tests, its settings, what changes with it ('' for the others)",
    )


class TrackFindings(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    track: TrackSpec
    findings: list[Finding] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    conclusions: list[str] = Field(default_factory=list)
    gaps: list[str] = Field(default_factory=list, description="uncertainties, open questions")
    gates: list[GateResult] = Field(default_factory=list)
    verdict: str = Field(
        default="",
        description="the gates and dropped claims in one line, when a budget put it "
        "in place of their records",
    )
    dropped: list[str] = Field(
        default_factory=list, description="claims dropped because a citation failed"
    )
    claims: int = Field(default=0, description="claims verified (before any budget trimming)")
    seconds: float = 0.0
    subtracks: list[TrackFindings] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.gates) and all(g.passed for g in self.gates)


class Command(BaseModel):
    """A command to work in the repository with, at the line that states it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: CommandKind
    command: str = Field(description="the command line to type, as its source states it")
    runs: str = Field(
        default="", description="what a wrapper runs (a tox env's or make target's commands)"
    )
    source: str = Field(
        description="what states it: CI, tox, nox, make, npm, hatch, pyproject, Cargo, go.mod, "
        "CMake, or the instructions file (AGENTS.md, CLAUDE.md, CONTRIBUTING)"
    )
    citation: Citation


class TreeNode(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str
    kind: Literal["dir", "file"]
    files: int = Field(default=1, description="files at or below this node")
    children: list[TreeNode] = Field(default_factory=list)
    truncated: int = Field(default=0, description="children left out")


class KeyFile(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str
    role: str


class Dependency(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    spec: str = ""
    manifest: str = Field(description="the manifest file that declares it")
    line: int | None = None
    group: str = Field(default="runtime", description="runtime, dev, optional:<extra>, build…")


class ManifestReport(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    manifests: list[str] = Field(default_factory=list)
    examples: list[str] = Field(
        default_factory=list,
        description="the manifests of examples, tests, benchmarks and docs: their "
        "dependencies are listed after the project's and are not the project's",
    )
    dependencies: list[Dependency] = Field(default_factory=list)
    names: list[str] = Field(
        default_factory=list,
        description="the packages the project's own manifests make (npm package, Python "
        "project, crate, Go module), which its code may import without declaring them",
    )
    scripts: dict[str, str] = Field(default_factory=dict, description="name → command")
    entry_points: dict[str, str] = Field(default_factory=dict, description="name → target")


class Pattern(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    description: str
    examples: list[Citation] = Field(default_factory=list)


class ImportReport(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    modules: int = 0
    edges: int = 0
    entry_points: list[str] = Field(default_factory=list)
    cycles: list[list[str]] = Field(default_factory=list)
    central: list[tuple[str, float]] = Field(
        default_factory=list, description="(path, PageRank), most central first"
    )
    external: list[tuple[str, int]] = Field(
        default_factory=list, description="(top-level package, importing files)"
    )
    conditional: dict[str, str] = Field(
        default_factory=dict,
        description="third-party packages no module needs to run → why: only under "
        "TYPE_CHECKING, only in try/except ImportError, only in tests, only in examples or docs",
    )
    sites: dict[str, Citation] = Field(
        default_factory=dict,
        description="each package of `external` → an import of it (in a file outside the "
        "tests when there is one): where a reader sees it imported",
    )


class GraphNode(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str
    package: str = Field(
        description="the directory the module is grouped under: the first level below the "
        "scope that tells modules apart ('.' for files at the top of the tree)"
    )
    rank: float = Field(ge=0, description="PageRank, as ImportReport.central has it")
    component: int | None = Field(
        default=None, description="index into ImportGraph.components when on an import cycle"
    )


class GraphEdge(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    source: str = Field(description="the importing module")
    target: str = Field(description="the imported module")
    line: int = Field(ge=1, description="the first line of source importing target")
    cycle: bool = Field(
        default=False,
        description="an import that runs, both ends in the same strongly connected component",
    )
    type_only: bool = Field(
        default=False,
        description="every import making the edge is read by type checkers only "
        "(`if TYPE_CHECKING:`, `import type`): on no cycle",
    )


class ImportGraph(BaseModel):
    """The import graph the imports explorer summarizes, whole: for pictures of it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    root: str = Field(description="the explored root, absolute")
    scope: str = Field(description="the explored path relative to the root ('.' for all)")
    nodes: list[GraphNode] = Field(default_factory=list, description="sorted by path")
    edges: list[GraphEdge] = Field(default_factory=list, description="sorted by (source, target)")
    components: list[list[str]] = Field(
        default_factory=list,
        description="strongly connected components of more than one module, largest first",
    )
    cycles: list[list[str]] = Field(
        default_factory=list, description="the shortest cycles, as ImportReport.cycles"
    )
    gaps: list[str] = Field(default_factory=list, description="what the graph cannot show")


class GitReport(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    branch: str | None = None
    head: str | None = None
    recent: list[str] = Field(default_factory=list, description="'<sha> <date> <subject>'")
    uncommitted: list[str] = Field(default_factory=list, description="'<status> <path>'")
    hot_files: list[tuple[str, int]] = Field(
        default_factory=list, description="(path, commits touching it)"
    )
    co_change: list[tuple[str, str, int]] = Field(
        default_factory=list, description="(path, path, commits touching both)"
    )


class Setting(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str = Field(description="the variable, flag (without --) or type")
    path: str = Field(description="its first site")
    line: int = Field(ge=1)
    sites: int = Field(default=1, ge=1, description="how many lines name it")


class ConfigReport(BaseModel):
    """Where and how the explored code is configured."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    files: list[str] = Field(default_factory=list, description="settings files")
    env: list[Setting] = Field(default_factory=list, description="environment variables read")
    flags: list[Setting] = Field(default_factory=list, description="command-line flags defined")
    classes: list[Setting] = Field(default_factory=list, description="configuration types")
    named: list[Setting] = Field(
        default_factory=list,
        description="settings a question names: a constant the code sets "
        "(`NUMBER_GROUPING = 0`, from the index's definitions) or an option registered "
        'by its name (`addini("tmp_path_retention_count", ...)`)',
    )


class Synthesis(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    unified: list[str] = Field(
        default_factory=list,
        description="the findings as lines: each a statement about the code, its citation "
        "and the tracks that support it",
    )
    findings: list[Finding] = Field(
        default_factory=list,
        description="statements about the code, each citing the lines that hold the "
        "definition or use it names (topic: that name), most supported first",
    )
    divergences: list[str] = Field(
        default_factory=list,
        description="where two tracks disagree (the same name at different locations, an "
        "entry point others import, an import no manifest declares, answers in files with "
        "uncommitted changes), each side cited at path:line; empty when they agree",
    )
    open_questions: list[str] = Field(default_factory=list)
    statement: str = Field(
        default="",
        description="the tracks' findings composed into one sentence, each part cited: "
        "where the answer's definitions are, who calls them and which tests reference "
        "them, the settings and the files that change with them ('' when no track "
        "places a definition)",
    )
    confidence: Literal["High", "Moderate", "Low"] = "Low"
    basis: str = ""


class ExploreResult(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str = Field(description="the explored path, relative to the root ('.' for all)")
    root: str
    depth: Depth
    focus: str | None = None
    commands: list[Command] = Field(
        default_factory=list,
        description="how to install, build, test, lint and run it: by kind in that order, "
        "the best first (for test, what CI runs)",
    )
    instructions: list[Finding] = Field(
        default_factory=list,
        description="the rules AGENTS.md, CLAUDE.md and CONTRIBUTING state, each at its line",
    )
    tree: TreeNode | None = None
    key_files: list[KeyFile] = Field(default_factory=list)
    patterns: list[Pattern] = Field(default_factory=list)
    dependencies: ManifestReport = Field(default_factory=ManifestReport)
    imports: ImportReport | None = None
    git: GitReport | None = None
    config: ConfigReport | None = None
    focus_findings: list[Finding] = Field(default_factory=list)
    summary: str = ""
    synthesis: Synthesis = Field(default_factory=Synthesis)
    tracks: list[TrackFindings] = Field(default_factory=list)
    track_lines: list[str] = Field(
        default_factory=list,
        description="under a budget, every track's bookkeeping in one line: name, gates, "
        "claims verified (a track with findings keeps them under `tracks`)",
    )
    timings: dict[str, float] = Field(
        default_factory=dict, description="seconds per track, plus 'wall' and 'sum'"
    )
    budget: int | None = Field(default=None, description="the token budget it was fitted to")
    omitted: dict[str, int] = Field(
        default_factory=dict, description="items left out per section for the budget"
    )
