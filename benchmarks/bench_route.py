"""The route endpoint under load: gunicorn on loopback, SQLite under var/, wrk at about 200 rps.

    .venv/bin/python benchmarks/bench_route.py [--workers 2] [--connections 4] [--delay-ms 16]
                                               [--seconds 30] [--deployments 200]
                                               [--conn-max-age 60]

Fills a fresh database under ``var/bench-route/`` with the catalogue's behaviours, one API
client and ``--deployments`` deployments (an active one per behaviour, the rest retired or
killed versions, each with a usage row for today), starts ``gunicorn project.wsgi`` and drives
``GET /api/v1/route`` with wrk. wrk 4 cannot pace by itself (no ``-R``); its Lua ``delay()``
holds each connection ``--delay-ms`` between requests, so the rate is about
connections / (delay + latency), and the script prints the rate it got. Subjects vary per
request so bucketing is exercised. Then, under the same load, the kill switch: the time from the
kill call's answer to the first route answer naming the base model. Rows are written with the
ORM directly: the benchmark measures the read path, not the gate.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VAR = REPO / "var" / "bench-route"
LUA = """
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/api/v1/route?behaviour=failing-test-repair&subject=repo-" .. counter,
                    {["Authorization"] = "Bearer %(token)s"})
end
delay = function()
  return %(delay)d
end
"""


def setup_database(deployments: int) -> str:
    """A migrated database with the rows the route reads; the API client's token."""
    if VAR.exists():
        shutil.rmtree(VAR)
    VAR.mkdir(parents=True)
    os.environ["TRAJ2ENV_VAR"] = str(VAR)
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    # DEBUG off, as deployed, needs a key.
    os.environ.setdefault("SECRET_KEY", "traj2env-benchmarks-only-key")
    sys.path.insert(0, str(REPO))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)

    from django.contrib.auth.models import User
    from django.utils import timezone

    from training.models import Adapter, Deployment, DeploymentShare, DeploymentUsage
    from training.services.behaviours import behaviour_catalogue_seed
    from training.services.deploy_clients import api_client_create

    owner = User.objects.create_user("bench")
    behaviours = behaviour_catalogue_seed()
    for b in behaviours:
        b.base_model = "qwen-coder"
        b.save(update_fields=["base_model"])
    States = Deployment.State
    today = timezone.now().date()
    for i in range(deployments):
        behaviour = behaviours[i % len(behaviours)]
        version = f"1.{i // len(behaviours)}"
        name = f"{behaviour.slug}-lora"
        adapter = Adapter.objects.create(
            behaviour=behaviour,
            name=name,
            version=version,
            eval_suite="bench",
            base_model="qwen-coder",
            training_plan="plan-1",
            dataset_sha256="a" * 64,
            artifact_uri=f"s3://adapters/{name}/{version}",
            artifact_sha256="b" * 64,
            rank=16,
            served_name=f"{name}-v{version}",
            registered_by=owner,
        )
        # The newest version of each behaviour serves; older ones are retired or killed.
        newest = i >= deployments - len(behaviours)
        state = States.ACTIVE if newest else (States.RETIRED if i % 3 else States.KILLED)
        d = Deployment.objects.create(adapter=adapter, proposed_by=owner, state=state)
        DeploymentShare.objects.create(
            deployment=d, behaviour=behaviour, requested=5000, ceiling=5000, live=5000
        )
        DeploymentUsage.objects.create(deployment=d, day=today, tokens=10, reports=1)
    _client, token = api_client_create(user=None, name="bench")
    return token


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ask(base: str, token: str, path: str, method: str = "GET") -> dict:
    request = urllib.request.Request(
        base + path, method=method, headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def wrk(base: str, token: str, args: argparse.Namespace) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(LUA % {"token": token, "delay": args.delay_ms})
    command = [
        "wrk",
        f"-t{min(args.connections, 2)}",
        f"-c{args.connections}",
        f"-d{args.seconds}s",
        "--latency",
        "-s",
        script.name,
        base,
    ]
    print("$", " ".join(command))
    try:
        return subprocess.run(command, check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(script.name)


def kill_flip(base: str, token: str, deployment: int) -> float:
    """Seconds from the kill call's answer to the first route answer naming the base model."""
    path = "/api/v1/route?behaviour=failing-test-repair&subject=drill-0"
    assert ask(base, token, path)["adapter"] is not None
    ask(base, token, f"/api/v1/deployments/{deployment}/kill", method="POST")
    killed = time.perf_counter()
    while ask(base, token, path)["adapter"] is not None:
        if time.perf_counter() - killed > 5:
            raise SystemExit("the route still answered the adapter 5 s after the kill")
    return time.perf_counter() - killed


def main() -> None:
    if shutil.which("wrk") is None:
        sys.exit("bench_route needs wrk (Debian: apt-get install wrk)")
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--delay-ms", type=int, default=16)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--deployments", type=int, default=200)
    parser.add_argument(
        "--conn-max-age",
        type=int,
        default=60,
        help="DB_CONN_MAX_AGE for the server (the project's default 60; 0 opens a connection "
        "per request, to show what that costs)",
    )
    args = parser.parse_args()

    token = setup_database(args.deployments)
    from training.models import Deployment

    active = Deployment.objects.get(
        state=Deployment.State.ACTIVE, adapter__behaviour__slug="failing-test-repair"
    ).pk
    from django.db import connection

    connection.close()  # the server processes open their own
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "TRAJ2ENV_VAR": str(VAR), "LOG_LEVEL": "WARNING"}
    env["DB_CONN_MAX_AGE"] = str(args.conn_max_age)
    gunicorn = [
        str(Path(sys.executable).with_name("gunicorn")),
        "project.wsgi",
        "-w",
        str(args.workers),
        "-b",
        f"127.0.0.1:{port}",
        "--log-level",
        "warning",
    ]
    server = subprocess.Popen(gunicorn, cwd=REPO, env=env)
    try:
        for _ in range(100):
            try:
                ask(base, token, "/api/v1/route?behaviour=failing-test-repair&subject=x")
                break
            except OSError:
                time.sleep(0.1)
        for _ in range(200):  # warm every worker's imports and connection
            ask(base, token, "/api/v1/route?behaviour=failing-test-repair&subject=warm")
        output = wrk(base, token, args)
        print(output)
        rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
        p99 = re.search(r"99%\s+([\d.]+)(\w+)", output)
        print(f"rate: {rate.group(1) if rate else '?'} rps; p99: {p99.groups() if p99 else '?'}")
        flip = kill_flip(base, token, active)
        print(f"kill -> base model answered after {flip * 1000:.1f} ms")
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(VAR, ignore_errors=True)


if __name__ == "__main__":
    main()
