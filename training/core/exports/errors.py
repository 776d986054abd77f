"""Why an export was not written. A refusal is the policy speaking (the command exits 1, the page
shows the reason); bad input is a caller's mistake (exit 2)."""

from __future__ import annotations

from collections.abc import Iterable


def _listed(ids: Iterable[str], limit: int = 5) -> str:
    ids = sorted(set(ids))
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


class ExportError(Exception):
    pass


class BadExportInput(ExportError, ValueError):
    """The request contradicts itself: mixed behaviours, duplicate rollouts, a missing task."""


class ExportRefused(ExportError):
    code = "refused"

    @property
    def reason(self) -> str:
        return str(self)


class NothingToExport(ExportRefused):
    code = "nothing_to_export"


class MissingEvalResult(ExportRefused):
    code = "eval_missing"

    def __init__(self, trajectory_ids: Iterable[str]) -> None:
        self.trajectory_ids = tuple(sorted(set(trajectory_ids)))
        super().__init__(
            "the eval harness has not run on every included rollout: "
            f"no result for rollout {_listed(self.trajectory_ids)}"
        )


class HeldOutTask(ExportRefused):
    code = "held_out"

    def __init__(self, task_ids: Iterable[str]) -> None:
        self.task_ids = tuple(sorted(set(task_ids)))
        super().__init__(
            f"held-out tasks may not enter a training export: task {_listed(self.task_ids)}"
        )


class SecretSurvived(ExportRefused):
    code = "secret_survived"

    def __init__(self, kinds: Iterable[str], where: str) -> None:
        self.kinds = tuple(sorted(set(kinds)))
        super().__init__(
            f"a secret survived redaction in {where} ({', '.join(self.kinds)}); nothing was written"
        )


class SecretFoundBySecondCheck(ExportRefused):
    """The independent detector (``crosscheck``) found a credential the redactor and its own
    check both let through: the export is refused all the same."""

    code = "secret_second_check"

    def __init__(self, found: Iterable[str], where: str, detector: str) -> None:
        self.found = tuple(sorted(set(found)))
        super().__init__(
            f"a second, independent check ({detector}) found a credential the redactor left in "
            f"{where} ({', '.join(self.found)}); nothing was written"
        )
