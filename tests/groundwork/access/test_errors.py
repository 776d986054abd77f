"""One family of refusals: each kind answers one way over HTTP and on the command line, wherever
it is raised; a role check refuses who may not, as Django's own 403."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied

from groundwork.access.errors import (
    EXIT_REFUSED,
    EXIT_USAGE,
    Conflict,
    Held,
    Invalid,
    NotFound,
    NotHeld,
    NotPermitted,
    Refused,
    exit_code_of,
    require,
    status_of,
)


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (NotPermitted("who"), 403, EXIT_REFUSED),
        (NotFound("which"), 404, EXIT_USAGE),
        (Conflict("when"), 409, EXIT_REFUSED),
        (Held("held by bob"), 409, EXIT_REFUSED),
        (NotHeld("not held"), 409, EXIT_REFUSED),
        (Invalid("what", fields={"spec": "not YAML"}), 422, EXIT_USAGE),
    ],
)
def test_each_refusal_answers_one_status_and_one_exit_code(error, status, code):
    assert isinstance(error, Refused)
    assert (status_of(error), exit_code_of(error)) == (status, code)


def test_an_invalid_input_keeps_why_each_field_is_refused():
    assert Invalid("no").fields == {}
    assert Invalid("no", fields={"k": "a whole number"}).fields == {"k": "a whole number"}


@pytest.mark.django_db
def test_require_refuses_who_lacks_the_permission_as_djangos_403(people):
    require(people.bob, "tasks_review.review_candidate", "review candidates")
    with pytest.raises(PermissionDenied, match="eve may not review candidates"):
        require(people.eve, "tasks_review.review_candidate", "review candidates")
    with pytest.raises(NotPermitted, match="anonymous may not"):
        require(AnonymousUser(), "tasks_review.review_candidate", "review candidates")
