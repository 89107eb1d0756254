"""Parse source with tree-sitter and extract its symbols and imports with tags queries.

Invariants:

- `parse_source` never raises because of its input (invalid UTF-8, binary garbage, deep
  nesting, a parse running past its deadline, a grammar that cannot load): it returns
  ``Parsed(tree=None, note=...)`` and the caller indexes the file as text. A file with
  syntax errors is not a failure: it yields whatever symbols tree-sitter recovers.
- Text is sliced from the source *bytes* by node byte offsets, then decoded with
  ``errors="replace"``; decoded text is never indexed by byte offsets (that drifts on
  non-ASCII input).
- Lines are 1-based and inclusive. A symbol ends where its definition node ends and
  starts at the first decorator, annotation, attribute or touching doc comment in front of
  it (`attach.top`); its signature starts after them, at the ``def``/``class``/``fn``
  line, and its ``decorators`` list them.
- Tree-sitter knowledge lives in ``queries/<language>-tags.scm``. This module knows only
  the capture names, which are checked when a query is compiled:

      @definition.<kind>, @name.definition.<kind>   a symbol and its name; <kind> is a
                                                    `SymbolKind`
      @doc                                          its docstring (a string or comment)
      @receiver                                     the type a method is declared on
                                                    outside that type's body (Go, C++)
      @scope, @name.scope                           encloses symbols and prefixes their
                                                    names, but is no symbol (Rust impl)
      @scope.trait                                  the trait a scope implements: its
                                                    symbols note `impl <trait> for <name>`
                                                    first in their decorators
      @import, @import.module, @import.name         an import, its module(s), its names
      @import.alias                                 the name a module or name is bound
                                                    to instead (`np` of `import numpy
                                                    as np`): the node beside it
      @import.path                                  one segment of a module path split
                                                    into several nodes (Scala); the
                                                    module spans them all
      @name.reference.<kind>, @reference.qualifier  a reference and what it is reached
                                                    through (`indexer.references`)
      @_anything                                    predicate helpers, ignored

  A query file may begin with ``; inherits: <language>[, <language>]`` to include other
  languages' queries before its own.
- A "function" is reported as a "method" when it has a @receiver or when the innermost
  definition enclosing it is an @scope or class-like (class, struct, interface, trait,
  enum). Functions nested in functions or modules stay functions.
- A C++ file whose parse has errors is parsed again with its specifier macros
  (`really_inline T f(...)`, `FMT_CONSTEXPR auto g()`) read as attributes
  (`indexer.specifier_macros`), and that tree is kept when fewer of its bytes are
  errors: the macro is then the symbol's decorator, and what it marks a symbol under its
  own name.
- Compiled queries are cached once per language and process; parsers once per language
  and thread, because a `tree_sitter.Parser` is not thread-safe.
"""

from __future__ import annotations

import functools
import inspect
import re
import threading
import time
from dataclasses import dataclass, field
from importlib.resources import files
from typing import cast, get_args

from tree_sitter import Language, Node, Parser, Point, Query, QueryCursor, Tree
from tree_sitter_language_pack import SupportedLanguage, get_language

from dowse.indexer.attach import (
    ATTRIBUTES,
    WRAPPERS,
    attributes_before,
    is_comment,
    top,
    trails_code,
)
from dowse.indexer.item_macros import unwrap_item_macros
from dowse.indexer.records import Import, Reference, Symbol, SymbolKind
from dowse.indexer.references import extract_references, is_reference_capture
from dowse.indexer.specifier_macros import blank_specifier_macros, error_size
from dowse.languages import CODE_LANGUAGES, GRAMMAR_NAMES, TEXT_LANGUAGES

__all__ = ["Parsed", "parse_source"]

SIGNATURE_MAX_CHARS = 200
DOCSTRING_MAX_CHARS = 500

_KINDS: frozenset[str] = frozenset(get_args(SymbolKind))
_CLASS_LIKE: frozenset[str] = frozenset({"class", "struct", "interface", "trait", "enum"})
_FIXED_CAPTURES = frozenset(
    {
        "doc",
        "receiver",
        "scope",
        "name.scope",
        "scope.trait",
        "import",
        "import.module",
        "import.path",
        "import.name",
        "import.alias",
    }
)
# Above this, tree-sitter's query cursor is too slow to run; see `_query_cost`.
_MAX_QUERY_COST = 10_000**2
_INHERITS = re.compile(r";\s*inherits\s*:\s*([\w\s,]+?)\s*\n")
_READ_CHUNK = 1 << 16


@dataclass
class Parsed:
    """The result of parsing one file."""

    tree: Tree | None  # None when the file fell back to text
    symbols: list[Symbol] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)  # resolved=None: resolution is later
    references: list[Reference] = field(default_factory=list)
    note: str = ""  # why the file fell back to text, e.g. "parse timed out after 2.0s"


def parse_source(path: str, source: bytes, language: str, *, timeout_s: float = 2.0) -> Parsed:
    """Parse `source` as `language` and extract its symbols and imports.

    `path` only labels the records. Parsing stops after `timeout_s` seconds of the
    parsing thread's CPU time and the file falls back to text; so does any failure of the
    grammar or extraction. CPU time, not wall time: on a busy machine a parse waits for a
    core, and a file must not be text in one run and code in the next (its rows stay
    until the file changes).
    """
    if language not in CODE_LANGUAGES:
        note = "" if language in TEXT_LANGUAGES else f"no grammar for language {language!r}"
        return Parsed(tree=None, note=note)
    try:
        grammar = _grammar(language)
        parser = _parser(language)
    except Exception as exc:  # a broken grammar or query must not stop indexing
        return Parsed(tree=None, note=f"grammar error: {_describe(exc)}")
    deadline = time.thread_time() + timeout_s
    try:
        tree = _parse(parser, source, deadline)
        if language == "rust":  # `cfg_net! { ... }`: the items inside are items
            source, tree = unwrap_item_macros(source, tree, lambda b: _parse(parser, b, deadline))
        elif language == "cpp" and tree.root_node.has_error:
            # `really_inline T f(...)`: parse the macro as the attribute it stands for; the
            # text (and every offset) stays the file's. (The C grammar reads these as a
            # type and its declarator, names right: zstd's symbols gained nothing.)
            blanked = blank_specifier_macros(source)
            if blanked is not source:
                reparsed = _parse(parser, blanked, deadline)
                if error_size(reparsed.root_node) < error_size(tree.root_node):
                    tree = reparsed
    except _TimedOut:
        return Parsed(tree=None, note=f"parse timed out after {timeout_s}s")
    except Exception as exc:  # as above: one file's failure is that file's note
        return Parsed(tree=None, note=f"parse error: {_describe(exc)}")
    if _query_cost(tree.root_node) > _MAX_QUERY_COST:
        return Parsed(tree=None, note="too many unmatched tokens to extract symbols")
    try:
        matches = QueryCursor(grammar.query).matches(tree.root_node)
        symbols = _symbols(path, source, language, matches)
        imports, aliases = _imports(path, source, matches)
        references = extract_references(path, source, matches, symbols, imports, aliases)
    except Exception as exc:  # a bug of the extraction falls back to text, with its note
        return Parsed(tree=None, note=f"symbol extraction error: {_describe(exc)}")
    return Parsed(tree=tree, symbols=symbols, imports=imports, references=references)


# -- grammars, queries and parsers -------------------------------------------------------


@dataclass(frozen=True)
class _Grammar:
    language: Language
    query: Query


@functools.cache
def _grammar(language: str) -> _Grammar:
    ts_language = get_language(cast(SupportedLanguage, GRAMMAR_NAMES[language]))
    query = Query(ts_language, _query_source(language))
    for index in range(query.capture_count):
        name = query.capture_name(index)
        if not _known_capture(name):
            raise ValueError(f"{language}-tags.scm: unknown capture @{name}")
    return _Grammar(ts_language, query)


def _query_source(language: str, _seen: tuple[str, ...] = ()) -> str:
    if language in _seen:
        raise ValueError(f"{language}-tags.scm inherits itself")
    # Anchored at the queries directory itself: `indexer` may be a namespace package,
    # whose path an editable install mixes with a non-directory placeholder.
    text = (files(f"{__package__}.queries") / f"{language}-tags.scm").read_text("utf-8")
    parts = []
    header = _INHERITS.match(text)
    if header is not None:
        for parent in header.group(1).split(","):
            parts.append(_query_source(parent.strip(), (*_seen, language)))
    parts.append(text)
    return "\n".join(parts)


def _known_capture(name: str) -> bool:
    if name in _FIXED_CAPTURES or name.startswith("_") or is_reference_capture(name):
        return True
    for prefix in ("definition.", "name.definition."):
        if name.startswith(prefix):
            return name[len(prefix) :] in _KINDS
    return False


_local = threading.local()


def _parser(language: str) -> Parser:
    parsers: dict[str, Parser] = _local.__dict__.setdefault("parsers", {})
    parser = parsers.get(language)
    if parser is None:
        parser = parsers[language] = Parser(_grammar(language).language)
    return parser


class _TimedOut(Exception):
    pass


def _parse(parser: Parser, source: bytes, deadline: float) -> Tree:
    """`source` parsed, or _TimedOut once the thread's CPU time (`time.thread_time`) passes
    `deadline`."""

    # The progress callback is only honoured when the source comes from a read callback;
    # with plain bytes py-tree-sitter ignores it (and warns).
    def read(offset: int, _point: Point) -> bytes:
        return source[offset : offset + _READ_CHUNK]

    def cancel(_offset: int, _has_error: bool) -> bool:
        return time.thread_time() > deadline

    try:
        return parser.parse(read, progress_callback=cancel)
    except BaseException:
        # A cancelled parse is otherwise *resumed* by the parser's next call, on the next
        # file's bytes.
        parser.reset()
        if time.thread_time() > deadline:
            raise _TimedOut from None
        raise


def _query_cost(root: Node) -> int:
    """Estimate the quadratic part of running a query over `root`.

    For each node it visits, tree-sitter's query cursor scans the following siblings up
    to the next named one. Error recovery can leave thousands of unmatched anonymous
    tokens side by side (``((((...``) under one ERROR node: a run of r of them costs
    about r*r steps, and a query that took minutes. Only nodes containing errors are
    visited, so a clean tree costs nothing here.
    """
    if not root.has_error:
        return 0
    cost = 0
    stack = [root]
    while stack:
        node = stack.pop()
        run = 0
        for child in node.children:
            if child.is_named:
                cost += run * run
                run = 0
            else:
                run += 1
            if child.has_error:
                stack.append(child)
        cost += run * run
    return cost


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


# -- symbols -----------------------------------------------------------------------------

_Matches = list[tuple[int, dict[str, list[Node]]]]


@dataclass
class _Definition:
    node: Node
    start: int  # byte offsets of `node`, read once: each read crosses into C
    end: int
    name: str
    kind: str | None  # None for an @scope: it names its contents but is not a symbol
    pattern: int
    name_start: int  # byte offset of the name: the signature's attributes end before it
    doc: Node | None = None
    receiver: str = ""
    qualified_name: str = ""
    trait: str = ""  # for a scope: the trait it implements


def _symbols(path: str, source: bytes, language: str, matches: _Matches) -> list[Symbol]:
    definitions: list[_Definition] = []
    for pattern, captures in matches:
        definition = _definition(source, pattern, captures)
        if definition is not None:
            definitions.append(definition)
    # Outer before inner; for one node matched by two patterns, the earlier pattern wins.
    definitions.sort(key=lambda d: (d.start, -d.end, d.pattern))
    symbols: list[Symbol] = []
    stack: list[_Definition] = []  # the definitions enclosing the current one
    seen: set[tuple[int, int, str, bool]] = set()
    for definition in definitions:
        key = (definition.start, definition.end, definition.name, definition.kind is None)
        if key in seen:
            continue
        seen.add(key)
        while stack and not (
            stack[-1].start <= definition.start <= definition.end <= stack[-1].end
        ):
            stack.pop()
        enclosing = stack[-1] if stack else None
        scope = [enclosing.qualified_name] if enclosing is not None else []
        if definition.receiver:
            scope.append(definition.receiver)
        parent = ".".join(scope) or None
        definition.qualified_name = ".".join([*scope, definition.name])
        stack.append(definition)
        if definition.kind is None:
            continue
        if definition.kind == "function" and (
            definition.receiver
            or (enclosing is not None and (enclosing.kind in _CLASS_LIKE or enclosing.kind is None))
        ):
            definition.kind = "method"
        node = definition.node
        outer, leads = top(node, source)
        inner = attributes_before(node, definition.name_start)
        first = leads[0] if leads else outer
        start_line, end_line = first.start_point.row + 1, _lines(node)[1]
        head, name_row = _signature_start(source, node, inner)
        qualified_name = definition.qualified_name
        # A trait impl's method is the trait's behaviour for the type: say which trait.
        implements = (
            [f"impl {enclosing.trait} for {enclosing.name}"]
            if enclosing is not None and enclosing.trait
            else []
        )
        symbols.append(
            Symbol(
                id=f"{path}#{qualified_name}@{start_line}",
                path=path,
                name=definition.name,
                qualified_name=qualified_name,
                kind=cast(SymbolKind, definition.kind),
                signature=_signature(source, node, head),
                docstring=_docstring(source, definition.doc, leads),
                decorators=implements
                + [
                    _truncate(_one_line(_text(source, n)), SIGNATURE_MAX_CHARS)
                    for n in [*leads, *inner]
                    if n.type in ATTRIBUTES
                ],
                start_line=start_line,
                end_line=end_line,
                name_line=name_row + 1,
                parent=parent,
                language=language,
            )
        )
    return symbols


def _definition(source: bytes, pattern: int, captures: dict[str, list[Node]]) -> _Definition | None:
    kind: str | None = None
    node = name = None
    for capture, nodes in captures.items():
        if capture.startswith("definition."):
            kind, node = capture[len("definition.") :], nodes[0]
        elif capture.startswith("name.definition."):
            name = nodes[0]
    if node is None and "scope" in captures:
        node, name = captures["scope"][0], captures.get("name.scope", [None])[0]
    if node is None or name is None:
        return None
    text = _one_line(_text(source, name))
    if not text:
        return None
    receiver = captures.get("receiver")
    doc = captures.get("doc")
    trait = captures.get("scope.trait")
    return _Definition(
        node=node,
        start=node.start_byte,
        end=node.end_byte,
        name=text,
        kind=kind,
        pattern=pattern,
        name_start=name.start_byte,
        doc=doc[0] if doc else None,
        receiver=_one_line(_text(source, receiver[0])) if receiver else "",
        trait=_one_line(_text(source, trait[0])) if trait and kind is None else "",
    )


def _lines(node: Node) -> tuple[int, int]:
    start = node.start_point.row + 1
    end_row, end_column = node.end_point
    # A node that swallows its trailing newline (C preprocessor lines) ends on the line
    # before the point tree-sitter reports.
    end = end_row if end_column == 0 and end_row > node.start_point.row else end_row + 1
    return start, end


def _signature_start(source: bytes, node: Node, attributes: list[Node]) -> tuple[int, int]:
    """Where the signature starts: its byte offset and its row (0-based)."""
    # Keep the keywords that wrappers add on the same line: `export const`, Go `type`.
    opener, wrapper = node, node.parent
    while (
        wrapper is not None
        and wrapper.type in WRAPPERS
        and wrapper.start_point.row == node.start_point.row
        and wrapper.named_children[0] == opener
    ):
        opener, wrapper = wrapper, wrapper.parent
    if not attributes:
        return opener.start_byte, opener.start_point.row
    # `@Override public void f()`: the signature is what the annotations precede.
    last = attributes[-1]
    start, row = last.end_byte, last.end_point.row
    while source[start : start + 1].isspace():
        row += source[start] == 0x0A
        start += 1
    return start, row


def _signature(source: bytes, node: Node, start: int) -> str:
    body = _body(node)
    if body is not None and body.start_byte > node.start_byte:
        text = _decode(source[start : body.start_byte])
    else:
        # No body: the first line of the definition, without a trailing opening brace.
        text = _decode(source[start : node.end_byte]).split("\n", 1)[0]
        text = text.rstrip().removesuffix("{")
    return _truncate(_one_line(text), SIGNATURE_MAX_CHARS)


def _body(node: Node) -> Node | None:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for child in node.named_children:
        # Grammars without field names (Kotlin) still call it class_body, function_body.
        if child.type.endswith("_body"):
            return child
    for child in node.named_children:
        # `const f = () => {...}`: the body belongs to the value, one level down.
        body = child.child_by_field_name("body")
        if body is not None:
            return body
    return None


def _docstring(source: bytes, doc: Node | None, leads: list[Node]) -> str:
    if doc is not None:
        text = _text(source, doc)
        text = _strip_comment(text) if is_comment(doc) else _string_body(text)
    else:
        # A note trailing an attribute's line leads with it, but documents that line.
        text = "\n".join(
            _strip_comment(_text(source, n)) for n in leads if is_comment(n) and not trails_code(n)
        )
    return _truncate(text.strip(), DOCSTRING_MAX_CHARS)


_LINE_COMMENT = re.compile(r"^\s*(?://[/!]?|#|--)\s?")
_BLOCK_LINE = re.compile(r"^\s*\*(?!/)\s?")


def _strip_comment(text: str) -> str:
    text = text.strip()
    if text.startswith("/*"):
        text = text[2:].lstrip("*!")
        text = text.removesuffix("*/")
        lines = [_BLOCK_LINE.sub("", line) for line in text.splitlines()]
    else:
        lines = [_LINE_COMMENT.sub("", line) for line in text.splitlines()]
    return "\n".join(line.rstrip() for line in lines).strip()


_STRING = re.compile(r"^[rRbBuUfF]{0,2}(\"\"\"|'''|\"|')(.*)\1$", re.DOTALL)


def _string_body(text: str) -> str:
    match = _STRING.match(text.strip())
    return inspect.cleandoc(match.group(2) if match else text)


# -- imports -----------------------------------------------------------------------------


@dataclass
class _Statement:
    node: Node
    modules: dict[int, Node] = field(default_factory=dict)  # by start byte
    path: list[Node] = field(default_factory=list)
    names: dict[int, Node] = field(default_factory=dict)
    aliases: dict[int, Node] = field(default_factory=dict)


def _imports(path: str, source: bytes, matches: _Matches) -> tuple[list[Import], dict[str, str]]:
    """The file's imports, and its import aliases: each alias with what it stands for."""
    # One statement can take several matches (one per imported name): merge by statement.
    statements: dict[tuple[int, int], _Statement] = {}
    for _, captures in matches:
        if "import" not in captures:
            continue
        node = captures["import"][0]
        statement = statements.setdefault((node.start_byte, node.end_byte), _Statement(node))
        for module in captures.get("import.module", []):
            statement.modules[module.start_byte] = module
        statement.path.extend(captures.get("import.path", []))
        for name in captures.get("import.name", []):
            statement.names[name.start_byte] = name
        for alias in captures.get("import.alias", []):
            statement.aliases[alias.start_byte] = alias
    imports: list[Import] = []
    aliases: dict[str, str] = {}
    for key in sorted(statements):
        statement = statements[key]
        names = [_one_line(_text(source, statement.names[k])) for k in sorted(statement.names)]
        line = statement.node.start_point.row + 1
        if statement.path:
            start = min(node.start_byte for node in statement.path)
            end = max(node.end_byte for node in statement.path)
            imports.append(_import(path, _decode(source[start:end]), names, line))
        elif len(statement.modules) == 1:
            (module,) = statement.modules.values()
            imports.append(_import(path, _text(source, module), names, line))
        else:
            # `import a, b`: one record per module, each on its own line.
            for k in sorted(statement.modules):
                module = statement.modules[k]
                row = module.start_point.row + 1
                imports.append(_import(path, _text(source, module), [], row))
        for alias in statement.aliases.values():
            stands_for = _aliased(source, alias, statement)
            if stands_for:
                aliases[_text(source, alias)] = stands_for
    return imports, aliases


def _aliased(source: bytes, alias: Node, statement: _Statement) -> str:
    """What `alias` stands for: the imported name beside it (its last part), or the
    module beside it as a qualifier reaches it (`numpy`, `a::b`; a path's last part,
    `http` of "net/http"); "" when neither is beside it."""
    for name in statement.names.values():
        if name.parent == alias.parent:
            return re.split(r"::|\.", _one_line(_text(source, name)))[-1]
    for module in statement.modules.values():
        if module.parent == alias.parent:
            written = _one_line(_text(source, module)).strip("\"'`<>")
            if "/" in written:
                return written.rstrip("/").rsplit("/", 1)[-1]
            return written
    return ""


def _import(path: str, module: str, names: list[str], line: int) -> Import:
    return Import(path=path, module=_one_line(module).strip("\"'`<>"), names=names, line=line)


# -- text helpers ------------------------------------------------------------------------


def _text(source: bytes, node: Node) -> str:
    return _decode(source[node.start_byte : node.end_byte])


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
