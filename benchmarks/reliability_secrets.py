"""The secrets case of benchmarks/reliability.py: a repository seeded with secret files
(skipped) and tokens and passwords inside code and configuration (redacted, the files
kept), and every text of the index searched for the seeded values.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reliability_proc import REPO, dowse

from dowse.indexer.store import SNAPSHOT_TABLES, Store

# -- secrets --------------------------------------------------------------------------------


def _alnum(rng: random.Random, n: int, alphabet: str = "") -> str:
    alphabet = alphabet or "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(rng.choice(alphabet) for _ in range(n))


def _pem(rng: random.Random, kind: str = "RSA PRIVATE KEY") -> tuple[str, str]:
    """A private key block (random base64) and its first line, the value to look for."""
    import base64

    body = base64.b64encode(bytes(rng.randrange(256) for _ in range(600))).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return (f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----\n", lines[0])


def secrets_repo(root: Path, rng: random.Random) -> list[tuple[str, str, str]]:
    """Write a repository seeded with secrets; return (path, what, value to look for)."""
    import base64

    seeded: list[tuple[str, str, str]] = []

    def put(rel: str, text: str, what: str, value: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        seeded.append((rel, what, value))

    upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    v = _alnum(rng, 32)
    put(".env", f"DATABASE_URL=postgres://app@db/prod\nSECRET_KEY={v}\n", ".env", v)
    v = _alnum(rng, 32)
    put("services/api/.env.production", f"API_TOKEN={v}\n", ".env.production", v)
    v = _alnum(rng, 32)
    put(".envrc", f"export DEPLOY_TOKEN={v}\n", ".envrc", v)
    for rel in ("deploy/id_rsa", "deploy/server.pem", "certs/tls.key", ".ssh/id_ed25519"):
        key, first = _pem(rng)
        put(rel, key, f"private key file {rel.rpartition('/')[2]}", first)
    akia, secret = "AKIA" + _alnum(rng, 16, upper), _alnum(rng, 40)
    put(
        ".aws/credentials",
        f"[default]\naws_access_key_id = {akia}\naws_secret_access_key = {secret}\n",
        "AWS credentials file",
        secret,
    )
    key, first = _pem(rng, "PRIVATE KEY")
    put(
        "config/gcp-service-account.json",
        json.dumps(
            {
                "type": "service_account",
                "private_key_id": _alnum(rng, 40),
                "private_key": key,
                "client_email": "bot@project.iam.gserviceaccount.com",
            }
        ),
        "GCP service account",
        first,
    )
    v = _alnum(rng, 24)
    put(
        "client_secret_1234.apps.googleusercontent.com.json",
        json.dumps({"installed": {"client_secret": v}}),
        "OAuth client secret",
        v,
    )
    v = "npm_" + _alnum(rng, 36)
    put(".npmrc", f"//registry.npmjs.org/:_authToken={v}\n", ".npmrc token", v)
    v = _alnum(rng, 28)
    put(".netrc", f"machine api.example.com login bot password {v}\n", ".netrc", v)
    v = "ghp_" + _alnum(rng, 36)
    put(".git-credentials", f"https://bot:{v}@github.com\n", ".git-credentials", v)
    v = "pypi-" + _alnum(rng, 60)
    put(".pypirc", f"[pypi]\nusername = __token__\npassword = {v}\n", ".pypirc", v)
    v = base64.b64encode(f"bot:{_alnum(rng, 24)}".encode()).decode()
    put(
        ".docker/config.json",
        json.dumps({"auths": {"registry.example.com": {"auth": v}}}),
        "docker config",
        v,
    )
    v = _alnum(rng, 48)
    put(
        ".kube/config",
        f"apiVersion: v1\nusers:\n- name: admin\n  user:\n    token: {v}\n",
        "kubeconfig",
        v,
    )
    v = _alnum(rng, 32)
    put(
        "infra/terraform.tfstate",
        json.dumps({"outputs": {"db_password": {"value": v}}}),
        "terraform state",
        v,
    )
    v = _alnum(rng, 32)
    put("config/secrets.yaml", f"signing_key: {v}\n", "secrets.yaml", v)
    # Tokens inside source files.
    v = "AKIA" + _alnum(rng, 16, upper)
    put(
        "app/settings.py",
        f'DEBUG = False\nAWS_ACCESS_KEY_ID = "{v}"\n\n\ndef region():\n    return "eu-west-1"\n',
        "AWS key in Python source",
        v,
    )
    v = "ghp_" + _alnum(rng, 36)
    put(
        "app/github_client.py",
        f'TOKEN = "{v}"\n\n\ndef headers():\n    return {{"Authorization": f"token {{TOKEN}}"}}\n',
        "GitHub token in Python",
        v,
    )
    v = "sk_live_" + _alnum(rng, 24)
    put(
        "web/pay.js",
        f'const stripe = Stripe("{v}");\nexport function pay() {{ return 1 }}\n',
        "Stripe key in JavaScript",
        v,
    )
    v = f"xoxb-{_alnum(rng, 12, '0123456789')}-{_alnum(rng, 12, '0123456789')}-{_alnum(rng, 24)}"
    put(
        "bots/slack.go",
        f'package bots\n\nconst token = "{v}"\n\nfunc Post() {{}}\n',
        "Slack token in Go",
        v,
    )
    key, first = _pem(rng)
    escaped = key.replace("\n", "\\n")
    put(
        "app/keys.py",
        f'PRIVATE_KEY = "{escaped}"\n\n\ndef sign(data):\n    return data\n',
        "private key in a Python string",
        first,
    )
    key, first = _pem(rng, "OPENSSH PRIVATE KEY")
    put(
        "docs/deploy.md",
        f"# Deploy\n\nUse this key:\n\n```\n{key}```\n",
        "private key in Markdown",
        first,
    )
    # Whole files recognised by content, wherever they are.
    v = _alnum(rng, 48)
    put(
        "ops/cluster-admin.yaml",
        "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n"
        f"users:\n- name: admin\n  user:\n    token: {v}\n",
        "kubeconfig by content",
        v,
    )
    v = base64.b64encode(_alnum(rng, 24).encode()).decode()
    put(
        "k8s/db-secret.yaml",
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {v}\n",
        "Kubernetes Secret manifest",
        v,
    )
    v = base64.b64encode(bytes(rng.randrange(256) for _ in range(90))).decode()
    put(
        "ops/deploy-key.txt",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
        f"Public-Lines: 2\n{_alnum(rng, 64)}\n{_alnum(rng, 20)}\nPrivate-Lines: 1\n{v}\n",
        "PuTTY key by content",
        v,
    )
    # Tokens and passwords in files of code and configuration: redacted, the files kept.
    for rel, what, template, v in (
        (
            "bot/llm.py",
            "OpenAI key",
            'KEY = "{}"',
            f"sk-proj-{_alnum(rng, 20)}T3BlbkFJ" + _alnum(rng, 20),
        ),
        ("bot/claude.ts", "Anthropic key", 'const k = "{}";', "sk-ant-api03-" + _alnum(rng, 93)),
        ("web/maps.js", "Google API key", 'const maps = "{}";', "AIza" + _alnum(rng, 35)),
        ("ml/hub.py", "Hugging Face token", 'login(token="{}")', "hf_" + _alnum(rng, 34)),
        ("ci/gitlab.py", "GitLab token", 'TOKEN = "{}"', "glpat-" + _alnum(rng, 20)),
        (
            "mail/send.rb",
            "SendGrid key",
            'SENDGRID = "{}"',
            f"SG.{_alnum(rng, 22)}.{_alnum(rng, 43)}",
        ),
        (
            "ops/notify.py",
            "Slack webhook",
            'HOOK = "{}"',
            f"https://hooks.slack.com/services/T{_alnum(rng, 8, upper)}/B{_alnum(rng, 8, upper)}/"
            + _alnum(rng, 24),
        ),
        ("ci/release.yml", "PyPI token", "password: {}", "pypi-AgEIcHlwaS5vcmc" + _alnum(rng, 80)),
        (
            "deploy/aws.sh",
            "AWS secret key without its id",
            "export AWS_SECRET_ACCESS_KEY={}",
            _alnum(rng, 40),
        ),
        (
            "app/db_url.py",
            "password in a database URL",
            'URL = "postgres://app:{}@db/prod"',
            _alnum(rng, 18),
        ),
        ("proj/settings.py", "SECRET_KEY in settings", 'SECRET_KEY = "{}"', _alnum(rng, 40)),
        (
            "requirements.txt",
            "password in a requirement URL",
            "git+https://ci:{}@git.example.com/lib.git#egg=lib",
            _alnum(rng, 20),
        ),
    ):
        put(rel, template.format(v) + "\n", what, v)
    # A symlink with a harmless name to a secret.
    (root / "config" / "innocent.txt").symlink_to("../.env")
    seeded.append(("config/innocent.txt", "symlink to .env", seeded[0][2]))
    (root / "app" / "normal.py").write_text(
        '"""Ordinary code."""\n\n\ndef add(a, b):\n    return a + b\n'
    )
    return seeded


def _values_in_index(index_dir: Path, values: list[str]) -> set[str]:
    """The values that appear in any text of any table of the snapshot."""
    store = Store.open(index_dir)
    found: set[str] = set()
    lowered = {v: v.lower() for v in values}
    for name in SNAPSHOT_TABLES:
        for row in store.rows(name):
            for cell in row.values():
                texts = cell if isinstance(cell, list) else [cell]
                for text in texts:
                    if not isinstance(text, str):
                        continue
                    low = text.lower()
                    found.update(v for v, lv in lowered.items() if v in text or lv in low)
    return found


def _values_on_disk(index_dir: Path, values: list[str]) -> set[str]:
    """The values found as bytes in any file under the index directory (every version)."""
    found: set[str] = set()
    for dirpath, _, files in os.walk(index_dir):
        for f in files:
            data = (Path(dirpath) / f).read_bytes()
            found.update(v for v in values if v.encode() in data)
    return found


def secrets_case(
    args: argparse.Namespace, work: Path, rng: random.Random, log: Callable[[str], None]
) -> dict[str, Any]:
    root = work / "secrets"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    seeded = secrets_repo(root, rng)
    # A password literal with no token format, found by its name alone (the keyword rule).
    generic = _alnum(rng, 20)
    (root / "app" / "db.py").write_text(f'DB_PASSWORD = "{generic}"\n')
    values = sorted({v for _, _, v in seeded})
    runs = [dowse("index", str(root), "--no-embed", "-q")]
    status = dowse("status", str(root), "--skipped", "--json")
    runs.append(status)
    found = _values_in_index(root / ".dowse", values)
    on_disk = _values_on_disk(root / ".dowse", values)
    control_dir = work / "secrets-included"
    shutil.rmtree(control_dir, ignore_errors=True)
    runs.append(
        dowse(
            "index",
            str(root),
            "--no-embed",
            "-q",
            "--include-secrets",
            "--index-dir",
            str(control_dir),
        )
    )
    control = _values_in_index(control_dir, values)
    reasons = (
        {s["path"]: s["reason"] for s in json.loads(status.out)["skipped"]}
        if status.code == 0
        else {}
    )
    indexed = {r["path"] for r in Store.open(root / ".dowse").rows("files", ["path"])}

    value_of = {path: v for path, _, v in seeded}

    def outcome(path: str) -> str:
        if path in indexed:
            return "**indexed**" if value_of[path] in found else "redacted"
        parts = path.split("/")
        for n in range(len(parts) - 1, 0, -1):  # a skipped directory holding it
            if "/".join(parts[:n]) + "/" in reasons:
                return reasons["/".join(parts[:n]) + "/"]
        return reasons.get(path, "left out")

    log(f"secrets: {len(found)} of {len(values)} seeded values in the index")
    return {
        "seeded": len(seeded),
        "values": len(values),
        "found": sorted(found),
        "found_on_disk": sorted(on_disk),
        "found_with_include_secrets": len(control),
        "generic_password_indexed": bool(_values_in_index(root / ".dowse", [generic])),
        "files": [(path, what, outcome(path)) for path, what, _ in seeded],
        "errors": [r.last_line for r in runs if r.code or r.traceback],
    }


# -- secrets in the git history ----------------------------------------------------------------


def _git(root: Path, *args: str, day: int = 1) -> None:
    date = f"2024-02-{day:02d}T12:00:00+00:00"
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run(["git", "-C", str(root), *args], env=env, check=True, capture_output=True)


def history_repo(root: Path, rng: random.Random) -> list[tuple[str, str]]:
    """A copy of fixtures/example whose git history holds secrets: in commit subjects and
    bodies, and in blobs a later commit removed or changed. (where, value) for each."""
    upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0234567"
    shutil.copytree(REPO / "fixtures" / "example", root, ignore=shutil.ignore_patterns(".dowse"))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "Start the shop")
    akia = "AKIA" + _alnum(rng, 16, upper)
    ghp = "ghp_" + _alnum(rng, 36)
    stripe = "sk_live_" + _alnum(rng, 24)
    password = _alnum(rng, 20)
    slack = (
        f"https://hooks.slack.com/services/T{_alnum(rng, 8, upper)}/B{_alnum(rng, 8, upper)}/"
        + _alnum(rng, 24)
    )
    seeded = [
        ("commit subject (AWS access key id)", akia),
        ("commit body (GitHub token)", ghp),
        ("removed blob (Stripe key in Python)", stripe),
        ("changed blob (password in a database URL)", password),
        ("commit body (Slack webhook URL)", slack),
    ]
    pricing = root / "shop" / "pricing.py"
    steps: list[tuple[dict[str, str | None], str]] = [
        ({"shop/pricing.py": pricing.read_text() + "\n# rounding\n"}, f"Fix rounding {akia}"),
        (
            {"shop/pricing.py": pricing.read_text() + "\n# rounding\n# totals\n"},
            f"Cart totals\n\nDeployed with token {ghp} on the build box.",
        ),
        ({"shop/billing_keys.py": f'STRIPE_KEY = "{stripe}"\n'}, "Add billing keys"),
        ({"shop/billing_keys.py": None}, "Remove billing keys"),
        (
            {"shop/db.py": f'DATABASE_URL = "postgres://admin:{password}@db.example.com/shop"\n'},
            "Point the shop at its database",
        ),
        (
            {"shop/db.py": 'DATABASE_URL = os.environ["DATABASE_URL"]\n'},
            f"Read the database URL from the environment\n\nAlerts go to {slack}",
        ),
    ]
    for day, (files, message) in enumerate(steps, start=2):
        for path, text in files.items():
            if text is None:
                (root / path).unlink()
            else:
                (root / path).write_text(text)
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", message, day=day)
    return seeded


def history_case(
    args: argparse.Namespace, work: Path, rng: random.Random, log: Callable[[str], None]
) -> dict[str, Any]:
    """Secrets in commit messages and old blobs: none stored by `dowse index`, none shown
    by `ask` (markdown, JSON, agent), `explore --depth deep` (markdown, JSON) or
    `eval history`."""
    root = work / "history"
    shutil.rmtree(root, ignore_errors=True)
    seeded = history_repo(root, rng)
    values = [v for _, v in seeded]
    question = "how are the cart totals rounded and which billing keys are used?"
    runs = {
        "index": dowse("index", str(root), "--no-embed", "-q"),
        "ask": dowse("ask", question, "--path", str(root)),
        "ask --json": dowse("ask", question, "--path", str(root), "--json"),
        "ask --format agent": dowse("ask", question, "--path", str(root), "--format", "agent"),
        "explore --depth deep": dowse("explore", str(root), "--depth", "deep"),
        "explore --json": dowse("explore", str(root), "--depth", "deep", "--json"),
        "eval history": dowse(
            "eval", "history", str(root), "-n", "6", "--no-embed", "-q", "--methods", "bm25,ask"
        ),
        "eval history --json": dowse(
            "eval", "history", str(root), "-n", "6", "--no-embed", "-q", "--json"
        ),
    }
    shown = {
        name: sorted(w for w, v in seeded if v in ran.out or v in ran.err)
        for name, ran in runs.items()
    }
    stored = _values_in_index(root / ".dowse", values) | _values_on_disk(root / ".dowse", values)
    # The control: git itself still has every value (the history was seeded).
    log_all = subprocess.run(
        ["git", "-C", str(root), "log", "-p", "--all"], capture_output=True, text=True
    ).stdout
    leaked = sorted(
        {w for w, v in seeded if v in stored} | {w for ws in shown.values() for w in ws}
    )
    log(f"history: {len(leaked)} of {len(seeded)} seeded secrets stored or shown")
    return {
        "seeded": len(seeded),
        "in_git": sum(v in log_all for v in values),
        "stored": sorted(w for w, v in seeded if v in stored),
        "shown": {k: v for k, v in shown.items() if v},
        "leaked": leaked,
        "commands": len(runs),
        "errors": [f"{n}: {r.last_line}" for n, r in runs.items() if r.code or r.traceback],
        "commits": int(
            json.loads(dowse("status", str(root), "--json").out or "{}").get("commits", 0)
        ),
    }
