#!/usr/bin/env bash
# bench-alternate.sh compares two builds on the 4-node loopback network, alternating them on fresh
# clusters (BENCHMARKS.md): per round, each build's cluster gets `relayctl bench` at 500 msg/s and
# at full speed, with the NEW build's relayctl for both. Results go to OUT/results.txt.
#
# Usage: scripts/bench-alternate.sh OLD_BIN_DIR NEW_BIN_DIR [ROUNDS] [OUT]
#   (each BIN_DIR holds relayd and relayctl, e.g. from `go build -o DIR/ ./cmd/...` in a worktree)
set -euo pipefail
old=${1:?old build's bin dir}; new=${2:?new build's bin dir}; rounds=${3:-3}; out=${4:-bench-alternate}
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
	for b in old new; do
		bin=$old; [[ $b == new ]] && bin=$new
		env="$out/cluster-$b.env"
		rm -f "$env"
		"$bin/relayd" cluster --nodes 4 --mixDelayMean 0 --mixDelayMax 0 --coverRate 0 --relayers 2 \
			--channelFunding 20000 --apiPortBase 33301 --adminPortBase 39501 --p2pPortBase 39091 --chainPort 38545 \
			--env "$env" >"$out/cluster-$r-$b.log" 2>&1 &
		pid=$!
		for _ in $(seq 1 240); do [[ -s $env ]] && break; sleep 0.5; done
		[[ -s $env ]] || { echo "round $r $b: the cluster did not start (see $out/cluster-$r-$b.log)" >&2; kill -INT $pid; exit 1; }
		echo "== round $r $b $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/results.txt"
		"$new/relayctl" bench --env "$env" --messages 6000 --rate 500 --concurrency 32 >>"$out/results.txt" 2>&1
		"$new/relayctl" bench --env "$env" --messages 8000 --rate 0 --concurrency 64 >>"$out/results.txt" 2>&1
		kill -INT $pid
		wait $pid || true
	done
done
