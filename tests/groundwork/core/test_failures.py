"""Unexpected exceptions as sentences: a page never shows a class name such as KeyError."""

from __future__ import annotations

import doctest
import json

import pytest

from groundwork.core import failures


def test_the_examples_in_the_docstring_hold():
    failures_, tried = doctest.testmod(failures, report=False)
    assert tried and not failures_


class DockerException(Exception):  # the docker SDK's base class, by name
    pass


class APIError(DockerException):
    pass


@pytest.mark.parametrize(
    "exc",
    [
        KeyError("x"),
        OSError("disk full"),
        PermissionError(13, "Permission denied", "/srv/x"),
        json.JSONDecodeError("Expecting value", "{", 1),
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
        RecursionError("maximum recursion depth exceeded"),
        TimeoutError(),
        ConnectionRefusedError(111, "Connection refused"),
        APIError("500 Internal Server"),
        RuntimeError(),
        MemoryError(),
    ],
)
def test_no_exception_class_name_reaches_the_sentence(exc):
    sentence = failures.said(exc)
    assert sentence and type(exc).__name__ not in sentence
    assert "Error" not in sentence and "Exception" not in sentence
