"""How many tests a test run executed, as its own output says.

>>> tests_executed("....\\n4 passed in 0.12s")
4
>>> tests_executed("3 tests collected in 0.01s"), tests_executed("usage: pytest [options]")
(0, None)

An exit status of 0 proves nothing ran badly, not that anything ran: ``pytest
--collect-only``, ``pytest --help`` and ``pytest -k nomatch`` all exit 0 (or 5) having run no
test. A check counts only when its output shows at least one test executed. Each runner's
summary line is read: pytest's ``N passed`` / ``N failed``, unittest's ``Ran N tests``,
jest/vitest's ``Tests: N passed``, mocha's ``N passing``, node's ``# tests N`` / ``ℹ tests N``,
go's ``--- PASS`` lines or ``ok pkg`` (not ``[no tests to run]``), cargo's ``test result``,
rspec's ``N examples``, TAP's ``ok N``, dotnet's ``Passed: N``. The largest count found wins;
an output that shows none ran gives 0, one that shows nothing gives None.
"""

from __future__ import annotations

import re

_COUNTS = tuple(
    re.compile(p, re.M)
    for p in (
        r"\b(\d+) (?:passed|failed|xfailed|xpassed|errors?)\b",  # pytest, jest, vitest, cargo
        r"^Ran (\d+) tests?\b",  # unittest
        r"\b(\d+) (?:passing|failing)\b",  # mocha
        r"^(?:# |ℹ )tests (\d+)\b",  # node --test (TAP and spec reporters)
        r"\b(\d+) examples?, \d+ failures?",  # rspec
        r"\bTests: (\d+), Assertions",  # phpunit
        r"\bOK \((\d+) tests?,",  # phpunit
        r"\b(?:Passed|Failed|Total tests):\s*(\d+)",  # dotnet
    )
)
# Lines each of which is one test executed.
_ONE_EACH = tuple(
    re.compile(p, re.M)
    for p in (
        r"^\s*--- (?:PASS|FAIL): ",  # go test -v
        r"^(?:not )?ok \d+\b",  # TAP (bats, node, prove)
    )
)
# A go package whose tests ran and passed; "[no tests to run]" says none did.
_GO_OK = re.compile(r"^(?:ok|FAIL)\s+\S+\s+[\d.]+s(?![^\n]*\[no tests to run\])", re.M)
_NONE_RAN = re.compile(
    r"\bno tests ran\b|\btests? collected\b|\bRan 0 tests\b|\bNo tests found\b|"
    r"\[no tests to run\]|\[no test files\]|\b0 passed\b|\bdeselected\b|\bno tests? to run\b",
    re.I,
)


def tests_executed(output: str) -> int | None:
    counts = [int(m.group(1)) for pattern in _COUNTS for m in pattern.finditer(output)]
    counts += [len(pattern.findall(output)) for pattern in _ONE_EACH]
    counts.append(len(_GO_OK.findall(output)))
    best = max(counts, default=0)
    if best > 0:
        return best
    return 0 if _NONE_RAN.search(output) else None
