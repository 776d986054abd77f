"""Queueing a job after commit, on the cluster of its kind of work; running it while its row exists.

    enqueue_on_commit("training.tasks.eval_run_job", run.pk, group="eval")
    enqueue_on_commit("tasks_review.tasks.pipeline_run_job", run.pk, queue=DOCKER, group="pipeline")

    def eval_run_job(run_id: int) -> str:
        return unless_gone(EvalRun, run_id, lambda: ...)

Two queues, each a django-q2 cluster of its own, so that a long trial matrix never delays a
replay: ``DEFAULT`` (light work: replays, imports, exports; the cluster named in Q_CLUSTER) and
``DOCKER`` (images, trial matrices, grading; ``settings.Q_DOCKER_CLUSTER``). This is the only
module that imports django-q2's ``async_task``; in each app, only ``tasks.py`` calls it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

from django.conf import settings
from django.db import models, transaction
from django_q.tasks import async_task

from . import DEFAULT, DOCKER

log = logging.getLogger(__name__)


def cluster(queue: str = DEFAULT) -> str:
    """The django-q2 cluster that runs ``queue``'s jobs."""
    return settings.Q_DOCKER_CLUSTER if queue == DOCKER else settings.Q_CLUSTER["name"]


def job_limit(queue: str = DEFAULT) -> int:
    """The job time limit of ``queue``, in seconds: django-q2 stops a job there."""
    if queue == DOCKER:
        return int(settings.Q_CLUSTER["ALT_CLUSTERS"][settings.Q_DOCKER_CLUSTER]["timeout"])
    return int(settings.Q_CLUSTER["timeout"])


def enqueue_on_commit(func: str, *args: object, queue: str = DEFAULT, **options: object) -> None:
    """Queue ``func(*args)`` once the transaction commits: a worker that starts first must find
    the rows. The cluster is named, because a job enqueued from a worker would otherwise go to
    that worker's own."""
    transaction.on_commit(partial(async_task, func, *args, cluster=cluster(queue), **options))


def unless_gone(model: type[models.Model], row_id: int, job: Callable[[], str]) -> str:
    """``job()``, or a line saying the job's row is gone when it was deleted before or while
    the job ran: retrying a job whose row is gone cannot succeed."""
    what = f"{model._meta.verbose_name} {row_id}"
    if not model._default_manager.filter(pk=row_id).exists():
        log.info("%s is gone; nothing to do", what)
        return f"{what} is gone"
    try:
        return job()
    except Exception:
        if model._default_manager.filter(pk=row_id).exists():
            raise
        log.warning("%s was deleted while its job ran", what, exc_info=True)
        return f"{what} was deleted while its job ran"
