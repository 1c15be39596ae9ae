#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, only those missing.
# Servers are never started here: tests start throwaway ones on 127.0.0.1 (or inside
# network namespaces they make themselves).
set -euo pipefail

packages=(
    postgresql postgresql-contrib     # managed PostgreSQL, pg_stat_statements, pgbench
    mariadb-server mariadb-client     # managed MariaDB
    libmariadb-dev pkg-config         # to build mysqlclient
    tarantool                         # managed Tarantool
    nginx wrk                         # HTTP engine tests and benchmark
    nghttp2-client openssl            # h2load (HTTP/2 peer); throwaway certificates for TLS tests
    apache2-utils                     # ab: an independent client of what dbstand serves
    chromium fonts-dejavu-core        # the HTML report rendered headless (test_report_html)
    iproute2 procps                   # ip netns, sysctl: tests/network/test_namespaces.py
)
# Every server stack's own packages, from its manifest (src/dbstand/stacks/*/*/stack.toml),
# so that the test suite can build, start and verify each of them.
here="$(cd "$(dirname "$0")/.." && pwd)"
while read -r pkg; do
    [ -n "$pkg" ] && packages+=("$pkg")
done < <(python3 - "$here/src/dbstand/stacks" <<'PY'
import sys, tomllib, pathlib
found = set()
for manifest in pathlib.Path(sys.argv[1]).glob("*/*/stack.toml"):
    found.update(tomllib.loads(manifest.read_text()).get("install", {}).get("debian", []))
print("\n".join(sorted(found)))
PY
)

missing=()
for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$pkg")
done
# The machine may ship PostgreSQL binaries outside Debian's package (e.g. /usr/local).
if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    kept=()
    for pkg in "${missing[@]}"; do [ "$pkg" = postgresql ] || kept+=("$pkg"); done
    missing=("${kept[@]}")
fi
if [ ${#missing[@]} -eq 0 ]; then
    echo "debian packages: all present"
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
fi
echo "debian packages: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# policy-rc.d 101: do not start the packaged services; tests start their own servers.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod +x "$policy"
    created_policy=1
fi
trap '[ $created_policy -eq 1 ] && $sudo rm -f "$policy"' EXIT
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "debian packages: done"
