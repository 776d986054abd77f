"""The two ways the Docker layer fails that are not the checked program's doing."""

from __future__ import annotations

from typing import Any


class InfraError(RuntimeError):
    """The harness could not do its job: daemon unreachable, build failed, an API call hung.

    A trial that ends in InfraError is *ungraded*: it says nothing about the program under test,
    so it must never be scored 0 or 1. ``log`` carries build output or a daemon message when
    there is one.
    """

    def __init__(self, message: str, log: str = "") -> None:
        self.message = message
        self.log = log
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:  # q2 workers pickle errors across processes
        return (type(self), (self.message, self.log))


class SetupError(InfraError):
    """This machine lacks something the user must provide (a tool, root to install it, a port)."""
