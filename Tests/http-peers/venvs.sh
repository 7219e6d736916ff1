#!/usr/bin/env bash
# Builds the two peers' Python environments, each from its own pinned list: mitmproxy (the HAR
# exporter) and hishel (a second RFC 9111 cache) pin versions of shared packages (h11, certifi)
# that conflict, so they cannot share one. A folder is rebuilt only when its list changed.
# Usage: venvs.sh [DIR]   (default: .build/peer-venvs under the repository)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-${CACHESH_PEER_VENVS:-$here/../../.build/peer-venvs}}"
mkdir -p "$dir"
for name in mitmproxy hishel; do
  list="$here/requirements-$name.txt"
  stamp="$dir/$name/.requirements"
  if [ -f "$stamp" ] && cmp -s "$stamp" "$list"; then continue; fi
  rm -rf "$dir/$name"
  if ! python3 -m venv "$dir/$name" 2>/dev/null; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$dir/$name"
  fi
  echo "building the $name environment (pinned: $(wc -l < "$list") packages)"
  "$dir/$name/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$list"
  cp "$list" "$stamp"
done
