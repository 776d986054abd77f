"""A run's yield per harness and language, and its top drop reasons (no database)."""

from tasks_review.core.yields import TOP_DROPS, Bucket, CandidateOutcome, DropCount, yields


def test_a_harness_counts_every_ingested_trajectory_a_language_only_those_with_its_checks():
    y = yields(
        {1: "codex", 2: "codex", 3: "pi"},
        [
            CandidateOutcome(1, "codex", "python", "kept", written=True),
            CandidateOutcome(1, "codex", "python", "dropped", drop_reason="no_change"),
            CandidateOutcome(3, "pi", "node", "ungraded", written=True),
        ],
    )
    assert y.by_harness == {
        "codex": Bucket(trajectories=2, candidates=2, written=1, kept=1, dropped=1),
        "pi": Bucket(trajectories=1, candidates=1, written=1, kept=0, dropped=0),
    }
    assert y.by_language["python"].trajectories == 1 and y.by_language["node"].written == 1


def test_drops_without_a_language_or_reason_count_as_unknown():
    y = yields({}, [CandidateOutcome(1, "atif", "", "dropped")])
    assert y.by_harness["atif"].trajectories == 1  # a run from before runs listed theirs
    assert list(y.by_language) == ["unknown"]
    assert y.top_drops == (DropCount("unknown", 1),)


def test_top_drop_reasons_are_the_most_common_first_then_by_code_and_bounded():
    rows = [CandidateOutcome(1, "pi", "node", "dropped", drop_reason=f"r{i:02}") for i in range(20)]
    rows += [CandidateOutcome(1, "pi", "node", "dropped", drop_reason="r19")] * 2
    top = yields({1: "pi"}, rows).top_drops
    assert len(top) == TOP_DROPS
    assert top[0] == DropCount("r19", 3) and [d.reason for d in top[1:3]] == ["r00", "r01"]
