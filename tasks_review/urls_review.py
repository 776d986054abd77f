from django.urls import path

from .views import review

app_name = "review"

urlpatterns = [
    path("", review.queue, name="queue"),
    path("next/", review.next_candidate, name="next"),
    path("candidates/<int:pk>/", review.candidate_detail, name="candidate"),
    path("candidates/<int:pk>/hold/", review.hold, name="hold"),
    path("candidates/<int:pk>/decide/", review.decide, name="decide"),
    path("candidates/<int:pk>/adjudicate/", review.adjudicate, name="adjudicate"),
    path("candidates/<int:pk>/release/", review.release, name="release"),
    path(
        "candidates/<int:pk>/trials/<int:trial_pk>/logs/",
        review.trial_logs,
        name="trial_logs",
    ),
    path(
        "candidates/<int:pk>/trials/<int:trial_pk>/logs/more/",
        review.trial_logs_more,
        name="trial_logs_more",
    ),
    path("disputes/", review.disputes, name="disputes"),
    path("agreement/", review.agreement, name="agreement"),
    path("audit/", review.audit, name="audit"),
    path("exports/", review.exports, name="exports"),
    path("exports/<int:pk>/", review.export_detail, name="export"),
    path("exports/<int:pk>/manifest.json", review.export_manifest, name="export_manifest"),
]
