"""Import names and the distributions that provide them: `import dotenv` is declared as
``python-dotenv``, `import yaml` as ``PyYAML``.

Two sources, both offline: the installed distributions' metadata
(`importlib.metadata.packages_distributions`, the environment dowse runs in, read once)
and a table of the common cases whose names differ. A name maps to itself too, so a
package declared under its import name always matches.

Invariant: names are compared normalized (PEP 503: lowercase, runs of ``-_.`` as ``-``).
"""

from __future__ import annotations

import csv
import re
from functools import cache
from importlib import metadata

__all__ = ["IMPORT_NAMES", "distributions", "normalize"]

IMPORT_NAMES: dict[str, tuple[str, ...]] = {
    "dotenv": ("python-dotenv",),
    "yaml": ("PyYAML",),
    "PIL": ("Pillow",),
    "sklearn": ("scikit-learn",),
    "cv2": ("opencv-python", "opencv-python-headless", "opencv-contrib-python"),
    "bs4": ("beautifulsoup4",),
    "attr": ("attrs",),
    "dateutil": ("python-dateutil",),
    "jwt": ("PyJWT",),
    "git": ("GitPython",),
    "OpenSSL": ("pyOpenSSL",),
    "Crypto": ("pycryptodome", "pycrypto"),
    "serial": ("pyserial",),
    "magic": ("python-magic",),
    "docx": ("python-docx",),
    "pptx": ("python-pptx",),
    "multipart": ("python-multipart",),
    "jose": ("python-jose",),
    "slugify": ("python-slugify",),
    "google": ("protobuf", "google-api-core", "google-cloud-core"),
    "grpc": ("grpcio",),
    "zmq": ("pyzmq",),
    "usb": ("pyusb",),
    "skimage": ("scikit-image",),
    "Levenshtein": ("python-Levenshtein", "levenshtein"),
    "fitz": ("PyMuPDF",),
    "_pytest": ("pytest",),
    "pytest_asyncio": ("pytest-asyncio",),
    "pkg_resources": ("setuptools",),
    "setuptools": ("setuptools",),
    "win32api": ("pywin32",),
    "win32con": ("pywin32",),
    "MySQLdb": ("mysqlclient",),
    "psycopg2": ("psycopg2", "psycopg2-binary"),
    "websocket": ("websocket-client",),
    "lxml": ("lxml",),
    "ruamel": ("ruamel.yaml",),
    "dns": ("dnspython",),
    "nacl": ("PyNaCl",),
    "Bio": ("biopython",),
}
"""Import names whose distribution is named otherwise, for when it is not installed here."""

_SEPARATORS = re.compile(r"[-_.]+")


def normalize(name: str) -> str:
    """A distribution or import name as PEP 503 compares them."""
    return _SEPARATORS.sub("-", name).lower()


@cache
def _installed() -> dict[str, tuple[str, ...]]:
    try:
        return {k: tuple(v) for k, v in metadata.packages_distributions().items()}
    # Broken metadata in the environment (an unreadable or undecodable file, a garbled
    # RECORD): the table still answers.
    except (OSError, ValueError, csv.Error):
        return {}


def distributions(import_name: str) -> set[str]:
    """The normalized names of the distributions that may provide `import_name` (a
    top-level package), itself included."""
    names = {import_name, *IMPORT_NAMES.get(import_name, ()), *_installed().get(import_name, ())}
    return {normalize(n) for n in names}
