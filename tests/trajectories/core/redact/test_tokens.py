"""Secrets known by their shape: a URL keeps its user and host when its password goes, a long
key goes whole where the maintained pattern stops short."""

from __future__ import annotations

from trajectories.core.redact import redact

from .planted import rand


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
