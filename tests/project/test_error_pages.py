"""404, 403 (a missing role, or a form failing the CSRF check), 405 and 500 are the site's own
pages, with its navigation, not Django's bare text; and the navigation tells an administrator
where people and their roles are managed (Django's admin)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.test import override_settings
from django.urls import include, path, reverse

pytestmark = pytest.mark.django_db

NAV = ('class="mainnav"', ">Trajectories</a>", ">Pipeline runs</a>")


def broken(request):
    raise RuntimeError("a view that breaks")


def forbidden(request):
    raise PermissionDenied


urlpatterns = [
    path("broken/", broken),
    path("forbidden/", forbidden),
    path("", include("project.urls")),
]


def has_navigation(html: str) -> bool:
    return all(part in html for part in NAV) and 'rel="stylesheet"' in html


@override_settings(DEBUG=False, ROOT_URLCONF=__name__)
@pytest.mark.parametrize(
    ("address", "status", "title"),
    [
        ("/trajectories/no-such-page/", 404, "Page not found"),
        ("/forbidden/", 403, "Not allowed"),
        ("/broken/", 500, "Server error"),  # rendered without a request context
    ],
)
def test_an_error_is_the_sites_own_page_with_its_navigation(client, people, address, status, title):
    client.raise_request_exception = False
    client.force_login(people.eve)
    response = client.get(address)
    assert response.status_code == status
    html = response.content.decode()
    assert f"<title>{title} · traj2env</title>" in html and has_navigation(html)
    assert "a view that breaks" not in html  # nothing of an error leaks
    if status == 403:
        assert "ask an administrator" in html


def test_an_administrator_sees_where_people_and_roles_are_managed(client, people):
    admin = User.objects.create_superuser(username="root", password="pw-root")
    client.force_login(admin)
    html = client.get(reverse("trajectories:list")).content.decode()
    assert f'<a href="{reverse("admin:auth_user_changelist")}"' in html and ">People</a>" in html
    client.force_login(people.dave)  # the admin role without a staff account: no admin site
    assert ">People</a>" not in client.get(reverse("trajectories:list")).content.decode()


@override_settings(DEBUG=False)
def test_a_form_failing_the_csrf_check_gets_the_sites_page_saying_what_to_do(people):
    from django.test import Client

    from tests.training.factories import make_behaviour
    from training.models import TrainingExport

    make_behaviour()
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(people.dave)
    response = browser.post(
        "/training/exports/", {"behaviour": "failing-test-repair", "kind": "sft"}
    )
    assert response.status_code == 403
    html = response.content.decode()
    assert "<title>Form expired · traj2env</title>" in html and has_navigation(html)
    assert ">Training</a>" in html  # rendered with the request: the user's own navigation
    assert "reload the page and send the form again" in html
    assert "CSRF verification failed" not in html
    assert not TrainingExport.objects.exists()


@override_settings(DEBUG=False)
@pytest.mark.parametrize("address", ["/review/next/", "/training/labels/next/"])
def test_a_post_only_address_opened_in_the_browser_gets_the_405_page(client, people, address):
    client.force_login(people.dave)
    response = client.get(address)
    assert response.status_code == 405 and "POST" in response["Allow"]
    html = response.content.decode()
    assert "<title>Not a page to open · traj2env</title>" in html and has_navigation(html)
    assert f"<code>{address}</code>" in html


def test_the_apis_405_stays_json(client, people):
    from training.services.deploy_clients import api_client_create

    _client, token = api_client_create(user=people.dave, name="litellm-proxy")
    response = client.post("/api/v1/route", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 405 and response["Content-Type"] == "application/json"


@override_settings(DEBUG=False)
def test_a_form_too_large_to_read_gets_the_400_page_not_djangos_bare_text(client, people):
    from django.conf import settings

    client.raise_request_exception = False
    client.force_login(people.dave)
    body = "rationale=" + "r" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    response = client.post(
        "/training/exports/", body, content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "<title>Bad request · traj2env</title>" in html and has_navigation(html)
    assert "The request could not be read." in html
