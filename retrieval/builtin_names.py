"""The methods and functions each language's runtime provides, as data: names a chunk
calls that are no missing context of its own.

`d.get(key)`, `", ".join(parts)`, `items.append(x)`, `opt.unwrap()` call the language's
own types. A repository that happens to define a `get` (on its cache) or a `join` (on its
path type) makes such a call look like a use of that definition, and the gap look-up then
spends a cycle fetching an unrelated method. So a name listed here is a gap only when the
index defines it on a type the calling chunk names (`Cache.get` for a chunk that uses
`Cache`, or a method of the chunk's own class).

Invariants: keys are dowse language names (`languages.GRAMMAR_NAMES`); a language
missing here has no list (every called name the index defines stays a possible gap).
The lists are the commonly called methods of the standard types, not every name of the
standard library: a rarely used name costs one look-up at worst.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["BUILTIN_METHODS", "builtin_methods"]


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PYTHON = _names(
    """
    get pop setdefault update items keys values copy clear popitem fromkeys
    append extend insert remove index count sort reverse
    add discard union intersection difference symmetric_difference issubset issuperset
    join split rsplit splitlines strip lstrip rstrip replace lower upper casefold title
    capitalize startswith endswith find rfind partition rpartition encode decode format
    format_map zfill ljust rjust center expandtabs isdigit isalpha isalnum isspace
    isidentifier isupper islower
    read write readline readlines writelines seek tell flush close
    match search fullmatch sub subn findall finditer group groups groupdict span
    len isinstance issubclass
    """
)
_JAVASCRIPT = _names(
    """
    push pop shift unshift slice splice concat join reverse sort indexOf lastIndexOf
    includes find findIndex findLast filter map forEach reduce reduceRight some every
    flat flatMap fill at keys values entries from isArray of
    assign freeze create defineProperty hasOwnProperty getPrototypeOf toString valueOf
    split trim trimStart trimEnd toLowerCase toUpperCase replace replaceAll startsWith
    endsWith substring substr charAt charCodeAt padStart padEnd match matchAll test exec
    repeat localeCompare normalize
    get set has delete add clear
    then catch finally resolve reject all allSettled race any
    parse stringify log warn error info debug
    parseInt parseFloat isNaN setTimeout clearTimeout setInterval clearInterval
    """
)
_GO = _names(
    """
    append cap clear close complex copy delete imag len make max min new panic print
    println real recover
    Error String Lock Unlock RLock RUnlock Add Done Wait Err Close Write Read
    Errorf Sprintf Printf Println Fprintf
    """
)
_RUST = _names(
    """
    unwrap expect unwrap_or unwrap_or_else unwrap_or_default ok err ok_or ok_or_else
    is_some is_none is_ok is_err map map_err and_then or_else filter_map
    clone to_string to_owned into from as_ref as_mut as_str as_slice borrow borrow_mut
    iter iter_mut into_iter collect map filter fold enumerate zip chain rev next take
    skip any all find position count sum max min last peekable cloned copied
    push pop len is_empty insert remove get get_mut contains contains_key entry
    or_insert or_insert_with extend retain sort sort_by sort_by_key dedup truncate
    split trim starts_with ends_with join lines chars bytes parse lock read write
    default fmt eq cmp partial_cmp hash drop
    """
)
_JAVA = _names(
    """
    get put set add remove contains containsKey isEmpty size clear equals hashCode
    toString compareTo length charAt substring indexOf split trim startsWith endsWith
    stream map filter collect forEach orElse orElseThrow isPresent of valueOf append
    format println close
    """
)

BUILTIN_METHODS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "python": _PYTHON,
        "javascript": _JAVASCRIPT,
        "typescript": _JAVASCRIPT,
        "tsx": _JAVASCRIPT,
        "go": _GO,
        "rust": _RUST,
        "java": _JAVA,
        "kotlin": _JAVA,
    }
)
"""Language -> the names its standard types and builtins provide (see the module doc)."""


def builtin_methods(language: str | None) -> frozenset[str]:
    """The builtin names of `language` (empty for a language without a list)."""
    return BUILTIN_METHODS.get(language or "", frozenset())
