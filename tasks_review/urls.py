from django.urls import path

from .views import pipeline

app_name = "runs"

urlpatterns = [
    path("", pipeline.run_list, name="list"),
    path("<int:pk>/", pipeline.run_detail, name="detail"),
    path("<int:pk>/report.json", pipeline.run_report, name="report"),
    path("<int:pk>/rerun/", pipeline.run_rerun, name="rerun"),
    path("<int:pk>/cancel/", pipeline.run_cancel, name="cancel"),
    path("<int:pk>/retry/", pipeline.run_retry, name="retry"),
]
