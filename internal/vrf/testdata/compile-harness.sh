#!/bin/sh
# compile-harness.sh compiles contracts/RelayVRF.sol and contracts/RelayVRFHarness.sol with the
# pinned solc and the exact settings of contracts/compile.js (a copy of it, its SOURCES list
# replaced; the real compile.js is not touched), and writes <outDir>/combined.json.
#
# Usage (from anywhere; needs node and `npm ci` done in contracts/):
#   internal/vrf/testdata/compile-harness.sh /tmp/vrfout
# Normally run through the Go test, which also rewrites testdata/harness.json:
#   go test ./internal/vrf -run TestHarnessArtefact -update-harness
set -eu
out=${1:?usage: compile-harness.sh outDir}
root=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -e "s|^const SOURCES = .*|const SOURCES = ['RelayVRF.sol', 'RelayVRFHarness.sol'];|" \
    -e "s|^const here = __dirname;|const here = '$root/contracts';|" \
    "$root/contracts/compile.js" >"$tmp/compile.js"
grep -q "RelayVRFHarness.sol" "$tmp/compile.js" || { echo "compile-harness.sh: SOURCES line of compile.js not found" >&2; exit 1; }
grep -q "const here = '$root/contracts';" "$tmp/compile.js" || { echo "compile-harness.sh: 'here' line of compile.js not found" >&2; exit 1; }
NODE_PATH="$root/contracts/node_modules" node "$tmp/compile.js" "$out"
