"""Why a candidate was dropped: stable reason codes shared by every family.

The codes are stored in the database, written to report.json and counted on the pipeline-run
page, so they never change meaning; a new situation gets a new code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class DropReason(StrEnum):
    """Each member's comment is the condition that produces it."""

    # A file the fix changed is lost or partial at the start or at the reference (the replay
    # does not know its content), or some command between the two runs may have changed files
    # under a directory in ways the trajectory does not show (an uncertain tree).
    FIX_TOUCHES_LOST_FILE = "fix_touches_lost_file"
    # A file the check is known to read is lost or partial, or was never seen although the
    # command names it: the test file(s) named in the command, package.json where a Node script
    # runner runs, Python test files (test_*.py, *_test.py, conftest.py) under the check's
    # directory, Go *_test.go files under it, the go.mod a Go check builds under.
    CHECK_READS_LOST_FILE = "check_reads_lost_file"
    # The files were identical before both runs and nothing uncertain happened in between: the
    # failure was flaky or environmental (a server not running, a cache, the clock).
    NO_CHANGE = "no_change"
    # The check runs a project script or task (`npm run check`, `yarn test`, `make test`,
    # `just test`, `mise run test`, `task test`) and the manifest that defines it (package.json,
    # a Makefile or the `-f` file, a justfile, mise.toml, a Taskfile) was never seen at the
    # check's directory (or, for runners that look upward, above it): the task could not
    # define the check, which would then fail in the image on the reference too. Also a Go
    # check (go test/vet/build …) with no go.mod seen in its directory or above: Go refuses to
    # build packages outside a module.
    CHECK_MANIFEST_UNSEEN = "check_manifest_unseen"
    # Packages were installed between the runs (pip/uv/poetry/npm/yarn/pnpm/bun/apt/go get ...)
    # and the source diff is empty or only touches dependency manifests and lockfiles; also a
    # fix that only edited installed dependencies (node_modules, a virtualenv).
    PACKAGE_INSTALL_FIX = "package_install_fix"
    # The check's language (or the project's, when the runner does not say) is not in the
    # supported set (python, node and go by default).
    UNSUPPORTED_LANGUAGE = "unsupported_language"
    # The project lives on Windows paths (C:\..., backslashes): the task cannot place its files.
    WINDOWS_PATHS = "windows_paths"
    # The check needs a service the task's image cannot run beside it: MySQL or MongoDB, or
    # Redis or PostgreSQL on another host (the image runs those two on its own host). Shown by
    # the check's own command lines (a client such as `mysql -e …` or `psql -h db.example.com`,
    # a variable such as DATABASE_URL=mysql://… or REDIS_URL=redis://cache:6379) or by its
    # output (a connection error naming that service or host); see service_needs.py.
    SERVICE_UNAVAILABLE = "service_unavailable"
    # A Go check's go.mod requires modules that only a download could provide: no
    # vendor/modules.txt beside it and no replacement by a local folder, while the task's image
    # has no network and no module cache. The trial layer uses the same code for what it finds
    # at prepare (declared Python and Node dependencies, programs the image lacks).
    DEPENDENCY_UNAVAILABLE_OFFLINE = "dependency_unavailable_offline"
    # A non-trivial line the fix added appears in the instruction that would be shown.
    INSTRUCTION_LEAKS_FIX = "instruction_leaks_fix"
    # The starting files exceed the size or file-count limit.
    START_TOO_LARGE = "start_too_large"
    # A path is not a safe relative path inside the project (``..``, absolute, NUL), the check
    # ran outside the project root, or the fix wrote files outside it (other than scratch
    # space such as /tmp).
    PATH_ESCAPES_ROOT = "path_escapes_root"
    # At write: a credential (not an e-mail address) is in the check's command, in a file the
    # oracle writes or in a reference file the grader restores; those keep their exact bytes,
    # so the secret cannot be redacted without changing the task (taskfiles.SecretInReference).
    SECRET_IN_REFERENCE = "secret_in_reference"
    # A family's miner raised on this trajectory (a shape it does not expect): the trajectory's
    # other families, and every other trajectory, are mined as usual; the detail names the error
    # and where it was raised, for a bug report.
    MINER_FAILED = "miner_failed"

    # -- the LLM families (build, extend, qa): their one call gave no usable answer ------------
    # No answer within TRAJ2ENV_LLM_TIMEOUT_SECONDS.
    LLM_TIMEOUT = "llm_timeout"
    # The answer was not one JSON object.
    LLM_BAD_JSON = "llm_bad_json"
    # The answer was JSON that the question's schema rejects.
    LLM_SCHEMA_MISMATCH = "llm_schema_mismatch"
    # The model refused (a refusal message, a content filter).
    LLM_REFUSED = "llm_refused"
    # Any other failure of the call: connection, authentication, rate limit, bad request.
    LLM_ERROR = "llm_error"
    # The model read the turn and said there is no task in it (qa: not a question about the
    # project's data with a reported answer; build/extend: the requests do not say what the
    # tests check).
    LLM_DECLINED = "llm_declined"
    # build/extend: the check's runner reports no per-test results (only pytest, unittest and
    # node's test runner are instrumented), so no fraction of tests passed can be measured.
    CHECK_NOT_STRUCTURED = "check_not_structured"
    # extend: no test file was added or changed after the request: nothing tells the feature
    # from the working state it started from.
    NO_NEW_TESTS = "no_new_tests"
    # build/extend: the instruction names none of the modules, functions or commands the hidden
    # tests exercise: an agent could not know what to build.
    INSTRUCTION_MISSES_INTERFACE = "instruction_misses_interface"
    # qa: the answer the model extracted is not in any output of the agent's commands in that
    # turn: nothing shows the agent computed it (or the model made it up).
    QA_ANSWER_NOT_IN_OUTPUT = "qa_answer_not_in_output"
    # qa: an input the question depends on was fetched from the network in that turn (curl,
    # wget, git clone, a download in code); nothing pins it to the trajectory's date.
    QA_INPUT_FROM_NETWORK = "qa_input_from_network"
    # qa: an input the answer depends on is lost, partial or never seen by the replay: the task
    # could not lay it down.
    QA_INPUT_UNKNOWN = "qa_input_unknown"
    # qa: the project already has a file named like the answer file (answer.txt).
    QA_ANSWER_FILE_EXISTS = "qa_answer_file_exists"


@dataclass(frozen=True, slots=True)
class Drop:
    """One candidate that did not make it, identified within its trajectory."""

    family: str
    stage: str
    reason: DropReason
    detail: str
    fail_command_index: int
    pass_command_index: int
    fail_step_index: int
    pass_step_index: int
    command: str
    language: str = ""  # the check's, when mining got that far
    llm: Mapping[str, Any] = field(default_factory=dict)  # what a call cost before the drop

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "stage": self.stage,
            "reason": str(self.reason),
            "detail": self.detail,
            "candidate": {
                "command": self.command,
                "fail_command_index": self.fail_command_index,
                "pass_command_index": self.pass_command_index,
                "fail_step_index": self.fail_step_index,
                "pass_step_index": self.pass_step_index,
            },
        }
