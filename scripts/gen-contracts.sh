#!/usr/bin/env bash
# gen-contracts.sh regenerates the committed contract artefacts: it installs the pinned compiler
# and OpenZeppelin (npm ci, from contracts/package-lock.json), compiles contracts/*.sol into
# combined.json (ABI + bytecode) and generates the abigen v2 Go bindings from it.
#
# Usage: scripts/gen-contracts.sh [outDir]   (default: internal/chain/contracts)
# Set SKIP_NPM_CI=1 to reuse an existing contracts/node_modules (the drift test does).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/internal/chain/contracts}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

if [[ "${SKIP_NPM_CI:-}" != "1" ]]; then
	(cd "$root/contracts" && npm ci --silent --no-audit --no-fund)
fi
node "$root/contracts/compile.js" "$out"
(cd "$root" && go tool abigen --v2 --combined-json "$out/combined.json" --pkg contracts --out "$out/bindings.go")
chmod 0644 "$out/combined.json" "$out/bindings.go"
