"""The rule that says two files record one session (no database)."""

from datetime import UTC, datetime, timedelta

from trajectories.core.sessions import Recording, first_request, same_session

START = datetime(2026, 4, 13, 6, 15, 6, tzinfo=UTC)


def recording(**changes) -> Recording:
    fields = dict(
        session_id="baa22722", first_request="Solve the issue", started_at=START, is_subagent=False
    )
    fields.update(changes)
    return Recording(**fields)


def test_the_same_id_request_and_start_are_one_session():
    assert same_session(recording(), recording(first_request="Solve  the issue\n"))


def test_a_start_time_only_one_side_knows_does_not_part_them():
    assert same_session(recording(), recording(started_at=None))


def test_start_times_a_fraction_of_a_second_apart_are_one_session():
    # OpenClaw stamps its pi header 170 ms before the first step its ATIF twin starts with.
    assert same_session(recording(), recording(started_at=START + timedelta(milliseconds=170)))
    assert same_session(recording(), recording(started_at=START - timedelta(seconds=5)))
    assert not same_session(recording(), recording(started_at=START + timedelta(seconds=6)))


def test_the_same_id_with_another_first_request_is_another_session():
    assert not same_session(recording(), recording(first_request="Now write the skill"))


def test_another_id_another_start_or_a_subagent_is_another_session():
    assert not same_session(recording(), recording(session_id="c0ffee"))
    assert not same_session(recording(), recording(started_at=datetime(2026, 4, 14, tzinfo=UTC)))
    assert not same_session(recording(), recording(is_subagent=True))


def test_no_id_or_no_request_never_merges():
    assert not same_session(recording(session_id=""), recording(session_id=""))
    assert not same_session(recording(first_request=""), recording(first_request=" "))


def test_the_first_request_skips_agent_steps_and_copied_context():
    steps = [("system", "be brief", False), ("user", "old", True), ("user", "Fix it", False)]
    assert first_request(steps) == "Fix it"
    assert first_request([("agent", "hi", False)]) == ""
