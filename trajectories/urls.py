from django.urls import path

from . import views

app_name = "trajectories"

urlpatterns = [
    path("", views.trajectory_list, name="list"),
    path("<int:pk>/", views.trajectory_detail, name="detail"),
]
