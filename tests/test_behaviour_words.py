"""What a definition's own lines say it does (`retrieval.behaviour.behaviour_words`): the
words on its lines that branch, fail or handle a failure, and inside its string literals,
in every language, its signature, prose and nested definitions left out."""

from __future__ import annotations

import pytest

from dowse.retrieval.behaviour import behaviour_words

CASES = {
    "python": (
        "def validate(token, now):\n"
        '    """Reject an expired token."""\n'
        "    claims = decode(token)\n"
        '    if claims["exp"] < now:\n'
        '        raise TokenError("token expired")\n'
        "    return claims\n"
    ),
    "javascript": (
        "function submit(cart) {\n"
        "  // the session is checked by the server\n"
        "  const response = send(cart);\n"
        "  if (response.status === 401) {\n"
        '    throw new Error("session expired");\n'
        "  }\n"
        "}\n"
    ),
    "go": (
        "func Validate(token string) error {\n"
        "\tclaims := decode(token)\n"
        "\tif claims.Exp < now() {\n"
        '\t\treturn fmt.Errorf("token expired")\n'
        "\t}\n"
        "\treturn nil\n"
        "}\n"
    ),
    "rust": (
        "fn validate(token: &str) -> Result<Claims, Error> {\n"
        "    let claims = decode(token);\n"
        "    match claims.expiry {\n"
        '        Some(t) if t < now() => Err(Error::new("token expired")),\n'
        "        _ => Ok(claims),\n"
        "    }\n"
        "}\n"
    ),
    "java": (
        "Claims validate(String token) {\n"
        "    Claims claims = decode(token);\n"
        "    if (claims.expiry() < now()) {\n"
        '        throw new TokenException("token expired");\n'
        "    }\n"
        "    return claims;\n"
        "}\n"
    ),
    "c": (
        "int validate(const char *token) {\n"
        "    claims_t claims = decode(token);\n"
        "    if (claims.expiry < now()) {\n"
        '        fprintf(stderr, "token expired\\n");\n'
        "        return -1;\n"
        "    }\n"
        "    return 0;\n"
        "}\n"
    ),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_the_branch_that_fails_holds_its_message_in_every_language(language):
    words = behaviour_words(CASES[language], language)
    assert "expir" in words.strings  # the message
    if language != "c":  # C's message is printed, not raised: only a string holds it
        assert "expir" in words.decides
    assert "decod" not in words.decides  # an assignment decides nothing
    assert words.code_lines >= 5


def test_prose_a_signature_and_nested_definitions_say_nothing():
    text = (
        "class TokenError(Exception):\n"
        '    """A token is malformed, forged or expired."""\n'
        "\n"
        "    def check(self):\n"
        '        raise ValueError("forged")\n'
    )
    header = behaviour_words(text, "python", skip={3, 4})
    assert header.decides == frozenset() and header.strings == frozenset()
    assert header.code_lines == 1
    whole = behaviour_words(text, "python")
    assert "forg" in whole.decides and "expir" not in whole.decides | whole.strings


def test_a_language_without_rules_is_all_code():
    words = behaviour_words('start\nif expired then fail "expired"\n', None)
    assert "expir" in words.decides and "expir" in words.strings
