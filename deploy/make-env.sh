#!/bin/bash
# Prints an env file with fresh random secrets for the compose stack:
#   bash deploy/make-env.sh > deploy/.env
set -euo pipefail
secret() { head -c 256 /dev/urandom | tr -dc 'A-Za-z0-9' | head -c "$1"; }
echo "POSTGRES_PASSWORD=$(secret 32)"
echo "ADMIN_TOKEN=adm_$(secret 32)"
echo "KEY_HASH_SECRET=$(secret 48)"
