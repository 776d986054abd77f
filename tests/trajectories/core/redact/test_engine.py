"""The redactor as a whole: every planted secret replaced and counted by type, near-misses left
alone, overlapping findings merged into one, the after-the-fact check, and its speed."""

from __future__ import annotations

import string
import time
from collections import Counter

import pytest

from trajectories.core.redact import redact, still_has_secrets

from .planted import NEAR_MISSES, PLANTED, planted_text, rand, realistic_trajectory_text


def test_every_planted_secret_is_replaced_and_counted_by_type():
    text = planted_text()
    result = redact(text)
    for kind, secret, _ in PLANTED:
        assert secret not in result.value, f"{kind} survived"
    assert result.counts == dict(sorted(Counter(kind for kind, _, _ in PLANTED).items()))
    assert result.total == len(PLANTED)
    assert still_has_secrets(result.value) == ()


@pytest.mark.parametrize(("kind", "secret", "context"), PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_secret_alone_is_one_typed_replacement_and_nothing_else_changes(
    kind, secret, context
):
    text = context.format(s=secret)
    result = redact(text)
    assert result.counts == {kind: 1}
    # A secret over several lines leaves its line breaks behind its token.
    assert result.value == context.format(s=f"[REDACTED:{kind}]" + "\n" * secret.count("\n"))


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_stay_as_they_are(text):
    result = redact(text)
    assert (result.value, result.counts) == (text, {})


def test_a_key_under_a_secret_name_is_one_replacement_of_the_more_specific_type():
    secret = "sk-proj-" + rand(64)
    result = redact(f"OPENAI_API_KEY={secret}")
    assert result.value == "OPENAI_API_KEY=[REDACTED:openai_api_key]"
    assert result.counts == {"openai_api_key": 1}


def test_redaction_is_idempotent():
    once = redact(planted_text())
    twice = redact(once.value)
    assert twice.value == once.value
    assert twice.counts == {}


def test_still_has_secrets_names_what_survived():
    assert still_has_secrets("clean text, no keys") == ()
    found = still_has_secrets("a " + "AKIA" + rand(16, string.ascii_uppercase) + " b ann@x.org")
    assert found == ("aws_access_key_id", "email")


def test_redaction_is_fast_enough_for_pages():
    text = realistic_trajectory_text(2_000_000)
    started = time.perf_counter()
    result = redact(text)
    took = time.perf_counter() - started
    assert result.counts.get("secret_assignment", 0) + result.counts.get("github_token", 0) > 0
    # About 6 MB/s on the development machine; the bound leaves room for a loaded CI host.
    assert len(text) / 1e6 / took > 1.0, f"{len(text) / 1e6 / took:.2f} MB/s"


PATHOLOGICAL = {
    "one long word": "a" * 200_000,
    "at signs": "a@" * 100_000,
    "schemes": "x://" * 50_000,
    "an unterminated quote": 'password="' + "a" * 200_000,
    "keys without values": "token:" * 40_000,
    "begin lines without end": ("-----BEGIN RSA PRIVATE KEY-----\n" + "A" * 100 + "\n") * 1500,
    "end lines without begin": ("A" * 64 + "\n-----END RSA PRIVATE KEY-----\n") * 3000,
    "end markers alone": "-----END RSA PRIVATE KEY-----" * 20_000,
    "begin markers on one long line": "-----BEGIN RSA PRIVATE KEY-----" * 20_000 + "\nAAAA" * 9,
    "a long body and many ends": ("A" * 64 + "\n") * 20_000
    + "-----END EC PRIVATE KEY-----\n" * 3000,
    "escaped breaks without end": ("-----BEGIN EC PRIVATE KEY-----" + "\\n" + "B" * 64) * 3000,
    "local parts too long to be addresses": ("a" * 70 + "@") * 3000,
    "program names and many arguments": ("mysql " + "-x " * 30 + "docker login " + "a " * 30)
    * 1500,
    "key ids side by side": ("AKIA" + "B" * 16 + " ") * 10_000,
    "key ids among base64": ("AKIA" + "C" * 16 + " " + "aB3/" * 10 + " ") * 3000,
    "a credentials header over many rows": "Access key ID,Secret access key\n" + "a,b\n" * 100_000,
    "netrc words without values": "machine m login l password " * 20_000,
    "putty first lines alone": "PuTTY-User-Key-File-3: ssh-rsa\n" * 20_000,
    "putty public lines and many first lines": (
        "PuTTY-User-Key-File-3: ssh-rsa\nPublic-Lines: 9\n" + ("A" * 64 + "\n") * 9
    )
    * 500,
    "putty private lines without a mac": (
        "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 99\n" + ("B" * 64 + "\n") * 20
    )
    * 300,
    "age prefixes": "AGE-SECRET-KEY-1" * 20_000,
}


@pytest.mark.parametrize("text", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_adversarial_inputs_take_linear_time(text):
    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 3.0
