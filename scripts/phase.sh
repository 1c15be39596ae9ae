#!/usr/bin/env bash
# Runs one phase of `make test` and prints a line with its wall time, so that a CI log
# shows where a cold run's minutes went: `phase NAME: SECONDS s`.
# usage: phase.sh NAME COMMAND [ARGS...]   (exits with the command's status)
set -uo pipefail
name="$1"
shift
started=$(date +%s)
"$@"
status=$?
echo "phase $name: $(( $(date +%s) - started )) s$([ $status -eq 0 ] || echo " (exit $status)")"
exit $status
