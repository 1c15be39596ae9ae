#!/usr/bin/env bash
# `make demo` as a new user runs it: a fresh clone of this checkout, with no system
# build libraries to be found (an empty pkg-config path), so that any dependency that
# would compile against them fails here instead of on the user's machine.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone --quiet "$here" "$work/dbstand"
mkdir "$work/empty-pkgconfig"
cd "$work/dbstand"
started=$(date +%s)
# the Rust engine's dependencies are reused from this checkout's build, when there is one
export CARGO_TARGET_DIR="$here/native/loadgen/target"
# a new user's make: none of the calling make's flags, jobs or variables (make test runs
# this check from a test, under its own make; a VENV=... given there must not reach the
# clone's make)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES \
    PKG_CONFIG_LIBDIR="$work/empty-pkgconfig" PKG_CONFIG_PATH="" make demo
test -s report.html
echo "demo-check: make demo in a fresh clone took $(( $(date +%s) - started )) s"
