from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TrainingConfig(AppConfig):
    name = "training"
    verbose_name = "Training loop"

    def ready(self) -> None:
        from tasks_review.roles import sync_role_permissions

        # training comes after tasks_review in INSTALLED_APPS, so its permissions exist only
        # once its own post_migrate has run: sync the roles again then.
        post_migrate.connect(
            sync_role_permissions, sender=self, dispatch_uid="traj2env-roles-training"
        )
        # The schedule of the sweep that queues the jobs a broker lost again.
        from groundwork.jobs.redelivery import on_migrate

        post_migrate.connect(
            on_migrate("training.tasks.redeliver_job", self.name),
            sender=self,
            dispatch_uid="traj2env-redeliver-training",
            weak=False,
        )
