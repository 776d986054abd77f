"""What the loop's commands share: `--as USERNAME`, `--json`, and one set of exit codes.

A command is a thin caller of the services the pages call, as a named user, so the same role
checks (and the two-person rule of deployments) hold in the terminal::

    class Command(LoopCommand):
        person = "required"          # the service refuses anonymous callers

        def step(self, *, user, **options) -> Done:
            row = some_service(user=user, ...)       # Refused / NotPermitted map to codes
            return Done({"id": row.pk}, f"row {row.pk} written")

Exit 0 done; 1 refused (the roles, the two-person rule, the row's state) or nothing usable (the
step had nothing to do: ``Done(..., nothing="why")``); 2 a usage or setup error (an unknown
user, behaviour or row, input the service calls invalid, a database that fails). With
``--json`` stdout holds one object, ``{"error": ...}`` when the step did not run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.management.base import BaseCommand, CommandError

from groundwork.access.errors import EXIT_REFUSED, EXIT_USAGE, Refused, exit_code_of
from groundwork.core.failures import said
from groundwork.services.audit import iso
from tasks_review.models import Candidate
from training.core.deploy.bucketing import format_percentage
from training.models import Adapter, Behaviour, BehaviourTask, Deployment, TrainingExport

EXIT_DONE = 0  # refused and usage errors: groundwork.access.errors


@dataclass(frozen=True)
class Done:
    payload: dict[str, Any]  # what --json prints
    text: str  # what a person reads otherwise
    nothing: str = ""  # set: the step had nothing to do, and this says why (exit 1)


def usage_error(message: str) -> CommandError:
    return CommandError(message, returncode=EXIT_USAGE)


def person(username: str) -> AbstractBaseUser:
    """The user a command acts as, by the name they log in with."""
    User = get_user_model()
    user = User._default_manager.filter(**{User.USERNAME_FIELD: username}).first()
    if user is None:
        raise usage_error(f"no user {username!r}: add people in the admin (/admin/)")
    if not user.is_active:  # as on the pages, where an inactive account cannot log in
        raise CommandError(f"{username} is inactive and may not act", returncode=EXIT_REFUSED)
    return user


def behaviour_named(slug: str) -> Behaviour:
    behaviour = Behaviour.objects.filter(slug=slug).first()
    if behaviour is None:
        known = ", ".join(Behaviour.objects.values_list("slug", flat=True)) or "none"
        raise usage_error(f"no behaviour {slug!r} (known: {known})")
    return behaviour


def export_named(reference: str) -> TrainingExport:
    """An export by id, or the latest written one into that folder."""
    if reference.isdigit():
        found = TrainingExport.objects.filter(pk=int(reference)).first()
    else:
        folder = str(Path(reference).expanduser().resolve())
        rows = TrainingExport.objects.filter(out_dir=folder, status=TrainingExport.Status.DONE)
        found = rows.order_by("-id").first()
    if found is None:
        raise usage_error(f"no written training export {reference!r} (give its folder or id)")
    return found


class LoopCommand(BaseCommand):
    """A step of the loop; subclasses add their arguments and implement ``step``."""

    # "required": --as must name a user; "optional": without it the step runs as the system
    # (as a worker does); None: the step reads only, no --as.
    person: Literal["required", "optional"] | None = "optional"

    def add_arguments(self, parser) -> None:
        if self.person is not None:
            parser.add_argument(
                "--as",
                dest="as_user",
                metavar="USERNAME",
                required=self.person == "required",
                help="act as this user, with their role (as on the pages)",
            )
        parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
        self.add_step_arguments(parser)

    def add_step_arguments(self, parser) -> None:
        pass

    def step(self, *, user: AbstractBaseUser | None, **options: Any) -> Done:
        raise NotImplementedError

    def handle(self, *args: Any, **options: Any) -> None:
        as_json = options["json"]
        try:
            name = options.pop("as_user", None)
            user = person(name) if name else None
            try:
                done = self.step(user=user, **options)
            except Refused as error:
                raise CommandError(str(error), returncode=exit_code_of(error)) from None
            except CommandError:
                raise
            except Exception as error:
                # A broken database or a bug is not a refusal: exit 2, not Python's 1.
                if options.get("traceback"):
                    raise
                what = said(error)
                raise CommandError(
                    f"unexpected error: {what} (run again with --traceback to see where)",
                    returncode=EXIT_USAGE,
                ) from None
        except CommandError as error:
            if as_json:
                self.stdout.write(json.dumps({"error": str(error)}, sort_keys=True))
            raise
        self.stdout.write(json.dumps(done.payload, sort_keys=True) if as_json else done.text)
        if done.nothing:
            raise CommandError(done.nothing, returncode=EXIT_REFUSED)


# -- a behaviour's tasks, as people name them ----------------------------------------------------


def candidate_ids(tasks: list[str], *, kept: bool) -> list[int]:
    """Candidate ids for what a person typed: ids as they are, task names looked up."""
    ids = []
    for task in tasks:
        if task.isdigit():
            ids.append(int(task))
            continue
        named = Candidate.objects.filter(task_name=task)
        if kept:
            named = named.filter(status=Candidate.Status.KEPT)
        found = list(named.values_list("pk", flat=True))
        if not found:
            raise usage_error(f"no {'kept ' if kept else ''}task named {task!r}")
        if len(found) > 1:
            numbers = ", ".join(map(str, found))
            raise usage_error(f"{len(found)} tasks are named {task!r}; give its id: {numbers}")
        ids += found
    return ids


def described(tasks: list[BehaviourTask]) -> list[dict[str, Any]]:
    return [
        {"candidate": t.candidate_id, "task": t.candidate.task_name, "split": t.split}
        for t in sorted(tasks, key=lambda t: t.candidate_id)
    ]


def counts(behaviour: Behaviour) -> dict[str, int]:
    splits = list(behaviour.tasks.values_list("split", flat=True))
    return {split: splits.count(split) for split in BehaviourTask.Split.values}


def counted(tasks: dict[str, int]) -> str:
    return f"it has {tasks['train']} train and {tasks['held_out']} held-out task(s)"


# -- adapters and deployments, as people name them -----------------------------------------------


def adapter_named(reference: str) -> Adapter:
    """An adapter by id or by its key, ``NAME@VERSION``."""
    rows = Adapter.objects.select_related("behaviour")
    if reference.isdigit():
        found = rows.filter(pk=int(reference)).first()
    else:
        name, _, version = reference.rpartition("@")
        found = rows.filter(name=name, version=version).first()
    if found is None:
        raise usage_error(f"no adapter {reference!r} (give NAME@VERSION or its id)")
    return found


def deployment_named(reference: str) -> Deployment:
    """A deployment by id, or an adapter's key for that adapter's latest deployment."""
    if reference.isdigit():
        found = Deployment.objects.filter(pk=int(reference)).first()
        if found is None:
            raise usage_error(f"no deployment {reference}")
        return found
    latest = adapter_named(reference).deployments.order_by("-id").first()
    if latest is None:
        raise usage_error(f"{reference} has no deployment; propose one first")
    return latest


def deployment_payload(row: Deployment) -> dict[str, Any]:
    """A deployment as the terminal shows it: its state, rollout per behaviour and last drill."""
    row = Deployment.objects.select_related("adapter").get(pk=row.pk)

    def shown(bp: int | None) -> str | None:
        return None if bp is None else format_percentage(bp)

    shares = row.shares.select_related("behaviour").order_by("behaviour__slug")
    return {
        "deployment": row.pk,
        "adapter": row.adapter.key,
        "state": row.state,
        "reason": row.reason,
        "shares": {
            s.behaviour.slug: {
                "requested": shown(s.requested),
                "ceiling": shown(s.ceiling),
                "live": shown(s.live),
            }
            for s in shares
        },
        "drill": {
            "answered_at": iso(row.drill_answered_at),
            "model": row.drill_model,
            "adapter": row.drill_adapter or None,
        }
        if row.drill_answered_at
        else None,
    }


def deployment_text(payload: dict[str, Any]) -> str:
    # A killed deployment keeps its percentages (to be restored), but serves none of them.
    serving = payload["state"] == Deployment.State.ACTIVE
    live = ", ".join(
        f"{slug} {share['live']}"
        for slug, share in payload["shares"].items()
        if share["live"] and serving
    )
    return (
        f"deployment {payload['deployment']} ({payload['adapter']}): {payload['state']}"
        + (f", live on {live}" if live else "")
        + (f" ({payload['reason']})" if payload["reason"] else "")
    )
