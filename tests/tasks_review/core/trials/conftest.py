"""The Docker fixtures of the trial tests: one engine, one base image."""

from ..test_trials import base_ref, engine  # noqa: F401 - shared session fixtures
