"""Where code defines or reads a command-line flag, by language family.

A flag is defined where a parser is told of it (argparse's `add_argument("--name")`, Go's
`flag.String("name", ...)`, clap's `.long("name")`, zstd's `strcmp(arg, "--name")`, a
getopt table's `{"name", no_argument, ...}`) and read where the parsed value is asked for
(clap's `get_one::<String>("name")` / `is_present("name")` / `Arg::new("name")`, argparse's
`args.name`, cobra's `Flags().GetString("name")`, commons-cli's `hasOption("name")`).
The explorer lists the definitions of every flag (`definition_patterns` with any name);
retrieval asks for both of one flag a question quotes (`flag_sites`): a bug report of a
command-line tool names the code by its flags, and the file that reads one holds the
behaviour the flag switches, which a file that merely holds the word (bat's
`#[cfg(feature = "paging")]`) does not.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["FAMILY", "FLAG_NAME", "definition_patterns", "flag_forms", "flag_sites"]

FAMILY = {
    "python": "python",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "kotlin": "java",
    "csharp": "java",
    "ruby": "ruby",
    "c": "c",
    "cpp": "c",
}
"""The family of rules each language's code follows."""

FLAG_NAME = r"([A-Za-z0-9][\w-]*)"
"""Any flag's long name, as the explorer captures it."""
_Q = r"[\"']"
_LONG_NAME = r"(?:name_long|long_name|long_flag|flag_long|flag_name)"
"""A method that returns a flag's long name in a flag system of the project's own."""


def definition_patterns(flag: str) -> dict[str, list[str]]:
    """By family, the patterns of a flag's definition; `flag` is the regular expression
    of its long name (one group: `FLAG_NAME` for any flag)."""
    return {
        "python": [
            rf"\.(?:add_argument|option)\(\s*(?:{_Q}-\w{_Q}\s*,\s*)?{_Q}--{flag}{_Q}",
            rf"\bOption\(\s*[^)]*?{_Q}--{flag}{_Q}",
            rf"\bdef\s+{_LONG_NAME}\s*\([^)]*\)[^:]*:\s*return\s+{_Q}-*{flag}{_Q}",
        ],
        "js": [rf"\.option\(\s*{_Q}(?:-\w,?\s*)?--{flag}"],
        "go": [
            r"\bflag\.(?:Bool|Duration|Float64|Func|Int|Int64|String|Text|Uint|Uint64|Var)"
            rf"(?:Var)?\(\s*(?:&?[\w.\[\]]+\s*,\s*)?\"{flag}\"",
            rf"Flags\(\)\.\w+\(\s*(?:&?[\w.\[\]]+\s*,\s*)?\"{flag}\"",
            rf"\bfunc\s+(?:\([^)]*\)\s*)?(?i:{_LONG_NAME})\(\)\s*string\s*\{{\s*return\s+\"-*{flag}\"",
        ],
        "rust": [
            rf"\.long\(\s*\"{flag}\"\s*\)",
            rf"\blong\s*=\s*\"{flag}\"",
            rf"\bfn\s+{_LONG_NAME}\s*\([^)]*\)\s*->\s*&(?:'static\s+)?str\s*\{{\s*\"{flag}\"",
        ],
        "java": [rf"@Option\(\s*names\s*=\s*\{{?\s*(?:\"-\w\"\s*,\s*)?\"--{flag}\""],
        "c": [
            # A literal that is the flag alone, passed to a comparison of the project's or
            # the C library's: zstd's `strcmp(argument, "--list")`,
            # `longCommandWArg(&arg, "--memory=")`.
            rf"\b\w+\(\s*&?[\w.\[\]>-]+\s*,\s*\"--{flag}=?\"\s*[,)]",
            rf"\b\w+\(\s*\"--{flag}=?\"\s*,",
            # getopt_long's table: `{"verbose", no_argument, 0, 'v'}`
            rf"\{{\s*\"{flag}\"\s*,\s*(?:no_argument|required_argument|optional_argument)\b",
        ],
    }


def _reading_patterns(flag: str, attribute: str, camel: str) -> dict[str, list[str]]:
    """By family, the patterns of where one flag's value is asked for: `flag` its long
    name, `attribute` the name a parsed namespace gives it (`max_count`), `camel` the
    JavaScript parsers' (`maxCount`); each already escaped."""
    return {
        "python": [
            rf"\b(?:args|arguments|options|opts|ns|namespace|parsed_args|option)\.{attribute}\b",
            rf"\bgetoption\(\s*{_Q}(?:--{flag}|{attribute}){_Q}",
            rf"\boptions(?:\[|\.get\()\s*{_Q}{attribute}{_Q}",
            rf"\bgetattr\(\s*\w+\s*,\s*{_Q}{attribute}{_Q}",
            # a settings object the parsed options fill (pylint's `linter.config.msg_template`)
            # and an option table of the project's own (pylint's `("msg-template", {...})`)
            rf"\bconfig\.{attribute}\b",
            rf"^\s*\(\s*{_Q}{flag}{_Q}\s*,\s*$|^\s*\(\s*{_Q}{flag}{_Q}\s*,\s*\{{",
        ],
        "js": [
            rf"\b(?:argv|args|options|opts|flags|program)\.(?:{camel}|{attribute})\b",
            rf"\b(?:argv|args|options|opts|flags)\[\s*{_Q}{flag}{_Q}\s*\]",
            rf"\.option\(\s*{_Q}{flag}{_Q}",
        ],
        "go": [
            # cobra's `Flags().GetString("name")`, viper's `GetBool("name")`, urfave/cli's
            # `c.String("name")` and `Name: "name"`
            r"\.(?:Get\w*|Lookup|Changed|IsSet|String|Bool|Int\w*|Uint\w*|Float64|Duration"
            rf"|StringSlice)\(\s*\"{flag}\"",
            rf"\bName:\s*\"{flag}\"",
        ],
        "rust": [
            # clap's `Arg::new("name")`, `matches.get_one::<String>("name")`,
            # `is_present("name")`, a project's own `value_of_lossy("name")`: a call whose
            # first argument is the flag's name alone.
            rf"(?:\bArg::(?:new|with_name)|\.\w+(?:::<[^>()]*>)?)\(\s*\"{flag}\"\s*[,)]",
            # clap's derive: a field under `#[arg(long)]`, and where the parsed options'
            # field is read (fd's `opts.no_ignore`)
            rf"#\[(?:arg|clap|structopt)\([^\]]*\blong\b[^\]]*\]\s*(?:pub(?:\([^)]*\))?\s+)?"
            rf"{attribute}\s*:",
            rf"\b(?:opts|args|cli|options|matches)\.{attribute}\b",
        ],
        "java": [
            rf"\b(?:hasOption|getOptionValues?|getParsedOptionValue|longOpt)\(\s*\"{flag}\"",
        ],
        "c": [],
    }


def flag_forms(flag: str) -> list[str]:
    """The texts a file that defines or reads `flag` (its long name, no dashes) holds
    verbatim, whichever family's rules it follows: `--name`, `"name"`, and the parsed
    namespace's `name_with_underscores` and `nameInCamelCase` when they differ."""
    attribute = flag.replace("-", "_")
    camel = re.sub(r"-([a-z0-9])", lambda m: m.group(1).upper(), flag)
    forms = [f"--{flag}", f'"{flag}"', f"'{flag}'", attribute, camel]
    return list(dict.fromkeys(f for f in forms if f != flag))


@lru_cache(maxsize=256)
def _site_rules(flag: str, family: str) -> re.Pattern[str] | None:
    attribute = flag.replace("-", "_")
    camel = re.sub(r"-([a-z0-9])", lambda m: m.group(1).upper(), flag)
    escaped = f"({re.escape(flag)})"
    patterns = [
        *definition_patterns(escaped).get(family, []),
        *_reading_patterns(re.escape(flag), re.escape(attribute), re.escape(camel)).get(family, []),
    ]
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.M) if patterns else None


def flag_sites(text: str, language: str, flag: str) -> list[int]:
    """The offsets in `text` (code of `language`) where `flag` (its long name, no
    dashes) is defined or read, by its family's rules; none for a language without
    them."""
    rules = _site_rules(flag, FAMILY.get(language, ""))
    return [] if rules is None else [m.start() for m in rules.finditer(text)]
