"""A second look at what an export is about to write, by a detector that shares no code and no
pattern with the redactor: atif-scan's credential finder (its token shapes, private-key blocks
and secret-named assignments, with its own exclusions for dummy values and placeholders).

>>> second_check('{"content": "push with ghp_' + "Zx9" * 12 + '"}')
('token starting ghp_',)
>>> second_check('{"content": "push with [REDACTED:github_token]"}')
()

The redactor and its after-the-fact check (``still_has_secrets``) run the same rules, so a
shape those rules do not know passes both; this check fails independently of them. What it
names is safe to show: the kind of finding, a token's first four characters, an assignment's
name, never a value.
"""

from __future__ import annotations

from importlib.metadata import version

from atif_scan.data import credentials

DETECTOR = f"atif-scan {version('atif-scan')} (atif_scan.data.credentials.find_exposures)"


def second_check(text: str) -> tuple[str, ...]:
    """What the independent detector finds in ``text``, described without the values."""
    found = set()
    for finding in credentials.find_exposures(text):
        start, end = finding.value
        if finding.kind == "token":
            value = text[start:end]
            found.add(
                "private key block" if value.startswith("-----") else f"token starting {value[:4]}"
            )
        else:
            name_start, name_end = finding.span
            name = text[name_start : min(name_end, start)].strip(" \t\"'=:-")
            found.add(f"value named {name[:40]}" if name else "secret-named value")
    return tuple(sorted(found))
