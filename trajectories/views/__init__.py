"""The trajectory pages: the list (`lists`), one trajectory (`detail`) and the replay stepper
(`stepper`). Every one of them needs the role that may read trajectories."""

from django.contrib.auth.decorators import permission_required

from ..roles import REVIEW_TRAJECTORY

can_review = permission_required(REVIEW_TRAJECTORY, raise_exception=True)
