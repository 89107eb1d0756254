"""`dowse schema`: the JSON Schemas of the output records, and what --json prints obeys
them; shell completion of the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jsonschema
import pytest
from click.testing import CliRunner

from dowse.cli import cli
from dowse.schema import RECORDS, json_schema


@pytest.fixture
def indexed(tmp_path, fake_embedder, indexed_examples):
    """The example as `dowse index` leaves it (the session's build, copied: conftest)."""
    return indexed_examples.copy(tmp_path / "example")


def test_every_record_has_a_schema(run):
    every = json.loads(run("schema").output)
    assert list(every) == list(RECORDS)
    for name, schema in every.items():
        assert schema["title"] == name
        jsonschema.Draft202012Validator.check_schema(schema)
    assert json.loads(run("schema", "AskReport").output) == every["AskReport"]
    listed = run("schema", "--list").output.splitlines()
    assert listed[0] == "IndexStats\tdowse index --json"
    assert [line.split("\t")[0] for line in listed] == list(RECORDS)


def test_an_unknown_record_is_one_line(run):
    result = run("schema", "AskRepot", code=1)
    assert result.output.startswith("Error: no record 'AskRepot'; known: IndexStats, ")
    assert result.output.count("\n") == 1


def test_what_json_prints_validates_against_its_schema(indexed, run):
    where = ["--path", str(indexed)]
    printed = {
        "IndexStats": run("index", str(indexed), "--json", "-q").output,
        "StatusReport": run("status", str(indexed), "--json").output,
        "AskReport": run("ask", "where are expired tokens rejected?", *where, "--json").output,
        "ExploreResult": run("explore", str(indexed), "--json").output,
    }
    for name, output in printed.items():
        jsonschema.validate(json.loads(output), json_schema(name))
    hits = json.loads(run("search", "validate_token", *where, "--json").output)
    matches = json.loads(run("symbol", "validate_token", *where, "--json").output)
    assert hits and matches
    for hit in hits:
        jsonschema.validate(hit, json_schema("Hit"))
    for match in matches:
        jsonschema.validate(match, json_schema("SymbolMatch"))
    # A schema that could not fail would prove nothing: a wrong type is refused.
    report = json.loads(printed["AskReport"])
    report["files"] = "not a list"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, json_schema("AskReport"))


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_shell_completion(shell):
    def dowse(**env: str) -> str:
        # In-process: the completions are click's answers, whichever process gives them.
        result = CliRunner().invoke(cli, [], env=env, prog_name="dowse", catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.stdout

    # The script the README tells each shell to source, from the real entry point.
    sourced = subprocess.run(
        [sys.executable, "-m", "dowse"],
        env={**os.environ, "_DOWSE_COMPLETE": f"{shell}_source"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert "_DOWSE_COMPLETE" in sourced.stdout
    assert sourced.stdout == dowse(_DOWSE_COMPLETE=f"{shell}_source")
    # What the shell asks for on `dowse sch<TAB>` and `dowse ask --bud<TAB>`.
    asked = {"COMP_WORDS": "dowse sch", "COMP_CWORD": "1"}
    option = {"COMP_WORDS": "dowse ask --bud", "COMP_CWORD": "2"}
    if shell == "bash":
        assert "plain,schema" in dowse(_DOWSE_COMPLETE="bash_complete", **asked).splitlines()
        assert "plain,--budget" in dowse(_DOWSE_COMPLETE="bash_complete", **option).split()
    elif shell == "zsh":
        assert "schema" in dowse(_DOWSE_COMPLETE="zsh_complete", **asked).split()
    else:
        fish = {"COMP_WORDS": "dowse sch", "COMP_CWORD": "sch"}
        assert any(
            line.startswith("plain,schema")
            for line in dowse(_DOWSE_COMPLETE="fish_complete", **fish).splitlines()
        )


def test_an_answer_leaves_out_an_empty_definitions_list_and_its_schema_stays_whole():
    from dowse.retrieval.ask import AskResult
    from dowse.server.records import AskAnswer

    common = {"files": [], "context": [], "stop_reason": "done", "cycles": 1}
    envelope = {
        "root": "/r",
        "freshness": {"snapshot": 0.0},
        "budget": {"max_tokens": 4000, "tokens": 9},
    }
    answers = [
        AskResult.model_validate({"question": "q", "tokens": 0, "budget": None, **common}),
        AskAnswer.model_validate({**envelope, **common}),
    ]
    for answer in answers:
        assert "definitions" not in json.loads(answer.model_dump_json())
        assert "definitions" not in answer.model_dump()
        # Both modes describe every field: a serializer of the whole model (how the empty
        # list was left out before) made the serialization-mode schema empty.
        for mode in ("validation", "serialization"):
            properties = type(answer).model_json_schema(mode=mode)["properties"]
            assert {"files", "context", "definitions"} <= set(properties)
    listed = answers[1].model_copy(update={"definitions": ["a.py:1-2 f"]})
    assert json.loads(listed.model_dump_json())["definitions"] == ["a.py:1-2 f"]
