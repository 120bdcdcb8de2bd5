#!/bin/bash
# Container health: GET /healthz on this container's port (named by $1, default $2) must answer
# 200. Plain bash (/dev/tcp), so the images need no curl.
port="${!1:-$2}"
exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
printf 'GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
read -r -t 3 status <&3 || exit 1
[[ "$status" == *" 200 "* ]]
