"""The redactor: every planted secret replaced and counted by type, near-misses left alone,
nothing else touched, nested data, the after-the-fact check, and its speed.

Planted secrets are assembled at run time from a seeded generator, never written out whole in
this file: a literal token shape here would trip every secret scanner the repository meets.
"""

from __future__ import annotations

import base64
import doctest
import json
import random
import string
import time
from collections import Counter

import pytest

from trajectories.core import redact as redact_module
from trajectories.core.redact import (
    merge_counts,
    redact,
    redact_data,
    replaced_counts,
    still_has_secrets,
)

_rng = random.Random(20261201)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def b64url(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def pem(kind: str, lines: int = 6, width: int = 64) -> str:
    body = "\n".join(rand(width, ALNUM + "+/") for _ in range(lines))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


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


def test_every_planted_secret_is_replaced_and_counted_by_type():
    text = planted_text()
    result = redact(text)
    for kind, secret, _ in PLANTED:
        assert secret not in result.value, f"{kind} survived"
    assert result.counts == dict(sorted(Counter(kind for kind, _, _ in PLANTED).items()))
    assert result.total == len(PLANTED)
    assert still_has_secrets(result.value) == ()


@pytest.mark.parametrize(("kind", "secret", "context"), PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_secret_alone_is_one_typed_replacement_and_nothing_else_changes(
    kind, secret, context
):
    text = context.format(s=secret)
    result = redact(text)
    assert result.counts == {kind: 1}
    # A secret over several lines leaves its line breaks behind its token.
    assert result.value == context.format(s=f"[REDACTED:{kind}]" + "\n" * secret.count("\n"))


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


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_stay_as_they_are(text):
    result = redact(text)
    assert (result.value, result.counts) == (text, {})


def test_a_url_keeps_its_user_and_host_when_its_password_goes():
    result = redact("git push https://deploy:pa55word-x@git.example.com/app.git main")
    assert (
        result.value
        == "git push https://deploy:[REDACTED:url_password]@git.example.com/app.git main"
    )
    assert result.counts == {"url_password": 1}


def test_a_long_key_is_replaced_whole_where_the_maintained_pattern_stops_short():
    # detect-secrets matches 24 characters of a Stripe key; the merged finding covers all 99.
    secret = "sk_live_" + rand(99)
    assert redact(f"KEY {secret} END").value == "KEY [REDACTED:stripe_key] END"


def test_a_key_under_a_secret_name_is_one_replacement_of_the_more_specific_type():
    secret = "sk-proj-" + rand(64)
    result = redact(f"OPENAI_API_KEY={secret}")
    assert result.value == "OPENAI_API_KEY=[REDACTED:openai_api_key]"
    assert result.counts == {"openai_api_key": 1}


def test_redaction_is_idempotent():
    once = redact(planted_text())
    twice = redact(once.value)
    assert twice.value == once.value
    assert twice.counts == {}


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


AWS_ID = "AKIA" + rand(16, string.ascii_uppercase + string.digits)
AWS_SECRET = rand(38, ALNUM + "/+") + "a/"
DB_PASSWORD = "S3cr3t-" + rand(8)
CONSOLE_PASSWORD = "Xy7#pQ2!" + rand(6)
CSV_CONSOLE = (
    "User name,Password,Access key ID,Secret access key,Console login link\n"
    "ci-bot,{pw},{id},{sk},https://123456789012.signin.aws.amazon.com/console\n"
)
CSV_KEYS = "Access key ID,Secret access key\n{id},{sk}\n"

# Secrets known by what stands near them: a bare AWS secret next to its key id, the columns of
# the AWS console's credential files, a database client's password flag or variable. Each text
# (with {id}, {sk}, {pw} for the secrets) and what it reads after redaction.
NEAR_CONTEXT = [
    (
        "Use access key {id} and secret {sk} for the deploy.",
        "Use access key [REDACTED:aws_access_key_id] and secret "
        "[REDACTED:aws_secret_access_key] for the deploy.",
    ),
    (
        "the secret is {sk}\nand the key id {id}",
        "the secret is [REDACTED:aws_secret_access_key]\nand the key id "
        "[REDACTED:aws_access_key_id]",
    ),
    (
        '{{"AccessKeyId": "{id}", "SecretAccessKey": "{sk}"}}',
        '{{"AccessKeyId": "[REDACTED:aws_access_key_id]", '
        '"SecretAccessKey": "[REDACTED:aws_secret_access_key]"}}',
    ),
    ("aws_secret_access_key {sk}", "aws_secret_access_key [REDACTED:aws_secret_access_key]"),
    (
        "AWS Secret Access Key [None]: {sk}",
        "AWS Secret Access Key [None]: [REDACTED:aws_secret_access_key]",
    ),
    (
        CSV_CONSOLE,
        "User name,Password,Access key ID,Secret access key,Console login link\n"
        "ci-bot,[REDACTED:aws_console_password],[REDACTED:aws_access_key_id],"
        "[REDACTED:aws_secret_access_key],https://123456789012.signin.aws.amazon.com/console\n",
    ),
    (
        CSV_KEYS,
        "Access key ID,Secret access key\n"
        "[REDACTED:aws_access_key_id],[REDACTED:aws_secret_access_key]\n",
    ),
    (
        "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(CSV_KEYS.split("\n"), 1)),
        "     1\u2192Access key ID,Secret access key\n"
        "     2\u2192[REDACTED:aws_access_key_id],[REDACTED:aws_secret_access_key]\n     3\u2192",
    ),
    (
        "User name,Password,Console sign-in URL\nann,{pw},https://acme.signin.aws.amazon.com/console",
        "User name,Password,Console sign-in URL\n"
        "ann,[REDACTED:aws_console_password],https://acme.signin.aws.amazon.com/console",
    ),
    (
        '{{"content": "' + CSV_KEYS.replace("\n", "\\n") + '"}}',  # a tool output in JSON
        '{{"content": "Access key ID,Secret access key\\n'
        '[REDACTED:aws_access_key_id],[REDACTED:aws_secret_access_key]\\n"}}',
    ),
    ("mysql -u root -p{pw} app", "mysql -u root -p[REDACTED:database_password] app"),
    ("mysql -uroot -p'{pw}' -h db", "mysql -uroot -p'[REDACTED:database_password]' -h db"),
    (
        "mysqldump -u root -p{pw} app > dump.sql",
        "mysqldump -u root -p[REDACTED:database_password] app > dump.sql",
    ),
    (
        "docker compose exec db mysql -uapp -p{pw} -e 'show tables' app",
        "docker compose exec db mysql -uapp -p[REDACTED:database_password] -e 'show tables' app",
    ),
    (
        'test: ["CMD", "mysqladmin", "ping", "-h", "localhost", "-uroot", "-p{pw}"]',
        'test: ["CMD", "mysqladmin", "ping", "-h", "localhost", "-uroot", '
        '"-p[REDACTED:database_password]"]',
    ),
    (
        "mysql --password={pw} -u root",
        "mysql --password=[REDACTED:database_password] -u root",
    ),
    (
        "PGPASSWORD={pw} psql -h db -U app",
        "PGPASSWORD=[REDACTED:database_password] psql -h db -U app",
    ),
    ("MYSQL_PWD='{pw}' mysql -u root", "MYSQL_PWD='[REDACTED:database_password]' mysql -u root"),
    ("sshpass -p '{pw}' ssh root@host", "sshpass -p '[REDACTED:cli_password]' ssh root@host"),
    ("sshpass -p{pw} scp a host:", "sshpass -p[REDACTED:cli_password] scp a host:"),
    (
        "docker login -u ann -p {pw} registry.io",
        "docker login -u ann -p [REDACTED:cli_password] registry.io",
    ),
    (
        "redis-cli -h cache -a {pw} --no-auth-warning ping",
        "redis-cli -h cache -a [REDACTED:cli_password] --no-auth-warning ping",
    ),
    (
        "machine api.heroku.com\n  login ann\n  password {pw}\n",
        "machine api.heroku.com\n  login ann\n  password [REDACTED:cli_password]\n",
    ),
]


@pytest.mark.parametrize(("text", "expected"), NEAR_CONTEXT, ids=[t[:30] for t, _ in NEAR_CONTEXT])
def test_a_secret_known_by_its_context_is_replaced_and_typed(text, expected):
    pw = CONSOLE_PASSWORD if "Password," in text else DB_PASSWORD
    result = redact(text.format(id=AWS_ID, sk=AWS_SECRET, pw=pw))
    assert result.value == expected.format()
    assert result.counts == dict(Counter(_TOKEN_KINDS.findall(result.value)))
    assert still_has_secrets(result.value) == ()


_TOKEN_KINDS = __import__("re").compile(r"\[REDACTED:([a-z_]+)\]")


CONTEXT_NEAR_MISSES = [
    # Forty characters near a key id that are not its secret: a git sha, a path, a longer blob.
    "AKIA{tail} was added in 3f786850e387550fdab836ed7e6dc881de23001b",
    "AKIA{tail} is read in tests/test_s3_upload_with_presigned_urls.py",
    "AKIA{tail} signs " + "QUJD" * 30,
    "AKIA{tail} ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCD",
    "mysql -u root -p app",
    "mysql -h db -P 3306 -u app -p",
    'mysqldump -u root -p"$DB_PASS" app',
    "mysql -u root -p${{MYSQL_ROOT_PASSWORD}} app",
    'cmd = "mysql -u root -p" + password + " app"',
    'cmd = f"mysql -u {{user}} -p{{password}} {{db}}"',
    "cursor.execute('mysql -p%s', (pw,))",
    "pip install mysqlclient && python -m pytest -p no:cacheprovider",
    "mysql is up; git log -p",
    "PWD=/home/ann/app make test",
    'sshpass -p "$SSHPASS" ssh host',
    "echo $TOKEN | docker login -u ann --password-stdin ghcr.io",
    "docker run -p 8080:80 nginx && docker login registry.io",
    "redis-cli -h cache ping -a",
    "the machine's login shell asks for a password first",
    "The file has the columns user name,password and a few more\nbob,x",
    "User name,Password,Access key ID,Secret access key\nci-bot,,,\n",
]


@pytest.mark.parametrize("text", CONTEXT_NEAR_MISSES)
def test_text_that_only_resembles_a_secret_in_context_stays_as_it_is(text):
    aws_id = "AKIA" + rand(16, string.ascii_uppercase + string.digits)
    text = text.format(tail=aws_id[4:])
    result = redact(text)
    # The key id itself is a secret; only it goes.
    assert result.value == text.replace(aws_id, "[REDACTED:aws_access_key_id]")


def test_data_is_redacted_inside_with_its_keys_and_other_values_kept():
    token = "ghp_" + rand(36)
    data = {
        "tool_calls": [{"name": "Bash", "arguments": {"command": f"GH_TOKEN={token} gh pr list"}}],
        "env": {"DB_PASSWORD": "pa55-word", "PORT": "5432", "retries": 3, "debug": None},
        "password": "",
        "pair": ("plain", f"see {token}"),
    }
    result = redact_data(data)
    assert result.value == {
        "tool_calls": [
            {
                "name": "Bash",
                "arguments": {"command": "GH_TOKEN=[REDACTED:github_token] gh pr list"},
            }
        ],
        "env": {
            "DB_PASSWORD": "[REDACTED:secret_assignment]",
            "PORT": "5432",
            "retries": 3,
            "debug": None,
        },
        "password": "",
        "pair": ("plain", "see [REDACTED:github_token]"),
    }
    assert result.counts == {"github_token": 2, "secret_assignment": 1}
    assert data["password"] == "" and token in data["pair"][1]  # the input is not mutated


def test_data_gives_the_same_strings_as_redacting_each_alone():
    # redact_data sends a structure's strings through the rules in one pass; no finding may
    # reach across from one string into the next, with or without a NUL in the data.
    strings = [ctx.format(s=secret) for _, secret, ctx in PLANTED] + NEAR_MISSES
    strings += ["-u ops:pa55-w0rd-x", "password: hunter22", "ann@corp.eu", "x\x00y"]
    for batch in (strings, strings[:-1]):
        result = redact_data(batch)
        assert result.value == [redact(s).value for s in batch]
        assert result.counts == merge_counts(redact(s).counts for s in batch)


def test_still_has_secrets_names_what_survived():
    assert still_has_secrets("clean text, no keys") == ()
    found = still_has_secrets("a " + "AKIA" + rand(16, string.ascii_uppercase) + " b ann@x.org")
    assert found == ("aws_access_key_id", "email")


def test_counts_merge_by_type():
    assert merge_counts([{"email": 1}, {"jwt": 2, "email": 3}, {}]) == {"email": 4, "jwt": 2}


def test_the_module_docstring_example_runs():
    failures, tried = doctest.testmod(redact_module, report=False)
    assert tried > 0 and failures == 0


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


def test_redaction_is_fast_enough_for_pages():
    text = realistic_trajectory_text(2_000_000)
    started = time.perf_counter()
    result = redact(text)
    took = time.perf_counter() - started
    assert result.counts.get("secret_assignment", 0) + result.counts.get("github_token", 0) > 0
    # About 6 MB/s on the development machine; the bound leaves room for a loaded CI host.
    assert len(text) / 1e6 / took > 1.0, f"{len(text) / 1e6 / took:.2f} MB/s"


PATHOLOGICAL = {
    "one long word": "a" * 200_000,
    "at signs": "a@" * 100_000,
    "schemes": "x://" * 50_000,
    "an unterminated quote": 'password="' + "a" * 200_000,
    "keys without values": "token:" * 40_000,
    "begin lines without end": ("-----BEGIN RSA PRIVATE KEY-----\n" + "A" * 100 + "\n") * 1500,
    "end lines without begin": ("A" * 64 + "\n-----END RSA PRIVATE KEY-----\n") * 3000,
    "end markers alone": "-----END RSA PRIVATE KEY-----" * 20_000,
    "begin markers on one long line": "-----BEGIN RSA PRIVATE KEY-----" * 20_000 + "\nAAAA" * 9,
    "a long body and many ends": ("A" * 64 + "\n") * 20_000
    + "-----END EC PRIVATE KEY-----\n" * 3000,
    "escaped breaks without end": ("-----BEGIN EC PRIVATE KEY-----" + "\\n" + "B" * 64) * 3000,
    "local parts too long to be addresses": ("a" * 70 + "@") * 3000,
    "program names and many arguments": ("mysql " + "-x " * 30 + "docker login " + "a " * 30)
    * 1500,
    "key ids side by side": ("AKIA" + "B" * 16 + " ") * 10_000,
    "key ids among base64": ("AKIA" + "C" * 16 + " " + "aB3/" * 10 + " ") * 3000,
    "a credentials header over many rows": "Access key ID,Secret access key\n" + "a,b\n" * 100_000,
    "netrc words without values": "machine m login l password " * 20_000,
}


@pytest.mark.parametrize("text", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_adversarial_inputs_take_linear_time(text):
    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 3.0


def test_the_tokens_in_a_text_redacted_in_steps_are_counted_by_type():
    once = redact("a " + "ghp_" + rand(36) + " b ann@corp.eu").value
    twice = redact(once + "\nAKIA" + rand(16, string.ascii_uppercase)).value
    assert replaced_counts(twice) == {"aws_access_key_id": 1, "email": 1, "github_token": 1}
    assert replaced_counts("no tokens, [REDACTED] alone is not one") == {}
