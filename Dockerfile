# syntax=docker/dockerfile:1
#
# The arbiter image: a static Go binary on distroless/static (no shell, no libc), run as
# the non-root user 65532. Build from the repository root, stamping the version and
# commit (`arbiter --version`, the arbiter_build_info metric, the OCI labels):
#
#   docker build $(scripts/build.sh --docker-args) -t registry.example.com/voicearbiter/arbiter:0.1.0 .
#   docker buildx build --platform linux/amd64,linux/arm64 --build-arg VERSION=0.1.0 \
#     --build-arg REVISION=$(git rev-parse HEAD) -t ... --push .
#
# The chart in deploy/helm/arbiter names this image; `arbiter serve` flags and their
# ARBITER_* environment twins configure it.
#
# Both base images are pinned by digest (a tag can be moved; a digest cannot), and the
# tag next to each digest says what it was when pinned. To move to a newer build of the
# same tag, look its digest up and replace both (nothing here pulls by tag):
#
#   docker buildx imagetools inspect golang:1.26.8 --format '{{json .Manifest.Digest}}'
#   crane digest gcr.io/distroless/static-debian12:nonroot
#   cosign verify gcr.io/distroless/static-debian12:nonroot@sha256:... \
#     --certificate-oidc-issuer https://accounts.google.com \
#     --certificate-identity keyless@distroless.iam.gserviceaccount.com
#
# (Renovate's and Dependabot's docker managers update such pins by themselves.)

# The builder is golang at the Go version go.mod's go line names, pinned to the digest
# of that tag's image index (every platform): golang:1.26.8 as docker-library/repo-info
# records it (repos/golang/remote/1.26.8.md), built 2026-09-01. Change both together.

# GO_VERSION is the golang image tag: go.mod's Go version.
ARG GO_VERSION=1.26.8
# GO_DIGEST is the digest of golang:GO_VERSION.
ARG GO_DIGEST=sha256:ec0383e177f24920f5498de7d96d1cd81ada095b430dda72f8b863b99a485ff6

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}@${GO_DIGEST} AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS TARGETARCH
# VERSION and REVISION are stamped into the binary (internal/buildinfo); .git is not
# in the build context, so without REVISION the binary reports its commit as unknown.

# VERSION is the release version (scripts/build.sh --docker-args computes it).
ARG VERSION=devel
# REVISION is the git commit.
ARG REVISION=
# Static (no cgo), reproducible paths (-trimpath), no symbol table or DWARF (-s -w).
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w -X github.com/voicearbiter/arbiter/internal/buildinfo.version=${VERSION} -X github.com/voicearbiter/arbiter/internal/buildinfo.commit=${REVISION}" -o /out/arbiter ./cmd/arbiter

# gcr.io/distroless/static-debian12:nonroot (every platform). This digest is the one
# Renovate moved the tag's pin to on 2026-08-03 (bug-ops/zeph#6717, "docker digest to
# f5b485e") and the one many digest-pinned Dockerfiles carry since; distroless
# publishes no digest list of its own, so check it with `crane digest` (above) before a
# release.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:f5b485ea962d9bd1186b2f6b3a061191539b905b82ec395de78cbfae51f20e35
ARG VERSION=devel
ARG REVISION=
LABEL org.opencontainers.image.title="arbiter" \
      org.opencontainers.image.description="Arbiter: one authoritative answer about a realtime voice agent's function calls (gRPC)." \
      org.opencontainers.image.source="https://github.com/voicearbiter/arbiter" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /out/arbiter /arbiter
# A container listens on every interface (the binary's own default is 127.0.0.1) and
# logs JSON; flags given to the container override both.
ENV ARBITER_LISTEN=:50051 \
    ARBITER_LOG_FORMAT=json
USER 65532:65532
# 50051: gRPC (arbiter.v1, grpc.health.v1, reflection); 9090: Prometheus /metrics when
# --metrics-listen=:9090 is set; 8081: grpc.health.v1 alone, in plaintext, when
# --health-listen=:8081 is set (the chart's probes).
EXPOSE 50051 9090 8081
ENTRYPOINT ["/arbiter", "serve"]
