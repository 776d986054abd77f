"""The stepper shows no secret: planted in the user's text, a tool's output, a written file and
a tool's short arguments, each is replaced on the step page, the file view and every "show more"
slice, with a note saying how many; the stored trajectory keeps them, and normal text is shown
as it was."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.trajectories.planted import (
    CONFIG_FILE,
    ENV_FILE,
    GITHUB_TOKEN,
    USER_TEXT,
    leaked,
)
from tests.trajectories.test_replay_reads import stored
from trajectories.core.replay.synthetic import AtifBuilder
from trajectories.models import Step, Trajectory

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}

USER, ENV, WRITE, LOG, FETCH = range(5)
EDGE = 10_000 - 20  # the token in the log starts 20 characters before the page's cut


@pytest.fixture
def leaky() -> Trajectory:
    b = AtifBuilder("claude-code", root="/repo")
    b.user(USER_TEXT)
    b.call("Bash", {"command": "cat .env"}, ENV_FILE)
    b.call("Write", {"file_path": "/repo/app/config.py", "content": CONFIG_FILE}, "ok")
    b.call("Bash", {"command": "cat build.log"}, "x" * EDGE + " " + GITHUB_TOKEN + " done\n")
    b.call("Fetch", {"url": "https://ci.example.com", "remote": GITHUB_TOKEN, "api_key": "s3cr3t"})
    atif, side = b.build()
    return stored(atif, side, root="/repo", title=f"Deploy with {GITHUB_TOKEN}")


def get(client, url: str, **headers) -> str:
    response = client.get(url, **headers)
    assert response.status_code == 200
    return response.content.decode()


def step_url(trajectory: Trajectory, index: int) -> str:
    return reverse("trajectories:step", args=[trajectory.pk, index])


def test_no_step_page_or_fragment_shows_a_planted_secret(as_annotator, leaky):
    for index in range(leaky.steps_count):
        for headers in ({}, HX):
            assert leaked(get(as_annotator, step_url(leaky, index), **headers)) == [], index
    # the rows keep what the session said
    assert GITHUB_TOKEN in Step.objects.get(trajectory=leaky, index=USER).message


def test_the_users_text_says_how_many_secrets_were_redacted_and_keeps_the_rest(as_annotator, leaky):
    body = get(as_annotator, step_url(leaky, USER))
    assert "Deploy the invoice service. Credentials: AWS_ACCESS_KEY_ID=" in body
    assert "[REDACTED:aws_access_key_id]" in body and "[REDACTED:github_token] please." in body
    assert '<span class="redacted-note">3 secrets redacted</span>' in body
    assert "Deploy with [REDACTED:github_token]" in body  # the title too


def test_a_tool_output_is_redacted_and_its_other_lines_kept(as_annotator, leaky):
    body = get(as_annotator, step_url(leaky, ENV))
    assert "REGION=eu-west-1" in body and "[REDACTED:openai_api_key]" in body
    assert '<span class="redacted-note">2 secrets redacted</span>' in body


def test_short_arguments_are_redacted_and_a_secret_named_value_whole(as_annotator, leaky):
    body = get(as_annotator, step_url(leaky, FETCH))
    assert "<code>[REDACTED:github_token]</code>" in body
    assert "<code>[REDACTED:secret_assignment]</code>" in body and "s3cr3t" not in body
    assert "<code>https://ci.example.com</code>" in body


def test_a_written_file_is_redacted_in_its_diff_and_its_file_view(as_annotator, leaky):
    diff = get(as_annotator, step_url(leaky, WRITE))
    assert '<span class="redacted-note">2 secrets redacted</span>' in diff
    url = reverse("trajectories:step_file", args=[leaky.pk, WRITE]) + "?path=app/config.py"
    for headers in ({}, HX):
        body = get(as_annotator, url, **headers)
        assert leaked(body) == []
        assert "eu-west-1" in body and "total" in body and "REDACTED:private_key" in body
        assert '<span class="redacted-note">2 secrets redacted</span>' in body


def test_show_more_cannot_complete_a_secret_cut_at_the_slice_edge(as_annotator, leaky):
    body = get(as_annotator, step_url(leaky, LOG))
    link = re.search(r'hx-get="([^"]+field=call\.0\.out\.0[^"]+)"', body)
    assert link is not None
    more = get(as_annotator, link.group(1).replace("&amp;", "&"), **HX)
    # Sliced raw, the page would end with the token's head and the slice start with its tail.
    assert GITHUB_TOKEN[:8] not in body and GITHUB_TOKEN[-8:] not in more
    assert "[REDACTED:github_to" in body and "ken] done" in more  # the token, cut
    assert "1 secret redacted" in body and "redacted-note" not in more


def test_a_step_page_hides_the_shapes_known_by_their_context(as_annotator):
    # Built from parts: no whole secret is written in this file.
    aws_id, aws_secret = (
        "AKIA" + "Q7ZT3N2XW5RB4LMY",
        "wJa1rXUtnFEMI/K7MDENG/" + "bPxRfiCYzEXAMPLE9a",
    )
    key_lines = [
        "MIIEowIBAAKCAQEAx4Zr9Qp2Lm7Vb3Nc8Hd1Jf6Wg0Ys5Ua2Tk4Re9" + str(n) for n in range(6)
    ]
    key = "\n".join(
        ["-----BEGIN RSA PRIVATE KEY-----", *key_lines, "-----END RSA PRIVATE KEY-----"]
    )
    csv = f"User name,Password,Access key ID,Secret access key\nci,Pw-9x!q2,{aws_id},{aws_secret}\n"
    b = AtifBuilder("claude-code", root="/repo")
    b.user(f"Deploy with key {aws_id} and secret {aws_secret}, db via mysql -uroot -pHunt3r-22")
    b.call("Bash", {"command": "cat ~/credentials.csv"}, csv)
    read = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(key.split("\n"), 1))
    b.call("Read", {"file_path": "/root/.ssh/id_rsa"}, read)
    atif, side = b.build()
    trajectory = stored(atif, side, root="/repo", title="deploy")
    secrets = [aws_id, aws_secret, "Pw-9x!q2", "Hunt3r-22", *(line[:20] for line in key_lines)]
    for index in range(trajectory.steps_count):
        page = get(as_annotator, step_url(trajectory, index))
        assert [s for s in secrets if s in page] == [], index
