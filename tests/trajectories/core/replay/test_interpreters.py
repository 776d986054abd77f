"""Interpreters: inline code that names nothing that writes only reads, a script is opaque, and a
nested shell's script is walked like the outer command line."""

from __future__ import annotations

import pytest

from .helpers import LOST, UNCERTAIN, after, bash, cc, files_of, presumed_under

KNOWN = {"a.py": "a\n", "b.py": "b\n"}
PRESUMED = presumed_under(KNOWN)


def test_script_output_redirected_to_a_file_loses_it_and_the_directory():
    b = cc()
    bash(b, "python gen.py > a.txt")
    assert files_of(b) == {"a.txt": LOST, "**": UNCERTAIN}


def test_a_python_script_may_touch_anything_in_its_directory():
    assert after("python build.py", files=KNOWN) == PRESUMED


@pytest.mark.parametrize(
    "command", ["python -c 'import sys; print(sys.version)'", "node -e 'console.log(1)'"]
)
def test_inline_code_that_only_reads_marks_nothing_lost(command):
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, command)
    assert files_of(b) == {"a.py": "a\n"}


def test_inline_code_that_writes_makes_the_tree_uncertain():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, "python3 -c \"open('a.py', 'w').write('b')\"")
    assert files_of(b) == presumed_under({"a.py": "a\n"})


@pytest.mark.parametrize(
    "command, expected",
    [
        ("python - <<'EOF'\nprint(1)\nEOF", KNOWN),
        ("python - <<'EOF'\nopen('a.py', 'w').write('x')\nEOF", PRESUMED),
        ("echo 'print(1)' | python3", KNOWN),
        ("python3", KNOWN),
        ('ruby -e \'File.write("a.py", "x")\'', PRESUMED),
        ("node script.js", PRESUMED),
    ],
)
def test_code_from_standard_input_is_judged_like_inline_code(command, expected):
    assert after(command, files=KNOWN) == expected


@pytest.mark.parametrize(
    "command, expected",
    [
        ("python -m venv .venv", {**KNOWN, ".venv/**": UNCERTAIN}),
        ("python -m http.server", KNOWN),
        ("python -m mytool", PRESUMED),
    ],
)
def test_python_modules_make_a_virtualenv_change_nothing_or_may_write(command, expected):
    assert after(command, files=KNOWN) == expected


def test_nested_shell_scripts_are_walked():
    b = cc()
    bash(b, "bash -c 'cd sub && echo hi > f.txt'")
    assert files_of(b) == {"sub/f.txt": "hi\n"}


def test_a_shell_reading_its_script_from_a_here_document_walks_it():
    assert after("bash <<'EOF'\necho inside > in.txt\nEOF") == {"in.txt": "inside\n"}


def test_a_shell_script_file_is_opaque():
    assert after("sh scripts/build.sh", files=KNOWN) == PRESUMED
