from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TrajectoriesConfig(AppConfig):
    name = "trajectories"
    verbose_name = "Trajectories"

    def ready(self) -> None:
        from groundwork.access.roles import grant
        from groundwork.jobs.redelivery import on_migrate

        from .roles import GRANTS

        grant(self.label, GRANTS)
        # The schedule of the sweep that queues lost replays again.
        post_migrate.connect(
            on_migrate("trajectories.tasks.redeliver_job", self.name),
            sender=self,
            dispatch_uid="traj2env-redeliver-trajectories",
            weak=False,
        )
