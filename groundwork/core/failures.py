"""An unexpected exception as a sentence a person can use, for the error a row keeps and a page
shows ("Replay failed: a required field is missing: 'tool_call_id'"), never a class name such as
``KeyError``. The worker's log keeps the traceback.

>>> said(KeyError("tool_call_id"))
"a required field is missing: 'tool_call_id'"
>>> said(OSError("disk full"))
'the system refused: disk full'
>>> said(FileNotFoundError(2, "No such file or directory", "/srv/jobs/x"))
'a file or folder is missing: /srv/jobs/x'
>>> said(ValueError("an unexpected shape at step 3"))
'an unexpected shape at step 3'
>>> said(RuntimeError())
'an unexpected error (the server log has the details)'
"""

from __future__ import annotations

import json

# Exceptions of libraries core code does not import, known by a class name in their ancestry.
_BY_NAME = {
    "DockerException": "the Docker engine failed",
    "APIError": "the Docker engine refused",
    "ValidationError": "the data does not have the shape expected",
    "TimeoutExpired": "it took too long and was stopped",
    "CalledProcessError": "a program it ran failed",
}

UNKNOWN = "an unexpected error (the server log has the details)"


def said(exc: BaseException) -> str:
    """What went wrong in words: a known kind's sentence, with the exception's own text."""
    text = str(exc).strip()
    if isinstance(exc, KeyError):
        return f"a required field is missing: {exc.args[0]!r}" if exc.args else UNKNOWN
    if isinstance(exc, json.JSONDecodeError):
        return f"a file is not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno})"
    if isinstance(exc, UnicodeError):
        return "a file is not valid UTF-8 text"
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to read"
    if isinstance(exc, MemoryError):
        return "it ran out of memory"
    if isinstance(exc, TimeoutError):
        return "it took too long and was stopped"
    if isinstance(exc, FileNotFoundError):
        return f"a file or folder is missing: {exc.filename or text}"
    if isinstance(exc, PermissionError):
        return f"permission was denied: {exc.filename or text}"
    if isinstance(exc, ConnectionError):
        return f"a connection failed: {text}" if text else "a connection failed"
    for cls in type(exc).__mro__:
        if cls.__name__ in _BY_NAME:
            return f"{_BY_NAME[cls.__name__]}: {text}" if text else _BY_NAME[cls.__name__]
    if isinstance(exc, OSError):
        return f"the system refused: {exc.strerror or text}" if (exc.strerror or text) else UNKNOWN
    return text or UNKNOWN
