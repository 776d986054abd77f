"""Login throttling on Django's cache: after too many failed logins for one username, or from one
client address, within a window, every further attempt is refused for a cool-off, whatever the
password. A username counts under `account(username)`, the spelling Django's login matches, so
"alice ", fullwidth "ａｌｉｃｅ" and "Alice" all count against alice. django-axes is not in
requirements.lock; this is the small part of it the desk needs.

    wait = seconds_refused(username="alice", address="10.0.0.9")  # 0: let the attempt through
    failed(username="alice", address="10.0.0.9")                  # after a wrong password
    succeeded(username="alice")                                   # after the right one

Limits come from settings.TRAJ2ENV (LOGIN_FAILURES_PER_USER, LOGIN_FAILURES_PER_ADDRESS,
LOGIN_WINDOW_SECONDS, LOGIN_COOLOFF_SECONDS). The counts live in the project's cache, so every
web process shares one cache (settings.CACHES: a table in the database).
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.forms import UsernameField
from django.core.cache import cache


@dataclass(frozen=True)
class Limits:
    per_user: int
    per_address: int
    window_seconds: int
    cooloff_seconds: int


def limits() -> Limits:
    conf = settings.TRAJ2ENV
    return Limits(
        per_user=conf["LOGIN_FAILURES_PER_USER"],
        per_address=conf["LOGIN_FAILURES_PER_ADDRESS"],
        window_seconds=conf["LOGIN_WINDOW_SECONDS"],
        cooloff_seconds=conf["LOGIN_COOLOFF_SECONDS"],
    )


def _key(what: str, kind: str, subject: str) -> str:
    # Hashed: a username may hold spaces or be longer than a cache backend accepts in a key.
    digest = hashlib.sha256(subject.encode()).hexdigest()
    return f"traj2env:login-{what}:{kind}:{digest}"


def account(username: str) -> str:
    """The one spelling of a username that every spelling able to log in as it counts under:
    " alice", "ａｌｉｃｅ" and "Alice" are all "alice"."""
    # Django's login form strips the username and NFKC-normalises it before the backend looks
    # it up (UsernameField), so padded and fullwidth spellings all log in as alice; case
    # folding covers a backend or database collation that matches any case. Counting each
    # spelling under its own key would give a guesser a fresh allowance per spelling.
    return UsernameField().to_python(username).casefold()


def _subjects(username: str, address: str) -> list[tuple[str, str]]:
    return [("user", account(username)), ("address", address)]


def seconds_refused(*, username: str, address: str) -> int:
    """Seconds until an attempt for this username from this address may be tried; 0: now."""
    # The lock holds its own deadline so that the refusal ends on our clock, not the cache's.
    keys = [_key("lock", kind, subject) for kind, subject in _subjects(username, address)]
    deadlines = cache.get_many(keys).values()
    remaining = max((deadline - time.time() for deadline in deadlines), default=0.0)
    return math.ceil(remaining) if remaining > 0 else 0


def failed(*, username: str, address: str) -> None:
    """Count a failed login against the username and the address; lock either at its limit."""
    lim = limits()
    for (kind, subject), limit in zip(
        _subjects(username, address), (lim.per_user, lim.per_address), strict=True
    ):
        counter = _key("failures", kind, subject)
        # add + incr: atomic on the cache backends that can be, so parallel guesses all count.
        cache.add(counter, 0, timeout=lim.window_seconds)
        try:
            count = cache.incr(counter)
        except ValueError:  # the window ended between add and incr
            cache.set(counter, 1, timeout=lim.window_seconds)
            count = 1
        if count >= limit:
            cache.set(
                _key("lock", kind, subject),
                time.time() + lim.cooloff_seconds,
                timeout=lim.cooloff_seconds,
            )
            # After the cool-off the count starts again from nothing.
            cache.delete(counter)


def succeeded(*, username: str) -> None:
    """Clear the username's failures. The address keeps its count: otherwise one valid account
    would let a guesser reset its address between every few guesses at other accounts."""
    cache.delete(_key("failures", "user", account(username)))
