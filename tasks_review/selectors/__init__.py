"""Reads of the review desk, one module per subject; callers import the module they read from.

- `reviewable`: what is up for review, how many reviews decide it, who holds a candidate.
- `queue`: the queue's filters, tabs, facets, and the next candidate to work.
- `desk`: what the candidate page shows (blind reviews, the reference diff, the starting tree).
- `trials`: a candidate's trial matrix as evidence.
- `disputes`: disputed candidates and who may settle one.
- `audit`: what blind review hides in the audit log (its search is groundwork's).
- `exports`: what a dataset export takes.
- `reviewer_agreement`: agreement between reviewers on their decisions.
- `runs`: a pipeline run's ungraded candidates and why, grouped by cause.
- `families`: what a build, extend or qa candidate adds (hidden tests, question and answer),
  and a run's LLM use per family.
"""
