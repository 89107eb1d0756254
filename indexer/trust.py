"""Which indexes dowse believes: those it built itself, for this user on this machine.

A manifest names the root it indexes and remembers the walk options of the last run
(`Manifest.walk`), which the next run without flags reuses. A manifest is only a file,
though, and travels with the tree (a tarball, a shared folder, a repository under review
can ship a `.dowse/`): its root is easy to guess (where the tree will be unpacked), and
its tables can hold any text, under sizes and mtimes that match the shipped files, so
that a run which re-reads only changed files would serve the sender's text as theirs.

Invariants:
- `Store.commit` signs every manifest it writes with a walk: an HMAC-SHA256, under a key
  of random bytes made once per user (`key_path`, mode 0600), over the manifest's root
  and the walk options that widen what is read. No other machine or user has the key, so
  no shipped manifest carries a valid signature; editing the root or an option breaks it.
- `vouched` is the one test: an index is this user's own only with a valid signature.
  Without one (shipped, edited, another user's, or written before dowse signed every
  index) the locator passes it over and `dowse index` builds it anew, embedding cache
  included (indexer.locate, indexer.build): nothing it holds is served or reused.
- Widening options are `include_secrets` (secret files are read and indexed) and a
  `max_file_bytes` above the default. `exclude` is not one: its patterns can only leave
  more out, and a `!` among them re-includes nothing beyond the default excludes, which a
  `.dowseignore` shipped with the files can re-include anyway (indexer.walk).
  `trusted_walk` resets them to their defaults in a manifest that is not vouched for and
  names them, so that the caller can ask for the flags again.
- A key that cannot be made is a ConfigError before an index is written (`ensure_key`):
  an index nobody can vouch for would be built anew on every run.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any

from dowse.errors import ConfigError
from dowse.indexer.embed import default_cache_dir
from dowse.settings import DEFAULT_MAX_FILE_SIZE

__all__ = ["ensure_key", "key_path", "sign", "trusted_walk", "vouched", "widening"]

_SCHEME = "hmac-sha256:"
_KEY_BYTES = 32
_DEFAULT_MAX_FILE_BYTES = DEFAULT_MAX_FILE_SIZE  # the walk's default (tests/test_settings.py)


def key_path() -> Path:
    """This user's signing key: beside the model cache (`DOWSE_CACHE_DIR` moves both)."""
    return default_cache_dir() / "manifest.key"


def widening(walk: dict[str, Any]) -> dict[str, Any]:
    """The options in `walk` that make a walk read more than the defaults do."""
    out: dict[str, Any] = {}
    if walk.get("include_secrets"):
        out["include_secrets"] = True
    if "max_file_bytes" in walk:
        limit = walk["max_file_bytes"]
        # A value of another type counts too: only a signed one is taken as it is.
        if not isinstance(limit, int) or isinstance(limit, bool) or limit > _DEFAULT_MAX_FILE_BYTES:
            out["max_file_bytes"] = limit
    return out


def _key(*, create: bool) -> bytes | None:
    return _read_or_make(key_path(), create=create)[0]


def _read_or_make(path: Path, *, create: bool) -> tuple[bytes | None, str]:
    """(the key, or None and why not)."""
    try:
        data = path.read_bytes()
        return (data, "") if len(data) == _KEY_BYTES else (None, "it is not a dowse key")
    except FileNotFoundError:
        if not create:
            return None, "there is none"
    except OSError as exc:
        return None, exc.strerror or str(exc)
    # Made once: written whole to a temporary file, then linked into place, so that two
    # first runs at once agree on one key (the loser reads the winner's). Imported here:
    # finding the key (`key_path`, a no-op `dowse index`) makes none.
    import secrets
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".manifest.key.")
        try:
            with os.fdopen(fd, "wb") as fh:  # mkstemp makes it 0600
                fh.write(secrets.token_bytes(_KEY_BYTES))
                fh.flush()
                os.fsync(fh.fileno())
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)
        finally:
            os.unlink(tmp)
        data = path.read_bytes()
    except OSError as exc:
        return None, exc.strerror or str(exc)
    return (data, "") if len(data) == _KEY_BYTES else (None, "it is not a dowse key")


def ensure_key() -> None:
    """Make this user's key if there is none yet; ConfigError when it cannot be had."""
    path = key_path()
    key, why = _read_or_make(path, create=True)
    if key is None:
        raise ConfigError(
            f"cannot use dowse's signing key {path} ({why}); set DOWSE_CACHE_DIR to a "
            "directory of yours that dowse can write"
        )


def _digest(key: bytes, root: str, options: dict[str, Any]) -> str:
    message = json.dumps({"root": root, "walk": options}, sort_keys=True).encode()
    return _SCHEME + hmac.new(key, message, hashlib.sha256).hexdigest()


def sign(root: str, walk: dict[str, Any]) -> str:
    """The signature a manifest of `root` with these walk options carries ('' when the
    key cannot be made: `ensure_key` said so before the run wrote anything)."""
    key = _key(create=True)
    return "" if key is None else _digest(key, root, widening(walk))


def vouched(root: str, walk: dict[str, Any], signature: str) -> bool:
    """Whether this user's dowse signed a manifest of `root` with these walk options."""
    key = _key(create=False)
    return (
        key is not None
        and signature.startswith(_SCHEME)
        # As bytes: compare_digest refuses a str with non-ASCII characters, which a
        # shipped manifest may well hold.
        and hmac.compare_digest(
            signature.encode("utf-8", "surrogatepass"), _digest(key, root, widening(walk)).encode()
        )
    )


def trusted_walk(
    root: str, walk: dict[str, Any], signature: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the walk options to reuse, the widening ones left out for want of a valid
    signature)."""
    options = widening(walk)
    if not options or vouched(root, walk, signature):
        return dict(walk), {}
    kept = {k: v for k, v in walk.items() if k not in options}
    return kept, options
