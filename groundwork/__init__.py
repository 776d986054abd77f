"""The ground floor: what every app stands on, with no domain words of its own.

``jobs`` (claiming a row, its heartbeat, redelivering what a broker lost, queueing after commit),
``audit`` (the audit trail and its search), ``access`` (the roles, ``require``, the one family of
refusals and how each answers over HTTP and on the command line), ``holds`` (a person keeping a
row for a while), and the two seams to the outside world: Docker (``core.docker``) and the
language model (``core.llm``). The apps above (trajectories, tasks_review, training) import from
here; nothing here imports them.
"""
