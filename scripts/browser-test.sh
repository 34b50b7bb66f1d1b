#!/usr/bin/env bash
# Browser test of the REST API's reference UI (e2e/browser/swagger.test.mjs):
# installs Debian's chromium if missing and the pinned playwright-core,
# builds and starts a real relayd on free loopback ports, waits until its
# API answers, then drives /api/v2/_swagger/ in headless Chromium. The node
# is stopped on exit. Screenshots land in e2e/browser/artifacts/ (git-ignored):
# swagger.png is the operation after Execute, *-full.png the whole page.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ ! -x /usr/bin/chromium ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
fi
(cd e2e/browser && npm ci --no-audit --no-fund --loglevel=error)

tmp=$(mktemp -d)
node_pid=""
cleanup() {
  if [ -n "$node_pid" ] && kill -0 "$node_pid" 2>/dev/null; then
    kill -TERM "$node_pid" 2>/dev/null || true
    # Bounded wait for the graceful shutdown, then force.
    for _ in $(seq 1 50); do kill -0 "$node_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$node_pid" 2>/dev/null || true
    wait "$node_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# free_port prints a TCP port that was free on 127.0.0.1 a moment ago.
free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
api_port=$(free_port)
admin_port=$(free_port)
p2p_port=$(free_port)
token="Br0wser!$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

go build -o "$tmp/relayd" ./cmd/relayd
"$tmp/relayd" --init --identity "$tmp/id" --password p --data "$tmp/data" \
  --apiToken "$token" --testUseWeakCrypto \
  --apiPort "$api_port" --adminPort "$admin_port" --host "127.0.0.1:$p2p_port" \
  >"$tmp/relayd.log" 2>&1 &
node_pid=$!

base="http://127.0.0.1:$api_port"
deadline=$((SECONDS + 60))
until curl -fsS --max-time 2 -H "x-auth-token: $token" "$base/api/v2/account/addresses" >/dev/null 2>&1; do
  if ! kill -0 "$node_pid" 2>/dev/null; then
    echo "relayd exited before its API answered:" >&2; cat "$tmp/relayd.log" >&2; exit 1
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "relayd's API did not answer within 60 s:" >&2; cat "$tmp/relayd.log" >&2; exit 1
  fi
  sleep 0.2
done

RELAYD_API_URL="$base" RELAYD_API_TOKEN="$token" node --test e2e/browser/swagger.test.mjs
