"""Sibling classes: the listed files whose classes extend the superclass that two of
`ask`'s first files extend.

A class family shares its behaviour through a superclass, and a fix to that behaviour
is often repeated in each member: jackson-core's JSON parsers (`ReaderBasedJsonParser`,
`UTF8StreamJsonParser`, `UTF8DataInputJsonParser`, `NonBlockingJsonParserBase`) all
extend `ParserBase`, and a change to how they read numbers or Base64 goes into each. When
two of the first `top` files each define a class extending the same superclass, the
question is about behaviour they share, and the other listed files whose classes extend
it follow right after the second of them, in their own order, ahead of the files that
ranked between (RESULTS-multi.md, "Sibling classes").

Invariants:
- Only files already listed move, and only upwards past files that share no such
  superclass; nothing is added or dropped.
- A superclass is what a class header writes after `extends` (Java, Scala, Groovy,
  JavaScript, TypeScript, PHP, Dart; a type parameter's bound, `<T extends Foo>`, is
  none). An interface a class `implements`, or a Rust trait a type implements, is a
  contract, not shared code: not read (measured and not kept).
- A superclass the index does not define (`Exception`, `React.Component`) is no family.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TypeVar

__all__ = ["DEPTH", "EXTENDS_LANGUAGES", "superclass_of", "with_siblings"]

DEPTH = 20
"""How far down the listed files a sibling is looked for (as deep as the word, closeness
and history rankings reach together)."""
EXTENDS_LANGUAGES = frozenset({"java", "scala", "javascript", "typescript", "tsx", "php"})
"""The languages dowse parses whose class headers name a superclass after `extends`."""

_EXTENDS = re.compile(r"\bextends\s+([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)")
_TYPE_PARAMETERS = re.compile(r"<[^<>]*>")

_F = TypeVar("_F")


def superclass_of(signature: str) -> str | None:
    """The superclass a class header extends, by its last name part (`ParserBase` of
    `public class ReaderBasedJsonParser extends ParserBase`, of `extends
    base.ParserBase<T>`), or None."""
    text = signature
    while True:  # type parameters, innermost first: their bounds are no superclass
        stripped = _TYPE_PARAMETERS.sub(" ", text)
        if stripped == text:
            break
        text = stripped
    match = _EXTENDS.search(text)
    return re.split(r"\s*\.\s*", match.group(1))[-1] if match else None


def with_siblings(
    files: Sequence[_F],
    path_of: Callable[[_F], str],
    superclasses: Mapping[str, Collection[str]],
    *,
    top: int,
) -> tuple[list[_F], dict[str, str]]:
    """`files` with the siblings of the first `top` files moved up, and for each moved
    file the superclass that moved it. `superclasses`: the superclasses (defined in the
    index) that each file's classes extend."""
    first = [path_of(f) for f in files[:top]]
    shared = Counter(base for path in first for base in set(superclasses.get(path, ())))
    family = {base for base, n in shared.items() if n >= 2}
    if not family:
        return list(files), {}

    def kin(path: str) -> str | None:
        return next((b for b in sorted(superclasses.get(path, ())) if b in family), None)

    # After the second of the first files whose superclass was shared.
    members = [i for i, path in enumerate(first) if kin(path) is not None]
    after = members[1]
    moved = {path_of(f): base for f in files[top:] if (base := kin(path_of(f))) is not None}
    if not moved:
        return list(files), {}
    head = list(files[: after + 1])
    rest = [f for f in files[after + 1 :] if path_of(f) not in moved]
    siblings = [f for f in files[top:] if path_of(f) in moved]
    return [*head, *siblings, *rest], moved
