"""Symbols and imports from the language fixtures, and parse_source on hostile input.

The expected lists were written by hand from ``fixtures/languages/`` (line numbers read
off the files), not copied from the parser's output. A symbol starts at its first
decorator, annotation, attribute or touching doc comment; each fixture ends with such
definitions, some after a note a blank line away that stays out.
"""

from __future__ import annotations

import random
import time
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from dowse.indexer.parse import parse_source
from dowse.indexer.specifier_macros import blank_specifier_macros
from dowse.languages import (
    CODE_LANGUAGES,
    GRAMMAR_NAMES,
    language_for,
    language_from_shebang,
)

LANGUAGES = Path(__file__).resolve().parent.parent / "fixtures" / "languages"

SYMBOLS: dict[str, list[tuple[str, str, int, int]]] = {
    "sample.py": [
        ("constant", "DEFAULT_TTL", 8, 8),
        ("class", "Cache", 11, 38),
        ("method", "Cache.__init__", 17, 20),
        ("method", "Cache.size", 22, 24),  # starts at its @property
        ("method", "Cache.get", 26, 35),
        ("class", "Cache.Stats", 37, 38),
        ("function", "load", 41, 50),
        ("function", "load._restore", 44, 47),
        ("function", "items", 53, 57),  # the comment above the decorators
        ("function", "spaced", 62, 65),  # the note, a blank line away, is not
    ],
    "sample.js": [
        ("constant", "MAX_LISTENERS", 6, 6),
        ("class", "Bus", 8, 26),
        ("constructor", "Bus.constructor", 12, 15),
        ("method", "Bus.publish", 17, 21),
        ("method", "Bus.create", 23, 25),
        ("function", "subscribe", 28, 34),
        ("function", "subscribe.wrapped", 29, 31),
        ("function", "channel", 36, 36),
        ("function", "close", 38, 43),
        ("method", "api.get", 46, 48),  # an object literal names its methods
        ("method", "api.put", 49, 51),
        ("function", "drop", 54, 54),  # module.exports = {...}
        ("function", "run", 55, 55),  # exports.run = function
        ("method", "Bus.reset", 56, 56),  # Bus.prototype.reset = function
        ("class", "Store", 58, 64),
        ("method", "Store.items", 59, 63),  # the comment above @observable
    ],
    "sample.ts": [
        ("interface", "Entity", 5, 8),
        ("type", "Filter", 10, 10),
        ("enum", "Status", 12, 15),
        ("class", "Repository", 17, 30),
        ("constructor", "Repository.constructor", 21, 21),
        ("method", "Repository.find", 23, 25),
        ("method", "Repository.save", 27, 29),
        ("module", "Paths", 32, 36),
        ("function", "Paths.root", 33, 35),
        ("function", "makeKey", 38, 40),
        ("class", "Service", 42, 49),
        ("method", "Service.user", 44, 48),
    ],
    "sample.tsx": [
        ("interface", "CounterProps", 5, 8),
        ("function", "Counter", 10, 24),
        ("function", "Counter.increment", 14, 16),
        ("class", "Panel", 26, 30),
        ("method", "Panel.render", 27, 29),
        ("function", "Badge", 32, 32),
        ("class", "Card", 34, 39),
        ("method", "Card.toggle", 37, 38),
    ],
    "sample.go": [
        ("constant", "DefaultPort", 10, 11),
        ("struct", "Server", 13, 17),
        ("interface", "Handler", 19, 22),
        ("method", "Handler.Handle", 21, 21),
        ("function", "NewServer", 24, 27),
        ("method", "Server.Start", 29, 35),
        ("method", "Server.String", 37, 39),
        ("method", "Server.Stop", 41, 45),
        ("function", "helper", 49, 49),  # not the note on 47
    ],
    "sample.rs": [
        ("constant", "LIMIT", 5, 6),
        ("struct", "Stack", 8, 13),  # /// doc, then #[derive] on line 9
        ("enum", "PushError", 15, 17),
        ("trait", "Sized2", 19, 21),
        ("method", "Sized2.len", 20, 20),
        ("method", "Stack.new", 24, 27),
        ("method", "Stack.push", 29, 35),
        ("method", "PushError.fmt", 39, 41),
        ("method", "Stack.len", 45, 47),  # impl Sized2 for &Stack<u8>
        ("module", "util", 50, 58),
        ("function", "util.count", 51, 57),
        ("macro", "stack", 60, 62),
        ("module", "tests", 64, 71),
        ("function", "tests.push_fails_when_full", 66, 70),
    ],
    "Sample.java": [
        ("class", "Inventory", 7, 34),
        ("constant", "Inventory.MAX_ITEMS", 11, 11),
        ("constructor", "Inventory.Inventory", 15, 16),
        ("method", "Inventory.add", 18, 25),
        ("class", "Inventory.Item", 27, 28),
        ("enum", "Inventory.Zone", 30, 33),
        ("interface", "Auditor", 36, 38),
        ("method", "Auditor.audit", 37, 37),
        ("class", "StockController", 40, 50),
        ("method", "StockController.stock", 45, 49),  # not the note on 43
    ],
    "sample.c": [
        ("macro", "RING_MIN", 5, 5),
        ("macro", "RING_WRAP", 6, 6),
        ("type", "byte", 8, 8),
        ("struct", "ring", 10, 15),
        ("enum", "ring_status", 17, 17),
        ("function", "ring_new", 19, 27),
        ("function", "ring_push", 29, 34),
        ("function", "ring_free", 36, 40),
    ],
    "sample.cpp": [
        ("module", "geo", 6, 72),
        ("class", "geo.Matrix", 8, 23),
        ("method", "geo.Matrix.Matrix", 11, 11),
        ("method", "geo.Matrix.at", 13, 15),
        ("method", "geo.Matrix.transpose", 17, 17),  # the declaration in the class
        ("struct", "geo.Point", 25, 27),
        ("method", "geo.Matrix.transpose", 29, 32),  # the out-of-line definition
        ("method", "geo.Grid.cell", 34, 37),  # Grid<T>::cell: the template's name
        ("method", "geo.Circle.area", 39, 41),  # shapes::Circle::area: the innermost scope
        ("class", "geo.Doc", 43, 49),
        ("method", "geo.Doc.parse", 47, 48),  # behind a macro, from its doc comment
        ("class", "geo.Doc.Result", 51, 55),  # class Doc::Result: defined outside Doc
        ("method", "geo.Doc.Result.Result", 54, 54),
        ("struct", "geo.shapes.Box", 57, 59),
        ("struct", "geo.formatter", 61, 66),  # a specialization: the template's name
        ("method", "geo.formatter.format", 62, 65),
        ("method", "geo.Doc.parse", 68, 70),  # not Result.parse: the macro is no type
        ("function", "clamp", 74, 77),
        ("function", "area", 79, 82),
    ],
    "Sample.cs": [
        ("module", "Shop.Billing", 4, 41),
        ("class", "Shop.Billing.Line", 6, 7),
        ("interface", "Shop.Billing.ITaxPolicy", 9, 12),
        ("method", "Shop.Billing.ITaxPolicy.Rate", 11, 11),
        ("class", "Shop.Billing.Invoice", 14, 35),
        ("constructor", "Shop.Billing.Invoice.Invoice", 19, 22),
        ("method", "Shop.Billing.Invoice.Total", 26, 32),
        ("enum", "Shop.Billing.Invoice.State", 34, 34),
        ("struct", "Shop.Billing.Money", 37, 40),
        ("class", "HealthController", 43, 51),
        ("method", "HealthController.Get", 49, 50),  # not the note on 47
    ],
    "sample.rb": [
        ("module", "Greeter", 5, 29),
        ("constant", "Greeter.VERSION", 6, 6),
        ("class", "Greeter.Host", 8, 24),
        ("method", "Greeter.Host.initialize", 12, 14),
        ("method", "Greeter.Host.greet", 16, 19),
        ("method", "Greeter.Host.default", 21, 23),
        ("function", "Greeter.load", 26, 28),  # in a module, not a class
        ("function", "main", 31, 33),
        ("function", "cli", 35, 39),
    ],
    "sample.php": [
        ("module", "App\\Mail", 3, 3),  # `namespace X;` covers only its own line
        ("constant", "DEFAULT_SENDER", 8, 8),
        ("interface", "Transport", 10, 13),
        ("method", "Transport.send", 12, 12),
        ("class", "Mailer", 15, 30),
        ("method", "Mailer.__construct", 20, 22),
        ("method", "Mailer.welcome", 24, 29),
        ("trait", "Retries", 32, 38),
        ("method", "Retries.retry", 34, 37),
        ("function", "render_welcome", 40, 43),
        ("class", "Routes", 45, 53),
        ("method", "Routes.list", 47, 52),
    ],
    "sample.kt": [
        ("constant", "MAX_NOTES", 6, 6),
        ("class", "Note", 8, 9),
        ("interface", "NoteStore", 11, 13),
        ("method", "NoteStore.all", 12, 12),
        ("class", "MemoryStore", 15, 29),
        ("method", "MemoryStore.all", 19, 19),
        ("method", "MemoryStore.add", 21, 24),
        ("method", "MemoryStore.empty", 27, 27),  # the companion object is transparent
        ("class", "Clock", 31, 33),
        ("method", "Clock.now", 32, 32),
        ("enum", "Priority", 35, 35),
        ("function", "summarize", 37, 40),
        ("function", "summarize.firstLine", 38, 38),
        ("class", "Reminder", 42, 47),
        ("method", "Reminder.ping", 45, 46),
    ],
    "sample.swift": [
        ("enum", "TemperatureUnit", 4, 8),
        ("interface", "Sensor", 10, 12),
        ("method", "Sensor.read", 11, 11),
        ("struct", "Thermometer", 14, 30),
        ("constructor", "Thermometer.init", 18, 20),
        ("method", "Thermometer.read", 22, 25),
        ("method", "Thermometer.convert", 27, 29),
        ("class", "Station", 32, 38),
        ("method", "Station.average", 35, 37),
        ("function", "describe", 40, 42),
        ("class", "Reporter", 44, 51),
        ("method", "Reporter.report", 47, 50),
    ],
    "sample.scala": [
        ("trait", "Rule", 6, 9),
        ("method", "Rule.apply", 8, 8),
        ("class", "Discount", 11, 13),
        ("method", "Discount.apply", 12, 12),
        ("class", "Engine", 15, 23),
        ("method", "Engine.price", 19, 22),
        ("function", "Engine.price.step", 20, 20),
        ("class", "Engine", 25, 29),  # the companion object
        ("method", "Engine.of", 28, 28),
        ("function", "main", 31, 31),
        ("function", "legacyPrice", 33, 35),
    ],
    "sample.sh": [
        ("constant", "BACKUP_DIR", 7, 7),
        ("function", "log", 9, 12),
        ("function", "backup", 14, 19),
        ("function", "main", 21, 25),
    ],
}

IMPORTS: dict[str, list[tuple[str, list[str], int]]] = {
    "sample.py": [
        ("os.path", [], 3),
        ("json", [], 4),
        ("time", [], 4),
        ("collections", ["OrderedDict"], 5),
        (".util", ["clamp", "now"], 6),
    ],
    "sample.js": [
        ("node:events", ["EventEmitter"], 2),
        ("./fmt.js", ["fmt", "join"], 3),
        ("assert", [], 4),
    ],
    "sample.ts": [("./store", ["Store", "Key"], 2), ("path", [], 3)],
    "sample.tsx": [("react", ["React", "useState"], 2), ("./button", ["Button"], 3)],
    "sample.go": [("context", [], 5), ("fmt", [], 6), ("net/http", [], 7)],
    "sample.rs": [("std::collections::HashMap", [], 2), ("std::fmt", ["self", "Display"], 3)],
    "Sample.java": [
        ("java.util.ArrayList", [], 3),
        ("java.util.List", [], 4),
        ("java.util.Objects.requireNonNull", [], 5),
    ],
    "sample.c": [("stdlib.h", [], 2), ("ring.h", [], 3)],
    "sample.cpp": [("vector", [], 2), ("string", [], 3), ("shape.hpp", [], 4)],
    "Sample.cs": [("System", [], 1), ("System.Collections.Generic", [], 2)],
    "sample.rb": [("json", [], 2), ("support/formatter", [], 3)],
    "sample.php": [("App\\Models\\User", [], 5), ("Psr\\Log\\LoggerInterface", [], 6)],
    "sample.kt": [("java.time.Instant", [], 3), ("kotlinx.coroutines.flow", [], 4)],
    "sample.swift": [("Foundation", [], 1), ("os.log", [], 2)],
    "sample.scala": [
        ("scala.collection.mutable", [], 3),
        ("java.time", ["Instant", "Duration"], 4),
    ],
    "sample.sh": [("./lib/common.sh", [], 5)],
}


def _parse(name: str):
    path = LANGUAGES / name
    language = language_for(name)
    assert language is not None
    return parse_source(name, path.read_bytes(), language)


def test_every_code_language_has_a_fixture():
    assert {language_for(name) for name in SYMBOLS} == CODE_LANGUAGES
    assert sorted(p.name for p in LANGUAGES.iterdir()) == sorted(SYMBOLS)


@pytest.mark.parametrize("name", sorted(SYMBOLS))
def test_symbols(name: str):
    parsed = _parse(name)
    assert parsed.note == ""
    assert parsed.tree is not None and not parsed.tree.root_node.has_error
    found = [(s.kind, s.qualified_name, s.start_line, s.end_line) for s in parsed.symbols]
    assert found == SYMBOLS[name]
    for symbol in parsed.symbols:
        assert symbol.id == f"{name}#{symbol.qualified_name}@{symbol.start_line}"
        assert symbol.language == language_for(name)
        assert symbol.qualified_name.endswith(symbol.name)
        expected_parent = symbol.qualified_name[: -len(symbol.name)].rstrip(".") or None
        assert symbol.parent == expected_parent
        assert symbol.signature and "\n" not in symbol.signature
        assert symbol.start_line <= symbol.name_line <= symbol.end_line


@pytest.mark.parametrize("name", sorted(IMPORTS))
def test_imports(name: str):
    parsed = _parse(name)
    found = [(i.module, i.names, i.line) for i in parsed.imports]
    assert found == IMPORTS[name]
    assert all(i.path == name and i.resolved is None for i in parsed.imports)


def test_python_docstrings_and_signatures():
    symbols = {s.qualified_name: s for s in _parse("sample.py").symbols}
    assert symbols["Cache"].signature == "class Cache:"
    assert symbols["Cache"].docstring == (
        "An LRU cache whose entries expire.\n\n"
        "Entries older than ``ttl`` seconds are dropped on access."
    )
    assert symbols["Cache.get"].signature == "def get(self, key: str) -> object | None:"
    assert symbols["Cache.get"].docstring == (
        "Return the value for ``key``, or None when missing or expired."
    )
    assert symbols["Cache.__init__"].signature == (
        "def __init__(self, capacity: int, ttl: float = DEFAULT_TTL) -> None:"
    )
    assert symbols["Cache.__init__"].docstring == ""
    assert symbols["load"].docstring == "Load a cache from a JSON file."  # ''' quotes
    assert symbols["DEFAULT_TTL"].signature == "DEFAULT_TTL = 30.0"


def test_brace_language_docstrings_and_signatures():
    go = {s.qualified_name: s for s in _parse("sample.go").symbols}
    assert go["Server.Start"].signature == "func (s *Server) Start(ctx context.Context) error"
    assert go["Server.Start"].docstring == "Start registers the routes and blocks serving them."
    assert go["Server.String"].docstring == ""  # a blank line separates it from line 35
    assert go["Server"].signature == "type Server struct"
    assert go["Server"].docstring == "Server serves the health endpoint."

    rust = {s.qualified_name: s for s in _parse("sample.rs").symbols}
    # The doc comment sits above #[derive(...)], and /// is stripped.
    assert rust["Stack"].docstring == "A stack that refuses to grow past its capacity."
    assert rust["Stack.push"].signature == (
        "pub fn push(&mut self, item: T) -> Result<(), PushError>"
    )

    js = {s.qualified_name: s for s in _parse("sample.js").symbols}
    # A /** */ block above `export class`, and a // comment inside the class body.
    assert js["Bus"].docstring == "Routes events to listeners registered by name."
    assert js["Bus"].signature == "export class Bus extends EventEmitter"
    assert js["Bus.publish"].docstring == "Deliver an event to every matching listener."
    assert js["channel"].signature == "const channel = (bus, name) =>"

    java = {s.qualified_name: s for s in _parse("Sample.java").symbols}
    assert java["Inventory.add"].signature == "public boolean add(Item item)"
    assert java["Auditor.audit"].signature == "void audit(Inventory inventory);"


LED: list[tuple[str, str, list[str], str, str]] = [
    # fixture, symbol, its decorators, its signature, its docstring
    (
        "sample.py",
        "items",
        ['@app.route("/items")', "@login_required"],
        "def items(limit: int = 10) -> list[str]:",
        "Registered under /items; the options are the interface.",
    ),
    ("sample.py", "Cache.size", ["@property"], "def size(self) -> int:", ""),
    ("sample.py", "spaced", ["@staticmethod"], "def spaced() -> int:", ""),
    (
        "Sample.java",
        "StockController",
        ["@RestController"],
        "class StockController",
        "Serves the stock endpoint.",
    ),
    (
        "Sample.java",
        "StockController.stock",
        ['@GetMapping("/stock")', "@Deprecated"],
        "public int stock()",
        "",
    ),
    ("sample.kt", "Reminder", ["@Serializable"], "class Reminder", "Schedules reminders."),
    ("sample.kt", "Reminder.ping", ["@JvmStatic"], "fun ping(): String", ""),
    (
        "Sample.cs",
        "HealthController",
        ["[ApiController]"],
        "public class HealthController",
        "<summary>Answers health checks.</summary>",
    ),
    ("Sample.cs", "HealthController.Get", ['[HttpGet("/health")]'], "public string Get()", ""),
    ("sample.rs", "tests", ["#[cfg(test)]"], "mod tests", ""),
    (
        "sample.rs",
        "tests.push_fails_when_full",
        ["#[test]"],
        "fn push_fails_when_full()",
        "Pushing past the limit fails.",
    ),
    (
        "sample.rs",
        "Stack",
        ["#[derive(Debug, Clone)]"],
        "pub struct Stack<T>",
        "A stack that refuses to grow past its capacity.",
    ),
    (
        "sample.go",
        "Server.Stop",
        [],
        "func (s *Server) Stop() error",
        "Stop shuts the server down.\nIt is safe to call twice.",
    ),
    ("sample.go", "helper", [], "func helper()", ""),
    ("sample.js", "close", [], "export function close(bus)", "Closes the bus."),
    ("sample.js", "Store.items", ["@observable"], "items()", "Everything stored."),
    ("sample.ts", "Service", ["@Injectable()"], "class Service", ""),
    ("sample.ts", "Service.user", ["@Input()"], "user(): string", "The current user."),
    ("sample.tsx", "Card", ["@observer"], "class Card extends React.Component", "A titled card."),
    ("sample.tsx", "Card.toggle", ["@action"], "toggle()", ""),
    (
        "sample.c",
        "ring_free",
        [],
        "void ring_free(struct ring *r)",
        "Frees the ring and its buffer.",
    ),
    (
        "sample.cpp",
        "geo.formatter.format",
        ["FMT_CONSTEXPR"],
        "auto format(const Grid<T> &grid) const -> int",
        "Writes the grid.",
    ),
    (
        "sample.cpp",
        "area",
        ["[[nodiscard]]"],
        "int area(int w, int h)",
        "The area of a w by h box.",
    ),
    (
        "sample.php",
        "Routes.list",
        ["#[Route('/users')]"],
        "public function list(): array",
        "Lists users.",
    ),
    (
        "sample.rb",
        "cli",
        [],
        "def cli",
        "Runs the greeter from the command line.\nExits non-zero on failure.",
    ),
    (
        "sample.swift",
        "Reporter",
        ["@available(macOS 10.15, *)"],
        "final class Reporter",
        "Reports readings to the log.",
    ),
    ("sample.swift", "Reporter.report", ["@discardableResult"], "func report() -> Bool", ""),
    (
        "sample.scala",
        "legacyPrice",
        ['@deprecated("use Engine", "1.0")'],
        "def legacyPrice(total: BigDecimal): BigDecimal =",
        "Pricing before rules existed.",
    ),
]


@pytest.mark.parametrize(("name", "qualified_name", "decorators", "signature", "doc"), LED)
def test_decorators_lead_the_definition_and_the_signature_follows_them(
    name: str, qualified_name: str, decorators: list[str], signature: str, doc: str
):
    (symbol,) = [s for s in _parse(name).symbols if s.qualified_name == qualified_name]
    assert symbol.decorators == decorators
    assert symbol.signature == signature
    assert symbol.docstring == doc
    # The name's line opens the signature, below what leads it.
    lines = (LANGUAGES / name).read_text().split("\n")
    assert symbol.start_line < symbol.name_line or not (decorators or doc)
    assert signature[:12] in lines[symbol.name_line - 1]


@pytest.mark.parametrize(
    ("source", "read"),
    [
        # Macros where a specifier goes: an attribute of their width, or spaces.
        (b"really_inline result parse(int n);", b"[[really_in]] result parse(int n);"),
        (b"FMT_NORETURN FMT_API void fail();", b"[[FMT_NORE]] [[FMT]] void fail();"),
        (b"M T &ns::get() noexcept;", b"  T &ns::get() noexcept;"),
        (b"FMT_CONSTEXPR node(T v) : value(v) {}", b"[[FMT_CONST]] node(T v) : value(v) {}"),
        (b"FMT_EXPORT template <class T> struct x;", b"           template <class T> struct x;"),
        # Types, declarators and text that only look like them stay.
        (b"Foo Bar::baz(int x) { return Foo(x); }", None),
        (b"const Foo &get(Foo *a, Foo const *b);", None),
        (b"Foo operator+(Foo a, Foo b);", None),
        (b"std::vector<int> ns::f(unsigned long n) { return a < b; }", None),
        (b'#define really_inline inline void\n// M void f(\nconst char *s = "M void f(";', None),
    ],
)
def test_specifier_macros_are_told_from_types(source: bytes, read: bytes | None):
    assert blank_specifier_macros(source) == (source if read is None else read)


def test_a_specifier_macro_on_its_own_line_keeps_the_doc_comment_above():
    source = b"/* Rotates right. */\nMEM_STATIC\nU64 rotate(U64 v, U32 n) { return v; }\n"
    (symbol,) = parse_source("bits.hpp", source, "cpp").symbols
    assert (symbol.name, symbol.start_line, symbol.decorators) == ("rotate", 1, ["MEM_STATIC"])
    assert symbol.docstring == "Rotates right."


def test_comment_docstrings_need_adjacency_and_skip_shebangs():
    source = (
        b"#!/bin/bash\nfirst() { :; }\n\n"
        b"# Says hi.\n# Twice.\nhi() { :; }\n\n"
        b"# Far away.\n\nbye() { :; }\n"
    )
    docs = {s.name: s.docstring for s in parse_source("x.sh", source, "bash").symbols}
    assert docs == {"first": "", "hi": "Says hi.\nTwice.", "bye": ""}


def test_a_comment_trailing_an_attribute_keeps_the_doc_comments_above_leading():
    # `#[cfg(not(test))] // note` is a common way to say why an attribute is there; the
    # comment belongs to the attribute's line, and the doc comments above still document
    # the function (a trailing comment after code still stops the run: `x` below).
    source = (
        b"/// Runs the entry point.\n"
        b"///\n"
        b"/// Needs the runtime.\n"
        b"#[proc_macro_attribute]\n"
        b"#[cfg(not(test))] // works around a compiler bug\n"
        b"pub fn main() {}\n"
        b"\n"
        b"const X: u8 = 1; // trailing\n"
        b"fn after() {}\n"
    )
    symbols = {s.name: s for s in parse_source("lib.rs", source, "rust").symbols}
    main = symbols["main"]
    assert (main.start_line, main.end_line) == (1, 6)
    assert main.docstring == "Runs the entry point.\n\nNeeds the runtime."
    assert main.decorators == ["#[proc_macro_attribute]", "#[cfg(not(test))]"]
    assert symbols["after"].start_line == 9


def test_long_signature_and_docstring_are_truncated():
    params = ", ".join(f"argument_{i}: int" for i in range(40))
    doc = "word " * 300
    source = f'def f({params}):\n    """{doc}"""\n'.encode()
    (symbol,) = parse_source("t.py", source, "python").symbols
    assert len(symbol.signature) == 200 and symbol.signature.endswith("…")
    assert len(symbol.docstring) <= 500 and symbol.docstring.endswith("…")


def test_non_ascii_before_a_definition_keeps_lines_and_text_exact():
    source = (
        "# Größe: ½ — 日本語のコメント\n"
        'GREETING = "héllo wörld ✓"\n'
        "\n"
        "def grüße(name: str) -> str:\n"
        '    """Grüßt 🙂 jemanden."""\n'
        '    return f"Grüß dich, {name}"\n'
        "\n"
        "class Ünïcode:\n"
        "    def método(self) -> None: ...\n"
    ).encode()
    parsed = parse_source("u.py", source, "python")
    found = [(s.kind, s.qualified_name, s.start_line, s.end_line) for s in parsed.symbols]
    assert found == [
        ("constant", "GREETING", 1, 2),  # with the comment right above it
        ("function", "grüße", 4, 6),
        ("class", "Ünïcode", 8, 9),
        ("method", "Ünïcode.método", 9, 9),
    ]
    by_name = {s.name: s for s in parsed.symbols}
    assert by_name["grüße"].signature == "def grüße(name: str) -> str:"
    assert by_name["grüße"].docstring == "Grüßt 🙂 jemanden."
    assert by_name["GREETING"].signature == 'GREETING = "héllo wörld ✓"'
    assert by_name["GREETING"].docstring == "Größe: ½ — 日本語のコメント"


@pytest.mark.parametrize("language", sorted(CODE_LANGUAGES))
def test_invalid_utf8_does_not_raise(language: str):
    source = b"def f(\xff\xfe):\n  '\xc3\x28'\nclass \xe9\x80(): pass\nfunc \xf0\x28\x8c\x28() {}\n"
    parsed = parse_source("bad", source, language)
    assert parsed.tree is not None
    for symbol in parsed.symbols:
        assert symbol.start_line <= symbol.end_line


@pytest.mark.parametrize("language", sorted(CODE_LANGUAGES))
def test_random_binary_does_not_raise(language: str):
    rng = random.Random(language)
    source = bytes(rng.randrange(256) for _ in range(20_000))
    parsed = parse_source("blob", source, language)
    assert (parsed.tree is None) == bool(parsed.note)


def test_unmatched_brackets_fall_back_quickly():
    # Error recovery leaves 60k anonymous "(" side by side under one ERROR node; a query
    # over that takes minutes, so extraction refuses it before querying (the note says
    # which refusal it was; how long it takes is for benchmarks, not a test's clock).
    parsed = parse_source("x.c", b"(" * 60_000, "c")
    assert parsed.tree is None
    assert parsed.note == "too many unmatched tokens to extract symbols"


def test_timeout_falls_back_to_text_and_the_parser_recovers():
    source = b"def f(a, b):\n    return [a + b for _ in range(3)]\n" * 100_000  # 4.9 MB
    parsed = parse_source("big.py", source, "python", timeout_s=0.001)
    assert parsed.tree is None
    assert parsed.symbols == [] and parsed.imports == []
    assert parsed.note == "parse timed out after 0.001s"
    # A cancelled parse must not leak into the next one on the same (thread's) parser.
    again = parse_source("small.py", b"def g():\n    pass\n", "python")
    assert [(s.name, s.start_line, s.end_line) for s in again.symbols] == [("g", 1, 2)]
    assert again.tree is not None and again.tree.root_node.end_byte == 18


def test_the_timeout_counts_the_parsing_threads_cpu_not_the_wall_clock(monkeypatch):
    # On a busy machine a parse waits for a core while the wall clock runs on: that must
    # not turn a file into text in this run and code in the next. Here the wall clock
    # jumps an hour at every look; the thread's CPU time is the real one.
    from dowse.indexer import parse

    hours = iter(range(0, 10**9, 3600))
    clock = types.SimpleNamespace(
        monotonic=lambda: float(next(hours)), thread_time=time.thread_time
    )
    monkeypatch.setattr(parse, "time", clock)
    source = b"def f(a, b):\n    return [a + b for _ in range(3)]\n" * 2_000
    parsed = parse_source("busy.py", source, "python", timeout_s=2.0)
    assert parsed.note == "" and len(parsed.symbols) == 2_000


def test_syntax_errors_still_yield_recovered_symbols():
    source = b"def good():\n    return 1\n\ndef broken(:\n    pass\n\nclass Fine:\n    x = 1\n"
    parsed = parse_source("e.py", source, "python")
    assert parsed.tree is not None and parsed.tree.root_node.has_error
    names = [s.name for s in parsed.symbols]
    assert "good" in names and "Fine" in names


def test_text_and_unknown_languages_are_not_parsed():
    assert parse_source("README.md", b"# Title\n", "markdown").note == ""
    assert parse_source("README.md", b"# Title\n", "markdown").tree is None
    unknown = parse_source("x.cob", b"IDENTIFICATION DIVISION.", "cobol")
    assert unknown.tree is None and unknown.note == "no grammar for language 'cobol'"


def test_parsing_from_threads_gives_the_same_symbols():
    names = sorted(SYMBOLS) * 4

    def kinds(name: str) -> list[tuple[str, str, int, int]]:
        return [(s.kind, s.qualified_name, s.start_line, s.end_line) for s in _parse(name).symbols]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(kinds, names))
    assert results == [SYMBOLS[name] for name in names]


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/app.py", "python"),
        ("types.pyi", "python"),
        ("a.js", "javascript"),
        ("a.mjs", "javascript"),
        ("a.cjs", "javascript"),
        ("App.jsx", "javascript"),
        ("a.ts", "typescript"),
        ("a.mts", "typescript"),
        ("a.cts", "typescript"),
        ("App.tsx", "tsx"),
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("Main.java", "java"),
        ("ring.c", "c"),
        ("ring.h", "c"),
        ("m.cc", "cpp"),
        ("m.cpp", "cpp"),
        ("m.cxx", "cpp"),
        ("m.hpp", "cpp"),
        ("m.hh", "cpp"),
        ("m.hxx", "cpp"),
        ("Program.cs", "csharp"),
        ("app.rb", "ruby"),
        ("index.php", "php"),
        ("Main.kt", "kotlin"),
        ("build.gradle.kts", "kotlin"),
        ("main.swift", "swift"),
        ("Main.scala", "scala"),
        ("run.sh", "bash"),
        ("run.bash", "bash"),
        ("README.md", "markdown"),
        ("notes.markdown", "markdown"),
        ("index.rst", "rst"),
        ("ci.yml", "yaml"),
        ("ci.yaml", "yaml"),
        ("pyproject.toml", "toml"),
        ("package.json", "json"),
        ("notes.txt", "text"),
        ("setup.cfg", "text"),
        ("tox.ini", "text"),
        ("Dockerfile", "text"),
        ("api.Dockerfile", "text"),
        ("Makefile", "text"),
        ("Gemfile", "ruby"),
        ("dir\\Upper.PY", "python"),
        ("logo.png", None),
        ("archive.tar.gz", None),
        ("no_extension", None),
    ],
)
def test_language_for(path: str, language: str | None):
    assert language_for(path) == language


def test_language_tables_agree():
    assert CODE_LANGUAGES == set(GRAMMAR_NAMES)
    assert GRAMMAR_NAMES["csharp"] == "csharp"  # not "c_sharp" in language-pack 0.13.0


@pytest.mark.parametrize(
    ("head", "language"),
    [
        (b"#!/usr/bin/env python3\nprint()", "python"),
        (b"#!/usr/bin/python3.11 -u\n", "python"),
        (b"#!/bin/bash\n", "bash"),
        (b"#!/bin/sh\n", "bash"),
        (b"#!/usr/bin/env -S node --harmony\n", "javascript"),
        (b"#!/usr/bin/env ruby\n", "ruby"),
        (b"#!/usr/bin/env shellcheck\n", None),
        (b"print('no shebang')\n", None),
    ],
)
def test_language_from_shebang(head: bytes, language: str | None):
    assert language_from_shebang(head) == language


def test_a_trait_impls_methods_note_the_trait():
    source = (LANGUAGES / "sample.rs").read_bytes()
    decorators = {
        s.qualified_name: s.decorators for s in parse_source("s.rs", source, "rust").symbols
    }
    assert decorators["PushError.fmt"] == ["impl Display for PushError"]
    assert decorators["Stack.len"] == ["impl Sized2 for Stack"]
    assert decorators["Stack.new"] == []  # an inherent impl notes nothing
    assert decorators["tests.push_fails_when_full"] == ["#[test]"]


def test_items_inside_a_brace_macro_call_are_symbols_at_their_lines():
    # A crate's own `cfg_*! { ... }` wrappers expand to the items unchanged: the items are
    # read as such (nested calls too), at their own lines; a call whose body is no items
    # stays a token tree, and so does a macro call inside a function.
    source = (
        b"cfg_net! {\n"  # 1
        b"    /// A socket.\n"  # 2
        b"    pub struct Socket;\n"  # 3
        b"}\n"  # 4
        b"impl Socket {\n"  # 5
        b"    pub fn send(&self) {}\n"  # 6
        b"    cfg_io! {\n"  # 7
        b"        cfg_unix! {\n"  # 8
        b"            pub fn recv_buf(&self) -> usize {\n"  # 9
        b"                select! { x = f() => x }\n"  # 10
        b"            }\n"  # 11
        b"        }\n"  # 12
        b"    }\n"  # 13
        b"}\n"  # 14
        b"cfg_if! {\n"  # 15
        b"    if #[cfg(unix)] { fn a() {} } else { fn b() {} }\n"  # 16
        b"}\n"  # 17
        b"cfg_io! { use bytes::BufMut; }\n"  # 18
    )
    parsed = parse_source("udp.rs", source, "rust")
    found = {(s.kind, s.qualified_name, s.start_line, s.end_line) for s in parsed.symbols}
    assert found == {
        ("struct", "Socket", 2, 3),
        ("method", "Socket.send", 6, 6),
        ("method", "Socket.recv_buf", 9, 11),
    }
    assert [i.module for i in parsed.imports] == ["bytes::BufMut"]
    # The tree is the file's own bytes' layout: chunks slice the original text.
    assert parsed.tree is not None and parsed.tree.root_node.end_byte == len(source)
