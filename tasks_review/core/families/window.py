"""What build and extend share: a window of the trajectory from a starting point to the last
passing run of a test check, judged by repair's own rules, and the task it makes.

    outcome = assess_window(replay, index, blobs, start_event, passing, where)   # Window | Drop
    candidate = window_candidate(...)        # the RepairCandidate shape, reward "fraction"

The repair rules ask about a failing run and a passing one; here the "failing run" is the check
as it would have run at the starting point (``at_start``): the same command in the same folder,
on the files of that moment. So the starting files, the reference files (just before the passing
run), the lost files and uncertain trees in between, the paths, the manifests and the files the
check reads are decided exactly as for a repair, in the same order, with the same reason codes.

The check must report test by test (pytest, unittest or node's test runner, possibly through an
npm script; ``check_not_structured`` otherwise): the reward is the share of the hidden tests that
pass, which only per-test reports can give.

The instruction is the model's, framed here: a title, the project's folder, what the model wrote
from the user's requests, and how the work is checked (the command, the hidden tests, the
reward). ``interface`` lists what the hidden tests import from the project (Python ``import`` and
``from … import``, CommonJS ``require`` and ES ``import``), which the prompt gives the model and
the instruction must name at least one of (``instruction_misses_interface``).
"""

from __future__ import annotations

import ast
import dataclasses
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groundwork.core.llm import Question
from trajectories.core.blobs import BlobStore
from trajectories.core.replay import ReplayResult, ShellCommand, StateIndex

from ..instruction import leaks, rewrite_root
from ..mining.candidate import RepairCandidate
from ..mining.drops import Drop, DropReason
from ..mining.files import is_test_config, is_test_file
from ..mining.fix import Fix
from ..mining.repair import DEFAULT_LANGUAGES, DEFAULT_MAX_FILES, DEFAULT_MAX_START_BYTES, Miner
from ..mining.taskcheck import TaskCheck
from ..trials.plan import plan_check
from .common import Asked, Asks, Where, ask_once, clip, family_drop, family_key

REWARD = "fraction"
MAX_TEST_CHARS = 16000
INSTRUCTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "usable": {"type": "boolean"},
        "reason": {"type": "string"},
        "title": {"type": "string"},
        "instruction": {"type": "string"},
        "interface": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["usable", "reason", "title", "instruction", "interface"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class Window:
    """A window that passed the rules: its fix, and the check as the task runs it."""

    passing: ShellCommand
    fix: Fix
    language: str
    task_command: str
    start: dict[str, str]  # the task's starting files (build: without its tests)
    ref: dict[str, str]
    hidden: tuple[str, ...]  # the test files the agent does not see (at all, or in this version)
    task: TaskCheck  # the check as the task runs it (``mining.taskcheck``: setup judged)
    services: tuple[str, ...] = ()  # what the check needs running beside it


def is_test_check(command: ShellCommand) -> bool:
    check = command.check
    return (
        check is not None
        and str(check.kind) == "test"
        and not check.masked
        and command.exit_code is not None
        and command.cwd is not None
    )


def at_start(passing: ShellCommand, event_index: int) -> ShellCommand:
    """The passing check as if it had run just before event ``event_index`` (see the module
    docstring): what repair's rules call the failing run."""
    return dataclasses.replace(passing, event_index=event_index)


def assess_window(
    family: str,
    replay: ReplayResult,
    index: StateIndex,
    blobs: BlobStore,
    start_event: int,
    passing: ShellCommand,
    where: Where,
    *,
    project_dir: str,
    hide_all_tests: bool,
    languages: frozenset[str] = DEFAULT_LANGUAGES,
    max_start_bytes: int = DEFAULT_MAX_START_BYTES,
    max_files: int = DEFAULT_MAX_FILES,
) -> Window | Drop:
    """The window from ``start_event`` to ``passing`` by repair's rules, or the first drop.

    ``hide_all_tests`` (build): every test file is left out of the starting files; otherwise
    (extend) the hidden tests are the test files the window added or changed.
    """
    check = passing.check
    assert check is not None
    start_run = at_start(passing, start_event)

    def drop(reason: DropReason, detail: str, language: str) -> Drop:
        return family_drop(family, reason, detail, dataclasses.replace(where, language=language))

    rules = Miner(replay, index, blobs, {}, max_start_bytes, max_files, languages, project_dir)
    judged = rules.judge(start_run, passing, drop, fix_rules=False)
    if isinstance(judged, Drop):
        return judged
    fix, task, language = judged.fix, judged.task, judged.language
    task_command = rewrite_root(task.command, replay.root, project_dir)
    ref_bytes = {path: blobs.get(sha) for path, sha in fix.ref.items()}
    plan = plan_check(task_command, check.cwd or ".", ref_bytes)
    if not plan.structured:
        return drop(
            DropReason.CHECK_NOT_STRUCTURED,
            f"{check.runner} reports no per-test results the grader can count "
            "(pytest, unittest and node --test do)",
            language,
        )
    if hide_all_tests:
        start = {p: s for p, s in fix.start.items() if not is_test_file(p)}
        hidden = tuple(sorted(p for p in fix.ref if is_test_file(p)))
    else:
        start = dict(fix.start)
        hidden = tuple(
            sorted(p for p, s in fix.ref.items() if is_test_file(p) and fix.start.get(p) != s)
        )
    return Window(
        passing, fix, language, task_command, start, dict(fix.ref), hidden, task, judged.services
    )


# -- the interface the hidden tests exercise ---------------------------------------------------

_REQUIRE = re.compile(r"""require\(\s*['"](\.{1,2}/[^'"]+)['"]\s*\)""")
_ES_IMPORT = re.compile(r"""import\s+(?:\{([^}]*)\}|(\w+))[^'"]*from\s+['"](\.{1,2}/[^'"]+)['"]""")
_DESTRUCTURED = re.compile(r"""const\s+\{([^}]*)\}\s*=\s*require\(\s*['"](\.{1,2}/[^'"]+)""")


def interface(tests: Mapping[str, bytes], ref: Sequence[str]) -> list[str]:
    """What the hidden tests import from the project: "calc.py: add, mul", "src/units.js: toKiB"."""
    found: dict[str, set[str]] = {}
    modules = {_module_of(p): p for p in ref if p.endswith(".py") and not is_test_file(p)}
    for path, data in sorted(tests.items()):
        text = data.decode("utf-8", "replace")
        if path.endswith(".py"):
            _python_imports(text, modules, found)
        else:
            _node_imports(path, text, set(ref), found)
    return [f"{p}: {', '.join(sorted(n))}" if n else p for p, n in sorted(found.items())]


def interface_names(lines: Sequence[str]) -> list[str]:
    """What an instruction must mention one of: the names the tests import, or the module's
    path where they import the module whole."""
    names: list[str] = []
    for line in lines:
        path, _, listed = line.partition(": ")
        imported = [n.strip() for n in listed.split(",") if n.strip()]
        names += imported or [path]
    return list(dict.fromkeys(n for n in names if n))


def names_only(line: str, lines: Sequence[str]) -> bool:
    """Whether a test's line says nothing but names of the interface (``    API_PATH,`` in a
    parenthesised import): the instruction must state those, so they are no leak."""
    if re.sub(r"[\w.\s,()]", "", line):
        return False
    allowed = {"from", "import", "as", *interface_names(lines)}
    for entry in lines:
        path = entry.partition(": ")[0]
        allowed |= {_module_of(path), posixpath.splitext(posixpath.basename(path))[0]}
    words = re.findall(r"[A-Za-z_][\w.]*", line)
    return bool(words) and all(w in allowed or w.split(".")[-1] in allowed for w in words)


def _module_of(path: str) -> str:
    stem = path[: -len("/__init__.py")] if path.endswith("/__init__.py") else path[:-3]
    return stem.replace("/", ".")


def _python_imports(text: str, modules: Mapping[str, str], found: dict[str, set[str]]) -> None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return

    def module(name: str) -> str | None:
        # A test may import `calc` for src/calc.py when src/ is on its path: match by suffix.
        for dotted, path in modules.items():
            if dotted == name or dotted.endswith("." + name):
                return path
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            path = module(node.module)
            if path is not None:
                found.setdefault(path, set()).update(a.name for a in node.names if a.name != "*")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                path = module(alias.name)
                if path is not None:
                    found.setdefault(path, set())


def _node_imports(test: str, text: str, ref: set[str], found: dict[str, set[str]]) -> None:
    folder = posixpath.dirname(test)

    def resolve(spec: str) -> str | None:
        base = posixpath.normpath(posixpath.join(folder, spec))
        for candidate in (base, base + ".js", base + ".cjs", base + ".mjs", base + "/index.js"):
            if candidate in ref:
                return candidate
        return None

    for names, spec in _DESTRUCTURED.findall(text):
        path = resolve(spec)
        if path is not None:
            found.setdefault(path, set()).update(n.split(":")[0].strip() for n in names.split(","))
    for spec in _REQUIRE.findall(text):
        path = resolve(spec)
        if path is not None:
            found.setdefault(path, set())
    for braced, default, spec in _ES_IMPORT.findall(text):
        path = resolve(spec)
        if path is not None:
            names = braced.split(",") if braced else [default]
            found.setdefault(path, set()).update(n.split(" as ")[0].strip() for n in names)
    for names in found.values():
        names.discard("")


# -- asking for the instruction ----------------------------------------------------------------


def instruction_question(
    name: str,
    system: str,
    *,
    requests: Sequence[str],
    window: Window,
    blobs: BlobStore,
    project_dir: str,
    root: str,
    lines: Sequence[str],
) -> Question:
    """The one question of a build or extend candidate: the requests, the starting files, the
    check and the hidden tests (which the model reads to name their interface, not to quote)."""
    asked = "\n\n".join(
        "\n".join(f"> {line}" for line in rewrite_root(r, root, project_dir).split("\n"))
        for r in requests
    )
    start = "\n".join(f"- {p}" for p in sorted(window.start)) or "(no files: an empty folder)"
    tests = []
    for path in window.hidden:
        text = blobs.get(window.ref[path]).decode("utf-8", "replace")
        tests.append(f"### {path}\n\n```\n{rewrite_root(text, root, project_dir)}\n```")
    check = window.passing.check
    assert check is not None
    where = project_dir if check.cwd in (None, ".", "") else f"{project_dir}/{check.cwd}"
    prompt = (
        f"## The user's requests, in order\n\n{clip(asked, 6000)}\n\n"
        f"## The project's files at the start, in {project_dir}\n\n{clip(start, 3000)}\n\n"
        f"## The check\n\n`{window.task_command}`, run from `{where}`\n\n"
        f"## The hidden tests (the solver never sees these)\n\n"
        f"{clip(chr(10).join(tests), MAX_TEST_CHARS)}\n\n"
        "## What the hidden tests import from the project\n\n"
        + ("\n".join(f"- {line}" for line in lines) or "(nothing found by a static read)")
        + "\n"
    )
    return Question(name, INSTRUCTION_SCHEMA, system, prompt)


SYSTEM_RULES = """\
Rules for the instruction:
- Self-contained: someone with only the project's files and your text can do the work. Write
  from what the user asked for; never mention a recorded session, an agent or hidden tests.
- Name the interface the hidden tests exercise: the module or file paths, the function, class
  and method names with their parameters, command lines and output formats they rely on.
- Never copy test code, test data tables or the finished solution; describe behaviour instead.
- Markdown, at most about 400 words, no top-level heading (a title goes in title).
- usable is false (with the reason) when the requests do not say what the tests check.
"""


def framed_instruction(
    title: str, body: str, *, window: Window, project_dir: str, extend: bool
) -> str:
    check = window.passing.check
    assert check is not None
    where = project_dir if check.cwd in (None, ".", "") else f"{project_dir}/{check.cwd}"
    empty = "" if window.start else " It is empty: you write the project from scratch."
    rule = (
        "Your reward is the share of the new tests that pass; it is 0 if any test that passes "
        "now stops passing."
        if extend
        else "Your reward is the share of those tests that pass."
    )
    return (
        f"# {title.strip() or 'Build the project'}\n\n"
        f"The project is in `{project_dir}`.{empty}\n\n"
        f"{body.strip()}\n\n"
        "## How it is checked\n\n"
        f"Tests you cannot see are run from `{where}` with:\n\n"
        f"```sh\n{window.task_command}\n```\n\n"
        f"{rule} The grader uses its own copy of the tests and of the test configuration.\n"
    )


def window_candidate(
    family: str,
    replay: ReplayResult,
    atif_step_ids: Sequence[Any],
    window: Window,
    where: Where,
    *,
    instruction: str,
    project_dir: str,
    facts: Mapping[str, Any],
    usage: Mapping[str, Any],
) -> RepairCandidate:
    passing, start, ref = window.passing, window.start, window.ref
    check = passing.check
    assert check is not None and passing.cwd is not None and check.cwd is not None
    paths = {*start, *ref}
    return RepairCandidate(
        command=passing.command,
        task_command=window.task_command,
        cwd=window.task.cwd if window.task.cwd is not None else passing.cwd,
        check_cwd=window.task.check_cwd if window.task.check_cwd is not None else check.cwd,
        language=window.language,
        runner=check.runner,
        check_kind=str(check.kind),
        root=replay.root,
        project_dir=project_dir,
        fail_command_index=where.first_command,
        pass_command_index=passing.index,
        fail_step_index=where.start_step,
        pass_step_index=passing.step_index,
        fail_step_id=_step_id(atif_step_ids, where.start_step),
        pass_step_id=passing.step_id,
        fail_exit_code=0,
        failing_output="",
        start_files=start,
        ref_files=ref,
        added=tuple(sorted(p for p in ref if p not in start)),
        modified=tuple(sorted(p for p in ref if p in start and start[p] != ref[p])),
        deleted=tuple(sorted(p for p in start if p not in ref)),
        test_paths=tuple(sorted(p for p in paths if is_test_file(p) or is_test_config(p))),
        fix_edits_tests=False,
        unknown_paths=window.fix.unknown,
        presumed=dict(window.fix.presumed),
        instruction=instruction,
        key=family_key(
            family,
            {"command": window.task_command, "cwd": passing.cwd, "start": start, "ref": ref},
        ),
        family=family,
        family_facts={**facts, "hidden_tests": list(window.hidden), "reward": REWARD},
        llm=dict(usage),
        services=window.services,
        setup=window.task.setup,
        setup_note=window.task.note,
    )


def _step_id(step_ids: Sequence[Any], position: int) -> Any:
    return step_ids[position] if 0 <= position < len(step_ids) else None


def ask_instruction(
    family: str,
    llm: Asks,
    question: Question,
    window: Window,
    where: Where,
    blobs: BlobStore,
    *,
    project_dir: str,
    lines: Sequence[str],
    extend: bool,
) -> tuple[str, Mapping[str, Any], Mapping[str, Any]] | Drop:
    """(instruction, the model's answer, usage) or the drop: a failed call, a decline, a leak,
    or an instruction that names nothing the tests import."""
    asked = ask_once(llm, question)
    where = dataclasses.replace(where, language=window.language)
    if not isinstance(asked, Asked):
        return family_drop(family, asked.reason, asked.detail, where, asked.usage)
    value, usage = asked.value, asked.usage
    if not value["usable"] or not value["instruction"].strip():
        why = value["reason"][:500] or "no instruction written"
        return family_drop(family, DropReason.LLM_DECLINED, why, where, usage)
    text = framed_instruction(
        value["title"], value["instruction"], window=window, project_dir=project_dir, extend=extend
    )
    names = interface_names(lines)
    leaked = [
        line for line in leaks(text, window.start, window.ref, blobs) if not names_only(line, lines)
    ]
    if leaked:
        shown = ", ".join(repr(line[:80]) for line in leaked[:3])
        detail = f"{len(leaked)} line(s) of the tests or the solution appear in it: {shown}"
        return family_drop(family, DropReason.INSTRUCTION_LEAKS_FIX, detail, where, usage)
    body = value["instruction"]  # the frame names the check's command, which proves nothing
    if names and not any(re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", body) for n in names):
        detail = "it names none of " + ", ".join(names[:8])
        return family_drop(family, DropReason.INSTRUCTION_MISSES_INTERFACE, detail, where, usage)
    return text, value, usage


def instructed_candidate(
    family: str,
    llm: Asks,
    replay: ReplayResult,
    blobs: BlobStore,
    window: Window,
    where: Where,
    *,
    system: str,
    requests: Sequence[str],
    project_dir: str,
    facts: Mapping[str, Any],
) -> RepairCandidate | Drop:
    """The window's one question and, from its answer, the candidate (or the drop)."""
    lines = interface({p: blobs.get(window.ref[p]) for p in window.hidden}, list(window.ref))
    question = instruction_question(
        f"{family}_instruction",
        system,
        requests=requests,
        window=window,
        blobs=blobs,
        project_dir=project_dir,
        root=replay.root,
        lines=lines,
    )
    outcome = ask_instruction(
        family,
        llm,
        question,
        window,
        where,
        blobs,
        project_dir=project_dir,
        lines=lines,
        extend=family == "extend",
    )
    if isinstance(outcome, Drop):
        return outcome
    instruction, value, usage = outcome
    facts = {
        **facts,
        "requests": list(requests),
        "interface": lines,
        "stated": list(value["interface"]),
    }
    return window_candidate(
        family,
        replay,
        replay.step_ids,
        window,
        where,
        instruction=instruction,
        project_dir=project_dir,
        facts=facts,
        usage=usage,
    )
