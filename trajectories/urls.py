from django.urls import path

from . import stepper, views

app_name = "trajectories"

urlpatterns = [
    path("", views.trajectory_list, name="list"),
    path("<int:pk>/", views.trajectory_detail, name="detail"),
    path("<int:pk>/steps/<int:index>/", stepper.step_view, name="step"),
    path("<int:pk>/steps/<int:index>/file/", stepper.file_view, name="step_file"),
]
