import pytest


@pytest.fixture
def no_docker(settings):
    """A pipeline that stops before Docker: a base image named, verification off."""
    settings.TRAJ2ENV = {
        **settings.TRAJ2ENV,
        "BASE_IMAGE": "example.org/b@sha256:" + "ab" * 32,
        "VERIFY": False,
    }
