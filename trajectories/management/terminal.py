"""What the management commands share to draw tqdm bars on their stderr."""

from __future__ import annotations

from django.core.management.base import OutputWrapper


class Unstyled:
    """A command's stderr as tqdm needs it: written as is, without a newline or colour."""

    def __init__(self, out: OutputWrapper) -> None:
        self._out = out

    def write(self, text: str) -> None:
        self._out.write(text, style_func=lambda x: x, ending="")

    def flush(self) -> None:
        self._out.flush()

    def isatty(self) -> bool:
        return self._out.isatty()
