"""Preference pairs (two rollouts of one task) and the labels people give them.

A pair is held while one labeller works it, like a candidate on the review desk
(``groundwork.services.holds``), and its labels stay hidden from each other until the pair has
as many as it needs (blind labelling).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from groundwork.models import Holdable

from .behaviours import Behaviour, BehaviourTask, Rollout


class PreferencePair(Holdable):
    """Two rollouts of one of a behaviour's tasks; ``rollout_a`` has the lower id. A labeller
    sees them in an order of their own, and never whose they are."""

    class Basis(models.TextChoices):
        OUTCOME = "outcome", "Outcomes differ"
        REWARD = "reward", "Rewards differ"
        PATH_QUALITY = "path_quality", "Both passed: path quality"

    class Status(models.TextChoices):
        OPEN = "open"
        COMPLETE = "complete"  # as many labels as a pair needs: they are shown to everyone

    behaviour = models.ForeignKey(Behaviour, on_delete=models.CASCADE, related_name="pairs")
    task = models.ForeignKey(BehaviourTask, on_delete=models.CASCADE, related_name="pairs")
    rollout_a = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="+")
    rollout_b = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="+")
    basis = models.CharField(max_length=20, choices=Basis)
    reward_gap = models.FloatField(default=0.0)
    # The rollout the verified reward prefers; None when only people can say (path quality).
    preferred = models.ForeignKey(
        Rollout, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    status = models.CharField(max_length=10, choices=Status, default=Status.OPEN, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["behaviour", "rollout_a", "rollout_b"], name="pair_once_per_behaviour"
            )
        ]
        permissions = [("label_pairs", "Can label preference pairs")]

    def __str__(self) -> str:
        return f"pair {self.pk}: rollouts {self.rollout_a_id} and {self.rollout_b_id}"

    def side(self, rollout_id: int | None, *, both_bad: bool = False) -> str:
        """ "a", "b", "tie" (None) or "both_bad": a label in the pair's own frame, whatever was
        shown left."""
        if both_bad:
            return "both_bad"
        if rollout_id is None:
            return "tie"
        return "a" if rollout_id == self.rollout_a_id else "b"


class PairLabel(models.Model):
    """One labeller's verdict on a pair: the rollout they preferred (None: a tie, or both bad
    when ``both_bad``), and which rollout they saw on the left, so a side bias can be
    measured."""

    class Tag(models.TextChoices):
        CORRECT = "correct", "Correct result"
        VERIFIED = "verified", "Checked its work"
        EFFICIENT = "efficient", "Fewer wasted steps"
        SAFE = "safe", "Safer actions"
        CLEAR = "clear", "Clearer to follow"

    pair = models.ForeignKey(PreferencePair, on_delete=models.CASCADE, related_name="labels")
    labeller = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="pair_labels"
    )
    chosen = models.ForeignKey(
        Rollout, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    left = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="+")
    # Neither is good enough to learn from: no preference, and not a tie either (a tie says both
    # are equally acceptable). Preference exports leave such a pair out and count it.
    both_bad = models.BooleanField(default=False)
    tag = models.CharField(max_length=12, choices=Tag, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pair", "id"]
        constraints = [
            models.UniqueConstraint(fields=["pair", "labeller"], name="one_label_per_labeller"),
            models.CheckConstraint(
                condition=models.Q(both_bad=False) | models.Q(chosen__isnull=True),
                name="both_bad_prefers_neither",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.labeller_id} on pair {self.pair_id}: {self.verdict}"

    @property
    def verdict(self) -> str:
        return self.pair.side(self.chosen_id, both_bad=self.both_bad)
