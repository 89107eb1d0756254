"""Which syntax nodes belong to the definition after them.

A decorator, an annotation, an attribute or a doc comment configures or explains the code
that follows it: ``@click.option(...)`` is the command's interface, ``@app.route("/x")``
its path, ``#[derive(Debug)]`` part of the type. `leading` finds them, so that a symbol
and the chunk that holds it start with them (parse.py, chunk.py).

Invariants:

- The leading nodes of a node are its previous named siblings, nearest first, while each
  is an attribute (`ATTRIBUTES`) or a comment that ends on the line right above the top
  gathered so far (no blank line between) and does not trail code on its own line. The
  result is in source order.
- An attribute leads whatever its distance: it cannot apply to anything but the node after
  it. A comment must touch: after a blank line it is about the code around, not the
  definition. A comment that trails code belongs to that code, and so leads only when
  that code is an attribute that leads (``#[cfg(not(test))] // works around ...``): the
  run goes on above it, doc comments and all.
- A Rust inner doc comment (``//!``, ``/*!``) documents the item that encloses it and a
  ``#!`` line starts a script; both stop the run.
- The node types are the union over the grammars (`ATTRIBUTES`, `WRAPPERS`); a name one
  grammar uses for something else (Python's ``attribute`` is ``a.b``) never appears where
  these sets are consulted: before a definition, or before its name inside it.
"""

from __future__ import annotations

from tree_sitter import Node

__all__ = [
    "ATTRIBUTES",
    "WRAPPERS",
    "attributes_before",
    "is_comment",
    "leading",
    "top",
    "trails_code",
]

ATTRIBUTES: frozenset[str] = frozenset(
    {
        "decorator",  # Python (inside decorated_definition), TypeScript, JavaScript
        "attribute_item",  # Rust #[...]
        "annotation",  # Kotlin, Scala, Java @Foo(...)
        "marker_annotation",  # Java @Override
        "attribute_list",  # C# [HttpGet], PHP #[Route(...)]
        "attribute_declaration",  # C++ [[nodiscard]]
        "attribute",  # Swift @objc, inside modifiers
    }
)
"""Nodes that configure the definition after them, and are no part of its signature."""

# Nodes that wrap a definition without being one: what leads the wrapper leads the
# definition inside (``export function``, ``const f = () =>``, Go ``type X struct``,
# C++ ``template <...>``, a Python decorated definition).
WRAPPERS: frozenset[str] = frozenset(
    {
        "export_statement",
        "lexical_declaration",
        "variable_declaration",
        "type_declaration",
        "const_declaration",
        "var_declaration",
        "template_declaration",
        "decorated_definition",
    }
)
# Inside a wrapper, before the definition, but no attribute: C++ `template <typename T>`.
_WRAPPER_HEADS = frozenset({"template_parameter_list"})
_INNER_DOC = frozenset({"inner_doc_comment_marker"})


def is_comment(node: Node) -> bool:
    return "comment" in node.type


def leading(node: Node, source: bytes) -> list[Node]:
    """The attributes and touching comments right before `node`, among its siblings."""
    found: list[Node] = []
    top_row = node.start_point.row
    sibling = node.prev_named_sibling
    while sibling is not None:
        if sibling.type in ATTRIBUTES:
            pass
        elif not is_comment(sibling) or _end_row(sibling) < top_row - 1:
            break
        elif any(child.type in _INNER_DOC for child in sibling.children):
            break
        elif source.startswith(b"#!", sibling.start_byte):
            break
        else:
            before = sibling.prev_sibling
            if trails_code(sibling) and before is not None and before.type not in ATTRIBUTES:
                break  # a trailing comment belongs to the code on its line
        found.append(sibling)
        top_row = sibling.start_point.row
        sibling = sibling.prev_named_sibling
    found.reverse()
    return found


def trails_code(comment: Node) -> bool:
    """Whether a comment follows code on its own line (a note on that line, not a doc)."""
    before = comment.prev_sibling
    return before is not None and _end_row(before) == comment.start_point.row


def top(node: Node, source: bytes) -> tuple[Node, list[Node]]:
    """The outermost node a definition spans, and the leading nodes in front of it.

    Climbs out of a wrapper when the definition is the wrapper's only named part besides
    what leads it, so `const a = 1, b = () => {}` and a Go `type (...)` group stay apart.
    """
    anchor = node
    gathered: list[Node] = []
    while True:
        found = leading(anchor, source)
        gathered = found + gathered
        parent = anchor.parent
        if parent is None or parent.type not in WRAPPERS:
            return anchor, gathered
        named = parent.named_children
        index = next(i for i, child in enumerate(named) if child == anchor)
        before = named[: index - len(found)]
        if named[index + 1 :] or any(child.type not in _WRAPPER_HEADS for child in before):
            return anchor, gathered
        anchor = parent


def attributes_before(node: Node, limit: int) -> list[Node]:
    """The attributes inside `node` that start before byte `limit` (its name), in order.

    Java, Kotlin, C#, Swift and PHP keep annotations inside the definition (often in a
    ``modifiers`` node); the signature starts after them.
    """
    found: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        for child in reversed(current.named_children):
            if child.start_byte >= limit:
                continue
            if child.type in ATTRIBUTES:
                found.append(child)
            else:
                stack.append(child)
    found.sort(key=lambda n: n.start_byte)
    return found


def _end_row(node: Node) -> int:
    # A node that swallows its trailing newline (Rust line comments) ends on the row
    # before the point tree-sitter reports: each line of a `///` run ends where the next
    # one starts, and is no code that the next one trails.
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point.row else row
