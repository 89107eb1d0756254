"""Code-aware tokens for full-text search.

An identifier is kept whole and also split on snake_case, camelCase, digits and dots, so
that `parseHTTPResponse` matches queries for `parse`, `http`, `response` and the identifier
itself. Tokens are lower-case ASCII words; the same function tokenizes documents and
queries, so both sides always agree.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator

__all__ = ["identifiers", "split_identifier", "stem", "token_text", "tokenize", "variants"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_MAX_TOKEN = 40


def split_identifier(ident: str) -> list[str]:
    """Sub-words of an identifier: `get_HTTPResponse2` -> get, http, response, 2."""
    parts: list[str] = []
    for piece in ident.split("_"):
        if piece:
            parts.extend(m.group(0).lower() for m in _CAMEL.finditer(piece))
    return parts


def identifiers(text: str) -> Iterator[str]:
    """Identifier-like words of a text, as written."""
    for m in _IDENT.finditer(text):
        yield m.group(0)


_MEMO: dict[str, tuple[str, ...]] = {}
_MEMO_MAX = 500_000


def _ident_tokens(ident: str) -> tuple[str, ...]:
    """Tokens of one identifier; memoized, since identifiers repeat across a codebase."""
    toks = _MEMO.get(ident)
    if toks is None:
        low = ident.lower().strip("_")
        if not low or len(low) > _MAX_TOKEN:
            toks = ()
        else:
            subs = split_identifier(ident)
            toks = (low, *(s for s in subs if s != low)) if len(subs) > 1 else (low,)
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.clear()
        _MEMO[ident] = toks
    return toks


def tokenize(text: str) -> list[str]:
    """Lower-case search tokens: each identifier, then its sub-words when it has several."""
    out: list[str] = []
    for ident in _IDENT.findall(text):
        out.extend(_ident_tokens(ident))
    return out


def token_text(*texts: str | Iterable[str], max_repeat: int | None = None) -> str:
    """The whitespace-joined token column stored for full-text search.

    `max_repeat` caps how often one token is kept: BM25's term frequency saturates, so
    the cap shrinks the column with little effect on ranking.
    """
    words: list[str] = []
    for text in texts:
        if isinstance(text, str):
            words.extend(tokenize(text))
        else:
            for t in text:
                words.extend(tokenize(t))
    if max_repeat is not None:
        seen: dict[str, int] = {}
        kept: list[str] = []
        for w in words:
            n = seen.get(w, 0)
            if n < max_repeat:
                seen[w] = n + 1
                kept.append(w)
        words = kept
    return " ".join(words)


_SUFFIXES = ("ing", "ed", "es", "s", "er")


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A crude English stem, enough to match `tokens`/`token`, `expired`/`expire`,
    `rejected`/`rejects`: strip one inflection suffix, then a final `e`."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def variants(word: str) -> list[str]:
    """Inflected forms a plain query word may take in code and comments."""
    base = stem(word)
    forms = [
        word,
        base,
        base + "e",
        base + "s",
        base + "es",
        base + "ed",
        base + "ing",
        base + "er",
        base + "ion",
    ]
    return list(dict.fromkeys(f for f in forms if len(f) > 2))
