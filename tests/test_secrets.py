"""The secret check (`indexer.secrets`): each format found and redacted within its line,
look-alikes in ordinary code left alone, whole-file secrets recognised by content.

The secrets are built at run time from random characters, so that this file does not
itself hold one (and an index of this repository does not redact it).
"""

from __future__ import annotations

import base64
import json
import random
import string

import pytest
from conftest import repository_sources

from dowse.indexer import secrets
from dowse.indexer.secrets import REDACTED, file_secret, redact, safe_text

_RNG = random.Random(23)
_ALNUM = string.ascii_letters + string.digits


def _r(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _b64url(obj: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


_UPPER = string.ascii_uppercase + string.digits
_JWT = ".".join(
    (_b64url({"alg": "HS256", "typ": "JWT"}), _b64url({"sub": _r(8), "iat": 1}), _r(43))
)
_AZURE = _r(86, string.ascii_letters + string.digits + "+/") + "=="

# (what, path, line template, secret): `{}` in the template is where the secret goes.
FOUND = [
    ("AWS access key id", "app/settings.py", 'AWS_ACCESS_KEY_ID = "{}"', "AKIA" + _r(16, _UPPER)),
    (
        "AWS secret key, quoted, without its id",
        "app/aws.py",
        'aws_secret_access_key = "{}"',
        _r(40, _ALNUM + "/+"),
    ),
    (
        "AWS secret key, unquoted, without its id",
        "deploy/aws.ini",
        "aws_secret_access_key = {}",
        _r(40, _ALNUM + "/+"),
    ),
    (
        "AWS secret key in a shell export",
        "deploy/run.sh",
        "export AWS_SECRET_ACCESS_KEY={}",
        _r(40, _ALNUM + "/+"),
    ),
    (
        "AWS secret key named in mixed case",
        "deploy/cloud.ini",
        "aWs_Secret_Access_Key = {}",
        _r(40, _ALNUM + "/+"),
    ),
    (
        "Slack bot token in mixed case",
        "bots/slack.yml",
        "bot: {}",
        f"XoXb-{_r(12, string.digits)}-{_r(24)}",
    ),
    ("AWS key named in mixed case", "deploy/cloud.py", 'aWs = "{}"', _r(40, _ALNUM + "/+")),
    ("npm token", "ci/publish.sh", "echo //registry.npmjs.org/:_authToken={}", "npm_" + _r(36)),
    ("GitLab token", "ci/gitlab.py", 'TOKEN = "{}"', "glpat-" + _r(20)),
    (
        "OpenAI key",
        "bot/llm.py",
        'client = OpenAI(api_key="{}")',
        "sk-proj-" + _r(20) + "T3BlbkFJ" + _r(20),
    ),
    ("Anthropic key", "bot/claude.ts", 'const key = "{}";', "sk-ant-api03-" + _r(93) + "AA"),
    ("Google API key", "web/maps.js", 'const maps = "{}";', "AIza" + _r(35, _ALNUM + "_-")),
    (
        "Slack webhook",
        "ops/notify.py",
        'requests.post("{}", json=msg)',
        f"https://hooks.slack.com/services/T{_r(8, _UPPER)}/B{_r(8, _UPPER)}/{_r(24)}",
    ),
    (
        "Slack bot token",
        "bots/slack.go",
        'const token = "{}"',
        f"xoxb-{_r(12, string.digits)}-{_r(24)}",
    ),
    ("SendGrid key", "mail/send.rb", 'SENDGRID = "{}"', f"SG.{_r(22)}.{_r(43)}"),
    (
        "Azure storage key",
        "app/storage.cs",
        'var conn = "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};";',
        _AZURE,
    ),
    ("PyPI token", "ci/release.yml", "    password: {}", "pypi-AgEIcHlwaS5vcmc" + _r(80)),
    ("Hugging Face token", "ml/train.py", 'login(token="{}")', "hf_" + _r(34)),
    ("JWT", "tests/fixtures/auth.json", '{{"authorization": "Bearer {}"}}', _JWT),
    ("GitHub token", "tools/gh.py", "token: {}", "ghp_" + _r(36)),
    ("GitHub fine-grained token", "tools/gh.py", 'GH = "{}"', "github_pat_" + _r(82, _ALNUM + "_")),
    ("Stripe key", "web/pay.js", 'const stripe = Stripe("{}");', "sk_live_" + _r(24)),
    (
        "password in a database URL",
        "app/db.py",
        'DATABASE_URL = "postgres://app:{}@db.internal:5432/prod"',
        _r(16),
    ),
    (
        "password in a requirement URL",
        "requirements.txt",
        "git+https://deploy:{}@git.example.com/lib.git#egg=lib",
        _r(20),
    ),
    ("SECRET_KEY in settings", "proj/s.py", 'SECRET_KEY = "{}"', "django-insecure-" + _r(30)),
    ("PASSWORD in settings", "proj/settings.py", 'PASSWORD = "{}"', "Tr0ub4dor&3x"),
    ("password in YAML", "deploy/values.yaml", "  password: {}", "hunter2-" + _r(8)),
    ("password in a dict", "app/conf.py", '    "db_password": "{}",', "s3cr3t-" + _r(6)),
    (
        "high-entropy string",
        "app/keys.py",
        'SIGNING = "{}"',
        _r(44, string.ascii_letters + string.digits + "+/"),
    ),
    ("hex key named as one", "app/hmac.py", 'HMAC_KEY = "{}"', _r(64, "0123456789abcdef")),
    # The formats whose patterns have no literal or a common one, found through a hint.
    (
        "Discord bot token",
        "bots/discord.py",
        "TOKEN = {}",
        f"M{_r(23, _ALNUM)}.{_r(6, _ALNUM)}.{_r(27, _ALNUM)}",
    ),
    ("Telegram bot token", "bots/tg.py", "bot = Bot({})", f"{_r(9, string.digits)}:{_r(35)}"),
    (
        "Twilio key",
        "sms/send.py",
        "sid = {}",
        "AC" + _r(32, string.ascii_lowercase + string.digits),
    ),
    (
        "Mailchimp key",
        "mail/list.py",
        "mc = {}",
        _r(32, string.ascii_lowercase + string.digits) + "-us12",
    ),
    ("Square OAuth secret", "pay/square.py", "sq = {}", "sq0csp-" + _r(43)),
]


@pytest.mark.parametrize(("what", "path", "template", "secret"), FOUND, ids=[f[0] for f in FOUND])
def test_each_format_is_redacted_within_its_line(
    what: str, path: str, template: str, secret: str
) -> None:
    text = "# before\n" + template.format(secret) + "\n# after\n"
    out = redact(text, path)
    assert secret not in out, what
    assert REDACTED in out
    assert out.splitlines()[0] == "# before" and out.splitlines()[2] == "# after"
    assert out.count("\n") == text.count("\n")
    # Only the value goes: the rest of the line is kept.
    assert out.splitlines()[1] == template.format(REDACTED) or what in _WHOLE_MATCH


# The secret is the whole match: the webhook URL, "AccountKey=..." of a connection string.
_WHOLE_MATCH = {"Slack webhook", "Azure storage key"}


SAFE = [
    ("AWS's documentation key", "docs/aws.md", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),
    ("password from a call", "app/db.py", "password = get_password(user)"),
    ("password from the environment", "app/db.py", 'password = os.environ["DB_PASSWORD"]'),
    ("the name of a variable", "app/llm.py", 'ENV_API_KEY = "DOWSE_LLM_API_KEY"'),
    ("a label", "app/plugins.py", 'secret_type = "Secret Keyword"'),
    ("a reason", "app/walk.py", '".htpasswd": "secret: .htpasswd",'),
    ("a placeholder", "README.md", 'api_key = "YOUR_API_KEY"'),
    ("a template", "deploy/app.yaml", "  password: ${DB_PASSWORD}"),
    ("a templated URL", "app/db.py", 'url = f"postgres://app:{password}@db/prod"'),
    ("a URL without a password", "app/db.py", 'url = "postgres://app@db/prod"'),
    ("a URL with a placeholder", "docs/db.md", "postgres://user:password@localhost/db"),
    ("a commit hash", "tests/golden.json", '  "head": "82b3e6c340bd0016c99209ca0450bc69e030242e",'),
    ("a content digest", "app/hash.py", f'EMPTY = "{"e3b0c44298fc1c149afbf4c8996fb924" * 2}"'),
    ("a UUID", "app/ids.py", 'project_key = "123e4567-e89b-12d3-a456-426614174000"'),
    ("an alphabet", "app/b32.py", 'upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"'),
    ("an expression", "bench/seed.py", 'akia, secret = "AKIA" + _alnum(rng, 16, upper), rest'),
    ("a key marker in a parser", "app/pem.py", 'if line.startswith("-----BEGIN RSA PRIVATE KEY"):'),
    ("a comparison with a name", "app/auth.py", "if password == expected_password:"),
    ("prose", "CHANGELOG.md", "- The password prompt no longer echoes the secret key."),
    ("a short id", "app/ids.py", 'key = "name"'),
    ("a reference in prose", "app/walk.py", "a Kubernetes Secret: `secrets.file_secret`;"),
]


def test_a_text_is_scanned_unless_no_plugin_could_match_it(monkeypatch) -> None:
    # `_may_hold_secret` only skips work: with every text scanned, every result is the
    # same (the formats, the look-alikes, this repository's own sources in pieces).
    texts = [(t.format(s) + "\n", p) for _, p, t, s in FOUND] + [(line, p) for _, p, line in SAFE]
    for source in repository_sources()[:200]:
        lines = source.read_text(errors="replace").split("\n")
        texts += [("\n".join(lines[i : i + 30]), source.name) for i in range(0, len(lines), 30)]
    gated = [redact(text, path) for text, path in texts]
    assert sum(not secrets._may_hold_secret(text) for text, _ in texts) > len(texts) // 2
    monkeypatch.setattr(secrets, "_may_hold_secret", lambda text: True)
    assert [redact(text, path) for text, path in texts] == gated


def test_every_format_plugin_is_named_before_detect_secrets_is_imported() -> None:
    names = {type(plugin).__name__ for plugin in secrets._format_plugins()}
    assert names == set(secrets._PLUGIN_NAMES)


@pytest.mark.parametrize(("what", "path", "line"), SAFE, ids=[s[0] for s in SAFE])
def test_look_alikes_are_left_alone(what: str, path: str, line: str) -> None:
    assert redact(line + "\n", path) == line + "\n", what


def test_redaction_keeps_lines_and_other_text() -> None:
    pw, key = _r(14), "ghp_" + _r(36)
    text = f'DEBUG = False\nPASSWORD = "{pw}"  # rotated\nX = ["{key}", "{key}"]\n\nend\n'
    out = redact(text, "settings.py")
    assert out == (
        f'DEBUG = False\nPASSWORD = "{REDACTED}"  # rotated\n'
        f'X = ["{REDACTED}", "{REDACTED}"]\n\nend\n'
    )
    assert redact("", "a.py") == ""
    assert redact("no secret here\n") == "no secret here\n"


def _pem(kind: str = "RSA ") -> str:
    body = base64.encodebytes(random.Random(0).randbytes(300)).decode()
    dashes = "-" * 5
    return f"{dashes}BEGIN {kind}PRIVATE KEY{dashes}\n{body}{dashes}END {kind}PRIVATE KEY{dashes}\n"


def _putty(version: int) -> str:
    pub = base64.b64encode(random.Random(1).randbytes(120)).decode()
    priv = base64.b64encode(random.Random(2).randbytes(120)).decode()
    return (
        f"PuTTY-User-Key-File-{version}: ssh-rsa\nEncryption: none\nComment: deploy\n"
        f"Public-Lines: 1\n{pub}\nPrivate-Lines: 1\n{priv}\n"
        f"Private-MAC: {_r(40, '0123456789abcdef')}\n"
    )


_KUBECONFIG = f"""apiVersion: v1
kind: Config
clusters:
- cluster:
    server: https://10.0.0.1:6443
  name: prod
users:
- name: admin
  user:
    token: {_r(48)}
current-context: prod
"""
_SECRET_MANIFEST = f"""---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
---
apiVersion: v1
kind: Secret
metadata:
  name: db
type: Opaque
data:
  password: {base64.b64encode(_r(16).encode()).decode()}
"""
_SECRET_JSON = json.dumps(
    {"apiVersion": "v1", "kind": "Secret", "stringData": {"token": _r(20)}}, indent=2
)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (_pem(), "secret: private key"),
        (_pem("OPENSSH "), "secret: private key"),
        (_putty(2), "secret: PuTTY private key"),
        (_putty(3), "secret: PuTTY private key"),
        (_KUBECONFIG, "secret: kubeconfig"),
        (_SECRET_MANIFEST, "secret: Kubernetes Secret manifest"),
        (_SECRET_JSON, "secret: Kubernetes Secret manifest"),
    ],
    ids=["pem", "openssh", "putty2", "putty3", "kubeconfig", "secret-yaml", "secret-json"],
)
def test_whole_file_secrets_by_content(data: str, reason: str) -> None:
    assert file_secret(data.encode(), "any/where.yaml") == reason
    assert file_secret(data.encode(), "config") == reason
    assert safe_text(data.encode(), "x.yaml") is None


def test_a_manifest_inside_code_is_code() -> None:
    # A test that builds a kubeconfig in a string stays indexed (its values redacted).
    source = f'KUBECONFIG = """\n{_KUBECONFIG}"""\n'.encode()
    assert file_secret(source, "tests/test_kube.py") is None
    assert file_secret(source, "ops/kube.yaml") == "secret: kubeconfig"
    assert file_secret(_pem().encode(), "tests/test_tls.py") == "secret: private key"


@pytest.mark.parametrize(
    "data",
    [
        # Code that handles these formats without holding one.
        'if kind == "Secret":\n    data = load(manifest)\n',
        "kind: Deployment\ndata:\n  replicas: 3\n",
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  level: debug\n",
        "kind: SealedSecret\nspec:\n  encryptedData:\n    password: AgBy3i4OJSWK+\n",
        'HEADER = "PuTTY-User-Key-File-"\n',
        "-----BEGIN RSA PRIVATE KEY-----\n",
    ],
    ids=["code", "deployment", "configmap", "sealed", "putty-marker", "pem-marker"],
)
def test_whole_file_look_alikes(data: str) -> None:
    assert file_secret(data.encode()) is None


def test_every_private_key_marker_of_detect_secrets_is_prefiltered() -> None:
    # `file_secret` looks for keys only in files holding one of its two markers, without
    # importing detect-secrets: each of detect-secrets' own markers must hold one.
    from detect_secrets.plugins.private_key import PrivateKeyDetector

    from dowse.indexer.secrets import _KEY_MARKERS

    patterns = [p.pattern.encode() for p in PrivateKeyDetector.denylist]
    assert patterns
    assert all(any(m in p for m in _KEY_MARKERS) for p in patterns), patterns


def test_safe_text_redacts_and_decodes_leniently() -> None:
    pw = _r(12)
    data = f'PASSWORD = "{pw}"\n'.encode() + b"caf\xe9\n"
    assert safe_text(data, "s.py") == f'PASSWORD = "{REDACTED}"\ncaf\ufffd\n'
