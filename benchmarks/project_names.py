"""The names `retrieval.project` reads for each repository of a SWE-bench-style dataset.

Usage:
    python benchmarks/project_names.py --dataset DEV.jsonl --repos CLONES

For every repository of the dataset (its first instance's base commit), the root
manifests `project_names` reads are taken from the bare mirror `CLONES/<owner>__<name>`
(matched case-blind) and it prints the repository, the manifests present and the names
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
)


def _clone(repos: Path, repo: str) -> Path | None:
    want = repo.replace("/", "__").lower()
    return next((p for p in sorted(repos.iterdir()) if p.name.lower() == want), None)


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
            present = []
            for name in MANIFESTS:
                shown = subprocess.run(
                    ["git", "--git-dir", str(clone), "show", f"{commit}:{name}"],
                    capture_output=True,
                    check=False,
                )
                if shown.returncode == 0:
                    (root / name).write_bytes(shown.stdout)
                    present.append(name)
            names = sorted(project_names(root))
            print(f"{repo}\t{commit[:8]}\t{','.join(present) or '-'}\t{','.join(names) or '-'}")


if __name__ == "__main__":
    main()
