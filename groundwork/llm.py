"""The LLM client from settings (None when no model is set): what the pipeline's families ask."""

from __future__ import annotations

from django.conf import settings

from groundwork.core.llm import LlmClient, LlmConfig


def llm_client() -> LlmClient | None:
    """A client of ``TRAJ2ENV_LLM_MODEL``, or None when it is unset (build, extend and qa are
    then skipped, and ``generate`` says so)."""
    config = settings.TRAJ2ENV
    if not config["LLM_MODEL"]:
        return None
    return LlmClient(
        LlmConfig(
            model=config["LLM_MODEL"],
            cache_dir=config["LLM_CACHE_DIR"],
            api_base=config["LLM_API_BASE"] or None,
            api_key=config["LLM_API_KEY"] or None,
            timeout=float(config["LLM_TIMEOUT_SECONDS"]),
        )
    )
