#!/usr/bin/env bash
# Builds the arbiter binary with its version and commit stamped in, for
# `arbiter --version` and the arbiter_build_info metric:
#
#   scripts/build.sh                          # -> bin/arbiter
#   scripts/build.sh -o /usr/local/bin/arbiter
#   scripts/build.sh --release                # static, as the Dockerfile and .goreleaser.yaml build it
#   VERSION=0.1.0 scripts/build.sh --release  # a release
#   GOOS=linux GOARCH=arm64 scripts/build.sh --release -o bin/arbiter-linux-arm64
#   scripts/build.sh --ldflags                # print the -ldflags value and exit
#   docker buildx build $(scripts/build.sh --docker-args) -t REGISTRY/arbiter:0.1.0 .
#                                             # the same stamp in the image (and its OCI labels)
#
# The default build compiles with the flags a plain `go build` uses (the stamp only
# changes the link), so after `go build` or `go test` it reuses their build cache and
# takes as long as `go build` does: a few seconds. --release builds as the Dockerfile
# does: static (CGO_ENABLED=0), -trimpath (no local paths in the binary); those flags
# change every package's cache key, so its first build compiles everything once.
#
# The stamp does not depend on -buildvcs (GOFLAGS=-buildvcs=false, or a source tree
# without .git, leaves the toolchain nothing to record):
# VERSION is $VERSION, else the nearest v* tag (git describe --tags --match 'v[0-9]*',
# without the v; -dirty with uncommitted changes to tracked files), else "devel".
# COMMIT is $COMMIT, else `git rev-parse HEAD` (-dirty likewise), else empty: the
# binary then reports what the Go toolchain recorded (vcs.revision), or "unknown".
set -euo pipefail
cd "$(dirname "$0")/.."

pkg=github.com/voicearbiter/arbiter/internal/buildinfo
out=bin/arbiter
mode=build
release=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift 2 ;;
    -o=*) out="${1#-o=}"; shift ;;
    --release) release=1; shift ;;
    --ldflags) mode=ldflags; shift ;;
    --docker-args) mode=docker; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "scripts/build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

in_git() { git rev-parse --is-inside-work-tree >/dev/null 2>&1; }
dirty() { [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; }

version="${VERSION:-}"
if [ -z "$version" ] && in_git; then
  version="$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || true)"
  version="${version#v}"
fi
version="${version:-devel}"

commit="${COMMIT:-}"
if [ -z "$commit" ] && in_git; then
  commit="$(git rev-parse HEAD)"
  if dirty; then commit="$commit-dirty"; fi
fi

ldflags="-s -w -X $pkg.version=$version -X $pkg.commit=$commit"
case "$mode" in
  ldflags) printf '%s\n' "$ldflags"; exit 0 ;;
  docker) printf -- '--build-arg VERSION=%s --build-arg REVISION=%s\n' "$version" "$commit"; exit 0 ;;
esac

mkdir -p "$(dirname "$out")"
if [ -n "$release" ]; then
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out" ./cmd/arbiter
else
  go build -ldflags "$ldflags" -o "$out" ./cmd/arbiter
fi
echo "built $out: $("$out" --version 2>/dev/null || echo "arbiter $version (commit ${commit:-unknown}; cross-compiled)")"
