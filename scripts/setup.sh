#!/usr/bin/env bash
# setup.sh installs everything the build and the tests need beyond Go and
# gcc: the pinned Solidity compiler and OpenZeppelin sources (npm ci, from
# contracts/package-lock.json). Safe to run again.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for tool in go node npm gcc; do
	command -v "$tool" >/dev/null || { echo "setup: $tool is required but not installed" >&2; exit 1; }
done
(cd "$root/contracts" && npm ci --silent --no-audit --no-fund)
(cd "$root" && go mod download)
