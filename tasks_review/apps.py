from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TasksReviewConfig(AppConfig):
    name = "tasks_review"
    verbose_name = "Tasks and review"

    def ready(self) -> None:
        from groundwork.access.roles import grant
        from groundwork.jobs.redelivery import on_migrate

        from .roles import GRANTS

        grant(self.label, GRANTS)
        # The schedule of the sweep that queues the jobs a broker lost again.
        post_migrate.connect(
            on_migrate("tasks_review.tasks.redeliver_job", self.name),
            sender=self,
            dispatch_uid="traj2env-redeliver-tasks_review",
            weak=False,
        )
