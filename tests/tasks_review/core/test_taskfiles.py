"""Harbor task folders: Harbor loads and lints them, the oracle is exact, the paths are safe."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import tarfile
import tomllib
from pathlib import Path

import pytest
from harbor.lint import LintRule, lint_task
from harbor.models.task.config import NetworkMode, VerifierEnvironmentMode
from harbor.models.task.task import Task

from tasks_review.core.instruction import added_lines
from tasks_review.core.mining import RepairCandidate, candidate_key
from tasks_review.core.solution import sh_quote
from tasks_review.core.taskfiles import (
    GRADER_FILES,
    PythonPackages,
    SourceTrace,
    TaskWriteError,
    write_task,
)
from trajectories.core.blobs import MemoryBlobs

from .mining.test_repair import fixed_python_story
from .mining.test_repair_samples import STORIES, mine_sample

REPO = Path(__file__).resolve().parents[3]
IMAGE = "127.0.0.1:5000/traj2env/base@sha256:" + "ab" * 32  # traj2env's own base
PUBLIC = "python:3.12-slim@sha256:" + "cd" * 32
SHA = "0f" * 32


def write(dest: Path, candidate: RepairCandidate, blobs, **options) -> Path:
    options.setdefault("base_image", IMAGE)
    return write_task(
        dest,
        candidate,
        candidate.instruction,
        blobs,
        source_trace=SourceTrace.for_candidate(SHA, candidate),
        source_model="test-model",
        **options,
    )


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def handmade(
    blobs: MemoryBlobs,
    start: dict[str, bytes],
    ref: dict[str, bytes],
    *,
    project_dir: str = "/app",
    command: str = "python3 -m unittest -v",
    test_paths: tuple[str, ...] = (),
) -> RepairCandidate:
    start_files = {path: blobs.put(data) for path, data in start.items()}
    ref_files = {path: blobs.put(data) for path, data in ref.items()}
    return RepairCandidate(
        command=command,
        task_command=command,
        cwd=".",
        check_cwd=".",
        language="python",
        runner="unittest",
        check_kind="test",
        root="/work/proj",
        project_dir=project_dir,
        fail_command_index=0,
        pass_command_index=1,
        fail_step_index=2,
        pass_step_index=4,
        fail_step_id=3,
        pass_step_id=5,
        fail_exit_code=1,
        failing_output="FAILED (failures=1)",
        start_files=start_files,
        ref_files=ref_files,
        added=tuple(sorted(p for p in ref_files if p not in start_files)),
        modified=tuple(
            sorted(p for p in ref_files if p in start_files and start_files[p] != ref_files[p])
        ),
        deleted=tuple(sorted(p for p in start_files if p not in ref_files)),
        test_paths=test_paths,
        fix_edits_tests=False,
        unknown_paths=(),
        instruction="# Make the failing check pass\n\nRun `python3 -m unittest -v`.\n",
        key=candidate_key(command, ".", start_files, ref_files),
    )


# -- Harbor accepts every task written -----------------------------------------------------------


@pytest.fixture(scope="module")
def sample_tasks(tmp_path_factory) -> dict[str, tuple[Path, RepairCandidate, MemoryBlobs]]:
    out = tmp_path_factory.mktemp("sample-tasks")
    written = {}
    for fmt in sorted(STORIES):
        _, _, blobs, (candidate,), _ = mine_sample(fmt)
        written[fmt] = (write(out / fmt, candidate, blobs), candidate, blobs)
    return written


def test_the_source_trace_lists_the_sessions_other_recordings_and_the_clone_it_was_laid_on(
    tmp_path,
):
    _, _, blobs, (candidate,), _ = mine_sample("claude-code")
    trace = SourceTrace.for_candidate(
        SHA, candidate, twins=("1a" * 32,), clone={"commit": "c0ffee" * 6 + "c0ff", "how": "time"}
    )
    path = write_task(
        tmp_path / "task",
        candidate,
        candidate.instruction,
        blobs,
        source_trace=trace,
        source_model=None,
        base_image=IMAGE,
    )
    recorded = Task(path).config.metadata["repo2env"]["source_trace"]
    assert recorded["sha256"] == SHA and recorded["twins"] == ["1a" * 32]
    assert recorded["clone"] == {"commit": "c0ffee" * 6 + "c0ff", "how": "time"}


@pytest.mark.parametrize("fmt", sorted(STORIES))
def test_sample_task_loads_with_harbors_task_model(sample_tasks, fmt):
    path, candidate, _ = sample_tasks[fmt]
    task = Task(path)
    config = task.config
    assert config.schema_version == "1.4"
    assert task.instruction == candidate.instruction
    assert config.task is not None and config.task.name == f"traj2env/repair-{candidate.key[:16]}"
    assert config.metadata["source_model"] == "test-model"
    assert config.metadata["family"] == "repair"
    assert config.metadata["repo2env"] == {
        "pipeline": "trajectory_to_env",
        "recipe": "trajectory_replay",
        "reward_kinds": ["test_execution"],
        "reproducibility": {"mode": "inline_dockerfile"},
        "family": "repair",
        "source_trace": {
            "sha256": SHA,
            "steps": [candidate.fail_step_id, candidate.pass_step_id],
            "commands": [candidate.fail_command_index, candidate.pass_command_index],
        },
        "candidate_key": candidate.key,
    }
    assert config.verifier.environment_mode is VerifierEnvironmentMode.SEPARATE
    assert config.agent.user == "agent"
    assert config.environment.network_mode is NetworkMode.NO_NETWORK
    assert (config.environment.cpus, config.environment.memory_mb) == (2, 4096)
    assert config.artifacts == ["/app"]


@pytest.mark.parametrize("fmt", sorted(STORIES))
def test_sample_task_passes_every_harbor_lint_rule(sample_tasks, fmt):
    path, _, _ = sample_tasks[fmt]
    assert lint_task(path, selected_rules=set(LintRule)) == []


def test_harbor_lint_cli_with_all_rules_finds_nothing(sample_tasks):
    paths = [str(path) for path, _, _ in sample_tasks.values()]
    done = subprocess.run(
        [str(REPO / ".venv/bin/harbor"), "lint", *paths, "--select", "ALL", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == []


def test_lint_would_catch_an_unpinned_image_so_write_task_refuses_one(tmp_path):
    blobs = MemoryBlobs()
    candidate = handmade(blobs, {"a.py": b"x = 1\n"}, {"a.py": b"x = 2\n"})
    with pytest.raises(TaskWriteError, match="pinned"):
        write_task(
            tmp_path / "t",
            candidate,
            candidate.instruction,
            blobs,
            source_trace=SourceTrace.for_candidate(SHA, candidate),
            source_model=None,
            base_image="python:3.12-slim",
        )
    assert not (tmp_path / "t").exists()
    written = write(tmp_path / "ok", candidate, blobs)
    dockerfile = written / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace(IMAGE, "python:3.12-slim"))
    assert [f.rule for f in lint_task(written, selected_rules=set(LintRule))] == [
        LintRule.UNPINNED_IMAGE
    ]


# -- the files -----------------------------------------------------------------------------------


def test_task_layout_modes_and_no_symlinks(sample_tasks):
    path, candidate, blobs = sample_tasks["claude-code"]
    files = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())
    assert files == sorted(
        [
            "instruction.md",
            "task.toml",
            "environment/Dockerfile",
            "environment/repository.tar",
            "tests/test.sh",
            "tests/grading.json",
            *(f"tests/grader/{name}" for name in GRADER_FILES),
            "solution/solve.sh",
            *(f"environment/project/{p}" for p in candidate.start_files),
        ]
    )
    for item in [path, *path.rglob("*")]:
        mode = stat.S_IMODE(item.lstat().st_mode)
        assert not item.is_symlink()
        if item.is_dir() or item.name.endswith(".sh"):
            assert mode == 0o755, item
        else:
            assert mode == 0o644, item


def test_environment_holds_exactly_the_starting_files_and_nothing_of_the_fix(sample_tasks):
    for path, candidate, blobs in sample_tasks.values():
        project = tree(path / "environment" / "project")
        assert project == {p: blobs.get(sha) for p, sha in candidate.start_files.items()}
        fix = added_lines(candidate.start_files, candidate.ref_files, blobs)
        environment = tree(path / "environment")
        environment.pop("repository.tar")  # compressed objects of the starting files, below
        visible = "\n".join(
            [(path / "instruction.md").read_text()]
            + [data.decode() for data in environment.values()]
        )
        assert fix and not [line for line in fix if line in visible]


def test_dockerfile_lays_the_project_and_its_repository_down_in_one_layer(sample_tasks):
    path, _, _ = sample_tasks["pi"]
    dockerfile = (path / "environment" / "Dockerfile").read_text()
    steps = [line.split()[0] for line in dockerfile.splitlines() if line and line[0] != "#"]
    assert steps == ["FROM", "ADD"]  # every step costs a container commit on this engine
    assert f"FROM {IMAGE}" in dockerfile
    assert "ADD --chown=agent:agent project/ repository.tar /app/" in dockerfile
    assert "solution" not in dockerfile and "tests/" not in dockerfile


def test_the_repository_holds_one_synthetic_commit_of_exactly_the_starting_files(
    sample_tasks, tmp_path
):
    path, candidate, blobs = sample_tasks["claude-code"]
    checkout = tmp_path / "app"
    shutil.copytree(path / "environment" / "project", checkout)
    with tarfile.open(path / "environment" / "repository.tar") as tar:
        assert {(m.uid, m.gid, m.uname) for m in tar.getmembers()} == {(1000, 1000, "agent")}
        assert all(m.name == ".git" or m.name.startswith(".git/") for m in tar.getmembers())
        tar.extractall(checkout, filter="tar")
    git = ["git", "-c", f"safe.directory={checkout}", "-C", str(checkout)]

    def run(*args: str) -> str:
        return subprocess.run([*git, *args], capture_output=True, text=True, check=True).stdout

    run("fsck", "--strict", "--no-dangling")
    assert run("status", "--porcelain") == ""  # clean: the index refreshes from the files
    assert run("log", "--format=%an <%ae> %at %s") == (
        "traj2env <traj2env@localhost> 946684800 Starting state\n"
    )
    assert run("rev-parse", "--abbrev-ref", "HEAD") == "main\n"
    assert sorted(run("ls-files").splitlines()) == sorted(candidate.start_files)


def test_a_public_base_image_gets_the_agent_user_and_app_folder_made(tmp_path):
    _, _, blobs, (candidate,), _ = mine_sample("pi")
    path = write(tmp_path / "task", candidate, blobs, base_image=PUBLIC, public_base=True)
    dockerfile = (path / "environment" / "Dockerfile").read_text()
    assert f"FROM {PUBLIC}" in dockerfile
    assert "useradd --create-home --shell /bin/bash agent" in dockerfile
    assert "ADD project/ repository.tar /app/" in dockerfile
    assert "chown -R agent:agent /app" in dockerfile
    assert dockerfile.rstrip().splitlines()[-2:] == ["WORKDIR /app", "USER agent"]
    assert lint_task(path, selected_rules=set(LintRule)) == []
    Task(path)


def test_the_same_candidate_always_gives_the_same_bytes(tmp_path):
    _, _, blobs, (candidate,), _ = mine_sample("codex")
    first = tree(write(tmp_path / "one", candidate, blobs))
    second = tree(write(tmp_path / "two", candidate, blobs))
    assert first == second


def test_task_toml_round_trips_through_toml_with_the_check_in_the_description(sample_tasks):
    path, candidate, _ = sample_tasks["codex"]
    data = tomllib.loads((path / "task.toml").read_text())
    assert data["task"]["description"] == "Make the failing check pass: npm test"
    assert data["verifier"]["user"] == "root"
    assert data["agent"]["timeout_sec"] == 1800
    assert sorted(data["task"]["keywords"]) == ["node", "npm", "repair"]


# -- the oracle ----------------------------------------------------------------------------------


def _lay(root: Path, files: dict[str, bytes]) -> None:
    for relative, data in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def test_solve_sh_restores_the_reference_bytes_exactly(tmp_path):
    project = tmp_path / "app"
    blobs = MemoryBlobs()
    binary = bytes(range(256)) * 3
    start = {
        "src/calc.py": b"def add(a, b):\n    return a - b\n",
        "src/old helper.py": b"OLD = 1\n",
        "data/blob.bin": b"\x00\x01",
        "keep.txt": "caf\u00e9 unchanged\n".encode(),
        "no-newline.txt": b"tail",
    }
    ref = {
        "src/calc.py": b"def add(a, b):\n    return a + b\n",
        "data/blob.bin": binary,
        "keep.txt": start["keep.txt"],
        "no-newline.txt": b"still no newline",
        'new dir/it\'s a "file" with spaces.py': b"X = '$HOME `whoami` \\n'\r\n",
        "docs/na\u00efve \u2603.md": "snow \u2603\n".encode(),
        "weird\nname.txt": b"newline in the name\n",
        "empty.txt": b"",
    }
    candidate = handmade(blobs, start, ref, project_dir=str(project))
    assert candidate.deleted == ("src/old helper.py",)
    task = write(tmp_path / "task", candidate, blobs)
    _lay(project, start)
    done = subprocess.run(
        ["bash", str(task / "solution" / "solve.sh")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert tree(project) == ref
    for path in project.rglob("*"):
        if path.is_file():
            assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_sample_oracles_turn_the_start_into_the_reference(sample_tasks, tmp_path):
    for fmt, (path, candidate, blobs) in sample_tasks.items():
        project = tmp_path / fmt / "app"
        _lay(project, {p: blobs.get(sha) for p, sha in candidate.start_files.items()})
        script = (path / "solution" / "solve.sh").read_text().replace("cd /app", f"cd {project}")
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert tree(project) == {p: blobs.get(sha) for p, sha in candidate.ref_files.items()}


def test_sh_quote_keeps_any_name_on_one_line():
    assert sh_quote("plain.py") == "plain.py"
    assert sh_quote("a b.py") == "'a b.py'"
    assert sh_quote("a\nb") == "$'a\\x0ab'"
    assert "\n" not in sh_quote("x\n\ny")


# -- path safety ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    ["../x.py", "/etc/passwd", "a/../../x.py", "./x.py", ".git/config", "a//b.py", "a\\b.py", ""],
)
def test_unsafe_paths_are_refused_and_nothing_is_written(tmp_path, bad):
    blobs = MemoryBlobs()
    candidate = handmade(blobs, {"ok.py": b"x = 1\n"}, {"ok.py": b"x = 1\n", bad: b"evil\n"})
    with pytest.raises(TaskWriteError, match="refusing path"):
        write(tmp_path / "task", candidate, blobs)
    assert not (tmp_path / "task").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert not (tmp_path.parent / "x.py").exists()


def test_a_path_that_is_both_a_file_and_a_folder_is_refused(tmp_path):
    blobs = MemoryBlobs()
    candidate = handmade(blobs, {"a": b"file\n", "a/b.py": b"x\n"}, {"a": b"file\n"})
    with pytest.raises(TaskWriteError, match="as a folder"):
        write(tmp_path / "task", candidate, blobs)


def test_a_non_empty_destination_is_kept_unless_overwrite_is_asked(tmp_path):
    blobs = MemoryBlobs()
    candidate = handmade(blobs, {"a.py": b"x = 1\n"}, {"a.py": b"x = 2\n"})
    dest = tmp_path / "task"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    with pytest.raises(TaskWriteError, match="not empty"):
        write(dest, candidate, blobs)
    assert (dest / "keep.txt").read_text() == "mine"
    write(dest, candidate, blobs, overwrite=True)
    assert not (dest / "keep.txt").exists() and (dest / "task.toml").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["task"], "no staging folder is left behind"


def test_an_instruction_that_leaks_the_fix_is_refused(tmp_path):
    blobs = MemoryBlobs()
    candidate = handmade(
        blobs, {"a.py": b"RATE = 0.1\n"}, {"a.py": b"RATE = 0.2  # corrected rate\n"}
    )
    with pytest.raises(TaskWriteError, match="leak"):
        write_task(
            tmp_path / "task",
            candidate,
            "Set RATE = 0.2  # corrected rate please",
            blobs,
            source_trace=SourceTrace.for_candidate(SHA, candidate),
            source_model=None,
            base_image=IMAGE,
        )
    assert not (tmp_path / "task").exists()


# -- Python dependencies -------------------------------------------------------------------------


def test_a_task_with_python_packages_installs_them_offline_from_its_own_wheels(tmp_path):
    mined = fixed_python_story().mine()
    wheel = tmp_path / "cache" / "pytest-8.3.5-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"PK not really a wheel")
    lock = "pytest==8.3.5 --hash=sha256:" + "c" * 64 + "\n"
    packages = PythonPackages(
        requirements=("pytest",),
        lock=lock,
        wheels=(wheel,),
        resolved_before="2025-06-01T00:00:00+00:00",
        date_source="trajectory",
    )
    path = write(tmp_path / "task", mined.only, mined.blobs, python_packages=packages)
    wheels = path / "environment" / "wheels"
    assert (wheels / "requirements.lock").read_text() == lock
    assert (wheels / wheel.name).read_bytes() == wheel.read_bytes()
    dockerfile = (path / "environment" / "Dockerfile").read_text()
    assert "COPY wheels/ /tmp/traj2env-wheels/" in dockerfile
    assert "--no-index" in dockerfile and "--require-hashes" in dockerfile
    # Installed before the project is laid down, outside it: Harbor's verifier replaces /app.
    assert dockerfile.index("pip install") < dockerfile.index("ADD ")
    steps = [line.split()[0] for line in dockerfile.splitlines() if line and line[0] in "FRCAU"]
    # The venv is on the base image's PATH, and root's: root installs it, the agent cannot
    # change it (same-container grading runs the check's runners from it).
    assert steps == ["FROM", "USER", "COPY", "RUN", "USER", "ADD"]
    assert "USER root" in dockerfile and dockerfile.rstrip().count("USER agent") == 1
    meta = tomllib.loads((path / "task.toml").read_text())["metadata"]["dependencies"]
    assert meta == {
        "python": ["pytest"],
        "resolved_before": "2025-06-01T00:00:00+00:00",
        "date_source": "trajectory",
        "installed_into": "/opt/traj2env/venv",
    }
    assert lint_task(path, selected_rules=set(LintRule)) == []
    Task(path)
