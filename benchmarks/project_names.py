"""The names `retrieval.project` reads for each repository of a SWE-bench-style dataset.

Usage:
    python benchmarks/project_names.py --dataset DEV.jsonl --repos CLONES

For every repository of the dataset (its first instance's base commit), the root
manifests `project_names` reads (and the Cargo.toml of each directory below the root, for
a workspace's members) are taken from the bare mirror `CLONES/<owner>__<name>` (matched
case-blind) and it prints the repository, the root manifests present and the names
found. An empty list means the project's own name is still taken as evidence there.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

from dowse.retrieval.project import project_names

MANIFESTS = (
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "go.mod",
    "CMakeLists.txt",
    "meson.build",
    "pom.xml",
    "settings.gradle",
    "settings.gradle.kts",
    "Package.swift",
)


def _clone(repos: Path, repo: str) -> Path | None:
    want = repo.replace("/", "__").lower()
    return next((p for p in sorted(repos.iterdir()) if p.name.lower() == want), None)


def _extract(clone: Path, commit: str, name: str, root: Path) -> bool:
    shown = subprocess.run(
        ["git", "--git-dir", str(clone), "show", f"{commit}:{name}"],
        capture_output=True,
        check=False,
    )
    if shown.returncode != 0:
        return False
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_bytes(shown.stdout)
    return True


def _member_manifests(clone: Path, commit: str) -> list[str]:
    listed = subprocess.run(
        ["git", "--git-dir", str(clone), "ls-tree", "-r", "--name-only", commit],
        capture_output=True,
        text=True,
        check=False,
    )
    return [
        p for p in listed.stdout.splitlines() if p.endswith("/Cargo.toml") and p.count("/") <= 2
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--repos", type=Path, required=True)
    args = parser.parse_args()
    first: dict[str, str] = {}
    for line in args.dataset.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            first.setdefault(row["repo"], row["base_commit"])
    for repo, commit in sorted(first.items()):
        clone = _clone(args.repos, repo)
        if clone is None:
            print(f"{repo}\tno clone")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            present = [n for n in MANIFESTS if _extract(clone, commit, n, root)]
            for member in _member_manifests(clone, commit):
                _extract(clone, commit, member, root)
            names = sorted(project_names(root))
            print(f"{repo}\t{commit[:8]}\t{','.join(present) or '-'}\t{','.join(names) or '-'}")


if __name__ == "__main__":
    main()
