"""One redactor for everything the product shows or writes: pages, task files, training exports.

>>> r = redact("export OPENAI_API_KEY=sk-proj-" + "a1B2" * 8 + "  # mail me: ann@corp.eu")
>>> r.value
'export OPENAI_API_KEY=[REDACTED:openai_api_key]  # mail me: [REDACTED:email]'
>>> r.counts
{'email': 1, 'openai_api_key': 1}
>>> redact_data({"password": "hunter2", "cmd": ["echo", "ok"]}).value
{'password': '[REDACTED:secret_assignment]', 'cmd': ['echo', 'ok']}
>>> still_has_secrets(r.value)
()

Built on detect-secrets' maintained provider patterns (its regex plugins' ``denylist``, used for
their spans rather than through its file scanner, which reports values without positions and
reads its settings from a baseline) plus what it misses or stops short on: newer token shapes
(OpenAI ``sk-proj-``, Anthropic, GitHub ``github_pat_``, Hugging Face, npm, Google, Stripe keys
longer than its 24 characters), whole JWTs (its pattern ends before the signature), bearer
headers, private-key blocks (it matches only the BEGIN line; here also quoted, commented,
numbered by a file viewer or cut at either end), PuTTY key files and age identities, AWS secret
keys it needs quotes for (named or bare beside their key id, and the columns of the console's
credential CSVs), database clients' passwords (``mysql -pSECRET``, ``PGPASSWORD=``) and other
programs' password arguments (``sshpass -p``, ``docker login -p``, ``redis-cli -a``, ``.netrc``),
authenticating curl headers, passwords in URLs and ``curl -u``, ``.env``-style assignments and
e-mail addresses (but not those at the domains reserved for examples, which fill test fixtures).
Its entropy and keyword plugins are left out on
purpose: they flag every git sha and much ordinary code, and a redactor that rewrites code in
training data teaches the wrong thing. Overlapping findings merge into one replacement typed by
the most specific rule, so no fragment of a secret survives between two partial matches.

Replacements are deterministic (``[REDACTED:<type>]``, followed by the line breaks of a secret
that spans lines) and leave every other character as it was.
Speed comes from the shape of the patterns, not from skipping text: each starts with a literal
(left boundaries are checked in code, since a leading lookbehind disables the regex engine's
literal search), case-insensitive ones run on the lowercased text, repeats are bounded, and a rule
whose marker is absent does not run (benchmarks/bench_redact.py measures MB/s).

The package: ``rule`` (what a rule is, the value checks rules share), one module per family of
rules (``keys``, ``tokens``, ``context``, ``assignments``), ``engine`` (the rules in priority
order, finding, merging, replacing), ``data`` (JSON-like data) and ``report`` (the result and its
counts).
"""

from .data import redact_data
from .engine import redact, still_has_secrets
from .report import TOKEN, Redacted, merge_counts, replaced_counts

__all__ = [
    "TOKEN",
    "Redacted",
    "merge_counts",
    "redact",
    "redact_data",
    "replaced_counts",
    "still_has_secrets",
]
