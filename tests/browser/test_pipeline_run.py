import pytest

from tasks_review.core.config import parse_config
from tasks_review.models import PipelineRun
from tasks_review.services.pipeline import pipeline_run_create, pipeline_run_execute
from tests.conftest import SAMPLES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_run_page_follows_a_run_live_until_it_ends(
    page, login, people, screenshot, tmp_path, settings
):
    settings.TRAJ2ENV = {
        **settings.TRAJ2ENV,
        "BASE_IMAGE": "x.org/b@sha256:" + "0" * 64,
        "VERIFY": False,
    }
    config = parse_config(
        {
            "source": {"path": str(SAMPLES), "format": "auto"},
            "pipeline": {"name": "trajectory_to_env"},
            "output": {"destination": str(tmp_path)},
        },
        base_dir=tmp_path,
    )
    run = pipeline_run_create(config=config)
    login(people.bob)
    page.goto(f"/runs/{run.pk}/")
    page.wait_for_selector(f"#run-{run.pk}-progress .status-queued")

    pipeline_run_execute(run_id=run.pk)  # the page polls while this runs
    page.wait_for_selector(f"#run-{run.pk}-progress .status-done", timeout=15_000)
    page.wait_for_selector("text=report.json")  # the page reloaded once with the final lists
    assert page.locator(f"#run-{run.pk}-progress .stage-done").count() >= 4
    assert page.locator("tr[id^=candidate-]").count() == 4
    screenshot("pipeline-run")
    assert PipelineRun.objects.get(id=run.pk).status == "done"
