"""What the checks print, as the samples record it: unittest's verbose report, node's TAP.

Captured from Python 3.12 and Node 20 on the samples' own files, with only the timings
frozen; ``tests/test_samples.py`` runs every project again to keep it that way.
"""

from __future__ import annotations


def unittest_verbose(
    module: str,
    results: list[tuple[str, str, str]],
    elapsed: str,
    failure: tuple[str, str, str, int, str, list[str]] | None = None,
) -> str:
    """What ``python -m unittest -v`` prints (on stderr) for these results.

    ``results`` are (class, method, "ok" | "FAIL") in run order; ``failure`` is
    (class, method, file, line, source line, assertion message lines).
    """
    out = [f"{meth} ({module}.{cls}.{meth}) ... {status}" for cls, meth, status in results]
    if failure:
        cls, meth, file, line, source, message = failure
        out += [
            "",
            "=" * 70,
            f"FAIL: {meth} ({module}.{cls}.{meth})",
            "-" * 70,
            "Traceback (most recent call last):",
            f'  File "{file}", line {line}, in {meth}',
            f"    {source}",
            *message,
        ]
    out += ["", "-" * 70, f"Ran {len(results)} tests in {elapsed}", ""]
    out.append("FAILED (failures=1)" if failure else "OK")
    return "\n".join(out) + "\n"


NODE_STACK = """\
    Test.runInAsyncScope (node:async_hooks:206:9)
    Test.run (node:internal/test_runner/test:796:25)
    Test.processPendingSubtests (node:internal/test_runner/test:526:18)
    Test.postRun (node:internal/test_runner/test:889:19)
    Test.run (node:internal/test_runner/test:835:12)
    async Test.processPendingSubtests (node:internal/test_runner/test:526:7)
"""


def tap_report(tests: list[tuple[str, str]], failure: dict | None, total_ms: str) -> str:
    """What ``node --test`` (Node 20, TAP reporter) prints for these tests.

    ``tests`` are (name, duration_ms); ``failure`` describes the one failing test.
    """
    out = ["TAP version 13"]
    for number, (name, duration) in enumerate(tests, 1):
        out.append(f"# Subtest: {name}")
        if failure and failure["name"] == name:
            out += [
                f"not ok {number} - {name}",
                "  ---",
                f"  duration_ms: {duration}",
                f"  location: '{failure['location']}'",
                "  failureType: 'testCodeFailure'",
                "  error: |-",
                "    Expected values to be strictly equal:",
                "    + actual - expected",
                "    ",
                f"    + '{failure['actual']}'",
                f"    - '{failure['expected']}'",
                *failure.get("caret", []),
                "  code: 'ERR_ASSERTION'",
                "  name: 'AssertionError'",
                f"  expected: '{failure['expected']}'",
                f"  actual: '{failure['actual']}'",
                "  operator: 'strictEqual'",
                "  stack: |-",
                f"    TestContext.<anonymous> ({failure['frame']})",
                *NODE_STACK.splitlines(),
                "  ...",
            ]
        else:
            out += [f"ok {number} - {name}", "  ---", f"  duration_ms: {duration}", "  ..."]
    failed = 1 if failure else 0
    out += [
        f"1..{len(tests)}",
        f"# tests {len(tests)}",
        "# suites 0",
        f"# pass {len(tests) - failed}",
        f"# fail {failed}",
        "# cancelled 0",
        "# skipped 0",
        "# todo 0",
        f"# duration_ms {total_ms}",
    ]
    return "\n".join(out) + "\n"
