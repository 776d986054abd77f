"""Behaviours: create, version on edit, seed the catalogue, choose tasks (split once, never moved).

Every write checks the caller's role, validates through ``training.core.spec`` and records its
audit event in the same transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from groundwork.access.errors import Conflict, Invalid, NotFound, require
from groundwork.services.audit import audit_event_record
from tasks_review.models import Candidate
from training.core.catalogue import catalogue
from training.core.spec import BehaviourSpec, SpecError, load_spec
from training.core.stats import split_of
from trajectories.core import limits

from ..models import Behaviour, BehaviourTask, BehaviourVersion
from ..roles import EDIT_BEHAVIOUR


def _validated(document: Mapping[str, Any] | str) -> tuple[BehaviourSpec, dict[str, Any]]:
    """The spec as core loads it, and the document to store (with no version number: rows carry
    that)."""
    if isinstance(document, str):
        problem = limits.refusal("the spec", document, limits.SPEC)
        if problem:
            raise Invalid(problem)
    try:
        spec = load_spec(document)
    except SpecError as error:
        raise Invalid(str(error)) from None
    stored = spec.to_dict()
    stored.pop("version", None)
    return spec, stored


def behaviour_create(
    *, user: AbstractBaseUser | None, spec: Mapping[str, Any] | str, base_model: str = ""
) -> Behaviour:
    """A new behaviour with its first version; the spec's slug names it."""
    if user is not None:
        require(user, EDIT_BEHAVIOUR, "add behaviours")
    loaded, document = _validated(spec)
    with transaction.atomic():
        if Behaviour.objects.filter(slug=loaded.slug).exists():
            raise Conflict(f"a behaviour named {loaded.slug!r} exists; edit it instead")
        behaviour = Behaviour.objects.create(
            slug=loaded.slug, title=loaded.title, base_model=base_model, created_by=_who(user)
        )
        version = BehaviourVersion.objects.create(
            behaviour=behaviour, number=1, spec=document, created_by=_who(user)
        )
        audit_event_record(
            actor=user,
            verb="behaviour.create",
            target=behaviour,
            before=None,
            after={"slug": behaviour.slug, "version": version.number},
        )
    return behaviour


def behaviour_version_create(
    *, user: AbstractBaseUser, behaviour_id: int, spec: Mapping[str, Any] | str, note: str = ""
) -> BehaviourVersion:
    """Editing makes the next version; results already recorded keep pointing at theirs."""
    require(user, EDIT_BEHAVIOUR, "edit behaviours")
    problem = limits.refusal("the note", note.strip(), limits.TITLE)
    if problem:
        raise Invalid(problem)
    loaded, document = _validated(spec)
    with transaction.atomic():
        behaviour = _locked(behaviour_id)
        if loaded.slug != behaviour.slug:
            raise Invalid(
                f"the spec's slug {loaded.slug!r} is not this behaviour's ({behaviour.slug!r}); "
                "a behaviour keeps its name"
            )
        latest = behaviour.latest_version()
        if latest is not None and latest.spec == document:
            raise Conflict(f"nothing changed since version {latest.number}")
        number = (latest.number if latest else 0) + 1
        version = BehaviourVersion.objects.create(
            behaviour=behaviour, number=number, spec=document, note=note, created_by=user
        )
        if behaviour.title != loaded.title:
            behaviour.title = loaded.title
            behaviour.save(update_fields=["title"])
        audit_event_record(
            actor=user,
            verb="behaviour.version",
            target=behaviour,
            before={"version": latest.number if latest else None},
            after={"version": number, "note": note},
        )
    return version


def behaviour_catalogue_seed(*, user: AbstractBaseUser | None = None) -> list[Behaviour]:
    """Add the catalogue's behaviours that are missing; existing ones (and their edits) stay."""
    added = []
    for slug, spec in sorted(catalogue().items()):
        if Behaviour.objects.filter(slug=slug).exists():
            continue
        added.append(behaviour_create(user=user, spec=spec.to_dict()))
    return added


def behaviour_tasks_add(
    *, user: AbstractBaseUser | None, behaviour_id: int, candidate_ids: Iterable[int]
) -> list[BehaviourTask]:
    """Choose kept tasks for a behaviour; each gets its split now, once: the one the task
    already has in another behaviour, else by a stable hash of its content key."""
    if user is not None:
        require(user, EDIT_BEHAVIOUR, "choose a behaviour's tasks")
    ids = sorted(set(candidate_ids))
    with transaction.atomic():
        behaviour = _locked(behaviour_id)
        candidates = {c.pk: c for c in Candidate.objects.filter(pk__in=ids)}
        missing = [i for i in ids if i not in candidates]
        if missing:
            raise NotFound(f"no candidate {', '.join(map(str, missing))}")
        not_kept = [c.pk for c in candidates.values() if c.status != Candidate.Status.KEPT]
        if not_kept:
            raise Invalid(
                f"candidate {', '.join(map(str, not_kept))} is not a kept task: only tasks whose "
                "trial matrix passed can serve a behaviour"
            )
        have = set(behaviour.tasks.values_list("candidate_id", flat=True))
        known = _recorded_splits([c.key for c in candidates.values()])
        rows = [
            BehaviourTask(
                behaviour=behaviour,
                candidate=candidate,
                task_key=candidate.key,
                split=known.get(candidate.key)
                or str(split_of(candidate.key, behaviour.slug, behaviour.held_out_fraction)),
                added_by=_who(user),
            )
            for pk, candidate in sorted(candidates.items())
            if pk not in have
        ]
        BehaviourTask.objects.bulk_create(rows)
        if rows:
            audit_event_record(
                actor=user,
                verb="behaviour.tasks",
                target=behaviour,
                before=None,
                after={"added": {str(r.candidate_id): r.split for r in rows}},
            )
    return rows


def _recorded_splits(keys: list[str]) -> dict[str, str]:
    """The split each task already has in any behaviour, by content key: a split belongs to the
    task, so a task held out once is held out everywhere (held-out wins over train where older
    rows disagree)."""
    splits: dict[str, str] = {}
    for key, split in BehaviourTask.objects.filter(task_key__in=keys).values_list(
        "task_key", "split"
    ):
        if splits.get(key) != BehaviourTask.Split.HELD_OUT:
            splits[key] = split
    return splits


def behaviour_tasks_remove(
    *, user: AbstractBaseUser | None, behaviour_id: int, candidate_ids: Iterable[int]
) -> list[BehaviourTask]:
    """Take tasks out of a behaviour (a task chosen by mistake), with the audit row saying which
    and in what split; added again, a task gets the same split, since its hash is stable.

    A task with eval results or preference pairs stays: deleting it would erase what was
    measured and labelled on it (the rows cascade), so the refusal says so."""
    if user is not None:
        require(user, EDIT_BEHAVIOUR, "choose a behaviour's tasks")
    ids = sorted(set(candidate_ids))
    with transaction.atomic():
        behaviour = _locked(behaviour_id)
        tasks = {t.candidate_id: t for t in behaviour.tasks.filter(candidate_id__in=ids)}
        missing = [i for i in ids if i not in tasks]
        if missing:
            raise NotFound(
                f"candidate {', '.join(map(str, missing))} is not a task of {behaviour.slug}"
            )
        used = sorted(
            t.candidate_id for t in tasks.values() if t.results.exists() or t.pairs.exists()
        )
        if used:
            raise Conflict(
                f"{len(used)} task{'s have' if len(used) > 1 else ' has'} eval results or "
                f"preference pairs (candidate {', '.join(map(str, used))}): removing would "
                "erase them, so they stay"
            )
        removed = [tasks[i] for i in ids]
        BehaviourTask.objects.filter(pk__in=[t.pk for t in removed]).delete()
        if removed:
            audit_event_record(
                actor=user,
                verb="behaviour.tasks_remove",
                target=behaviour,
                before=None,
                after={"removed": {str(t.candidate_id): t.split for t in removed}},
            )
    return removed


def behaviour_check_only_set(
    *, user: AbstractBaseUser, behaviour_id: int, allow: bool
) -> Behaviour:
    """Let the behaviour's exports and gates use check-only tasks (graded by their recorded
    check alone), or stop them; audited."""
    return _opt_in(user, behaviour_id, "allow_check_only", allow, "behaviour.check_only")


def behaviour_unreviewed_set(
    *, user: AbstractBaseUser, behaviour_id: int, allow: bool
) -> Behaviour:
    """Let the behaviour's exports, pairs and gates use tasks not yet accepted on the review
    desk (pending or disputed; rejected and needs-fix ones never), or stop them; audited, and
    every export's manifest says which it was."""
    return _opt_in(user, behaviour_id, "allow_unreviewed", allow, "behaviour.unreviewed")


def behaviour_reward_preferences_set(
    *, user: AbstractBaseUser, behaviour_id: int, allow: bool
) -> Behaviour:
    """Let the behaviour's DPO exports take an unlabelled pair's side from its verified reward,
    or stop them (people's labels decide wherever people labelled, either way); audited."""
    return _opt_in(user, behaviour_id, "reward_preferences", allow, "behaviour.reward_preferences")


def _opt_in(
    user: AbstractBaseUser, behaviour_id: int, field: str, allow: bool, verb: str
) -> Behaviour:
    require(user, EDIT_BEHAVIOUR, "choose which tasks a behaviour trains on")
    with transaction.atomic():
        behaviour = _locked(behaviour_id)
        before = getattr(behaviour, field)
        if before != allow:
            Behaviour.objects.filter(pk=behaviour.pk).update(**{field: allow})
            setattr(behaviour, field, allow)
            audit_event_record(
                actor=user,
                verb=verb,
                target=behaviour,
                before={field: before},
                after={field: allow},
            )
    return behaviour


def _locked(behaviour_id: int) -> Behaviour:
    try:
        return Behaviour.objects.select_for_update().get(pk=behaviour_id)
    except Behaviour.DoesNotExist:
        raise NotFound(f"behaviour {behaviour_id} does not exist") from None


def _who(user: AbstractBaseUser | None) -> Any:
    return user if user is not None and user.is_authenticated else None
