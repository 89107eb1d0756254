from dowse.tokens import split_identifier, token_text, tokenize


def test_identifiers_are_kept_whole_and_split():
    assert tokenize("parseHTTPResponse get_user_id2 __init__") == [
        "parsehttpresponse",
        "parse",
        "http",
        "response",
        "get_user_id2",
        "get",
        "user",
        "id",
        "2",
        "init",
    ]


def test_split_identifier_cases():
    assert split_identifier("XMLHttpRequest") == ["xml", "http", "request"]
    assert split_identifier("MAX_RETRIES") == ["max", "retries"]
    assert split_identifier("x") == ["x"]


def test_token_text_caps_repeats():
    assert token_text("a a a b a", max_repeat=2) == "a a b"
    assert token_text(["fooBar"], "x") == "foobar foo bar x"
