"""How many tokens dowse's printed answers really are, by real models' tokenizers, against
the budget they were packed into.

    python benchmarks/token_counts.py --tokenizer cl100k=PATH --tokenizer claude=PATH.json \
        --budgets 1000,2000,4000,8000 REPO=QUESTIONS.txt [REPO=QUESTIONS.txt ...]
    python benchmarks/token_counts.py --tokenizer ... --sources TREE [TREE ...]

Each REPO must hold an index (`dowse index REPO`); QUESTIONS.txt has one question a line
(benchmarks/questions/). For every question, budget and output (`ask` as markdown, JSON
and agent text, `explore` of the repository as markdown at the same budget) the script runs
`python -m dowse` as a user would, takes what it printed on stdout and counts it with
every tokenizer given, and with dowse's own counter (`dowse.retrieval.budget`).

A tokenizer is `NAME=PATH`: a `tokenizer.json` (Hugging Face `tokenizers` format: the
DeepSeek and Claude files) or a tiktoken BPE file (`cl100k_base.tiktoken`,
`o200k_base.tiktoken`; needs the `tiktoken` package, which dowse does not depend on).
Nothing is downloaded.

`--sources` counts source files instead of answers: up to 40 files of each TREE whose
extension is a language dowse parses (sampled with a fixed seed), each cut to its first
12,000 characters, the way a block of an answer quotes them; the kind is the tree's name.

Prints, per output kind: how many answers, the median and largest real/dowse ratio of
each tokenizer, and how many answers any real tokenizer counts above their budget (with
`--sources`: above dowse's count); then
every command that failed, with its error line.
`--out FILE` keeps every answer's counts as JSON lines (`--keep-text`: and its text).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from dowse.retrieval.budget import estimate_tokens

Counter = Callable[[str], int]

# The split patterns of OpenAI's published encodings (tiktoken_ext/openai_public.py).
_CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


def load_tokenizer(path: Path) -> Counter:
    """A function counting a text's tokens with the tokenizer stored at `path`."""
    if path.suffix == ".json":
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(path))
        return lambda text: len(tok.encode(text, add_special_tokens=False).ids)
    import tiktoken

    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in path.read_bytes().splitlines() if line)
    }
    pattern = _O200K if len(ranks) > 150_000 else _CL100K
    enc = tiktoken.Encoding(path.name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    return lambda text: len(enc.encode_ordinary(text))


def printed(args: list[str]) -> tuple[str, str]:
    """What `dowse ARGS` prints on stdout, and its error line when it fails."""
    done = subprocess.run(
        [sys.executable, "-m", "dowse", *args], capture_output=True, text=True, check=False
    )
    return done.stdout, (done.stderr.strip().splitlines() or [""])[-1] if done.returncode else ""


SOURCE_SUFFIXES = frozenset(
    ".c .h .cc .cpp .hpp .go .java .kt .js .ts .tsx .rs .py .rb .php .cs .swift .scala".split()
)


def sampled_sources(tree: Path, per_tree: int = 40, chars: int = 12_000) -> list[tuple[str, str]]:
    """Up to `per_tree` source files of `tree` (a fixed sample), each cut to `chars`."""
    files = sorted(
        p
        for p in tree.rglob("*")
        if p.suffix in SOURCE_SUFFIXES and p.is_file() and ".dowse" not in p.parts
    )
    picked = random.Random(7).sample(files, min(per_tree, len(files)))
    out = []
    for p in picked:
        text = p.read_text(encoding="utf-8", errors="replace")[:chars]
        if len(text) >= 200:
            out.append((str(p.relative_to(tree)), text))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--tokenizer", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--budgets", default="1000,2000,4000,8000")
    ap.add_argument("--limit", type=int, default=0, help="questions per repository (0: all)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--keep-text", action="store_true", help="keep each answer's text in --out")
    ap.add_argument("--sources", action="store_true", help="count the trees' source files")
    ap.add_argument("repos", nargs="+", metavar="REPO=QUESTIONS")
    args = ap.parse_args(argv)
    counters: dict[str, Counter] = {}
    for spec in args.tokenizer:
        name, _, path = spec.partition("=")
        counters[name] = load_tokenizer(Path(path))
    if not counters:
        raise SystemExit("token_counts: give at least one --tokenizer NAME=PATH")
    budgets = [int(b) for b in args.budgets.split(",")]
    rows: list[dict[str, object]] = []
    failed: list[str] = []
    if args.sources:
        for tree in args.repos:
            for path, text in sampled_sources(Path(tree)):
                row = {"kind": Path(tree).name, "path": path, "budget": 0, "chars": len(text)}
                row["dowse"] = estimate_tokens(text)
                row.update({name: count(text) for name, count in counters.items()})
                rows.append(row)
        args.repos = []
    for spec in args.repos:
        repo, _, qfile = spec.partition("=")
        questions = [q.strip() for q in Path(qfile).read_text().splitlines() if q.strip()]
        if args.limit:
            questions = questions[: args.limit]
        for budget in budgets:
            outputs: list[tuple[str, list[str]]] = [
                ("explore", ["explore", repo, "--budget", str(budget)])
            ]
            for q in questions:
                for kind, extra in (
                    ("ask-markdown", []),
                    ("ask-json", ["--json"]),
                    ("ask-agent", ["--format", "agent"]),
                ):
                    outputs.append(
                        (kind, ["ask", q, "--path", repo, "--budget", str(budget), *extra])
                    )
            for kind, cmd in outputs:
                text, error = printed(cmd)
                if error:
                    failed.append(f"{kind} at {budget}: dowse {' '.join(cmd)}: {error}")
                    continue
                row: dict[str, object] = {
                    "repo": repo,
                    "kind": kind,
                    "budget": budget,
                    "command": cmd,
                    "chars": len(text),
                    "dowse": estimate_tokens(text),
                }
                row.update({name: count(text) for name, count in counters.items()})
                if args.keep_text:
                    row["text"] = text
                rows.append(row)
                if args.out:
                    with args.out.open("a") as f:
                        f.write(json.dumps(row) + "\n")
    print(
        f"{'output':14} {'n':>4}  "
        + "  ".join(f"{n + ' med/max':>18}" for n in counters)
        + "  over budget"
    )
    for kind in sorted({str(r["kind"]) for r in rows}):
        mine = [r for r in rows if r["kind"] == kind]
        cells = []
        for name in counters:
            ratios = [int(r[name]) / max(1, int(r["dowse"])) for r in mine]  # type: ignore[call-overload]
            cells.append(f"{statistics.median(ratios):8.3f}/{max(ratios):.3f}".rjust(18))
        over = (
            sum(
                1
                for r in mine
                if any(int(r[n]) > int(r["dowse"]) for n in counters)  # type: ignore[call-overload]
            )
            if args.sources
            else sum(
                1
                for r in mine
                if any(int(r[n]) > int(r["budget"]) for n in counters)  # type: ignore[call-overload]
            )
        )
        print(f"{kind:14} {len(mine):>4}  " + "  ".join(cells) + f"  {over}")
    print(f"{len(failed)} commands failed" + "".join(f"\n  {f}" for f in failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
