"""Module specialists: how the code in scope uses one documented module, judged by its docs.

A specialist is added for each complex module found in scope, at most `MAX_SPECIALISTS`:

- an internal module: a directory holding code and its own context doc (``ai-context.md``,
  ``AGENTS.md``, ``CLAUDE.md``, or a ``README.md``/``README.rst`` below the root);
- a heavily used third-party Python package (imported by at least `MIN_IMPORTERS` files and
  `MIN_IMPORTER_SHARE` of the Python files in scope) that is installed where dowse runs:
  its documentation is its docstrings, read from the source with `ast`, never imported or
  executed. A package that is not installed gets no specialist, only a gap.

A specialist's only context is that documentation, and its only scope is how the rest of
the code uses the module (the module's own directory is its implementation, not a use):

    used      documented APIs the code calls, with their call sites
    missed    code re-implementing a documented helper: a function defined elsewhere with a
              documented API's name, or that name with a my_/custom_/local_ prefix or an
              _impl/_helper/_local suffix; or a string literal that the docs say a helper
              handles (`load_config()` reads "settings.json") written out by hand
    misuse    calls the docs rule out: "`X` is deprecated", "do not call `X`", "use `Y`
              instead of X" (X a call, or a phrase naming a literal such as settings.json);
              for a package, public functions that warn with a DeprecationWarning or say
              "deprecated" in their docstring - each with the documented alternative

The heuristics are chosen to be precise rather than complete, and say so in the gaps.
Test files are not checked for misuse or missed conveniences (tests call deprecated APIs on
purpose and build their fixtures by hand). Review only: a specialist never writes.

Three phases, in this order below: choosing the complex modules in scope; reading a
module's documentation into `Docs` (its APIs, usage rules and the literals its helpers
handle); and the review, the track that checks the code in scope against those docs.
"""

from __future__ import annotations

import ast
import bisect
import importlib.util
import itertools
import math
import posixpath
import re
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from dowse.explore.patterns import local_module_names
from dowse.explore.records import Citation, TrackSpec
from dowse.explore.tracks import STDLIB, Context, Track, TrackState, cite, plural
from dowse.indexer.parse import parse_source
from dowse.languages import CODE_LANGUAGES, is_test_path, language_for

__all__ = ["MAX_SPECIALISTS", "specialist_tracks"]


MAX_SPECIALISTS = 4
MIN_IMPORTERS = 3
MIN_IMPORTER_SHARE = 0.02
MAX_IMPORT_SCAN = 600

_DOC_NAMES = {"ai-context.md": 0, "agents.md": 1, "claude.md": 2, "readme.md": 3, "readme.rst": 4}


def specialist_tracks(ctx: Context) -> list[Track]:
    """One review track per complex module in scope: internal modules with their own
    context doc and heavily used installed packages, alternating, at most MAX_SPECIALISTS.

    An internal module's doc is read here (a doc that names none of the module's functions
    and no rule makes no specialist); a package's docstrings are read by its track. Notes on
    what was left out (a package that is not installed, ...) go to the first track's gaps.
    """
    notes: list[str] = []
    internal: list[Docs] = []
    for module, sources in _internal_modules(ctx):
        if len(internal) == MAX_SPECIALISTS:
            break
        docs = internal_docs(ctx, module, sources)
        if docs.apis or docs.rules:
            internal.append(docs)
        else:
            notes.append(
                f"{', '.join(sources)} names none of {module}'s functions and no "
                "usage rule: no specialist"
            )
    heavy, left_out = _heavy_packages(ctx)
    notes += left_out
    # A package's docstrings are read by its track, in parallel with the others.
    packages = [Docs(module=name, kind="package", sources=[origin]) for name, origin in heavy]
    chosen: list[Docs] = []
    while len(chosen) < MAX_SPECIALISTS and (internal or packages):
        for queue in (internal, packages):
            if queue and len(chosen) < MAX_SPECIALISTS:
                chosen.append(queue.pop(0))
    if internal or packages:
        notes.append(
            f"{len(internal) + len(packages)} more complex modules than "
            f"specialists ({MAX_SPECIALISTS}): not reviewed"
        )
    return [specialist_track(ctx, docs, notes if i == 0 else []) for i, docs in enumerate(chosen)]


# -- choosing the complex modules ---------------------------------------------------------


def _internal_modules(ctx: Context) -> list[tuple[str, list[str]]]:
    """(directory, its context docs in priority order), best documented and biggest first."""
    docs: dict[str, list[str]] = defaultdict(list)
    for p in ctx.files():
        d, name = posixpath.split(p)
        # The scope's own doc describes what is explored, not a module inside it.
        if d and d != ctx.scope and name.lower() in _DOC_NAMES and not is_test_path(d + "/"):
            docs[d].append(p)
    code = [p for p in ctx.files() if language_for(p) in CODE_LANGUAGES]
    ranked = []
    for d, paths in docs.items():
        n = sum(1 for p in code if p.startswith(d + "/"))
        if n:
            paths.sort(key=lambda p: _DOC_NAMES[posixpath.basename(p).lower()])
            ranked.append((_DOC_NAMES[posixpath.basename(paths[0]).lower()], -n, d, paths))
    return [(d, paths) for _, _, d, paths in sorted(ranked)]


def _heavy_packages(ctx: Context) -> tuple[list[tuple[str, str]], list[str]]:
    """(package, its source file) for installed third-party packages imported by many files
    in scope, most importers first; and notes on the ones left out."""
    py = [p for p in ctx.files() if p.endswith(".py")]
    # A large scope is judged on an evenly spaced sample of its Python files.
    scanned = py[:: math.ceil(len(py) / MAX_IMPORT_SCAN)] if py else []
    local = local_module_names(ctx.all_files())
    importers: Counter[str] = Counter()
    for p in scanned:
        lines = ctx.lines(p)
        if lines is None:
            continue
        importers.update({top for top, _, _ in python_imports("\n".join(lines))})
    threshold = max(MIN_IMPORTERS, math.ceil(MIN_IMPORTER_SHARE * len(scanned)))
    out: list[tuple[str, str]] = []
    notes: list[str] = []
    root = ctx.root.resolve()
    for name, n in sorted(importers.items(), key=lambda kv: (-kv[1], kv[0])):
        if n < threshold or name in STDLIB or name in local:
            continue
        origin = _source_of(name)
        if origin is None:
            notes.append(
                f"`{name}` is imported by {n} of {len(scanned)} Python files but is "
                "not installed here as Python source: no offline documentation, no "
                "specialist"
            )
        elif root in Path(origin).resolve().parents:
            continue  # the package is this repository itself, installed in development mode
        else:
            out.append((name, origin))
    return out, notes


def _source_of(name: str) -> str | None:
    """The package's source file, found without importing it; None when there is none."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return spec.origin


# -- a module's documentation: what it names and what it rules out ------------------------

MAX_DOC_FILES = 16
MAX_DOC_BYTES = 400_000

Site = tuple[str, int]
DocSite = tuple[str, int, int]
"""A doc sentence: (path, first line, last line)."""
_Kind = Literal["instead", "deprecated", "forbidden"]

_NOT_APIS = frozenset(
    {
        "if",
        "for",
        "while",
        "return",
        "print",
        "len",
        "str",
        "int",
        "float",
        "bool",
        "dict",
        "list",
        "set",
        "tuple",
        "range",
        "super",
        "isinstance",
        "type",
        "object",
        "self",
        "not",
        "and",
        "or",
        "in",
        "is",
        "with",
        "assert",
        "lambda",
        "yield",
        "await",
        "function",
        "require",
        "import",
        "from",
        "new",
        "console",
        "None",
        "True",
        "False",
        "null",
        "true",
        "false",
        "this",
        "def",
        "class",
    }
)
_LITERAL_EXTS = "json|ya?ml|toml|ini|cfg|conf|env|txt|csv|db|sqlite3?|xml|lock|pem"

_TOKEN = r"``?[^`\n]+?``?|[A-Za-z_][\w.]*\(\)"
_PHRASE = r"(?P<rest>.*)"
_RULES: list[tuple[_Kind, re.Pattern[str]]] = [
    (
        "instead",
        re.compile(
            rf"\buse\s+(?P<good>{_TOKEN})\s+(?:instead\s+of|rather\s+than)\s+"
            rf"(?P<bad>.+?)(?=[.;!?](?:\s|$)|$)",
            re.I,
        ),
    ),
    (
        "instead",
        re.compile(rf"\binstead\s+of\s+(?P<bad>[^,;]+?),\s*use\s+(?P<good>{_TOKEN})", re.I),
    ),
    (
        "instead",
        re.compile(
            rf"\bprefer\s+(?P<good>{_TOKEN})\s+(?:over|to)\s+"
            rf"(?P<bad>.+?)(?=[.;!?](?:\s|$)|$)",
            re.I,
        ),
    ),
    ("deprecated", re.compile(rf"(?P<bad>{_TOKEN})\s+(?:is|are)\s+deprecated\b{_PHRASE}", re.I)),
    ("deprecated", re.compile(rf"\bdeprecated:?\s+(?P<bad>{_TOKEN}){_PHRASE}", re.I)),
    (
        "forbidden",
        re.compile(
            rf"\b(?:do\s+not|don't|never)\s+(?:call|use)\s+(?P<bad>{_TOKEN})"
            rf"{_PHRASE}",
            re.I,
        ),
    ),
]
# A bare alternative must look like code (fetch_json, np.vstack), not a word ("use it").
_ALTERNATIVE = re.compile(
    rf"\b(?:use|in\s+favou?r\s+of|replaced\s+by)\s+"
    rf"(?P<good>{_TOKEN}|[A-Za-z_]\w*(?:[._]\w+)+)",
    re.I,
)
_FILE_LITERAL = re.compile(rf"[\w./-]*\w\.(?:{_LITERAL_EXTS})\b")
_LITERAL = re.compile(rf"{_FILE_LITERAL.pattern}|\"[^\"\n]+\"|'[^'\n]+'")
_IDENT_CALL = re.compile(r"\s*(?P<name>[A-Za-z_][\w.]*)\s*(?:\([^)]*\))?\s*")
_BACKTICK = re.compile(r"``?([^`\n]+?)``?")
_CODE_CALL = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)\s*\(")
_DEF = re.compile(
    r"^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:pub(?:\([^)\n]*\))?[ \t]+)?(?:async[ \t]+)?"
    r"(?:def|function\*?|func|fn)[ \t]+(?:\([^)\n]*\)[ \t]*)?([A-Za-z_]\w*)"
    r"|^[ \t]*(?:export[ \t]+)?(?:const|let|var)[ \t]+([A-Za-z_$][\w$]*)[ \t]*=[ \t]*"
    r"(?:async[ \t]+)?(?:function\b|\([^)\n]*\)[ \t]*=>|[A-Za-z_$][\w$]*[ \t]*=>)",
    re.MULTILINE,
)
_DOC_DEPRECATED = re.compile(
    r"^\s*\.\.\s+deprecated::|^\s*!!!\s+\w+\s+\"deprecated"
    r"|^\s*deprecated\b(?!\s*=)",
    re.I | re.M,
)
_SECTION = re.compile(
    r"^\s*(?:Args|Arguments|Parameters|Params|Keyword Arg(?:ument)?s|Returns|"
    r"Raises|Attributes|Yields|Examples?)\s*:?\s*$|^\s*:param\b",
    re.M,
)


@dataclass
class Api:
    name: str
    summary: str = ""
    doc: DocSite | None = None
    """Where the documentation names it (an internal module's doc file)."""
    defined: Site | None = None
    """Where the module defines it (internal modules)."""


@dataclass
class Rule:
    kind: _Kind
    text: str
    bad: str
    good: str | None
    doc: DocSite | None
    call: str | None = None
    """The API whose calls break the rule."""
    literal: str | None = None
    """The literal whose hand-written use breaks the rule."""


@dataclass
class Docs:
    module: str
    kind: Literal["internal", "package"]
    sources: list[str]
    apis: dict[str, Api] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    helpers: list[tuple[str, str, str, DocSite]] = field(default_factory=list)
    """(api, literal, sentence, doc site): "`load_config()` reads settings.json"."""
    notes: list[str] = field(default_factory=list)


# -- reading the documentation -----------------------------------------------------------


def internal_docs(ctx: Context, module: str, sources: list[str]) -> Docs:
    docs = Docs(module=module, kind="internal", sources=sources)
    defined = definitions(
        ctx,
        [
            p
            for p in ctx.files()
            if p.startswith(module + "/") and language_for(p) in CODE_LANGUAGES
        ],
    )
    for path in sources:
        lines = ctx.lines(path) or []
        in_code = False
        for i, line in enumerate(lines, 1):
            stripped = line.strip()
            if stripped.startswith(("```", "~~~")):
                in_code = not in_code
                continue
            if in_code:
                names = [*_CODE_CALL.findall(line), *def_names(line)]
            else:
                names = [
                    ident.group("name").split(".")[-1]
                    for span in _BACKTICK.findall(line)
                    if (ident := _IDENT_CALL.fullmatch(span))
                ]
            for name in names:
                if name in _NOT_APIS or name not in defined or name in docs.apis:
                    continue
                docs.apis[name] = Api(
                    name=name, summary=stripped[:120], doc=(path, i, i), defined=defined[name]
                )
        for text, first, last in _sentences(lines):
            _rules_in(docs, text, (path, first, last))
    for rule in docs.rules:
        own = (rule.call or "").split(".")[-1]
        if own in defined:
            rule.call = own  # the module's own function, however the doc qualifies it
            if own not in docs.apis:
                docs.apis[own] = Api(
                    name=own, summary=rule.text, doc=rule.doc, defined=defined[own]
                )
    return docs


def _sentences(lines: list[str]) -> Iterator[tuple[str, int, int]]:
    """(sentence, first line, last line) of a doc's prose: paragraphs (a list item or a
    heading starts a new one) split at sentence ends; code blocks left out."""
    paragraphs: list[list[tuple[int, str]]] = [[]]
    in_code = False
    for i, line in enumerate(lines, 1):
        text = line.strip()
        fence = text.startswith(("```", "~~~"))
        in_code = in_code != fence
        if (
            fence
            or in_code
            or not text
            or text.startswith(("-", "*", "+", "#"))
            or re.match(r"\d+[.)]\s", text)
        ):
            paragraphs.append([])
        if text and not fence and not in_code:
            paragraphs[-1].append((i, re.sub(r"^(?:[-*+#]+|\d+[.)])\s+", "", text)))
    for para in paragraphs:
        joined, starts = "", []
        for n, text in para:
            starts.append((len(joined), n))
            joined += text + " "
        for m in re.finditer(r"\S.*?(?:[.!?](?=\s)|$)", joined):
            first = max(n for off, n in starts if off <= m.start())
            last = max(n for off, n in starts if off < m.end())
            yield m.group().strip(), first, last


def _rules_in(docs: Docs, sentence: str, site: DocSite) -> None:
    matched = False
    for kind, rx in _RULES:
        for m in rx.finditer(sentence):
            bad = m.group("bad").strip()
            good = m.groupdict().get("good")
            if good is None and "rest" in m.groupdict():
                alt = _ALTERNATIVE.search(m.group("rest") or "")
                good = alt.group("good") if alt else None
            rule = Rule(
                kind=kind,
                text=sentence,
                bad=bad.strip("` "),
                good=good.strip("` ") if good else None,
                doc=site,
            )
            call = _IDENT_CALL.fullmatch(bad.strip("`"))
            if (
                call
                and ("(" in bad or bad.startswith("`"))
                and not _FILE_LITERAL.fullmatch(call.group("name"))
            ):
                rule.call = call.group("name")  # dotted stays dotted: `json.load`, not `load`
            else:
                lit = _LITERAL.search(bad)
                called = re.search(r"([A-Za-z_]\w*)\(\)", bad)
                if lit:
                    rule.literal = lit.group().strip("'\"")
                elif called:
                    rule.call = called.group(1)
            if not any(r.bad == rule.bad and r.doc == rule.doc for r in docs.rules):
                docs.rules.append(rule)
            matched = True
    if matched:
        return
    # A helper described as handling a literal: "`load_config()` reads settings.json".
    apis = [
        ident.group("name").split(".")[-1]
        for span in _BACKTICK.findall(sentence)
        if (ident := _IDENT_CALL.fullmatch(span))
    ]
    literal = _FILE_LITERAL.search(_BACKTICK.sub(" ", sentence))
    if apis and literal:
        docs.helpers.append((apis[0], literal.group().strip("'\""), sentence, site))


def read_package_docs(docs: Docs, *, priority: set[str]) -> None:
    """Public names, docstrings and deprecations of an installed package, read with `ast`.

    From the package's ``__init__``, imports of its public names are followed (at most
    MAX_DOC_FILES files) into its own modules and a private twin such as ``_pytest``, so
    re-exported functions are found where they are defined; modules providing a name in
    `priority` (the names the code uses) are read first."""
    name = docs.module
    start = Path(docs.sources[0])
    site = start.parent.parent if start.name == "__init__.py" else start.parent
    first: deque[tuple[Path, frozenset[str] | None]] = deque([(start, None)])
    later: deque[tuple[Path, frozenset[str] | None]] = deque()
    seen: set[Path] = set()
    exported: frozenset[str] | None = None
    while (first or later) and len(seen) < MAX_DOC_FILES:
        path, wanted = (first or later).popleft()
        if path in seen:
            continue
        seen.add(path)
        try:
            if path.stat().st_size > MAX_DOC_BYTES:
                continue
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError, OSError):
            docs.notes.append(f"{path.name}: could not be parsed")
            continue
        if path == start:
            exported = _dunder_all(tree)
        names = wanted if path != start else exported  # None: every public name
        for node in _statements(tree.body):
            if isinstance(node, ast.ImportFrom):
                target = _import_target(node, path, site, name)
                if target is None:
                    continue
                if any(a.name == "*" for a in node.names):
                    (first if names is None or names & priority else later).append((target, names))
                    continue
                public = frozenset(
                    a.name
                    for a in node.names
                    if not a.name.startswith("_")
                    and (names is None or (a.asname or a.name) in names)
                )
                if public:
                    (first if public & priority else later).append((target, public))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if any(_called_name(d) == "overload" for d in node.decorator_list):
                    continue  # one calling form, not the function
                if node.name.startswith("_") or (names is not None and node.name not in names):
                    continue
                doc = ast.get_docstring(node) or ""
                docs.apis.setdefault(node.name, Api(name=node.name, summary=_summary(doc)))
                if not isinstance(node, ast.ClassDef):
                    _package_deprecation(docs, node, doc)
            elif isinstance(node, ast.Assign) and names is not None:
                # Public objects that are not functions (pytest.mark): named, undocumented.
                for target_node in node.targets:
                    if isinstance(target_node, ast.Name) and target_node.id in names:
                        docs.apis.setdefault(target_node.id, Api(name=target_node.id))
    if first or later:
        docs.notes.append(
            f"`{name}`: read {len(seen)} of its source files for documentation "
            f"(limit {MAX_DOC_FILES}, the modules of the names used first); "
            "some public names may be missing"
        )


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, including those under `if`/`try` (TYPE_CHECKING blocks,
    optional imports), but not inside functions or classes."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _statements(node.body)
            yield from _statements(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _statements(node.body)
            for handler in node.handlers:
                yield from _statements(handler.body)
        else:
            yield node


def _import_target(node: ast.ImportFrom, path: Path, site: Path, package: str) -> Path | None:
    """The source file an import inside the package reads from, when it is the package's
    own (relative, or absolute under the package or its private twin)."""
    if node.level:
        base = path.parent
        for _ in range(node.level - 1):
            base = base.parent
        if not node.module:
            return None  # `from . import sub`: submodules, not names
        candidate = base / node.module.replace(".", "/")
    elif node.module and node.module.split(".")[0] in (package, "_" + package):
        candidate = site / node.module.replace(".", "/")
    else:
        return None
    for target in (candidate.with_name(candidate.name + ".py"), candidate / "__init__.py"):
        if target.is_file():
            return target
    return None


def _summary(doc: str) -> str:
    """The first prose line of a docstring (admonitions, directives and signatures skipped)."""
    for line in doc.splitlines():
        text = line.strip()
        if (
            text
            and not text.startswith(("!!!", "..", ">>>", "::", "["))
            and not re.match(r"[\w.]+\(.*\)\s*(->.*)?$", text)
        ):
            return text[:120]
    return ""


def _dunder_all(tree: ast.Module) -> frozenset[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            return frozenset(v for v in value if isinstance(v, str))
    return None


def _package_deprecation(
    docs: Docs, node: ast.FunctionDef | ast.AsyncFunctionDef, doc: str
) -> None:
    """Record a rule when a public function is deprecated: its docstring says so (Sphinx
    ``.. deprecated::``, "is deprecated", a first line about it), it is decorated with
    ``@deprecated(...)``, or its body warns with a DeprecationWarning unconditionally (a
    warning under an `if` is about an argument, not the function)."""
    message = ""
    # Only the description: a deprecation under "Args:" is about an argument.
    prose = _SECTION.split(doc, maxsplit=1)[0]
    said = _DOC_DEPRECATED.search(prose) or re.search(
        rf"\b(?:this\s+(?:function|method|helper|class|alias|api|callable)|it|"
        rf"`?{re.escape(node.name)}(?:\(\))?`?)\s+(?:is|has\s+been)\s+"
        r"deprecated\b",
        prose,
        re.I,
    )
    if said:
        message = prose[said.start() :]
    for stmt in node.body[:6]:
        if (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and _called_name(stmt.value.func) == "warn"
        ):
            args = [*stmt.value.args, *(k.value for k in stmt.value.keywords)]
            if any(
                "Deprecat" in _called_name(a) or _called_name(a) == "FutureWarning" for a in args
            ):
                message = message or _constants(args) or "deprecated"
    for deco in node.decorator_list:
        if _called_name(deco.func if isinstance(deco, ast.Call) else deco) == "deprecated":
            text = _constants(deco.args) if isinstance(deco, ast.Call) else ""
            message = message or text or "deprecated"
    if not message:
        return
    alt = _ALTERNATIVE.search(re.sub(r":\w+:", "", message))
    good = alt.group("good").strip("`~ ()") if alt else None
    text = " ".join(" ".join(message.strip().splitlines()[:3]).split())
    docs.rules.append(
        Rule(kind="deprecated", text=text[:160], bad=node.name, good=good, doc=None, call=node.name)
    )


def _constants(args: Iterable[ast.expr]) -> str:
    return " ".join(
        a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)
    )


def _called_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


# -- reading code: definitions and imports ---------------------------------------------

_PY_IMPORT = re.compile(
    r"^[ \t]*import[ \t]+([^\n#;]+)|^[ \t]*from[ \t]+([A-Za-z_][\w.]*)"
    r"[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)",
    re.MULTILINE,
)


def python_imports(text: str) -> Iterator[tuple[str, str, list[tuple[str, str]]]]:
    """(top-level package, module, [(imported name, bound name)]) per import; for a plain
    `import a.b as c` the single pair is ("", "c") - the bound name stands for the module."""
    for m in _PY_IMPORT.finditer(text):
        if m.group(1):
            for part in m.group(1).split(","):
                words = part.split()
                if not words or not re.fullmatch(r"[A-Za-z_][\w.]*", words[0]):
                    continue
                bound = words[2] if len(words) == 3 and words[1] == "as" else words[0].split(".")[0]
                yield words[0].split(".")[0], words[0], [("", bound)]
        else:
            module = m.group(2)
            pairs = []
            for part in m.group(3).strip("() \t\n").split(","):
                words = part.split()
                if words and re.fullmatch(r"\w+", words[0]):
                    pairs.append((words[0], words[2] if len(words) == 3 else words[0]))
            yield module.split(".")[0], module, pairs


def def_names(line: str) -> set[str]:
    return {m.group(1) or m.group(2) for m in _DEF.finditer(line)}


def definitions(ctx: Context, paths: Iterable[str]) -> dict[str, Site]:
    """Function names defined in `paths` and where, the first definition of each."""
    found: dict[str, Site] = {}
    for path in paths:
        lines = ctx.lines(path) or []
        text = "\n".join(lines)
        starts = list(itertools.accumulate((len(ln) + 1 for ln in lines[:-1]), initial=0))
        for m in _DEF.finditer(text):
            line = bisect.bisect_right(starts, m.start())
            found.setdefault(m.group(1) or m.group(2), (path, line))
    return found


# -- the review: shared limits and helpers -----------------------------------------------

MAX_SITES = 3
MAX_USED_CLAIMS = 8

_GENERIC = frozenset(
    {
        "main",
        "run",
        "setup",
        "init",
        "start",
        "stop",
        "close",
        "open",
        "read",
        "write",
        "load",
        "save",
        "test",
        "call",
        "apply",
        "handle",
        "process",
        "execute",
        "update",
        "create",
        "delete",
        "render",
        "parse",
        "build",
        "check",
        "reset",
        "clear",
        "send",
        "fetch",
    }
)
_PREFIXES = ("my_", "custom_", "local_", "simple_", "_")
_SUFFIXES = ("_impl", "_helper", "_local", "_custom", "_manual", "_fallback", "2")


class _Spans:
    """Symbol line ranges per file, parsed on demand (only files with a candidate site)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.cache: dict[str, list[tuple[str, int, int]]] = {}

    def symbols(self, path: str) -> list[tuple[str, int, int]]:
        if path not in self.cache:
            language = language_for(path) or ""
            source = "\n".join(self.ctx.lines(path) or []).encode()
            parsed = parse_source(path, source, language)
            # From the name's line: a site is where the definition's name is written.
            self.cache[path] = [(s.name, s.name_line, s.end_line) for s in parsed.symbols]
        return self.cache[path]

    def inside(self, path: str, line: int, name: str) -> bool:
        """Whether `line` of `path` lies in a definition named `name`."""
        return any(n == name and a <= line <= b for n, a, b in self.symbols(path))

    def body(self, path: str, line: int, name: str) -> list[str]:
        """The lines after the definition of `name` starting at `line`, to its end."""
        end = next((b for n, a, b in self.symbols(path) if n == name and a == line), line)
        return (self.ctx.lines(path) or [])[line:end]


def _cite_all(ctx: Context, sites: Iterable[Site | DocSite | None]) -> list[Citation]:
    out = []
    for site in sites:
        if site is not None:
            c = cite(ctx, site[0], site[1], site[-1])
            if c is not None and c.quote:
                out.append(c)
    return out


def _ref(site: Site | DocSite) -> str:
    if len(site) == 3 and site[1] != site[-1]:
        return f"{site[0]}:{site[1]}-{site[-1]}"
    return f"{site[0]}:{site[1]}"


def _refs(sites: list[Site]) -> str:
    more = f" and {len(sites) - MAX_SITES} more" if len(sites) > MAX_SITES else ""
    return ", ".join(_ref(s) for s in sites[:MAX_SITES]) + more


def _resemblance(apis: Iterable[Api]) -> dict[str, Api]:
    """Local function names that would re-implement each API, lowercased: the API's name up
    to case and underscores ("loadconfig"), or with a my_/custom_/... prefix or an
    _impl/_helper/... suffix. Generic names (run, load, ...) and short ones are left out."""
    forms: dict[str, Api] = {}
    for api in apis:
        target = api.name.lower()
        if len(api.name) < 4 or target.strip("_") in _GENERIC:
            continue
        forms.setdefault("=" + target.replace("_", ""), api)
        for affixed in [*(p + target for p in _PREFIXES), *(target + x for x in _SUFFIXES)]:
            forms.setdefault(affixed, api)
    return forms


def _resembled(forms: dict[str, Api], local: str) -> Api | None:
    low = local.lower()
    return forms.get("=" + low.replace("_", "")) or forms.get(low)


# -- the review --------------------------------------------------------------------------


@dataclass
class _Review:
    used: int = 0
    missed: int = 0
    misuse: int = 0
    done: bool = False


def specialist_track(ctx: Context, given: Docs, notes: list[str]) -> Track:
    """A specialist for one module: `given` holds an internal module's documentation, or
    only a package's name and source file (its docstrings are read when the track runs)."""
    module, kind, sources = given.module, given.kind, given.sources
    where = "the module's directory" if kind == "internal" else "the installed package"
    spec = TrackSpec(
        name=f"uses of {module}",
        focus=f"how {ctx.scope or '.'} uses {module}",
        approach=f"read only {module}'s documentation ("
        + (
            ", ".join(sources)
            if kind == "internal"
            else "docstrings of the installed package, parsed with ast, never imported"
        )
        + f"); find its documented APIs' call sites outside {where}, functions "
        "re-implementing documented helpers, and calls the documentation rules out; "
        "review only, nothing is changed",
        gates=[
            "understood: the documentation was read and names APIs or usage rules",
            "evidence: each use, missed convenience and misuse cites the code lines (and "
            "the documentation line for an internal module)",
            "complete: usage, missed conveniences and misuse were each checked",
        ],
        deliverable="documented APIs used and where; missed conveniences; misuse against the "
        "documentation with the idiomatic alternative",
    )
    review = _Review()

    def understand(state: TrackState) -> tuple[bool, str]:
        nonlocal review
        review = _Review()
        state.gaps.extend(notes)
        code = _code_outside(ctx, given)
        docs, calls, imported_at = _read_docs(ctx, given, code)
        state.gaps.extend(docs.notes)
        if not docs.apis and not docs.rules:
            state.gaps.append(f"{module}: its documentation names none of its APIs")
            return False, "the documentation names no API of the module and no usage rule"
        topic = f"uses of {module}"
        _claim_documented(ctx, state, docs, imported_at, topic)
        spans = _Spans(ctx)
        _report_used(ctx, state, docs, calls, review, topic)
        flagged = _report_misuse(ctx, state, docs, code, calls, spans, review, topic)
        _report_missed(ctx, state, docs, code, spans, flagged, review, topic)
        review.done = True
        return True, (
            f"{len(docs.apis)} documented APIs, {len(docs.rules)} usage rules, "
            f"{len(docs.helpers)} helper descriptions"
        )

    def complete(state: TrackState) -> tuple[bool, str]:
        if not review.done:
            return False, "the review did not run"
        return True, (
            f"{review.used} documented APIs used, {review.missed} missed "
            f"conveniences, {review.misuse} misuses"
        )

    return Track(spec=spec, understand=understand, complete=complete)


# -- the phases: the code to review, the documentation, what it documents ------------------


def _code_outside(ctx: Context, given: Docs) -> list[str]:
    """The code files to review: all in scope but an internal module's own."""
    return [
        p
        for p in ctx.files()
        if language_for(p) in CODE_LANGUAGES
        and not (given.kind == "internal" and p.startswith(given.module + "/"))
    ]


def _read_docs(
    ctx: Context, given: Docs, code: list[str]
) -> tuple[Docs, dict[str, list[Site]], list[Site]]:
    """The module's documentation, the calls of its documented APIs in `code`, and (for
    an installed package) where `code` imports it."""
    if given.kind == "internal":
        return given, _internal_calls(ctx, code, given), []
    uses, imported_at = _package_uses(ctx, code, given.module)
    docs = Docs(module=given.module, kind="package", sources=given.sources)
    read_package_docs(docs, priority=set(uses))
    return docs, {n: sites for n, sites in uses.items() if n in docs.apis}, imported_at


def _claim_documented(
    ctx: Context, state: TrackState, docs: Docs, imported_at: list[Site], topic: str
) -> None:
    """The first claim: what an internal module documents, or where a package is imported."""
    if docs.kind == "internal":
        first = [a.doc for a in docs.apis.values() if a.doc][:MAX_SITES]
        state.claim(
            f"{docs.module} documents {len(docs.apis)} of its APIs in "
            f"{', '.join(docs.sources)}: {', '.join(sorted(docs.apis)) or 'none'}",
            *_cite_all(ctx, first or [r.doc for r in docs.rules][:1]),
            topic=topic,
        )
    else:
        state.claim(
            f"`{docs.module}` is imported by {plural(len(imported_at), 'file')} in "
            f"scope: {_refs(imported_at)}",
            *_cite_all(ctx, imported_at[:MAX_SITES]),
            topic=topic,
        )


def _report_used(
    ctx: Context,
    state: TrackState,
    docs: Docs,
    calls: dict[str, list[Site]],
    review: _Review,
    topic: str,
) -> None:
    unused = []
    for name in sorted(docs.apis, key=lambda n: (-len(calls.get(n, [])), n)):
        sites = calls.get(name, [])
        if not sites:
            unused.append(name)
            continue
        review.used += 1
        if review.used > MAX_USED_CLAIMS:
            continue
        api = docs.apis[name]
        doc = (
            f" (documented at {_ref(api.doc)})"
            if api.doc
            else f" (documented: {api.summary!r})"
            if api.summary
            else ""
        )
        files = len({p for p, _ in sites})
        state.claim(
            f"`{name}`{doc} is used at {plural(len(sites), 'site')} in "
            f"{plural(files, 'file')}: {_refs(sites)}",
            *_cite_all(ctx, sites[:MAX_SITES]),
            topic=topic,
        )
    if review.used > MAX_USED_CLAIMS:
        state.gaps.append(f"{review.used - MAX_USED_CLAIMS} more used APIs not itemized")
    outside = f" outside {docs.module}" if docs.kind == "internal" else ""
    if unused:
        state.conclusions.append(
            f"documented but not used{outside}: "
            + ", ".join(unused[:10])
            + ("…" if len(unused) > 10 else "")
        )
    state.conclusions.append(
        f"{docs.module}: {review.used} of {len(docs.apis)} documented APIs are used{outside}"
    )


def _report_misuse(
    ctx: Context,
    state: TrackState,
    docs: Docs,
    code: list[str],
    calls: dict[str, list[Site]],
    spans: _Spans,
    review: _Review,
    topic: str,
) -> set[Site]:
    flagged: set[Site] = set()
    for rule in docs.rules:
        if rule.call is None and rule.literal is None:
            state.gaps.append(f"rule not checkable by pattern: {rule.text!r}")
            continue
        if docs.kind == "package" and rule.call:
            # A package's names are matched through its imports, not by name alone.
            sites = [s for s in calls.get(rule.call, []) if not is_test_path(s[0])]
        else:
            sites = _rule_sites(ctx, code, rule, spans)
        if not sites:
            continue
        review.misuse += 1
        flagged.update(sites)
        what = f"`{rule.call}()` is called" if rule.call else f"{rule.literal!r} is used directly"
        said = f"{_ref(rule.doc)} says" if rule.doc else f"the documentation of `{rule.bad}` says"
        alternative = f"`{rule.good}`" if rule.good else "none named in the documentation"
        state.claim(
            f"Misuse of {docs.module}: {what} at {_refs(sites)}, but {said}: "
            f"{rule.text!r}; idiomatic alternative: {alternative}",
            *_cite_all(ctx, [*sites[:MAX_SITES], rule.doc]),
            topic=topic,
        )
        subject = f"`{rule.call}()`" if rule.call else repr(rule.literal)
        state.conclusions.append(
            f"misuse: {subject} at {plural(len(sites), 'site')}; "
            f"idiomatic alternative: {alternative}"
        )
    return flagged


def _report_missed(
    ctx: Context,
    state: TrackState,
    docs: Docs,
    code: list[str],
    spans: _Spans,
    flagged: set[Site],
    review: _Review,
    topic: str,
) -> None:
    # A package's helpers are its lowercase functions with specific enough names.
    forms = _resemblance(
        a
        for n, a in sorted(docs.apis.items())
        if docs.kind == "internal" or (len(n) >= 6 and n[:1].islower())
    )
    local = definitions(ctx, (p for p in code if not is_test_path(p)))
    for name, site in sorted(local.items(), key=lambda kv: kv[1]):
        api = _resembled(forms, name)
        if api is None or site in flagged:
            continue
        if any(
            re.search(rf"\b{re.escape(api.name)}\s*\(", ln)
            for ln in spans.body(site[0], site[1], name)
        ):
            continue  # a wrapper around the helper, not a re-implementation
        if docs.kind == "package" and not _imports_package(ctx, site[0], docs.module):
            continue
        if api.defined and language_for(api.defined[0]) != language_for(site[0]):
            continue  # a JavaScript slugify cannot call the Python one
        review.missed += 1
        where = f"documented at {_ref(api.doc)}" if api.doc else f"documented: {api.summary!r}"
        if api.defined:
            where = f"defined at {_ref(api.defined)}, {where}"
        state.claim(
            f"Missed convenience: {_ref(site)} defines `{name}`, re-implementing "
            f"{docs.module}'s `{api.name}` ({where}); idiomatic alternative: call "
            f"`{api.name}` from {docs.module}",
            *_cite_all(ctx, [site, api.doc]),
            topic=topic,
        )
    # A literal the docs say a helper handles, written out by hand.
    for api_name, literal, sentence, doc_site in docs.helpers:
        rule = Rule(
            kind="instead", text=sentence, bad=literal, good=api_name, doc=doc_site, literal=literal
        )
        sites = [s for s in _rule_sites(ctx, code, rule, spans) if s not in flagged]
        if not sites:
            continue
        review.missed += 1
        flagged.update(sites)
        state.claim(
            f"Missed convenience: {literal!r} is handled by hand at {_refs(sites)}, but "
            f"{_ref(doc_site)} says: {sentence!r}; idiomatic alternative: "
            f"`{api_name}()`",
            *_cite_all(ctx, [*sites[:MAX_SITES], doc_site]),
            topic=topic,
        )
    state.gaps.append(
        "missed conveniences are found by name and by documented literals "
        "only: a helper re-implemented under another name is not detected"
    )


def _internal_calls(ctx: Context, code: list[str], docs: Docs) -> dict[str, list[Site]]:
    names = sorted(docs.apis)
    if not names:
        return {}
    rx = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\s*\(")
    calls: dict[str, list[Site]] = defaultdict(list)
    for path in code:
        lines = ctx.lines(path) or []
        text = "\n".join(lines)
        if not any(n in text for n in names):
            continue
        for i, line in enumerate(lines, 1):
            defined = def_names(line) if rx.search(line) else set()
            for name in dict.fromkeys(m.group(1) for m in rx.finditer(line)):
                if name not in defined:
                    calls[name].append((path, i))
    return calls


def _package_uses(
    ctx: Context, code: list[str], package: str
) -> tuple[dict[str, list[Site]], list[Site]]:
    """Sites using each name of `package`, through the names its imports bind (`pkg.name`,
    `alias.name`, or `name` after `from pkg import name`); and each importing file's first
    import line."""
    uses: dict[str, list[Site]] = defaultdict(list)
    imported_at: list[Site] = []
    for path in code:
        if not path.endswith(".py"):
            continue
        lines = ctx.lines(path) or []
        text = "\n".join(lines)
        if package not in text:
            continue
        modules: set[str] = set()
        names: dict[str, str] = {}
        for top, _, pairs in python_imports(text):
            if top == package:
                for original, bound in pairs:
                    if original:
                        names[bound] = original
                    else:
                        modules.add(bound)
        if not modules and not names:
            continue
        attribute = (
            re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, sorted(modules))) + r")\.(\w+)")
            if modules
            else None
        )
        bare = (
            re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, sorted(names))) + r")\b")
            if names
            else None
        )
        first_import = True
        for i, line in enumerate(lines, 1):
            if line.lstrip().startswith(("import ", "from ")) and package in line:
                if first_import:
                    imported_at.append((path, i))
                    first_import = False
                continue
            used = {m.group(1) for m in attribute.finditer(line)} if attribute else set()
            if bare:
                used |= {names[m.group(1)] for m in bare.finditer(line)}
            for name in sorted(used):
                uses[name].append((path, i))
    return uses, imported_at


def _rule_sites(ctx: Context, code: list[str], rule: Rule, spans: _Spans) -> list[Site]:
    """Non-test code lines breaking `rule`, outside the definitions of the rule's subject
    and of its documented alternative."""
    if rule.call:
        rx = re.compile(rf"\b{re.escape(rule.call)}\s*\(")
        needle = rule.call
    elif rule.literal:
        rx = re.compile(rf"""(['"`])[^'"`\n]*{re.escape(rule.literal)}[^'"`\n]*\1""")
        needle = rule.literal
    else:
        return []
    good = (rule.good or "").split("(")[0].split(".")[-1]
    sites: list[Site] = []
    for path in code:
        if is_test_path(path):
            continue
        lines = ctx.lines(path) or []
        if needle not in "\n".join(lines):
            continue
        for i, line in enumerate(lines, 1):
            if not rx.search(line) or line.lstrip().startswith(("#", "//", "*")):
                continue
            if rule.call and rule.call in def_names(line):
                continue
            if (good and spans.inside(path, i, good)) or (
                rule.call and spans.inside(path, i, rule.call)
            ):
                continue
            sites.append((path, i))
    return sites


def _imports_package(ctx: Context, path: str, package: str) -> bool:
    text = "\n".join(ctx.lines(path) or [])
    return any(top == package for top, _, _ in python_imports(text))
