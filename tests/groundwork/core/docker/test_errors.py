"""The seam's errors: an unreachable daemon, and errors crossing worker processes."""

from __future__ import annotations

import pytest

from groundwork.core.docker import InfraError, bootstrap
from groundwork.core.docker.base import BaseImageSpec
from groundwork.core.docker.engine import Engine


def test_an_unreachable_daemon_is_an_infra_error(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:1")
    with pytest.raises(InfraError, match="tcp://127.0.0.1:1 is unreachable"):
        Engine.from_env(timeout=5)
    with pytest.raises(InfraError):
        bootstrap(BaseImageSpec(cache_dir=tmp_path))


def test_infra_errors_survive_pickling_between_worker_processes():
    import pickle

    error = pickle.loads(pickle.dumps(InfraError("build failed", log="step 3/4")))
    assert (type(error), error.message, error.log) == (InfraError, "build failed", "step 3/4")
