"""The Docker SDK's failures, and its transport's, as ``InfraError`` naming what we were doing.

    with infra(f"inspecting image {ref}"):
        api.inspect_image(ref)        # an APIError becomes InfraError("inspecting image …: …")

Every call into the SDK goes through ``infra`` so that a caller only ever sees ``InfraError``
(the trial is ungraded) for a failure of the harness, never an SDK exception it cannot classify.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import docker.errors
import requests

from .errors import InfraError


def explain(exc: BaseException) -> str:
    if isinstance(exc, docker.errors.APIError) and exc.explanation:
        return str(exc.explanation)
    return str(exc) or type(exc).__name__


@contextlib.contextmanager
def infra(what: str) -> Iterator[None]:
    """Turn the SDK's and the transport's errors into InfraError naming what we were doing."""
    try:
        yield
    except InfraError:
        raise
    except docker.errors.DockerException as exc:
        raise InfraError(f"{what}: {explain(exc)}") from exc
    except (requests.exceptions.RequestException, ConnectionError, TimeoutError) as exc:
        raise InfraError(f"{what}: the Docker daemon did not answer ({exc})") from exc
