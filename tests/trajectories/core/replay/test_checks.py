"""Commands are recognised as checks (test/build/lint/typecheck) with their exit status.

Recognition runs through the whole replay (parser, wrappers, chains), so each row is a command
line exactly as an agent would type it.
"""

from __future__ import annotations

import json

import pytest

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import ShellCommand, replay
from trajectories.core.replay.checks import script_role
from trajectories.core.replay.synthetic import AtifBuilder

from .helpers import ROOT, only_command


def check_of(command_line: str) -> tuple[str, str | None, str, str | None] | None:
    b = AtifBuilder("claude-code", root=ROOT)
    b.call("Bash", {"command": command_line}, "")
    check = only_command(b).check
    if check is None:
        return None
    return (str(check.kind), check.language, check.runner, check.cwd)


@pytest.mark.parametrize(
    "command, expected",
    [
        # Python
        ("pytest", ("test", "python", "pytest", ".")),
        ("pytest tests/test_api.py -k login -x", ("test", "python", "pytest", ".")),
        ("python -m pytest -q", ("test", "python", "pytest", ".")),
        ("python3.12 -m unittest discover -s tests", ("test", "python", "unittest", ".")),
        ("tox -e py312", ("test", "python", "tox", ".")),
        ("uv run pytest -q", ("test", "python", "pytest", ".")),
        ("poetry run pytest", ("test", "python", "pytest", ".")),
        ("coverage run -m pytest", ("test", "python", "pytest", ".")),
        ("python manage.py test", ("test", "python", "django", ".")),
        ("python tests/test_parser.py", ("test", "python", "python", ".")),
        ("ruff check .", ("lint", "python", "ruff", ".")),
        ("ruff format --check src", ("lint", "python", "ruff", ".")),
        ("flake8 src", ("lint", "python", "flake8", ".")),
        ("mypy src", ("typecheck", "python", "mypy", ".")),
        ("pyright", ("typecheck", "python", "pyright", ".")),
        ("black --check .", ("lint", "python", "black", ".")),
        # Node
        ("npm test", ("test", "node", "npm", ".")),
        ("npm t", ("test", "node", "npm", ".")),
        ("npm run test:unit -- --watch=false", ("test", "node", "npm", ".")),
        ("npm run check", ("lint", "node", "npm", ".")),
        ("npm run build", ("build", "node", "npm", ".")),
        ("npm run typecheck", ("typecheck", "node", "npm", ".")),
        ("yarn test", ("test", "node", "yarn", ".")),
        ("yarn lint", ("lint", "node", "yarn", ".")),
        ("pnpm run build", ("build", "node", "pnpm", ".")),
        ("bun test", ("test", "node", "bun", ".")),
        ("node --test", ("test", "node", "node", ".")),
        ("node --test test/*.test.js", ("test", "node", "node", ".")),
        ("npx vitest run src/a.test.ts", ("test", "node", "vitest", ".")),
        ("vitest --run", ("test", "node", "vitest", ".")),
        ("npx jest --coverage", ("test", "node", "jest", ".")),
        ("npx playwright test", ("test", "node", "playwright", ".")),
        ("tsc --noEmit", ("typecheck", "node", "tsc", ".")),
        ("npx tsc -b", ("build", "node", "tsc", ".")),
        ("eslint src --max-warnings 0", ("lint", "node", "eslint", ".")),
        ("npx prettier --check .", ("lint", "node", "prettier", ".")),
        ("npx vite build", ("build", "node", "vite", ".")),
        # Go, Rust and others
        ("go test ./...", ("test", "go", "go", ".")),
        ("go test -run TestParse ./pkg/...", ("test", "go", "go", ".")),
        ("go build ./...", ("build", "go", "go", ".")),
        ("go vet ./...", ("lint", "go", "go", ".")),
        ("golangci-lint run ./...", ("lint", "go", "golangci-lint", ".")),
        ("cargo test", ("test", "rust", "cargo", ".")),
        ("cargo build --release", ("build", "rust", "cargo", ".")),
        ("cargo clippy -- -D warnings", ("lint", "rust", "cargo", ".")),
        ("cargo check", ("typecheck", "rust", "cargo", ".")),
        ("./gradlew test", ("test", "java", "gradlew", ".")),
        ("mvn -q verify", ("test", "java", "mvn", ".")),
        ("bundle exec rspec", ("test", "ruby", "rspec", ".")),
        ("make test", ("test", None, "make", ".")),
        ("make check", ("test", None, "make", ".")),
        ("make -j 4 lint", ("lint", None, "make", ".")),
        ("make", ("build", None, "make", ".")),
        ("mise run test", ("test", None, "mise", ".")),
        ("mise test", ("test", None, "mise", ".")),
        ("mise tasks run lint", ("lint", None, "mise", ".")),
        ("mise -C api run test:unit", ("test", None, "mise", "api")),
        ("mise exec -- go test ./...", ("test", "go", "go", ".")),
        ("mise x go@1.22 -- go vet ./...", ("lint", "go", "go", ".")),
        ("just test", ("test", None, "just", ".")),
        ("./run_tests.sh", ("test", None, "script", ".")),
        # Chains, prefixes, wrappers and directories
        ("cd web && npm test", ("test", "node", "npm", "web")),
        ("cd /repo/api; go test ./...", ("test", "go", "go", "api")),
        ("(cd api && go test ./...)", ("test", "go", "go", "api")),
        ("bash -lc 'cd api && cargo test'", ("test", "rust", "cargo", "api")),
        ("make -C services/auth test", ("test", None, "make", "services/auth")),
        ("npm --prefix web run build", ("build", "node", "npm", "web")),
        ("go -C tools test ./...", ("test", "go", "go", "tools")),
        ("FOO=1 CI=true npm test", ("test", "node", "npm", ".")),
        ("env CI=1 timeout 300 pytest -x", ("test", "python", "pytest", ".")),
        ("sudo -E npm test", ("test", "node", "npm", ".")),
        ("source .venv/bin/activate && pytest", ("test", "python", "pytest", ".")),
        ("npm run lint && npm test", ("test", "node", "npm", ".")),
        ("npm ci && npm run build", ("build", "node", "npm", ".")),
        ("mise run fmt && mise run test 2>&1", ("test", None, "mise", ".")),
        # Not checks
        ("ls -la", None),
        ("git status", None),
        ("npm install", None),
        ("npm ci", None),
        ("npm run dev", None),
        ("npm run format", None),
        ("npm start", None),
        ("pip install pytest", None),
        ("python script.py", None),
        ("python -c 'print(1)'", None),
        ("go run ./cmd/server", None),
        ("cargo run", None),
        ("cargo fmt", None),
        ("black .", None),
        ("npx prettier --write .", None),
        ("echo pytest", None),
        ("cat tests/test_api.py", None),
        ("grep -rn 'def test_' tests", None),
        ("make install", None),
        ("mise install", None),
        ("mise use go@1.22", None),
        ("mise test-tool go", None),
        ("mise dev", None),
        ("docker build -t app .", None),
    ],
)
def test_command_is_recognised_as_check(command, expected):
    assert check_of(command) == expected


@pytest.mark.parametrize(
    "name, role",
    [
        ("test", "test"),
        ("test:e2e", "test"),
        ("check", "lint"),
        ("ci", "test"),
        ("lint:fix", "format"),
        ("typecheck", "typecheck"),
        ("check-types", "typecheck"),
        ("build", "build"),
        ("fmt", "format"),
        ("dev", None),
        ("start", None),
    ],
)
def test_script_names_say_what_a_script_does(name, role):
    assert script_role(name) == role


# -- exit status, per format ---------------------------------------------------------------------


def claude(result: str, *, error: bool | None = None, side: object = None) -> ShellCommand:
    b = AtifBuilder("claude-code", root=ROOT)
    b.call("Bash", {"command": "pytest"}, result, error=error, side=side)
    return only_command(b)


def test_claude_code_error_with_exit_code_text():
    command = claude("Exit code 2\nE   AssertionError", error=True)
    assert command.exit_code == 2
    assert command.output == "Exit code 2\nE   AssertionError"


def test_claude_code_result_without_error_flag_exited_zero():
    # atif-make drops `is_error: false`; Claude Code flags every failure.
    assert claude("3 passed").exit_code == 0


def test_claude_code_export_without_flags_still_reads_exit_code_text():
    # Harbor's Claude Code export carries no is_error, only the text.
    command = claude("Exit code 1\nNo module named pytest\n\n[error] tool reported failure")
    assert command.exit_code == 1


def test_claude_code_timeout_and_interrupt_have_no_exit_code():
    assert claude("Command timed out after 2m 0s", error=True).exit_code is None
    interrupted = {"stdout": "", "stderr": "", "interrupted": True}
    assert claude("", side=interrupted).exit_code is None


def test_claude_code_harmless_nonzero_status_is_not_a_number():
    side = {"stdout": "", "stderr": "", "returnCodeInterpretation": "No matches found"}
    assert claude("", side=side, error=False).exit_code is None


def test_codex_exec_command_exit_code_arrives_in_a_later_write_stdin_poll():
    b = AtifBuilder("codex", root=ROOT)
    b.call(
        "exec_command",
        {"cmd": "npm test", "workdir": ROOT},
        "Chunk ID: a\nWall time: 1.0 seconds\nProcess running with session ID 7\n"
        "Original token count: 0\nOutput:\n> app@1.0.0 test\n> vitest --run\n\n",
    )
    b.call(
        "write_stdin",
        {"session_id": 7, "chars": ""},
        "Chunk ID: b\nWall time: 5.0 seconds\nProcess running with session ID 7\n"
        "Original token count: 3\nOutput:\nRUN  v3\n",
    )
    b.call(
        "write_stdin",
        {"session_id": 7, "chars": ""},
        "Chunk ID: c\nWall time: 0.0 seconds\nProcess exited with code 1\n"
        "Original token count: 5\nOutput:\n1 failed\n",
    )
    command = only_command(b)
    assert command.exit_code == 1
    assert command.output == "> app@1.0.0 test\n> vitest --run\n\nRUN  v3\n1 failed\n"
    assert command.check is not None and command.check.runner == "npm"


def test_codex_exit_code_from_ingest_side_data_wins():
    b = AtifBuilder("codex", root=ROOT)
    call_id = b.call("exec_command", {"cmd": "go test ./..."}, "Process running with session ID 3")
    b.extra_side["commands"] = {
        call_id: {"command": "go test ./...", "cwd": "/repo/api", "exit_code": 0, "output": "ok"}
    }
    command = only_command(b)
    assert (command.exit_code, command.output, command.cwd) == (0, "ok", "api")


def test_codex_shell_json_metadata_exit_code():
    b = AtifBuilder("codex", root=ROOT)
    output = json.dumps({"output": "FAIL\n", "metadata": {"exit_code": 1, "duration_seconds": 0.4}})
    b.call("shell", {"command": ["bash", "-lc", "cargo test"]}, output)
    command = only_command(b)
    assert (command.command, command.exit_code, command.output) == ("cargo test", 1, "FAIL\n")


def test_codex_exec_json_exit_code_in_result_extra():
    b = AtifBuilder("codex", root=ROOT)
    b.call("shell", {"command": "pytest"}, "2 passed", extra={"exit_code": 0})
    assert only_command(b).exit_code == 0


def test_codex_code_mode_exec_replays_the_commands_it_ran():
    b = AtifBuilder("codex", root=ROOT)
    call_id = b.call("exec", {"code": "await tools.exec_command({cmd: 'pytest'})"}, "done")
    b.extra_side["commands"] = {
        "inner": {"command": "echo x > a.txt && pytest", "cwd": ROOT, "exit_code": 0, "output": ""}
    }
    b.extra_side["nested_calls"] = {call_id: ["inner"]}
    atif, side = b.build()
    result = replay(atif, side, root=ROOT, blobs=MemoryBlobs())
    (command,) = result.commands
    assert command.tool_call_id == "inner" and command.event_index == 0
    assert command.check is not None and command.exit_code == 0
    assert list(result.events[0].changes) == ["a.txt"]


def test_pi_error_with_command_exited_text():
    b = AtifBuilder("pi", root=ROOT)
    b.call(
        "bash",
        {"command": "npm run check"},
        "error TS2339\n\nCommand exited with code 2",
        error=True,
    )
    b.call("bash", {"command": "npm run check"}, "ok", error=False)
    b.call("bash", {"command": "npm run check"}, "(no output)\n\nCommand aborted", error=True)
    atif, side = b.build()
    result = replay(atif, side, root=ROOT, blobs=MemoryBlobs())
    assert [c.exit_code for c in result.commands] == [2, 0, None]


def test_openclaw_result_in_a_separate_step_carries_the_exit_code():
    b = AtifBuilder("openclaw", root=ROOT)
    b.call("exec", {"command": "python -m pytest -q", "workdir": ROOT}, None, call_id="t1")
    b.steps.append(
        {
            "step_id": len(b.steps) + 1,
            "source": "agent",
            "message": "1 failed",
            "observation": {"results": [{"content": "1 failed", "extra": {"isError": True}}]},
            "extra": {"tool_call_id": "t1", "exec_exit_code": 1},
        }
    )
    command = only_command(b)
    assert (command.exit_code, command.output) == (1, "1 failed")


def test_plain_atif_exit_code_in_result_extra():
    b = AtifBuilder("some-agent", root=ROOT)
    b.call("execute_bash", {"command": "make test"}, "boom", extra={"returncode": 2})
    assert only_command(b).exit_code == 2


def test_terminus_keystrokes_have_no_exit_status():
    b = AtifBuilder("terminus-2", root=ROOT)
    b.call("bash_command", {"keystrokes": "pytest\n", "duration": 5}, "1 passed")
    command = only_command(b)
    assert command.exit_code is None and command.check is not None


def test_shell_call_without_a_result_has_no_exit_code():
    b = AtifBuilder("claude-code", root=ROOT)
    b.call("Bash", {"command": "pytest"}, None)
    command = only_command(b)
    assert (command.exit_code, command.output) == (None, "")
