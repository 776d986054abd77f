"""Secrets in a session never reach the task written from it: the instruction and the starting
project are redacted and counted; what the verifier grades is refused instead of redacted."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tasks_review.core.taskfiles import SecretInReference
from tasks_review.core.tasksecrets import redaction_counts
from trajectories.core.redact import still_has_secrets

from .secrets_story import (
    INDEX_BUGGY,
    INDEX_FIXED,
    OPENAI_KEY_2,
    PACKAGE,
    PRIVATE_KEY,
    SECRETS,
    TEST,
    secrets_story,
)
from .test_taskfiles import tree, write


def test_a_task_from_a_session_with_five_secrets_holds_none_of_them(tmp_path):
    mined = secrets_story().mine()
    task = write(tmp_path / "task", mined.only, mined.blobs)
    files = tree(task)
    for path, data in files.items():
        text = data.decode("utf-8", "surrogateescape")
        assert still_has_secrets(text) == (), path
        for secret in SECRETS:
            assert secret not in text, (path, secret[:8])
    instruction = files["instruction.md"].decode()
    assert "[REDACTED:aws_access_key_id]" in instruction
    assert "[REDACTED:github_token]" in instruction
    assert "OPENAI_API_KEY=[REDACTED:openai_api_key]" in instruction
    project = task / "environment" / "project"
    assert (project / "config.js").read_text() == (
        "module.exports = { openai: '[REDACTED:openai_api_key]' };\n"
    )
    # The key's lines stay as blank lines: what follows keeps its line numbers.
    key_lines = "\n" * PRIVATE_KEY.count("\n")
    assert (project / "deploy" / "id_rsa").read_text() == f"[REDACTED:private_key]{key_lines}"
    assert OPENAI_KEY_2 not in (project / "config.js").read_text()


def test_the_task_records_how_many_secrets_of_each_type_it_replaced(tmp_path):
    mined = secrets_story().mine()
    task = write(tmp_path / "task", mined.only, mined.blobs)
    assert redaction_counts(task) == {
        "aws_access_key_id": 1,
        "github_token": 1,
        "openai_api_key": 2,
        "private_key": 1,
    }


def test_a_task_without_secrets_records_no_redaction(tmp_path):
    from .mining.test_repair import fixed_python_story

    mined = fixed_python_story().mine()
    task = write(tmp_path / "task", mined.only, mined.blobs)
    assert redaction_counts(task) == {}
    assert "redaction" not in (task / "task.toml").read_text()


def test_binary_files_are_copied_as_they_are(tmp_path):
    mined = secrets_story().mine()
    candidate = mined.only
    binary = b"\x00\x01" + PRIVATE_KEY.encode()
    sha = mined.blobs.put(binary)
    start = {**candidate.start_files, "blob.bin": sha}
    candidate = dataclasses.replace(candidate, start_files=start)
    task = write(tmp_path / "task", candidate, mined.blobs)
    assert (task / "environment" / "project" / "blob.bin").read_bytes() == binary


def test_a_secret_in_the_checks_test_file_refuses_the_task(tmp_path):
    test = TEST + f"// {PRIVATE_KEY.splitlines()[1]}\nconst token = '{SECRETS[1]}';\n"
    mined = secrets_story(test).mine()
    with pytest.raises(SecretInReference, match=r"test/greet\.test\.js.*github_token"):
        write(tmp_path / "task", mined.only, mined.blobs)
    assert not Path(tmp_path / "task").exists()


def test_a_secret_in_a_file_the_oracle_writes_refuses_the_task(tmp_path):
    from .mining.repair_helpers import Session

    mined = (
        Session()
        .user("Make greet say 'Hello, <name>!'.")
        .write("package.json", '{"name": "greet", "scripts": {"test": "node --test"}}\n')
        .write("index.js", "exports.greet = (name) => 'Hello ' + name;\n")
        .write("test/greet.test.js", TEST)
        .run("npm test", fail=True, output="not ok 1 - greets")
        .write(
            "index.js",
            f"const KEY = '{OPENAI_KEY_2}';\nexports.greet = (name) => 'Hello, ' + name + '!';\n",
        )
        .run("npm test", output="ok 1 - greets")
        .mine()
    )
    with pytest.raises(SecretInReference, match=r"index\.js.*openai_api_key"):
        write(tmp_path / "task", mined.only, mined.blobs)


def _pem_keys() -> dict[str, str]:
    """Real keys of the three shapes users paste, made fresh (none is ever written down)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    none = serialization.NoEncryption()
    pem, pkcs8 = serialization.Encoding.PEM, serialization.PrivateFormat
    return {
        "rsa": rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(pem, pkcs8.TraditionalOpenSSL, none)
        .decode(),
        "openssh": ed25519.Ed25519PrivateKey.generate()
        .private_bytes(pem, pkcs8.OpenSSH, none)
        .decode(),
        "ec": ec.generate_private_key(ec.SECP256R1())
        .private_bytes(pem, pkcs8.TraditionalOpenSSL, none)
        .decode(),
    }


PEM_KEYS = _pem_keys()


def _indented(key: str) -> str:
    return "".join(f"    {line}\n" for line in key.splitlines())


def _after_a_long_message(key: str) -> str:
    # The instruction keeps a long request's head and tail; for an RSA key, the cuts fall
    # inside the key and take both its BEGIN and its END line away from some body lines.
    steps = "".join(f"Step {i}: check the box and its ssh config again.\n" for i in range(12))
    return steps + key


# How a key arrives in a request: pasted bare, indented as a markdown code block, fenced,
# quoted from someone else's message, or deep in a long message.
KEY_PASTES = {
    "bare": lambda key: key,
    "indented": _indented,
    "fenced": lambda key: f"```\n{key}```\n",
    "quoted": lambda key: "".join(f"> {line}\n" for line in key.splitlines()),
    "after a long message": _after_a_long_message,
}


@pytest.mark.parametrize("paste", KEY_PASTES)
@pytest.mark.parametrize("kind", PEM_KEYS)
def test_a_private_key_in_the_users_request_leaves_no_key_line_in_the_instruction(
    tmp_path, kind, paste
):
    from .mining.repair_helpers import Session

    key = PEM_KEYS[kind]
    request = (
        "Make greet say 'Hello, <name>!'. The deploy box takes this key:\n\n"
        + KEY_PASTES[paste](key)
        + "\nthen run the tests."
    )
    mined = (
        Session()
        .user(request)
        .write("package.json", PACKAGE)
        .write("index.js", INDEX_BUGGY)
        .write("test/greet.test.js", TEST)
        .run("npm test", fail=True, output="not ok 1 - greets\n# fail 1")
        .write("index.js", INDEX_FIXED)
        .run("npm test", output="ok 1 - greets\n# fail 0")
        .mine()
    )
    task = write(tmp_path / "task", mined.only, mined.blobs)
    instruction = (task / "instruction.md").read_text()
    body = [line for line in key.splitlines() if "PRIVATE KEY" not in line]
    for line in body:
        # A whole line, or its first 16 characters where the instruction cut it.
        assert line[:16] not in instruction, (kind, paste, line)
    assert "[REDACTED:private_key]" in instruction
    assert "Make greet say" in instruction and "then run the tests." in instruction
    assert still_has_secrets(instruction) == ()
    assert redaction_counts(task).get("private_key", 0) >= 1
