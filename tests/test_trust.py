"""An index found on disk is trusted only as far as dowse can vouch for it.

A planted `.dowse/` (its manifest naming another root) redirects no command; a widening
walk option (`include_secrets`) is reused only when this machine signed it; a damaged
index is built anew by `dowse index` and the MCP refresh, never reported as indexed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLE, FakeEmbedder, make_tree

from dowse.errors import InvalidPath
from dowse.indexer.build import IndexConfig, build_index, resolve_walk_config
from dowse.indexer.locate import locate_index
from dowse.indexer.status import index_status
from dowse.indexer.store import Store
from dowse.indexer.trust import key_path
from dowse.server.app import ReindexRequest, SearchRequest, ServedRoot, Workspace

TARBALL_CODE = 'def tarball_only():\n    """Shipped in the tarball."""\n    return 1\n'


def _edit_manifest(index_dir: Path, **changes: object) -> None:
    path = index_dir / "manifest.json"
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        elif key == "walk":
            data["walk"] = {**data["walk"], **value}  # type: ignore[dict-item]
        else:
            data[key] = value
    path.write_text(json.dumps(data))


@pytest.fixture
def planted(tmp_path: Path, run) -> tuple[Path, Path]:
    """(tarball, victim): an unpacked tarball whose shipped index names the victim's
    directory (an unindexed copy of the example) and switches include_secrets on."""
    victim = tmp_path / "victim"
    shutil.copytree(EXAMPLE, victim, ignore=shutil.ignore_patterns(".dowse"))
    tarball = make_tree(tmp_path / "tarball", {"t.py": TARBALL_CODE})
    run("index", str(tarball), "--no-embed", "--quiet")
    _edit_manifest(tarball / ".dowse", root=str(victim), walk={"include_secrets": True})
    return tarball, victim


IGNORED = "ignored the index at {tarball}/.dowse: it was built for {victim}, not {tarball}"


@pytest.mark.parametrize(
    "args",
    [
        ["ask", "where are tokens validated?", "--format", "agent"],
        ["ask", "where are tokens validated?"],
        ["search", "validate_token"],
        ["symbol", "validate_token"],
    ],
    ids=["ask-agent", "ask", "search", "symbol"],
)
def test_a_planted_index_redirects_no_query(planted, run, args):
    tarball, victim = planted
    result = run(*args, "--path", str(tarball), code=1)
    assert result.output == (
        f"Error: no index at {tarball}/.dowse; run `dowse index` first "
        f"({IGNORED.format(tarball=tarball, victim=victim)} "
        "(it came with the files, or the directory moved))\n"
    )
    assert not (victim / ".dowse").exists()  # nothing indexed the victim


def test_a_planted_index_redirects_no_status(planted, run):
    tarball, victim = planted
    result = run("status", str(tarball), code=1)
    assert IGNORED.format(tarball=tarball, victim=victim) in result.output
    assert str(victim) + "\n" not in result.output and "shop/" not in result.output


def test_explore_ignores_a_planted_index_and_says_so(planted, run):
    tarball, victim = planted
    result = run("explore", str(tarball), "--json")
    assert IGNORED.format(tarball=tarball, victim=victim) in result.stderr
    report = json.loads(result.stdout)
    assert report["root"] == str(tarball)
    assert "shop" not in json.dumps(report)  # none of the victim's files
    assert not (victim / ".dowse").exists()


def test_index_builds_a_planted_index_anew_for_its_own_root(planted, run):
    tarball, victim = planted
    result = run("index", str(tarball), "--no-embed", "--quiet")
    assert (
        f"warning: the index at {tarball}/.dowse: it was built for {victim}, not {tarball} "
        f"(it came with the files, or the directory moved); building it anew for {tarball}\n"
    ) in result.stderr
    store = Store.open(tarball / ".dowse")
    assert store.manifest.root == str(tarball)
    assert store.manifest.walk["include_secrets"] is False  # not taken from the planted one
    assert [r["path"] for r in store.rows("files", ["path"])] == ["t.py"]
    assert run("search", "tarball_only", "--path", str(tarball), "--json").stdout.count("t.py")
    assert not (victim / ".dowse").exists()


def test_a_planted_index_naming_this_very_root_serves_nothing(tmp_path, run, monkeypatch):
    """The sender guessed where the files would be unpacked: the shipped index names the
    right root, and its rows say a file holds text it does not, under the file's size and
    mtime (so a run re-reading only changed files would keep serving them). Not signed
    by this user's dowse, it is passed over, and `dowse index` builds it anew."""
    root = tmp_path / "project"
    shown = "def check(user):\n    return user.is_admin\n"
    real = "def check(user):\n    return True  # admin\n"
    assert len(shown) == len(real)
    make_tree(root, {"auth.py": shown})
    with monkeypatch.context() as sender:
        sender.setenv("DOWSE_CACHE_DIR", str(tmp_path / "sender-machine"))
        run("index", str(root), "--no-embed", "--quiet")
    path = root / "auth.py"
    st = path.stat()
    path.write_text(real)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    ignored = (
        f"ignored the index at {root}/.dowse: your dowse did not build it on this machine "
        "(it came with the files, or is from before dowse signed its indexes)"
    )
    for args in (["search", "is_admin"], ["ask", "who is admin?", "--format", "agent"]):
        result = run(*args, "--path", str(root), code=1)
        assert result.output == (
            f"Error: no index at {root}/.dowse; run `dowse index` first ({ignored})\n"
        )
    workspace = Workspace([ServedRoot(root)])
    with pytest.raises(InvalidPath, match="your dowse did not build it on this machine"):
        workspace.search(SearchRequest(query="is_admin"))
    result = run("index", str(root), "--no-embed", "--quiet")
    assert result.stderr == (
        f"warning: the index at {root}/.dowse: your dowse did not build it on this machine "
        "(it came with the files, or is from before dowse signed its indexes); building it "
        f"anew for {root}\n"
    )
    hits = json.loads(run("search", "check user", "--path", str(root), "--json").stdout)
    assert hits and all("is_admin" not in h["text"] for h in hits)
    assert any("return True" in h["text"] for h in hits)
    assert workspace.search(SearchRequest(query="check")).hits[0].path == "auth.py"


@pytest.mark.parametrize("signature", ["hmac-sha256:é", "hmac-sha256:", "x" * 10_000])
def test_a_forged_signature_is_passed_over_in_one_line(tmp_path, run, signature):
    repo = make_tree(tmp_path / "repo", {"t.py": TARBALL_CODE})
    run("index", str(repo), "--no-embed", "--quiet")
    _edit_manifest(repo / ".dowse", signature=signature)
    result = run("search", "tarball_only", "--path", str(repo), code=1)
    assert "your dowse did not build it on this machine" in result.output


def test_a_planted_index_does_not_hide_the_real_one_above_it(tmp_path, run):
    top = tmp_path / "mono"
    shutil.copytree(EXAMPLE, top, ignore=shutil.ignore_patterns(".dowse"))
    vendored = make_tree(top / "vendor" / "pkg", {"t.py": TARBALL_CODE})
    run("index", str(vendored), "--no-embed", "--quiet")
    _edit_manifest(vendored / ".dowse", root="/etc")
    run("index", str(top), "--no-embed", "--quiet")
    result = run("symbol", "validate_token", "--path", str(vendored), "--json")
    assert json.loads(result.stdout)[0]["path"] == "shop/auth/tokens.py"
    assert f"warning: ignored the index at {vendored}/.dowse" in result.stderr
    assert locate_index(vendored).root == top.resolve()


def test_a_relative_or_foreign_root_never_serves(tmp_path, run, monkeypatch):
    repo = make_tree(tmp_path / "repo", {"t.py": TARBALL_CODE})
    run("index", str(repo), "--no-embed", "--quiet")
    monkeypatch.chdir(repo)
    _edit_manifest(repo / ".dowse", root=".")  # "." would be wherever dowse runs
    assert not locate_index(repo).found
    # A named index directory serves only paths inside its root.
    _edit_manifest(repo / ".dowse", root=str(repo))
    other = make_tree(tmp_path / "other", {"o.py": "x = 1\n"})
    result = run("search", "x", "--path", str(other), "--index-dir", str(repo / ".dowse"), code=1)
    assert f"ignored the index at {repo}/.dowse: it was built for {repo}" in result.output
    assert locate_index(repo / "t.py", repo / ".dowse").root == repo.resolve()


def test_index_will_not_overwrite_another_roots_index_without_rebuild(tmp_path, run):
    one = make_tree(tmp_path / "one", {"a.py": "def alpha():\n    return 1\n"})
    two = make_tree(tmp_path / "two", {"b.py": "def beta():\n    return 2\n"})
    run("index", str(one), "--no-embed", "--quiet")
    result = run("index", str(two), "--index-dir", str(one / ".dowse"), "--no-embed", "-q", code=1)
    assert result.output == (
        f"Error: the index at {one}/.dowse: it was built for {one}, not {two} (it came with "
        f"the files, or the directory moved); pass --rebuild to replace it with an index of {two}\n"
    )
    assert Store.open(one / ".dowse").manifest.root == str(one)
    run("index", str(two), "--index-dir", str(one / ".dowse"), "--no-embed", "-q", "--rebuild")
    assert Store.open(one / ".dowse").manifest.root == str(two)


def test_an_unsigned_index_of_this_root_elsewhere_is_built_anew(tmp_path, run, monkeypatch):
    """At a named --index-dir, an index naming this very root but not signed here (one
    built before signing, like an evaluation's work directory) is built anew, not refused:
    it can be no other tree's index."""
    repo = make_tree(tmp_path / "repo", {"t.py": TARBALL_CODE})
    index_dir = tmp_path / "index"
    with monkeypatch.context() as before:
        before.setenv("DOWSE_CACHE_DIR", str(tmp_path / "before"))
        run("index", str(repo), "--index-dir", str(index_dir), "--no-embed", "--quiet")
    result = run("index", str(repo), "--index-dir", str(index_dir), "--no-embed", "--quiet")
    assert "your dowse did not build it on this machine" in result.stderr
    assert "building it anew" in result.stderr
    hits = run("search", "tarball_only", "--path", str(repo), "--index-dir", str(index_dir))
    assert "t.py" in hits.output


# -- remembered walk options that widen what is read ------------------------------------------


@pytest.fixture
def secret_repo(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path / "repo",
        {"app.py": "def main():\n    return 0\n", "conf/secrets.yaml": "db_password: hunter2\n"},
    )


def _indexed(root: Path) -> set[str]:
    return {r["path"] for r in Store.open(root / ".dowse").rows("files", ["path"])}


def test_a_signed_include_secrets_is_still_honoured(secret_repo, run):
    run("index", str(secret_repo), "--no-embed", "--quiet", "--include-secrets")
    manifest = json.loads((secret_repo / ".dowse" / "manifest.json").read_text())
    assert manifest["signature"].startswith("hmac-sha256:") and key_path().is_file()
    assert os.stat(key_path()).st_mode & 0o077 == 0  # the key is the user's alone
    (secret_repo / "app.py").write_text("def main():\n    return 1\n")
    result = run("index", str(secret_repo), "--no-embed", "--quiet")
    assert result.stderr == ""
    assert "conf/secrets.yaml" in _indexed(secret_repo)


def test_a_planted_include_secrets_is_off_and_asked_for_again(secret_repo, run):
    run("index", str(secret_repo), "--no-embed", "--quiet")
    # Every index is signed, over its root and the options that widen the walk ({} here).
    assert Store.read_manifest(secret_repo / ".dowse").signature.startswith("hmac-sha256:")
    _edit_manifest(secret_repo / ".dowse", walk={"include_secrets": True, "max_file_bytes": 10**12})
    result = run("index", str(secret_repo), "--no-embed", "--quiet")
    assert result.stderr == (
        f"warning: the index at {secret_repo}/.dowse remembers --include-secrets "
        f"--max-file-size {10**12}, but this machine's dowse did not sign it (an index from "
        "elsewhere, or from before dowse signed its options), so it is off: pass "
        f"--include-secrets --max-file-size {10**12} again to keep it\n"
        f"warning: the index at {secret_repo}/.dowse: your dowse did not build it on this "
        "machine (it came with the files, or is from before dowse signed its indexes); "
        f"building it anew for {secret_repo}\n"
    )
    assert _indexed(secret_repo) == {"app.py"}
    walk = Store.read_manifest(secret_repo / ".dowse").walk
    assert walk["include_secrets"] is False and walk["max_file_bytes"] == 1_000_000


def test_a_signature_from_another_key_or_for_other_options_is_not_honoured(
    secret_repo, run, monkeypatch, tmp_path
):
    run("index", str(secret_repo), "--no-embed", "--quiet", "--include-secrets")
    index_dir = secret_repo / ".dowse"
    heard: list[str] = []
    assert resolve_walk_config(index_dir, root=secret_repo, warn=heard.append).include_secrets
    # Signed for include_secrets alone: a larger file limit added later is not covered.
    _edit_manifest(index_dir, walk={"max_file_bytes": 10**9})
    config = resolve_walk_config(index_dir, root=secret_repo, warn=heard.append)
    assert not config.include_secrets and config.max_file_bytes == 1_000_000
    _edit_manifest(index_dir, walk={"max_file_bytes": 1_000_000})
    assert resolve_walk_config(index_dir, root=secret_repo).include_secrets
    monkeypatch.setenv("DOWSE_CACHE_DIR", str(tmp_path / "another-machine"))
    assert not resolve_walk_config(index_dir, root=secret_repo, warn=heard.append).include_secrets
    assert len(heard) == 2 and all("--include-secrets" in h for h in heard)
    # Given again, it is taken, and no warning asks for it.
    assert resolve_walk_config(
        index_dir, root=secret_repo, warn=heard.append, include_secrets=True
    ).include_secrets
    assert len(heard) == 2


def test_an_index_from_before_signing_is_built_anew_and_loses_include_secrets(secret_repo, run):
    run("index", str(secret_repo), "--no-embed", "--quiet", "--include-secrets")
    # What a dowse from before signing wrote: the same manifest, without the signature.
    # Nothing tells it from a shipped one, so it serves nothing until built anew.
    _edit_manifest(secret_repo / ".dowse", signature=None)
    refused = run("search", "hunter2", "--path", str(secret_repo), "--json", code=1).output
    assert "your dowse did not build it on this machine" in refused and "hunter2" not in refused
    result = run("index", str(secret_repo), "--no-embed", "--quiet")
    assert "remembers --include-secrets, but this machine's dowse did not sign it" in result.stderr
    assert "pass --include-secrets again to keep it" in result.stderr
    assert "building it anew" in result.stderr
    assert _indexed(secret_repo) == {"app.py"}
    assert json.loads(run("search", "hunter2", "--path", str(secret_repo), "--json").stdout) == []


def test_explore_takes_no_unsigned_include_secrets(secret_repo, run):
    run("index", str(secret_repo), "--no-embed", "--quiet")
    _edit_manifest(secret_repo / ".dowse", walk={"include_secrets": True})
    result = run("explore", str(secret_repo), "--depth", "shallow", "--json")
    assert "ignored the index" in result.stderr and "did not build it" in result.stderr
    assert "secrets.yaml" not in result.stdout


def test_the_mcp_answers_carry_the_dropped_option_as_a_warning(secret_repo, run, fake_embedder):
    """The server has no stderr: a planted include_secrets it leaves off is said in the
    reindex root's `warnings`, not dropped silently; until then the index serves nothing."""
    run("index", str(secret_repo), "--no-embed", "--quiet")
    _edit_manifest(secret_repo / ".dowse", walk={"include_secrets": True})
    # The index built anew is embedded: by the fake, the point here is what is said.
    workspace = Workspace([ServedRoot(secret_repo)], embedder="fake")
    with pytest.raises(InvalidPath, match="did not build it on this machine"):
        workspace.search(SearchRequest(query="hunter2 main"))
    done = workspace.reindex(ReindexRequest()).roots[0]
    assert done.error is None
    assert any("pass --include-secrets again to keep it" in w for w in done.warnings)
    assert _indexed(secret_repo) == {"app.py"}
    answer = workspace.search(SearchRequest(query="hunter2 main"))
    assert answer.hits and all("secrets" not in h.path for h in answer.hits)
    # A signed run has nothing to say.
    run("index", str(secret_repo), "--no-embed", "--quiet")
    assert workspace.reindex(ReindexRequest()).roots[0].warnings == []


def _plant_vectors(index_dir: Path) -> int:
    """Every vector of the embedding cache replaced by one chosen vector, as a sender
    could ship it; the number of cached texts."""
    import lancedb
    import pyarrow as pa

    table = lancedb.connect(str(index_dir / "db")).open_table("embed_cache")
    rows = table.to_arrow()
    planted = [[1.0] + [0.0] * (FakeEmbedder.dim - 1)] * rows.num_rows
    table.delete("true")
    table.add(rows.set_column(1, "vector", pa.array(planted, type=rows.schema.field(1).type)))
    return rows.num_rows


def test_a_shipped_index_s_embedding_cache_is_not_reused(tmp_path, fake_embedder):
    """An index built for another root is built anew, and its embedding cache with it:
    every text is embedded again and no planted vector reaches the new snapshot."""
    root = tmp_path / "shipped"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".dowse"))
    build_index(root, embedder=fake_embedder)
    embedded = len(fake_embedder.texts)
    assert embedded and _plant_vectors(root / ".dowse") > 0
    _edit_manifest(root / ".dowse", root="/home/sender/project")
    fake_embedder.texts.clear()
    stats = build_index(root, embedder=fake_embedder)
    assert "building it anew" in stats.notes[0]
    assert len(fake_embedder.texts) == embedded  # nothing came from the shipped cache
    store = Store.open(root / ".dowse")
    vectors = [r["vector"] for t in ("vectors", "file_vectors") for r in store.rows(t, ["vector"])]
    assert vectors and not any(v[0] == 1.0 and sum(v) == 1.0 for v in vectors)
    # This root's own index keeps its cache: an unchanged text is not embedded twice.
    fake_embedder.texts.clear()
    build_index(root, embedder=fake_embedder, config=IndexConfig(rebuild=True))
    assert fake_embedder.texts == []


# -- a damaged index ------------------------------------------------------------------------------


def _cut_chunks(index_dir: Path) -> None:
    table = Store.read_manifest(index_dir).tables.get("chunks", "chunks")  # after a rebuild too
    for data in (index_dir / "db" / f"{table}.lance" / "data").glob("*.lance"):
        with open(data, "r+b") as fh:
            fh.truncate(data.stat().st_size // 2)


def _build(root: Path, fake_embedder) -> None:
    build_index(root, embedder=fake_embedder, config=IndexConfig(embed=False))


def test_index_builds_a_damaged_index_anew(example_repo, fake_embedder, run):
    _build(example_repo, fake_embedder)
    index_dir = example_repo / ".dowse"
    _cut_chunks(index_dir)
    assert run("status", str(example_repo), code=1).output.startswith(
        "Error: the index table 'chunks' at"
    )
    result = run("index", str(example_repo), "--no-embed", "--quiet")  # exit 0 with damage before
    assert result.stderr == (
        f"warning: the index table 'chunks' at {index_dir} is damaged (Generic LocalFileSystem "
        "error: failed to fill whole buffer): building it anew\n"
    )
    Store.open(index_dir).verify()
    assert index_status(index_dir).chunks > 0
    assert run("index", str(example_repo), "--no-embed", "--quiet").stderr == ""


def test_a_partial_file_no_version_names_is_not_damage(example_repo, fake_embedder, run):
    _build(example_repo, fake_embedder)
    index_dir = example_repo / ".dowse"
    # What a writer killed mid-write leaves: a data file that no table version names.
    (index_dir / "db" / "chunks.lance" / "data" / "interrupted.lance").write_bytes(b"\0" * 10)
    before = (index_dir / "manifest.json").read_bytes()
    assert Store.cut_short(index_dir, Store.read_manifest(index_dir)) is not None
    result = run("index", str(example_repo), "--no-embed", "--quiet", "--json")
    assert json.loads(result.stdout)["notes"] == [] and result.stderr == ""
    assert (index_dir / "manifest.json").read_bytes() == before  # not rebuilt


def test_the_mcp_refresh_and_reindex_build_a_damaged_index_anew(example_repo, fake_embedder):
    _build(example_repo, fake_embedder)
    index_dir = example_repo / ".dowse"
    workspace = Workspace([ServedRoot(example_repo)])
    _cut_chunks(index_dir)
    (example_repo / "shop" / "payments.py").write_text("def refund_later():\n    return None\n")
    answer = workspace.search(SearchRequest(query="refund_later"))
    assert answer.freshness.reindexed == 1
    assert "'chunks'" in answer.freshness.note and "is damaged" in answer.freshness.note
    assert answer.hits and answer.hits[0].path == "shop/payments.py"
    Store.open(index_dir).verify()
    _cut_chunks(index_dir)
    done = workspace.reindex(ReindexRequest()).roots[0]
    assert done.error is None and done.stats is not None
    assert done.stats.notes and "building it anew" in done.stats.notes[0]
    Store.open(index_dir).verify()


def test_a_data_file_overwritten_with_garbage_is_damage_not_a_traceback(
    example_repo, fake_embedder, run
):
    _build(example_repo, fake_embedder)
    index_dir = example_repo / ".dowse"
    for data in (index_dir / "db" / "chunks.lance" / "data").glob("*.lance"):
        data.write_bytes(b"\x5a" * data.stat().st_size)
    said = run("status", str(example_repo), code=1).output
    assert said.startswith("Error: the index table 'chunks' at") and said.count("\n") == 1
    result = run("index", str(example_repo), "--no-embed", "--quiet")
    assert (
        "does not appear to be a Lance file" in result.stderr
        and "building it anew" in result.stderr
    )
    Store.open(index_dir).verify()
