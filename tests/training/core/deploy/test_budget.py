from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from training.core.deploy.budget import (
    BudgetCap,
    BudgetError,
    DayUsage,
    UsageReport,
    over_cap,
    record_usage,
    utc_day,
)

NOON = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
TOKENS = BudgetCap(tokens_per_day=1000)
MONEY = BudgetCap(money_per_day=Decimal("5.00"))


def report(tokens=0, money="0", at=NOON):
    return UsageReport(at=at, tokens=tokens, money=Decimal(money))


def test_reports_of_one_day_add_up():
    first = record_usage(TOKENS, None, report(tokens=300, money="0.10"))
    second = record_usage(TOKENS, first.usage, report(tokens=200, money="0.05"))
    assert second.usage == DayUsage(date(2026, 11, 29), tokens=500, money=Decimal("0.15"))
    assert not second.exceeded and not second.tripped and second.reason == ""


def test_one_token_below_the_cap_does_not_trip_it():
    assert not record_usage(TOKENS, None, report(tokens=999)).tripped


def test_the_report_that_reaches_the_cap_trips_it_with_the_reason():
    check = record_usage(TOKENS, DayUsage(date(2026, 11, 29), tokens=999), report(tokens=1))
    assert check.tripped and check.exceeded
    assert check.reason == "tokens: 1,000 used of 1,000 per day (2026-11-29 UTC)"


def test_a_report_that_jumps_past_the_cap_trips_it():
    assert record_usage(TOKENS, None, report(tokens=5000)).tripped


def test_the_cap_trips_once_and_later_reports_only_say_it_is_exceeded():
    tripped = record_usage(TOKENS, None, report(tokens=1000))
    later = record_usage(TOKENS, tripped.usage, report(tokens=10))
    assert tripped.tripped and later.exceeded and not later.tripped


def test_money_is_added_in_exact_decimals_up_to_the_cap():
    usage = None
    for _ in range(49):
        usage = record_usage(MONEY, usage, report(money="0.10")).usage
    assert usage is not None and usage.money == Decimal("4.90")
    last = record_usage(MONEY, usage, report(money="0.10"))
    assert last.tripped
    assert last.reason == "money: 5.00 spent of 5.00 per day (2026-11-29 UTC)"


def test_either_limit_of_a_cap_with_both_trips_it_and_both_are_named_when_both_are_reached():
    cap = BudgetCap(tokens_per_day=1000, money_per_day=Decimal("5"))
    assert record_usage(cap, None, report(tokens=1000)).tripped
    assert record_usage(cap, None, report(money="5")).tripped
    both = record_usage(cap, None, report(tokens=1000, money="5"))
    assert both.reason.startswith("tokens: 1,000 used of 1,000 per day; money: 5 spent of 5")


def test_days_are_utc_days_whatever_the_reporters_offset():
    last_moment = datetime(2026, 11, 29, 23, 59, 59, 999_999, tzinfo=UTC)
    assert utc_day(last_moment) == date(2026, 11, 29)
    assert utc_day(last_moment + timedelta(microseconds=1)) == date(2026, 11, 30)
    # 00:30 in Berlin on the 30th is 23:30 UTC on the 29th; 23:30 in New York on the 29th is
    # 04:30 UTC on the 30th.
    berlin, new_york = timezone(timedelta(hours=1)), timezone(timedelta(hours=-5))
    assert utc_day(datetime(2026, 11, 30, 0, 30, tzinfo=berlin)) == date(2026, 11, 29)
    assert utc_day(datetime(2026, 11, 29, 23, 30, tzinfo=new_york)) == date(2026, 11, 30)


def test_a_new_utc_day_starts_from_zero():
    yesterday = record_usage(TOKENS, None, report(tokens=999, at=NOON)).usage
    midnight = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)
    check = record_usage(TOKENS, None, report(tokens=10, at=midnight))
    assert check.usage == DayUsage(date(2026, 11, 30), tokens=10) and not check.tripped
    with pytest.raises(BudgetError, match="cannot add to the usage of 2026-11-29"):
        record_usage(TOKENS, yesterday, report(tokens=10, at=midnight))


def test_a_late_report_still_counts_against_its_own_day():
    yesterday = DayUsage(date(2026, 11, 28), tokens=990)
    late = report(tokens=20, at=datetime(2026, 11, 28, 23, 59, tzinfo=UTC))
    assert record_usage(TOKENS, yesterday, late).tripped


def test_over_cap_reads_a_days_usage_for_the_route_snapshot():
    assert over_cap(TOKENS, DayUsage(date(2026, 11, 29), tokens=1000))
    assert over_cap(TOKENS, DayUsage(date(2026, 11, 29), tokens=999)) == ""


def test_naive_times_are_refused_since_their_day_is_unknown():
    with pytest.raises(BudgetError, match="timezone"):
        UsageReport(at=datetime(2026, 11, 29, 12, 0), tokens=1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"tokens": -1},
        {"tokens": 1.5},
        {"money": 0.1},
        {"money": Decimal("-0.01")},
        {"money": Decimal("NaN")},
        {"money": Decimal("Infinity")},
    ],
)
def test_negative_fractional_token_float_money_or_non_finite_reports_are_refused(kwargs):
    with pytest.raises(BudgetError):
        UsageReport(at=NOON, **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"tokens_per_day": 0},
        {"money_per_day": Decimal(0)},
        {"money_per_day": 5.0},
        {"tokens_per_day": -5},
    ],
)
def test_a_cap_needs_a_positive_limit(kwargs):
    with pytest.raises(BudgetError):
        BudgetCap(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [{"tokens": 10**30}, {"tokens": 2**63}, {"money": Decimal(10**10)}, {"money": Decimal("1e30")}],
)
def test_a_report_larger_than_a_day_can_hold_is_refused(kwargs):
    # A day's usage is kept in a 64-bit count and a decimal of ten whole digits.
    with pytest.raises(BudgetError, match="at most"):
        UsageReport(at=NOON, **kwargs)


def test_reports_that_would_add_up_past_what_a_day_can_hold_are_refused():
    full = DayUsage(NOON.date(), tokens=2**63 - 1)
    with pytest.raises(BudgetError, match="at most"):
        record_usage(TOKENS, full, report(tokens=1))
    rich = DayUsage(NOON.date(), money=Decimal("9999999999"))
    with pytest.raises(BudgetError, match="at most"):
        record_usage(MONEY, rich, report(money="1"))


@pytest.mark.parametrize(
    "at",
    [
        datetime(9999, 12, 31, 23, 59, tzinfo=timezone(-timedelta(hours=23, minutes=59))),
        datetime(1, 1, 1, 0, 0, tzinfo=timezone(timedelta(hours=23, minutes=59))),
    ],
)
def test_a_time_whose_utc_day_is_out_of_the_calendar_is_refused(at):
    with pytest.raises(BudgetError, match="UTC"):
        UsageReport(at=at, tokens=1)
