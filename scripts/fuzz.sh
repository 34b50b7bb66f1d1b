#!/usr/bin/env bash
# Runs every Go fuzz target of the module, one after another, for FUZZTIME each
# (Go fuzzes one target per invocation). Usage:
#
#   scripts/fuzz.sh                       # every target, FUZZTIME (default 30s) each
#   FUZZTIME=10m scripts/fuzz.sh          # the long run
#   FUZZPARALLEL=1 scripts/fuzz.sh        # one worker per target (default: GOMAXPROCS)
#   scripts/fuzz.sh ./internal/packet/    # only these packages
#   FUZZMATCH=Peel scripts/fuzz.sh        # only targets whose name matches
#   FUZZMINIMIZETIME=60s scripts/fuzz.sh  # time spent shrinking each new input (default 5s)
#
# Each target's output goes to $FUZZLOG/<pkg>_<target>.log (default: a fresh temp
# directory); at the end a Markdown table lists, per target, the executions and new
# interesting inputs of the last `execs:` line and whether it failed. A failing input
# is written by go test under the package's testdata/fuzz/<Target>/, where plain
# `go test` replays it. Exit status is non-zero when any target failed.
set -uo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
FUZZMATCH=${FUZZMATCH:-.}
# Go shrinks every new interesting input for up to -fuzzminimizetime (60s by default) without
# reporting the executions; at 60s a short run can spend most of its time there.
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-5s}
FUZZLOG=${FUZZLOG:-$(mktemp -d -t relayd-fuzz.XXXXXX)}
mkdir -p "$FUZZLOG"
parallel=()
if [[ -n "${FUZZPARALLEL:-}" ]]; then parallel=(-parallel "$FUZZPARALLEL"); fi

if [[ $# -gt 0 ]]; then
	pkgs=("$@")
else
	# Only packages whose tests declare a fuzz target: listing every package would build
	# every test binary.
	mapfile -t pkgs < <(grep -rlE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' --include='*_test.go' . |
		xargs -n1 dirname | sort -u | sed 's|^\./||; s|^|./|; s|$|/|')
fi

rows=()
failed=0
for pkg in "${pkgs[@]}"; do
	mapfile -t targets < <($GO test -list '^Fuzz' "$pkg" | grep '^Fuzz' | grep -E -- "$FUZZMATCH")
	for target in "${targets[@]}"; do
		log="$FUZZLOG/$(echo "${pkg#./}" | tr '/' '_')${target}.log"
		echo "== $pkg $target ($FUZZTIME)"
		start=$(date +%s)
		$GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "${parallel[@]}" "$pkg" >"$log" 2>&1
		rc=$?
		secs=$(($(date +%s) - start))
		last=$(grep 'execs:' "$log" | tail -n1)
		execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
		newi=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
		status=ok
		if [[ $rc -ne 0 ]]; then
			status="FAILED (see $log)"
			failed=1
			grep -E -- '--- FAIL|Failing input written|panic:|fuzz_test.go|_test.go:[0-9]+' "$log" | head -n 8
		fi
		echo "   $status: ${execs:-?} execs, ${newi:-?} new interesting, ${secs}s"
		rows+=("| ${pkg#./} | $target | $FUZZTIME (${secs}s wall) | ${execs:-?} | ${newi:-?} | $status |")
	done
done

echo
echo "| package | fuzzer | duration | executions | new interesting | result |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "logs: $FUZZLOG"
exit $failed
