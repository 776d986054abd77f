#!/usr/bin/env bash
# The main job on the embedded default (SQLite, the local Docker engine): set up, build the base
# image offline when missing, turn the bundled samples into verified tasks, and serve the review
# desk and its workers on 127.0.0.1.
source "$(dirname "$0")/lib.sh"
PORT="${PORT:-8000}"
BIND="${TRAJ2ENV_WEB_BIND:-127.0.0.1:$PORT}"

ensure_venv
ensure_secret_key
# mmdebstrap and docker-registry build the offline base image and give it a pinned digest.
apt_install mmdebstrap docker-registry
migrate
"$PY" manage.py demo_admin
"$PY" manage.py seed_behaviours
if "$PY" manage.py images bootstrap; then
  say "generating verified tasks from the bundled samples (configs/samples.yaml)"
  "$PY" manage.py generate --config configs/samples.yaml || say "generate found nothing usable"
else
  say "no usable Docker engine: ingesting the samples without verification"
  "$PY" manage.py ingest samples || [ $? -eq 1 ]
fi
# Outside DEBUG the web app serves (through WhiteNoise) what this wrote to var/static/.
"$PY" manage.py collectstatic --noinput -v 0

say "starting the django-q2 workers (default and docker queues) and the web app on http://$BIND/"
serve_all "$BIND"
