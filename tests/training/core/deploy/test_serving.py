import json
import random
import re
from urllib.parse import quote, urlsplit

import pytest
import yaml

from tests.training.factories.deploy_states import (
    BASE_MODEL,
    REPAIR,
    active,
    adapter,
    drilled,
    proposed,
    version,
)
from training.core.deploy.serving import (
    HEADER,
    PLACEHOLDER_BASE_MODEL,
    ServedAdapter,
    ServingError,
    adapter_path,
    default_endpoints,
    endpoint_port,
    litellm_config,
    litellm_yaml,
    served_adapters,
    vllm_command,
)
from training.core.deploy.states import activate, kill, retire

VLLM = "http://vllm-qwen:8000/v1"


def served(name, rank=16, base=BASE_MODEL, path=None):
    return ServedAdapter(served_name=name, base_model=base, path=path or f"/srv/{name}", rank=rank)


def lora_modules_as_vllm_reads_them(command):
    """vLLM's LoRAParserAction (vllm/entrypoints/openai/cli_args.py): an item with '=' and no
    ',' is name=path, anything else is JSON for LoRAModulePath(name, path, base_model_name)."""
    values = command[command.index("--lora-modules") + 1 :]
    modules = []
    for item in values:
        if item.startswith("--"):
            break
        if "=" in item and "," not in item:
            name, path = item.split("=")
            modules.append({"name": name, "path": path})
        else:
            parsed = json.loads(item)
            assert set(parsed) <= {"name", "path", "base_model_name"}
            modules.append(parsed)
    return modules


def test_vllm_serves_each_adapter_by_name_path_and_base_model():
    command = vllm_command(BASE_MODEL, [served("b-v1"), served("a-v2", rank=8)])
    assert command[:3] == ["vllm", "serve", BASE_MODEL]
    assert command[3:6] == ["--enable-lora", "--max-lora-rank", "16"]
    assert lora_modules_as_vllm_reads_them(command) == [
        {"name": "a-v2", "path": "/srv/a-v2", "base_model_name": BASE_MODEL},
        {"name": "b-v1", "path": "/srv/b-v1", "base_model_name": BASE_MODEL},
    ]


def test_a_path_with_an_equals_sign_survives_vllms_parser():
    command = vllm_command(BASE_MODEL, [served("a-v1", path="/srv/run=3/a")])
    assert lora_modules_as_vllm_reads_them(command)[0]["path"] == "/srv/run=3/a"


@pytest.mark.parametrize(
    "ranks, flag", [([4], "8"), ([8, 16], "16"), ([17], "32"), ([300], "320"), ([512], "512")]
)
def test_the_max_lora_rank_is_the_smallest_vllm_accepts_that_holds_every_adapter(ranks, flag):
    adapters = [served(f"a{i}-v1", rank=r) for i, r in enumerate(ranks)]
    command = vllm_command(BASE_MODEL, adapters)
    assert command[command.index("--max-lora-rank") + 1] == flag


def test_a_rank_above_vllms_largest_is_refused():
    with pytest.raises(ServingError, match="above vLLM's largest"):
        vllm_command(BASE_MODEL, [served("a-v1", rank=1024)])


def test_without_adapters_vllm_serves_the_base_model_alone():
    assert vllm_command(BASE_MODEL, []) == ["vllm", "serve", BASE_MODEL]


def test_an_adapter_of_another_base_model_is_refused_rather_than_silently_dropped():
    with pytest.raises(ServingError, match="a-v1 adapt another base model"):
        vllm_command(BASE_MODEL, [served("a-v1", base="meta-llama/Llama-3.1-8B")])


def test_the_litellm_config_lists_base_models_and_adapters_with_fallbacks_to_the_base():
    config = litellm_config(
        endpoints={BASE_MODEL: VLLM, "llama": "http://vllm-llama:8000/v1"},
        adapters=[served("repair-v2"), served("read-v1", base="llama")],
        api_key="os.environ/VLLM_API_KEY",
    )
    assert [m["model_name"] for m in config["model_list"]] == [
        BASE_MODEL,
        "llama",
        "read-v1",
        "repair-v2",
    ]
    by_name = {m["model_name"]: m["litellm_params"] for m in config["model_list"]}
    assert by_name["repair-v2"] == {
        "model": "hosted_vllm/repair-v2",
        "api_base": VLLM,
        "api_key": "os.environ/VLLM_API_KEY",
    }
    assert by_name["read-v1"]["api_base"] == "http://vllm-llama:8000/v1"
    assert by_name[BASE_MODEL]["model"] == f"hosted_vllm/{BASE_MODEL}"
    assert config["router_settings"] == {
        "fallbacks": [{"read-v1": ["llama"]}, {"repair-v2": [BASE_MODEL]}]
    }


def test_an_adapter_whose_base_model_has_no_endpoint_is_refused():
    with pytest.raises(ServingError, match="no vLLM endpoint is given for 'llama', the base model"):
        litellm_config(endpoints={BASE_MODEL: VLLM}, adapters=[served("a-v1", base="llama")])


def test_the_placeholder_base_model_is_named_once_in_the_refusal():
    with pytest.raises(ServingError) as refused:
        litellm_config(endpoints={BASE_MODEL: VLLM}, adapters=[served("a-v1", base="base")])
    assert "base model base" not in str(refused.value) and "'base'" in str(refused.value)


def test_the_same_state_gives_the_same_bytes_in_any_order():
    adapters = [served(f"a{i}-v1") for i in range(6)]
    shuffled = adapters[:]
    random.Random(7).shuffle(shuffled)
    one = litellm_yaml(litellm_config(endpoints={BASE_MODEL: VLLM}, adapters=adapters))
    two = litellm_yaml(litellm_config(endpoints={BASE_MODEL: VLLM}, adapters=shuffled))
    assert one == two and one.startswith(HEADER)
    assert vllm_command(BASE_MODEL, adapters) == vllm_command(BASE_MODEL, shuffled)
    assert yaml.safe_load(one)["model_list"][1]["model_name"] == "a0-v1"


# -- what is served


def test_active_adapters_and_the_versions_a_rollback_would_reactivate_are_served():
    v1 = active(proposed(version("1.0"), ident="1"))
    activation = activate(drilled(proposed(version("2.0"), ident="2")), active=[v1])
    names = [
        a.served_name
        for a in served_adapters(
            [activation.deployment, *activation.superseded], adapter_root="/srv/adapters"
        )
    ]
    assert names == [f"{REPAIR}-lora-v1.0", f"{REPAIR}-lora-v2.0"]


def test_a_killed_adapter_is_not_served_but_its_rollback_target_is():
    v1 = active(proposed(version("1.0"), ident="1"))
    activation = activate(drilled(proposed(version("2.0"), ident="2")), active=[v1])
    v2 = kill(activation.deployment, reason="incident")
    names = [
        a.served_name for a in served_adapters([v2, *activation.superseded], adapter_root="/srv")
    ]
    assert names == [f"{REPAIR}-lora-v1.0"]


def test_proposed_approved_and_retired_adapters_are_not_served():
    deployments = [
        proposed(ident="1"),
        drilled(proposed(version("2.0"), ident="2")),
        retire(active(proposed(version("3.0"), ident="3")), reason="done"),
    ]
    assert served_adapters(deployments, adapter_root="/srv") == ()


def test_local_artifacts_are_read_in_place_and_remote_ones_from_the_fetch_folder():
    local = adapter(artifact_uri="file:///data/adapters/repair%201.0")
    assert adapter_path(local, None) == "/data/adapters/repair 1.0"
    remote = adapter()
    assert adapter_path(remote, "/srv/adapters") == f"/srv/adapters/{remote.served_name}"
    with pytest.raises(ServingError, match="give the vLLM host's adapter folder"):
        adapter_path(remote, None)


def test_served_adapters_carry_their_rank_and_base_model():
    (one,) = served_adapters([active(proposed(adapter(rank=32)))], adapter_root="/srv")
    assert (one.rank, one.base_model) == (32, BASE_MODEL)


# -- LiteLLM's own router reads the generated config


@pytest.mark.slow
def test_litellms_router_loads_the_config_and_falls_back_from_an_adapter_to_its_base(monkeypatch):
    # Offline: LiteLLM would otherwise fetch its model price map from GitHub on import.
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from litellm import Router
    from litellm.router_api import router_init_args

    text = litellm_yaml(
        litellm_config(endpoints={BASE_MODEL: VLLM}, adapters=[served(f"{REPAIR}-lora-v1.0")])
    )
    config = yaml.safe_load(text)
    assert set(config) == {"model_list", "router_settings"}
    # The proxy passes router_settings to Router() key by key, refusing none it knows.
    assert set(config["router_settings"]) <= set(router_init_args())
    # The one seam: the base deployment answers from a canned response instead of a GPU.
    config["model_list"][0]["litellm_params"]["mock_response"] = "from the base model"
    router = Router(model_list=config["model_list"], num_retries=0, **config["router_settings"])
    response = router.completion(
        model=f"{REPAIR}-lora-v1.0",
        messages=[{"role": "user", "content": "fix the failing test"}],
        mock_testing_fallbacks=True,  # LiteLLM fails the adapter's call to exercise fallbacks
    )
    assert response.choices[0].message.content == "from the base model"
    # Without the generated fallbacks the same call fails: they are what carried it.
    bare = Router(model_list=config["model_list"], num_retries=0)
    with pytest.raises(Exception, match="No fallback was attempted"):
        bare.completion(
            model=f"{REPAIR}-lora-v1.0",
            messages=[{"role": "user", "content": "fix the failing test"}],
            mock_testing_fallbacks=True,
        )


# -- what vLLM is told beyond the adapters


def test_vllm_may_batch_every_adapter_it_loads():
    # vLLM's --max-loras (default 1) caps the adapters in one batch: with more loaded, requests
    # for the others wait their turn.
    command = vllm_command(BASE_MODEL, [served("a-v1"), served("b-v1"), served("c-v1")])
    assert command[command.index("--max-loras") + 1] == "3"
    assert "--max-loras" not in vllm_command(BASE_MODEL, [])


def test_the_placeholder_base_model_is_not_served_as_a_model_named_base():
    command = vllm_command(PLACEHOLDER_BASE_MODEL, [served("a-v1", base=PLACEHOLDER_BASE_MODEL)])
    model = command[2]
    assert model != "base" and "TRAJ2ENV_BASE_MODEL" in model
    # Hugging Face ids are [\w.-]+(/[\w.-]+)?: vLLM refuses this one at start, naming it.
    assert not re.fullmatch(r"[\w.-]+(/[\w.-]+)?", model)
    # served under the name the route answers and LiteLLM asks for
    assert command[command.index("--served-model-name") + 1] == PLACEHOLDER_BASE_MODEL
    assert "--served-model-name" not in vllm_command(BASE_MODEL, [])


def test_vllm_listens_on_the_port_its_endpoint_names():
    command = vllm_command(BASE_MODEL, [], port=8101)
    assert command[command.index("--port") + 1] == "8101"
    assert "--port" not in vllm_command(BASE_MODEL, [])


def test_default_endpoints_stay_off_the_desks_port():
    endpoints = default_endpoints(["b-model", "a-model"])
    assert list(endpoints) == ["a-model", "b-model"]
    ports = [urlsplit(url).port for url in endpoints.values()]
    assert len(set(ports)) == 2 and 8000 not in ports


# -- a local adapter's rank, as its adapter_config.json says


def peft_folder(tmp_path, **config):
    folder = tmp_path / "repair 1.0"
    folder.mkdir()
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", **config}))
    return f"file://{quote(str(folder))}"


def test_a_local_adapter_whose_rank_disagrees_with_its_adapter_config_is_refused(tmp_path):
    uri = peft_folder(tmp_path, r=32)
    deployments = [active(proposed(adapter(artifact_uri=uri, rank=16)))]
    with pytest.raises(ServingError, match=r"registered with rank 16.*adapter_config.json.*r 32"):
        served_adapters(deployments)


def test_a_local_adapter_with_a_larger_rank_pattern_is_refused(tmp_path):
    uri = peft_folder(tmp_path, r=16, rank_pattern={"q_proj": 64})
    deployments = [active(proposed(adapter(artifact_uri=uri, rank=16)))]
    with pytest.raises(ServingError, match="rank_pattern.*64"):
        served_adapters(deployments)


def test_a_local_adapter_whose_rank_agrees_is_served(tmp_path):
    uri = peft_folder(tmp_path, r=16, rank_pattern={"q_proj": 8})
    (one,) = served_adapters([active(proposed(adapter(artifact_uri=uri, rank=16)))])
    assert one.rank == 16 and one.path.endswith("/repair 1.0")


def test_a_local_adapter_without_a_readable_config_is_refused(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    deployments = [active(proposed(adapter(artifact_uri=f"file://{folder}", rank=16)))]
    with pytest.raises(ServingError, match="no adapter_config.json"):
        served_adapters(deployments)


@pytest.mark.parametrize("url, port", [("http://gpu-1:8101/v1", 8101), ("https://gpu/v1", None)])
def test_an_endpoints_port_is_read_from_its_url(url, port):
    assert endpoint_port(url) == port


@pytest.mark.parametrize("url", ["http://gpu-1:99999/v1", "gpu-1:8000", "ftp://gpu/v1"])
def test_an_endpoint_that_is_no_http_url_is_refused(url):
    with pytest.raises(ServingError, match="not an http"):
        endpoint_port(url)
