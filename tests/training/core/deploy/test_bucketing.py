import math
import os
import subprocess
import sys

import pytest

from training.core.deploy.bucketing import (
    BASIS_POINTS,
    bucket,
    format_percentage,
    inside,
    parse_percentage,
    subject_inside,
)

SUBJECTS = [f"repo:acme/project-{i}" for i in range(20_000)]


def test_buckets_are_pinned_values_of_sha256_not_of_this_process():
    # Pinned: a change here moves live subjects between the adapter and the base model.
    assert bucket("failing-test-repair", "repo:acme/api") == 2808
    assert bucket("failing-test-repair", "repo:acme/api", salt="v2") == 2224
    assert [bucket("read-before-edit", f"user:{i}") for i in range(5)] == [
        1761,
        6149,
        9702,
        8156,
        2604,
    ]


def test_buckets_are_the_same_in_another_process_with_another_hash_seed():
    code = (
        "from training.core.deploy.bucketing import bucket;"
        "print([bucket('failing-test-repair', f'repo:acme/project-{i}') for i in range(50)])"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert out.strip() == str([bucket("failing-test-repair", s) for s in SUBJECTS[:50]])


def test_every_bucket_is_within_the_basis_point_range():
    values = [bucket("failing-test-repair", s) for s in SUBJECTS]
    assert min(values) >= 0 and max(values) < BASIS_POINTS


def test_a_subject_inside_a_rollout_stays_inside_when_the_rollout_grows():
    steps = [0, 1, 100, 1000, 2000, 5000, 9999, 10_000]
    for subject in SUBJECTS[:2000]:
        seen = [inside("failing-test-repair", subject, bp) for bp in steps]
        assert seen == sorted(seen), subject  # False ... False, True ... True
    assert not any(inside("failing-test-repair", s, 0) for s in SUBJECTS[:2000])
    assert all(inside("failing-test-repair", s, BASIS_POINTS) for s in SUBJECTS[:2000])


@pytest.mark.parametrize("bp", [100, 1000, 2500, 5000, 9000])
def test_the_share_inside_is_the_rollout_within_the_binomial_spread(bp):
    n = len(SUBJECTS)
    p = bp / BASIS_POINTS
    count = sum(inside("failing-test-repair", s, bp) for s in SUBJECTS)
    # Five standard deviations of Binomial(n, p): a fair hash misses this about once in
    # 1.7 million draws, and these subjects are a fixed draw, so the test cannot flicker.
    spread = 5 * math.sqrt(n * p * (1 - p))
    assert abs(count - n * p) <= spread, (count, n * p, spread)


def test_each_behaviour_draws_its_own_subjects():
    repair = {s for s in SUBJECTS if inside("failing-test-repair", s, 1000)}
    reading = {s for s in SUBJECTS if inside("read-before-edit", s, 1000)}
    # Independent 10% draws share about 1% of subjects, not all of them.
    n = len(SUBJECTS)
    expected, spread = n * 0.01, 5 * math.sqrt(n * 0.01 * 0.99)
    assert abs(len(repair & reading) - expected) <= spread


def test_a_salt_reshuffles_who_is_first():
    plain = {s for s in SUBJECTS[:5000] if inside("failing-test-repair", s, 1000)}
    salted = {s for s in SUBJECTS[:5000] if inside("failing-test-repair", s, 1000, salt="v2")}
    assert plain != salted


def test_separators_keep_behaviour_and_subject_apart():
    assert bucket("ab", "c") != bucket("a", "bc")


@pytest.mark.parametrize("bp", [-1, 10_001, 12.5, True])
def test_rollouts_outside_0_to_10000_basis_points_are_refused(bp):
    with pytest.raises(ValueError):
        inside("failing-test-repair", "repo:acme/api", bp)


@pytest.mark.parametrize(
    "text, bp", [("10", 1000), ("12.5%", 1250), (" 0.01 % ", 1), ("100", 10_000), ("0", 0)]
)
def test_percentages_are_read_exactly_into_basis_points(text, bp):
    assert parse_percentage(text) == bp


@pytest.mark.parametrize("text", ["12.345", "101", "-1", "ten", ""])
def test_percentages_finer_than_a_basis_point_or_out_of_range_are_refused(text):
    with pytest.raises(ValueError):
        parse_percentage(text)


@pytest.mark.parametrize(
    "bp, text", [(1250, "12.5%"), (1205, "12.05%"), (5, "0.05%"), (10_000, "100%"), (0, "0%")]
)
def test_basis_points_read_back_as_short_percentages(bp, text):
    assert format_percentage(bp) == text
    assert parse_percentage(text) == bp


def test_the_drill_subject_is_inside_the_rollout_it_is_chosen_for():
    for bp in (1, 50, 1000, 10_000):
        subject = subject_inside("failing-test-repair", bp)
        assert subject.startswith("drill-")
        assert inside("failing-test-repair", subject, bp)
    with pytest.raises(ValueError):
        subject_inside("failing-test-repair", 0)
