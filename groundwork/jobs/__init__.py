"""Jobs on rows: claiming a row once (``claiming``), beating on it while the work runs
(``heartbeat``), queueing again what a broker lost (``redelivery``), and queueing a job after
commit on the cluster of its kind of work (``queue``)."""

# The two queues, each a django-q2 cluster of its own (``queue.cluster``): light work, and Docker
# work (images, trial matrices, grading), so a long trial matrix never delays a replay.
DEFAULT = "default"
DOCKER = "docker"
