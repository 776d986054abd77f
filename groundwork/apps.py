from django.apps import AppConfig


class GroundworkConfig(AppConfig):
    name = "groundwork"
    verbose_name = "Groundwork"
