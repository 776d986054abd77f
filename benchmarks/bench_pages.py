"""Server time of the list pages with many rows, through Django's test client, logged in.

.venv/bin/python benchmarks/bench_pages.py [--trajectories 10000]
"""

from __future__ import annotations

import argparse
import statistics
import time

from _django import setup


def _p95_ms(fn, repeat: int = 40) -> tuple[float, float]:
    fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trajectories", type=int, default=10_000)
    args = parser.parse_args()
    setup()
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from trajectories.models import Blob, SourceFile, Trajectory

    blob = Blob.objects.create(sha256="0" * 64, size=0, data=b"x\x9c\x03\x00\x00\x00\x00\x01")
    formats = ["claude-code", "codex", "pi", "atif"]
    sources = SourceFile.objects.bulk_create(
        SourceFile(sha256=f"{i:064x}", path=f"/data/s{i}.jsonl", size=1000 + i, raw=blob)
        for i in range(args.trajectories)
    )
    Trajectory.objects.bulk_create(
        Trajectory(
            source=s,
            format=formats[i % 4],
            schema_version="ATIF-v1.7",
            agent_name=formats[i % 4],
            model_name=f"model-{i % 7}",
            session_id=f"session-{i}",
            title=f"Repair case number {i}",
            steps_count=i % 300,
            prompt_tokens=i * 10,
            completion_tokens=i,
            cost_usd=i / 1000,
            blocked=i % 50 == 0,
            atif=blob,
        )
        for i, s in enumerate(sources)
    )
    user = User.objects.create_user("bench", password="x")
    user.groups.add(Group.objects.get(name="annotator"))
    client = Client()
    client.force_login(user)

    def get(url: str, **headers):
        def go():
            assert client.get(url, headers=headers).status_code == 200

        return go

    print(f"{args.trajectories} trajectories; server time in ms (median / p95 of 40)")
    for label, url, headers in (
        ("list, first page", "/trajectories/", {}),
        ("list, page 150", "/trajectories/?page=150", {}),
        ("list, search 'case number 99'", "/trajectories/?q=case+number+99", {}),
        ("list, filter codex + blocked", "/trajectories/?format=codex&blocked=yes", {}),
        (
            "list, htmx fragment",
            "/trajectories/?q=repair",
            {"HX-Request": "true", "HX-Target": "trajectory-results"},
        ),
    ):
        median, p95 = _p95_ms(get(url, **headers))
        print(f"  {label:<34} {median:7.1f} / {p95:7.1f}")


if __name__ == "__main__":
    main()
