from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TasksReviewConfig(AppConfig):
    name = "tasks_review"
    verbose_name = "Tasks and review"

    def ready(self) -> None:
        from .roles import sync_role_permissions

        # Runs after every app's post_migrate handlers have had a chance to create permissions,
        # because tasks_review is listed after trajectories in INSTALLED_APPS.
        post_migrate.connect(sync_role_permissions, sender=self, dispatch_uid="traj2env-roles")
        # The schedule of the sweep that queues the jobs a broker lost again.
        from groundwork.jobs.redelivery import on_migrate

        post_migrate.connect(
            on_migrate("tasks_review.tasks.redeliver_job", self.name),
            sender=self,
            dispatch_uid="traj2env-redeliver-tasks_review",
            weak=False,
        )
