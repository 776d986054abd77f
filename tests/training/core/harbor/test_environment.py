"""The offline environment's contract with Harbor, checked before any container exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harbor.environments.factory import EnvironmentFactory
from harbor.models.task.config import EnvironmentConfig, NetworkMode, NetworkPolicy
from harbor.models.trial.paths import TrialPaths

from groundwork.core.docker import ImageInfo
from training.core.harbor.environment import OfflineDockerEnvironment, default_run_id

from .helpers import run_coroutine

IMPORT_PATH = "training.core.harbor.environment:OfflineDockerEnvironment"


def task_environment(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "task" / "environment"
    folder.mkdir(parents=True)
    for name, text in (files if files is not None else {"Dockerfile": "FROM scratch\n"}).items():
        (folder / name).write_text(text)
    return folder


def make(tmp_path: Path, *, network=NetworkMode.NO_NETWORK, policy=None, files=None, **kwargs):
    return OfflineDockerEnvironment(
        environment_dir=task_environment(tmp_path, files),
        environment_name="repair-1",
        session_id="repair-1__Ab3dE__env",
        trial_paths=TrialPaths(tmp_path / "trial"),
        task_env_config=EnvironmentConfig(network_mode="no-network"),
        network_policy=policy or NetworkPolicy(network_mode=network),
        **kwargs,
    )


def test_harbor_finds_the_environment_by_its_import_path():
    found = EnvironmentFactory.get_environment_class(import_path=IMPORT_PATH)
    assert found is OfflineDockerEnvironment
    caps = OfflineDockerEnvironment.resource_capabilities()
    assert caps.cpu_limit and caps.memory_limit and caps.fractional_cpus


def test_it_promises_no_network_and_nothing_it_cannot_do(tmp_path):
    env = make(tmp_path)
    caps = env.capabilities
    assert caps.disable_internet
    assert not (caps.network_allowlist or caps.mounted or caps.docker_compose or caps.gpus)
    assert env.type() == "traj2env"


def test_a_task_or_phase_asking_for_network_is_refused_before_any_container(tmp_path):
    public = make(tmp_path / "a", network=NetworkMode.PUBLIC)
    with pytest.raises(ValueError, match="without network"):
        run_coroutine(public.start(force_build=False))
    # An installed agent calling a remote model turns no-network into an allowlist.
    allowlist = NetworkPolicy(network_mode=NetworkMode.ALLOWLIST, allowed_hosts=["api.x.com"])
    with pytest.raises(ValueError, match="allowlist"):
        make(tmp_path / "b", policy=allowlist)
    with pytest.raises(ValueError, match="allowlist"):
        make(tmp_path / "c").validate_network_policy_support(allowlist)


def test_host_bind_mounts_are_refused(tmp_path):
    mount = {"type": "bind", "source": str(tmp_path), "target": "/data"}
    with pytest.raises(ValueError, match="binds no host folders"):
        make(tmp_path, mounts=[mount])


def test_a_compose_only_environment_is_refused(tmp_path):
    with pytest.raises(ValueError, match="docker-compose"):
        make(tmp_path, files={"docker-compose.yaml": "services: {}\n"})


def test_an_environment_without_a_definition_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError):
        make(tmp_path, files={})


def test_the_run_label_is_the_option_or_derived_from_the_session(tmp_path):
    assert make(tmp_path / "a").run_id == "harbor-repair-1__Ab3dE__env"
    assert make(tmp_path / "b", run_id="nightly-7").run_id == "nightly-7"
    assert default_run_id("traj2env/repair 1__x__env") == "harbor-traj2env-repair-1__x__env"
    assert len(default_run_id("x" * 300)) == 128


def test_options_are_checked_as_harbor_checks_them():
    with pytest.raises(ValueError, match="run_id"):
        OfflineDockerEnvironment.parse_options({"run_id": "two words"})
    with pytest.raises(ValueError, match="Unknown option 'network'"):
        OfflineDockerEnvironment.parse_options({"network": "bridge"})
    schema = OfflineDockerEnvironment.options_schema()
    assert "run_id" in schema["properties"]
    json.dumps(schema)


def test_a_stopped_environment_runs_nothing(tmp_path):
    env = make(tmp_path)
    run_coroutine(env.stop(delete=True))
    with pytest.raises(RuntimeError, match="is not running"):
        run_coroutine(env.exec("true"))


def test_the_image_user_is_read_from_an_inspect_result():
    info = ImageInfo.from_api({"Id": "sha256:1", "Config": {"User": "agent", "Labels": None}})
    assert info.user == "agent"
    assert ImageInfo.from_api({"Id": "sha256:2", "Labels": {}}).user == ""  # a list row
