"""The learning loop's pages under /training/: decisions, preference labelling, training exports
and training plans (namespace ``loop``; the behaviours, evals and rollouts pages are
``training.urls``)."""

from django.urls import path

from .views import decisions, exports, labels, plans

app_name = "loop"

urlpatterns = [
    path("decisions/", decisions.index, name="decisions"),
    path("behaviours/<slug:slug>/decide/", decisions.decide, name="decide"),
    path("behaviours/<slug:slug>/decide/hook-trial/", decisions.hook_trial, name="hook_trial"),
    path(
        "behaviours/<slug:slug>/decide/files/<str:name>",
        decisions.button_file,
        name="button_file",
    ),
    path("labels/", labels.queue, name="labels"),
    path("labels/next/", labels.next_pair, name="next_pair"),
    path("labels/build/<slug:slug>/", labels.build, name="build_pairs"),
    path("labels/pairs/<int:pk>/", labels.pair_detail, name="pair"),
    path("labels/pairs/<int:pk>/more/", labels.pair_more, name="pair_more"),
    path("labels/pairs/<int:pk>/hold/", labels.hold, name="hold"),
    path("labels/pairs/<int:pk>/label/", labels.label, name="label"),
    path("labels/pairs/<int:pk>/skip/", labels.skip, name="skip"),
    path("labels/pairs/<int:pk>/release/", labels.release, name="release"),
    path("exports/", exports.export_list, name="exports"),
    path("exports/<int:pk>/", exports.export_detail, name="export"),
    path("exports/<int:pk>/manifest.json", exports.export_manifest, name="export_manifest"),
    path("exports/<int:pk>/again/", exports.export_again, name="export_again"),
    path("plans/", plans.plan_list, name="plans"),
    path("plans/new/", plans.plan_new, name="plan_new"),
    path("plans/<int:pk>/", plans.plan_detail, name="plan"),
    path("plans/<int:pk>/plan.md", plans.plan_markdown, name="plan_markdown"),
    path("plans/<int:pk>/plan.yaml", plans.plan_config, name="plan_config"),
]
