"""Training data exports: SFT, OpenAI chat, DPO, KTO and RFT rows from evaluated rollouts.

>>> import tempfile
>>> from pathlib import Path
>>> atif = {"agent": {"name": "claude-code"}, "steps": [
...     {"step_id": 1, "source": "user", "message": "Fix add(); my key is sk-proj-" + "x1" * 20},
...     {"step_id": 2, "source": "agent", "message": "Running the tests.", "tool_calls": [
...         {"tool_call_id": "c1", "function_name": "Bash", "arguments": {"command": "pytest"}}],
...      "observation": {"results": [{"source_call_id": "c1", "content": "1 passed"}]}}]}
>>> item = ExportItem("7", atif, "ab" * 32, "calc-add", Split.TRAIN, "run-tests-first", 2,
...                   EvalResult(passed=True, reward=1.0, eval_run_id="31"))
>>> request = ExportRequest(ExportKind.SFT, "run-tests-first", 2, items=(item,))
>>> result = write_export(request, Path(tempfile.mkdtemp()))
>>> (result.rows, result.manifest["redaction"]["replacements"])
(1, {'openai_api_key': 1})
>>> sorted(p.name for p in result.out_dir.iterdir())
['README.md', 'data', 'data.jsonl', 'manifest.json']

The Django side assembles the frozen items (``items.py``) from its rows and copies kept task
folders for RFT exports; everything here is plain Python. ``write_export`` refuses, writing
nothing, when the eval harness has not run on an included rollout, a held-out task would enter
the export, or a secret survives redaction or is found by a second, independent detector
(``crosscheck.py``, ``errors.py``).
"""

from training.core.exports.errors import (
    BadExportInput,
    ExportError,
    ExportRefused,
    HeldOutTask,
    MissingEvalResult,
    NothingToExport,
    SecretFoundBySecondCheck,
    SecretSurvived,
)
from training.core.exports.items import (
    EvalResult,
    ExportItem,
    ExportKind,
    ExportRequest,
    ExportResult,
    PreferencePair,
    Split,
    TaskRef,
)
from training.core.exports.kinds import task_dir_name
from training.core.exports.writer import write_export

__all__ = [
    "BadExportInput",
    "EvalResult",
    "ExportError",
    "ExportItem",
    "ExportKind",
    "ExportRefused",
    "ExportRequest",
    "ExportResult",
    "HeldOutTask",
    "MissingEvalResult",
    "NothingToExport",
    "PreferencePair",
    "SecretFoundBySecondCheck",
    "SecretSurvived",
    "Split",
    "TaskRef",
    "task_dir_name",
    "write_export",
]
