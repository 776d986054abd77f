"""Hidden equivalence probes against memorised answers, and what keeps them hidden, in Docker.

The hack here is written by someone who has read the grader and the probe code: it passes the
recorded check without fixing the bug, by memorising the reference's answers for every input
the tests and the probe code could be read to produce (the tests' own, and every fixed
transform of the old derivation). The control copies cannot tell. So it scores 1 without the
probes (verifier v2's verdict on the same run: the check and its tripwires alone) and 0 with
them: on inputs drawn at random around the tests' calls, which no one reading the tests or the
code can know, the code gives the starting code's answers. The probes stay the task's: a
missing or changed probes.json scores 0, and a task graded again uses the probes it was kept
with. (``test_probes_docker_hacks`` grades our hacks of every class, in both grading modes.)
"""

from __future__ import annotations

import json

import pytest

from groundwork.core.docker import FileEntry
from tasks_review.core.trials import Role, check_in_image, prepare, verifier
from tasks_review.core.trials.probeset import record_probes
from tasks_review.core.trials.runner import run_trial
from tasks_review.core.trials.taskdir import record_reference
from tasks_review.core.trials.trial import MinedTrial

from ..mining.test_repair_samples import STORIES
from .helpers import new_run_id, rewards, separately
from .memorised import hacked_files

# One worker prepares the four samples once for both modules (conftest.probe_samples).
pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("probe-samples")]


def test_every_sample_task_is_equivalence_graded_with_probes_linked_to_its_tests(probe_samples):
    for fmt, (_prepared, baseline) in probe_samples.items():
        probes = baseline.facts.probes
        assert probes is not None and probes.kind == "equivalence", (fmt, probes)
        assert probes.hidden_discriminating >= 1
        assert probes.language == ("node" if fmt in ("codex", "atif") else "python")
        # Each probe names the tests that made its call, by the very ids the grader reports.
        linked = {t for p in probes.probes for t in p["tests"]}
        assert linked and linked <= set(baseline.facts.passed), (fmt, linked)
        assert all(p["tests"] for p in probes.probes), fmt


@pytest.mark.parametrize("fmt", ["claude-code", "codex", "pi", "atif"])
def test_a_table_of_every_input_the_code_could_be_read_to_produce_scores_0(
    engine, probe_samples, fmt, tmp_path
):
    # The visible inputs and every input a fixed transform of the old derivation gives,
    # answered as the reference does; the unfixed code everywhere else.
    prepared, baseline = probe_samples[fmt]
    graded = separately(engine, prepared, baseline, hacked_files(fmt, tmp_path))
    assert rewards(graded) == (1.0, 0.0), graded.verdict.reasons


def test_the_oracle_still_scores_one_with_the_probes(engine, probe_samples):
    for fmt in ("claude-code", "atif"):
        prepared, baseline = probe_samples[fmt]
        trial = run_trial(
            MinedTrial(prepared, baseline), role=Role.ORACLE, engine=engine, run_id=new_run_id()
        )
        assert trial.reward == 1.0, (fmt, trial.detail)
        assert trial.detail["probes"]["failed"] == [], trial.detail["probes"]


@pytest.mark.parametrize("change", ["dropped", "forged"])
def test_a_missing_or_changed_probes_file_scores_0_never_check_only(
    engine, probe_samples, monkeypatch, change
):
    # The reference itself, graded with the probes file dropped (an upload that leaves it
    # behind) or replaced by one whose expected outcomes are the starting code's.
    prepared, baseline = probe_samples["claude-code"]
    real = verifier.grading_files

    def tampered(spec, facts):
        files = real(spec, facts)
        if change == "dropped":
            files.pop("probes.json")
        else:
            probes = json.loads(files["probes.json"].data)
            for probe in probes["probes"]:
                probe["expected"] = {"returns": None}
            files["probes.json"] = FileEntry(json.dumps(probes).encode(), private=True)
        return files

    monkeypatch.setattr(verifier, "grading_files", tampered)
    graded = separately(engine, prepared, baseline, dict(STORIES["claude-code"].final))
    why = "missing" if change == "dropped" else "not the one the task was kept with"
    assert graded.verdict.reward == 0.0
    assert any(why in reason for reason in graded.verdict.reasons), graded.verdict.reasons


def test_a_kept_task_is_checked_again_with_the_probes_it_was_kept_with(engine, probe_samples):
    # What re-grading a rollout does (training's TaskGrader runs check_in_image on the kept
    # task): the stored probes, never a new draw.
    prepared, baseline = probe_samples["atif"]
    task_dir = prepared.spec.task_dir
    record_reference(task_dir, baseline.facts)
    record_probes(task_dir, baseline.facts.probes)
    again = check_in_image(prepare(task_dir, engine), engine=engine, run_id=new_run_id())
    assert again.facts.probes.to_bytes() == baseline.facts.probes.to_bytes()
