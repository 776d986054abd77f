"""The LLM seam's fixtures: a model server on loopback and a client of it with its own cache."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from groundwork.core.llm import LlmClient, LlmConfig
from tests.llm_server import MODEL, ModelServer, Responder


@pytest.fixture
def serve(tmp_path) -> Iterator[Callable[..., tuple[ModelServer, LlmClient]]]:
    """``serve(responder)``: a running server and a client of it caching under tmp_path."""
    servers: list[ModelServer] = []

    def start(responder: Responder, *, timeout: float = 30.0, model: str = MODEL):
        server = ModelServer(responder).__enter__()
        servers.append(server)
        config = LlmConfig(
            model=model,
            api_base=server.url,
            api_key="unused",
            cache_dir=tmp_path / "llm-cache",
            timeout=timeout,
            retries=0,
        )
        return server, LlmClient(config)

    yield start
    for server in servers:
        server.__exit__(None, None, None)
