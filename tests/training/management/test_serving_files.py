"""`manage.py serving_files`: the serving page's two downloads written to files, from the same
rendering; exit 0 written, 2 a usage error (no endpoint guessed)."""

from __future__ import annotations

import pytest
import yaml

from tests.training.factories.deploy import gated_world, live

pytestmark = pytest.mark.django_db
ENDPOINTS = {"base": "http://gpu-0:8100/v1", "qwen-coder": "http://gpu-1:8100/v1"}


def test_the_files_are_the_serving_pages_downloads_byte_for_byte(manage, client, people, tmp_path):
    world = gated_world(people.bob)
    live(world.adapter, people.bob, people.carol)
    args = [f"--endpoint={model}={url}" for model, url in ENDPOINTS.items()]
    ran = manage(
        "serving_files", *args, "--adapter-root", "/models", "--out", str(tmp_path), "--json"
    )
    assert ran.code == 0, ran.err
    assert ran.json == {
        "files": [str(tmp_path / "vllm.sh"), str(tmp_path / "litellm.yaml")],
        "base_models": ["base", "qwen-coder"],
        "adapters": [world.adapter.served_name],
    }
    client.force_login(people.carol)
    query = {f"endpoint:{model}": url for model, url in ENDPOINTS.items()} | {
        "adapter_root": "/models"
    }
    for name in ("vllm.sh", "litellm.yaml"):
        page = client.get(f"/training/serving/{name}", query).content.decode()
        assert (tmp_path / name).read_text() == page, name
    assert (tmp_path / "vllm.sh").stat().st_mode & 0o111
    config = yaml.safe_load((tmp_path / "litellm.yaml").read_text())
    assert {world.adapter.served_name: ["qwen-coder"]} in config["router_settings"]["fallbacks"]


def test_no_endpoint_is_guessed_and_a_missing_one_is_named(manage, people, tmp_path):
    world = gated_world(people.bob)
    live(world.adapter, people.bob, people.carol)
    ran = manage("serving_files", "--out", str(tmp_path), "--json")
    assert ran.code == 2 and "--endpoint MODEL=URL (base, qwen-coder)" in ran.json["error"]
    one = ("--endpoint", "base=http://gpu-0:8100/v1", "--out", str(tmp_path))
    ran = manage("serving_files", *one, "--adapter-root", "/models")
    assert ran.code == 2 and "no vLLM endpoint is given for 'qwen-coder'" in ran.err
    ran = manage("serving_files", "--endpoint", "qwen-coder=http://gpu-1:8100/v1", *one[2:])
    assert ran.code == 2 and "lives at s3://adapters/" in ran.err  # fetched to where?
    ran = manage("serving_files", "--endpoint", "qwen-coder", "--out", str(tmp_path))
    assert ran.code == 2 and "is not MODEL=URL" in ran.err
    assert not any(tmp_path.iterdir())
