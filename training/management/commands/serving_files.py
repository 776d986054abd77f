"""`manage.py serving_files --endpoint MODEL=URL... [--adapter-root DIR] --out DIR [--json]`:
write the serving files the serving page offers, from the active deployments now:
``vllm.sh`` (one ``vllm serve`` per base model, with its adapters' ``--lora-modules``) and
``litellm.yaml`` (the LiteLLM proxy config, each adapter falling back to its base model).

Each base model the adapters adapt needs its vLLM endpoint (``--endpoint MODEL=URL``, the
OpenAI-compatible base URL that server answers at); none is guessed. ``--adapter-root`` is the
folder on the vLLM host where adapters not on ``file://`` are fetched. Exit 0 written; 2 a
usage error (an endpoint missing or malformed, an adapter the serving rules refuse).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.core.deploy.serving import ServingError
from training.management.loop_commands import Done, LoopCommand, usage_error
from training.selectors.deploy import base_models, serving_config

FILES = ("vllm.sh", "litellm.yaml")


class Command(LoopCommand):
    help = "Write vllm.sh and litellm.yaml for the active deployments."
    person = None  # reads only

    def add_step_arguments(self, parser) -> None:
        parser.add_argument(
            "--endpoint",
            action="append",
            default=[],
            metavar="MODEL=URL",
            help="a base model's vLLM endpoint, e.g. qwen-coder=http://gpu-1:8100/v1 (repeat)",
        )
        parser.add_argument(
            "--adapter-root", metavar="DIR", help="where the vLLM host keeps fetched adapters"
        )
        parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="where to write")

    def step(
        self, *, user, endpoint: list[str], adapter_root: str | None, out: Path, **_: Any
    ) -> Done:
        endpoints = _endpoints(endpoint)
        try:
            config = serving_config(endpoints=endpoints, adapter_root=adapter_root)
        except ServingError as error:
            raise usage_error(str(error)) from None
        out = out.expanduser().resolve()
        out.mkdir(parents=True, exist_ok=True)
        (out / "vllm.sh").write_text(config.vllm_script, encoding="utf-8")
        (out / "vllm.sh").chmod(0o755)
        (out / "litellm.yaml").write_text(config.litellm, encoding="utf-8")
        written = [str(out / name) for name in FILES]
        payload = {
            "files": written,
            "base_models": sorted(endpoints),
            "adapters": [a.served_name for a in config.adapters],
        }
        return Done(payload, "\n".join(written))


def _endpoints(given: list[str]) -> dict[str, str]:
    if not given:
        known = ", ".join(base_models())
        raise usage_error(f"give each base model's vLLM endpoint: --endpoint MODEL=URL ({known})")
    endpoints = {}
    for item in given:
        model, _, url = item.partition("=")
        if not model.strip() or not url.strip():
            raise usage_error(f"--endpoint {item!r} is not MODEL=URL")
        endpoints[model.strip()] = url.strip()
    return endpoints
