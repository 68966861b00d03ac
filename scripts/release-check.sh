#!/usr/bin/env bash
# Checks the ways a user gets Arbiter, as a release would hand them out. scripts/test.sh
# runs it as one suite; run it alone from anywhere. Installs the pinned tools when they
# are missing (GoReleaser, cyclonedx-gomod: go install, once per machine).
#
#   1. go install from a clean module cache: the checkout as a module zip in a local
#      module proxy (GOPROXY=file://..., version v0.0.0-releasecheck), its dependencies
#      from this machine's module cache, an empty GOPATH and GOMODCACHE,
#      GOFLAGS=-mod=mod, GOTOOLCHAIN=local, GOSUMDB=off (offline): `go install
#      github.com/voicearbiter/arbiter/cmd/arbiter@VERSION` must build, and the binary
#      say that version. (No replace directive, a complete go.sum, the module path right.)
#   2. The GoReleaser snapshot (.goreleaser.yaml): `goreleaser check`, then `goreleaser
#      release --snapshot --clean --skip=docker` (no Docker engine here: the image step
#      is skipped and said so; deploy/helm/test.sh checks the Dockerfile's build): an
#      archive per platform with the binary, LICENSE, README.md and CHANGELOG.md,
#      checksums.txt that sha256sum verifies, a CycloneDX SBOM per binary naming
#      grpc-go; the linux/amd64 binary's --version says the snapshot version and the
#      commit. RELEASE_CHECK_TARGETS=all builds the four platforms; the default, host,
#      builds this machine's only (the configuration's goos/goarch narrowed in a copy:
#      the cross-compiles of three more platforms cost minutes on a cold build cache and
#      test Go more than this configuration).
#   3. The npm package from its artifact: `npm pack ./clients/node` makes
#      voicearbiter-arbiter-client-VERSION.tgz (the name and version package.json
#      publishes); a scratch project installs that file and imports it; and each Node
#      agent file the README links (clients/node/examples/stack-*.ts), copied whole into
#      the scratch project with the SDKs it names, type-checks against the installed
#      package (tsc): a user can copy it as it is. The copied Gemini agent then runs as
#      the README shows, against arbiter serve and the fake provider playing C_on_run2:
#      its backend prepares, and cancels on "Actually, stop" (never commits).
# RELEASE_CHECKS="go-install snapshot npm" (the default) narrows the checks run.
# Prints one line per check; exits 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

GORELEASER_VERSION=v2.15.1
CYCLONEDX_GOMOD_VERSION=v1.10.0

GOBIN="$(go env GOPATH)/bin"
export PATH="$GOBIN:$PATH"
if ! goreleaser --version 2>/dev/null | grep -q "GitVersion: *$GORELEASER_VERSION$"; then
  echo "== installing goreleaser $GORELEASER_VERSION"
  go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION" || exit 1
fi
if ! cyclonedx-gomod version 2>/dev/null | grep -q "${CYCLONEDX_GOMOD_VERSION#v}"; then
  echo "== installing cyclonedx-gomod $CYCLONEDX_GOMOD_VERSION"
  go install "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$CYCLONEDX_GOMOD_VERSION" || exit 1
fi

tmp="$(mktemp -d)"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
passed=0
failed=0
# check NAME CMD...: runs one check, shows its output when it fails.
check() {
  local name="$1" t0=$SECONDS log="$tmp/check.log"
  shift
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $name ($((SECONDS - t0))s)"
    grep '^  >' "$log" | sed 's/^  >/    /'
  else
    failed=$((failed + 1))
    echo "FAIL $name ($((SECONDS - t0))s)"
    sed 's/^/    /' "$log"
  fi
}

# selected NAME: whether RELEASE_CHECKS (default: all three) names the check.
selected() { [[ " ${RELEASE_CHECKS:-go-install snapshot npm} " == *" $1 "* ]]; }

# --- 1. the GoReleaser snapshot -------------------------------------------------------
snapshot() ( # a subshell: it changes directory
  local dist="$tmp/dist" arch os cpu
  goreleaser check || return 1
  echo "(docker: skipped, no Docker engine is needed here; the image step is checked by deploy/helm/test.sh)"
  # GoReleaser reads the commit and the tags from git, and gives up on all of them when
  # the repository has no remote (a git worktree, a fresh git init): it runs in a clone
  # of HEAD, as a release is built from a commit.
  git clone --quiet --no-hardlinks "$root" "$tmp/src" || return 1
  cd "$tmp/src" || return 1
  # A copy of the configuration that writes into $tmp, and (targets host) builds this
  # machine's platform only.
  os="$(go env GOOS)" cpu="$(go env GOARCH)"
  sed "s|^project_name: arbiter$|project_name: arbiter\ndist: $dist|" .goreleaser.yaml >"$tmp/goreleaser.yaml"
  if [ "${RELEASE_CHECK_TARGETS:-host}" != all ]; then
    sed -i "s|^    goos: \[linux, darwin\]$|    goos: [$os]|; s|^    goarch: \[amd64, arm64\]$|    goarch: [$cpu]|" "$tmp/goreleaser.yaml"
    grep -q "^    goos: \[$os\]$" "$tmp/goreleaser.yaml" || { echo "could not narrow the targets of .goreleaser.yaml"; return 1; }
  fi
  goreleaser release --config "$tmp/goreleaser.yaml" --snapshot --clean --skip=docker || return 1
  (cd "$dist" && sha256sum -c checksums.txt) || return 1
  local archives=("$dist"/arbiter_*.tar.gz) sboms=("$dist"/*.cdx.json)
  local want=1
  [ "${RELEASE_CHECK_TARGETS:-host}" = all ] && want=4
  [ "${#archives[@]}" = "$want" ] && [ "${#sboms[@]}" = "$want" ] || { echo "want $want archives and SBOMs: ${archives[*]} ${sboms[*]}"; return 1; }
  arch="${os}_$cpu"
  mkdir -p "$tmp/unpacked"
  tar -xzf "$dist"/arbiter_*_"$arch".tar.gz -C "$tmp/unpacked" || return 1
  for f in arbiter LICENSE README.md CHANGELOG.md; do [ -f "$tmp/unpacked/$f" ] || { echo "the archive has no $f"; return 1; }; done
  local v
  v="$("$tmp/unpacked/arbiter" --version)" || return 1
  echo "  > $v"
  echo "  > $(cd "$dist" && ls -d arbiter_*.tar.gz *.cdx.json checksums.txt | tr "\n" " ")"
  [[ "$v" == *"-snapshot+$(git rev-parse --short HEAD) (commit $(git rev-parse HEAD),"* ]] || { echo "--version does not say the snapshot version and HEAD"; return 1; }
  grep -q '"name": *"google.golang.org/grpc"' "${sboms[0]}" || { echo "the SBOM does not list google.golang.org/grpc"; return 1; }
)
selected snapshot && check "goreleaser release --snapshot --skip=docker (.goreleaser.yaml; targets: ${RELEASE_CHECK_TARGETS:-host})" snapshot

# --- 2. go install from a clean module cache ------------------------------------------
MODVER=v0.0.0-releasecheck
go_install() {
  local proxy="$tmp/proxy/github.com/voicearbiter/arbiter/@v" gopath="$tmp/gopath"
  mkdir -p "$proxy" "$gopath"
  # The module zip as the go command makes it: the tracked files under
  # MODULE@VERSION/, without nested modules (a folder with its own go.mod) and vendor/.
  git ls-files -z | /usr/bin/python3 -c '
import os, sys, zipfile
prefix, out = sys.argv[1], sys.argv[2]
files = [f for f in sys.stdin.read().split("\0") if f]
nested = {os.path.dirname(f) for f in files if os.path.basename(f) == "go.mod" and os.path.dirname(f)}
def inside(f, d): return f == d or f.startswith(d + "/")
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for f in files:
        if any(inside(f, d) for d in nested) or inside(f, "vendor") or os.path.islink(f) or not os.path.isfile(f):
            continue
        z.write(f, prefix + f)
' "github.com/voicearbiter/arbiter@$MODVER/" "$proxy/$MODVER.zip" || return 1
  cp go.mod "$proxy/$MODVER.mod"
  printf '{"Version":"%s","Time":"%s"}\n' "$MODVER" "$(git log -1 --format=%cI)" >"$proxy/$MODVER.info"
  echo "$MODVER" >"$proxy/list"
  # Dependencies come from this machine's module cache, served as a proxy: nothing is
  # downloaded, and the checksum database cannot be reached (GOSUMDB=off; a user's go
  # install checks them there).
  # -trimpath and CGO_ENABLED=0, as the release builds: without -trimpath every package's
  # build cache key names the new module cache's path, and the whole build is compiled
  # again (minutes); with them it reuses what the snapshot (or the Dockerfile's check) left.
  env GOPATH="$gopath" GOMODCACHE="$gopath/pkg/mod" GOBIN="$gopath/bin" GOFLAGS="-mod=mod -trimpath" CGO_ENABLED=0 GOTOOLCHAIN=local \
    GOPROXY="file://$tmp/proxy,file://$(go env GOMODCACHE)/cache/download" GOSUMDB=off \
    go install "github.com/voicearbiter/arbiter/cmd/arbiter@$MODVER" || return 1
  local v
  v="$("$gopath/bin/arbiter" --version)" || return 1
  echo "  > $v"
  [[ "$v" == "arbiter $MODVER (commit "* ]] || { echo "--version does not say $MODVER"; return 1; }
}
selected go-install && check "go install github.com/voicearbiter/arbiter/cmd/arbiter@$MODVER from a clean module cache (local proxy of the checkout, GOFLAGS=-mod=mod)" go_install

# --- 3. the npm package from its artifact ---------------------------------------------
npm_artifact() {
  local node="$root/clients/node" name version tgz proj="$tmp/npm-user"
  name="$(node -p 'require(process.argv[1]).name' "$node/package.json")"
  version="$(node -p 'require(process.argv[1]).version' "$node/package.json")"
  (cd "$tmp" && npm pack --silent "$node" >/dev/null) || return 1
  tgz="$tmp/$(echo "${name#@}" | tr / -)-$version.tgz"
  [ -f "$tgz" ] || { echo "npm pack made no $tgz:"; ls "$tmp"; return 1; }
  echo "  > $name@$version: $(basename "$tgz"), $(tar -tzf "$tgz" | wc -l) files"
  mkdir -p "$proj" && cd "$proj" && npm init -y >/dev/null || return 1
  # The SDKs the agent files name, at the versions the wire checks ran.
  local dev sdks=()
  for dev in @google/genai openai ws @livekit/agents @livekit/agents-plugin-google @livekit/agents-plugin-openai @livekit/rtc-node typescript @types/node; do
    sdks+=("$dev@$(node -p 'require(process.argv[1]).devDependencies[process.argv[2]]' "$node/package.json" "$dev")")
  done
  npm install --no-audit --no-fund --loglevel=error --prefer-offline "$tgz" "${sdks[@]}" || return 1
  node --input-type=module -e "import('$name').then((m) => { if (m.VERSION !== '$version') throw new Error('VERSION ' + m.VERSION); console.log('  > import $name: ' + m.USER_AGENT); })" || return 1
  mkdir -p agents && cp "$node"/examples/stack-*.ts agents/ || return 1
  cat >tsconfig.json <<'EOF'
{ "compilerOptions": { "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "strict": true,
    "esModuleInterop": true, "skipLibCheck": true, "outDir": "build", "types": ["node"] }, "include": ["agents"] }
EOF
  node -e 'const p=require("./package.json"); p.type="module"; require("fs").writeFileSync("package.json", JSON.stringify(p, null, 2))' || return 1
  npx tsc -p . || return 1
  echo "  > $(ls agents | tr '\n' ' ')type-check as copied, against $(basename "$tgz")"
  # The copied Gemini agent, run as the README runs it: against arbiter serve and the
  # fake provider playing C_on_run2, where the user says "Actually, stop" during the
  # prepare. Its backend must prepare, then cancel, and never commit.
  local a f sp fp
  (cd "$root" && go build -o "$tmp/arbiter" ./cmd/arbiter) || return 1
  "$tmp/arbiter" serve --listen 127.0.0.1:0 --tools "$root/testdata/tools/booking.yaml" >"$tmp/agent-serve.log" 2>&1 &
  sp=$!
  "$tmp/arbiter" fake-provider --trace "$root/testdata/traces/" >"$tmp/agent-fake.log" 2>&1 &
  fp=$!
  for _ in $(seq 100); do
    a="$(sed -n 's/.*arbiter serving.* addr=\([^ ]*\).*/\1/p' "$tmp/agent-serve.log" | head -1)"
    f="$(sed -n 's/.*fake-provider serving.* addr=\([^ ]*\).*/\1/p' "$tmp/agent-fake.log" | head -1)"
    [ -n "$a" ] && [ -n "$f" ] && break
    sleep 0.1
  done
  ARBITER_TARGET="$a" GEMINI_BASE_URL="http://$f/trace/C_on_run2" GEMINI_API_KEY=none timeout 60 node build/stack-genai.js </dev/null >/dev/null 2>"$tmp/agent.err"
  local code=$?
  kill "$sp" "$fp" 2>/dev/null
  wait "$sp" "$fp" 2>/dev/null
  echo "  > the copied stack-genai.ts on C_on_run2: $(grep -o '"out":"[a-z_]*"' "$tmp/agent.err" | tr '\n' ' ')"
  [ "$code" = 0 ] && grep -q '"out":"execute"' "$tmp/agent.err" && grep -q '"out":"cancel"' "$tmp/agent.err" &&
    ! grep -q '"out":"commit"' "$tmp/agent.err" || { echo "exit $code"; cat "$tmp/agent.err"; return 1; }
}
selected npm && check "npm pack ./clients/node, installed from the .tgz; the agent files copied whole type-check against it, and the Gemini one cancels on a spoken stop" npm_artifact

echo "release-check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
