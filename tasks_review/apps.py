from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TasksReviewConfig(AppConfig):
    name = "tasks_review"
    verbose_name = "Tasks and review"

    def ready(self) -> None:
        from django_q.signals import post_spawn

        from .roles import sync_role_permissions
        from .tasks import docker_worker_started

        # Runs after every app's post_migrate handlers have had a chance to create permissions,
        # because tasks_review is listed after trajectories in INSTALLED_APPS.
        post_migrate.connect(sync_role_permissions, sender=self, dispatch_uid="traj2env-roles")
        # Every django-q2 worker process, as it starts (and when respawned after a death).
        post_spawn.connect(docker_worker_started, dispatch_uid="traj2env-docker-worker-started")
        # The schedule of the sweep that queues the jobs a broker lost again.
        from groundwork.jobs.redelivery import on_migrate

        post_migrate.connect(
            on_migrate("tasks_review.tasks.redeliver_job", self.name),
            sender=self,
            dispatch_uid="traj2env-redeliver-tasks_review",
            weak=False,
        )
