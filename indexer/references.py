"""References from one parsed file: which name each definition calls, types or imports.

Invariants:

- Tree-sitter knowledge stays in ``queries/<language>-tags.scm``: a reference is a match
  with a ``@name.reference.<kind>`` capture (<kind> a `ReferenceKind` other than
  "import"), optionally with ``@reference.qualifier``, the expression the name is reached
  through (``store`` in ``store.save()``). This module knows only those capture names.
- Imports are references too (kind "import"): each imported name, or for a bare module
  import the module's last part, taken from the file's `Import` records.
- A name bound by an import alias is stored as what it stands for: `z()` after
  `from x import y as z` is a reference to `y`, `np.array()` after `import numpy as np`
  is `array` reached through `numpy` (the line still shows the alias).
- A reference belongs to the innermost definition whose lines hold its line (`from_id`),
  or to the file (None). Lines are 1-based, like the symbols'.
- Nothing is resolved here: a reference is a name as written (an alias undone). Which
  definitions it means is decided at query time (`retrieval.references`), against the whole index.
- One reference per (line, name, kind, qualifier): two patterns matching the same call
  count once, and a name that is also seen with a qualifier on the same line is kept with
  it only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import cast, get_args

from tree_sitter import Node

from dowse.indexer.records import Import, Reference, ReferenceKind, Symbol

__all__ = ["REFERENCE_CAPTURES", "extract_references", "is_reference_capture"]

_PREFIX = "name.reference."
_QUALIFIER = "reference.qualifier"
_CAPTURED_KINDS = frozenset(get_args(ReferenceKind)) - {"import"}
REFERENCE_CAPTURES = frozenset({_QUALIFIER, *(_PREFIX + k for k in _CAPTURED_KINDS)})
"""The capture names a tags query may use for references."""
QUALIFIER_MAX_CHARS = 80
_MODULE_PARTS = re.compile(r"[./:\\]+")
_HEAD = re.compile(r"([A-Za-z_$][\w$]*)(?:$|\.|::)")
_FILE_SUFFIX = re.compile(r"\.(?:h|hh|hpp|hxx|sh|bash|js|jsx|mjs|cjs|ts|tsx|py|rb|php|go)$")

_Matches = list[tuple[int, dict[str, list[Node]]]]


def is_reference_capture(name: str) -> bool:
    return name in REFERENCE_CAPTURES


def extract_references(
    path: str,
    source: bytes,
    matches: _Matches,
    symbols: Sequence[Symbol],
    imports: Sequence[Import] = (),
    aliases: Mapping[str, str] | None = None,
) -> list[Reference]:
    """The references in one file, in line order, from the matches of its tags query;
    `aliases` maps each import alias of the file to what it stands for."""
    aliases = aliases or {}
    spans = sorted(symbols, key=lambda s: (s.start_line, -s.end_line))
    found: dict[tuple[int, str, str, str], Reference] = {}

    def add(line: int, name: str, kind: ReferenceKind, qualifier: str) -> None:
        key = (line, name, kind, qualifier)
        if not name or key in found:
            return
        owner = _innermost(spans, line)
        found[key] = Reference(
            path=path,
            line=line,
            name=name,
            kind=kind,
            qualifier=qualifier,
            from_id=owner.id if owner is not None else None,
            from_name=owner.qualified_name if owner is not None else "",
        )

    for _, captures in matches:
        for capture, nodes in captures.items():
            if not capture.startswith(_PREFIX):
                continue
            kind = cast(ReferenceKind, capture[len(_PREFIX) :])
            qualifier = captures.get(_QUALIFIER)
            for node in nodes:
                through = _qualifier(source, qualifier[0]) if qualifier else ""
                name = _one_line(_text(source, node))
                if through:
                    through = _unaliased(through, aliases)
                else:
                    name = aliases.get(name, name)
                add(node.start_point.row + 1, name, kind, through)
    for imp in imports:
        names = [n for n in imp.names if n != "*"]
        if not names:
            names = _module_name(imp.module)
        for name in names:
            add(imp.line, name.rsplit(".", 1)[-1], "import", imp.module)
    # A call seen twice, once with the expression it is reached through and once without
    # (a macro's token tree is matched both ways), is the qualified one.
    qualified = {(r.line, r.name, r.kind) for r in found.values() if r.qualifier}
    kept = [r for r in found.values() if r.qualifier or (r.line, r.name, r.kind) not in qualified]
    return sorted(kept, key=lambda r: (r.line, r.name, r.kind))


def _unaliased(qualifier: str, aliases: Mapping[str, str]) -> str:
    """`qualifier` with an alias at its head replaced by what it stands for."""
    m = _HEAD.match(qualifier)
    if m is None or m.group(1) not in aliases:
        return qualifier
    return aliases[m.group(1)] + qualifier[m.end(1) :]


def _module_name(module: str) -> list[str]:
    """The name a bare module import stands for: `b` of `a.b`, `store` of "lib/store.h"."""
    if "/" in module or _FILE_SUFFIX.search(module):
        module = _FILE_SUFFIX.sub("", module.rsplit("/", 1)[-1])
    parts = [p for p in _MODULE_PARTS.split(module) if p]
    return parts[-1:]


def _innermost(spans: Sequence[Symbol], line: int) -> Symbol | None:
    # `spans` is outer before inner, so the last one holding the line is the innermost.
    owner = None
    for symbol in spans:
        if symbol.start_line > line:
            break
        if symbol.end_line >= line:
            owner = symbol
    return owner


def _qualifier(source: bytes, node: Node) -> str:
    text = _one_line(_text(source, node))
    return text if len(text) <= QUALIFIER_MAX_CHARS else text[: QUALIFIER_MAX_CHARS - 1] + "…"


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _one_line(text: str) -> str:
    return " ".join(text.split())
