#!/bin/sh
# Publish site/ to the ACME static host.
#
# Needs the deploy token in .deploy/credentials (ACME_DEPLOY_TOKEN=...). The file is never
# committed: the site owner hands it out. .deploy/credentials.example shows its shape.
set -eu
cd "$(dirname "$0")"

target="${1:-}"
case "$target" in
  production | staging) ;;
  *) echo "usage: ./deploy.sh production|staging" >&2; exit 64 ;;
esac

credentials=".deploy/credentials"
if [ ! -f "$credentials" ]; then
  echo "deploy: missing credentials: $credentials not found (it must define ACME_DEPLOY_TOKEN)" >&2
  echo "deploy: ask the site owner for the deploy token; see $credentials.example" >&2
  exit 78
fi
. "./$credentials"
if [ -z "${ACME_DEPLOY_TOKEN:-}" ]; then
  echo "deploy: ACME_DEPLOY_TOKEN is empty in $credentials" >&2
  exit 78
fi

host="$(cat .deploy/target)"
digest="$(tar -cf - site | sha256sum | cut -c1-12)"
# The host is not reachable from here; every release is recorded where the next one looks.
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $target $host $digest" >> .deploy/releases.log
echo "deploy: published site/ ($digest) to $target at $host"
