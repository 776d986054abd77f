"""Secrets known by their shape: provider tokens (ours and detect-secrets'), JWTs, authenticating
headers, passwords in URLs and e-mail addresses."""

from __future__ import annotations

import re
import string

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from .rule import TOKEN_CHARS, Rule, value_keep

_LOCAL_PART = string.ascii_letters + string.digits + "._%+-"


# Domains reserved for documentation and tests (RFC 2606, RFC 6761): nobody's address.
_RESERVED_DOMAIN = re.compile(
    r"@(?:[a-z0-9\-]+\.)*(?:example\.(?:com|net|org)|[a-z0-9\-]+\.(?:example|test|invalid|localhost))$"
)


def _email_keep(text: str, m: re.Match[str], start: int, end: int) -> bool:
    if text.startswith(":", end):
        return False  # git@github.com:owner/repo is a remote, not a person
    if _RESERVED_DOMAIN.search(m.group(0)):
        return False  # user@example.com in a test fixture
    # In scheme://user:password@host the password is the URL rule's and the host no address.
    before = text[max(0, start - 300) : start]
    return re.search(r"://[^\s/@]*:$", before) is None


def _jwt_keep(text: str, m: re.Match[str], start: int, end: int) -> bool:
    return bool(JwtTokenDetector.is_formally_valid(text[start:end]))


def _bearer_keep(text: str, m: re.Match[str], start: int, end: int) -> bool:
    """A bearer value is a credential when it looks like one (digits, or long): "Bearer
    authentication_scheme" in prose is not."""
    value = text[start:end]
    return len(value) >= 32 or any(ch.isdigit() for ch in value)


def shape_rules() -> list[Rule]:
    """Token shapes detect-secrets lacks or cuts short."""
    c = re.compile
    return [
        Rule(
            "anthropic_api_key",
            c(r"sk-ant-[A-Za-z0-9_\-]{20,300}"),
            not_after=TOKEN_CHARS,
        ),
        Rule(
            "openai_api_key",
            c(r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,300}"),
            not_after=TOKEN_CHARS,
        ),
        Rule(
            "github_token",
            c(r"github_pat_[A-Za-z0-9_]{22,255}"),
            not_after=TOKEN_CHARS,
        ),
        Rule(
            "github_token",
            c(r"gh[pousr]_[A-Za-z0-9]{30,255}"),
            not_after=TOKEN_CHARS,
        ),
        Rule(
            "huggingface_token",
            c(r"hf_[A-Za-z0-9]{30,64}(?![A-Za-z0-9])"),
            not_after=TOKEN_CHARS,
        ),
        Rule(
            "npm_token",
            c(r"npm_[A-Za-z0-9]{36,64}(?![A-Za-z0-9])"),
            not_after=TOKEN_CHARS,
        ),
        Rule(
            "google_api_key",
            c(r"AIza[0-9A-Za-z_\-]{35}"),
            not_after=TOKEN_CHARS,
        ),
        Rule(
            "stripe_key",
            c(r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,255}"),
            not_after=TOKEN_CHARS,
        ),
        Rule(
            "slack_token",
            c(r"x(?:ox[abposre]|app)-[A-Za-z0-9\-]{10,255}"),
            not_after=TOKEN_CHARS,
        ),
        # age's X25519 identity: bech32 (its own alphabet) of 32 bytes and a checksum, printed in
        # capitals by age-keygen; the `age1...` recipient beside it is public.
        Rule(
            "age_secret_key",
            c(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}(?![A-Za-z0-9])"),
            not_after=TOKEN_CHARS,
        ),
        Rule(
            "jwt",
            c(r"eyJ[A-Za-z0-9_\-]{8,4096}\.eyJ[A-Za-z0-9_\-]{8,8192}\.[A-Za-z0-9_\-]{0,2048}"),
            not_after=TOKEN_CHARS,
            keep=_jwt_keep,
        ),
    ]


def header_rules() -> list[Rule]:
    """Credentials in authorization headers and URLs."""
    c = re.compile
    return [
        Rule(
            "bearer_token",
            c(r"bearer[ \t]+(?P<v>[a-z0-9\-._~+/]{16,4096}=*)"),
            group="v",
            folded=True,
            not_after=string.ascii_letters + string.digits,
            keep=_bearer_keep,
        ),
        Rule(
            "bearer_token",
            c(r"authorization\"?[ \t]*[:=][ \t]*\"?token[ \t]+(?P<v>[a-z0-9\-._~+/]{16,4096}=*)"),
            group="v",
            folded=True,
            keep=_bearer_keep,
        ),
        # A header given to curl (`-H 'X-Api-Key: ...'`) whose name says it authenticates.
        Rule(
            "auth_header",
            c(
                r"-h[ \t]+[\"']?[a-z0-9\-]{0,40}(?:key|token|secret|auth|password)[a-z0-9\-]{0,20}"
                r"[ \t]*:[ \t]*(?P<v>[^\s\"']{8,512})"
            ),
            group="v",
            folded=True,
            not_after="".join(chr(i) for i in range(33, 127)),  # only after a space or at start
            keep=value_keep,
        ),
        Rule(
            "basic_auth",
            c(r"authorization\"?[ \t]*[:=][ \t]*\"?basic[ \t]+(?P<v>[a-z0-9+/]{12,4096}={0,2})"),
            group="v",
            folded=True,
        ),
        # scheme://user:password@host; detect-secrets' BasicAuth pattern finds most of these too
        # and its findings merge with these.
        Rule(
            "url_password",
            c(r"://[^\s:/?#@'\"<>]{1,256}:(?P<v>[^\s/?#@'\"<>]{1,256})@"),
            group="v",
            keep=value_keep,
        ),
        Rule(
            "url_password",
            c(r"-(?:u|-user)[ \t]+[^\s:'\"]{1,128}:(?P<v>[^\s'\"]{1,256})"),
            group="v",
            not_after="".join(chr(i) for i in range(33, 127)),  # only after a space or at start
            keep=value_keep,
        ),
    ]


def detect_secrets_rules() -> list[Rule]:
    """detect-secrets' provider plugins: each regex with the type we report and the part of its
    match that is the secret. Its own ``findall`` yields capture groups, which for GitHub is only
    the ``ghp`` prefix, so spans are taken here. Its case-insensitive patterns are all lowercase
    and run on the lowercased text. Left out: Mailchimp and Telegram, whose patterns start with a
    character class (slow at every position, and no provider the product meets), Artifactory,
    IBM, Cloudant and SoftLayer, whose assignment patterns fire on prose."""
    aws_id, aws_secret = AWSKeyDetector.denylist
    slack_token, slack_webhook = SlackDetector.denylist
    table: list[tuple[str, re.Pattern[str], int]] = [
        ("aws_access_key_id", aws_id, 0),
        ("aws_secret_access_key", aws_secret, 1),
        ("azure_storage_key", AzureStorageKeyDetector.denylist[0], 0),
        ("url_password", BasicAuthDetector.denylist[0], 1),
        ("discord_bot_token", DiscordBotTokenDetector.denylist[0], 0),
        ("github_token", GitHubTokenDetector.denylist[0], 0),
        ("openai_api_key", OpenAIDetector.denylist[0], 0),
        ("pypi_token", PypiTokenDetector.denylist[0], 0),
        ("pypi_token", PypiTokenDetector.denylist[1], 0),
        ("sendgrid_api_key", SendGridDetector.denylist[0], 0),
        ("slack_token", slack_token, 0),
        ("slack_webhook", slack_webhook, 0),
        ("square_oauth_secret", SquareOAuthDetector.denylist[0], 0),
        ("stripe_key", StripeDetector.denylist[0], 0),
        ("twilio_api_key", TwilioKeyDetector.denylist[0], 0),
        ("twilio_api_key", TwilioKeyDetector.denylist[1], 0),
    ]
    table += [("gitlab_token", p, 0) for p in GitLabTokenDetector.denylist]
    rules = []
    for kind, pattern, group in table:
        # A case-insensitive pattern matches the lowercased text once its own letters are
        # lowercased, which lets the engine search for its literal prefix; an escape such as \S
        # would change meaning, so such a pattern stays as it is.
        folded = bool(pattern.flags & re.IGNORECASE) and not re.search(r"\\[A-Z]", pattern.pattern)
        if folded:
            pattern = re.compile(pattern.pattern.lower(), pattern.flags & ~re.IGNORECASE)
        rules.append(Rule(kind, pattern, group, folded=folded))
    return rules


def email_rules() -> list[Rule]:
    """E-mail addresses, but not those at the domains reserved for examples."""
    return [
        # Found at its @ and extended left over the local part: a pattern starting at the local
        # part would be tried at every letter of the text.
        Rule(
            "email",
            re.compile(r"@(?:[a-z0-9\-]{1,63}\.){1,8}[a-z]{2,24}(?![a-z0-9\-])"),
            hints=("@",),
            folded=True,
            extend_left=_LOCAL_PART,
            keep=_email_keep,
        ),
    ]
