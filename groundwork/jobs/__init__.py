"""Jobs on rows: claiming a row once (``claiming``), beating on it while the work runs
(``heartbeat``), queueing again what a broker lost (``redelivery``), and queueing a job after
commit on the cluster of its kind of work (``queue``)."""
