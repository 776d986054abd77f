"""The review desk with 10,000 candidates and 100,000 trial rows.

    .venv/bin/python benchmarks/bench_review.py [--candidates 10000] [--trials-each 10] [--keys 30]

Prints server time (median / p95 through Django's test client, logged in as an annotator) of the
queue page, its fragments and a candidate page, and then, in Debian's chromium through
Playwright against a live server, the time from a decision key press to the next candidate shown
(keydown to the first frame painted after htmx swapped the new desk in).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time

from _django import setup


def _stats(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.95) - 1)]


def _timed(fn, repeat: int = 40) -> tuple[float, float]:
    fn()  # warm caches the way a second visitor would find them
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return _stats(samples)


def populate(candidates: int, trials_each: int) -> None:
    import zlib

    from django.contrib.auth.models import Group, User
    from django.utils import timezone

    from tasks_review.models import Candidate, PipelineRun, Review, TrialRun
    from trajectories.models import Blob, SourceFile, Trajectory
    from trajectories.store import sha256_hex

    def blob(data: bytes) -> str:
        sha = sha256_hex(data)
        Blob.objects.get_or_create(
            sha256=sha, defaults={"size": len(data), "data": zlib.compress(data, 1)}
        )
        return sha

    source = "\n".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(60)).encode()
    fixed = source.replace(b"return x + 7\n", b"return x + 7 - 1\n")
    start = {
        "src/calc.py": blob(source),
        "src/__init__.py": blob(b""),
        "tests/test_calc.py": blob(
            b"from src.calc import f7\n\ndef test():\n    assert f7(1) == 7\n"
        ),
        "README.md": blob(b"# calc\n"),
        "pyproject.toml": blob(b"[project]\nname = 'calc'\n"),
    }
    reference = {**start, "src/calc.py": blob(fixed)}
    raw = Blob.objects.get(sha256=start["README.md"])
    formats = ["claude-code", "codex", "pi", "atif"]
    sources = SourceFile.objects.bulk_create(
        SourceFile(sha256=f"{i:064x}", path=f"/data/s{i}.jsonl", size=1000, raw=raw)
        for i in range(500)
    )
    trajectories = Trajectory.objects.bulk_create(
        Trajectory(
            source=s,
            format=formats[i % 4],
            schema_version="ATIF-v1.7",
            agent_name=formats[i % 4],
            title=f"Repair session {i}",
            steps_count=40,
            atif=raw,
        )
        for i, s in enumerate(sources)
    )
    run = PipelineRun.objects.create(config={}, destination="x")
    languages = ["python", "javascript", "go", "rust"]
    statuses = ["kept"] * 8 + ["written", "dropped"]
    Candidate.objects.bulk_create(
        (
            Candidate(
                run=run,
                trajectory=trajectories[i % len(trajectories)],
                family=["repair", "build", "extend"][i % 3],
                key=f"k{i}",
                status=statuses[i % len(statuses)],
                language=languages[i % 4],
                runner="pytest",
                check_command=f"pytest tests/test_calc.py -k case_{i}",
                fail_step=3,
                pass_step=9,
                instruction=f"Case {i}: f7 returns one too many.\n\nMake the tests pass.",
                start_files=start,
                reference_files=reference,
                task_name=f"repair-calc-{i}",
            )
            for i in range(candidates)
        ),
        batch_size=1000,
    )
    ids = list(Candidate.objects.values_list("id", flat=True))
    now = timezone.now()
    roles = [("oracle", 1.0), ("noop", 0.0)] + [(f"control_{n}", 0.0) for n in range(8)]
    batch: list[TrialRun] = []
    for cid in ids:
        for n in range(trials_each):
            role, expected = roles[n % len(roles)]
            batch.append(
                TrialRun(
                    candidate_id=cid,
                    role=role,
                    repeat=n // len(roles),
                    status="graded",
                    reward=expected,
                    expected=expected,
                    started_at=now,
                    finished_at=now,
                    duration_ms=8000 + n,
                    logs=f"== {role} ==\n" + "collected 1 item\n1 passed in 0.01s\n" * 6,
                )
            )
        if len(batch) >= 20_000:
            TrialRun.objects.bulk_create(batch, batch_size=2000)
            batch = []
    TrialRun.objects.bulk_create(batch, batch_size=2000)

    annotators = Group.objects.get(name="annotator")
    others = []
    for name in ("rev1", "rev2", "rev3"):
        user = User.objects.create_user(name)
        user.groups.add(annotators)
        others.append(user)
    # A third of the queue already carries someone else's review; some are decided.
    Review.objects.bulk_create(
        (
            Review(
                candidate_id=cid,
                reviewer=others[i % 3],
                decision=["accept", "reject", "needs_fix"][i % 3],
                reason=["good", "too_easy", "environment_broken"][i % 3],
            )
            for i, cid in enumerate(ids[::3])
        ),
        batch_size=2000,
    )
    Candidate.objects.filter(id__in=ids[::9]).update(review_status="accepted")


def server_times(user) -> None:
    from django.test import Client

    from tasks_review.models import Candidate, TrialRun

    client = Client()
    client.force_login(user)

    def get(url: str, **headers):
        def go():
            response = client.get(url, headers=headers)
            assert response.status_code == 200, (url, response.status_code)

        return go

    pending = list(
        Candidate.objects.filter(status="kept", review_status="pending").values_list(
            "id", flat=True
        )[:200]
    )
    some = pending[len(pending) // 2]
    trial = TrialRun.objects.filter(candidate_id=some).first()
    hx = {"HX-Request": "true"}
    print("server time in ms (median / p95 of 40)")
    for label, fn in (
        ("queue, first page", get("/review/")),
        ("queue, page 60", get("/review/?page=60")),
        ("queue, all, sorted by most reviews", get("/review/?review=all&sort=-reviews")),
        ("queue, filter go + codex", get("/review/?language=go&source=codex")),
        ("queue, reviewed by rev2", get("/review/?reviewer=rev2&review=all")),
        (
            "queue, htmx fragment",
            get("/review/?family=build", **hx, **{"HX-Target": "queue-results"}),
        ),
        ("candidate page (held, reopened)", get(f"/review/candidates/{some}/")),
        ("candidate desk, htmx fragment", get(f"/review/candidates/{some}/", **hx)),
        ("trial logs fragment", get(f"/review/candidates/{some}/trials/{trial.pk}/logs/", **hx)),
    ):
        median, p95 = _timed(fn)
        print(f"  {label:<40} {median:7.1f} / {p95:7.1f}")

    # Opening a different candidate each time: a new hold, its audit row and the release
    # of the one before, as j/k and "next" do.
    walk = iter(pending[:41])

    def open_next():
        response = client.get(f"/review/candidates/{next(walk)}/")
        assert response.status_code == 200

    median, p95 = _timed(open_next)
    print(f"  {'candidate page, a new one each time':<40} {median:7.1f} / {p95:7.1f}")

    # A decision and the next candidate's desk, as one request (the swap the key press waits for).
    decided = iter(pending[60:101])

    def decide():
        pk = next(decided)
        response = client.post(
            f"/review/candidates/{pk}/decide/", {"decision": "accept"}, headers=hx
        )
        assert response.status_code == 200, response.content[:200]

    median, p95 = _timed(decide)
    print(f"  {'decide + next desk (htmx POST)':<40} {median:7.1f} / {p95:7.1f}")


def key_to_next(user, password: str, keys: int) -> None:
    chromium = os.environ.get("TRAJ2ENV_CHROMIUM") or shutil.which("chromium")
    if not chromium:
        print("key press to next candidate: skipped (no chromium on this machine)")
        return
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.db import connections
    from django.test.testcases import LiveServerThread
    from playwright.sync_api import sync_playwright

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    connections.close_all()  # the server thread opens its own connection to the SQLite file
    server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    if server.error:
        raise server.error
    base = f"http://127.0.0.1:{server.port}"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(base_url=base, viewport={"width": 1400, "height": 900})
            page.goto("/accounts/login/")
            page.fill("input[name=username]", user.username)
            page.fill("input[name=password]", password)
            page.click("button[type=submit]")
            page.wait_for_url(lambda url: "/accounts/login/" not in url)
            page.goto("/review/")
            page.keyboard.press("n")
            page.wait_for_selector(".desk[data-candidate]")
            page.evaluate(
                """() => {
                  window.benchMarks = [];
                  document.addEventListener(
                    'keydown', () => { window.benchT0 = performance.now(); }, true);
                  document.addEventListener('htmx:afterSwap', () => {
                    const t0 = window.benchT0;
                    if (t0 === undefined) return;
                    window.benchT0 = undefined;
                    requestAnimationFrame(() => window.benchMarks.push(performance.now() - t0));
                  });
                }"""
            )
            wall = []
            for _ in range(keys):
                shown = page.get_attribute(".desk[data-candidate]", "data-candidate")
                started = time.perf_counter()
                page.keyboard.press("a")
                page.wait_for_selector(f".desk[data-candidate]:not([data-candidate='{shown}'])")
                wall.append((time.perf_counter() - started) * 1000)
            page.wait_for_function(f"window.benchMarks.length >= {keys}")
            marks = page.evaluate("window.benchMarks")
            browser.close()
    finally:
        server.terminate()
    median, p95 = _stats(marks)
    wall_median, wall_p95 = _stats(wall)
    print(f"key press 'a' to the next candidate painted, in chromium ({keys} decisions)")
    print(f"  {'keydown -> swapped and painted (page)':<40} {median:7.1f} / {p95:7.1f}")
    print(f"  {'press -> new desk seen (Playwright)':<40} {wall_median:7.1f} / {wall_p95:7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=10_000)
    parser.add_argument("--trials-each", type=int, default=10)
    parser.add_argument("--keys", type=int, default=30)
    args = parser.parse_args()
    setup()
    from django.contrib.auth.models import Group, User

    from tasks_review.models import Candidate, TrialRun

    started = time.perf_counter()
    populate(args.candidates, args.trials_each)
    print(
        f"{Candidate.objects.count()} candidates, {TrialRun.objects.count()} trial rows "
        f"(made in {time.perf_counter() - started:.1f} s)"
    )
    password = "bench-password"
    user = User.objects.create_user("bench", password=password)
    user.groups.add(Group.objects.get(name="annotator"))
    server_times(user)
    key_to_next(user, password, args.keys)


if __name__ == "__main__":
    main()
