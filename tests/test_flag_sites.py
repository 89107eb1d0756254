"""A flag the question quotes names the files that define or read it, in every language,
however many other files hold its word."""

from __future__ import annotations

from pathlib import Path

import pytest

from dowse.flag_rules import flag_forms, flag_sites
from dowse.indexer.build import build_index
from dowse.indexer.store import Store
from dowse.retrieval.ask import ask
from dowse.retrieval.hybrid import HybridSearcher
from dowse.retrieval.pool import literal_rows
from dowse.retrieval.query import analyze

RUST = {
    "src/clap_app.rs": (
        "pub fn build_app() -> Command {\n"
        '    Command::new("bat").arg(\n'
        '        Arg::new("paging")\n            .long("paging")\n'
        '            .value_parser(["auto", "never", "always"]),\n    )\n}\n'
    ),
    "src/app.rs": (
        "impl App {\n    pub fn paging_mode(&self) -> PagingMode {\n"
        '        match self.matches.get_one::<String>("paging").map(|s| s.as_str()) {\n'
        '            Some("always") => PagingMode::Always,\n'
        "            _ => PagingMode::QuitIfOneScreen,\n        }\n    }\n}\n"
    ),
}
RUST_WORD = '#[cfg(feature = "paging")]\npub fn {name}_width() -> usize {{\n    80\n}}\n'
PYTHON = {
    "tool/cli.py": (
        "def make_parser():\n    parser = argparse.ArgumentParser()\n"
        '    parser.add_argument("--max-count", type=int, help="stop after NUM matches")\n'
        "    return parser\n"
    ),
    "tool/search.py": (
        "def search(args, lines):\n    found = [x for x in lines if args.pattern in x]\n"
        "    return found[: args.max_count]\n"
    ),
}
PYTHON_WORD = 'def {name}_width():\n    """See "--max-count"."""\n    return 80\n'
C = {
    "programs/cli.c": (
        "int parse(int argc, const char** argv, Prefs* prefs)\n{\n"
        "    for (int i = 1; i < argc; i++) {\n"
        '        if (!strcmp(argv[i], "--rsyncable")) { prefs->rsyncable = 1; continue; }\n'
        "    }\n    return 0;\n}\n"
    ),
}
C_WORD = '/* see "--rsyncable" */\nint {name}_width(void)\n{{\n    return 80;\n}}\n'
GO = {
    "cmd/main.go": (
        "package main\n\nfunc main() {\n"
        '    timeout := flag.Duration("dial-timeout", 5*time.Second, "how long to dial")\n'
        "    flag.Parse()\n    run(*timeout)\n}\n"
    ),
}
GO_WORD = 'package util\n\n// {name}: "dial-timeout"\nfunc {name}() int {{\n    return 80\n}}\n'

CASES = {
    "rust": (RUST, RUST_WORD, "src/{name}.rs", "bat --paging=never still pages the output"),
    "python": (PYTHON, PYTHON_WORD, "tool/{name}.py", "--max-count stops one match too late"),
    "c": (C, C_WORD, "lib/{name}.c", "--rsyncable makes the output larger"),
    "go": (GO, GO_WORD, "util/{name}.go", "--dial-timeout is ignored when dialing fails"),
}
WORD_FILES = ("alpha", "beta", "gamma", "delta", "epsilon")


def _repo(root: Path, language: str) -> tuple[set[str], set[str], str]:
    sites, word, pattern, question = CASES[language]
    for path, text in sites.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    words = set()
    for name in WORD_FILES:
        path = pattern.format(name=name)
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(word.format(name=name))
        words.add(path)
    return set(sites), words, question


@pytest.mark.parametrize("language", sorted(CASES))
def test_the_files_defining_or_reading_a_quoted_flag_rank_above_those_with_its_word(
    tmp_path, fake_embedder, language
):
    sites, words, question = _repo(tmp_path, language)
    build_index(tmp_path, embedder=fake_embedder)
    s = HybridSearcher(Store.open(tmp_path / ".dowse"), lambda: fake_embedder)
    analysis = analyze(question)
    # Five more files hold the flag's word: held verbatim by more than three files, it
    # named none before; where it is defined and read, it names those files.
    # Each file that defines or reads the one flag quoted gets its full evidence.
    assert {(r["path"], strength) for r, strength in literal_rows(s.lookups, analysis)} == {
        (path, 1.0) for path in sites
    }
    files = [f.path for f in ask(s, question).files]
    assert set(files[: len(sites)]) == sites
    assert all(files.index(p) < files.index(w) for p in sites for w in words if w in files)


def test_flag_sites_by_language():
    assert flag_sites('m.get_one::<String>("paging")', "rust", "paging")
    assert flag_sites("#[arg(long)]\n    pub no_ignore: bool,", "rust", "no-ignore")
    assert flag_sites("if opts.no_ignore {", "rust", "no-ignore")
    assert not flag_sites('#[cfg(feature = "paging")]', "rust", "paging")
    assert not flag_sites('println!("{}", "paging")', "rust", "paging")
    assert flag_sites("limit = args.max_count", "python", "max-count")
    assert flag_sites('config.getoption("--max-count")', "python", "max-count")
    assert not flag_sites("max_count = 3", "python", "max-count")
    assert flag_sites('cmd.Flags().GetString("dial-timeout")', "go", "dial-timeout")
    assert flag_sites('if (!strcmp(arg, "--rm"))', "c", "rm")
    assert flag_sites("{\"verbose\", no_argument, 0, 'v'}", "c", "verbose")
    assert flag_sites("const n = argv.maxCount;", "javascript", "max-count")
    assert flag_sites('if (cmd.hasOption("max-count"))', "java", "max-count")
    assert not flag_sites('"paging"', "markdown", "paging")
    assert flag_forms("max-count") == [
        "--max-count",
        '"max-count"',
        "'max-count'",
        "max_count",
        "maxCount",
    ]
    assert flag_forms("paging") == ["--paging", '"paging"', "'paging'"]
