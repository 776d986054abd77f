"""What a run's LLM calls cost, per family, from the usage each candidate (or drop) records.

    llm_by_family([("qa", {"cost_usd": 0.0004, "prompt_tokens": 1200, ...}), ("repair", {})])
    # {"qa": {"calls": 1, "cache_hits": 0, "cost_usd": 0.0004, ...}}

A cache hit made no call: it counts as a hit and costs nothing this run (``cost_usd_saved`` says
what its first call cost). Families that asked nothing are absent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def llm_by_family(usages: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    totals: dict[str, dict[str, Any]] = {}
    for family, usage in usages:
        if not usage:
            continue
        total = totals.setdefault(
            family,
            {
                "calls": 0,
                "cache_hits": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "cost_usd": 0.0,
                "cost_usd_saved": 0.0,
                "cost_unknown": 0,
                "models": [],
            },
        )
        cost = float(usage.get("cost_usd") or 0.0)
        if usage.get("cached"):
            total["cache_hits"] += 1
            total["cost_usd_saved"] += cost
        else:
            total["calls"] += 1
            total["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
            total["completion_tokens"] += int(usage.get("completion_tokens") or 0)
            total["cost_usd"] += cost
            total["cost_unknown"] += 0 if usage.get("cost_known") else 1
        model = str(usage.get("model") or "")
        if model and model not in total["models"]:
            total["models"].append(model)
    for total in totals.values():
        total["cost_usd"] = round(total["cost_usd"], 6)
        total["cost_usd_saved"] = round(total["cost_usd_saved"], 6)
    return totals
