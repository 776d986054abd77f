"""Secrets in an export: redacted and counted in the manifest, and an export refused when one
survives, caught by the redactor's own check or by an independent second one."""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from tests.training.core.exports.builders import (
    Session,
    item,
    passing_session,
)
from tests.training.core.exports.checks import (
    request,
)
from training.core.exports import (
    ExportKind,
    ExportRefused,
    SecretSurvived,
    write_export,
)
from training.core.exports import writer as writer_module

_rng = random.Random(99)


def rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def planted_session() -> tuple[Session, dict[str, int]]:
    """A rollout that met secrets everywhere: in the request, in arguments, in tool output,
    under a secret-named argument, and in the agent's words. Built at run time, never spelled
    out in the source."""
    key_body = "\n".join(rand(64, string.ascii_letters + string.digits + "+/") for _ in range(5))
    private_key = f"-----BEGIN RSA PRIVATE KEY-----\n{key_body}\n-----END RSA PRIVATE KEY-----"
    jwt = (
        ".".join(
            base64.urlsafe_b64encode(json.dumps(p).encode()).decode().rstrip("=")
            for p in ({"alg": "HS256"}, {"sub": "u1"})
        )
        + "."
        + rand(43)
    )
    session = (
        Session("Deploy with my token ghp_" + rand(36) + " and mail ann@corp.eu when done.")
        .call("Bash", "Exported.", command="export OPENAI_API_KEY=sk-proj-" + rand(64))
        .call("Read", private_key, file_path="~/.ssh/id_rsa")
        .call("Login", "ok", username="ann", password="pa55-" + rand(8))
        .call("Bash", "200 OK", command=f"curl -H 'Authorization: Bearer {jwt}' https://api.x.io")
        .say("Connected to postgres://app:" + rand(12) + "@db.internal/app as requested.")
    )
    expected = {
        "email": 1,
        "github_token": 1,
        "jwt": 1,
        "openai_api_key": 1,
        "private_key": 1,
        "secret_assignment": 1,
        "url_password": 1,
    }
    return session, expected


def test_every_secret_in_an_export_is_redacted_and_counted_in_the_manifest(tmp_path):
    session, expected = planted_session()
    secrets = [
        step["message"].split()[4] for step in session.steps[:1]
    ]  # the GitHub token from the request
    result = write_export(request(ExportKind.SFT, items=(item("1", session),)), tmp_path)
    written = (tmp_path / "data.jsonl").read_text()
    assert result.manifest["redaction"]["replacements"] == expected
    assert result.manifest["redaction"]["total"] == sum(expected.values())
    assert secrets[0].startswith("ghp_") and secrets[0] not in written
    assert "PRIVATE KEY" not in written and "pa55-" not in written and "ann@corp.eu" not in written
    parquet = (tmp_path / "data/train-00000-of-00001.parquet").read_bytes()
    assert secrets[0].encode() not in parquet


def test_an_export_is_refused_when_a_secret_survives_in_what_would_be_written(tmp_path):
    # A task id is provenance, not data: it reaches the manifest as given.
    leaky = item("1", passing_session(), task="fix-for-ann@corp.eu")
    with pytest.raises(SecretSurvived) as refused:
        write_export(request(ExportKind.SFT, items=(leaky,)), tmp_path / "out")
    assert refused.value.kinds == ("email",) and "manifest.json" in refused.value.reason
    assert not (tmp_path / "out").exists()


def test_the_check_after_redaction_catches_what_redaction_missed(tmp_path, monkeypatch):
    # The one seam: a redactor that misses everything. The check over the rows as they would be
    # written must still refuse.
    monkeypatch.setattr(
        writer_module,
        "redact_data",
        lambda rows: type("R", (), {"value": rows, "counts": {}, "total": 0})(),
    )
    session = passing_session("Use key AKIA" + rand(16, string.ascii_uppercase) + " please.")
    with pytest.raises(SecretSurvived) as refused:
        write_export(request(ExportKind.SFT, items=(item("1", session),)), tmp_path / "out")
    assert refused.value.kinds == ("aws_access_key_id",) and "data.jsonl" in refused.value.reason
    assert not (tmp_path / "out").exists()


def _blind_redactor(monkeypatch) -> None:
    """The redactor and its after-the-fact check both miss everything (they share rules)."""
    monkeypatch.setattr(
        writer_module,
        "redact_data",
        lambda rows: type("R", (), {"value": rows, "counts": {}, "total": 0})(),
    )
    monkeypatch.setattr(writer_module, "still_has_secrets", lambda text: ())


def _key_block() -> str:
    body = "\n".join(rand(64, string.ascii_letters + string.digits + "+/") for _ in range(4))
    return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"


BLIND_SPOTS = {
    "github token": (lambda: "push with ghp_" + rand(36), "token starting ghp_"),
    "aws key id": (lambda: "use AKIA" + rand(16, string.ascii_uppercase), "token starting AKIA"),
    "private key": (_key_block, "private key block"),
    "api key header": (
        lambda: "curl -H 'x-api-key: " + rand(32) + "' api",
        "value named x-api-key",
    ),
}


@pytest.mark.parametrize("shape", BLIND_SPOTS)
def test_a_secret_the_redactor_is_blind_to_is_refused_by_an_independent_second_check(
    tmp_path, monkeypatch, shape
):
    _blind_redactor(monkeypatch)
    planted, named = BLIND_SPOTS[shape]
    items = (item("1", passing_session()), item("2", passing_session(planted())))
    with pytest.raises(ExportRefused) as refused:
        write_export(request(ExportKind.SFT, items=items), tmp_path / "out")
    assert refused.value.code == "secret_second_check"
    reason = refused.value.reason
    assert "data.jsonl row 2 (rollout 2)" in reason and named in reason, reason
    assert "atif-scan" in reason and "nothing was written" in reason
    assert not (tmp_path / "out").exists()


def test_the_second_check_reads_the_manifest_too(tmp_path, monkeypatch):
    _blind_redactor(monkeypatch)
    leaky = item("1", passing_session(), task="fix-with-ghp_" + rand(36))
    with pytest.raises(ExportRefused) as refused:
        write_export(request(ExportKind.SFT, items=(leaky,)), tmp_path / "out")
    assert refused.value.code == "secret_second_check" and "manifest.json" in refused.value.reason
    assert not (tmp_path / "out").exists()


def test_the_manifest_names_the_second_check_that_found_nothing(tmp_path):
    session, _ = planted_session()
    result = write_export(request(ExportKind.SFT, items=(item("1", session),)), tmp_path)
    second = result.manifest["redaction"]["second_check"]
    assert second.startswith("atif-scan ") and second.endswith("found nothing in the rows")
