from django.urls import path

from .views import detail, lists, stepper

app_name = "trajectories"

urlpatterns = [
    path("", lists.trajectory_list, name="list"),
    path("<int:pk>/", detail.trajectory_detail, name="detail"),
    path("<int:pk>/steps/<int:index>/", stepper.step_view, name="step"),
    path("<int:pk>/steps/<int:index>/file/", stepper.file_view, name="step_file"),
    path("<int:pk>/steps/<int:index>/more/", stepper.more_view, name="step_more"),
    path("<int:pk>/steps/<int:index>/tree/", stepper.tree_view, name="step_tree"),
    path("<int:pk>/steps/<int:index>/calls/", stepper.calls_view, name="step_calls"),
]
