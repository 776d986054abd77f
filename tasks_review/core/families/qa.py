"""The qa family: a question the user asked about the project's data, which the agent answered.

    candidates, drops = find_qa_candidates(replay, index, blobs, atif, llm=client)

A turn is a candidate when its request reads as a question, the agent's commands or reads in
that turn touched a data file of the project (``DATA_SUFFIXES``) and the agent then said
something. Before any call, the turn drops when an input came from the network
(``qa_input_from_network``: nothing pins it to the trajectory's date), a data file it touched is
unknown to the replay (``qa_input_unknown``) or the project already has ``answer.txt``.

Then one LLM call (``QUESTION_SCHEMA``) reads the request, the agent's commands with their output
and its reply, and extracts: whether this is a data question with a reported answer, the question
restated to stand alone, the answer with its type (exact, numeric, set) and tolerance, and the
files it comes from. Its answer is checked, not trusted: the inputs must be known files of the
project at the question, the answer must be in what the agent reported *and* in some output of
its tools (``qa_answer_not_in_output`` otherwise: the agent did not compute it, or the model made
it up), a numeric tolerance is capped by how precisely the agent reported the number, and the
instruction must not state the answer (``instruction_leaks_fix``).

The task: the project's files as they were when the question was asked; the instruction asks the
question and names the answer file (``answer.txt``), the only thing the grader reads
(``trials/kit/answers.py``: one answer, exactly); the oracle writes the answer there.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from groundwork.core.llm import Question
from trajectories.core.blobs import BlobStore
from trajectories.core.replay import (
    ChangeKind,
    Entry,
    ReplayResult,
    StateIndex,
    Status,
    is_tree,
)

from ..instruction import rewrite_root, trim_text
from ..mining.candidate import RepairCandidate
from ..mining.drops import Drop, DropReason
from ..mining.files import is_project_source
from ..mining.repair import DEFAULT_MAX_FILES, DEFAULT_MAX_START_BYTES, PROJECT_DIR
from ..trials.kit import answers
from .common import Asked, Asks, Where, ask_once, clip, family_drop, family_key
from .turns import Turn, commands_in, observations, reply, turns

FAMILY = "qa"
ANSWER_FILE = "answer.txt"
CHECK = f"cat {ANSWER_FILE}"  # what a naive grader would trust: an answer file exists
DATA_SUFFIXES = frozenset(
    {".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".parquet", ".xlsx", ".xls", ".xml"}
    | {".sqlite", ".sqlite3", ".db", ".log", ".dat", ".txt", ".yaml", ".yml"}
)
_QUESTION_START = re.compile(
    r"^\s*(how (many|much|often|long)|what|which|who|whom|when|where|count|sum|total|"
    r"average|mean|median|compute|calculate|find|list|tell me|give me|is there|are there)\b",
    re.IGNORECASE,
)
# Commands that bring data in from outside: a URL, a downloader, a clone or pull, a dataset hub.
_NETWORK = re.compile(
    r"https?://|\b(curl|wget|scp|rsync|gsutil|kaggle|huggingface-cli|aria2c)\b|"
    r"\bgit\s+(clone|pull|fetch)\b|\bhf\s+download\b|urlopen|requests\.get|snapshot_download|"
    r"load_dataset\("
)
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_UNSEEN = Entry(None, Status.LOST)
MAX_REPLY_CHARS = 3000

QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "is_data_question": {"type": "boolean"},
        "question": {"type": "string"},
        "answer_type": {"type": "string", "enum": list(answers.TYPES)},
        "answer": {"type": "string"},
        "items": {"type": "array", "items": {"type": "string"}},
        "tolerance": {"type": "number", "minimum": 0},
        "inputs": {"type": "array", "items": {"type": "string"}},
        "reason": {"type": "string"},
    },
    "required": [
        "is_data_question",
        "question",
        "answer_type",
        "answer",
        "items",
        "tolerance",
        "inputs",
        "reason",
    ],
    "additionalProperties": False,
}
SYSTEM = """\
You turn one turn of a recorded coding-agent session into a question-answering task: a
question about the project's data files whose answer is one fact (a count, a sum, a name, a set
of names). Use only the transcript you are given: the user's request, the commands the agent
ran with their output, and what the agent reported. Answer in the JSON schema given.

- is_data_question: true only when the user asked for a fact computed from the project's data
  files and the agent reported it. False for questions about code, opinions, plans, or when the
  agent did not give one definite answer; then say why in reason and leave the rest empty.
- question: the question restated so that it stands alone for someone who has only the
  project's files: name the files (paths relative to the project) and say exactly what to
  compute. Never state or hint at the answer.
- answer_type: numeric (one number), exact (one value such as a name), or set (several values,
  order irrelevant). answer: the answer as the agent reported it (numeric: the number only,
  no units); items: for set, the values, one per entry (otherwise empty).
- tolerance: for numeric, how far a correct answer may be from it (0 for counts; half the last
  reported digit for rounded values); 0 otherwise.
- inputs: the project files the answer is computed from.
"""


def asks_a_question(request: str) -> bool:
    return "?" in request or bool(_QUESTION_START.match(request))


def is_data_file(path: str) -> bool:
    return posixpath.splitext(path)[1].lower() in DATA_SUFFIXES and is_project_source(path)


def find_qa_candidates(
    replay: ReplayResult,
    index: StateIndex,
    blobs: BlobStore,
    atif: Mapping[str, Any],
    *,
    llm: Asks,
    project_dir: str = PROJECT_DIR,
    max_start_bytes: int = DEFAULT_MAX_START_BYTES,
    max_files: int = DEFAULT_MAX_FILES,
) -> tuple[list[RepairCandidate], list[Drop]]:
    miner = _Miner(replay, index, blobs, atif, llm, project_dir, max_start_bytes, max_files)
    candidates: list[RepairCandidate] = []
    drops: list[Drop] = []
    for turn in turns(atif, replay):
        outcome = miner.assess(turn)
        if isinstance(outcome, Drop):
            drops.append(outcome)
        elif outcome is not None:
            candidates.append(outcome)
    return candidates, drops


@dataclass(slots=True)
class _Miner:
    replay: ReplayResult
    index: StateIndex
    blobs: BlobStore
    atif: Mapping[str, Any]
    llm: Asks
    project_dir: str
    max_start_bytes: int
    max_files: int

    def state_at(self, turn: Turn) -> dict[str, Entry]:
        """The files when the question was asked; a file the turn read before writing it was
        already there, so a full read tells its content then (as for a repair's start)."""
        state = dict(self.index.state_before_event(turn.first_event))
        written: set[str] = set()
        for event in self.replay.events[turn.first_event : turn.end_event]:
            for key, change in event.changes.items():
                if is_tree(key) or change.flagged:
                    continue
                if not change.observed:
                    written.add(key)
                elif key in written or state.get(key, _UNSEEN).known:
                    continue
                elif change.kind is ChangeKind.WRITTEN and change.sha:
                    state[key] = Entry(change.sha, Status.KNOWN)
                else:
                    state.setdefault(key, Entry(None, Status.PARTIAL))
        return state

    def touched(self, turn: Turn, start: Mapping[str, Any]) -> list[str]:
        """Data files of the project the turn's request, commands or reads name."""
        texts = [turn.request, *(c.command for c in commands_in(self.replay, turn))]
        found = {
            path
            for path in start
            if is_data_file(path) and any(_names(text, path) for text in texts)
        }
        for event in self.replay.events[turn.first_event : turn.end_event]:
            found |= {
                k for k, c in event.changes.items() if c.observed and is_data_file(k) and k in start
            }
        return sorted(found)

    def assess(self, turn: Turn) -> RepairCandidate | Drop | None:
        if not asks_a_question(turn.request):
            return None
        state = self.state_at(turn)
        start_entries = {k: e for k, e in state.items() if not is_tree(k) and is_project_source(k)}
        data = self.touched(turn, start_entries)
        reply_step, said = reply(self.atif, turn)
        commands = commands_in(self.replay, turn)
        if not data or not said:
            return None  # not a data question the agent answered: nothing to drop
        where = Where(
            start_step=turn.step,
            end_step=reply_step,
            first_command=commands[0].index if commands else -1,
            last_command=commands[-1].index if commands else -1,
            command=" ".join(turn.request.split())[:300],
            language="data",
        )

        def drop(reason: DropReason, detail: str, usage: Mapping[str, Any] | None = None) -> Drop:
            return family_drop(FAMILY, reason, detail, where, usage)

        fetched = [c.command.strip()[:120] for c in commands if _NETWORK.search(c.command)]
        if fetched:
            return drop(DropReason.QA_INPUT_FROM_NETWORK, "; ".join(fetched[:3]))
        lost = [p for p in data if not start_entries[p].known]
        if lost:
            return drop(DropReason.QA_INPUT_UNKNOWN, "content unknown: " + ", ".join(lost[:5]))
        if ANSWER_FILE in start_entries:
            return drop(DropReason.QA_ANSWER_FILE_EXISTS, f"the project has {ANSWER_FILE}")
        start = {k: e.sha for k, e in start_entries.items() if e.known and e.sha}
        size = sum(len(self.blobs.get(sha)) for sha in start.values())
        if len(start) > self.max_files or size > self.max_start_bytes:
            return drop(DropReason.START_TOO_LARGE, f"{len(start)} files, {size} bytes")

        sizes = {p: len(self.blobs.get(start[p])) for p in data}
        asked = ask_once(self.llm, self.question(turn, sizes, commands, said))
        if not isinstance(asked, Asked):
            return drop(asked.reason, asked.detail, asked.usage)
        value, usage = asked.value, asked.usage
        if not value["is_data_question"]:
            return drop(DropReason.LLM_DECLINED, value["reason"][:500] or "no reason", usage)
        root = self.replay.root
        inputs = sorted({_relative(p, root) for p in value["inputs"]} - {""})
        unknown = [p for p in inputs if p not in start]
        if unknown or not inputs:
            detail = ", ".join(unknown[:5]) or "the model named no input file"
            return drop(DropReason.QA_INPUT_UNKNOWN, f"not a known project file: {detail}", usage)
        expected = _expected(value)
        if expected is None:
            return drop(DropReason.LLM_DECLINED, "the answer is empty or not a number", usage)
        outputs = "\n".join(observations(self.atif, turn))
        missing = _unsupported(expected, said, outputs)
        if missing:
            return drop(DropReason.QA_ANSWER_NOT_IN_OUTPUT, missing, usage)
        question = rewrite_root(value["question"].strip(), root, self.project_dir)
        if _states(question, expected):
            return drop(DropReason.INSTRUCTION_LEAKS_FIX, "the question states the answer", usage)
        return self.candidate(turn, where, start, state, question, expected, inputs, said, usage)

    def question(
        self, turn: Turn, data: dict[str, int], commands: list[Any], said: str
    ) -> Question:
        listed = "\n".join(f"- {path} ({size} bytes)" for path, size in data.items())
        ran = []
        for command in commands:
            output = trim_text(command.output, head_lines=15, tail_lines=15, max_chars=1500)
            ran.append(f"$ {command.command}\n(exit {command.exit_code})\n{output}")
        transcript = clip("\n\n".join(ran) or "(no shell commands; the agent read files)", 12000)
        prompt = (
            f"## The user's request\n\n{clip(turn.request, 3000)}\n\n"
            f"## Data files of the project it touched\n\n{listed}\n\n"
            f"## What the agent ran, with output\n\n{transcript}\n\n"
            f"## What the agent reported\n\n{clip(said, MAX_REPLY_CHARS)}\n"
        )
        return Question("qa_question", QUESTION_SCHEMA, SYSTEM, prompt)

    def candidate(
        self,
        turn: Turn,
        where: Where,
        start: dict[str, str],
        state: Mapping[str, Any],
        question: str,
        expected: dict[str, Any],
        inputs: list[str],
        said: str,
        usage: Mapping[str, Any],
    ) -> RepairCandidate:
        answer_sha = self.blobs.put(answers.canonical(expected).encode())
        instruction = build_instruction(question, expected, inputs, self.project_dir)
        steps = self.replay.step_ids
        unknown = tuple(sorted(k for k, e in state.items() if not is_tree(k) and not e.known))
        facts = {
            "question": question,
            "asked": clip(turn.request, 2000),
            "reported": clip(said, 2000),
            "expected": expected,
            "answer_file": ANSWER_FILE,
            "inputs": inputs,
        }
        return RepairCandidate(
            command=where.command,
            task_command=CHECK,
            cwd=".",
            check_cwd=".",
            language="data",
            runner=FAMILY,
            check_kind="answer",
            root=self.replay.root,
            project_dir=self.project_dir,
            fail_command_index=where.first_command,
            pass_command_index=where.last_command,
            fail_step_index=where.start_step,
            pass_step_index=where.end_step,
            fail_step_id=steps[where.start_step] if where.start_step < len(steps) else None,
            pass_step_id=steps[where.end_step] if 0 <= where.end_step < len(steps) else None,
            fail_exit_code=0,
            failing_output="",
            start_files=start,
            ref_files={**start, ANSWER_FILE: answer_sha},
            added=(ANSWER_FILE,),
            modified=(),
            deleted=(),
            test_paths=(),
            fix_edits_tests=False,
            unknown_paths=unknown,
            instruction=instruction,
            key=family_key(FAMILY, {"question": question, "expected": expected, "start": start}),
            family=FAMILY,
            family_facts=facts,
            llm=dict(usage),
        )


def build_instruction(
    question: str, expected: Mapping[str, Any], inputs: list[str], project_dir: str
) -> str:
    kind = expected["type"]
    if kind == "numeric":
        form = "one number: digits, a decimal point if needed, no units, no thousands separators"
        tolerance = float(expected.get("tolerance") or 0)
        if tolerance:
            form += f" (compared within ±{tolerance:g})"
    elif kind == "set":
        form = "one item per line, in any order: every item asked for and nothing else"
    else:
        form = "the value alone on one line, as it appears in the data"
    files = ", ".join(f"`{p}`" for p in inputs)
    return (
        "# Answer a question about the project's data\n\n"
        f"The project is in `{project_dir}`. {question}\n\n"
        f"The answer comes from the project's own files ({files}); nothing needs to be "
        "downloaded.\n\n"
        "## Your answer\n\n"
        f"Write the answer, and nothing else, to `{project_dir}/{ANSWER_FILE}`: {form}. "
        "Only that file is graded: one answer, exactly; several candidates or a non-answer "
        "score nothing.\n"
    )


def _names(text: str, path: str) -> bool:
    """Whether ``text`` names ``path`` (by its path, or its file name as a whole word)."""
    name = posixpath.basename(path)
    return path in text or bool(re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text))


def _relative(path: str, root: str) -> str:
    path = path.strip().strip("`'\"")
    root = root.rstrip("/")
    if root and path.startswith(root + "/"):
        path = path[len(root) + 1 :]
    if path.startswith("/app/"):
        path = path[len("/app/") :]
    return posixpath.normpath(path.removeprefix("./")) if path else ""


def _expected(value: Mapping[str, Any]) -> dict[str, Any] | None:
    """The expected answer in the grader's terms, or None when the model gave none usable."""
    kind = value["answer_type"]
    if kind == "set":
        got = sorted({str(i).strip() for i in value["items"] if str(i).strip()})
        return {"type": "set", "value": got, "tolerance": 0} if got else None
    text = str(value["answer"]).strip()
    if not text:
        return None
    if kind == "numeric":
        number = answers.number(text)
        if number is None:
            return None
        # A rounded report is only as precise as its last digit: the tolerance goes no further.
        decimals = len(text.split(".", 1)[1]) if "." in text and "e" not in text.lower() else 0
        cap = 0.5 * 10.0**-decimals
        tolerance = min(max(float(value["tolerance"]), 0.0), cap)
        return {"type": "numeric", "value": text.replace(",", ""), "tolerance": tolerance}
    return {"type": "exact", "value": text, "tolerance": 0}


def _unsupported(expected: Mapping[str, Any], said: str, outputs: str) -> str:
    """Why the transcript does not show the agent computed and reported ``expected`` ("" if it
    does)."""
    for label, text in (("the agent's reply", said), ("any output of its tools", outputs)):
        if not _shows(expected, text):
            return f"{answers.canonical(expected).strip()!r} is not in {label}"
    return ""


def _shows(expected: Mapping[str, Any], text: str) -> bool:
    if expected["type"] == "numeric":
        want = float(expected["value"])
        slack = float(expected["tolerance"]) + 1e-9 * max(1.0, abs(want))
        for match in _NUMBER.finditer(text):
            got = answers.number(match.group(0))
            if got is not None and abs(got - want) <= slack:
                return True
        return False
    normal = answers.normal(text)
    values = expected["value"] if expected["type"] == "set" else [expected["value"]]
    return all(answers.normal(str(v)) in normal for v in values)


def _states(question: str, expected: Mapping[str, Any]) -> bool:
    """Whether the question itself gives the answer away."""
    if expected["type"] == "numeric":
        value = str(expected["value"])
        return bool(re.search(rf"(?<![\d.]){re.escape(value)}(?![\d.]|,\d)", question))
    values = expected["value"] if expected["type"] == "set" else [expected["value"]]
    normal = answers.normal(question)
    return all(
        re.search(rf"(?<!\w){re.escape(answers.normal(str(v)))}(?!\w)", normal) for v in values
    )
