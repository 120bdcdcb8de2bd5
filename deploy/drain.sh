#!/bin/bash
# Kubernetes preStop for a worker: start the drain (SIGTERM to the worker, PID 1) and wait until
# the process has ended its calls and exited, so the pod's grace period covers the whole drain.
kill -TERM 1 2>/dev/null || exit 0
while kill -0 1 2>/dev/null; do sleep 1; done
