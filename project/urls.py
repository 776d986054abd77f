from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

import training.urls_deploy
from project import desk_settings
from project.views import ThrottledLoginView

handler400 = "project.views.bad_request"

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="trajectories:list", permanent=False)),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("settings/", desk_settings.page, name="desk_settings"),
    path("trajectories/", include("trajectories.urls")),
    path("runs/", include("tasks_review.urls")),
    path("review/", include("tasks_review.urls_review")),
    path("training/", include("training.urls")),
    path("training/", include("training.urls_loop")),
    path("training/", include("training.urls_deploy")),
    path("api/v1/", include(training.urls_deploy.api)),
    path("admin/", admin.site.urls),
]
