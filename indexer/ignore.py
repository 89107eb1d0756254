"""Git's ignore rules, compiled for a walk that applies them level by level.

pathspec's `GitIgnoreSpec` parses the syntax; this module adds what a flat pathspec
cannot express: whether a pattern matched the path itself (not something above it), so
that the walk can apply git's per-directory precedence (deepest ignore file first, the
last matching line within a file wins, `!` re-includes, nothing under an excluded
directory comes back).
"""

from __future__ import annotations

import os
import re
import stat
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import Pattern

__all__ = ["Rules", "compile_rules", "decide", "git_context", "read_text"]

_BLOCK = 64
"""Patterns per alternation (see `Rules`)."""


@dataclass(frozen=True, slots=True)
class Rules:
    """The patterns of one ignore file, compiled for 'does this match the path itself'.

    pathspec's regexes also match everything under a matched directory, and git's
    per-directory precedence needs to know whether a pattern matched the path itself.
    Each pattern's regex is extended so that it does: its directory-marker group (the
    one named group pathspec emits) must end the string for a directory and must not
    participate for a file. The patterns go into alternations of at most `_BLOCK`
    patterns, last pattern first, so the first match finds the line that decides.
    (One alternation of every pattern costs time quadratic in their number: a regex
    match resets each group of the alternation at every branch it tries, and a .gitignore
    of 3,000 lines made every path take 30 ms.)
    """

    strip: int
    """Characters to drop from a root-relative path: this file's directory and '/'."""
    prepend: str
    """Prefix to add to a root-relative path, for ignore files above the root."""
    file_regexes: tuple[re.Pattern[str], ...]
    dir_regexes: tuple[re.Pattern[str], ...]
    ignores: dict[str, bool]
    """Alternation group name -> whether that pattern ignores (False for '!')."""


def _pattern_lines(text: str) -> list[str]:
    lines = []
    for line in text.removeprefix("\ufeff").split("\n"):
        line = line.removesuffix("\r")
        # pathspec turns "a/**/" into "the directory a and all below"; git means "every
        # directory below a". "a/**/*/" says that in a form pathspec reads as git does.
        if line.rstrip(" ").endswith("/**/"):
            line = line.rstrip(" ") + "*/"
        lines.append(line)
    return lines


def _parse(lines: list[str]) -> list[Pattern]:
    """pathspec's patterns for the lines, dropping lines it rejects, as git does."""
    # Imported here: `read_text` serves the check of a walk's record (`indexer.walked`),
    # which parses no pattern.
    from pathspec import GitIgnoreSpec

    try:
        return list(GitIgnoreSpec.from_lines(lines).patterns)
    except (ValueError, re.error):  # GitIgnorePatternError is a ValueError
        patterns: list[Pattern] = []
        for line in lines:
            try:
                patterns.extend(GitIgnoreSpec.from_lines([line]).patterns)
            except (ValueError, re.error):
                continue
        return patterns


def compile_rules(text: str, *, strip: int, prepend: str) -> Rules | None:
    with warnings.catch_warnings():
        # A '[' inside a bracket expression ("[[]") makes `re` warn about nested sets.
        warnings.simplefilter("ignore", FutureWarning)
        return _compile_patterns(_parse(_pattern_lines(text)), strip=strip, prepend=prepend)


def _compile_patterns(patterns: list[Pattern], *, strip: int, prepend: str) -> Rules | None:
    file_alts: list[str] = []
    dir_alts: list[str] = []
    ignores: dict[str, bool] = {}
    for i in reversed(range(len(patterns))):
        pattern = patterns[i]
        regex = getattr(pattern, "regex", None)
        if pattern.include is None or regex is None:
            continue
        body: str = regex.pattern
        if not body.startswith("^"):
            body = "^.*?(?:" + body + ")"
        name = f"p{i}"
        # Group names must be unique across the alternation.
        marks = [f"{group}_{i}" for group in regex.groupindex]
        for group in regex.groupindex:
            body = body.replace(f"(?P<{group}>", f"(?P<{group}_{i}>")
        if marks:
            mark = marks[0]
            file_body = body + f"(?({mark})(?!))"
            dir_body = body + f"(?({mark})\\Z|(?!\\Z))"
        else:
            file_body = body
            dir_body = body + "(?!\\Z)"
        file_alts.append(f"(?P<{name}>{file_body})")
        dir_alts.append(f"(?P<{name}>{dir_body})")
        ignores[name] = bool(pattern.include)
    if not ignores:
        return None
    blocks = range(0, len(file_alts), _BLOCK)
    return Rules(
        strip=strip,
        prepend=prepend,
        file_regexes=tuple(
            re.compile("|".join(file_alts[i : i + _BLOCK]), re.DOTALL) for i in blocks
        ),
        dir_regexes=tuple(
            re.compile("|".join(dir_alts[i : i + _BLOCK]), re.DOTALL) for i in blocks
        ),
        ignores=ignores,
    )


def decide(levels: Sequence[Rules], rel: str, is_dir: bool) -> bool | None:
    """True if ignored, False if re-included by a '!' line, None if no line matches."""
    for rules in reversed(levels):
        path = rules.prepend + rel[rules.strip :]
        if is_dir:
            path += "/"
        for regex in rules.dir_regexes if is_dir else rules.file_regexes:
            match = regex.match(path)
            if match is not None:
                # The outer group closes last: lastgroup names the alternative that matched.
                return rules.ignores[match.lastgroup or ""]
    return None


def read_text(path: str) -> str | None:
    """An ignore file's text, or None if it is missing, a symlink (git does not follow
    those), or unreadable."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return None


def git_context(
    root_real: str,
    probe: Callable[[str], None] | None = None,
    read: Callable[[str], str | None] = read_text,
) -> list[Rules]:
    """Rules that come from outside the walk: the repository's info/exclude and the
    .gitignore files between the work tree's top and the root (exclusive). `probe` is
    given every path whose kind alone counts (whether `.git` is there, and a file or a
    directory); every ignore file is read with `read` (`walk.WalkResult.seen`)."""

    def look(path: str) -> str:
        if probe is not None:
            probe(path)
        return path

    top = root_real
    while not os.path.lexists(look(os.path.join(top, ".git"))):
        parent = os.path.dirname(top)
        if parent == top:
            return []
        top = parent
    dot_git = os.path.join(top, ".git")
    git_dir = dot_git
    if os.path.isfile(dot_git):
        # A worktree or submodule: ".git" is a file saying "gitdir: <path>".
        pointer = read(dot_git) or ""
        if not pointer.startswith("gitdir:"):
            return []
        git_dir = os.path.join(top, pointer[len("gitdir:") :].strip())
        common = read(os.path.join(git_dir, "commondir"))
        if common is not None:
            git_dir = os.path.join(git_dir, common.strip())
    below = os.path.relpath(root_real, top)
    prefix = "" if below == "." else below.replace(os.sep, "/") + "/"

    levels: list[Rules] = []
    exclude = read(os.path.join(git_dir, "info", "exclude"))
    if exclude is not None:
        rules = compile_rules(exclude, strip=0, prepend=prefix)
        if rules is not None:
            levels.append(rules)
    if prefix:
        parts = prefix.rstrip("/").split("/")
        for depth in range(len(parts)):
            base = "/".join(parts[:depth])
            text = read(os.path.join(top, base, ".gitignore"))
            if text is None:
                continue
            rest = "/".join(parts[depth:]) + "/"
            rules = compile_rules(text, strip=0, prepend=rest)
            if rules is not None:
                levels.append(rules)
    return levels
