#!/bin/sh
# sources-hash.sh DIR...: one sha256 over the names and contents of every file in DIRs.
set -eu
for dir in "$@"; do
  (cd "$dir" && find . -type f ! -name '*.pyc' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
done | sha256sum | cut -d' ' -f1
