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
    escaped = {"Cc", "Cf", "Zl", "Zp"}
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        if unicodedata.category(ch) in escaped and ch != "\u200d":
            assert not ch.isprintable(), hex(code)
    assert one_line("def total(self) -> Décimal: # ünïcode ✓") == (
        "def total(self) -> Décimal: # ünïcode ✓"
    )
