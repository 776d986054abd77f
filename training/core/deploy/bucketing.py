"""A subject's stable place in a rollout: a number in [0, 10000) compared with basis points.

>>> bucket("failing-test-repair", "repo:acme/api")
2808
>>> inside("failing-test-repair", "repo:acme/api", parse_percentage("28.08"))
False
>>> inside("failing-test-repair", "repo:acme/api", parse_percentage("28.09%"))
True
>>> format_percentage(1250)
'12.5%'

The bucket is sha256(salt, behaviour, subject) scaled to [0, 10000), so it is the same in every
process, on every machine and Python version (``hash()`` is salted per process and would send a
subject to the adapter on one worker and to the base model on the next). A subject is inside a
rollout of ``p`` basis points when its bucket is below ``p``: raising the percentage only adds
subjects, never moves one out. The behaviour is part of the hash so that a subject inside the
10% of one behaviour is not for that reason inside the 10% of every other. The salt lets a
deployment reshuffle who is first (the route snapshot carries it); the empty salt keeps the
same subjects first across versions, so a subject that tried v1 is the one that tries v2.
"""

from __future__ import annotations

import hashlib
from decimal import Decimal, InvalidOperation

BASIS_POINTS = 10_000  # 100% in basis points (1 bp = 0.01%)


def bucket(behaviour: str, subject: str, salt: str = "") -> int:
    # NUL separators: ("ab", "c") and ("a", "bc") must not hash alike.
    digest = hashlib.sha256(f"{salt}\x00{behaviour}\x00{subject}".encode()).digest()
    # Multiply-shift of the top 64 bits: uniform to within 2**-50, no modulo bias worth a name.
    return (int.from_bytes(digest[:8], "big") * BASIS_POINTS) >> 64


def inside(behaviour: str, subject: str, basis_points: int, salt: str = "") -> bool:
    """Whether the subject falls inside a rollout of ``basis_points`` (0 = nobody, 10000 = all)."""
    check_basis_points(basis_points)
    return bucket(behaviour, subject, salt) < basis_points


def check_basis_points(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"a rollout is an integer number of basis points, not {value!r}")
    if not 0 <= value <= BASIS_POINTS:
        raise ValueError(f"a rollout is within 0..{BASIS_POINTS} basis points, not {value}")
    return value


def parse_percentage(text: str) -> int:
    """'12.5' or '12.5%' -> 1250 basis points; more than two decimals is refused, not rounded."""
    try:
        value = Decimal(text.strip().removesuffix("%").strip()) * 100
    except InvalidOperation:
        raise ValueError(f"{text!r} is not a percentage") from None
    if value != value.to_integral_value():
        raise ValueError(f"{text!r} has more precision than 0.01%")
    return check_basis_points(int(value))


def format_percentage(basis_points: int) -> str:
    whole, rest = divmod(check_basis_points(basis_points), 100)
    return f"{whole}%" if not rest else f"{whole}.{rest:02d}".rstrip("0") + "%"


def subject_inside(behaviour: str, basis_points: int, salt: str = "", prefix: str = "drill") -> str:
    """The first of ``drill-0``, ``drill-1``, ... inside the rollout: the subject a kill drill
    asks about, so that an endpoint still serving the adapter would be caught answering it."""
    if check_basis_points(basis_points) == 0:
        raise ValueError("no subject is inside a rollout of 0%")
    n = 0
    while not inside(behaviour, f"{prefix}-{n}", basis_points, salt):
        n += 1
    return f"{prefix}-{n}"
