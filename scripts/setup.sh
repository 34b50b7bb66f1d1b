#!/usr/bin/env bash
# setup.sh installs everything the build and the tests need beyond Go and
# gcc: the pinned Solidity compiler and OpenZeppelin sources (npm ci, from
# contracts/package-lock.json), geth at the go-ethereum version go.mod pins
# (go install into $(go env GOPATH)/bin, for e2e/geth_test.go; about 2.5
# minutes on 2 cores), promtool at a pinned version (go install, for e2e/alerts_test.go; about 5
# minutes on 2 cores), and, as root, tc and iptables for the network-namespace tests.
# Safe to run again. SKIP_GETH=1 skips geth, SKIP_PROMTOOL=1 promtool.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for tool in go node npm gcc; do
	command -v "$tool" >/dev/null || { echo "setup: $tool is required but not installed" >&2; exit 1; }
done
# tc (iproute2) shapes links in the network-namespace tests, which run as root only; iptables
# drops a share of a node's packets at random there (the statistic match) in the loss tests.
if [ "$(id -u)" = 0 ]; then
	missing=()
	command -v tc >/dev/null || missing+=(iproute2)
	command -v iptables >/dev/null || missing+=(iptables)
	if [ "${#missing[@]}" -gt 0 ]; then
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
	fi
fi
(cd "$root/contracts" && npm ci --silent --no-audit --no-fund)
(cd "$root" && go mod download)
# geth for the end-to-end test against a separate `geth --dev` process (e2e/geth_test.go, which
# is skipped without it), at exactly the go-ethereum version the module builds with.
if [ "${SKIP_GETH:-}" != 1 ]; then
	geth_version="$(cd "$root" && go list -m -f '{{.Version}}' github.com/ethereum/go-ethereum)"
	gobin="$(go env GOBIN)"
	[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
	if [ -x "$gobin/geth" ] && "$gobin/geth" version 2>/dev/null | grep -q "^Version: ${geth_version#v}"; then
		echo "setup: geth ${geth_version} already in $gobin"
	elif (cd "$root" && go install "github.com/ethereum/go-ethereum/cmd/geth@${geth_version}"); then
		echo "setup: installed geth ${geth_version} in $gobin"
	else
		echo "setup: geth ${geth_version} did not build; e2e/geth_test.go will be skipped" >&2
	fi
fi
# promtool checks the Prometheus alerting rules, their unit tests and the Grafana dashboard's
# queries (e2e/alerts_test.go; CI requires it: RELAYD_REQUIRE_PROMTOOL=1 in .ci/run). Pinned to
# Prometheus 3.16.0 (its Go module is v0.316.0), built from the Go module proxy: about 5 minutes
# on 2 cores with an empty module cache (timed 5m0s), once per machine: skipped when that version
# is installed. (Debian's prometheus package, whose promtool unpacks in seconds, is 2.42 on
# bookworm and changes with the release, so it pins nothing.)
if [ "${SKIP_PROMTOOL:-}" != 1 ]; then
	promtool_version=v0.316.0
	gobin="$(go env GOBIN)"
	[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
	if [ -x "$gobin/promtool" ] && go version -m "$gobin/promtool" 2>/dev/null |
		grep -Eq "^[[:space:]]*mod[[:space:]]+github.com/prometheus/prometheus[[:space:]]+${promtool_version}([[:space:]]|$)"; then
		echo "setup: promtool ${promtool_version} already in $gobin"
	else
		t0=$SECONDS
		(cd "$root" && go install "github.com/prometheus/prometheus/cmd/promtool@${promtool_version}")
		echo "setup: installed promtool ${promtool_version} in $gobin in $((SECONDS - t0))s"
	fi
fi
