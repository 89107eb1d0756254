"""A module specialist's documentation: what a module's docs name and what they rule out.

`Docs` holds one module's documented APIs, its usage rules ("use `Y` instead of X", "`X`
is deprecated", "do not call `X`"), the literals its docs say a helper handles, and notes
on what could not be read. An internal module's docs are its context files: its APIs are
the functions it defines (`definitions`) that they name, in backticks or in a code block,
and its rules come from their prose, sentence by sentence. A package's docs are its
docstrings, read from its installed source with `ast`, never imported or executed.
`explore.specialists` chooses the modules; `explore.specialist_review` checks the code
against their `Docs`.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from dowse.explore.tracks import Context
from dowse.languages import CODE_LANGUAGES, language_for

__all__ = [
    "Api",
    "DocSite",
    "Docs",
    "Rule",
    "Site",
    "def_names",
    "definitions",
    "internal_docs",
    "read_package_docs",
]

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


# -- documentation -----------------------------------------------------------------------


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


# -- code --------------------------------------------------------------------------------


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
