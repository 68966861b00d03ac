#!/usr/bin/env bash
# Regenerates the Python messages and gRPC stubs of the Arbiter API from ../../proto
# into arbiter_client/v1/ (committed), or into DIR when given (the CI's staleness check
# generates into a temp dir and diffs); and the google.rpc error details (status.proto,
# error_details.proto: copies in protos/google/rpc) into arbiter_client/rpc/, or into
# RPC_DIR when given:
#   generate.sh [DIR [RPC_DIR]]
#
# Needs Debian's protoc and gRPC Python plugin, whose output imports with Debian's
# python3-protobuf 3.21 / python3-grpcio 1.51:
#   apt-get install -y protobuf-compiler protobuf-compiler-grpc libprotobuf-dev
# The versions are pinned below: another protoc writes other (equivalent) code.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
proto="$here/../../proto"
out="${1:-$here/arbiter_client/v1}"
rpc_out="${2:-$here/arbiter_client/rpc}"

want="libprotoc 3.21.12"
have="$(protoc --version)"
if [ "$have" != "$want" ]; then
  echo "generate.sh: protoc is '$have', want '$want' (Debian bookworm's protobuf-compiler)" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
protoc -I "$proto" -I /usr/include \
  --plugin=protoc-gen-grpc_python="$(command -v grpc_python_plugin)" \
  --python_out="$tmp" --pyi_out="$tmp" --grpc_python_out="$tmp" \
  arbiter/v1/arbiter.proto
# The stubs import the messages as top-level `arbiter.v1`; make that package-relative.
sed -i 's/^from arbiter\.v1 import arbiter_pb2 as /from . import arbiter_pb2 as /' "$tmp/arbiter/v1/arbiter_pb2_grpc.py"
mkdir -p "$out"
cp "$tmp"/arbiter/v1/arbiter_pb2.py "$tmp"/arbiter/v1/arbiter_pb2.pyi "$tmp"/arbiter/v1/arbiter_pb2_grpc.py "$out/"

# google.rpc: messages only (no services). Their descriptors keep googleapis' file names
# (google/rpc/status.proto), so arbiter_client.rpc loads them only when
# googleapis-common-protos is not installed (see arbiter_client/rpc/__init__.py).
protoc -I "$here/protos" -I /usr/include --python_out="$tmp" --pyi_out="$tmp" \
  google/rpc/status.proto google/rpc/error_details.proto
mkdir -p "$rpc_out"
cp "$tmp"/google/rpc/status_pb2.py "$tmp"/google/rpc/status_pb2.pyi \
  "$tmp"/google/rpc/error_details_pb2.py "$tmp"/google/rpc/error_details_pb2.pyi "$rpc_out/"
