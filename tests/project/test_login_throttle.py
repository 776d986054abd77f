"""Login throttling: repeated wrong passwords for a username, or from one address, are refused
for a cool-off, whatever the password; a success clears the username's count."""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache
from django.urls import reverse


@pytest.fixture(autouse=True)
def throttle(settings, db):
    settings.TRAJ2ENV = {
        **settings.TRAJ2ENV,
        "LOGIN_FAILURES_PER_USER": 5,
        "LOGIN_FAILURES_PER_ADDRESS": 20,
        "LOGIN_WINDOW_SECONDS": 900,
        "LOGIN_COOLOFF_SECONDS": 600,
    }
    cache.clear()
    yield
    cache.clear()


def log_in(client, username, password, address="127.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def logged_in(response) -> bool:
    return response.status_code == 302 and "_auth_user_id" in response.client.session


def test_the_right_password_logs_in(client, people):
    assert logged_in(log_in(client, "alice", "pw-alice"))


def test_thirty_wrong_passwords_then_the_right_one_is_refused_with_429(client, people):
    for _ in range(30):
        log_in(client, "alice", "wrong")
    response = log_in(client, "alice", "pw-alice")
    assert response.status_code == 429
    assert not logged_in(response)
    assert b"Too many failed logins" in response.content


def test_the_refusal_starts_at_the_limit(client, people):
    for _ in range(4):
        assert log_in(client, "alice", "wrong").status_code == 200
    assert log_in(client, "alice", "wrong").status_code == 200
    assert log_in(client, "alice", "pw-alice").status_code == 429


def test_after_the_cool_off_the_right_password_works(client, people, monkeypatch):
    for _ in range(30):
        log_in(client, "alice", "wrong")
    later = time.time() + 601
    monkeypatch.setattr("project.login_throttle.time.time", lambda: later)
    assert logged_in(log_in(client, "alice", "pw-alice"))


def test_before_the_cool_off_ends_the_right_password_is_still_refused(client, people, monkeypatch):
    for _ in range(5):
        log_in(client, "alice", "wrong")
    later = time.time() + 590
    monkeypatch.setattr("project.login_throttle.time.time", lambda: later)
    assert log_in(client, "alice", "pw-alice").status_code == 429


def test_other_users_are_unaffected(client, people):
    for _ in range(30):
        log_in(client, "alice", "wrong")
    assert logged_in(log_in(client, "bob", "pw-bob"))


def test_a_success_resets_the_count(client, people):
    for _ in range(4):
        log_in(client, "alice", "wrong")
    assert logged_in(log_in(client, "alice", "pw-alice"))
    client.logout()
    for _ in range(4):
        log_in(client, "alice", "wrong")
    assert logged_in(log_in(client, "alice", "pw-alice"))


def test_many_usernames_from_one_address_lock_that_address_only(client, people):
    for n in range(20):
        log_in(client, f"guess-{n}", "wrong", address="10.0.0.9")
    assert log_in(client, "bob", "pw-bob", address="10.0.0.9").status_code == 429
    assert logged_in(log_in(client, "bob", "pw-bob", address="10.0.0.10"))


def test_the_login_page_itself_still_shows(client, people):
    for _ in range(30):
        log_in(client, "alice", "wrong")
    assert client.get(reverse("login")).status_code == 200


def test_a_logged_in_user_cannot_clear_anothers_count(client, people):
    for _ in range(4):
        log_in(client, "alice", "wrong")
    client.force_login(people.eve)
    log_in(client, "alice", "anything")
    client.logout()
    log_in(client, "alice", "wrong")
    assert log_in(client, "alice", "pw-alice").status_code == 429


@pytest.mark.parametrize(
    "variant",
    ["alice ", " alice", "alice\t", "\u3000alice", "ａｌｉｃｅ", "ALICE", "Alice"],
    ids=["trailing-space", "leading-space", "tab", "ideographic", "fullwidth", "upper", "title"],
)
def test_spellings_of_a_username_share_its_count(client, people, variant):
    # Django's login form strips and NFKC-normalises the username before matching it, and a
    # case-insensitive backend or collation matches any case: each spelling that could log in
    # as alice counts against alice, and the lock it sets refuses alice herself.
    for _ in range(4):
        log_in(client, "alice", "wrong")
    log_in(client, variant, "wrong")
    assert log_in(client, "alice", "pw-alice").status_code == 429
    assert log_in(client, variant, "pw-alice").status_code == 429


def test_a_lock_on_alice_refuses_her_spelled_otherwise(client, people):
    for _ in range(5):
        log_in(client, "alice", "wrong")
    assert log_in(client, "ａｌｉｃｅ ", "pw-alice").status_code == 429
