from django.apps import AppConfig, apps
from django.db.models.signals import post_migrate


class GroundworkConfig(AppConfig):
    name = "groundwork"
    verbose_name = "Groundwork"

    def ready(self) -> None:
        from django_q.signals import post_spawn

        from .jobs.containers import docker_worker_started

        post_migrate.connect(_roles_synced, dispatch_uid="traj2env-roles")
        # Every django-q2 worker process, as it starts (and when respawned after a death).
        post_spawn.connect(docker_worker_started, dispatch_uid="traj2env-docker-worker-started")


def _roles_synced(sender: AppConfig, **_: object) -> None:
    """After every app's post_migrate, so that every app's permissions exist by then: migrate
    signals each installed app with models in turn, the last one last."""
    from .access.roles import sync_role_permissions

    last = [config for config in apps.get_app_configs() if config.models_module is not None][-1]
    if sender is last:
        sync_role_permissions()
