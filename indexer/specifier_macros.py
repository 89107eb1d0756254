"""C++ macros written where a specifier goes: `really_inline doc_ref_result parse(...)`.

Libraries mark their declarations with macros of their own that expand to specifiers or
attributes (`really_inline`, `simdjson_warn_unused`, `FMT_CONSTEXPR`, `FMT_API`,
`FMT_EXPORT`). Tree-sitter cannot expand them and reads the macro as the declaration's
type: the real type becomes the name (`doc_ref_result`), the function that follows loses
its type, or the declaration falls apart into errors; a member prototype, an out-of-line
method (`really_inline X doc::parse(...) {`) or a whole class is then no symbol, or one
under a wrong name. `blank_specifier_macros` finds such macros from the tokens around
them and writes each as what it stands for, so that the declaration parses as written.

Invariants:
- Only an identifier that no declaration could hold where it stands is taken for a macro:
  one followed by a keyword that cannot follow a type or a name (`FMT_CONSTEXPR void`,
  `FMT_EXPORT template`, `FMT_BEGIN_NAMESPACE namespace`), or the first of three or more
  names in a row before a function's parameters (`really_inline doc_ref_result parse(`,
  `M T& ns::f(`), where a declaration has room for two: a type and a declarator, or the
  first of two before a constructor's (`FMT_CONSTEXPR node(T v) : value(v)`), which has
  room for one.
  Preprocessor lines, comments and literals are not read.
- A macro becomes an attribute of its own width (`[[really_in]]`), which leads the
  declaration as the macro does: the symbol starts at it, keeps the doc comment above it,
  and lists the macro (sliced from the original text) as its decorator. Where an
  attribute may not stand (before `template`, `namespace`, `class`) or the macro is
  shorter than `[[x]]`, it becomes spaces. Either way every byte keeps its offset and
  every line its number, so symbols, signatures and chunks are sliced from the file's
  own text.
- The caller keeps the new parse only when less of it is syntax errors than of the first
  (`error_size`): a guess that breaks more than it mends is dropped.
"""

from __future__ import annotations

import re

from tree_sitter import Node

__all__ = ["blank_specifier_macros", "error_size"]

# A type cannot be followed by these, nor a name stand right before them: what stands
# there is a macro. `const`, `volatile` and `operator` may follow a type, so are absent.
_NOT_AFTER_A_NAME = frozenset(
    {
        "auto",
        "bool",
        "char",
        "char8_t",
        "char16_t",
        "char32_t",
        "class",
        "consteval",
        "constexpr",
        "constinit",
        "double",
        "enum",
        "explicit",
        "extern",
        "float",
        "friend",
        "inline",
        "int",
        "long",
        "namespace",
        "short",
        "signed",
        "static",
        "struct",
        "template",
        "thread_local",
        "typedef",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "wchar_t",
    }
)
# An attribute cannot stand before these where a macro can (`FMT_EXPORT template <...>`).
_NO_ATTRIBUTE_BEFORE = frozenset(
    {
        b"class",
        b"enum",
        b"friend",
        b"namespace",
        b"struct",
        b"template",
        b"typedef",
        b"union",
        b"using",
    }
)
# Words that are no names: a run of names stops at them.
_KEYWORDS = _NOT_AFTER_A_NAME | {
    "alignas",
    "break",
    "case",
    "catch",
    "co_await",
    "co_return",
    "co_yield",
    "const",
    "const_cast",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "dynamic_cast",
    "else",
    "for",
    "goto",
    "if",
    "mutable",
    "new",
    "noexcept",
    "operator",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "return",
    "sizeof",
    "static_assert",
    "static_cast",
    "switch",
    "throw",
    "try",
    "volatile",
    "while",
}

_QUALIFIERS = frozenset({b"noexcept", b"const", b"override", b"final"})
_TOKEN = re.compile(
    rb"""
    (?P<skip>
        /\*.*?(?:\*/|\Z)                                  # block comment
      | //(?:[^\n\\]|\\.)*                                # line comment (with splices)
      | ^[ \t]*\#(?:[^\n\\/]|\\.|/(?![/*])|/\*.*?\*/)*     # preprocessor line
      | [uUL]?R"(?P<delim>[^()\\\s]{0,16})\(.*?\)(?P=delim)"   # raw string
      | (?:u8|[uUL])?"(?:[^"\\\n]|\\.)*"?                 # string
      | (?:u8|[uUL])?'(?:[^'\\\n]|\\.)*'?                 # character
      | \s+
    )
  | (?P<name>[A-Za-z_]\w*)
  | (?P<number>\.?\d(?:[\w.']|[eEpP][+-])*)
  | (?P<punct>::|&&|.)
    """,
    re.DOTALL | re.MULTILINE | re.VERBOSE,
)
_WORD = 0
_PUNCT = 1


def _tokens(source: bytes) -> list[tuple[int, bytes, int, int]]:
    """(kind, text, start, end) of each word and punctuation mark outside comments,
    literals and preprocessor lines."""
    out: list[tuple[int, bytes, int, int]] = []
    for match in _TOKEN.finditer(source):
        group = match.lastgroup
        if group == "name":
            out.append((_WORD, match.group(), match.start(), match.end()))
        elif group in ("punct", "number"):
            out.append((_PUNCT, match.group(), match.start(), match.end()))
    return out


def _is_name(token: tuple[int, bytes, int, int]) -> bool:
    return token[0] == _WORD and token[1].decode("ascii", "replace") not in _KEYWORDS


def _name_end(tokens: list[tuple[int, bytes, int, int]], i: int) -> int:
    """The index after the name starting at `i`: `a`, `a::b`, `a<x, y>::b<z>`."""
    n = len(tokens)
    while True:
        i += 1
        if i < n and tokens[i][1] == b"<":
            j = _closing(tokens, i, b"<", b">")
            if j is None:
                return i  # a comparison, not template arguments
            i = j + 1
        if i + 1 < n and tokens[i][1] == b"::" and _is_name(tokens[i + 1]):
            i += 1
            continue
        return i


def _initializes(tokens: list[tuple[int, bytes, int, int]], i: int) -> bool:
    """Whether the parameters opening at `i` are followed by a `:` (an initializer list)."""
    j = _closing(tokens, i, b"(", b")")
    if j is None:
        return False
    k = j + 1
    while k < len(tokens) and tokens[k][0] == _WORD and tokens[k][1] in _QUALIFIERS:
        k += 1  # `noexcept`, `explicit`-like words between `)` and `:`
    return k < len(tokens) and tokens[k][1] == b":"


def _closing(
    tokens: list[tuple[int, bytes, int, int]], i: int, opening: bytes, closing: bytes
) -> int | None:
    """The index of the `closing` mark that matches the `opening` one at `i`, or None when
    a statement's or a block's bound (`;`, `{`, `}`) or the end comes first."""
    depth = 0
    for j in range(i, len(tokens)):
        text = tokens[j][1]
        if text == opening:
            depth += 1
        elif text == closing:
            depth -= 1
            if depth == 0:
                return j
        elif text in (b";", b"{", b"}"):
            return None
    return None


def _macros(source: bytes) -> list[tuple[int, int, bool]]:
    """Byte spans of the identifiers that stand where a specifier goes, each with whether
    an attribute may stand there instead (not before `template` or `namespace`)."""
    tokens = _tokens(source)
    spans: list[tuple[int, int, bool]] = []
    n = len(tokens)
    i = 0
    while i < n:
        if not _is_name(tokens[i]):
            i += 1
            continue
        # A run of names (`*` and `&` between them are declarators' marks).
        run: list[int] = []
        j = i
        while j < n and _is_name(tokens[j]):
            run.append(j)
            j = _name_end(tokens, j)
            while j < n and tokens[j][1] in (b"*", b"&", b"&&"):
                j += 1
        after = tokens[j][1] if j < n else b""
        if i > 0 and tokens[i - 1][1] in (b"::", b".", b"->"):
            macros = []  # a member's name, not a declaration's start
        elif tokens[j - 1][0] == _WORD and after.decode("latin-1") in _NOT_AFTER_A_NAME:
            # `M void`, `M1 M2 template`: no type or name stands right before these.
            macros = run
        elif after == b"(" and len(run) >= 3:
            # Before a function's parameters a declaration has room for two names, its
            # type and its declarator: what stands before them is macros.
            macros = run[:-2]
        elif after == b"(" and len(run) == 2 and _initializes(tokens, j):
            # `M name(...) : member(x)`: only a constructor has an initializer list, and a
            # constructor has no type.
            macros = run[:1]
        else:
            macros = []
        lead = after not in _NO_ATTRIBUTE_BEFORE
        for k in macros:
            if _name_end(tokens, k) == k + 1:  # a plain identifier: no `::`, no `<...>`
                spans.append((tokens[k][2], tokens[k][3], lead))
        i = max(j, i + 1)
    return spans


def blank_specifier_macros(source: bytes) -> bytes:
    """`source` with each macro that stands where a specifier goes written as an
    attribute or spaces; `source` itself when there is none."""
    spans = _macros(source)
    if not spans:
        return source
    out = bytearray(source)
    for start, end, lead in spans:
        width = end - start
        if lead and width >= 5:
            # An attribute of the same width, `[[really_in]]` for `really_inline`: it
            # leads the declaration as the macro did, so the symbol starts there and
            # keeps the doc comment above, and the macro is its decorator.
            out[start:end] = b"[[" + source[start : end - 4] + b"]]"
        else:
            out[start:end] = b" " * width
    return bytes(out)


def error_size(root: Node) -> int:
    """How much of the tree under `root` is syntax errors: the bytes its outermost ERROR
    nodes span, and one for each MISSING node. (A count of errors would prefer one ERROR
    over the whole file to a few small ones.)"""
    size = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.has_error:
            continue
        if node.is_error:
            size += max(node.end_byte - node.start_byte, 1)
        elif node.is_missing:
            size += 1
        else:
            stack.extend(node.children)
    return size
