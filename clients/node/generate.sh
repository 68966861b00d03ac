#!/usr/bin/env bash
# Regenerates the TypeScript messages and @grpc/grpc-js client stubs of the Arbiter API
# from ../../proto into src/gen/ (committed), or into DIR when given (the CI's
# staleness check generates into a temp dir and diffs).
#
# Also generates google/rpc/status.proto and error_details.proto (the error details the
# client decodes, src/gen/google/rpc and google/protobuf/any.ts) from the descriptors
# compiled into the Go module go.mod pins (tools/rpcdesc: the .proto files are not on
# the machine), so it needs Go too.
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
mkdir -p "$tmp/gen"
protoc -I "$proto" -I /usr/include \
  --plugin=protoc-gen-ts_proto="$plugin" \
  --ts_proto_out="$tmp/gen" \
  --ts_proto_opt=outputServices=grpc-js,env=node,esModuleInterop=true,importSuffix=.js,useDate=true,forceLong=number \
  arbiter/v1/arbiter.proto
# The error details, from descriptors (no comments): only google/rpc and Any are taken
# from this run; its duration.ts would lack the comments the run above gives it.
(cd "$here/../.." && go run ./clients/node/tools/rpcdesc) >"$tmp/rpc.binpb"
mkdir -p "$tmp/rpc"
protoc --descriptor_set_in="$tmp/rpc.binpb" \
  --plugin=protoc-gen-ts_proto="$plugin" \
  --ts_proto_out="$tmp/rpc" \
  --ts_proto_opt=outputServices=false,env=node,esModuleInterop=true,importSuffix=.js,useDate=true,forceLong=number \
  google/rpc/status.proto google/rpc/error_details.proto
mkdir -p "$tmp/gen/google/protobuf"
cp -R "$tmp/rpc/google/rpc" "$tmp/gen/google/"
cp "$tmp/rpc/google/protobuf/any.ts" "$tmp/gen/google/protobuf/"
rm "$tmp/rpc.binpb"
rm -rf "$tmp/rpc"
rm -rf "$out"
mkdir -p "$out"
cp -R "$tmp/gen"/. "$out"/
