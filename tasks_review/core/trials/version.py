"""The verifier's version: bumped whenever a change could turn a kept task's verdict.

Kept tasks record the version that kept them (``tests/grading.json``, ``task.toml`` metadata and
the candidate's row), so tasks kept by an older verifier can be found and verified again
(``manage.py reverify``).

1. Fixed contradictory controls, results files in the graded user's reach.
2. Control copies of the real tests planned by the grader, reports over a socket only root
   reads, discovered-file removal and standard-library shadowing findings.
3. The reward decided outside the graded process: hidden equivalence probes (the project's
   functions on inputs derived from the tests' own calls, compared by root with the
   reference's outcomes, ``probes.py``); tasks without a discriminating probe are check-only.
4. The probes' inputs drawn at random over wide ranges (``probeinputs.py``: no fixed transform
   a reader could enumerate), every kept probe must match (not only the discriminating ones),
   grading.json records the probes' count and sha256 (a missing or changed probes.json scores
   0), each probe names the exact ids of the tests that made its call, and the probe process
   runs as an identity of its own whose leftovers are removed. probes.json's format is 2.
5. An int a probe expects matches an int only (a float within 1e-9 of it matched), a
   ``$decimal`` only as text; a fractional task (build, extend) scores 0 when a probe of
   behaviour that worked at the start disagrees, or when no probe matched at all.
"""

VERIFIER_VERSION = 5
