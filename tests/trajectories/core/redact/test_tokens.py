"""Secrets known by their shape: a URL keeps its user and host when its password goes, a long
key goes whole where the maintained pattern stops short."""

from __future__ import annotations

import pytest

from trajectories.core.redact import redact

from .planted import age_identity, rand


def test_a_url_keeps_its_user_and_host_when_its_password_goes():
    result = redact("git push https://deploy:pa55word-x@git.example.com/app.git main")
    assert (
        result.value
        == "git push https://deploy:[REDACTED:url_password]@git.example.com/app.git main"
    )
    assert result.counts == {"url_password": 1}


def test_a_long_key_is_replaced_whole_where_the_maintained_pattern_stops_short():
    # detect-secrets matches 24 characters of a Stripe key; the merged finding covers all 99.
    secret = "sk_live_" + rand(99)
    assert redact(f"KEY {secret} END").value == "KEY [REDACTED:stripe_key] END"


def test_an_age_identity_goes_and_its_public_key_stays():
    identity = age_identity()
    public = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"
    text = f"# created: 2026-12-01T10:00:00Z\n# public key: {public}\n{identity}\n"
    result = redact(text)
    assert result.value == text.replace(identity, "[REDACTED:age_secret_key]")
    assert result.counts == {"age_secret_key": 1}


@pytest.mark.parametrize(
    "text",
    [
        "age-keygen writes a line starting AGE-SECRET-KEY-1 to the identity file",
        "grep -c AGE-SECRET-KEY- ~/.config/sops/age/keys.txt",
        "SOPS_AGE_KEY=AGE-SECRET-KEY-1...",
        "AGE-SECRET-KEY-1QQQQ is too short to be one",
    ],
)
def test_text_naming_an_age_identity_stays(text):
    assert redact(text).value == text
