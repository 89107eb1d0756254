"""`one_line`: what it escapes, and that its shortcut for printable text escapes the same."""

import sys
import unicodedata

from dowse.quote import one_line


def test_one_line_escapes_breaks_and_control_characters():
    assert one_line("a\nb\rc\td") == "a\\nb\\rc\\td"
    assert one_line("red \x1b[31m") == "red \\x1b[31m"
    assert one_line("x\u2028y\u200bz\ufeff") == "x\\u2028y\\u200bz\\ufeff"
    assert one_line("tab\tkept", keep_tabs=True) == "tab\tkept"
    assert one_line("emoji \U0001f468\u200d\U0001f4bb") == "emoji \U0001f468\u200d\U0001f4bb"


def test_printable_text_is_unchanged_and_every_escaped_character_is_unprintable():
    # `one_line` returns printable text as it is: sound only while no character it would
    # escape counts as printable, in this Python's Unicode database.
    # Every code point is checked; the categories are looked up only for the printable
    # ones (some 145,000 of 1.1 million: `str.isprintable` sorts them out in C).
    escaped = {"Cc", "Cf", "Zl", "Zp"}
    printable = filter(str.isprintable, map(chr, range(sys.maxunicode + 1)))
    for ch in printable:
        assert unicodedata.category(ch) not in escaped or ch == "\u200d", hex(ord(ch))
    assert one_line("def total(self) -> Décimal: # ünïcode ✓") == (
        "def total(self) -> Décimal: # ünïcode ✓"
    )
