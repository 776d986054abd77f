"""What a dead worker left on a Docker engine, removed: when its row is taken over, and when a
docker worker starts.

A job that claims the row of a worker that died (``claiming.claim``'s ``on_reclaim``) removes the
containers that worker left under the row's run id (``dead_run_containers_remove``); a docker
worker, as its process starts, removes those of any dead owner on its own engine
(``docker_worker_started``, connected to django-q2's ``post_spawn`` by ``groundwork.apps``).
"""

from __future__ import annotations

import logging
from contextlib import suppress

from django_q.conf import Conf

from groundwork.core.docker import CleanupReport, Engine, InfraError
from groundwork.core.docker import docker_labels as lbl

from .queue import DOCKER, cluster

log = logging.getLogger(__name__)


def dead_run_containers_remove(
    run_id: str, *, engine: Engine | None = None, include_live: bool = True
) -> None:
    """Remove the containers a dead worker left under ``run_id`` before a new attempt starts
    (an unreachable engine has none to remove). ``include_live`` also removes those whose
    owner looks alive (another host's, or a hung process's)."""
    with suppress(InfraError):
        (engine or Engine.from_env()).cleanup(
            label=lbl.run_filter(run_id), include_live=include_live
        )


def dead_owner_containers_remove(
    *, engine: Engine | None = None, label: str = lbl.RUN
) -> CleanupReport | None:
    """Remove the containers on this worker's own engine whose owner was a process of this
    host that has died (any run's, or ``label``'s); None when the engine does not answer.

    A docker worker does this when its process starts (``docker_worker_started``): the
    reclaim above removes a dead owner's containers only where it can prove the owner dead,
    on its own host, so with several worker hosts a dead worker's sandboxes wait on its host's
    engine until a worker starts there again (its supervisor restarts it, or django-q2
    respawns the process). Why not record the owner's DOCKER_HOST on the row and remove them
    from wherever the reclaim runs: that address is usually ``unix:///var/run/docker.sock``,
    which on any other host names that host's own engine; reaching every other host's engine
    would give each worker root on all of them (Docker access is root) and their TLS keys;
    and a remote reclaimer could not tell a dead owner from a partitioned live one, while the
    owner's own host can (pid and start time, ``docker_labels.owner_alive``)."""
    try:
        return (engine or Engine.from_env()).cleanup(label=label, include_live=False)
    except InfraError as exc:
        log.warning("no leftover containers removed: %s", exc)
        return None


def docker_worker_started(sender: object, proc_name: str, **_: object) -> None:
    """django-q2's ``post_spawn`` in a worker process: a docker worker first removes what dead
    workers of this host left on its engine (``dead_owner_containers_remove`` says why here)."""
    if Conf.CLUSTER_NAME != cluster(DOCKER):
        return
    report = dead_owner_containers_remove()
    if report is not None and report.containers:
        log.info("%s removed %d leftover containers", proc_name, len(report.containers))
