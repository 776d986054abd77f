"""The bundled sample trajectories: genuine formats, and stories that are true.

Each sample in ``samples/`` records a repair: the agent writes a tiny project, runs
its check, sees it fail, fixes the bug and runs the same check again, which passes.
These tests hold the samples to that:

* they are exactly what ``samples/make_samples.py`` writes (no hand edits drift);
* they convert with the ecosystem's own tools (atif-make, Harbor's pi reader) and
  validate against Harbor's ATIF model, with the tool calls and exit codes expected;
* replaying their tool calls rebuilds exactly the files the generator says the
  project had before the failing and before the passing run;
* those files really fail and then really pass the check, printing what the log says;
* once ``trajectories.core.formats`` exists, it loads each sample as the right format.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"


def _generator():
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLES / "make_samples.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is built.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


GEN = _generator()
STORIES = GEN.STORIES
FORMATS = sorted(STORIES)

# What each sample becomes in ATIF: steps, and the tool calls in order.
EXPECTED = {
    "claude-code": (6, ["Write", "Write", "Write", "Bash", "Edit", "Bash"]),
    "codex": (10, ["apply_patch", "exec_command", "apply_patch", "exec_command"]),
    "pi": (7, ["write", "write", "bash", "read", "edit", "bash"]),
    "atif": (7, ["write_file", "write_file", "write_file", "bash", "write_file", "bash"]),
}
# The converter each format goes through here ("pi" has none in atif-make).
ATIF_MAKE = {"claude-code": "claude-code-transcript", "codex": "codex-rollout", "atif": "atif"}


def _path(fmt: str) -> Path:
    return SAMPLES / STORIES[fmt].sample


def _tool_calls(doc: dict) -> list[dict]:
    return [call for step in doc["steps"] for call in step.get("tool_calls") or []]


def _results(doc: dict) -> dict[str, dict]:
    return {
        result["source_call_id"]: result
        for step in doc["steps"]
        for result in (step.get("observation") or {}).get("results", [])
        if result.get("source_call_id")
    }


def _as_dict(value: Any) -> dict:
    if isinstance(value, dict):
        return value
    for name in ("to_json_dict", "to_dict", "model_dump"):
        if hasattr(value, name):
            return getattr(value, name)()
    raise TypeError(f"cannot turn {type(value).__name__} into an ATIF dict")


# --------------------------------------------------------------------------
# the files on disk are the generator's
# --------------------------------------------------------------------------


def test_samples_are_what_the_generator_writes():
    built = GEN.build()
    assert set(built) == {story.sample for story in STORIES.values()}
    on_disk = {
        str(path.relative_to(SAMPLES))
        for path in SAMPLES.rglob("*")
        if path.is_file() and path.suffix in (".json", ".jsonl")
    }
    assert on_disk == set(built), "stale or unexpected sample files"
    for relative, text in built.items():
        assert (SAMPLES / relative).read_text(encoding="utf-8") == text, (
            f"{relative} is out of date: run python samples/make_samples.py"
        )


def test_generator_is_deterministic():
    assert GEN.build() == GEN.build()


@pytest.mark.parametrize("fmt", FORMATS)
def test_samples_are_small_and_clean(fmt):
    text = _path(fmt).read_text(encoding="utf-8")
    assert len(text.encode()) < 32_000
    assert not re.search(r"(sk-[A-Za-z0-9]{10,}|api[_-]?key|BEGIN [A-Z ]*PRIVATE KEY)", text, re.I)
    assert "/tmp/" not in text  # outputs were captured elsewhere and rewritten to the cwd


# --------------------------------------------------------------------------
# the ecosystem's own converters accept them
# --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(ATIF_MAKE))
def test_converts_with_atif_make_and_validates(fmt):
    from atif_make import convert
    from harbor.models.trajectories import Trajectory

    trajectory, detected = convert(_path(fmt))
    assert detected == ATIF_MAKE[fmt]
    doc = trajectory.to_dict()
    Trajectory.model_validate(doc)
    assert doc["schema_version"] == "ATIF-v1.7"

    steps, names = EXPECTED[fmt]
    assert len(doc["steps"]) == steps
    calls = _tool_calls(doc)
    assert [call["function_name"] for call in calls] == names

    results = _results(doc)
    assert set(results) == {call["tool_call_id"] for call in calls}, "every call has a result"
    story = STORIES[fmt]
    checks = [call for call in calls if call["function_name"] in ("Bash", "exec_command", "bash")]
    assert [
        call["arguments"].get("command") or call["arguments"].get("cmd") for call in checks
    ] == [
        story.command,
        story.command,
    ]
    failed, passed = (results[call["tool_call_id"]]["content"] for call in checks)
    # The exit status has to survive conversion as text.
    if fmt == "claude-code":
        assert failed.startswith("Exit code 1\n")
        assert results[checks[0]["tool_call_id"]]["extra"] == {"is_error": True}
        assert not passed.startswith("Exit code")
        assert passed.rstrip().endswith("OK")
    elif fmt == "codex":
        assert "\nProcess exited with code 1\n" in failed
        assert "\nProcess exited with code 0\n" in passed
        assert "# fail 1" in failed and "# fail 0" in passed
    else:
        assert failed.startswith("Exit code 1\n") and passed.startswith("Exit code 0\n")
        assert results[checks[0]["tool_call_id"]]["extra"] == {"exit_code": 1}
        assert results[checks[1]["tool_call_id"]]["extra"] == {"exit_code": 0}


@pytest.mark.slow
def test_pi_sample_converts_with_harbors_pi_reader(monkeypatch):
    # Harbor's Pi agent reads pi session files into ATIF; its import pulls in litellm,
    # which must not go looking for a price list on the network.
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    pi_module = pytest.importorskip("harbor.agents.installed.pi")
    from harbor.models.trajectories import Trajectory

    agent_class = getattr(pi_module, "Pi", None)
    if agent_class is None or not hasattr(agent_class, "_convert_session_events_to_trajectory"):
        pytest.skip("this Harbor has no pi session reader")
    with tempfile.TemporaryDirectory() as logs:
        agent = agent_class(logs_dir=Path(logs), model_name="anthropic/claude-opus-4-5")
        lines = _path("pi").read_text(encoding="utf-8").splitlines()
        events = [(n, json.loads(line)) for n, line in enumerate(lines, 1)]
        trajectory = agent._convert_session_events_to_trajectory(
            agent._active_session_events(events)
        )
    doc = trajectory.to_json_dict()
    Trajectory.model_validate(doc)
    steps, names = EXPECTED["pi"]
    assert len(doc["steps"]) == steps
    calls = _tool_calls(doc)
    assert [call["function_name"] for call in calls] == names
    results = _results(doc)
    runs = [results[call["tool_call_id"]] for call in calls if call["function_name"] == "bash"]
    assert runs[0]["extra"]["is_error"] is True
    assert runs[0]["content"].endswith("\n\nCommand exited with code 1")
    assert runs[1]["extra"]["is_error"] is False


def test_pi_sample_is_the_v1_linear_layout():
    lines = [json.loads(line) for line in _path("pi").read_text(encoding="utf-8").splitlines()]
    header, messages = lines[0], lines[1:]
    assert header["type"] == "session" and "version" not in header  # v3 headers carry one
    assert header["cwd"] == STORIES["pi"].cwd
    assert all(line["type"] == "message" and "id" not in line for line in messages)
    roles = [line["message"]["role"] for line in messages]
    assert roles[0] == "user" and roles.count("user") == 1
    assert roles.count("assistant") == 6 and roles.count("toolResult") == 6
    stamps = [line["timestamp"] for line in messages]
    assert stamps == sorted(stamps)


# --------------------------------------------------------------------------
# replaying the tool calls rebuilds the project (the pipeline's premise)
# --------------------------------------------------------------------------


def _relative(story, path: str) -> str:
    prefix = story.cwd.rstrip("/") + "/"
    assert path.startswith(prefix), path
    return path[len(prefix) :]


def _apply_codex_patch(files: dict[str, str], patch: str) -> None:
    lines = patch.splitlines()
    assert lines[0] == "*** Begin Patch" and lines[-1] == "*** End Patch"
    index, end = 1, len(lines) - 1
    while index < end:
        header = lines[index]
        index += 1
        if header.startswith("*** Add File: "):
            body = []
            while index < end and not lines[index].startswith("*** "):
                assert lines[index].startswith("+")
                body.append(lines[index][1:])
                index += 1
            files[header.removeprefix("*** Add File: ")] = "\n".join(body) + "\n"
            continue
        assert header.startswith("*** Update File: "), header
        path = header.removeprefix("*** Update File: ")
        text = files[path]
        while index < end and lines[index].startswith("@@"):
            index += 1
            old, new = [], []
            while index < end and not lines[index].startswith(("@@", "*** ")):
                tag, rest = lines[index][:1], lines[index][1:]
                if tag in " -":
                    old.append(rest)
                if tag in " +":
                    new.append(rest)
                index += 1
            before, after = "\n".join(old) + "\n", "\n".join(new) + "\n"
            assert text.count(before) == 1
            text = text.replace(before, after)
        files[path] = text


def _replay(fmt: str) -> list[tuple[str, int, str, dict[str, str]]]:
    """Each command run in the sample: (command, exit code, output, files just before)."""
    story = STORIES[fmt]
    text = _path(fmt).read_text(encoding="utf-8")
    files: dict[str, str] = {}
    runs: list[tuple[str, int, str, dict[str, str]]] = []

    if fmt == "claude-code":
        calls: dict[str, dict] = {}
        for line in map(json.loads, text.splitlines()):
            content = (line.get("message") or {}).get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_use":
                    calls[block["id"]] = block
                if block.get("type") != "tool_result":
                    continue
                call, raw = calls[block["tool_use_id"]], line["toolUseResult"]
                args = call["input"]
                if call["name"] == "Write":
                    assert raw["content"] == args["content"]
                    files[_relative(story, args["file_path"])] = args["content"]
                elif call["name"] == "Edit":
                    path = _relative(story, args["file_path"])
                    assert raw["originalFile"] == files[path]
                    assert files[path].count(args["old_string"]) == 1
                    files[path] = files[path].replace(args["old_string"], args["new_string"])
                elif call["name"] == "Bash":
                    output = block["content"]
                    match = re.match(r"Exit code (\d+)\n", output)
                    assert bool(match) == bool(block.get("is_error"))
                    code = int(match.group(1)) if match else 0
                    output = output[match.end() :] if match else raw["stdout"]
                    runs.append((args["command"], code, output, dict(files)))

    elif fmt == "codex":
        calls = {}
        for line in map(json.loads, text.splitlines()):
            payload = line["payload"]
            if line["type"] != "response_item":
                continue
            if payload["type"] == "custom_tool_call" and payload["name"] == "apply_patch":
                _apply_codex_patch(files, payload["input"])
            elif payload["type"] == "function_call":
                calls[payload["call_id"]] = (json.loads(payload["arguments"]), dict(files))
            elif payload["type"] == "function_call_output":
                args, before = calls[payload["call_id"]]
                assert args["workdir"] == story.cwd
                head, output = payload["output"].split("\nOutput:\n", 1)
                code = int(re.search(r"Process exited with code (\d+)", head).group(1))
                runs.append((args["cmd"], code, output, before))

    elif fmt == "pi":
        calls = {}
        for line in map(json.loads, text.splitlines()[1:]):
            message = line["message"]
            if message["role"] == "assistant":
                for part in message["content"]:
                    if part["type"] == "toolCall":
                        calls[part["id"]] = part
            if message["role"] != "toolResult":
                continue
            call = calls[message["toolCallId"]]
            args, output = call["arguments"], message["content"][0]["text"]
            if call["name"] == "write":
                files[_relative(story, args["path"])] = args["content"]
            elif call["name"] == "read":
                assert output == files[_relative(story, args["path"])]
            elif call["name"] == "edit":
                path = _relative(story, args["path"])
                assert files[path].count(args["oldText"]) == 1
                files[path] = files[path].replace(args["oldText"], args["newText"])
            elif call["name"] == "bash":
                match = re.search(r"\n\nCommand exited with code (\d+)$", output)
                assert bool(match) == message["isError"]
                code = int(match.group(1)) if match else 0
                runs.append(
                    (
                        args["command"],
                        code,
                        output[: match.start()] if match else output,
                        dict(files),
                    )
                )

    else:
        for step in json.loads(text)["steps"]:
            results = {
                r["source_call_id"]: r for r in (step.get("observation") or {}).get("results", [])
            }
            for call in step.get("tool_calls") or []:
                args, result = call["arguments"], results[call["tool_call_id"]]
                if call["function_name"] == "write_file":
                    files[_relative(story, args["path"])] = args["content"]
                elif call["function_name"] == "bash":
                    head, output = result["content"].split("\n", 1)
                    code = result["extra"]["exit_code"]
                    assert head == f"Exit code {code}"
                    runs.append((args["command"], code, output, dict(files)))
    return runs


@pytest.mark.parametrize("fmt", FORMATS)
def test_replay_rebuilds_the_story(fmt):
    story = STORIES[fmt]
    runs = _replay(fmt)
    assert [(command, code) for command, code, _, _ in runs] == [
        (story.command, 1),
        (story.command, 0),
    ]
    (_, _, failed, start), (_, _, passed, final) = runs
    assert start == story.start, "the files before the failing run"
    assert final == story.final, "the files before the passing run"
    assert start != final
    assert failed.rstrip("\n") == story.fail_output.rstrip("\n")
    assert passed.rstrip("\n") == story.pass_output.rstrip("\n")


# --------------------------------------------------------------------------
# the stories are true: the starting files fail the check, the final ones pass it
# --------------------------------------------------------------------------

# Lines that say what happened, not how long it took or how the runtime prints stacks.
_SIGNATURE = re.compile(
    r"^(.* \.\.\. (ok|FAIL|ERROR)|FAIL: .*|AssertionError: .*|Ran \d+ tests?|OK|FAILED .*"
    r"|(not )?ok \d+ - .*|# (tests|pass|fail) \d+|    [+-] '.*'|> .*)$"
)


def _signature(output: str) -> list[str]:
    output = re.sub(r"(Ran \d+ tests?) in [\d.]+s", r"\1", output)
    return [line for line in output.splitlines() if _SIGNATURE.match(line)]


def _command(story) -> tuple[list[str], str | None]:
    """The check as argv for this machine, and a prefix to drop from the expectations."""
    argv = list(story.argv)
    if argv[0] == "python3":
        argv[0] = shutil.which("python3") or sys.executable
        return argv, None
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if argv[0] == "npm" and shutil.which("npm") is None:
        # npm test runs the package's test script, which is exactly node --test.
        return ["node", "--test"], "\n> slugify@0.1.0 test\n> node --test\n\n"
    return argv, None


def _run(story, files: dict[str, str], where: Path) -> subprocess.CompletedProcess:
    for relative, content in files.items():
        target = where / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    argv, _ = _command(story)
    env = {
        **os.environ,
        "PYTHONDONTWRITEBYTECODE": "1",
        "NO_COLOR": "1",
        "npm_config_update_notifier": "false",
    }
    env.pop("NODE_OPTIONS", None)
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        argv, cwd=where, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_story_is_true(fmt, tmp_path):
    story = STORIES[fmt]
    _, npm_header = _command(story)
    for name, files, code, recorded in (
        ("start", story.start, 1, story.fail_output),
        ("final", story.final, 0, story.pass_output),
    ):
        where = tmp_path / name
        where.mkdir()
        done = _run(story, files, where)
        output = (done.stdout + done.stderr).replace(str(where), story.cwd)
        assert done.returncode == code, f"{name}: exit {done.returncode}\n{output}"
        if npm_header:
            recorded = recorded.removeprefix(npm_header)
        assert _signature(output) == _signature(recorded), f"{name} output differs:\n{output}"
        assert len(_signature(recorded)) >= 6


# --------------------------------------------------------------------------
# traj2env's own loader, once it exists
# --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_traj2env_loads_each_sample(fmt):
    formats = pytest.importorskip("trajectories.core.formats")
    if not hasattr(formats, "load"):
        pytest.skip("trajectories.core.formats has no load() yet")
    from harbor.models.trajectories import Trajectory

    loaded = formats.load(_path(fmt))
    not_trajectory = getattr(formats, "NotTrajectory", None)
    assert not_trajectory is None or not isinstance(loaded, not_trajectory), loaded
    assert loaded.format == fmt
    doc = _as_dict(loaded.atif)
    Trajectory.model_validate(doc)
    steps, names = EXPECTED[fmt]
    assert len(doc["steps"]) == steps
    assert [call["function_name"] for call in _tool_calls(doc)] == names
    assert loaded.meta is not None
