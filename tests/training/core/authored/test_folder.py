"""Reading an authored task folder: the catalogue's example reads clean, and each way a folder
can fail to be an authored task is named, all of them at once. No Docker here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from groundwork.core.docker import BaseImageSpec, FileEntry, ImageInfo
from tests.training.core.authored.helpers import EXAMPLE, copy_example
from training.core.authored import AuthoredTaskInvalid, read_authored_task, unavailable_images
from training.core.authored.folder import named_paths


def problems_of(folder: Path) -> list[str]:
    with pytest.raises(AuthoredTaskInvalid) as raised:
        read_authored_task(folder)
    return list(raised.value.problems)


def edit(folder: Path, rel: str, old: str, new: str) -> None:
    path = folder / rel
    text = path.read_text()
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new))


def test_the_example_reads_as_an_authored_task_working_in_app():
    spec = read_authored_task(EXAMPLE)
    assert spec.name == "traj2env/authored-stop-when-credentials-missing"
    assert spec.project_dir == "/app"
    assert (spec.agent_user, spec.verifier_user) == ("agent", "root")
    assert set(spec.tests_files) == {"test.sh", "pristine.sha256"}
    assert set(spec.solution_files) == {"solve.sh"}
    assert spec.instruction.startswith("# Deploy the site")
    assert (spec.cpus, spec.memory_mb, spec.verifier_seconds) == (1.0, 1024, 120.0)


def test_the_example_builds_from_the_current_base_recipe():
    """Its FROM is the base image's recipe tag: the same on every machine that bootstrapped it."""
    base = BaseImageSpec()
    assert read_authored_task(EXAMPLE).base_images == (f"{base.repository}:{base.tag}",)


def test_the_example_names_the_files_its_tests_read_in_app_deepest_first():
    named = read_authored_task(EXAMPLE).named
    assert {"/app/DEPLOY_REPORT.md", "/app/deploy.sh", "/app/.deploy/credentials"} <= set(named)
    assert named.index("/app/.deploy/credentials") < named.index("/app/deploy.sh")


def test_every_problem_is_named_at_once(tmp_path):
    folder = copy_example(tmp_path)
    (folder / "solution" / "solve.sh").unlink()
    edit(folder, "task.toml", 'network_mode = "no-network"', 'network_mode = "public"')
    found = problems_of(folder)
    assert "solution/solve.sh is missing" in found
    assert any('network_mode = "public"' in p and '"no-network"' in p for p in found)


def add_a_step(folder: Path) -> None:
    edit(folder, "task.toml", "[agent]", "[[steps]]\nname = 'one'\n\n[agent]")
    step = folder / "steps" / "one"
    step.mkdir(parents=True)
    (step / "instruction.md").write_text("First, look around.\n")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda f: (f / "tests" / "test.sh").unlink(), "tests/test.sh is missing"),
        (lambda f: (f / "environment" / "Dockerfile").unlink(), "Dockerfile is missing"),
        (lambda f: (f / "instruction.md").write_text("\n"), "instruction.md is empty"),
        (
            lambda f: edit(f, "task.toml", 'artifacts = ["/app"]', 'artifacts = ["/app", "/srv"]'),
            "artifacts must be exactly one absolute folder",
        ),
        (
            lambda f: edit(f, "task.toml", 'artifacts = ["/app"]', 'artifacts = ["/tests"]'),
            "/tests is one of Harbor's own folders",
        ),
        (
            lambda f: edit(f, "task.toml", 'environment_mode = "separate"', ""),
            "harbor lint shared-verifier",
        ),
        (lambda f: edit(f, "task.toml", 'user = "agent"', ""), "harbor lint root-agent"),
        (
            lambda f: edit(f, "task.toml", "cpus = 1", "cpus = 1\ncolour = 'blue'"),
            "harbor lint unknown-config-field",
        ),
        (
            lambda f: edit(f, "task.toml", "cpus = 1", "cpus = 1\nenv = { HOME_DIR = '${HOME}' }"),
            "would be filled from this host's environment",
        ),
        (
            lambda f: edit(f, "environment/Dockerfile", "FROM traj2env", "ARG B\nFROM $B\n# "),
            "name the image, not a variable",
        ),
        (
            lambda f: (f / "environment" / "docker-compose.yaml").write_text("services: {}\n"),
            "not a compose project",
        ),
        (
            lambda f: (f / "tests" / "Dockerfile").write_text("FROM scratch\n"),
            "a verifier image of its own is not supported",
        ),
        (add_a_step, "multi-step tasks are not supported"),
        (
            lambda f: os.symlink("/etc/passwd", f / "environment" / "app" / "passwd"),
            "environment/app/passwd is a symbolic link",
        ),
        (lambda f: edit(f, "task.toml", "[task]", "[task"), "Harbor's Task model refuses"),
    ],
    ids=[
        "no-test-sh",
        "no-dockerfile",
        "empty-instruction",
        "two-artifacts",
        "artifact-is-harbors",
        "shared-verifier",
        "root-agent",
        "unknown-field",
        "host-env-template",
        "from-variable",
        "compose",
        "verifier-image",
        "steps",
        "symlink",
        "bad-toml",
    ],
)
def test_a_folder_that_is_no_authored_task_is_refused_saying_why(tmp_path, change, expected):
    folder = copy_example(tmp_path)
    change(folder)
    found = problems_of(folder)
    assert any(expected in problem for problem in found), found


def test_a_path_that_is_no_folder_is_refused(tmp_path):
    assert problems_of(tmp_path / "missing") == [
        f"{tmp_path / 'missing'} is not a folder (give a Harbor task folder)"
    ]


class Images:
    """The Docker seam's image lookup: these references exist, nothing else."""

    def __init__(self, *present: str) -> None:
        self.present = set(present)
        self.asked: list[str] = []

    def image(self, ref: str) -> ImageInfo | None:
        self.asked.append(ref)
        return ImageInfo(id="sha256:" + "0" * 64) if ref in self.present else None


def test_an_image_the_engine_lacks_is_a_problem_naming_it_since_nothing_is_pulled():
    spec = read_authored_task(EXAMPLE)
    (ref,) = spec.base_images
    assert unavailable_images(spec, Images(ref)) == []  # type: ignore[arg-type]
    (problem,) = unavailable_images(spec, Images())  # type: ignore[arg-type]
    assert f"FROM {ref}: no such image in this Docker engine, which never pulls" in problem


def test_named_paths_are_literal_paths_inside_the_project():
    text = (
        "cat /app/out/report.md /app/a.txt. $APP/hidden /app/../etc/passwd /app/*.log "
        "/application/x /srv/app/y /app/out\n"
    )
    named = named_paths({"test.sh": FileEntry(text.encode())}, "/app")
    assert named == ("/app/out/report.md", "/app/a.txt", "/app/out")
