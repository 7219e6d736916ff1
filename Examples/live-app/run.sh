#!/usr/bin/env bash
# The live example, end to end: builds the client, starts the API on a free loopback port, plays
# and records the scripted user session, verifies the fresh transcript, plays it again with
# `cachesh attach` on the app's inspector (attach.py: it records, watches, invalidates; its
# transcript verifies), stops the server, then verifies the committed
# Examples/live-app/session.transcript. With --update, the fresh
# transcript replaces the committed one.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cachesh="${CACHESH_BIN:-$root/.build/debug/cachesh}"
swift="${SWIFT:-swift}"
update=false
[ "${1:-}" = "--update" ] && update=true

work="$(mktemp -d)"
server_pid=""
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}
trap 'stop_server; rm -rf "$work"' EXIT

started=$(date +%s)
"$swift" build --package-path "$here/client"
python3 "$here/server.py" --port-file "$work/port" > /dev/null &
server_pid=$!
# Up to 60 s: a busy machine can be slow to start Python; a server that exits stops the wait.
for _ in $(seq 1 600); do
    [ -s "$work/port" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
[ -s "$work/port" ] || { echo "live-app: the server exited or did not start within 60 s" >&2; exit 1; }
port="$(cat "$work/port")"

"$here/client/.build/debug/LiveAppClient" "http://127.0.0.1:$port" "$work/session.transcript"
echo "live-app: fresh recording"
"$cachesh" --verify --safe "$work/session.transcript"
# The same session with a shell attached (the app's inspector): it records, watches, invalidates.
python3 "$here/attach.py" "$cachesh" "$here/client/.build/debug/LiveAppClient" "http://127.0.0.1:$port" "$work"
stop_server

if $update; then
    cp "$work/session.transcript" "$here/session.transcript"
    echo "live-app: wrote $here/session.transcript"
fi
echo "live-app: committed transcript"
"$cachesh" --verify --safe "$here/session.transcript"
echo "live-app: done in $(( $(date +%s) - started )) s"
