"""The learning loop's logic, framework-free: behaviour specs, the eval harness, Harbor rollouts.

Nothing here imports Django; it may use ``trajectories.core`` and ``tasks_review.core``, the
floors below it.
"""
