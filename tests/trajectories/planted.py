"""Five secrets planted in a session, for the pages that must never show them (synthetic values,
built by concatenation so no scanner mistakes this file for a leak)."""

from __future__ import annotations

AWS_KEY_ID = "AKIA" + "Q3EGRV7XMB2YH4NP"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzq81RmT2kY9v"
GITHUB_TOKEN = "ghp_" + "R8mZ2kQv7XwN4pL9sTb3" + "Yc6Hd1Fg5Jn0Ke8U"
OPENAI_KEY = "sk-proj-" + "Vt4Qm9Rz2Lx7Kw1Np6Hs3Jd8" + "Fb5Gc0Ye4Ua7Ti2Oo9Ee3"
KEY_BODY = [
    "MIIEowIBAAKCAQEAw1x9Qm2Rz7Kp4Lt8Ns3Jv6Hd0Fb5Gc1Ye9Ua2Ti7Oo4Ee8Wq",
    "Zr3Xs6Cv1Bn5Mm0Lk4Jh8Gf2Dd7Ss9Aa3Qq6Ww1Ee5Rr0Tt4Yy8Uu2Ii7Oo3Pp6",
    "Hk2Jl5Zx8Cv1Bn4Mq7Wr0Et3Yu6Io9Pa2Sd5Fg8Hj1Kl4Zx7Cv0Bn3Mq6Wr9Et2",
]
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(KEY_BODY) + "\n-----END RSA PRIVATE KEY-----\n"
)

# What must not appear on any page: each value whole, and the key block's header and body.
LITERALS = (AWS_KEY_ID, AWS_SECRET, GITHUB_TOKEN, OPENAI_KEY, "BEGIN RSA PRIVATE KEY", *KEY_BODY)

USER_TEXT = (
    "Deploy the invoice service. Credentials: AWS_ACCESS_KEY_ID=" + AWS_KEY_ID + "\n"
    "aws_secret_access_key = " + AWS_SECRET + "\n"
    "and push with " + GITHUB_TOKEN + " please."
)
ENV_FILE = 'OPENAI_API_KEY="' + OPENAI_KEY + '"\nGH=' + GITHUB_TOKEN + "\nREGION=eu-west-1\n"
CONFIG_FILE = (
    "REGION = 'eu-west-1'\n"
    "OPENAI = '" + OPENAI_KEY + "'\n"
    "KEY = '''\n" + PRIVATE_KEY + "'''\n"
    "def total(xs):\n    return sum(xs)\n"
)


def leaked(body: str) -> list[str]:
    """The planted literals that `body` still carries."""
    return [s for s in LITERALS if s in body]
