"""A user's own clone of a session's project: which clone, which commit, which files.

Real repositories (``git init`` and dated commits in a temporary folder): git is the seam, and
it is on every machine that has a clone.
"""

from __future__ import annotations

import dataclasses
import os
from datetime import datetime
from pathlib import Path

import pytest

from tasks_review.core.clones import (
    CloneError,
    NoSeed,
    Project,
    Start,
    StartKind,
    clone_for,
    clone_overlay,
    open_repository,
    remote_id,
    start_commit,
)
from tasks_review.core.clones import overlay as overlay_module
from tests.tasks_review.gitrepo import GitRepo
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import replay
from trajectories.core.replay.synthetic import AtifBuilder

DAY1, DAY2, DAY3 = "2026-03-01T09:00:00Z", "2026-03-02T09:00:00Z", "2026-03-03T09:00:00Z"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture
def history(tmp_path):
    """main: DAY1, DAY2, DAY3; feat (from DAY1): one commit at DAY2 + 1 h."""
    repo = GitRepo(tmp_path / "clone")
    shas = {"day1": repo.commit(DAY1, {"calc.py": "v1\n"})}
    repo.git("checkout", "-q", "-b", "feat")
    shas["feat"] = repo.commit("2026-03-02T10:00:00Z", {"calc.py": "feat\n"})
    repo.git("checkout", "-q", "main")
    shas["day2"] = repo.commit(DAY2, {"calc.py": "v2\n"})
    shas["day3"] = repo.commit(DAY3, {"calc.py": "v3\n"})
    return repo, shas


def project(**fields) -> Project:
    return Project(**{"cwd": "/work/app", "started_at": None, **fields})


# -- which commit ------------------------------------------------------------------------------


def test_the_commit_the_session_recorded_is_used_when_the_clone_has_it(history):
    repo, shas = history
    found = start_commit(open_repository(repo.path), project(commit=shas["day2"]))
    assert found == Start(shas["day2"], "recorded by the session", StartKind.RECORDED_COMMIT)


def test_without_a_recorded_commit_the_last_commit_before_the_start_on_its_branch(history):
    repo, shas = history
    clone = open_repository(repo.path)
    on_main = start_commit(clone, project(branch="main", started_at=at("2026-03-02T12:00:00Z")))
    assert (on_main.commit, on_main.kind) == (shas["day2"], StartKind.RECORDED_BRANCH)
    assert "on main before the session started (2026-03-02T12:00:00+00:00)" in on_main.how
    on_feat = start_commit(clone, project(branch="feat", started_at=at("2026-03-02T12:00:00Z")))
    assert on_feat.commit == shas["feat"]


def test_a_recorded_commit_the_clone_lacks_falls_back_to_the_branch_and_time(history):
    repo, shas = history
    found = start_commit(
        open_repository(repo.path),
        project(commit="ab" * 20, branch="main", started_at=at("2026-03-01T12:00:00Z")),
    )
    assert found.commit == shas["day1"]


def test_a_recorded_branch_the_clone_lacks_starts_from_the_default_branch_and_says_so(history):
    repo, shas = history
    found = start_commit(
        open_repository(repo.path),
        project(commit="ab" * 20, branch="gone", started_at=at("2026-03-02T12:00:00Z")),
    )
    assert (found.commit, found.kind) == (shas["day2"], StartKind.DEFAULT_BRANCH)
    assert found.how.startswith(
        f"the recorded commit {'ab' * 6} is not in the clone; the clone has no branch 'gone' and "
        "no merge of it into main names it; the last commit on main (the clone's default branch)"
    )


def test_a_branch_only_a_remote_tracks_is_found(history, tmp_path):
    repo, shas = history
    copy = GitRepo(tmp_path / "copy")
    copy.git("fetch", "-q", str(repo.path), "feat:refs/remotes/origin/feat")
    found = start_commit(
        open_repository(copy.path), project(branch="feat", started_at=at("2026-03-02T12:00:00Z"))
    )
    assert found.commit == shas["feat"]


def test_no_recorded_branch_means_the_clones_checked_out_branch(history):
    repo, shas = history
    found = start_commit(open_repository(repo.path), project(started_at=at(DAY3)))
    assert (found.commit, found.kind) == (shas["day3"], StartKind.CHECKED_OUT)
    assert "checked-out branch" in found.how


def test_a_session_before_the_first_commit_or_without_a_start_time_gets_no_commit(history):
    repo, _ = history
    clone = open_repository(repo.path)
    early = start_commit(clone, project(branch="main", started_at=at("2026-01-01T00:00:00Z")))
    assert early == Start(
        None,
        "no commit on main before the session started (2026-01-01T00:00:00+00:00)",
        NoSeed.NO_COMMIT_BEFORE,
    )
    untimed = start_commit(clone, project(branch="main"))
    assert (untimed.how, untimed.kind) == ("the session recorded no start time", "no_start_time")


def test_recorded_text_is_never_taken_for_a_git_option(history):
    repo, _ = history
    found = start_commit(
        open_repository(repo.path),
        project(commit="--output=x", branch="--all", started_at=at(DAY3)),
    )
    assert found.how.startswith(
        "the recorded commit --output=x is not in the clone; the clone has no branch '--all'"
    )


def merged_history(path: Path, *, squash: bool = False, subject: str = "") -> tuple[GitRepo, dict]:
    """main: DAY1, then feat/x (DAY2 + 1 h) merged (or squashed) into main at DAY3 and deleted."""
    repo = GitRepo(path)
    shas = {"day1": repo.commit(DAY1, {"calc.py": "v1\n"})}
    repo.git("checkout", "-q", "-b", "feat/x")
    shas["feat"] = repo.commit("2026-03-02T10:00:00Z", {"calc.py": "feat\n"})
    repo.git("checkout", "-q", "main")
    if squash:
        repo.git("merge", "-q", "--squash", "feat/x")
        shas["merge"] = repo.commit(DAY3, {}, "feat/x squashed (#12)")
    else:
        message = subject or "Merge pull request #12 from org/feat/x"
        repo.git("merge", "-q", "--no-ff", "-m", message, "feat/x", when=DAY3)
        shas["merge"] = repo.git("rev-parse", "HEAD")
    repo.git("branch", "-q", "-D", "feat/x")
    return repo, shas


@pytest.mark.parametrize(
    "merge, start, kind, said",
    [
        ("Merge pull request #12 from org/feat/x", "feat", "merged_branch", "its merge into main"),
        ("Merge branch 'feat/x' into main", "feat", "merged_branch", "its merge into main"),
        # A squash leaves no merge naming the branch: main before the session.
        ("", "day1", "default_branch", "the last commit on main (the clone's default branch)"),
    ],
)
def test_a_branch_merged_and_deleted_starts_from_its_merge_else_the_default_branch(
    tmp_path, merge, start, kind, said
):
    repo, shas = merged_history(tmp_path / "clone", squash=not merge, subject=merge)
    found = start_commit(
        open_repository(repo.path), project(branch="feat/x", started_at=at("2026-03-02T12:00:00Z"))
    )
    assert (found.commit, found.kind) == (shas[start], kind)
    assert said in found.how


def test_the_remotes_head_names_the_default_branch(tmp_path):
    upstream = GitRepo(tmp_path / "upstream", branch="develop")
    develop = upstream.commit(DAY1, {"a.py": "d\n"})
    upstream.git("checkout", "-q", "-b", "main")
    upstream.commit(DAY2, {"a.py": "m\n"})
    upstream.git("checkout", "-q", "develop")
    copy = tmp_path / "copy"
    upstream.git("clone", "-q", str(upstream.path), str(copy))
    found = start_commit(
        open_repository(copy), project(branch="gone", started_at=at("2026-03-02T12:00:00Z"))
    )
    assert (found.commit, found.kind) == (develop, StartKind.DEFAULT_BRANCH)
    assert "on origin/develop" in found.how


def test_a_fallback_start_the_log_disagrees_with_is_doubtful(tmp_path):
    repo, _ = merged_history(tmp_path / "clone", squash=True)
    files = {f"m{i}.py": "old\n" for i in range(3)}
    repo.commit("2026-03-01T10:00:00Z", files)
    result = replay_reading(files, "new\n")
    overlay = clone_overlay(
        {"/work/app": repo.path},
        project(branch="feat/x", started_at=at("2026-03-02T12:00:00Z")),
        MemoryBlobs(),
    )
    assert overlay is not None and overlay.start_kind == StartKind.DEFAULT_BRANCH
    doubtful = overlay.after(result).doubtful
    assert doubtful.startswith("the log showed 3 of the seeded files otherwise")
    recorded = dataclasses.replace(overlay, start_kind=StartKind.RECORDED_BRANCH)
    assert recorded.after(result).doubtful == ""


def replay_reading(files: dict[str, str], text: str):
    """A replay that read each of ``files`` in full as ``text``, seeded with their old content."""
    builder = AtifBuilder("claude-code", root="/work/app")
    for name in files:
        listing = "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(text.split("\n"), 1))
        builder.call("Read", {"file_path": f"/work/app/{name}"}, listing)
    atif, side = builder.build()
    blobs = MemoryBlobs()
    seed = {name: blobs.put(content.encode()) for name, content in files.items()}
    return replay(atif, side, root="/work/app", blobs=blobs, seed=seed)


# -- which clone -------------------------------------------------------------------------------


def test_the_clone_is_the_configured_directory_at_or_above_the_sessions_own():
    clones = {"/work": Path("/c/work"), "/work/app": Path("/c/app"), "/other": Path("/c/o")}
    assert clone_for(clones, project()) == ("/work/app", Path("/c/app"), "")
    deeper = project(cwd="/work/app/packages/ui")
    assert clone_for(clones, deeper) == ("/work/app", Path("/c/app"), "packages/ui")
    assert clone_for(clones, project(cwd="/work/apple")) == ("/work", Path("/c/work"), "apple")
    assert clone_for({"/work/app": Path("/c")}, project(cwd="/elsewhere")) is None


@pytest.mark.parametrize(
    "recorded",
    [
        "git@github.com:Org/App.git",
        "https://github.com/org/app",
        "https://user@github.com/org/app.git/",
        "ssh://git@github.com:22/org/app.git",
    ],
)
def test_a_recorded_remote_finds_its_clone_however_it_is_spelt(recorded):
    clones = {"git@github.com:org/app.git": Path("/c/app")}
    assert clone_for(clones, project(cwd="/elsewhere", remote=recorded)) == (
        "git@github.com:org/app.git",
        Path("/c/app"),
        "",
    )
    assert remote_id(recorded) == "github.com/org/app"


# -- which files -------------------------------------------------------------------------------


def test_the_seed_is_the_commits_tracked_text_files_under_the_sessions_directory(tmp_path):
    repo = GitRepo(tmp_path / "clone")
    (repo.path / "app").mkdir()
    os.symlink("calc.py", repo.path / "app/link.py")
    repo.git("add", "app/link.py")
    repo.commit(
        DAY1,
        {
            ".gitignore": "*.log\n",
            "README.md": "top\n",
            "app/calc.py": "def add(a, b):\n    return a - b\n",
            "app/tests/test_calc.py": "from calc import add\n",
            "app/logo.png": b"\x89PNG\r\n\x1a\n\x00\xff\xfe",
        },
    )
    repo.commit(DAY2, {"app/later.py": "x = 1\n"})  # after the session started
    (repo.path / "app/untracked.py").write_text("scratch\n")
    (repo.path / "app/debug.log").write_text("ignored\n")

    blobs = MemoryBlobs()
    session = project(cwd="/work/app", branch="main", started_at=at("2026-03-01T12:00:00Z"))
    overlay = clone_overlay({"/work": repo.path}, session, blobs)
    assert overlay is not None and overlay.applied and overlay.reason == ""
    assert {k: blobs.get(v).decode() for k, v in overlay.seed.items()} == {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "tests/test_calc.py": "from calc import add\n",
    }
    assert overlay.left_out == {"binary": 1, "symlink": 1}
    assert overlay.to_dict()["commit"] == repo.git("rev-parse", "HEAD~1")


def test_a_clone_that_is_a_folder_of_a_work_tree_gives_that_folder(tmp_path):
    repo = GitRepo(tmp_path / "mono")
    repo.commit(DAY1, {"packages/ui/a.ts": "export {}\n", "other.txt": "x\n"})
    session = project(started_at=at(DAY2))
    overlay = clone_overlay({"/work/app": repo.path / "packages/ui"}, session, MemoryBlobs())
    assert overlay is not None and set(overlay.seed) == {"a.ts"}


def test_large_files_are_left_out(tmp_path, monkeypatch):
    monkeypatch.setattr(overlay_module, "MAX_FILE_BYTES", 10)
    repo = GitRepo(tmp_path / "clone")
    repo.commit(DAY1, {"small.py": "x = 1\n", "big.json": "[" + "1," * 20 + "1]\n"})
    overlay = clone_overlay({"/work/app": repo.path}, project(started_at=at(DAY2)), MemoryBlobs())
    assert overlay is not None and set(overlay.seed) == {"small.py"}
    assert overlay.left_out == {"large": 1}


def test_a_tree_over_the_mining_limits_lays_nothing_down_and_says_so(tmp_path):
    repo = GitRepo(tmp_path / "clone")
    repo.commit(DAY1, {"a.py": "a\n", "b.py": "b\n", "c.py": "c\n"})
    blobs = MemoryBlobs()
    overlay = clone_overlay(
        {"/work/app": repo.path}, project(started_at=at(DAY2)), blobs, max_files=2
    )
    assert overlay is not None and not overlay.applied and len(blobs) == 0
    assert overlay.reason == (
        "the clone's tree is over the mining limits (3 files, 6 bytes; limits 2 files, "
        f"{overlay_module.DEFAULT_MAX_START_BYTES} bytes)"
    )


def test_a_clone_that_is_gone_or_not_a_repository_is_a_reason_never_a_failure(tmp_path):
    (tmp_path / "plain").mkdir()
    for path in (tmp_path / "plain", tmp_path / "gone"):
        overlay = clone_overlay({"/work/app": path}, project(started_at=at(DAY2)), MemoryBlobs())
        assert overlay is not None and not overlay.applied
        assert overlay.reason.startswith(str(path)) and "not" in overlay.reason
    with pytest.raises(CloneError, match="is not a git repository"):
        open_repository(tmp_path / "plain")


def test_a_session_no_clone_is_configured_for_has_no_overlay(tmp_path):
    assert clone_overlay({"/other": tmp_path}, project(), MemoryBlobs()) is None


def test_a_tree_over_the_limits_seeds_the_modules_the_session_worked_in(tmp_path):
    repo = GitRepo(tmp_path / "mono")
    files = {f"py/pkg/m{i}.py": f"x = {i}\n" for i in range(6)}
    files |= {
        "Makefile": "test:\n\tcd go && go test ./...\n",
        "go/go.mod": "module example.com/x\n",
        "go/internal/run.go": "package internal\n",
        "go/internal/run_test.go": "package internal\n",
    }
    repo.commit(DAY1, files)

    def seeded(max_files: int):
        return clone_overlay(
            {"/work/app": repo.path},
            project(started_at=at(DAY2)),
            MemoryBlobs(),
            max_files=max_files,
            focus=lambda: ["go", "go/internal/run.go"],
        )

    overlay = seeded(5)
    assert overlay is not None and overlay.applied and overlay.reason == ""
    assert set(overlay.seed) == {
        "Makefile",
        "go/go.mod",
        "go/internal/run.go",
        "go/internal/run_test.go",
    }
    assert overlay.scope.startswith("scoped to go/ (4 of 10 files")
    still = seeded(3)
    assert still is not None and not still.applied and still.no_seed == "over_limits"
    assert still.reason.startswith("the clone's tree, scoped to go/ (4 of 10 files")


def test_the_runners_files_above_the_sessions_folder_come_along_beside_the_seed(tmp_path):
    repo = GitRepo(tmp_path / "mono")
    repo.commit(
        DAY1,
        {
            "mise.toml": '[tasks.test]\ndir = "go"\nrun = "go test ./..."\n',
            "README.md": "top\n",
            "go/go.mod": "module example.com/x\n",
            "go/justfile": "test:\n    go test ./...\n",
        },
    )
    blobs = MemoryBlobs()
    overlay = clone_overlay(
        {"/work/mono": repo.path}, project(cwd="/work/mono/go", started_at=at(DAY2)), blobs
    )
    assert overlay is not None and set(overlay.seed) == {"go.mod", "justfile"}
    assert (overlay.here, set(overlay.above)) == ("go", {"../mise.toml"})
    assert blobs.get(overlay.above["../mise.toml"]).startswith(b"[tasks.test]")
