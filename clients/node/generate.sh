#!/usr/bin/env bash
# Regenerates the TypeScript messages and @grpc/grpc-js client stubs of the Arbiter API
# from ../../proto into src/gen/ (committed), or into DIR when given (the CI's
# staleness check generates into a temp dir and diffs).
#
# Needs Debian's protoc 3.21.12 (apt-get install -y protobuf-compiler libprotobuf-dev)
# and ts-proto from this package's devDependencies (npm ci): both pinned, since another
# version writes other code.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
proto="$here/../../proto"
out="${1:-$here/src/gen}"

want="libprotoc 3.21.12"
have="$(protoc --version)"
if [ "$have" != "$want" ]; then
  echo "generate.sh: protoc is '$have', want '$want' (Debian bookworm's protobuf-compiler)" >&2
  exit 1
fi
plugin="$here/node_modules/.bin/protoc-gen-ts_proto"
[ -x "$plugin" ] || { echo "generate.sh: $plugin missing: run 'npm ci' first" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
protoc -I "$proto" -I /usr/include \
  --plugin=protoc-gen-ts_proto="$plugin" \
  --ts_proto_out="$tmp" \
  --ts_proto_opt=outputServices=grpc-js,env=node,esModuleInterop=true,importSuffix=.js,useDate=true,forceLong=number \
  arbiter/v1/arbiter.proto
rm -rf "$out"
mkdir -p "$out"
cp -R "$tmp"/. "$out"/
