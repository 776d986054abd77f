"""Secrets known by what stands near them: AWS secrets beside their key id or in the console's
CSVs, passwords given to database clients and other programs."""

from __future__ import annotations

import re
import string
from collections import Counter

import pytest

from trajectories.core.redact import redact, still_has_secrets

from .planted import ALNUM, rand

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


_TOKEN_KINDS = re.compile(r"\[REDACTED:([a-z_]+)\]")


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
