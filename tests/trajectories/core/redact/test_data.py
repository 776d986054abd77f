"""Redacting JSON-like data: strings inside redacted, keys kept, values under secret names
replaced whole, the same result as redacting each string alone."""

from __future__ import annotations

from trajectories.core.redact import merge_counts, redact, redact_data

from .planted import NEAR_MISSES, PLANTED, rand


def test_data_is_redacted_inside_with_its_keys_and_other_values_kept():
    token = "ghp_" + rand(36)
    data = {
        "tool_calls": [{"name": "Bash", "arguments": {"command": f"GH_TOKEN={token} gh pr list"}}],
        "env": {"DB_PASSWORD": "pa55-word", "PORT": "5432", "retries": 3, "debug": None},
        "password": "",
        "pair": ("plain", f"see {token}"),
    }
    result = redact_data(data)
    assert result.value == {
        "tool_calls": [
            {
                "name": "Bash",
                "arguments": {"command": "GH_TOKEN=[REDACTED:github_token] gh pr list"},
            }
        ],
        "env": {
            "DB_PASSWORD": "[REDACTED:secret_assignment]",
            "PORT": "5432",
            "retries": 3,
            "debug": None,
        },
        "password": "",
        "pair": ("plain", "see [REDACTED:github_token]"),
    }
    assert result.counts == {"github_token": 2, "secret_assignment": 1}
    assert data["password"] == "" and token in data["pair"][1]  # the input is not mutated


def test_data_gives_the_same_strings_as_redacting_each_alone():
    # redact_data sends a structure's strings through the rules in one pass; no finding may
    # reach across from one string into the next, with or without a NUL in the data.
    strings = [ctx.format(s=secret) for _, secret, ctx in PLANTED] + NEAR_MISSES
    strings += ["-u ops:pa55-w0rd-x", "password: hunter22", "ann@corp.eu", "x\x00y"]
    for batch in (strings, strings[:-1]):
        result = redact_data(batch)
        assert result.value == [redact(s).value for s in batch]
        assert result.counts == merge_counts(redact(s).counts for s in batch)
