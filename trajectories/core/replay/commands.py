"""Shell calls as recorded commands: output, exit status, file effects and the check they ran.

    shell = Shell(state, agent="claude-code", side_commands={})
    index = shell.run(call, ShellOp("pytest -q", None), "/repo", event_index=3)
    shell.commands[index].check                       # Check(kind=TEST, runner="pytest", …)

One ``Shell`` follows the agent's shell through a replay: its working directory (kept between
calls only by agents whose shell persists), and every command with the cwd it started in, its
whole output (Codex's later ``write_stdin`` polls included), its exit status (from Codex's side
data when the rollout recorded one) and the recognised check. Its file effects come from the
shell walker (``effects.run_script`` through ``ShellFiles``); a command that failed may have
stopped anywhere, so what it would have written is lost. A command that exited 0 and only
printed one file tells that file's content, in full or in part (``reads``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from . import effects as fx
from .calls import ToolCall
from .checks import CheckSpec
from .model import Check, CheckKind, ShellCommand
from .paths import Paths
from .reads import VERBATIM_AGENTS, doubtful, interpret, parse_read
from .results import CallOutcome, shell_output, shell_status
from .shell_files import ShellFiles
from .state import FileState
from .tools import ShellOp

_CHECK_PRIORITY = (CheckKind.TEST, CheckKind.BUILD, CheckKind.TYPECHECK, CheckKind.LINT)
# Agents whose shell keeps its working directory from one call to the next.
_PERSISTENT_SHELL = {"claude-code", "claude_code", "claude", "terminus", "terminus-2"}
# Agents that flag every failed call, so a result without the flag succeeded.
_FLAGS_FAILURES = {"claude-code", "claude_code", "claude"}


class Shell:
    def __init__(
        self, state: FileState, *, agent: str | None, side_commands: Mapping[str, Any]
    ) -> None:
        self.state = state
        # Codex side data from ingest: exit codes, cwds and outputs assembled from the
        # rollout's own end events, by call id.
        self.side_commands = side_commands
        name = (agent or "").lower()
        self.persistent = name in _PERSISTENT_SHELL
        self.verbatim = name in VERBATIM_AGENTS
        self.flags_failures = name in _FLAGS_FAILURES
        self.cwd: str | None = state.paths.root
        self.commands: list[ShellCommand] = []

    def run(self, call: ToolCall, op: ShellOp, cwd: str | None, *, event_index: int) -> int:
        """Replay one command line started in ``cwd``; returns its index in ``commands``."""
        paths = self.state.paths
        result = call.result
        texts = [result.text, *call.polls] if result is not None else []
        if call.polls and result is not None:
            result = replace(result, text="\n".join(texts))
        status = shell_status(result, flags_failures=self.flags_failures)
        output = "".join(shell_output(t) for t in texts)
        # Every recording of the output with whether it shows signs of being cut, for reads.
        limits = [call.args, *call.poll_args]
        recorded_outputs: list[tuple[str, bool]] = []
        if texts:
            cut = any(
                doubtful(t, limit.get("max_output_tokens"))
                for t, limit in zip(texts, limits, strict=True)
            )
            recorded_outputs.append((output, cut))
        info = self.side_commands.get(call.tool_call_id)
        if isinstance(info, Mapping):
            recorded = info.get("exit_code")
            if isinstance(recorded, int) and not isinstance(recorded, bool):
                outcome = CallOutcome.OK if recorded == 0 else CallOutcome.FAILED
                status = replace(status, outcome=outcome, exit_code=recorded)
            if isinstance(info.get("output"), str):
                output = info["output"]
                recorded_outputs.append((output, doubtful(output)))
            if isinstance(info.get("cwd"), str) and info["cwd"].startswith("/"):
                cwd = info["cwd"]
        certain = status.outcome in (CallOutcome.OK, CallOutcome.UNKNOWN)
        found: list[fx.FoundCheck] = []
        if status.outcome is not CallOutcome.NOT_RUN:
            failed = status.outcome is CallOutcome.FAILED
            files = ShellFiles(self.state, certain=certain)
            run = fx.run_script(op.script, cwd, files, output, failed=failed)
            found = run.checks
            if self.persistent:
                self.cwd = _reset_to(output) or run.cwd
        if status.outcome is CallOutcome.OK and status.exit_code == 0:
            self._read(call, op.script, cwd, recorded_outputs)
        command = ShellCommand(
            index=len(self.commands),
            event_index=event_index,
            step_index=call.step_index,
            step_id=call.step_id,
            tool_call_id=call.tool_call_id,
            command=op.script,
            cwd=paths.relative_dir(cwd),
            cwd_abs=cwd,
            output=output,
            exit_code=status.exit_code,
            check=_pick_check(found, paths),
        )
        self.commands.append(command)
        return command.index

    def _read(
        self,
        call: ToolCall,
        script: str,
        cwd: str | None,
        recorded_outputs: Sequence[tuple[str, bool]],
    ) -> None:
        """A command that exited 0 and only read one file: what it showed (see ``reads``)."""
        read = parse_read(script)
        if read is None:
            return
        for directory in read.cd:
            if cwd is None and not directory.startswith("/"):
                return
            cwd = self.state.paths.absolute(directory, cwd)
        if cwd is None and not read.path.startswith("/"):
            return  # relative to a directory the replay lost track of
        target = self.state.resolve(read.path, cwd)
        if target.flagged:
            return  # outside the project: a read there says nothing about it
        content: str | None = None
        # Codex's PTY mode (tty: true) turns every newline into CR LF on the way out.
        if self.verbatim and call.args.get("tty") is not True:
            shown = {text for text, cut in recorded_outputs if not cut}
            if len(shown) == 1:
                content = interpret(read, shown.pop())
        if content is None:
            self.state.observe(target, None, f"read in part by {read.program}")
        else:
            self.state.observe(target, content, f"read in full by {read.program}")


# Claude Code moves its shell back to the project when a command left it outside, and says so.
_CWD_RESET = re.compile(r"^Shell cwd was reset to (/.*?)\s*$", re.MULTILINE)


def _reset_to(output: str) -> str | None:
    found = _CWD_RESET.findall(output)
    return found[-1] if found else None


def _pick_check(found: Sequence[fx.FoundCheck], paths: Paths) -> Check | None:
    if not found:
        return None
    best = min(found, key=lambda f: _CHECK_PRIORITY.index(f.spec.kind))
    spec: CheckSpec = best.spec
    cwd = best.cwd
    if spec.chdir is not None:
        cwd = paths.absolute(spec.chdir, cwd) if cwd is not None else None
    return Check(
        kind=spec.kind,
        language=spec.language,
        runner=spec.runner,
        segment=best.segment,
        cwd=paths.relative_dir(cwd),
        target=spec.target,
        masked=best.masked,
    )
