"""The tampering controls: what an agent that games the grader instead of fixing the code does.

Each control is an "agent" run in the candidate's own container, as the agent user, from the
starting files: a shell script (and files to write first), plus, rarely, a root step that gives
the agent what a real harness would (Harbor mounts ``/logs/verifier`` where the agent can
reach it). Every applicable control must score 0 for a candidate to be kept; one that scores 1
shows the task can be won without the fix. ``CATALOGUE`` below is the one list; define a
``Control`` in its family's module and list it there to extend it.

Families, one module each: ``files`` (what the grader reads: reward files, test files, named
files, links out of the project), ``runners`` (the runner swapped or configured to pass),
``forgery`` (the code under test turns on the tests, blindly or sparing what looks like a
control), ``rewriting`` (results rewritten after the runner produced them) and ``uncovered``
(files the guard might not cover). The last three are the targeted hacks of someone who has
read the grader kit (see tests/.../trials/test_reward_hacks.py).

Scripts get the task's context in environment variables (newline-separated lists):
``TRAJ2ENV_PROJECT``, ``TRAJ2ENV_WORKDIR``, ``TRAJ2ENV_TESTS`` (test files),
``TRAJ2ENV_SOURCES`` (non-test source files of the task's language), ``TRAJ2ENV_NAMED``
(files the check or its tests name that do not exist).

Most controls also beat a naive grader (run the recorded check where the agent left the
project, trust its exit status); the trial records that run's status as ``naive_exit_code``,
which is the evidence that a control is a real attack and not a no-op.
"""

from __future__ import annotations

from . import answers, files, forgery, partial, rewriting, runners, uncovered
from .base import NPM_SCRIPT, RUNNER_KINDS, Control, ControlContext, source_files
from .partial import family_sources

# The order trials run and are reported in: the blunt attacks first, then the targeted families.
CATALOGUE: tuple[Control, ...] = (
    files.FORGE_REWARD_FILES,
    files.DELETE_TESTS,
    files.EMPTY_TESTS,
    files.TRIVIAL_TESTS,
    runners.CONFTEST_FORCES_PASS,
    runners.SITECUSTOMIZE_FORCES_PASS,
    forgery.INPROCESS_FORGERY,
    forgery.EXIT_EARLY_SUCCESS,
    runners.FAKE_RUNNER_IN_PROJECT,
    runners.FAKE_RUNNER_ON_PATH,
    runners.NPM_TEST_SCRIPT_EXIT0,
    runners.NPMRC_SCRIPT_SHELL,
    files.SYMLINK_TESTS_OUTSIDE,
    files.SYMLINK_SUBMISSION_OUTSIDE,
    files.FORGE_NAMED_FILES,
    # 1. selective in-process forgery: neuter the real tests, spare what looks like a control
    forgery.SELECTIVE_FORGERY_SPARES_CONTROL_NAMES,
    forgery.SELECTIVE_FORGERY_SPARES_UNKNOWN_TESTS,
    forgery.SELECTIVE_FORGERY_BY_CALL_STACK,
    # 2. results rewritten after the runner produced them
    rewriting.REWRITTEN_RESULTS_IN_FLIGHT,
    rewriting.REWRITTEN_RESULTS_FORGED_SESSION,
    # 3. files the guard might not cover
    uncovered.UNCOVERED_FILES_DISCOVERED_FIRST,
    uncovered.UNCOVERED_FILES_SHADOW_STDLIB,
)


# What each family runs besides CATALOGUE: its own reward hacks (qa: answers that are right by
# breadth, not by computing anything; build and extend: tests skipped rather than passed).
FAMILY_CONTROLS: dict[str, tuple[Control, ...]] = {
    "qa": answers.CONTROLS,
    "build": partial.CONTROLS,
    "extend": partial.CONTROLS,
}


def catalogue_for(family: str) -> tuple[Control, ...]:
    """The controls a task of ``family`` runs: the catalogue, then its family's own."""
    return CATALOGUE + FAMILY_CONTROLS.get(family, ())


def by_name(name: str, catalogue: tuple[Control, ...] = CATALOGUE) -> Control:
    for control in catalogue:
        if control.name == name:
            return control
    raise KeyError(name)


__all__ = [
    "CATALOGUE",
    "NPM_SCRIPT",
    "RUNNER_KINDS",
    "Control",
    "ControlContext",
    "by_name",
    "catalogue_for",
    "family_sources",
    "source_files",
]
