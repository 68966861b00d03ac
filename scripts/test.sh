#!/usr/bin/env bash
# Runs every test of the project on this machine, installing what the tests need
# when it is missing: redis-server (Debian's package; the tests start their own on
# free ports) and the pinned buf toolchain (checks the API lints and that the
# committed generated code matches proto/). Then every suite, each run even when an
# earlier one failed: buf lint, buf breaking (against the merge base with main; see
# breaking_base) and the generated code, go vet, go test -race
# ./..., clients/test.sh (installs Debian's python3/protoc, builds the Python wheel and
# its locked environments with the pinned uv, and runs
# npm ci), the Helm chart's tests (deploy/helm/test.sh), the bench module's vet, the
# chaos suite at a small size (bench/chaos.sh), and the install paths
# (scripts/release-check.sh: the GoReleaser snapshot, go install from a clean module
# cache, the npm package from its artifact). go test runs every command block of
# README.md and docs/ (cmd/arbiter/docs_test.go), with grpcurl installed for them.
# The last line says which suites failed; the exit code is 1 if any did.
set -euo pipefail
cd "$(dirname "$0")/.."

BUF_VERSION=v1.75.0
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
GRPCURL_VERSION=v1.9.4 # the README's walkthrough, which cmd/arbiter/docs_test.go runs

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
# (go install leaves grpcurl's own -version unset: read the module version instead.)
if ! command -v grpcurl >/dev/null 2>&1 || ! go version -m "$(command -v grpcurl)" | grep -q "github.com/fullstorydev/grpcurl[[:space:]]*$GRPCURL_VERSION"; then
  echo "== installing grpcurl $GRPCURL_VERSION"
  go install "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION"
fi
# Every command block of README.md and docs/ runs (cmd/arbiter/docs_test.go): none is
# skipped for want of grpcurl or redis-server.
export ARBITER_DOCS_ALL=1

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

# breaking_base sets BASE to the commit whose proto/ `buf breaking` compares against:
# the merge base of HEAD with main (origin/main, else the local main), so a branch is
# checked against the API it will land on, however many commits it has; on main itself
# (CI's clean clone of main), where the merge base is HEAD, the previous commit, the
# last landed API. A shallow clone is unshallowed from its remote first (the merge base
# may lie beyond its depth); without a remote, or without a main to compare with, it
# fails and says why rather than skipping the check. BASE is empty only on a
# repository's first commit (no earlier API).
breaking_base() {
  BASE=""
  if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "buf breaking: not a git checkout: there is no earlier API to compare proto/ with (run the tests in a clone)" >&2
    return 1
  fi
  local remote=""
  if git remote get-url origin >/dev/null 2>&1; then remote=origin; else remote="$(git remote | sed -n 1p)"; fi
  if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    if [ -z "$remote" ]; then
      echo "buf breaking: shallow clone without a remote: the merge base with main may be missing from it; clone with the full history (or add a remote)" >&2
      return 1
    fi
    echo "buf breaking: shallow clone: fetching the full history from $remote"
    if ! git fetch --quiet --unshallow "$remote"; then
      echo "buf breaking: git fetch --unshallow $remote failed: cannot find the merge base with main" >&2
      return 1
    fi
  fi
  if [ -n "$remote" ] && ! git rev-parse -q --verify "refs/remotes/$remote/main^{commit}" >/dev/null; then
    # A single-branch clone knows no main: fetch it.
    git fetch --quiet "$remote" "+refs/heads/main:refs/remotes/$remote/main" || true
  fi
  local main=""
  for ref in ${remote:+"refs/remotes/$remote/main"} refs/heads/main; do
    if git rev-parse -q --verify "$ref^{commit}" >/dev/null; then
      main="$ref"
      break
    fi
  done
  if [ -z "$main" ]; then
    echo "buf breaking: neither ${remote:-origin}/main nor main exists: cannot find the merge base with main" >&2
    return 1
  fi
  local base
  if ! base="$(git merge-base HEAD "$main")"; then
    echo "buf breaking: HEAD shares no history with $main" >&2
    return 1
  fi
  if [ "$base" = "$(git rev-parse HEAD)" ]; then
    # HEAD is main (or behind it): the last landed API is the previous commit.
    if ! base="$(git rev-parse -q --verify 'HEAD~1^{commit}')"; then
      echo "buf breaking: HEAD is the first commit: no earlier API to compare with"
      return 0
    fi
  fi
  BASE="$base"
}

api() {
  buf lint || return 1
  # A change to proto/ that breaks wire or source compatibility with the API it lands
  # on (breaking_base) fails.
  breaking_base || return 1
  if [ -n "$BASE" ]; then
    echo "buf breaking against $(git log -1 --format='%h %s' "$BASE")"
    buf breaking --against ".git#ref=$BASE" || return 1
  fi
  buf generate || return 1
  if ! git diff --exit-code --stat -- proto; then
    echo "proto/: generated code differs from what is committed: run 'buf generate' and commit" >&2
    return 1
  fi
}

suite "buf lint, and generated code up to date" api
suite "go vet" go vet ./...
suite "go test -race ./..." go test -race -count=1 ./...
suite "clients (Python, Node)" ./clients/test.sh
suite "timeline picture in headless Chromium (timeline/test.sh)" ./timeline/test.sh
suite "Helm chart and Dockerfile (deploy/helm, nested Go module)" ./deploy/helm/test.sh
suite "bench/ builds (nested Go module; the load test itself is bench/run.sh), bench/report's and bench/load's tests" bash -c 'cd bench && go vet ./... && go test ./report ./load'
suite "chaos: replicas and Redis killed and frozen, a lagging Redis replica promoted, the embedded store killed (bench/chaos.sh, small)" env SESSIONS=30 ./bench/chaos.sh
suite "install paths: the GoReleaser snapshot, go install from a clean module cache, the npm package from its artifact (scripts/release-check.sh)" ./scripts/release-check.sh

if [ "${#failed[@]}" -gt 0 ]; then
  echo "scripts/test.sh: ${#failed[@]} suite(s) failed: ${failed[*]}"
  exit 1
fi
echo "scripts/test.sh: every suite passed"
