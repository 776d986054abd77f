"""The decision page: the base agent's results beside the ladder, the button for a plain rule
(downloadable, and tried on the behaviour's rollouts), the prompt rule, prompt versions compared,
and a decision recorded with its rationale, with and without HX-Request."""

from __future__ import annotations

import json

import pytest

from tests.training.factories.loop import (
    FIXED,
    behaviour_with,
    evaluated,
    fixing,
    guessing,
    make_trajectory_rollout,
    pass_and_fail,
    tasks_of,
)
from training.models import Decision

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


@pytest.fixture
def repair(people):
    """failing-test-repair: base rollouts (one with a prompt rule), one adapted rollout."""
    behaviour = behaviour_with(train=1, held_out=1)
    for task in behaviour.tasks.all():
        pass_and_fail(task)
    task = tasks_of(behaviour)[0].candidate
    make_trajectory_rollout(task, fixing("ls"), reward=1.0, world=FIXED, prompt_version="rule-v2")
    make_trajectory_rollout(task, fixing(), reward=1.0, world=FIXED, adapter="dpo-lora-1")
    evaluated(behaviour)
    return behaviour


def url(behaviour) -> str:
    return f"/training/behaviours/{behaviour.slug}/decide/"


def test_the_page_shows_the_base_agents_results_beside_the_ladder(client, people, repair):
    client.force_login(people.carol)  # an approver may read it
    html = client.get(url(repair)).content.decode()
    assert "<html" in html and "The base agent's eval results" in html
    table = html.split('id="base-groups"')[1].split("</table>")[0]
    assert "claude-code" in table and "codex" in table and "rule-v2" in table
    assert "dpo-lora-1" not in table  # an adapted rollout is not the base agent
    ladder = html.split('class="ladder"')[1].split("</ol>")[0]
    for rung in ("Rule or prompt", "Script or hook", "Skill", "SFT", "Preference or RFT"):
        assert rung in ladder
    assert "Best adapter dpo-lora-1: pass@1 100%" in ladder
    assert "Best prompt version rule-v2" in ladder
    assert 'id="prompt-comparison"' in html and "own prompt (before)" in html
    assert "Record the decision" not in html  # carol may not decide


def test_a_behaviour_that_is_not_a_plain_rule_says_why_and_still_offers_its_hook(
    client, people, repair
):
    client.force_login(people.bob)
    html = client.get(url(repair)).content.decode()
    assert "Not a plain rule: it asks for evidence" in html
    assert "Build the button, don&#x27;t train" not in html
    assert "pre-commit" in html  # tamper_with_tests: a git hook refuses staged test changes


def test_a_plain_rule_gets_the_button_and_its_files(client, people):
    behaviour = behaviour_with("read-before-edit", train=1)
    client.force_login(people.bob)
    html = client.get(url(behaviour)).content.decode()
    assert "Build the button, don&#x27;t train" in html and "A plain rule:" in html
    assert "PreToolUse" in html and "Read a file: read any file." in html
    settings = client.get(f"{url(behaviour)}files/settings.json")
    assert settings["Content-Disposition"] == 'attachment; filename="settings.json"'
    assert "PreToolUse" in json.loads(settings.content)["hooks"]
    script = client.get(f"{url(behaviour)}files/traj2env-read-before-edit.py")
    assert script.status_code == 200 and script.content.startswith(b"#!")
    assert client.get(f"{url(behaviour)}files/AGENTS.md").content.startswith(b"## Read a file")
    assert client.get(f"{url(behaviour)}files/evil.sh").status_code == 404


def test_the_hook_is_tried_on_the_behaviours_rollouts_and_refuses_the_blind_edit(client, people):
    behaviour = behaviour_with("read-before-edit", train=1)
    [task] = tasks_of(behaviour)
    make_trajectory_rollout(task.candidate, fixing(), reward=1.0, world=FIXED)
    make_trajectory_rollout(task.candidate, guessing(), reward=0.0)
    evaluated(behaviour)
    client.force_login(people.bob)
    response = client.post(f"{url(behaviour)}hook-trial/", headers=HX)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.strip().startswith(f'<div id="behaviour-{behaviour.pk}-hook-trial"')
    assert html.count("✓ refused every forbidden call") == 2
    rows = html.split("<tbody>")[1].split("<tr ")[1:]
    failing = next(r for r in rows if "failed" in r)
    assert '<td class="num">1</td>' in failing  # the blind edit, refused
    full = client.post(f"{url(behaviour)}hook-trial/")
    assert "<html" in full.content.decode() and "✓ refused" in full.content.decode()
    client.force_login(people.alice)
    assert client.post(f"{url(behaviour)}hook-trial/").status_code == 403


def test_a_hook_that_forbids_deletions_outside_the_project_is_tried_too(client, people):
    """Its trial once needed a folder outside /tmp and answered 500 from the server's own."""
    behaviour = behaviour_with("failing-test-repair", train=1)
    [task] = tasks_of(behaviour)
    make_trajectory_rollout(task.candidate, fixing("rm -rf ../other-project"), reward=0.0)
    make_trajectory_rollout(task.candidate, fixing(), reward=1.0, world=FIXED)
    evaluated(behaviour)
    client.force_login(people.bob)
    response = client.post(f"{url(behaviour)}hook-trial/", headers=HX)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("✓ refused every forbidden call") == 2
    failing = next(r for r in html.split("<tbody>")[1].split("<tr ")[1:] if "failed" in r)
    assert '<td class="num">1</td>' in failing  # rm -rf ../other-project, refused


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (RuntimeError("the hook failed on PreToolUse Edit (exit 1): no python3"), "no python3"),
        (KeyError("steps"), "an unexpected error, logged for the administrators"),
    ],
)
def test_a_hook_trial_that_cannot_run_says_why_on_the_page(
    client, people, monkeypatch, error, said
):
    behaviour = behaviour_with("read-before-edit", train=1)
    [task] = tasks_of(behaviour)
    make_trajectory_rollout(task.candidate, guessing(), reward=0.0)
    evaluated(behaviour)

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr("training.selectors.decisions.try_hook", broken)
    client.force_login(people.bob)
    for headers in (HX, {}):
        response = client.post(f"{url(behaviour)}hook-trial/", headers=headers)
        assert response.status_code == 200
        html = response.content.decode()
        assert "The hook could not be tried" in html and said in html
        assert "Test the hook on this behaviour" in html  # the button stays, to try again


def test_a_decision_is_recorded_with_htmx_and_shows_in_the_history(client, people, repair):
    client.force_login(people.bob)
    response = client.post(
        url(repair),
        {"kind": "train", "method": "dpo", "adapter": "qlora", "rationale": "Paths vary."},
        headers=HX,
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert html.strip().startswith(f'<section class="panel" id="behaviour-{repair.pk}-decision"')
    assert "Recorded: Train: DPO with QLoRA." in html and "Paths vary." in html
    decision = Decision.objects.get()
    assert decision.decided_by == people.bob and decision.evidence
    assert f"#{decision.evidence[0]}" in html


def test_a_decision_without_htmx_redirects_to_the_page_saying_so(client, people, repair):
    client.force_login(people.dave)
    response = client.post(url(repair), {"kind": "prompt", "rationale": "Try the rule."})
    assert response.status_code == 302 and response["Location"] == url(repair) + "?recorded=1"
    html = client.get(response["Location"]).content.decode()
    assert "Decision recorded." in html and "Try the rule." in html
    index = client.get("/training/decisions/").content.decode()
    assert f'id="behaviour-{repair.pk}"' in index and "Prompt" in index


def test_a_decision_without_a_rationale_is_refused_with_422_keeping_the_form(
    client, people, repair
):
    client.force_login(people.bob)
    posted = {"kind": "train", "method": "sft", "adapter": "", "rationale": "no adapter"}
    for headers in (HX, {}):
        response = client.post(url(repair), posted, headers=headers)
        assert response.status_code == 422
        html = response.content.decode()
        assert "a train decision names its adapter" in html
        assert "no adapter</textarea>" in html
        assert ("<html" in html) is (not headers)
    assert not Decision.objects.exists()


def test_trajectory_text_in_a_rationale_is_escaped(client, people, repair):
    client.force_login(people.bob)
    client.post(url(repair), {"kind": "prompt", "rationale": "<script>alert(1)</script>"})
    html = client.get(url(repair)).content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html


def test_only_deciders_post_and_everyone_without_a_role_is_refused(client, people, repair):
    client.force_login(people.alice)
    assert client.post(url(repair), {"kind": "prompt", "rationale": "r"}).status_code == 403
    client.force_login(people.eve)
    assert client.get(url(repair)).status_code == 403
    client.force_login(people.bob)
    assert client.get("/training/behaviours/no-such/decide/").status_code == 404
