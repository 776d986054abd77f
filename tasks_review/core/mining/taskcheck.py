"""What the task runs as its check: the passing run's command line, minus what cannot run offline.

    decided = task_check(replay, failing, passing, files)
    decided.command, decided.cwd      # "redis-cli FLUSHDB && pytest -q", "."
    decided.setup, decided.note       # ("redis-cli FLUSHDB",), "runs the passing run's setup …"

The runs of a check pair up by the check itself (``checkpairs``), so their command lines may differ
in what came first: ``pytest`` failed, ``redis-cli FLUSHDB && pytest`` passed. The passing run
is the one the reference must repeat, so the task starts from its command line and judges each
setup command before the check (``checkline.classify``):

* all of them run offline inside the project (a ``cd`` there, variables, a local Redis or
  PostgreSQL client, another check): the task runs the line as it passed, less what the image
  stands for (the recorded virtualenv's activation, starting a service) and less commands
  after the check that the task cannot vouch for;
* one of them cannot (an install, the network, a remote host, an unknown program): the task
  runs the bare check from the folder it ran in. If the setup was needed, the check in the
  image fails on the reference and the candidate drops there, which is the honest outcome.

A setup only the failing run had is left out: the passing run did without it. A line that is
not a plain chain (``checkline``) is run as recorded. A mise task or make target whose
definition the replay knows runs as the commands it defines (``scripts``). ``note`` says which
of these happened, for the reviewer.
"""

from __future__ import annotations

from dataclasses import dataclass

from trajectories.core.replay import ReplayResult, ShellCommand
from trajectories.core.replay.paths import Paths
from trajectories.core.replay.shell import SimpleCommand

from .checkline import Line, Step, StepVerdict, classify, join, split_line, text
from .checkpairs import bare_check_command
from .installs import installs_packages
from .scripts import Files, Resolved, resolve


@dataclass(frozen=True, slots=True)
class TaskCheck:
    command: str  # as the task runs it (the recorded root not yet rewritten)
    cwd: str | None  # where it starts, relative to the project; None outside it
    check_cwd: str | None  # where the check itself runs
    setup: tuple[str, ...]  # what the command runs before the check, as typed
    note: str  # why this command, for the reviewer ("" when both runs were one plain check)
    resolved: Resolved | None = None  # the mise task or make target the check stands for
    installs: tuple[str, ...] = ()  # setup commands of the passing run that installed packages


def task_check(
    replay: ReplayResult, failing: ShellCommand, passing: ShellCommand, files: Files
) -> TaskCheck:
    check = passing.check
    assert check is not None
    paths = Paths(replay.root)
    line = split_line(passing.command, check.segment)
    if line is None:
        note = (
            ""
            if _same(failing, passing)
            else "the passing run's command line is not a plain chain of commands; the task "
            "runs it as recorded."
        )
        return TaskCheck(bare_check_command(passing.command), passing.cwd, check.cwd, (), note)

    here = passing.cwd_abs
    steps: list[Step] = []
    for before in line.before:
        step = classify(before, cwd=here, paths=paths)
        steps.append(step)
        here = step.cwd
    shell_dir = paths.relative_dir(here)
    own_env = classify(SimpleCommand(assignments=line.check.assignments), cwd=here, paths=paths)
    if line.check.assignments:
        steps.append(own_env)
    resolved = resolve(line.check.args, shell_dir, files) if shell_dir is not None else None
    typed_check = " ".join(w.raw for w in line.check.argv)
    installs = tuple(s.text for s in steps if installs_packages(s.text))
    told = _resolved_note(typed_check, resolved)
    dropped_failing = _failing_only_setup(failing, steps)

    unsafe = next((s for s in steps if s.verdict is StepVerdict.UNSAFE), None)
    if unsafe is not None or passing.cwd is None:
        bare = resolved.script if resolved else bare_check_command(typed_check)
        why = (
            f"`{unsafe.text}` {unsafe.why}"
            if unsafe is not None
            else "the passing run started outside the project"
        )
        note = f"the passing run's setup is left out ({why}); the task runs the bare check"
        check_cwd = _check_cwd(check.cwd, resolved)
        return TaskCheck(bare, shell_dir, check_cwd, (), _sentences(note, told), resolved, installs)

    kept = [s for s in steps if s.verdict is StepVerdict.KEEP and s is not own_env]
    elided = [s for s in steps if s.verdict is StepVerdict.ELIDE]
    after = [classify(c, cwd=here, paths=paths) for c in line.after]
    trailing_kept = all(s.verdict is StepVerdict.KEEP for s in after)
    if not elided and trailing_kept and resolved is None:
        command = bare_check_command(passing.command)
    elif resolved is not None:
        # The check's own variables (`FOO=1 mise run test`) hold for every command it stands for.
        own = " ".join(w.raw for w in line.check.assignments)
        command = join(*(s.text for s in kept), f"export {own}" if own else "", resolved.script)
    else:
        the_check = bare_check_command(text(line.check))
        trailing = [s.text for s in after] if trailing_kept else []
        command = join(*(s.text for s in kept), the_check, *trailing)
    setup = tuple(s.text for s in kept) + tuple(w.raw for w in line.check.assignments)
    notes = []
    if setup and not _same(failing, passing):  # one line for both runs needs no explaining
        notes.append(
            "runs the passing run's setup: "
            + "; ".join(f"`{s.text}` ({s.why})" for s in [*kept, *_own(line, own_env)])
        )
    if elided:
        notes.append("leaves out " + "; ".join(f"`{s.text}` ({s.why})" for s in elided))
    if not trailing_kept:
        notes.append("leaves out what the passing run did after the check")
    if dropped_failing:
        notes.append(
            "leaves out the failing run's "
            + ", ".join(f"`{t}`" for t in dropped_failing)
            + ": the passing run did without it"
        )
    return TaskCheck(
        command,
        passing.cwd,
        _check_cwd(check.cwd, resolved),
        setup,
        _sentences(*notes, told),
        resolved,
        installs,
    )


def _same(failing: ShellCommand, passing: ShellCommand) -> bool:
    return (
        bare_check_command(failing.command) == bare_check_command(passing.command)
        and failing.cwd == passing.cwd
    )


def _own(line: Line, own_env: Step) -> list[Step]:
    return [own_env] if line.check.assignments else []


def _check_cwd(recorded: str | None, resolved: Resolved | None) -> str | None:
    return resolved.cwd if resolved is not None else recorded


def _resolved_note(typed: str, resolved: Resolved | None) -> str:
    if resolved is None:
        return ""
    return f"`{typed}` runs `{resolved.script}` as {resolved.source} defines it"


def _failing_only_setup(failing: ShellCommand, passing_steps: list[Step]) -> list[str]:
    """Setup commands of the failing run's line that the passing run's did not have."""
    check = failing.check
    assert check is not None
    line = split_line(failing.command, check.segment)
    if line is None:
        return []
    passing = {s.text for s in passing_steps}
    typed = [text(c) for c in line.before]
    if line.check.assignments:
        typed.append(" ".join(w.raw for w in line.check.assignments))
    return [t for t in typed if t not in passing]


def _sentences(*parts: str) -> str:
    shown = [p for p in parts if p]
    return "; ".join(shown) + "." if shown else ""
