"""The LLM families' fixtures: the seam's model server on loopback (``serve``)."""

from tests.groundwork.core.conftest import serve  # noqa: F401  (a fixture: pytest finds it by name)
