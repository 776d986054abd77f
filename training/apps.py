from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TrainingConfig(AppConfig):
    name = "training"
    verbose_name = "Training loop"

    def ready(self) -> None:
        from groundwork.access.roles import grant
        from groundwork.jobs.redelivery import on_migrate

        from .roles import GRANTS

        grant(self.label, GRANTS)
        # The schedule of the sweep that queues the jobs a broker lost again.
        post_migrate.connect(
            on_migrate("training.tasks.redeliver_job", self.name),
            sender=self,
            dispatch_uid="traj2env-redeliver-training",
            weak=False,
        )
