#!/usr/bin/env bash
# setup.sh installs everything the build and the tests need beyond Go and
# gcc: the pinned Solidity compiler and OpenZeppelin sources (npm ci, from
# contracts/package-lock.json), and, as root, tc for the network-namespace
# tests. Safe to run again.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for tool in go node npm gcc; do
	command -v "$tool" >/dev/null || { echo "setup: $tool is required but not installed" >&2; exit 1; }
done
# tc (iproute2) shapes links in the network-namespace tests, which run as root only.
if [ "$(id -u)" = 0 ] && ! command -v tc >/dev/null; then
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends iproute2
fi
(cd "$root/contracts" && npm ci --silent --no-audit --no-fund)
(cd "$root" && go mod download)
