"""404, 403 and 500 are the site's own pages, with its navigation, not Django's bare text; and the
navigation tells an administrator where people and their roles are managed (Django's admin)."""

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


@override_settings(DEBUG=False)
def test_an_unknown_address_is_a_404_page_with_the_navigation(client, people):
    client.force_login(people.alice)
    response = client.get("/trajectories/no-such-page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "<title>Page not found · traj2env</title>" in html and has_navigation(html)
    assert "alice" in html  # the usual header, whoever asks


@override_settings(DEBUG=False, ROOT_URLCONF=__name__)
def test_a_refused_page_is_a_403_page_with_the_navigation(client, people):
    client.force_login(people.eve)
    response = client.get("/forbidden/")
    assert response.status_code == 403
    html = response.content.decode()
    assert "<title>Not allowed · traj2env</title>" in html and has_navigation(html)
    assert "roles.py" not in html and "ask an administrator" in html


@override_settings(DEBUG=False, ROOT_URLCONF=__name__)
def test_a_server_error_is_a_500_page_with_the_navigation_and_no_request_context(client, people):
    client.raise_request_exception = False
    client.force_login(people.alice)
    response = client.get("/broken/")
    assert response.status_code == 500
    html = response.content.decode()
    assert "<title>Server error · traj2env</title>" in html and has_navigation(html)
    assert "a view that breaks" not in html  # nothing of the error leaks


def test_an_administrator_sees_where_people_and_roles_are_managed(client, people):
    admin = User.objects.create_superuser(username="root", password="pw-root")
    client.force_login(admin)
    html = client.get(reverse("trajectories:list")).content.decode()
    assert f'<a href="{reverse("admin:auth_user_changelist")}"' in html and ">People</a>" in html
    client.force_login(people.dave)  # the admin role without a staff account: no admin site
    assert ">People</a>" not in client.get(reverse("trajectories:list")).content.decode()
