from django.urls import path

from .views import authored, behaviours, evals, rollouts

app_name = "training"

urlpatterns = [
    path("", behaviours.behaviour_list),
    path("behaviours/", behaviours.behaviour_list, name="behaviours"),
    path("behaviours/seed/", behaviours.behaviour_seed, name="seed"),
    path("behaviours/new/", behaviours.behaviour_new, name="behaviour_new"),
    path("behaviours/<slug:slug>/", behaviours.behaviour_detail, name="behaviour"),
    path("behaviours/<slug:slug>/edit/", behaviours.behaviour_edit, name="behaviour_edit"),
    path("behaviours/<slug:slug>/tasks/", behaviours.behaviour_tasks_add, name="tasks_add"),
    path("behaviours/<slug:slug>/evals/", behaviours.behaviour_eval_start, name="eval_start"),
    path(
        "behaviours/<slug:slug>/check-only/",
        behaviours.behaviour_check_only,
        name="check_only",
    ),
    path(
        "behaviours/<slug:slug>/unreviewed/",
        behaviours.behaviour_unreviewed,
        name="unreviewed",
    ),
    path(
        "behaviours/<slug:slug>/reward-preferences/",
        behaviours.behaviour_reward_preferences,
        name="reward_preferences",
    ),
    path(
        "behaviours/<slug:slug>/authored/",
        behaviours.behaviour_authored_import,
        name="authored_import",
    ),
    path("authored/<int:pk>/", authored.authored_task_detail, name="authored_task"),
    path("authored/<int:pk>/retry/", authored.authored_task_retry, name="authored_retry"),
    path("evals/<int:pk>/", evals.eval_run_detail, name="eval"),
    path("results/<int:pk>/", evals.result_detail, name="result"),
    path("rollouts/", rollouts.rollout_list, name="rollouts"),
    path("rollouts/import/", rollouts.rollout_import, name="rollout_import"),
    path("rollouts/imports/<int:pk>/", rollouts.import_detail, name="import"),
    path("rollouts/<int:pk>/regrade/", rollouts.rollout_regrade, name="regrade"),
]
