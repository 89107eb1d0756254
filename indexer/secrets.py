"""The one secret check for every text dowse stores or prints.

Two decisions, both made here and nowhere else:

- `file_secret(data, path)`: the whole file is a secret and is not read at all (its reason
  starts with ``"secret: "``): a private key block (PEM, OpenSSH, PGP, PuTTY), a
  kubeconfig, a Kubernetes ``Secret`` manifest. Such a file is key material through and
  through; redacting a line of it would leave the rest.
- `redact(text, path)`: every secret value found in a text is replaced by
  ``[REDACTED]``, within its line. Files of code stay indexed and searchable this way
  (a ``settings.py`` with one password), and so do commit messages and whatever explore
  quotes (package.json scripts, requirement URLs).

Detection is Yelp's detect-secrets: its format plugins (AWS, GitHub, GitLab, npm,
OpenAI, Slack tokens and webhooks, SendGrid, Stripe, Azure storage, PyPI, JWT, Discord,
Twilio, Mailchimp, Square, Telegram, basic-auth credentials in URLs), its keyword plugin
(``SECRET_KEY = "..."``, ``password: ...``, with the assignment forms of the file's
type) and its high-entropy string plugins, with its heuristic filters. It has no plugin
for Anthropic, Google API, Hugging Face and fine-grained GitHub tokens nor for an AWS
secret key written without quotes: `_EXTRA` adds those, as detect-secrets plugins.

Invariants:

- `redact` keeps the text's lines: the same number, in the same order, each changed only
  where a value was replaced, so line numbers of chunks, symbols and citations hold.
- Nothing here touches detect-secrets' global settings, reads a file, or calls a
  plugin's ``verify`` (which would send the secret over the network): the plugins'
  patterns are applied directly.
- Deterministic: the same text and path give the same result; `SCANNER` names the rules,
  and an index records it so that a change of rules re-reads every file.
- detect-secrets is imported on the first `redact` of a text where some plugin could
  find something (`_may_hold_secret`: a plugin's literal or hint, a secret-sounding
  keyword, a long quoted run), all the modules used at once (`_detect_secrets`), without
  importing `requests`, which it needs only to verify secrets online: a tenth of its
  import's time. A text no plugin could match is returned as it is, detect-secrets
  neither imported nor run: a cold `dowse ask` shows a few dozen lines, most often
  without any.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import sys
from collections.abc import Iterator
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.keyword import KeywordDetector

from dowse.languages import CODE_LANGUAGES, language_for

__all__ = ["REDACTED", "SCANNER", "file_secret", "redact", "redact_bytes", "safe_text"]

REDACTED = "[REDACTED]"
SCANNER = "detect-secrets-1.5.0+dowse-1"
"""The rules `redact` and `file_secret` apply; an index built under other rules (or
with secrets included) is read again whole."""

# --- formats detect-secrets lacks, as its own kind of plugin ---------------------------------


class _Requests(ModuleType):
    """What detect-secrets' modules bind for `import requests` while `_detect_secrets`
    imports them: `requests` is imported (as usual, into `sys.modules`) when one of them
    first asks it for a name, which only verifying a secret online does, and every name
    is then the real module's."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get("requests") is self:
            del sys.modules["requests"]
        return getattr(importlib.import_module("requests"), name)


@contextlib.contextmanager
def _requests_on_use() -> Iterator[None]:
    """`import requests` binds a `_Requests` inside, unless `requests` is imported."""
    if "requests" in sys.modules:
        yield
        return
    stand_in = _Requests("requests")
    sys.modules["requests"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("requests") is stand_in:
            del sys.modules["requests"]


@cache
def _detect_secrets() -> None:
    """Import detect-secrets, and the plugins used here, with `requests` deferred (~40
    ms of CPU with its own imports: urllib3, charset_normalizer, idna, certifi)."""
    # The package's core, which `plugins.base` imports, and the plugins that import
    # `requests` themselves; the other modules here import it through them.
    used = ["plugins.base", *(f"plugins.{spec.rsplit('.', 1)[0]}" for spec in _FORMAT_PLUGINS)]
    with _requests_on_use():
        for module in used:
            importlib.import_module(f"detect_secrets.{module}")


@cache
def _extra_types() -> tuple[type[RegexBasedDetector], ...]:
    """The detectors below, defined on first use: detect-secrets is imported only when
    text is scanned, not by every module that may scan some."""
    from detect_secrets.plugins.base import RegexBasedDetector

    class _AnthropicDetector(RegexBasedDetector):
        secret_type = "Anthropic API Key"
        denylist = (re.compile(r"\bsk-ant-[a-z]+\d{2}-[A-Za-z0-9_-]{80,}"),)

    class _GoogleApiKeyDetector(RegexBasedDetector):
        secret_type = "Google API Key"
        denylist = (re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),)

    class _HuggingFaceDetector(RegexBasedDetector):
        secret_type = "Hugging Face Token"
        denylist = (re.compile(r"\bhf_[A-Za-z0-9]{34,40}(?![A-Za-z0-9])"),)

    class _GitHubFineGrainedDetector(RegexBasedDetector):
        secret_type = "GitHub fine-grained token"
        denylist = (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{60,}"),)

    class _AwsSecretKeyDetector(RegexBasedDetector):
        """An AWS secret access key named as one, quoted or not (credentials files, shell
        exports): detect-secrets' AWS plugin wants quotes."""

        secret_type = "AWS Secret Access Key"
        denylist = (
            re.compile(
                r"aws_?secret_?(?:access_?)?key\w*['\"]?\s*[=:]\s*['\"]?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
                re.IGNORECASE,
            ),
        )

    return (
        _AnthropicDetector,
        _GoogleApiKeyDetector,
        _HuggingFaceDetector,
        _GitHubFineGrainedDetector,
        _AwsSecretKeyDetector,
    )


# The format plugins of detect-secrets used: all but PrivateKeyDetector (its markers alone
# are `file_secret`'s first test, key material must follow), IPPublicDetector (an address
# is no secret), the IBM, SoftLayer and Cloudant ones (keyword rules the keyword plugin
# covers) and ArtifactoryDetector (its password shape, "AP" and a hex digit then eight
# letters, is an ordinary identifier as often as not).
_FORMAT_PLUGINS = (
    "aws.AWSKeyDetector",
    "azure_storage_key.AzureStorageKeyDetector",
    "basic_auth.BasicAuthDetector",
    "discord.DiscordBotTokenDetector",
    "github_token.GitHubTokenDetector",
    "gitlab_token.GitLabTokenDetector",
    "jwt.JwtTokenDetector",
    "mailchimp.MailchimpDetector",
    "npm.NpmDetector",
    "openai.OpenAIDetector",
    "pypi_token.PypiTokenDetector",
    "sendgrid.SendGridDetector",
    "slack.SlackDetector",
    "square_oauth.SquareOAuthDetector",
    "stripe.StripeDetector",
    "telegram_token.TelegramBotTokenDetector",
    "twilio.TwilioKeyDetector",
)

_ENTROPY_MIN_LENGTH = 20
"""Shorter quoted strings are words, ids and format strings far more often than keys;
a key of fewer than 20 characters is too weak to be worth finding by entropy alone."""
_HEX_MIN_LENGTH = 32
"""Hex digests of 20 to 31 characters are abbreviated commit hashes and colours in code;
secrets in hex are 32 or more (128-bit keys and up)."""
_PLACEHOLDER = re.compile(
    r"example|sample|dummy|placeholder|changeme|change_me|your[_-]|xxxx|\*\*\*|<|>|\.\.\.|"
    r"redacted|^test$|^secret$|^pass$|^passw(?:or)?d$|^pw$|^none$|^null$|^true$|^false$",
    re.IGNORECASE,
)
"""Values the keyword and entropy plugins find that are documentation, not secrets."""


@cache
def _format_plugins() -> tuple[RegexBasedDetector, ...]:
    found: list[RegexBasedDetector] = []
    for spec in _FORMAT_PLUGINS:
        module, name = spec.rsplit(".", 1)
        found.append(getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)())
    found.extend(cls() for cls in _extra_types())
    return tuple(found)


@cache
def _keyword() -> KeywordDetector:
    from detect_secrets.plugins.keyword import KeywordDetector

    return KeywordDetector()


@cache
def _entropy() -> tuple[HighEntropyStringsPlugin, ...]:
    from detect_secrets.plugins.high_entropy_strings import (
        Base64HighEntropyString,
        HexHighEntropyString,
    )

    return (Base64HighEntropyString(limit=4.5), HexHighEntropyString(limit=3.0))


# Where the guessing plugins may find something, searched in the whole text at once (a
# Python loop over every line costs more than the plugins themselves): a secret-sounding
# name followed by an assignment or comparison, or a value compared with one; a quoted
# run of 20 or more key characters.
_KEYWORD_HINT = re.compile(
    r"(?=['\"`kKpPsScC])(?:key|pass|pwd|secret|contrase)\w*[\]'\"`)]{0,2}[ \t]*"
    r"(?::=?|={1,3}|!==?|=>|\(|[ \t])"
    r"|['\"`][ \t]*[!=]={1,2}[ \t]*\w*(?:key|pass|pwd|secret)",
    re.IGNORECASE,
)
_QUOTED_RUN = re.compile(r"['\"][A-Za-z0-9+/=_\\-]{20,}['\"]")
_HEX_CONTEXT = re.compile(r"key|secret|token|pass|auth|pwd|credential", re.IGNORECASE)
"""A long hex string is a digest (a commit, a content hash) unless its line says it is a
key."""
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_CONSTANT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
"""An upper-case name with underscores (``"DOWSE_LLM_API_KEY"``) names a secret, it is
not one."""


def _value_spans(line: str, value: str) -> Iterator[tuple[int, int]]:
    """Where `value` stands in `line` as a whole token (not inside a longer word), or
    everywhere if it never does: safety before neatness."""
    spans = []
    start = line.find(value)
    while start >= 0:
        end = start + len(value)
        before = line[start - 1] if start else ""
        after = line[end] if end < len(line) else ""
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            spans.append((start, end))
        start = line.find(value, end)
    if not spans:
        start = line.find(value)
        while start >= 0:
            spans.append((start, start + len(value)))
            start = line.find(value, start + len(value))
    yield from spans


def _heuristic_ok(value: str, line: str, plugin: BasePlugin) -> bool:
    """detect-secrets' heuristic filters, and dowse's for what they let through in
    ordinary code, for the plugins that guess (keyword, entropy): True when `value` is
    still a secret after them."""
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins.keyword import KeywordDetector

    if len(value) < 4 or _PLACEHOLDER.search(value) or _CONSTANT_NAME.fullmatch(value):
        return False
    if isinstance(plugin, KeywordDetector) and (
        any(c.isspace() for c in value) or _DOTTED_NAME.fullmatch(value)
    ):
        # Prose ("secret: private key"), a label, or a reference ("secrets.file_secret").
        return False
    steps = sum(ord(b) - ord(a) == 1 for a, b in zip(value, value[1:], strict=False))
    if len(value) >= 8 and steps >= 0.8 * len(value):
        return False  # an alphabet ("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    return not (
        heuristic.is_sequential_string(value)
        or heuristic.is_potential_uuid(value)
        or heuristic.is_likely_id_string(value, line, plugin)
        or heuristic.is_templated_secret(value)
        or heuristic.is_prefixed_with_dollar_sign(value)
        or heuristic.is_not_alphanumeric_string(value)
    )


def _entropy_of(plugin: HighEntropyStringsPlugin, value: str) -> float:
    from detect_secrets.plugins.high_entropy_strings import HexHighEntropyString

    if isinstance(plugin, HexHighEntropyString) and value.isdigit():
        return 0.0  # numbers (timestamps, ports, ids) are not keys
    return float(plugin.calculate_shannon_entropy(value))


def _keyword_values(line: str, groups: dict[re.Pattern[str], int]) -> Iterator[str]:
    from detect_secrets.filters import heuristic

    keyword = _keyword()
    values = [
        value
        for value in keyword.analyze_string(line, denylist_regex_to_group=groups)
        if _heuristic_ok(value, line, keyword) and not _in_expression(line, value)
    ]
    # secret = get_secret(), secret = request.headers["key"]
    if values and not heuristic.is_indirect_reference(line):
        yield from values


def _in_expression(line: str, value: str) -> bool:
    """Whether the quoted `value` is an operand (``"AKIA" + rest``, ``"%s:%s" % pair``),
    not a literal assigned whole."""
    at = line.find(value)
    rest = line[at + len(value) + 1 :].lstrip() if at >= 0 else ""
    return rest[:1] in ("+", "%", "*")


def _entropy_values(line: str) -> Iterator[str]:
    from detect_secrets.plugins.high_entropy_strings import HexHighEntropyString

    for plugin in _entropy():
        hex_digits = isinstance(plugin, HexHighEntropyString)
        if hex_digits and not _HEX_CONTEXT.search(line):
            continue
        minimum = _HEX_MIN_LENGTH if hex_digits else _ENTROPY_MIN_LENGTH
        for value in plugin.analyze_string(line):
            if (
                len(value) >= minimum
                and _entropy_of(plugin, value) > plugin.entropy_limit
                and _heuristic_ok(value, line, plugin)
            ):
                yield value


def _lines_matching(text: str, pattern: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    """(offset, line) of each line holding a match of `pattern`, once each."""
    last = -1
    for m in pattern.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if start == last:
            continue
        last = start
        end = text.find("\n", m.end())
        yield start, text[start : len(text) if end < 0 else end]


_AWS = ("aws",)
# Plugin class name -> literals one of which its match must contain: an `in` test is far
# faster than a regex scan of the whole text. For the plugins of `_CASELESS` the test is
# made on the text lowered.
_FORMAT_LITERALS: dict[str, tuple[str, ...]] = {
    "AWSKeyDetector": ("A3T", "ABIA", "ACCA", "AKIA", "ASIA", *_AWS),
    "AzureStorageKeyDetector": ("AccountKey=",),
    "BasicAuthDetector": ("://",),
    "GitHubTokenDetector": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "GitLabTokenDetector": (
        *("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-"),
        *("glagent-", "gloas-", "GR1348941"),
    ),
    "JwtTokenDetector": ("eyJ",),
    "MailchimpDetector": ("-us",),
    "NpmDetector": ("_authToken",),
    "OpenAIDetector": ("T3BlbkFJ",),
    "PypiTokenDetector": ("pypi-",),
    "SendGridDetector": ("SG.",),
    "SlackDetector": ("xox", "hooks.slack"),
    "SquareOAuthDetector": ("sq0csp-",),
    "StripeDetector": ("k_live_",),
    "TwilioKeyDetector": ("AC", "SK"),
    "_AnthropicDetector": ("sk-ant-",),
    "_GoogleApiKeyDetector": ("AIza",),
    "_HuggingFaceDetector": ("hf_",),
    "_GitHubFineGrainedDetector": ("github_pat_",),
    "_AwsSecretKeyDetector": _AWS,
}


_CASELESS = {
    name: tuple(literal.lower() for literal in _FORMAT_LITERALS[name])
    for name in ("AWSKeyDetector", "SlackDetector", "_AwsSecretKeyDetector")
}
"""The plugins with a pattern that matches case-insensitively (`aWs_secret_access_key`,
`XoXb-...`), with their literals lowered: looked for in the text lowered."""


_FORMAT_HINTS: dict[str, re.Pattern[str]] = {
    # Each matches wherever the plugin's patterns do (a looser form of them), for the
    # plugins without a literal or whose literals are common in code ("AC", "-us", "://").
    "BasicAuthDetector": re.compile(r"://[^\s@]*@"),
    "DiscordBotTokenDetector": re.compile(r"[\w-]{24}\.[\w-]{6}\.[\w-]{27}"),
    "MailchimpDetector": re.compile(r"-us[0-9]"),
    "TelegramBotTokenDetector": re.compile(r"\d{8}:[\w-]{35}"),
    "TwilioKeyDetector": re.compile(r"(?:AC|SK)[a-z0-9]{32}"),
}
"""Plugin class name -> a pattern that matches every text its patterns match in: a text
without a match is not scanned by that plugin (after `_FORMAT_LITERALS`' test)."""

_EXTRA_NAMES = (
    "_AnthropicDetector",
    "_GoogleApiKeyDetector",
    "_HuggingFaceDetector",
    "_GitHubFineGrainedDetector",
    "_AwsSecretKeyDetector",
)
"""The class names of `_extra_types`, known before detect-secrets is imported."""
_PLUGIN_NAMES = (*(spec.rsplit(".", 1)[1] for spec in _FORMAT_PLUGINS), *_EXTRA_NAMES)

_SECRET_WORD = re.compile(
    r"(?:api|auth|service|account|db|database|priv|private|client)_?key"
    r"|(?:db|database|key)_?pass|passw(?:or)?d|pwd|secret|contrase(?:ñ|n)a",
    re.IGNORECASE,
)
"""A word of detect-secrets' keyword denylist (its `DENYLIST`, each of whose patterns
requires one, case-insensitively at most): a text without one holds no keyword value."""


def _may_find(plugin: str, text: str, lowered: str) -> bool:
    """Whether the format plugin named `plugin` could find something in `text`
    (`lowered` is `text.lower()`, for the plugins of `_CASELESS`)."""
    if plugin in _CASELESS:
        literals, haystack = _CASELESS[plugin], lowered
    else:
        literals, haystack = _FORMAT_LITERALS.get(plugin, ()), text
    if literals and not any(literal in haystack for literal in literals):
        return False
    hint = _FORMAT_HINTS.get(plugin)
    return hint is None or hint.search(text) is not None


def _may_hold_secret(text: str) -> bool:
    """False when no plugin could find a value in `text`: no format plugin's literal or
    hint, no keyword of the denylist, no quoted run long enough for the entropy plugins
    (each a necessary condition of the scan in `redact`)."""
    if _SECRET_WORD.search(text) is not None or _QUOTED_RUN.search(text) is not None:
        return True
    lowered = text.lower()
    return any(_may_find(name, text, lowered) for name in _PLUGIN_NAMES)


_VALUE_GROUP = frozenset(
    {"AWSKeyDetector", "BasicAuthDetector", "NpmDetector", "_AwsSecretKeyDetector"}
)
"""The plugins whose patterns' first group is the secret in a longer match (the password
of ``user:password@``); other groups are prefixes (``(ghp|gho)_``), the value is all."""


_JWT_TAIL = re.compile(r"[A-Za-z0-9_.+/=-]*")


def _format_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the values the format plugins find in `text` (their patterns never cross
    a line break)."""
    from detect_secrets.filters import heuristic

    spans: list[tuple[int, int]] = []
    lowered = text.lower()
    for plugin in _format_plugins():
        if not _may_find(type(plugin).__name__, text, lowered):
            continue
        for pattern in plugin.denylist:
            for m in pattern.finditer(text):
                group = (
                    next((g for g in range(1, pattern.groups + 1) if m.group(g)), 0)
                    if type(plugin).__name__ in _VALUE_GROUP
                    else 0
                )
                value = m.group(group)
                if "EXAMPLE" in m.group(0):
                    continue  # AWS's documentation keys
                span = m.span(group)
                if isinstance(plugin, _jwt_type()):
                    # detect-secrets' JWT detector checks the token's structure.
                    if not getattr(plugin, "is_formally_valid")(value):  # noqa: B009
                        continue
                    # Its pattern ends lazily, before the signature: take that too.
                    span = (span[0], _JWT_TAIL.match(text, span[1]).end())  # type: ignore[union-attr]
                if isinstance(plugin, _basic_auth_type()) and (
                    heuristic.is_templated_secret(value)
                    or heuristic.is_prefixed_with_dollar_sign(value)
                    or _PLACEHOLDER.search(value)
                ):
                    continue  # "https://user:{token}@host", "postgres://user:password@host"
                spans.append(span)
    return spans


@cache
def _basic_auth_type() -> type:
    from detect_secrets.plugins.basic_auth import BasicAuthDetector

    return BasicAuthDetector


@cache
def _jwt_type() -> type[Any]:
    from detect_secrets.plugins.jwt import JwtTokenDetector

    return JwtTokenDetector


def redact(text: str, path: str = "") -> str:
    """`text` with every secret value replaced by ``[REDACTED]`` within its line.

    `path` (a file name, for its type) picks the keyword plugin's assignment forms:
    configuration files (.yaml .toml .ini .cfg) take unquoted values, code and other
    text only quoted ones, as in detect-secrets.
    """
    if not _may_hold_secret(text):
        return text
    _detect_secrets()
    from detect_secrets.plugins.keyword import (
        QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
        REGEX_BY_FILETYPE,
    )
    from detect_secrets.util.filetype import determine_file_type

    spans = _format_spans(text)
    groups = REGEX_BY_FILETYPE.get(
        determine_file_type(path), QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP
    )
    for offset, line in _lines_matching(text, _KEYWORD_HINT):
        for value in set(_keyword_values(line, groups)):
            spans.extend((offset + a, offset + b) for a, b in _value_spans(line, value))
    for offset, line in _lines_matching(text, _QUOTED_RUN):
        for value in set(_entropy_values(line)):
            spans.extend((offset + a, offset + b) for a, b in _value_spans(line, value))
    if not spans:
        return text
    out: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if end <= at:
            continue  # inside a span already replaced
        start = max(start, at)
        out.append(text[at:start])
        out.append(REDACTED)
        at = end
    out.append(text[at:])
    return "".join(out)


def redact_bytes(data: bytes, path: str = "") -> bytes:
    """`redact` for a file's bytes (decoded as UTF-8, undecodable bytes kept as they
    are); the same bytes when there is nothing to redact."""
    text = data.decode("utf-8", "surrogateescape")
    redacted = redact(text, path)
    return data if redacted == text else redacted.encode("utf-8", "surrogateescape")


# --- whole files -----------------------------------------------------------------------------

# Between a key's lines: real line breaks, or escaped ones and quotes for a key pasted
# into a string literal. Repetitions are bounded and a header line ends only at a line
# break, so no input makes the search backtrack badly.
_KEY_SEP = rb"(?:\\n|[\s\"'+,]){1,40}"
_KEY_HEADER = rb"[A-Za-z-]+:[^\n\\]{0,200}(?:\\n|\n)(?:\\n|[\s\"'+,]){0,40}"
# Key material must follow the marker (optional "Header: value" lines, then base64), so a
# parser's source that only names the marker does not match.
_PEM_KEY = re.compile(
    rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    + _KEY_SEP
    + rb"(?:"
    + _KEY_HEADER
    + rb"){0,4}[A-Za-z0-9+/=]{40}"
)
_PUTTY_KEY = re.compile(
    rb"PuTTY-User-Key-File-\d+: *[\w@.-]+ *\r?\n(?:[A-Za-z-]+: [^\n]{0,200}\n){0,8}"
    rb"[A-Za-z0-9+/=]{20}"
)
_KUBE_KIND = re.compile(
    rb"""^[ \t]*["']?kind["']?[ \t]*:[ \t]*["']?(Config|Secret)["']?[ \t]*,?\r?$""", re.M
)
_KUBECONFIG_KEYS = re.compile(
    rb"""^["']?(?:clusters|users|contexts|current-context)["']?[ \t]*:""", re.M
)
_SECRET_DATA = re.compile(rb"""^[ \t]*["']?(?:data|stringData)["']?[ \t]*:""", re.M)


_KEY_MARKERS = (b"PRIVATE KEY", b"PuTTY-User-Key-File-")
"""What every key `_PEM_KEY` or `_PUTTY_KEY` finds holds (so do all of detect-secrets'
private key markers): a file without either is no key, and no regex runs on it."""


def file_secret(data: bytes, path: str = "") -> str | None:
    """Why a file's bytes are a secret as a whole (``"secret: …"``), or None.

    A kubeconfig or a Secret manifest is one in a configuration file (YAML, JSON, none
    of the languages with a grammar), wherever it lies; a file of code that holds one in
    a string (a test's fixture) is code, and its values are redacted instead."""
    if any(marker in data for marker in _KEY_MARKERS):
        if _PEM_KEY.search(data):
            return "secret: private key"
        if b"PuTTY-User-Key-File-" in data and _PUTTY_KEY.search(data):
            return "secret: PuTTY private key"
    if b"kind" in data and language_for(path) not in CODE_LANGUAGES:
        for m in _KUBE_KIND.finditer(data):
            if m.group(1) == b"Config" and _KUBECONFIG_KEYS.search(data):
                return "secret: kubeconfig"
            if m.group(1) == b"Secret" and _SECRET_DATA.search(data):
                return "secret: Kubernetes Secret manifest"
    return None


def safe_text(data: bytes, path: str = "") -> str | None:
    """A file's text as dowse may show it: None when the file is a secret as a whole,
    else decoded leniently and redacted."""
    if file_secret(data, path) is not None:
        return None
    return redact(data.decode("utf-8", "replace"), path)
