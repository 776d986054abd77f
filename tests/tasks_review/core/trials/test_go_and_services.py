"""Checks that need more than the default base image: Go (``go test`` graded test by test, with
controls) and services (a pytest check against the Redis the image starts), each kept with its
whole trial matrix; and what cannot run offline dropping at prepare.

The two base image variants are bootstrapped once per recipe (``go_base_ref``,
``services_base_ref`` in conftest) and cached like the default base image.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from groundwork.core.docker import FileEntry
from tasks_review.core.trials import TrialStatus, prepare, run_matrix
from tasks_review.core.trials.model import TrialDropReason
from tasks_review.core.trials.verifier import Submission, grade_submission

from .helpers import (
    GO_FIX,
    GO_START,
    REDIS_FIX,
    REDIS_START,
    assert_full_matrix,
    left_behind,
    new_run_id,
    write,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]
GO_CHECK = dict(command="go test ./...", language="go", runner="go")

# Go's own forgeries (controls/forgery.py): each fools a grader that trusts the exit status.
GO_FORGERIES = {
    "exit_early_success",
    "inprocess_forgery",
    "selective_forgery_spares_unknown_tests",
}


@pytest.fixture(scope="module")
def go_matrix(engine, go_base_ref, tmp_path_factory):
    task = write(tmp_path_factory.mktemp("go") / "task", go_base_ref, GO_START, GO_FIX, **GO_CHECK)
    prepared = prepare(task, engine)
    run_id = new_run_id()
    return prepared, run_matrix(prepared, engine=engine, run_id=run_id, naive=True), run_id


def test_a_go_module_without_downloads_is_kept_with_its_full_trial_matrix(engine, go_matrix):
    prepared, result, run_id = go_matrix
    assert prepared.drop is None
    # oracle 1 on every repeat, no-op 0, every control 0 (the Python/Node-only ones skipped)
    assert_full_matrix(result, "go", graded_controls=9)
    graded = {t.name for t in result.trials if t.status is TrialStatus.GRADED}
    assert GO_FORGERIES <= graded
    assert left_behind(engine, run_id) == []
    # Its tests call Mul with constants and a table: hidden probes around them tell the fix.
    assert result.grading["grading"] == "equivalence", result.grading


def test_go_forgeries_fool_a_naive_grader_and_the_copies_catch_them(go_matrix):
    _, result, _ = go_matrix
    for name in GO_FORGERIES | {"delete_tests"}:
        (trial,) = result.of(name)
        assert trial.detail["naive_exit_code"] == 0, name  # `go test ./...` passed for it
        assert trial.reward == 0.0
    (early,) = result.of("exit_early_success")
    assert any("ran 0 times" in r for r in early.detail["reasons"])  # no copy ran
    (spare,) = result.of("selective_forgery_spares_unknown_tests")
    assert any("verbatim copy" in r for r in spare.detail["reasons"])  # copies ran honestly


def test_go_results_are_per_test_and_the_image_is_offline(engine, go_matrix):
    prepared, result, _ = go_matrix
    (oracle, *_) = result.of("oracle")
    runners = oracle.detail["check"]["runners"]
    assert [r["kind"] for r in runners] == ["go-test"]
    assert runners[0]["tests"] == 3 and runners[0]["controls"] >= 2
    with engine.sandbox(
        prepared.image.image_id, run_id=new_run_id(), limits=prepared.limits
    ) as box:
        env = box.exec("go env GOPROXY GOTOOLCHAIN GOCACHE; go version").stdout.split("\n")
    assert env[:3] == ["off", "local", "/home/agent/.cache/go-build"]
    assert env[3].startswith("go version go1.")


def test_a_go_mod_asking_for_a_newer_go_drops_at_prepare(engine, go_base_ref, tmp_path):
    newer = {**GO_START, "go.mod": b"module example.com/calc\n\ngo 1.99\n"}
    prepared = prepare(write(tmp_path / "task", go_base_ref, newer, GO_FIX, **GO_CHECK), engine)
    assert prepared.drop is not None
    assert prepared.drop.reason is TrialDropReason.DEPENDENCY_UNAVAILABLE_OFFLINE
    assert "go 1.99 or newer" in prepared.drop.detail


# -- services ------------------------------------------------------------------------------------

REDIS_CHECK = dict(
    command="redis-cli FLUSHDB && python3 -m pytest -q",
    language="python",
    runner="pytest",
    services=("redis",),
)


@pytest.fixture(scope="module")
def redis_task(engine, services_base_ref, pytest_packages, tmp_path_factory):
    task = write(
        tmp_path_factory.mktemp("redis") / "task",
        services_base_ref,
        REDIS_START,
        REDIS_FIX,
        python_packages=pytest_packages,
        **REDIS_CHECK,
    )
    return prepare(task, engine)


def test_a_pytest_check_against_redis_is_kept_with_the_redis_the_image_starts(engine, redis_task):
    assert redis_task.drop is None
    run_id = new_run_id()
    result = run_matrix(redis_task, engine=engine, run_id=run_id)
    assert_full_matrix(result, "python")
    (noop,) = result.of("noop")
    assert any("did not pass" in r for r in noop.detail["reasons"])  # it failed, not errored
    assert left_behind(engine, run_id) == []


def test_without_its_service_the_reference_fails_so_the_service_is_what_passes_it(
    engine, redis_task, tmp_path
):
    spec = redis_task.spec
    config = json.loads(spec.tests_files["grading.json"].data)
    assert config["services"] == ["redis"]
    bare = {
        **spec.tests_files,
        "grading.json": FileEntry(json.dumps({**config, "services": []}).encode()),
    }
    reference = {**spec.start_files, "counter/store.py": FileEntry(REDIS_FIX["counter/store.py"])}
    from tasks_review.core.trials.plan import plan_check

    graded = grade_submission(
        engine,
        dataclasses.replace(spec, tests_files=bare),
        redis_task.image.image_id,
        Submission(files=reference),
        facts=None,
        plan=plan_check(spec.command, spec.workdir_rel, {p: e.data for p, e in reference.items()}),
        run_id=new_run_id(),
        limits=redis_task.limits,
    )
    assert graded.verdict.reward == 0.0
    assert "Could not connect to Redis" in graded.logs or "Connection refused" in graded.logs


def test_the_agents_container_has_its_services_as_their_own_users_on_loopback(
    engine, services_base_ref
):
    env = {"TRAJ2ENV_SERVICES": "redis,postgresql"}
    with engine.sandbox(services_base_ref, run_id=new_run_id(), env=env) as box:
        waited = box.exec("python3 -I /usr/local/lib/traj2env/servers.py wait redis postgresql")
        assert waited.exit_code == 0, waited.stderr
        assert box.exec("redis-cli ping").stdout == "PONG\n"
        # psql as the agent, by Debian's default socket, and over TCP as postgres
        assert box.exec("psql -tAc 'select current_user'").stdout == "agent\n"
        tcp = box.exec("psql -h 127.0.0.1 -U postgres -tAc 'select 1'")
        assert tcp.stdout == "1\n", tcp.stderr
        owners = box.exec(
            "for p in /proc/[0-9]*; do "
            "echo \"$(stat -c %U $p) $(head -c 200 $p/cmdline | tr '\\0' ' ')\"; done"
        ).stdout
        assert any(
            line.startswith("redis /usr/bin/redis-server 127.0.0.1:6379")
            for line in owners.splitlines()
        )
        assert any(
            line.startswith("postgres ") and "postgres -D /tmp/traj2env-service-" in line
            for line in owners.splitlines()
        )
        listening = box.exec("cat /proc/net/tcp").stdout
        # 0100007F:18EB = 127.0.0.1:6379, 0100007F:1538 = 127.0.0.1:5432, state 0A = LISTEN
        for port in ("18EB", "1538"):
            rows = [
                r.split()
                for r in listening.splitlines()
                if f":{port} " in r and r.split()[3] == "0A"
            ]
            assert rows and all(r[1].startswith("0100007F:") for r in rows), port
