"""Secrets planted in text, text that only resembles them, and trajectory-like text to time the
redactor on (benchmarks/bench_redact.py reads it too).

Planted secrets are assembled at run time from a seeded generator, never written out whole in
this file: a literal token shape here would trip every secret scanner the repository meets.
"""

from __future__ import annotations

import base64
import json
import random
import string

_rng = random.Random(20261201)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def b64url(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def pem(kind: str, lines: int = 6, width: int = 64) -> str:
    body = "\n".join(rand(width, ALNUM + "+/") for _ in range(lines))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


def ppk(algorithm: str = "ssh-ed25519", public: int = 2, private: int = 1) -> str:
    """A PuTTY key file (.ppk, format 3): headers, the public lines, the private lines, the MAC."""

    def lines(n: int) -> list[str]:
        return [rand(64 if i < n - 1 else 44, ALNUM + "+/") for i in range(n)]

    return "\n".join(
        [
            f"PuTTY-User-Key-File-3: {algorithm}",
            "Encryption: none",
            "Comment: " + algorithm.removeprefix("ssh-") + "-key-20261201",
            f"Public-Lines: {public}",
            *lines(public),
            f"Private-Lines: {private}",
            *lines(private),
            "Private-MAC: " + rand(64, "0123456789abcdef"),
        ]
    )


BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def age_identity() -> str:
    """An age X25519 identity: prefix, bech32 separator, 52 data and 6 checksum characters."""
    return "AGE-SECRET-KEY-1" + rand(58, BECH32.upper())


# (type, secret, the text it is planted in: {s} marks the secret)
PLANTED: list[tuple[str, str, str]] = [
    (
        "aws_access_key_id",
        "AKIA" + rand(16, string.ascii_uppercase + string.digits),
        "aws configure set aws_access_key_id {s}",
    ),
    ("aws_secret_access_key", rand(40, ALNUM + "/+"), "AWS_SECRET_ACCESS_KEY={s}\n"),
    ("aws_secret_access_key", rand(40, ALNUM + "/+"), 'aws_secret_access_key = "{s}"'),
    ("github_token", "ghp_" + rand(36), "git clone https://x:{s}@github.com/o/r.git"),
    ("github_token", "gho_" + rand(36), "GH said: token {s} expired"),
    (
        "github_token",
        "github_pat_" + rand(22) + "_" + rand(59),
        "gh auth login --with-token <<< {s}",
    ),
    ("openai_api_key", "sk-" + rand(48), "client = OpenAI(api_key='{s}')"),
    ("openai_api_key", "sk-proj-" + rand(120, ALNUM + "_-"), "OPENAI_API_KEY={s}"),
    ("anthropic_api_key", "sk-ant-api03-" + rand(93, ALNUM + "_-"), "x-api-key: {s}"),
    (
        "slack_token",
        "xoxb-" + rand(12, string.digits) + "-" + rand(13, string.digits) + "-" + rand(24),
        "SLACK: {s}.",
    ),
    (
        "slack_webhook",
        "https://hooks.slack.com/services/T" + rand(8) + "/B" + rand(8) + "/" + rand(24),
        "curl -X POST {s} -d '{{}}'",
    ),
    ("google_api_key", "AIza" + rand(35, ALNUM + "_-"), "maps.js?key={s}&v=3"),
    ("stripe_key", "sk_live_" + rand(99), "stripe.api_key = {s}"),
    ("stripe_key", "rk_live_" + rand(24), "restricted {s} here"),
    ("huggingface_token", "hf_" + rand(34), "huggingface-cli login --token={s}"),
    ("npm_token", "npm_" + rand(36), "//registry.npmjs.org/:_authToken={s}"),
    (
        "jwt",
        b64url({"alg": "HS256", "typ": "JWT"})
        + "."
        + b64url({"sub": "42", "exp": 1})
        + "."
        + rand(43, ALNUM + "_-"),
        "cookie session={s}; Path=/",
    ),
    ("bearer_token", rand(40, ALNUM + "._-"), "curl -H 'Authorization: Bearer {s}' api"),
    ("private_key", pem("RSA "), "key file:\n{s}\nend"),
    ("private_key", pem("OPENSSH ", lines=4, width=70), "{s}"),
    ("private_key", pem("EC "), "{s}"),
    ("private_key", ppk(), "saved to id.ppk:\n{s}\n$ ls"),
    ("private_key", ppk("ssh-rsa", public=6, private=14), "{s}"),
    (
        "age_secret_key",
        age_identity(),
        "# created: 2026-12-01T10:00:00Z\n# public key: age1" + rand(58, BECH32) + "\n{s}\n",
    ),
    ("age_secret_key", age_identity(), "export SOPS_AGE_KEY={s}"),
    ("url_password", "S3cr3t-P4ss", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app"),
    ("url_password", "hunter2hunter2", "curl -u admin:{s} https://ci.example.com"),
    ("secret_assignment", "correct-horse-9", "DB_PASSWORD={s}\n"),
    ("secret_assignment", "s3cr3t-value", 'export CLIENT_SECRET="{s}"'),
    ("secret_assignment", "abcd1234efgh", '{{"api_key": "{s}", "n": 1}}'),
    ("secret_assignment", "Tr0ub4dor3", "database:\n  password: {s}\n  host: db\n"),
    ("secret_assignment", "letmein99", "mysql --password {s} -h db"),
    ("secret_assignment", "hunter2hunter2", 'auth:\n  password: "{s}"\n'),
    ("secret_assignment", rand(24), "const config = {{ token: '{s}', retries: 3 }}"),
    ("secret_assignment", rand(24), "llm --api-key={s} 'hi'"),
    ("auth_header", rand(24), "curl -H 'X-Api-Key: {s}' https://api.x.io"),
    ("auth_header", rand(24), 'curl -s -H "X-Auth-Token: {s}" https://api.x.io/v1'),
    ("email", "ann.smith+ci@example.co.uk", "Signed-off-by: Ann <{s}>"),
    ("email", "ops@corp.acme.io", "mailto:{s}"),
]


def planted_text() -> str:
    return "\n".join(
        f"line {i}: " + ctx.format(s=secret) for i, (_, secret, ctx) in enumerate(PLANTED)
    )


NEAR_MISSES = [
    "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "<img src='data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='>",
    "password=",
    'PASSWORD=""',
    "api_key: ${API_KEY}",
    "SECRET_KEY=<your-secret-key>",
    "token = get_token(user)",
    "const apiKey = await getApiKeyForModel(this.model);",
    "let secret = new Secret(name)",
    "token = yield fetch_token()",
    "password = hash_of password(raw)",
    "password = os.environ['DB_PASSWORD']",
    "if password == expected:",
    "max_tokens=4096",
    "tokenizer=AutoTokenizer.from_pretrained(name)",
    "A risk-free plan and a task-based flow, ask-me-anything.",
    "Password: see the vault",
    'Password: "see the vault"',
    'type Login = { password: "string" }',
    "curl -H 'Content-Type: application/json' -H 'Authorization-Scheme: none' https://api",
    "Bearer authentication is described in RFC 6750.",
    "git remote add origin git@github.com:owner/repo.git",
    "npm i @types/node@18.0.0 && pip install foo==1.2 --use-pep517",
    "hf_hub_download(repo_id='gpt2', filename='config.json')",
    "matrix = x@W.T  # decorators: @property",
    "sha256:" + "ab" * 32,
    "assert linkify('mail user@example.com') and ci@build.test",
    "-----BEGIN RSA PRIVATE KEY----- is what the parser looks for",
]


def realistic_trajectory_text(target_bytes: int) -> str:
    """ATIF-like JSON lines: prose, tool calls with shell commands, file reads and test output,
    with a secret every few hundred steps, as a session log carries them."""
    parts: list[str] = []
    size = 0
    i = 0
    while size < target_bytes:
        step = {
            "step_id": i,
            "source": "agent",
            "message": "Let me run the focused tests before editing calc.py, then fix add().",
            "tool_calls": [
                {"function_name": "Bash", "arguments": {"command": "pytest -q tests/test_calc.py"}}
            ],
            "observation": {
                "results": [
                    {
                        "content": "\n".join(
                            f"    {n:>4}→def f{n}(a, b):  # sha {rand(40, '0123456789abcdef')}"
                            for n in range(20)
                        )
                        + "\nFAILED tests/test_calc.py::test_add - assert 3 == 4\n"
                    }
                ]
            },
        }
        if i % 300 == 7:
            step["message"] += " export GITHUB_TOKEN=ghp_" + rand(36)
        line = json.dumps(step)
        parts.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(parts)
