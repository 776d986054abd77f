"""The README's "The loop from the terminal" block, run as written, in order, in the test
database: each line a command the reader can paste, each exiting 0. The README cannot drift
from the commands.

What the block assumes (kept `repair` tasks and their graded rollouts, from `generate`,
`harbor run` and `rollouts_import`, which need Docker) is made by factories first: one train
task with two passing rollouts a labeller can compare, two held-out tasks with rollouts of the
base model and of the adapter the block registers, and the people `bob` and `carol`.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from groundwork.models import AuditEvent
from tasks_review.models import Candidate
from tests.training.factories import loop_candidate
from tests.training.factories.deploy import rollouts
from tests.training.factories.loop import FIXED, fixing, make_trajectory_rollout
from training.core.stats import split_of
from training.models import Adapter, Behaviour, Deployment, PreferencePair, TrainingPlan

pytestmark = pytest.mark.django_db

README = Path(__file__).resolve().parents[3] / "README.md"
SECTION = "### The loop from the terminal"
MANAGE = [".venv/bin/python", "manage.py"]
BASE_MODEL = "Qwen/Qwen2.5-Coder-7B-Instruct"
SERVED = "failing-test-repair-lora-v1.0"  # what the block's adapter_register serves it as
HELD_OUT_FRACTION = Behaviour._meta.get_field("held_out_fraction").default


def readme_commands() -> list[list[str]]:
    """The argv of each command in the section's first ``sh`` block (continuations joined,
    comments dropped)."""
    text = README.read_text()
    section = text[text.index(SECTION) :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, f"no sh block under {SECTION!r}"
    lines = block.group(1).replace("\\\n", " ").splitlines()
    return [argv for argv in (shlex.split(line, comments=True) for line in lines) if argv]


def kept_tasks() -> tuple[list[Candidate], list[Candidate]]:
    """One train and two held-out kept, accepted repair tasks of failing-test-repair (by its
    split hash at the catalogue's held-out fraction); other candidates made on the way are not
    kept."""
    train: list[Candidate] = []
    held_out: list[Candidate] = []
    while len(train) < 1 or len(held_out) < 2:
        candidate = loop_candidate()  # accepted on the desk, as the block assumes
        split = split_of(candidate.key, "failing-test-repair", HELD_OUT_FRACTION)
        side = train if split == "train" else held_out
        if len(side) < (1 if side is train else 2):
            side.append(candidate)
        else:
            Candidate.objects.filter(pk=candidate.pk).update(status=Candidate.Status.WRITTEN)
    return train, held_out


@pytest.fixture
def world(people, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the block writes exports/, plans/ and serving/ where it runs
    train, held_out = kept_tasks()
    for task in train:
        make_trajectory_rollout(task, fixing(), reward=1.0, world=FIXED, model=BASE_MODEL)
        make_trajectory_rollout(task, fixing("ls src"), reward=1.0, world=FIXED, model=BASE_MODEL)
    rollouts(held_out, "repaired", model=BASE_MODEL, each=3)
    # Served as the gate counts it: the serving side recorded the registered weights' digest.
    digest = next(
        argv[argv.index("--artifact-sha256") + 1]
        for argv in readme_commands()
        if "--artifact-sha256" in argv
    )
    rollouts(held_out, "repaired", adapter=SERVED, model=BASE_MODEL, each=3, served_sha256=digest)
    return tmp_path


def test_the_section_is_commands_of_this_checkout():
    commands = readme_commands()
    assert len(commands) >= 10
    for argv in commands:
        assert argv[:2] == MANAGE, shlex.join(argv)


def test_the_loop_from_the_terminal_runs_as_written(manage, world):
    for argv in readme_commands():
        ran = manage(argv[2], *argv[3:])
        assert ran.code == 0, f"{shlex.join(argv)}\nexit {ran.code}\n{ran.out}{ran.err}"
        if "--json" in argv:
            json.loads(ran.out)
    behaviour = Behaviour.objects.get(slug="failing-test-repair")
    assert behaviour.tasks.count() == 3 and PreferencePair.objects.count() == 1
    assert TrainingPlan.objects.get().created_by.username == "bob"
    assert (world / "plans/repair-sft/plan.yaml").exists()
    assert SERVED in (world / "serving/litellm.yaml").read_text()
    adapter = Adapter.objects.get()
    assert adapter.key == "failing-test-repair-lora@1.0"
    deployment = Deployment.objects.get()
    assert deployment.state == Deployment.State.KILLED and deployment.proposed_by.username == "bob"
    approval = AuditEvent.objects.get(verb="deployment.approve")
    assert approval.actor.username == "carol"
