"""Each drop is the product's to act on or a limit of the environment, decided in one place."""

from __future__ import annotations

import pytest

from tasks_review.core.dropsides import Limit, drop_sides, limit_of
from tasks_review.core.mining.gomod import GoModule
from tasks_review.core.mining.rules import go_downloads

GO_DOWNLOADS = go_downloads(GoModule("go.mod", known=True, downloads=("github.com/x/y v1.0.0",)))


@pytest.mark.parametrize(
    "stage, reason, detail, limit",
    [
        ("mine", "unsupported_language", "rust check (cargo); supported: go, node, python",
         Limit("language", "rust")),
        ("mine", "unsupported_language", "elixir check (make); supported: go",
         Limit("language", "elixir")),
        ("mine", "dependency_unavailable_offline", GO_DOWNLOADS,
         Limit("source", "Go modules", "a Go module proxy")),
        ("mine", "service_unavailable",
         "the check needs MySQL, which the task's image cannot run (seen: mysql://x)",
         Limit("service", "MySQL")),
        ("prepare", "dependency_unavailable_offline",
         "the check needs program cargo, python module pytest, which the image lacks and no "
         "offline source provides", Limit("program", "cargo")),
        ("prepare", "dependency_unavailable_offline",
         "the check needs go 1.24 or newer, which the image lacks and no offline source provides",
         Limit("interpreter", "go 1.24 or newer")),
        ("prepare", "dependency_unavailable_offline",
         "leftpad ^1 (package.json): no npm cache is configured",
         Limit("source", "npm packages", "an npm registry")),
        ("prepare", "dependency_unavailable_offline",
         "github.com/x/y v1 (go.mod): no offline source provides Go modules: it is not vendored",
         Limit("source", "Go modules", "a Go module proxy")),
        ("write", "dependency_unavailable_offline",
         "uv could not resolve: the current Python version (3.11) does not satisfy Python>=3.14",
         Limit("interpreter", "python >=3.14")),
        ("write", "dependency_unavailable_offline", "PyPI is not reachable (timed out)",
         Limit("source", "Python packages", "PyPI")),
    ],
)  # fmt: skip
def test_a_missing_source_language_interpreter_program_or_service_is_an_environment_limit(
    stage, reason, detail, limit
):
    assert limit_of(stage, reason, detail) == limit


@pytest.mark.parametrize(
    "stage, reason, detail",
    [
        ("mine", "unsupported_language", "unknown check (make); supported: go, node, python"),
        ("mine", "check_manifest_unseen", "mise run test needs mise.toml in ."),
        ("mine", "fix_touches_lost_file", "content unknown at the start: calc.py"),
        ("check", "check_not_passing_at_reference", "1 failed"),
        ("prepare", "dependency_unavailable_offline",
         "example.com/lib v0 (go.mod): replaced by ../lib, outside the project"),
        ("write", "dependency_unavailable_offline", "'x y': not a PEP 508 requirement (bad)"),
    ],
)  # fmt: skip
def test_what_better_mining_or_writing_could_keep_is_the_products(stage, reason, detail):
    assert limit_of(stage, reason, detail) is None


def test_the_summary_counts_the_products_drops_by_reason_and_groups_the_limits():
    sides = drop_sides(
        [
            ("mine", "no_change", "x"),
            ("mine", "no_change", "y"),
            ("mine", "unsupported_language", "rust check (cargo); supported: go"),
            ("mine", "unsupported_language", "rust check (cargo); supported: go"),
        ]
    )
    assert sides["product"] == {"count": 2, "top": [{"reason": "no_change", "count": 2}]}
    assert sides["environment"]["limits"] == [
        {"kind": "language", "name": "rust", "source": "", "count": 2}
    ]
