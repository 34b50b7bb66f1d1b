#!/usr/bin/env bash
# Builds relayd's container image without a container daemon and checks it
# (docs/PACKAGING.md):
#  1. a static linux relayd (CGO_ENABLED=0, -trimpath) for GOARCH (this
#     machine's by default; GOARCH=arm64 for another);
#  2. packaging/image (a Go module of its own, on go-containerregistry) puts it
#     FROM scratch beside a nonroot user 65532, this host's CA certificates
#     (Debian's ca-certificates) and a /data volume, with the entrypoint, ports,
#     environment and health check, and writes a `docker save` tarball;
#  3. e2e's TestImage opens the tarball and checks it, then runs its binary as
#     the container would (skip with CHECK=0).
# Usage: scripts/build-image.sh [OUT]   (default bin/relayd-image.tar)
#   TAG=relayd:0.1.0   the name docker load gives the image (default relayd:dev)
# Files carry the commit's time (or SOURCE_DATE_EPOCH): the same commit and
# certificates give the same image digest. Load it with `docker load -i OUT`,
# `podman load -i OUT`, or push it with `skopeo copy docker-archive:OUT docker://…`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=${1:-bin/relayd-image.tar}
tag=${TAG:-relayd:dev}
arch=${GOARCH:-$(go env GOARCH)}
cacerts=${CACERTS:-/etc/ssl/certs/ca-certificates.crt}
if [ ! -s "$cacerts" ]; then
  echo "build-image: no CA certificates at $cacerts (apt-get install ca-certificates, or set CACERTS)" >&2
  exit 1
fi

if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
else
  created=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)
fi
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  revision="$revision-modified"
fi
version=$(sed -n 's/^const Release = "\(.*\)"$/\1/p' internal/version/version.go)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$(dirname "$out")"

# -buildvcs=true in a git checkout: relayd version then names the commit (and -modified).
vcs=false
if git rev-parse --git-dir >/dev/null 2>&1; then vcs=true; fi
echo "build-image: relayd for linux/$arch"
CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -buildvcs=$vcs -o "$tmp/relayd" ./cmd/relayd

echo "build-image: $tag ($created, $revision)"
abs_out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
# The builder and the check run on this machine: GOARCH names the image's architecture only.
(cd packaging/image && env -u GOARCH -u GOOS go run . -binary "$tmp/relayd" -cacerts "$cacerts" -out "$abs_out" \
  -tag "$tag" -arch "$arch" -created "$created" -version "$version" -revision "$revision")

if [ "${CHECK:-1}" != 0 ]; then
  echo "build-image: checking $out (e2e TestImage)"
  RELAYD_IMAGE=$abs_out env -u GOARCH -u GOOS go test -count=1 -run '^TestImage$' -v ./e2e/
fi
