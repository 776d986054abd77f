#!/usr/bin/env bash
# The main job on the embedded default (SQLite, the local Docker engine): set up, ingest the bundled
# samples, and serve the review desk and a worker on 127.0.0.1.
source "$(dirname "$0")/lib.sh"
PORT="${PORT:-8000}"

ensure_venv
migrate
"$PY" manage.py demo_admin
say "ingesting the bundled samples"
"$PY" manage.py ingest samples || [ $? -eq 1 ]
"$PY" manage.py collectstatic --noinput -v 0

say "starting a worker (django-q2) and the web app on http://127.0.0.1:$PORT/"
"$PY" manage.py qcluster &
WORKER=$!
trap 'kill $WORKER 2>/dev/null; wait $WORKER 2>/dev/null' EXIT INT TERM
"$PY" manage.py runserver --insecure --noreload "127.0.0.1:$PORT"
