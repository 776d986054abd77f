"""Secrets in a session never reach the task written from it: the instruction and the starting
project are redacted and counted; what the verifier grades is refused instead of redacted."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tasks_review.core.taskfiles import SecretInReference
from tasks_review.core.tasksecrets import redaction_counts
from trajectories.core.redact import still_has_secrets

from .secrets_story import OPENAI_KEY_2, PRIVATE_KEY, SECRETS, TEST, secrets_story
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
    from .test_repair import fixed_python_story

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
    from .repair_helpers import Session

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
