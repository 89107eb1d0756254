"""Which remembered walk options dowse believes: those it signed itself, on this machine.

A manifest remembers the walk options of the last run (`Manifest.walk`), and the next run
without flags reuses them. A manifest is only a file, though, and travels with the tree
(a tarball, a shared folder, a repository under review can ship a `.dowse/`), so an
option that makes a walk read more than the defaults do is taken from it only when dowse
itself wrote it here.

Invariants:
- Widening options are `include_secrets` (secret files are read and indexed) and a
  `max_file_bytes` above the default. `exclude` is not one: its patterns can only leave
  more out, and a `!` among them re-includes nothing beyond the default excludes, which a
  `.dowseignore` shipped with the files can re-include anyway (indexer.walk).
- `Store.commit` signs a manifest that holds a widening option: an HMAC-SHA256, under a
  key of random bytes made once per user (`key_path`, mode 0600), over the manifest's
  root and its widening options. No other machine or user has the key, so no shipped
  manifest carries a valid signature; editing the root or an option breaks it.
- Without a valid signature (a manifest from elsewhere, an edited one, one written
  before options were signed), `trusted_walk` resets the widening options to their
  defaults and names them, so the caller can ask for the flags again. The other
  remembered options are kept: they only narrow what is read.
- A manifest with nothing to vouch for carries no signature (and no `signature` key,
  so that a dowse from before signing still reads it).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

from dowse.indexer.walk import WalkConfig

__all__ = ["key_path", "sign", "trusted_walk", "widening"]

_SCHEME = "hmac-sha256:"
_KEY_BYTES = 32
_DEFAULT_MAX_FILE_BYTES = WalkConfig().max_file_bytes


def key_path() -> Path:
    """This user's signing key: beside the model cache (`DOWSE_CACHE_DIR` moves both)."""
    # Imported here: the embedder's module brings numpy, which checking a signature does
    # not need.
    from dowse.indexer.onnx_embed import default_cache_dir

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
    path = key_path()
    try:
        data = path.read_bytes()
        return data if len(data) == _KEY_BYTES else None
    except FileNotFoundError:
        if not create:
            return None
    except OSError:
        return None
    # Made once: written whole to a temporary file, then linked into place, so that two
    # first runs at once agree on one key (the loser reads the winner's).
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
    except OSError:
        return None
    return data if len(data) == _KEY_BYTES else None


def _digest(key: bytes, root: str, options: dict[str, Any]) -> str:
    message = json.dumps({"root": root, "walk": options}, sort_keys=True).encode()
    return _SCHEME + hmac.new(key, message, hashlib.sha256).hexdigest()


def sign(root: str, walk: dict[str, Any]) -> str:
    """The signature a manifest of `root` with these walk options carries: '' when no
    option widens the walk, or when the key cannot be made (then the option is simply
    not remembered, and the next run says so)."""
    options = widening(walk)
    if not options:
        return ""
    key = _key(create=True)
    return "" if key is None else _digest(key, root, options)


def trusted_walk(
    root: str, walk: dict[str, Any], signature: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the walk options to reuse, the widening ones left out for want of a valid
    signature)."""
    options = widening(walk)
    if not options:
        return dict(walk), {}
    key = _key(create=False)
    if (
        key is not None
        and signature.startswith(_SCHEME)
        and hmac.compare_digest(signature, _digest(key, root, options))
    ):
        return dict(walk), {}
    kept = {k: v for k, v in walk.items() if k not in options}
    return kept, options
