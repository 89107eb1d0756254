"""Split a file into chunks that follow its syntax tree.

Invariants:
- The chunks of a file cover every non-blank line exactly once, in order, without overlap;
  a chunk neither starts nor ends with a blank line.
- A chunk exceeds `max_chars` only when a single line does, or by less than `min_chars`
  when a small tail (the end of a body, a closing brace) is folded into it.
- A definition's decorators, attributes and touching doc comments (`attach.leading`) open
  the chunk that holds its first line, as its symbol's `start_line` does, unless together
  they exceed `max_chars`: then they are cut into windows of their own.
- Lines are 1-based and inclusive; chunk text is sliced from the source bytes by line
  offsets and then decoded, so non-ASCII text never shifts a boundary.
- Size is measured in non-whitespace characters, so indentation does not count against
  the budget. A chunk exceeds `max_chars` only when a single line does.
- The tree is followed at most `_MAX_DEPTH` levels down; a node nested deeper (generated
  code, 5,000 nested brackets) is cut into line windows, so no input exhausts the stack.

Algorithm (in the spirit of cAST): walk the children of a node; siblings are merged
greedily while they fit the budget; a child too large to fit is split recursively along
its own children (a class along its methods, a function body along its statements); a
leaf that is still too large is cut into line windows. Pieces smaller than `min_chars`
are merged into a neighbour, so a lone signature line travels with its body; the nodes that
lead a child (its decorators, a comment right above it) travel with it as one unit.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Node, Tree

from dowse.indexer.attach import leading
from dowse.indexer.records import Chunk, Symbol

__all__ = ["ChunkConfig", "chunk_file"]

_HEADING = re.compile(rb"^(#{1,6})\s+\S")
_MAX_DEPTH = 200
"""Levels of the syntax tree `_node_pieces` descends (one stack frame each)."""


@dataclass(frozen=True)
class ChunkConfig:
    max_chars: int = 1200
    """Budget per chunk, in non-whitespace characters (~3 characters a model token)."""
    min_chars: int = 150
    """Pieces smaller than this are merged into a neighbour."""


class _Lines:
    """Line offsets and non-whitespace prefix sums of one source."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        starts = [0]
        find = source.find
        pos = find(b"\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find(b"\n", pos + 1)
        if starts[-1] == len(source) and len(starts) > 1:
            starts.pop()  # a trailing newline does not open a new line
        self.starts = starts
        nws = [0]
        total = 0
        ends = [*starts[1:], len(source)]
        for start, end in zip(starts, ends, strict=True):
            total += len(source[start:end].translate(None, b" \t\r\n\f\v"))
            nws.append(total)
        self.nws = nws

    @property
    def count(self) -> int:
        return len(self.starts)

    def size(self, first: int, last: int) -> int:
        """Non-whitespace characters in rows first..last (0-based, inclusive)."""
        return self.nws[last + 1] - self.nws[first]

    def text(self, first: int, last: int) -> str:
        end = self.starts[last + 1] if last + 1 < len(self.starts) else len(self.source)
        text = self.source[self.starts[first] : end].decode("utf-8", "replace")
        return text[:-1] if text.endswith("\n") else text

    def blank(self, row: int) -> bool:
        return self.size(row, row) == 0


def _windows(lines: _Lines, first: int, last: int, max_chars: int) -> list[tuple[int, int]]:
    """Cut rows first..last into consecutive windows of at most max_chars."""
    out: list[tuple[int, int]] = []
    start = first
    for row in range(first, last + 1):
        if row > start and lines.size(start, row) > max_chars:
            out.append((start, row - 1))
            start = row
    out.append((start, last))
    return out


def _node_pieces(
    node: Node, lines: _Lines, cfg: ChunkConfig, carry: int | None = None, depth: int = 0
) -> list[tuple[int, int]]:
    """Row ranges for the children of node, siblings merged up to the budget.

    A child and the nodes that lead it (decorators, attributes, touching comments: see
    `attach.leading`) are one unit. `carry` is the first row of what must open the first
    piece: a small group left over from the parent (a signature line) or a definition's
    leading nodes. It is prepended to the first piece instead of standing alone: a child
    it does not fit beside is split so that it fits beside the child's first part, and a
    leaf it does not fit beside is cut into windows from the carry on.
    """
    children = node.children
    units = _units(children, lines.source)
    pieces: list[tuple[int, int]] = []
    group: tuple[int, int] | None = (carry, carry) if carry is not None else None
    fresh = carry is not None  # the group is still only the carry
    for lead_row, child in units:
        first, last = child.start_point[0], child.end_point[0]
        if child.end_point[1] == 0 and last > first:
            last -= 1  # a node ending at column 0 does not occupy that row
        if lead_row is not None:
            first = lead_row
        if group is not None:
            first = max(first, group[0])
            if lines.size(group[0], last) <= cfg.max_chars:
                group = (group[0], max(group[1], last))
                fresh = False
                continue
        # A carry that does not fit beside the whole child opens the child's first part.
        if fresh or lines.size(first, last) > cfg.max_chars:
            lead = lead_row
            if group is not None:
                if fresh or lines.size(group[0], group[1]) < cfg.min_chars:
                    lead = group[0]
                else:
                    pieces.append(group)
                group = None
            if child.child_count and depth < _MAX_DEPTH:
                pieces.extend(_node_pieces(child, lines, cfg, lead, depth + 1))
            else:
                pieces.extend(_windows(lines, first if lead is None else lead, last, cfg.max_chars))
            fresh = False
            continue
        if group is not None:
            pieces.append(group)
        group = (first, last)
    if group is not None:
        pieces.append(group)
    return pieces


def _units(children: list[Node], source: bytes) -> list[tuple[int | None, Node]]:
    """The children that are not led into another, each with the first row of its lead."""
    index = {(c.start_byte, c.end_byte, c.type): i for i, c in enumerate(children)}
    led: set[int] = set()
    units: list[tuple[int | None, Node]] = []
    # From the last child back: a comment that leads a definition is no unit of its own.
    for i in range(len(children) - 1, -1, -1):
        child = children[i]
        if i in led:
            continue
        leads = leading(child, source) if child.is_named else []
        for node in leads:
            led.add(index[(node.start_byte, node.end_byte, node.type)])
        units.append((leads[0].start_point[0] if leads else None, child))
    units.reverse()
    return units


def _normalize(pieces: list[tuple[int, int]], lines: _Lines, cfg: ChunkConfig) -> list[list[int]]:
    """Make pieces disjoint, cover every row, and merge the small ones."""
    spans: list[list[int]] = []
    for first, last in sorted(pieces):
        if spans and first <= spans[-1][1]:
            if last <= spans[-1][1]:
                continue
            first = spans[-1][1] + 1
        spans.append([first, last])
    if not spans:
        return []
    # Rows between pieces (blank lines, comments outside any node) go with the next piece;
    # rows after the last piece go with the last.
    spans[0][0] = 0
    for prev, cur in zip(spans, spans[1:], strict=False):
        cur[0] = prev[1] + 1
    spans[-1][1] = lines.count - 1
    merged: list[list[int]] = []
    for span in spans:
        if merged and (
            # a small tail joins the piece before it (the end of a body, a closing brace)
            (
                lines.size(span[0], span[1]) < cfg.min_chars
                and lines.size(merged[-1][0], span[1]) < cfg.max_chars + cfg.min_chars
            )
            # a small piece that could not join its predecessor joins its successor
            or (
                lines.size(merged[-1][0], merged[-1][1]) < cfg.min_chars
                and lines.size(merged[-1][0], span[1]) <= cfg.max_chars
            )
        ):
            merged[-1][1] = span[1]
        else:
            merged.append(span)
    return merged


def _markdown_pieces(lines: _Lines, cfg: ChunkConfig) -> list[tuple[int, int]]:
    heads = [
        row
        for row in range(lines.count)
        if _HEADING.match(lines.source[lines.starts[row] : lines.starts[row] + 8])
    ]
    bounds = sorted({0, *heads})
    pieces: list[tuple[int, int]] = []
    for i, first in enumerate(bounds):
        last = bounds[i + 1] - 1 if i + 1 < len(bounds) else lines.count - 1
        pieces.extend(_windows(lines, first, last, cfg.max_chars))
    return pieces


class _Enclosing:
    """Finds the innermost symbol that encloses a line range."""

    def __init__(self, symbols: Sequence[Symbol]) -> None:
        self.symbols = sorted(symbols, key=lambda s: (s.start_line, -s.end_line))
        self.starts = [s.start_line for s in self.symbols]

    def find(self, first: int, last: int) -> Symbol | None:
        best: Symbol | None = None
        for sym in self.symbols[: bisect_right(self.starts, first)]:
            if sym.start_line <= first and sym.end_line >= last:
                if best is None or sym.end_line - sym.start_line <= best.end_line - best.start_line:
                    best = sym
        return best


def chunk_file(
    path: str,
    source: bytes,
    language: str,
    *,
    tree: Tree | None = None,
    symbols: Sequence[Symbol] = (),
    config: ChunkConfig = ChunkConfig(),
) -> list[Chunk]:
    """Chunks of one file; the syntax tree is used when given, line windows otherwise."""
    lines = _Lines(source)
    if not source.strip():
        return []
    if tree is not None:
        # A tree can hold no node at all for text the grammar skips (Ruby's lone "\\"):
        # then the lines still make chunks.
        pieces = _node_pieces(tree.root_node, lines, config) or _windows(
            lines, 0, lines.count - 1, config.max_chars
        )
    elif language == "markdown":
        pieces = _markdown_pieces(lines, config)
    else:
        pieces = _windows(lines, 0, lines.count - 1, config.max_chars)
    enclosing = _Enclosing(symbols)
    chunks: list[Chunk] = []
    for first, last in _normalize(pieces, lines, config):
        # Blank lines at either end belong to no chunk: citations stay tight.
        while first < last and lines.blank(first):
            first += 1
        while last > first and lines.blank(last):
            last -= 1
        if lines.blank(first):
            continue
        text = lines.text(first, last)
        start, end = first + 1, last + 1
        sym = enclosing.find(start, end)
        owner = sym.qualified_name if sym else None
        header = f"{path} :: {owner}" if owner else path
        chunks.append(
            Chunk(
                id=f"{path}:{start}-{end}",
                path=path,
                language=language,
                start_line=start,
                end_line=end,
                symbol=owner,
                text=text,
                header=header,
            )
        )
    return chunks
