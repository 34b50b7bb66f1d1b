#!/usr/bin/env bash
# Shows how many paid packets/s ONE relayd relayer forwards on ONE CPU core (issue 18).
#
# Starts a 4-node dev cluster on ports away from the defaults, pins the relayer node's process
# (node 2) to CPU 0 and everything else (the cluster process with the dev chain, nodes 1, 3, 4,
# and the load generator) to CPU 1, then runs `relayctl load`, which pushes pre-built paid
# packets over [node 2, node 4] into node 2 over libp2p and reports its forwarded packets/s, its
# CPU and drops. Stops the cluster on exit.
#
#   scripts/relayer-one-core.sh [relayctl load flags...]      e.g. --packets 60000 --rate 5000
#
# Environment: RELAYER (default 2), RECIPIENT (4), PROFILE=1 to also save a 5 s CPU profile of
# the relayer in the middle of the push (needs `go tool pprof` to read), OUT (a directory for
# the cluster's data, logs and the profile; default a temporary one, removed on exit).
set -euo pipefail
cd "$(dirname "$0")/.."

RELAYER=${RELAYER:-2}
RECIPIENT=${RECIPIENT:-4}
API_BASE=23301 ADMIN_BASE=29501 P2P_BASE=29091 CHAIN_PORT=28545 PROF_BASE=47061
KEEP_OUT=1
if [[ -z "${OUT:-}" ]]; then OUT=$(mktemp -d /tmp/relayer-one-core.XXXXXX); KEEP_OUT=0; fi
mkdir -p "$OUT"
ENV_FILE="$OUT/cluster.env"

if [[ $(nproc) -lt 2 ]]; then echo "needs 2 CPUs" >&2; exit 1; fi
for p in $API_BASE $((API_BASE + 3)) $P2P_BASE $((P2P_BASE + 3)) $CHAIN_PORT; do
	if ss -ltn "sport = :$p" | grep -q LISTEN; then echo "port $p is in use: another cluster runs" >&2; exit 1; fi
done

go build -o bin/ ./cmd/relayd ./cmd/relayctl

CLUSTER_PID=
cleanup() {
	if [[ -n "$CLUSTER_PID" ]] && kill -0 "$CLUSTER_PID" 2>/dev/null; then
		kill -INT "$CLUSTER_PID" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$CLUSTER_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$CLUSTER_PID" 2>/dev/null || true
	fi
	if [[ $KEEP_OUT == 0 ]]; then rm -rf "$OUT"; fi
}
trap cleanup EXIT INT TERM

taskset -c 1 bin/relayd cluster --nodes 4 --mixDelayMean 0 --mixDelayMax 0 --coverRate 0 --relayers 2 \
	--channelFunding 200000 --apiPortBase $API_BASE --adminPortBase $ADMIN_BASE --p2pPortBase $P2P_BASE \
	--chainPort $CHAIN_PORT --profilePortBase $PROF_BASE --data "$OUT/data" --env "$ENV_FILE" \
	>"$OUT/cluster.log" 2>&1 &
CLUSTER_PID=$!

for _ in $(seq 1200); do
	[[ -s "$ENV_FILE" ]] && break
	kill -0 "$CLUSTER_PID" 2>/dev/null || { echo "cluster exited:" >&2; tail -20 "$OUT/cluster.log" >&2; exit 1; }
	sleep 0.1
done
[[ -s "$ENV_FILE" ]] || { echo "cluster not ready in 120 s" >&2; tail -20 "$OUT/cluster.log" >&2; exit 1; }

# node_pid N: the pid of THIS cluster's node N, a child of the cluster process started with
# --apiPort <base+N-1> (and this cluster's data directory).
node_pid() {
	local want=$((API_BASE + $1 - 1)) c args
	for c in $(pgrep -P "$CLUSTER_PID"); do
		args=$(tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null) || continue
		if [[ $args == *"--apiPort $want "* && $args == *"--data $OUT/data/"* ]]; then echo "$c"; return; fi
	done
	echo "no process for node $1" >&2; return 1
}
RELAYER_PID=$(node_pid "$RELAYER")
taskset -a -cp 0 "$RELAYER_PID" >/dev/null
for n in 1 2 3 4; do
	[[ $n == "$RELAYER" ]] && continue
	taskset -a -cp 1 "$(node_pid $n)" >/dev/null
done
echo "cluster ready; node $RELAYER (pid $RELAYER_PID) on CPU 0, the rest on CPU 1"

PROF_PID=
if [[ "${PROFILE:-0}" == 1 ]]; then
	TOKEN=$(bash -c "source '$ENV_FILE' && echo \$RELAY_API_TOKEN")
	# A 5 s profile once the push is under way (it starts after the packets are built).
	(
		for _ in $(seq 600); do
			c=$(curl -s -H "x-auth-token: $TOKEN" "http://127.0.0.1:$((API_BASE + RELAYER - 1))/api/v2/node/metrics" |
				awk '/^relayd_relay_packets_forwarded_total /{print $2}')
			[[ ${c%.*} -gt 2000 ]] 2>/dev/null && break
			sleep 0.5
		done
		curl -s -o "$OUT/relayer.pprof" "http://127.0.0.1:$((PROF_BASE + RELAYER - 1))/debug/pprof/profile?seconds=5"
	) &
	PROF_PID=$!
fi

taskset -c 1 bin/relayctl load --env "$ENV_FILE" --relayer "$RELAYER" --recipient "$RECIPIENT" --cpu 0 "$@"
if [[ -n "$PROF_PID" ]]; then wait "$PROF_PID" || true; fi
if [[ "${PROFILE:-0}" == 1 && -s "$OUT/relayer.pprof" ]]; then
	go tool pprof -top -cum -nodecount 45 bin/relayd "$OUT/relayer.pprof" 2>/dev/null | head -50
fi
