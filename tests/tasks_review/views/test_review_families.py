"""What the desk and the run page show of build, extend and qa candidates: the family, the hidden
tests (and the test ids once verified), the question and its answer, the LLM's cost; with and
without HX-Request."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from tasks_review.models import Candidate, PipelineRun
from tests.tasks_review.factories import make_candidate

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}
QA_FACTS = {
    "question": "How many orders in sales.csv have an amount over 100?",
    "expected": {"type": "numeric", "value": "3", "tolerance": 0.5},
    "answer_file": "answer.txt",
    "inputs": ["sales.csv"],
    "reported": "There are 3 orders over $100.",
}
BUILD_FACTS = {
    "hidden_tests": ["tests/test_shapes.py"],
    "interface": ["shapes.py: circle_area, rectangle_area"],
    "reward": "fraction",
}


def test_the_desk_shows_a_qa_candidates_question_and_expected_answer(as_annotator):
    c = make_candidate(family="qa", payload={"family_facts": QA_FACTS})
    for headers in ({}, HX):
        html = as_annotator.get(f"/review/candidates/{c.pk}/", headers=headers).content.decode()
        assert ("<html" in html) is (not headers)
        panel = html[html.index(f'id="family-{c.pk}"') :]
        panel = panel[: panel.index("</section>")]
        assert "Question and answer" in panel and QA_FACTS["question"] in panel
        assert '<pre class="answer">3</pre>' in panel and "numeric" in panel and "± 0.5" in panel
        assert "<code>sales.csv</code>" in panel and "There are 3 orders" in panel


def test_the_desk_shows_a_build_candidates_hidden_tests_and_once_verified_their_ids(
    as_annotator, tmp_path
):
    c = make_candidate(family="build", payload={"family_facts": BUILD_FACTS})
    html = as_annotator.get(f"/review/candidates/{c.pk}/").content.decode()
    assert "Hidden tests" in html and "<code>tests/test_shapes.py</code>" in html
    assert "share of these tests that pass" in html and "circle_area, rectangle_area" in html
    assert "recorded once the trial matrix has run" in html
    task = tmp_path / "task"
    (task / "tests").mkdir(parents=True)
    grading = {
        "reference_passed": {"t.A.test_circle": 1, "t.A.test_old": 1},
        "start_failed": ["t.A.test_circle"],
    }
    (task / "tests" / "grading.json").write_text(json.dumps(grading))
    Candidate.objects.filter(pk=c.pk).update(task_dir=str(task), family="extend")
    html = as_annotator.get(f"/review/candidates/{c.pk}/", headers=HX).content.decode()
    assert "1 scored test, 1 that must keep passing" in html
    assert "<code>t.A.test_circle</code>" in html and "the new tests" in html


def test_a_repair_candidate_has_no_family_panel(as_annotator):
    c = make_candidate()
    html = as_annotator.get(f"/review/candidates/{c.pk}/").content.decode()
    assert f'id="family-{c.pk}"' not in html and "Hidden tests" not in html


def test_the_run_page_shows_each_candidates_family_and_the_llm_cost_per_family(as_annotator):
    run = PipelineRun.objects.create(
        config={"pipeline": {"options": {"families": ["repair", "qa"]}}},
        destination="x",
        status="done",
        report={
            "yield": {
                "repair": {"candidates": 2, "written": 2, "kept": 1, "yield": 1.0},
                "qa": {
                    "candidates": 1,
                    "written": 1,
                    "kept": 1,
                    "yield": 1.0,
                    "llm": {
                        "calls": 1,
                        "cache_hits": 2,
                        "prompt_tokens": 1200,
                        "completion_tokens": 150,
                        "cost_usd": 0.00027,
                        "cost_unknown": 0,
                    },
                },
            }
        },
    )
    make_candidate(run=run, family="qa", payload={"family_facts": QA_FACTS})
    make_candidate(run=run, family="repair")
    for headers in ({}, HX):
        html = as_annotator.get(reverse("runs:detail", args=[run.pk]), headers=headers)
        html = html.content.decode()
        llm = html[html.index(f'id="run-{run.pk}-llm"') :]
        llm = llm[: llm.index("</section>")]
        assert "<td>qa</td>" in llm and "<td>repair</td>" not in llm
        assert "1200 / 150" in llm and "0.0003" in llm
        assert '<span class="tag fam">qa</span>' in html and "asked at step" in html
        assert '<span class="tag fam">repair</span>' in html and "fails at step" in html


def test_the_run_page_says_which_families_did_not_run_for_want_of_a_model(as_annotator, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LLM_MODEL": ""}
    run = PipelineRun.objects.create(
        config={"pipeline": {"options": {"families": ["repair", "build"]}}}, destination="x"
    )
    html = as_annotator.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert "<strong>build</strong> did not run: no LLM model configured" in html
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LLM_MODEL": "openai/gpt-4o-mini"}
    html = as_annotator.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert "did not run" not in html
