#!/bin/bash
# First start: a cluster with password authentication and the service's role and database
# (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB). Every start: the server in the foreground on
# PGPORT, listening on POSTGRES_LISTEN (127.0.0.1 by default: compose runs on the host network).
set -euo pipefail
: "${POSTGRES_USER:=voice}" "${POSTGRES_DB:=voice}"
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust \
    --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p $PGPORT" -w start >/dev/null
  psql -v ON_ERROR_STOP=1 -h /run/postgresql -p "$PGPORT" -U "$POSTGRES_USER" -d postgres \
    -c "create database \"$POSTGRES_DB\" owner \"$POSTGRES_USER\"" >/dev/null
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -p "$PGPORT" -c listen_addresses="${POSTGRES_LISTEN:-127.0.0.1}" \
  -c unix_socket_directories=/run/postgresql
