#!/usr/bin/env bash
# Runs every test of the project on this machine, installing what the tests need
# when it is missing: redis-server (Debian's package; the tests start their own on
# free ports) and the pinned buf toolchain (checks the API lints and that the
# committed generated code matches proto/). Then every suite, each run even when an
# earlier one failed: buf lint/breaking and the generated code, go vet, go test -race
# ./..., clients/test.sh (installs Debian's python3-grpcio/protobuf/protoc and runs
# npm ci), the Helm chart's tests (deploy/helm/test.sh), the bench module's vet and
# the chaos suite at a small size (bench/chaos.sh).
# The last line says which suites failed; the exit code is 1 if any did.
set -euo pipefail
cd "$(dirname "$0")/.."

BUF_VERSION=v1.75.0
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  echo "== installing redis-server (Debian package)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools >/dev/null
fi

GOBIN="$(go env GOPATH)/bin"
export PATH="$GOBIN:$PATH"
if ! buf --version 2>/dev/null | grep -qx "${BUF_VERSION#v}"; then
  echo "== installing buf $BUF_VERSION"
  go install "github.com/bufbuild/buf/cmd/buf@$BUF_VERSION"
fi
if ! protoc-gen-go --version 2>/dev/null | grep -q "${PROTOC_GEN_GO_VERSION}"; then
  go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
fi
if ! protoc-gen-go-grpc --version 2>/dev/null | grep -q "${PROTOC_GEN_GO_GRPC_VERSION#v}"; then
  go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
fi

failed=()
# suite NAME CMD...: runs one suite; a failure is reported at the end, not fatal.
suite() {
  local name="$1" t0=$SECONDS
  shift
  echo "== $name"
  if "$@"; then
    echo "-- $name: ok ($((SECONDS - t0))s)"
  else
    echo "-- $name: FAILED ($((SECONDS - t0))s)"
    failed+=("$name")
  fi
}

api() {
  buf lint || return 1
  # A change to proto/ that breaks wire or source compatibility with the previous
  # commit fails (CI's clone is main, so the previous commit is the last landed API).
  if [ -d .git ] && git rev-parse -q --verify HEAD~1 >/dev/null; then
    buf breaking --against '.git#ref=HEAD~1' || return 1
  fi
  buf generate || return 1
  if [ -d .git ] && ! git diff --exit-code --stat -- proto; then
    echo "proto/: generated code differs from what is committed: run 'buf generate' and commit" >&2
    return 1
  fi
}

suite "buf lint, and generated code up to date" api
suite "go vet" go vet ./...
suite "go test -race ./..." go test -race -count=1 ./...
suite "clients (Python, Node)" ./clients/test.sh
suite "Helm chart and Dockerfile (deploy/helm, nested Go module)" ./deploy/helm/test.sh
suite "bench/ builds (nested Go module; the load test itself is bench/run.sh)" bash -c 'cd bench && go vet ./...'
suite "chaos: replicas and Redis killed and frozen, the embedded store killed (bench/chaos.sh, small)" env SESSIONS=30 ./bench/chaos.sh

if [ "${#failed[@]}" -gt 0 ]; then
  echo "scripts/test.sh: ${#failed[@]} suite(s) failed: ${failed[*]}"
  exit 1
fi
echo "scripts/test.sh: every suite passed"
