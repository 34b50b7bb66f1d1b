#!/usr/bin/env bash
# Compares relayd's packet creation and relay hop with the original 2022 node's, in alternated
# pairs on this machine, and prints the ratios (the original's time over relayd's).
#
#   scripts/hopr-compare/run.sh [pairs (5)] [iterations of the original's side (200)]
#
# The original's 200 iterations take about a second on each side (create, hop); relayd's
# benchmarks run for a second each (-test.benchtime 1s), so both sides average over windows of
# about the same length.
#
# The original: npm @hoprnet/hopr-core 1.93.6 and @hoprnet/hopr-utils 1.93.7 (package-lock.json
# pins the whole tree), timed by bench.mjs: Packet.create over 2 relayers and the recipient (PoR
# values, the ticket's and the acknowledgement challenge's signatures included) and one
# relayer's whole hop. relayd: BenchmarkPacketCreateEqualWork (internal/bench: the packet, the
# proof-of-relay values, the first ticket signed), the same with the ephemeral keys from a
# filled packet.EphemeralPool (BenchmarkPacketCreateEqualWorkPooled: a request's cost when idle
# time precomputed them; the CPU is spent all the same) and BenchmarkRelayHop/paid
# (internal/relay).
# Each pair runs both sides back to back, the order swapped every pair, so both see the same
# machine state; only the ratios within a pair mean anything on a shared machine.
#
# Not part of `make test`: it needs the npm registry (once) and takes a minute or two.
set -euo pipefail

pairs=${1:-5}
iters=${2:-200}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$here"

# The packages install without their install scripts (.npmrc): one of hopr-core's dependencies
# (@koush/wrtc, for WebRTC, which the packet code does not use) downloads a prebuilt binary
# from outside the npm registry and fails here. secp256k1 ships its native build for
# linux-x64 in the package, so nothing needs compiling.
if [ ! -d node_modules/@hoprnet/hopr-core ]; then
	npm ci --no-audit --no-fund
fi
# The published hopr-utils imports ../../../core/lib/core_types.js, the monorepo's layout
# (packages/utils next to packages/core); in node_modules that is @hoprnet/core, which hopr-core
# is. Link it wherever a copy of hopr-utils sits.
for d in node_modules/@hoprnet node_modules/@hoprnet/*/node_modules/@hoprnet; do
	[ -d "$d/hopr-utils" ] || continue
	[ -e "$d/core" ] || ln -s "$(realpath --relative-to="$d" node_modules/@hoprnet/hopr-core)" "$d/core"
done
if ! node -e "require('secp256k1/bindings')" 2>/dev/null; then
	echo "run.sh: the native secp256k1 binding does not load; the original would fall back to pure JS (elliptic), which is not what it ran with" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go test -c -o "$tmp/bench.test" ./internal/bench)
hop=1
if ! (cd "$root" && go test -c -o "$tmp/relay.test" ./internal/relay) 2>"$tmp/relay-build.log"; then
	echo "run.sh: internal/relay's tests do not build now; comparing packet creation only:" >&2
	head -5 "$tmp/relay-build.log" >&2
	hop=0
fi

js() { node --experimental-wasm-modules --no-warnings bench.mjs "$iters"; }
# go_create prints relayd's create with every key computed in the request, then with the
# ephemeral keys taken from a pool that idle time filled.
go_create() {
	(cd "$root/internal/bench" && "$tmp/bench.test" -test.run '^$' -test.bench 'PacketCreateEqualWork(Pooled)?$' -test.benchtime 1s) |
		awk '/^BenchmarkPacketCreateEqualWork/ { for (i = 1; i <= NF; i++) if ($(i+1) == "ns/op") printf "%s ", $i } END { print "" }'
}
go_hop() {
	[ "$hop" = 1 ] || { echo 0; return; }
	(cd "$root/internal/relay" && "$tmp/relay.test" -test.run '^$' -test.bench 'RelayHop/paid$' -test.benchtime 1s) |
		awk '/^BenchmarkRelayHop\/paid/ { for (i = 1; i <= NF; i++) if ($(i+1) == "ns/op") print $i }'
}

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3), node $(node --version), $pairs pairs of $iters iterations"
printf '%-5s %14s %10s %7s %11s %7s   %12s %10s %7s\n' pair "orig create µs" "relayd µs" ratio "pooled µs" ratio "orig hop µs" "relayd µs" ratio
: >"$tmp/pairs"
for p in $(seq 1 "$pairs"); do
	if [ $((p % 2)) = 1 ]; then
		j=$(js); gc=$(go_create); gh=$(go_hop)
	else
		gc=$(go_create); gh=$(go_hop); j=$(js)
	fi
	echo "$j $gc $gh" >>"$tmp/pairs"
	node -e '
		const [j, gc, gp, gh, p] = [JSON.parse(process.argv[1]), +process.argv[2], +process.argv[3], +process.argv[4], process.argv[5]];
		const f = (x) => (x / 1e3).toFixed(1);
		console.log(p.padEnd(5), f(j.createNs).padStart(14), f(gc).padStart(10), (j.createNs / gc).toFixed(2).padStart(7),
			f(gp).padStart(11), (j.createNs / gp).toFixed(2).padStart(7),
			"  ", f(j.hopNs).padStart(12), (gh ? f(gh) : "-").padStart(10), (gh ? (j.hopNs / gh).toFixed(2) : "-").padStart(7));
	' "$j" $gc "$gh" "$p"
done
node -e '
	const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
	const rows = lines.map((l) => { const i = l.lastIndexOf("}"); const [gc, gp, gh] = l.slice(i + 1).trim().split(/ +/).map(Number); return { j: JSON.parse(l.slice(0, i + 1)), gc, gp, gh }; });
	const med = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
	const show = (name, xs) => console.log(`${name}: median ${med(xs).toFixed(2)}x (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}) over ${xs.length} pairs`);
	show("packet creation, equal work (original Packet.create / relayd)", rows.map((r) => r.j.createNs / r.gc));
	show("the same without the original acknowledgement-challenge signature", rows.map((r) => (r.j.createNs - r.j.ackChallengeSignNs) / r.gc));
	show("per request with relayd ephemeral keys from the pool (idle time computed them)", rows.map((r) => r.j.createNs / r.gp));
	if (rows[0].gh > 0) show("relay hop (original / relayd BenchmarkRelayHop/paid)", rows.map((r) => r.j.hopNs / r.gh));
' "$tmp/pairs"
