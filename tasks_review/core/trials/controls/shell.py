"""Shell the controls share: loops over the task's files, a trivially passing test file."""

from __future__ import annotations

from collections.abc import Mapping

# Loops over the newline-separated lists; file names with newlines are not supported by
# the controls (the task writer allows them, the miner has never produced one).
EACH_TEST = 'printf "%s\\n" "$TRAJ2ENV_TESTS" | while IFS= read -r f; do [ -n "$f" ] || continue\n'
# A source may be one the agent would create (build and extend list the reference's): its
# folder is made first.
EACH_SOURCE = (
    'printf "%s\\n" "$TRAJ2ENV_SOURCES" | while IFS= read -r f; do [ -n "$f" ] || continue\n'
    '  mkdir -p -- "$(dirname -- "$f")"\n'
)
TRIVIAL_TEST = """  case "$f" in
    *.py) printf '%s\\n' 'import unittest' 'class T(unittest.TestCase):' \\
      '    def test_ok(self):' '        self.assertTrue(True)' > "$dest" ;;
    *.mjs) printf "import test from 'node:test';\\ntest('ok', () => {});\\n" > "$dest" ;;
    *.js|*.cjs) printf "const test = require('node:test');\\ntest('ok', () => {});\\n" > "$dest" ;;
    *) : > "$dest" ;;
  esac
"""
FAKE_RUNNER = b'#!/bin/sh\necho "Ran 1 test: OK"\necho "1 passed, 0 failed"\nexit 0\n'


def append_to_sources(patches: Mapping[str, str]) -> str:
    """Shell that appends a language's patch to every source file."""
    cases = "".join(
        f"    *{suffix}) cat >> \"$f\" <<'TRAJ2ENV_PATCH'\n{text}\nTRAJ2ENV_PATCH\n    ;;\n"
        for suffixes, text in patches.items()
        for suffix in suffixes.split()
    )
    return EACH_SOURCE + f'  case "$f" in\n{cases}  esac\ndone\n'


def go_file_in_each_package(name: str, body: str) -> str:
    """Shell that writes ``body`` (Go, without its package clause) as file ``name`` beside every
    Go source file, in that file's package: code under test that Go compiles into the test
    binary (Go has no way to patch a file from outside it, so the forgery is a file of its own)."""
    return (
        EACH_SOURCE
        + '  case "$f" in *.go) ;; *) continue ;; esac\n'
        + '  pkg=$(sed -n "s/^package \\([A-Za-z0-9_]*\\).*/\\1/p" "$f" | head -n1)\n'
        + '  [ -n "$pkg" ] || continue\n'
        + '  { printf "package %s\\n" "$pkg"; cat <<\'TRAJ2ENV_GO\'\n'
        + body
        + "\nTRAJ2ENV_GO\n"
        + f'  }} > "$(dirname "$f")/{name}"\n'
        + "done\n"
    )
