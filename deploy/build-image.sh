#!/usr/bin/env bash
# Builds the Rendezvous container image with buildah, pulling nothing: the
# static binary is compiled on this machine (CGO_ENABLED=0, version stamped
# with -ldflags -X) and copied into a FROM scratch image (deploy/Containerfile).
#
#   deploy/build-image.sh [image]      default image: localhost/rendezvous:$VERSION
#
# Environment:
#   VERSION         version to stamp (default: git describe, else "devel")
#   STORAGE_DRIVER  buildah storage driver (default vfs: works without overlay support)
#   BUILDAH_ROOT    optional directory for buildah's storage (root/ and run/ in it)
#                   instead of the system's, e.g. for tests
# Prints the image name on the last line of stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
image=${1:-localhost/rendezvous:$version}
storage=(--storage-driver "${STORAGE_DRIVER:-vfs}")
if [ -n "${BUILDAH_ROOT:-}" ]; then
	storage+=(--root "$BUILDAH_ROOT/root" --runroot "$BUILDAH_ROOT/run")
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
CGO_ENABLED=0 go build \
	-ldflags "-s -w -X github.com/rendezvous/rendezvous/internal/version.override=$version" \
	-o "$ctx/rendezvous" ./cmd/rendezvous
cp deploy/Containerfile "$ctx/Containerfile"
buildah "${storage[@]}" build --quiet --pull=never --layers=false \
	--build-arg "VERSION=$version" -f "$ctx/Containerfile" -t "$image" "$ctx" >&2
echo "$image"
