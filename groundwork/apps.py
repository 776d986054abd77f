from django.apps import AppConfig


class GroundworkConfig(AppConfig):
    name = "groundwork"
    verbose_name = "Groundwork"

    def ready(self) -> None:
        from django_q.signals import post_spawn

        from .jobs.containers import docker_worker_started

        # Every django-q2 worker process, as it starts (and when respawned after a death).
        post_spawn.connect(docker_worker_started, dispatch_uid="traj2env-docker-worker-started")
