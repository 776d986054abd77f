"""Private-key blocks: whole, JSON-escaped, cut at either end, and decorated as logs carry them;
code and prose naming the markers stay as they are."""

from __future__ import annotations

import json

import pytest

from trajectories.core.redact import redact, still_has_secrets

from .planted import pem, ppk


def test_a_private_key_inside_json_escaped_text_is_found():
    key = pem("RSA ")
    serialised = json.dumps({"content": f"cat id_rsa\n{key}\n"})
    assert still_has_secrets(serialised) == ("private_key",)
    assert key.splitlines()[1] not in redact(serialised).value


def test_a_truncated_private_key_loses_its_body():
    key = pem("RSA ").rsplit("\n", 2)[0]  # the END line and the last body line cut off
    result = redact("output truncated:\n" + key)
    assert result.counts == {"private_key": 1}
    assert all(line not in result.value for line in key.splitlines()[1:])


def test_a_redacted_private_key_block_keeps_the_lines_after_it_where_they_were():
    # A file view numbers lines: a block of 8 lines replaced by one would shift the rest by 7.
    lines = ["import os", 'KEY = """', *pem("RSA ").splitlines(), '"""', "def main():", "    pass"]
    for newline in ("\n", "\r\n"):
        text = newline.join(lines) + newline
        result = redact(text)
        assert result.counts == {"private_key": 1}
        assert result.value.count("\n") == text.count("\n")
        after = result.value.split(newline)
        assert after.index("def main():") == lines.index("def main():")
        assert after[2] == "[REDACTED:private_key]" and after[3:10] == [""] * 7


def _gutter(lines: list[str], arrow: str = "\u2192") -> str:
    return "\n".join(f"{n:>6}{arrow}{line}" for n, line in enumerate(lines, 1))


def _cut_middle(text: str, keep: int) -> str:
    return f"{text[:keep]}\n[... {len(text) - 2 * keep} characters omitted ...]\n{text[-keep:]}"


# How a key block reaches a log besides bare: every line decorated by a viewer, a quote, a
# comment or a string literal, or the block cut in its middle or at the end of a long line by a
# tool keeping head and tail. Each takes (the key, its lines).
KEY_SHAPES = {
    "quoted": lambda k, ls: "".join(f"> {line}\n" for line in ls),
    "quoted twice": lambda k, ls: "".join(f"> > {line}\n" for line in ls),
    "shell comment": lambda k, ls: "".join(f"# {line}\n" for line in ls),
    "c comment": lambda k, ls: "/*\n" + "".join(f" * {line}\n" for line in ls) + " */",
    "read tool gutter": lambda k, ls: _gutter(ls),
    "read tool gutter in json": lambda k, ls: json.dumps({"content": _gutter(ls)}),
    "read tool gutter with tabs in json": lambda k, ls: json.dumps(_gutter(ls, "\t")),
    "python string pieces": lambda k, ls: "K = (\n" + "".join(f'    "{x}\\n"\n' for x in ls) + ")",
    "js string pieces": lambda k, ls: "K =\n" + "".join(f"  '{x}\\n' +\n" for x in ls) + "  '';",
    "cut in the middle": lambda k, ls: _cut_middle(k, 160),
    "cut in the middle, quoted": lambda k, ls: "".join(
        f"> {line}\n" for line in _cut_middle(k, 160).splitlines()
    ),
    "head only": lambda k, ls: "\n".join(ls[:4]) + "\n[... 9 lines omitted ...]\nDone.",
    "tail only": lambda k, ls: "$ tail -n 3 id_rsa\n" + "\n".join(ls[-3:]),
    "one line, cut": lambda k, ls: " ".join(ls)[:300] + " [... line cut ...]",
    "one line, tail": lambda k, ls: "...: " + " ".join(ls)[-200:],
    "encrypted, quoted": lambda k, ls: "".join(
        f"> {line}\n"
        for line in [ls[0], "Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,0A1B2C3D", "", *ls[1:]]
    ),
}


@pytest.mark.parametrize("shape", KEY_SHAPES)
def test_a_private_key_block_as_logs_carry_it_loses_every_body_line(shape):
    key = pem("RSA ", lines=12)
    lines = key.splitlines()
    text = f"Here it is:\n{KEY_SHAPES[shape](key, lines)}\nThanks!"
    result = redact(text)
    for line in lines[1:-1]:
        for piece in (line[:12], line[-12:]):
            assert piece not in result.value, (shape, result.value)
    assert set(result.counts) == {"private_key"}
    assert result.value.startswith("Here it is:") and result.value.endswith("Thanks!")
    assert still_has_secrets(result.value) == ()


KEY_NEAR_MISSES = [
    'BEGIN = "-----BEGIN RSA PRIVATE KEY-----"\nEND = "-----END RSA PRIVATE KEY-----"',
    'HEADER = "-----BEGIN PRIVATE KEY-----\\n"\nFOOTER = "-----END PRIVATE KEY-----\\n"',
    "-----BEGIN OPENSSH PRIVATE KEY-----\n...\n-----END OPENSSH PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\nMIIE...\n-----END PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\n<paste your key here>\n-----END PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY----- is the marker line that the parser looks for in a file",
    "the block ends at the line reading -----END RSA PRIVATE KEY-----",
    "12:-----BEGIN RSA PRIVATE KEY-----\n40:-----END RSA PRIVATE KEY-----",
    'if line.startswith("-----BEGIN EC PRIVATE KEY-----"):\n    in_key = True\n'
    'elif line.startswith("-----END EC PRIVATE KEY-----"):\n    in_key = False',
]


@pytest.mark.parametrize("text", KEY_NEAR_MISSES)
def test_code_and_prose_naming_the_key_markers_stay_as_they_are(text):
    result = redact(text)
    assert (result.value, result.counts) == (text, {})


# A PuTTY key file as logs carry it; each takes (the file, its lines).
PPK_SHAPES = {
    "bare": lambda k, ls: k,
    "quoted": lambda k, ls: "".join(f"> {line}\n" for line in ls),
    "read tool gutter": lambda k, ls: _gutter(ls),
    "read tool gutter in json": lambda k, ls: json.dumps({"content": _gutter(ls)}),
    "python string pieces": lambda k, ls: "K = (\n" + "".join(f'    "{x}\\n"\n' for x in ls) + ")",
    "cut before its mac": lambda k, ls: "\n".join(ls[:-2]) + "\n[... 2 lines omitted ...]",
    "crlf": lambda k, ls: "\r\n".join(ls),
}


@pytest.mark.parametrize("shape", PPK_SHAPES)
def test_a_putty_key_file_as_logs_carry_it_loses_its_private_lines(shape):
    key = ppk("ssh-rsa", public=6, private=14)
    lines = key.splitlines()
    private = lines[lines.index("Private-Lines: 14") + 1 : -1]
    text = f"$ cat ~/.ssh/id.ppk\n{PPK_SHAPES[shape](key, lines)}\nThanks!"
    result = redact(text)
    for line in private:
        for piece in (line[:12], line[-12:]):
            assert piece not in result.value, (shape, result.value)
    assert result.counts == {"private_key": 1}
    assert result.value.startswith("$ cat ~/.ssh/id.ppk\n") and result.value.endswith("Thanks!")
    assert result.value.count("\n") == text.count("\n")
    assert still_has_secrets(result.value) == ()


PPK_NEAR_MISSES = [
    'if first_line.startswith("PuTTY-User-Key-File-"):\n    return "ppk"',
    "A .ppk file starts with a line such as PuTTY-User-Key-File-3: ssh-ed25519",
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: k\nPublic-Lines: 2\n"
    "AAAAC3NzaC1lZDI1NTE5AAAAIHc2ZW1lIHB1YmxpYyBrZXkgYnl0ZXMgaGVyZQ\n"
    "AAAA\n[... the rest of the file omitted ...]",
    "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: k\nPublic-Lines: 1\nAAAA\n"
    "Private-Lines: 1\n<your private key>\nPrivate-MAC: <mac>",
]


@pytest.mark.parametrize("text", PPK_NEAR_MISSES)
def test_code_and_prose_naming_the_putty_header_and_a_file_without_private_lines_stay(text):
    result = redact(text)
    assert (result.value, result.counts) == (text, {})
