# syntax=docker/dockerfile:1
#
# The arbiter image: a static Go binary on distroless/static (no shell, no libc), run as
# the non-root user 65532. Build from the repository root:
#
#   docker build -t registry.example.com/voicearbiter/arbiter:0.1.0 .
#   docker buildx build --platform linux/amd64,linux/arm64 -t ... --push .
#
# The chart in deploy/helm/arbiter names this image; `arbiter serve` flags and their
# ARBITER_* environment twins configure it.

# GO_VERSION is the golang image tag: the Go minor version go.mod names.
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS TARGETARCH
# Static (no cgo), reproducible paths (-trimpath), no symbol table or DWARF (-s -w).
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w" -o /out/arbiter ./cmd/arbiter

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/arbiter /arbiter
# A container listens on every interface (the binary's own default is 127.0.0.1) and
# logs JSON; flags given to the container override both.
ENV ARBITER_LISTEN=:50051 \
    ARBITER_LOG_FORMAT=json
USER 65532:65532
# 50051: gRPC (arbiter.v1, grpc.health.v1, reflection); 9090: Prometheus /metrics when
# --metrics-listen=:9090 is set.
EXPOSE 50051 9090
ENTRYPOINT ["/arbiter", "serve"]
