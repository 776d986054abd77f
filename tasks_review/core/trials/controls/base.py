"""What a tampering control is, and the task's context it works in."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..plan import GO_TEST, NODE_TEST, PYTEST, UNITTEST

NPM_SCRIPT = "npm-script"  # the check runs a package.json script (npm/yarn/pnpm/bun)
PYTHON_SOURCE = (".py",)
NODE_SOURCE = (".js", ".cjs")  # CommonJS: what the forgeries can patch with require()
GO_SOURCE = (".go",)  # a forgery goes in a new file of the same package (test files aside)
RUNNER_KINDS = frozenset({UNITTEST, PYTEST, NODE_TEST, GO_TEST, NPM_SCRIPT})
_SOURCES = {"python": PYTHON_SOURCE, "node": NODE_SOURCE, "go": GO_SOURCE}


@dataclass(frozen=True, slots=True)
class ControlContext:
    language: str
    runners: frozenset[str]  # unittest, pytest, node-test, npm-script
    project_dir: str
    workdir: str
    tests: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    named: tuple[str, ...] = ()

    def env(self) -> dict[str, str]:
        return {
            "TRAJ2ENV_PROJECT": self.project_dir,
            "TRAJ2ENV_WORKDIR": self.workdir,
            "TRAJ2ENV_TESTS": "\n".join(self.tests),
            "TRAJ2ENV_SOURCES": "\n".join(self.sources),
            "TRAJ2ENV_NAMED": "\n".join(self.named),
        }


@dataclass(frozen=True, slots=True)
class Control:
    name: str
    description: str
    shell: str  # run as the agent in the project folder
    files: Mapping[str, bytes] = field(default_factory=dict)  # written first, project-relative
    root_setup: str = ""  # run as root before the agent: what the environment would offer
    languages: frozenset[str] | None = None  # None: any language
    runners: frozenset[str] | None = None  # applies when the check uses one of these
    needs: str | None = None  # "tests", "sources" or "named": context without which it is moot

    def skip_reason(self, context: ControlContext) -> str | None:
        """Why this control does not apply to the task, or None when it does."""
        if self.languages is not None and context.language not in self.languages:
            return f"targets {'/'.join(sorted(self.languages))}; the check is {context.language}"
        if self.runners is not None and not (self.runners & context.runners):
            used = "/".join(sorted(context.runners)) or "no instrumented runner"
            return f"targets {'/'.join(sorted(self.runners))}; the check uses {used}"
        if self.needs and not getattr(context, self.needs):
            return f"the project has no {self.needs} for it to work on"
        return None


def source_files(files: Mapping[str, object], language: str, tests: set[str]) -> list[str]:
    """Non-test source files a forgery can be planted in, for the task's language."""
    suffixes = _SOURCES.get(language, ())
    return sorted(p for p in files if p not in tests and posixpath.splitext(p)[1] in suffixes)
