#!/usr/bin/env bash
# Browser tests, in headless Chromium: installs Debian's chromium if missing
# and the pinned playwright-core and axe-core, runs the unit tests of the
# console's modules (e2e/browser/console-unit.test.mjs), builds relayd, then
#  1. the REST API's reference UI (e2e/browser/swagger.test.mjs): starts a
#     real relayd on free loopback ports, waits until its API answers, and
#     drives /api/v2/_swagger/;
#  2. the web admin console (e2e/browser/console.test.mjs): starts
#     `relayd cluster --nodes 4` (a dev chain, a full mesh of channels, a 2 s
#     closure period; a node killed is restarted on its data, and the chain
#     drill's gate lets the test take the chain away with SIGUSR1 to the
#     cluster, RELAY_CLUSTER_PID) on free ports, waits for its env file, and
#     drives the consoles of nodes 1 and 2, with axe-core's accessibility check.
# The node and the cluster are stopped on exit. Screenshots land in
# e2e/browser/artifacts/ (git-ignored): swagger*.png for the reference UI,
# console*.png for the console.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ ! -x /usr/bin/chromium ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
fi
(cd e2e/browser && npm ci --no-audit --no-fund --loglevel=error)
# The console's pure modules first: a second, no browser needed.
node --test e2e/browser/console-unit.test.mjs

tmp=$(mktemp -d)
node_pid=""
cluster_pid=""
# stop ends one of our processes: SIGTERM, a bounded wait for the graceful
# shutdown (the cluster stops its nodes and chain), then SIGKILL.
stop() {
  local pid=$1 tenths=$2
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 "$tenths"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
}
cleanup() {
  stop "$node_pid" 50
  stop "$cluster_pid" 150
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
stop "$node_pid" 50
node_pid=""

# The console needs nodes with channels between them, hence a chain: a
# small cluster. Each port base starts a run of 4 ports; a random base that
# turns out busy makes the cluster exit at once with status 2 naming the
# flag, and another is tried.
for attempt in 1 2 3; do
  base=$((20000 + (RANDOM % 400) * 100))
  rm -rf "$tmp/cluster" "$tmp/cluster.env"
  "$tmp/relayd" cluster --nodes 4 --relayers 2 --closurePeriod 2s --apiToken "$token" \
    --restartNodes --restartDelay 1s --chainDrill \
    --apiPortBase "$base" --adminPortBase $((base + 10)) --p2pPortBase $((base + 20)) \
    --chainPort $((base + 30)) --data "$tmp/cluster" --env "$tmp/cluster.env" \
    >"$tmp/cluster.log" 2>&1 &
  cluster_pid=$!
  deadline=$((SECONDS + 90))
  until [ -f "$tmp/cluster.env" ]; do
    if ! kill -0 "$cluster_pid" 2>/dev/null; then break; fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "relayd cluster was not ready within 90 s:" >&2; cat "$tmp/cluster.log" >&2; exit 1
    fi
    sleep 0.2
  done
  [ -f "$tmp/cluster.env" ] && break
  wait "$cluster_pid" && rc=0 || rc=$?
  cluster_pid=""
  if [ "$rc" -ne 2 ] || [ "$attempt" -eq 3 ]; then
    echo "relayd cluster failed (exit $rc):" >&2; cat "$tmp/cluster.log" >&2; exit 1
  fi
done

(
  # shellcheck disable=SC1091
  source "$tmp/cluster.env"
  RELAY_CLUSTER_PID=$cluster_pid node --test e2e/browser/console.test.mjs
) || { echo "relayd cluster output:" >&2; tail -n 40 "$tmp/cluster.log" >&2; exit 1; }
