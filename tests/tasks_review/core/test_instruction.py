"""instruction.md: requests up to the failure and the failing output, and no line of the fix."""

from __future__ import annotations

from tasks_review.core.instruction import (
    added_lines,
    build_instruction,
    clean_request,
    leaks,
    pick_requests,
    rewrite_root,
    strip_harness,
    trim_text,
    user_requests,
)
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.redact import redact


def _atif(*steps):
    return {
        "steps": [
            {"step_id": i + 1, "source": source, "message": message, **extra}
            for i, (source, message, extra) in enumerate(steps)
        ]
    }


def test_trim_keeps_head_and_tail_with_a_marker_for_what_is_left_out():
    text = "\n".join(f"line {i}" for i in range(100))
    trimmed = trim_text(text, head_lines=3, tail_lines=2)
    assert trimmed.split("\n") == [
        "line 0",
        "line 1",
        "line 2",
        "[... 95 lines omitted ...]",
        "line 98",
        "line 99",
    ]
    assert trim_text("short\noutput\n") == "short\noutput"


def test_trim_strips_colours_redrawn_lines_long_lines_and_caps_the_size():
    assert trim_text("\x1b[31mFAIL\x1b[0m test_x") == "FAIL test_x"
    assert trim_text("progress 10%\rprogress 100%\ndone") == "progress 100%\ndone"
    assert trim_text("\n\n\nfirst\n") == "first"
    long_line = trim_text("x" * 1000, max_line_chars=10)
    assert long_line == "xxxxxxxxxx [... line cut ...]"
    capped = trim_text("\n".join("y" * 300 for _ in range(50)), max_chars=1000)
    assert len(capped) < 1100 and "characters omitted" in capped


def test_trim_replaces_secrets_before_it_cuts_so_no_piece_of_a_cut_key_survives():
    import random
    import string

    rng = random.Random(7)
    body = [
        "".join(rng.choices(string.ascii_letters + string.digits + "+/", k=64)) for _ in range(25)
    ]
    key = "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----"])
    steps = "".join(f"Step {i}: check the box and its ssh config again.\n" for i in range(12))
    # Head and tail cuts both land inside the key: some body lines keep neither marker, and a
    # redaction of the trimmed text (the task writer's) could not know them for a key.
    trimmed = trim_text(steps + key + "\nthen run", head_lines=25, tail_lines=10, max_chars=1500)
    assert "omitted" in trimmed and "[REDACTED:private_key]" in trimmed
    assert not [line for line in body if line[:16] in redact(trimmed).value]
    assert trimmed.startswith("Step 0:") and trimmed.endswith("then run")


def test_harness_status_lines_are_not_part_of_the_output():
    assert strip_harness("Exit code 1\nFAILED x") == "FAILED x"
    assert strip_harness("FAILED x\n\nCommand exited with code 2") == "FAILED x"
    assert strip_harness("Exit code 1\nboom\n\n[error] tool reported failure") == "boom"
    assert strip_harness("the Exit code 1 stays") == "the Exit code 1 stays"


def test_requests_lose_harness_wrappers_and_noise():
    assert clean_request("fix it<system-reminder>be careful</system-reminder>") == "fix it"
    assert (
        clean_request("<command-name>/model</command-name>\n<command-args></command-args>") is None
    )
    assert clean_request("<environment_context>\n<cwd>/x</cwd>\n</environment_context>") is None
    assert clean_request("# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>…") is None
    assert clean_request("[Request interrupted by user for tool use]") is None
    assert clean_request("ok") is None and clean_request("Yes!") is None
    assert clean_request("fix tests") == "fix tests"


def test_user_requests_stop_before_the_failing_step_and_skip_copied_context():
    atif = _atif(
        ("system", "You are a coding agent.", {}),
        ("user", "Summary of an earlier session", {"is_copied_context": True}),
        ("user", [{"type": "text", "text": "Build a slugify helper."}], {}),
        ("agent", "Sure.", {}),
        ("user", "continue", {}),
        ("user", "Also handle unicode.", {}),
        ("agent", "running tests", {}),  # the failing run is at index 6
        ("user", "The answer is to use NFKD.", {}),
    )
    assert user_requests(atif, before_step=6) == ["Build a slugify helper.", "Also handle unicode."]
    assert user_requests(atif, before_step=0) == []


def test_pick_requests_keeps_the_first_and_the_last_two():
    assert pick_requests(["a", "b", "c", "d", "e"]) == ["a", "d", "e"]
    assert pick_requests(["a", "b"]) == ["a", "b"]
    assert pick_requests(["a"]) == ["a"]
    assert pick_requests([]) == []


def test_rewrite_root_replaces_whole_path_prefixes_only():
    text = "cd /home/dev/app && cat /home/dev/app/x.py /home/dev/application '/home/dev/app'"
    assert rewrite_root(text, "/home/dev/app", "/app") == (
        "cd /app && cat /app/x.py /home/dev/application '/app'"
    )
    assert rewrite_root(text, "/", "/app") == text


def test_instruction_quotes_requests_and_fences_the_command_and_output():
    atif = _atif(("user", "Make totals add tax.\nSecond line.", {}), ("agent", "", {}))
    text = build_instruction(
        atif,
        before_step=1,
        command="python -m pytest -q",
        cwd="pkg",
        output="E   assert 1 == 2\n```\nnested fence",
        exit_code=1,
        root="/home/dev/proj",
        project_dir="/app",
    )
    assert "> Make totals add tax.\n> Second line." in text
    assert "Run from `/app/pkg`:" in text
    assert "```sh\npython -m pytest -q\n```" in text
    assert "````text\nE   assert 1 == 2\n```\nnested fence\n````" in text
    assert "exits with status 1" in text
    assert "do not delete, skip or weaken tests" in text
    assert "not identical" not in text
    edited = build_instruction(
        atif,
        before_step=1,
        command="x",
        cwd=".",
        output="",
        exit_code=2,
        root="/",
        project_dir="/app",
        fix_edits_tests=True,
    )
    assert "(no output)" in edited and "not identical" in edited
    assert "## What the user asked for" not in build_instruction(
        _atif(),
        before_step=0,
        command="x",
        cwd=".",
        output="o",
        exit_code=1,
        root="/",
        project_dir="/app",
    )


def _files(blobs: MemoryBlobs, **contents: bytes) -> dict[str, str]:
    return {name.replace("__", "/"): blobs.put(data) for name, data in contents.items()}


def test_added_lines_are_significant_lines_new_in_the_reference():
    blobs = MemoryBlobs()
    start = _files(blobs, calc=b"def add(a, b):\n    return a - b\n", old=b"gone_line_value = 1\n")
    ref = _files(
        blobs,
        calc=b"def add(a, b):\n    total = a + b\n    return total\n}\n",
        new=b"NEW_CONSTANT = 42\n",
        image=b"\x89PNG\r\n\x1a\n\xff\xfe",
    )
    assert added_lines(start, ref, blobs) == ["NEW_CONSTANT = 42", "return total", "total = a + b"]


def test_leaks_finds_an_added_line_in_the_instruction_and_ignores_the_rest():
    blobs = MemoryBlobs()
    start = _files(blobs, calc=b"def add(a, b):\n    return a - b\n")
    ref = _files(blobs, calc=b"def add(a, b):\n    return a + b\n    return None\n")
    assert leaks("The fix: `return a + b`", start, ref, blobs) == ["return a + b"]
    # Lines the start already had, common lines and short lines are not leaks.
    assert leaks("def add(a, b): ... return None ... a + b", start, ref, blobs) == []
