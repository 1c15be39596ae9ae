#!/usr/bin/env bash
# Runs one phase of `make test` and prints a line with its wall time, so that a CI log
# shows where a cold run's minutes went: `phase NAME: SECONDS s`.
# With PHASE_LOG set, the line is also appended to that file: `make test` prints them all
# again at its end, where a CI log's tail shows them beside pytest's summary.
# usage: phase.sh NAME COMMAND [ARGS...]   (exits with the command's status)
set -uo pipefail
name="$1"
shift
started=$(date +%s)
"$@"
status=$?
line="phase $name: $(( $(date +%s) - started )) s$([ $status -eq 0 ] || echo " (exit $status)")"
echo "$line"
[ -z "${PHASE_LOG:-}" ] || echo "$line" >> "$PHASE_LOG"
exit $status
