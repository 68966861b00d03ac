#!/usr/bin/env bash
# Runs every test of the project on this machine, installing what the tests need
# when it is missing: redis-server (Debian's package; the tests start their own on
# free ports) and the pinned buf toolchain (checks the API lints and that the
# committed generated code matches proto/). Then: go test -race ./..., then
# clients/test.sh (installs Debian's python3-grpcio/protobuf/protoc and runs npm ci),
# then the Helm chart's tests (deploy/helm/test.sh).
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

echo "== buf lint, and generated code up to date"
buf lint
# A change to proto/ that breaks wire or source compatibility with the previous commit
# fails (CI's clone is main, so the previous commit is the last landed API).
if [ -d .git ] && git rev-parse -q --verify HEAD~1 >/dev/null; then
  buf breaking --against '.git#ref=HEAD~1'
fi
buf generate
if [ -d .git ] && ! git diff --exit-code --stat -- proto; then
  echo "proto/: generated code differs from what is committed: run 'buf generate' and commit" >&2
  exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test -race ./..."
go test -race -count=1 ./...

echo "== clients (Python, Node)"
./clients/test.sh

echo "== Helm chart and Dockerfile (deploy/helm, nested Go module)"
./deploy/helm/test.sh

echo "== bench/ builds (nested Go module; the load test itself is bench/run.sh)"
(cd bench && go vet ./...)
