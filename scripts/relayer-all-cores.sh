#!/usr/bin/env bash
# Compares what ONE relayd relayer forwards on one core and on two (issue 28, "All cores"), in one
# run of one build: the configurations alternate.
#
# Starts a 4-node dev cluster on ports away from the defaults (unpinned, so that every node starts
# with both CPUs and one relay worker per CPU), then pins every process but the relayer (node 2:
# the cluster process with the dev chain, nodes 1, 3, 4 and the load generator) to CPU 1, and runs
# `relayctl load` ROUNDS times per configuration, alternating: the relayer pinned to CPU 0 (one
# core), then allowed CPUs 0 and 1 (two cores, the second shared with the rest). Each run pushes
# pre-built paid packets over [node 2, node 4] in a closed loop (--window) and reports node 2's
# forwarded packets/s, its CPU per packet, and the recipient's and the generator's CPU.
#
#   scripts/relayer-all-cores.sh [relayctl load flags...]      e.g. --packets 40000 --window 512
#
# Environment: ROUNDS (default 3), RELAYER (2), RECIPIENT (4), OUT (a directory for the cluster's
# data, logs and the runs' JSON reports; default a temporary one, removed on exit).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
RELAYER=${RELAYER:-2}
RECIPIENT=${RECIPIENT:-4}
API_BASE=23401 ADMIN_BASE=29601 P2P_BASE=29191 CHAIN_PORT=28645 PROF_BASE=47161
KEEP_OUT=1
if [[ -z "${OUT:-}" ]]; then OUT=$(mktemp -d /tmp/relayer-all-cores.XXXXXX); KEEP_OUT=0; fi
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

bin/relayd cluster --nodes 4 --mixDelayMean 0 --mixDelayMax 0 --coverRate 0 --sendRate 0 --autoRedeem=false --autoFund=false --relayers 2 \
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
taskset -a -cp 1 "$CLUSTER_PID" >/dev/null
for n in 1 2 3 4; do
	[[ $n == "$RELAYER" ]] && continue
	taskset -a -cp 1 "$(node_pid $n)" >/dev/null
done
echo "cluster ready; node $RELAYER (pid $RELAYER_PID) alternates between CPU 0 and CPUs 0-1, the rest on CPU 1"

printf '%-6s %-6s %12s %10s %8s %12s %10s %8s %10s\n' round cores "forwarded/s" "best 1 s" "µs/pkt" "recipient µs" "G µs/pkt" dropped "tickets"
for round in $(seq "$ROUNDS"); do
	for cores in 1 2; do
		cpus=0
		[[ $cores == 2 ]] && cpus=0,1
		taskset -a -cp "$cpus" "$RELAYER_PID" >/dev/null
		sleep 2 # the Go runtime re-reads the CPUs it may use about once a second
		json="$OUT/run-$round-$cores.json"
		taskset -c 1 bin/relayctl load --env "$ENV_FILE" --relayer "$RELAYER" --recipient "$RECIPIENT" --json "$@" \
			>"$json" 2>"$OUT/run-$round-$cores.log"
		python3 - "$json" "$round" "$cores" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
g = 1e6 * r["GeneratorCPU"] / max(r["Pushed"], 1)
print("%-6s %-6s %12.0f %10.0f %8.1f %12.1f %10.1f %8.0f %10.0f" % (sys.argv[2], sys.argv[3], r["ForwardedPerSec"],
      r["PeakPerSec"], r["MicrosPerPacket"], r["RecipientMicrosPerPacket"], g, sum((r["Dropped"] or {}).values()), r["TicketsAcked"]))
PY
	done
done
