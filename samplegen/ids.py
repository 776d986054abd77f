"""Deterministic ids and clocks, so that every run writes the same samples, byte for byte.

    uid("claude-code/invoice-tools/session")     # the same UUID on every run
    Clock(datetime(2026, 3, 3, 14, 7, 12, 408000, tzinfo=UTC)).tick(1.5)
    # "2026-03-03T14:07:13.908Z"

Ids look random (each agent format has its own shape: UUIDs, UUIDv7 for Codex sessions,
base-62 tokens for message ids) but derive from a label naming what they identify.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime, timedelta

NAMESPACE = uuid.UUID("6f1c2a7e-3d0b-4c59-9a8e-2b51f0e7c4d3")
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def uid(label: str) -> str:
    """A stable random-looking UUID for ``label``."""
    return str(uuid.uuid5(NAMESPACE, label))


def token(label: str, length: int, alphabet: str = BASE62) -> str:
    """``length`` stable random-looking characters for ``label``."""
    digest = int.from_bytes(hashlib.sha256(label.encode()).digest(), "big")
    chars = []
    for _ in range(length):
        digest, index = divmod(digest, len(alphabet))
        chars.append(alphabet[index])
    return "".join(chars)


def uuid7(label: str, when: datetime) -> str:
    """A UUIDv7 whose time bits are ``when`` (how Codex names its sessions)."""
    millis = int(when.timestamp() * 1000)
    rand = int.from_bytes(hashlib.sha256(label.encode()).digest()[:10], "big")
    value = (millis << 80) | (0x7 << 76) | ((rand >> 68) & 0xFFF) << 64
    value |= (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


class Clock:
    """Monotonic wall-clock time for one session."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def tick(self, seconds: float) -> str:
        self.now += timedelta(seconds=seconds)
        return self.iso()

    def iso(self) -> str:
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"

    def millis(self) -> int:
        return int(self.now.timestamp() * 1000)
