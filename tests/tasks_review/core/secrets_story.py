"""A session with five secrets planted where tasks used to carry them verbatim: the user's
request, the failing output and the starting project's files."""

from __future__ import annotations

from .mining.repair_helpers import Session

# Built from parts so this file is not itself a secret to scanners.
AWS_KEY = "AKIA" + "Q3ZT7N2XW5RB4LMY"
GITHUB_TOKEN = "ghp_" + "x7Kq2Lm9Pz4Rt8Vb1Nc6Hd3Jf5Wg0Ys2Ua9E"
OPENAI_KEY = "sk-proj-" + "T3bLbKfJq8Zr2Wm5Xn7Vp4Yc" * 2
OPENAI_KEY_2 = "sk-" + "Hq4Nv8Rz1Tb6Wk3Ym9Pd2Lf7Gc5Js0Ax"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    + "\n".join(["MIIEowIBAAKCAQEAx4Zr9Qp2Lm7Vb3Nc8Hd1Jf6Wg0Ys5Ua2Tk4Re9"] * 4)
    + "\n-----END RSA PRIVATE KEY-----\n"
)
SECRETS = (AWS_KEY, GITHUB_TOKEN, OPENAI_KEY, OPENAI_KEY_2, PRIVATE_KEY.split("\n")[1])

PACKAGE = '{"name": "greet", "scripts": {"test": "node --test"}}\n'
INDEX_BUGGY = "exports.greet = (name) => 'Hello ' + name;\n"
INDEX_FIXED = "exports.greet = (name) => 'Hello, ' + name + '!';\n"
TEST = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "const { greet } = require('..');\n"
    "test('greets', () => assert.strictEqual(greet('Ada'), 'Hello, Ada!'));\n"
)
CONFIG = f"module.exports = {{ openai: '{OPENAI_KEY_2}' }};\n"


def secrets_story(test: str = TEST) -> Session:
    """npm test fails, greet is fixed, npm test passes; the secrets are on the way."""
    return (
        Session()
        .user(
            f"Make greet say 'Hello, <name>!'. Deploy with AWS key {AWS_KEY} and push with "
            f"{GITHUB_TOKEN}."
        )
        .write("package.json", PACKAGE)
        .write("index.js", INDEX_BUGGY)
        .write("config.js", CONFIG)
        .write("deploy/id_rsa", PRIVATE_KEY)
        .write("test/greet.test.js", test)
        .run(
            "npm test",
            fail=True,
            output=f"OPENAI_API_KEY={OPENAI_KEY}\nnot ok 1 - greets\n# fail 1",
        )
        .write("index.js", INDEX_FIXED)
        .run("npm test", output="ok 1 - greets\n# fail 0")
    )
