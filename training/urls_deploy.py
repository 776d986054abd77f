"""Adapters and deployments, and the API serving infrastructure calls.

The project includes the pages at ``training/`` and ``api`` (a second namespace) at ``api/v1/``:

    path("training/", include("training.urls_deploy")),
    path("api/v1/", include(training.urls_deploy.api)),
"""

from django.urls import path

from .views import api as api_views
from .views import deploy

app_name = "deploy"

urlpatterns = [
    path("deployments/", deploy.deployment_list, name="deployments"),
    path("deployments/<int:pk>/", deploy.deployment_detail, name="deployment"),
    path("deployments/<int:pk>/approve/", deploy.deployment_approve, name="approve"),
    path("deployments/<int:pk>/activate/", deploy.deployment_activate, name="activate"),
    path("deployments/<int:pk>/drill/", deploy.deployment_drill, name="drill"),
    path("deployments/<int:pk>/percentage/", deploy.deployment_percentage, name="percentage"),
    path("deployments/<int:pk>/kill/", deploy.deployment_kill, name="kill"),
    path("deployments/<int:pk>/rollback/", deploy.deployment_rollback, name="rollback"),
    path("deployments/<int:pk>/retire/", deploy.deployment_retire, name="retire"),
    path("adapters/", deploy.adapter_list, name="adapters"),
    path("adapters/new/", deploy.adapter_new, name="adapter_new"),
    path("adapters/<int:pk>/", deploy.adapter_detail, name="adapter"),
    path("adapters/<int:pk>/propose/", deploy.adapter_propose, name="propose"),
    path("serving/", deploy.serving_page, name="serving"),
    path("serving/litellm.yaml", deploy.serving_download, {"kind": "litellm"}, name="litellm"),
    path("serving/vllm.sh", deploy.serving_download, {"kind": "vllm"}, name="vllm"),
    path("api-clients/", deploy.api_clients, name="api_clients"),
    path("api-clients/<int:pk>/revoke/", deploy.api_client_revoke_view, name="api_client_revoke"),
]

api = (
    [
        path("route", api_views.route, name="route"),
        path("usage", api_views.usage, name="usage"),
        path("deployments/<int:pk>/kill", api_views.kill, name="kill"),
    ],
    "api",
)
