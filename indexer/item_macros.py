"""Rust items wrapped in a macro call: `cfg_net! { pub struct UdpSocket ... }`.

A crate that compiles parts of itself only under some features often wraps those items in
a macro of its own (`cfg_rt! { ... }`, `cfg_io_util! { ... }`: tokio defines thirty) whose
expansion is the items unchanged. To tree-sitter a macro's body is a token tree, not
items: no function, method or import inside it is a symbol, and its chunks belong to no
definition. `unwrap_item_macros` reads such bodies as the items they are.

Invariants:
- Only a brace-delimited call where an item may stand (a file's or a module's, an `impl`'s
  or a trait's top level) is unwrapped: its name, `!` and braces become spaces, so every
  byte keeps its offset and every line its number, and the chunks (sliced from the
  original bytes) stay the file's text.
- A call whose body does not parse as items (`lazy_static! { static ref ... }`,
  `cfg_if! { if #[cfg(x)] { ... } }`, `bitflags!`) is left wrapped: a body that leaves a
  syntax error inside it once unwrapped is restored.
- Calls nested in unwrapped calls are found in the next round, at most `_ROUNDS` deep.
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node, Tree

__all__ = ["unwrap_item_macros"]

_ROUNDS = 3
_ITEM_LISTS = frozenset({"source_file", "declaration_list"})
"""Where an item may stand: a file's or an inline module's top level (`source_file`,
`mod x { ... }`'s list) and the body of an `impl` or a trait (`declaration_list`)."""
_LISTS_IN = frozenset({"mod_item", "impl_item", "trait_item"})


def unwrap_item_macros(
    source: bytes, tree: Tree, parse: Callable[[bytes], Tree]
) -> tuple[bytes, Tree]:
    """`source` with its item-level brace macro calls read as their items, and its tree
    (`parse` parses bytes); the input unchanged when there is none."""
    kept: set[int] = set()  # start bytes of calls whose body is no items
    for _ in range(_ROUNDS):
        calls = [c for c in _item_calls(tree.root_node, source) if c[0] not in kept]
        if not calls:
            break
        unwrapped = _blank(source, calls)
        new_tree = parse(unwrapped)
        bad = [c for c in calls if _has_error(new_tree.root_node, c[0], c[-1])]
        if bad:
            kept.update(c[0] for c in bad)
            calls = [c for c in calls if c not in bad]
            if not calls:
                continue
            unwrapped = _blank(source, calls)
            new_tree = parse(unwrapped)
        source, tree = unwrapped, new_tree
    return source, tree


def _item_calls(root: Node, source: bytes) -> list[tuple[int, int, int, int]]:
    """(call start, body start, body end, call end) bytes of each brace-delimited macro
    call where an item may stand."""
    out: list[tuple[int, int, int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.children:
            if node.type in _ITEM_LISTS and child.type == "macro_invocation":
                body = child.children[-1] if child.children else None
                if (
                    body is not None
                    and body.type == "token_tree"
                    and source[body.start_byte : body.start_byte + 1] == b"{"
                    and source[body.end_byte - 1 : body.end_byte] == b"}"
                ):
                    out.append((child.start_byte, body.start_byte, body.end_byte, child.end_byte))
            elif child.type in _ITEM_LISTS or child.type in _LISTS_IN:
                stack.append(child)
    return out


def _blank(source: bytes, calls: list[tuple[int, int, int, int]]) -> bytes:
    """`source` with each call's name, `!` and braces as spaces (line breaks kept)."""
    out = bytearray(source)
    for start, body_start, body_end, end in calls:
        for lo, hi in ((start, body_start + 1), (body_end - 1, end)):
            for i in range(lo, hi):
                if out[i] not in b"\r\n":
                    out[i] = 0x20
    return bytes(out)


def _has_error(root: Node, start: int, end: int) -> bool:
    """Whether a syntax error lies within bytes `start`..`end` of the tree."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.end_byte <= start or node.start_byte >= end or not node.has_error:
            continue
        if node.is_error or node.is_missing:
            return True
        stack.extend(node.children)
    return False
