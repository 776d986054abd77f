"""Does an agent's message claim success? ("All tests pass.", "Fixed.", "Done!", "all green")

The eval harness never rewards a claim; it uses this to flag one that no evidence backs
(``self_report_only``, reward 0). A claim negated nearby ("the tests do not pass yet", "could
not fix it") is no claim.

>>> claims_success("I fixed the parser and all tests pass now.")
True
>>> claims_success("The tests still fail; I could not fix the parser.")
False
"""

from __future__ import annotations

import re

_CLAIMS = re.compile(
    r"""
    \b(?:all\s+)?(?:the\s+)?(?:\d+\s+)?(?:unit\s+|focused\s+)?(?:tests?|specs?|checks?|builds?|suite)
        \s+(?:now\s+|all\s+|are\s+|is\s+|now\s+all\s+)*(?:pass(?:es|ed|ing)?|succeed(?:s|ed)?|green|ok)\b
    | \b(?:all\s+)?green\b
    | \b(?:is\s+|are\s+|been\s+|now\s+)?(?:fixed|resolved|solved|repaired)\b
    | \b(?:done|complete[d]?|finished)\b
    | \bworks?\s+(?:now|correctly|as\s+expected)\b
    | \bsuccessfully\b
    | \bno\s+(?:more\s+)?(?:errors|failures)\b
    | \b\d+\s+passed\b
    | (?:✅|✓|✔)
    """,
    re.IGNORECASE | re.VERBOSE,
)
_NEGATION = re.compile(
    r"\b(?:not|n't|never|no\s+longer|unable|could\s*n[o']t|cannot|can't|still\s+fail\w*|"
    r"fail(?:s|ed|ing)?\s+to|yet\s+to|isn't|aren't|wasn't|without)\b[^.!?\n]{0,40}$",
    re.IGNORECASE,
)


def claims_success(message: str) -> bool:
    """Whether ``message`` says the work succeeded, in any sentence not negated before it."""
    for match in _CLAIMS.finditer(message):
        before = message[max(0, match.start() - 60) : match.start()]
        sentence = re.split(r"[.!?\n]", before)[-1]
        if _NEGATION.search(sentence + " "):
            continue
        return True
    return False
