#!/usr/bin/env bash
# Chart and image checks without helm, kubectl or a Docker engine: the tests in
# charttest/ (a nested Go module, so the main module stays free of Helm/Kubernetes
# dependencies) lint the chart with Helm's Go SDK, render it with the default and the
# production values, decode every manifest strictly into the Kubernetes API types,
# check values.schema.json, and parse the Dockerfile and .dockerignore with BuildKit's
# own parser.
#
#   deploy/helm/test.sh                 # ~15 s warm; the first run downloads and compiles
#                                       #   Helm and Kubernetes packages (a few minutes on 2 cores)
#   deploy/helm/test.sh --docker-build  # also run the Dockerfile's `go build` step on the
#                                       #   .dockerignore'd context and check the binary is static
#   deploy/helm/test.sh -run Lint -v    # other arguments go to `go test`
set -euo pipefail
cd "$(dirname "$0")/charttest"
args=()
for a in "$@"; do
  if [ "$a" = --docker-build ]; then
    export ARBITER_DOCKER_BUILD_STEP=1
  else
    args+=("$a")
  fi
done
echo "== chart and Dockerfile tests (deploy/helm/charttest)"
go vet ./...
go test -count=1 "${args[@]+"${args[@]}"}" ./...
