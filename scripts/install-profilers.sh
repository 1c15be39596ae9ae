#!/usr/bin/env bash
# Installs what `--profile` needs beyond the Python extra `dbstand[profile]` (py-spy):
# perf (Debian's linux-perf) and inferno 0.12's folding and flame-graph tools, built by
# cargo from crates.io into dbstand's cache (profiles/tools.py looks there).
# inferno is CDDL-1.0 (docs/profiles.md); it is built, not vendored.
set -euo pipefail

if ! command -v perf >/dev/null; then
    apt-get install -y --no-install-recommends linux-perf
fi
cache="${DBSTAND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dbstand}"
root="$cache/tools/inferno"
# cargo records what it installed in .crates.toml: rebuilt only when the pin changes
if ! grep -q '"inferno 0\.12\.8 ' "$root/.crates.toml" 2>/dev/null; then
    PATH="$HOME/.cargo/bin:$PATH" cargo install inferno --version '=0.12.8' --locked \
        --root "$root" --force --quiet
fi
