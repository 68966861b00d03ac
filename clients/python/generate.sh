#!/usr/bin/env bash
# Regenerates the Python messages and gRPC stubs of the Arbiter API from ../../proto
# into arbiter_client/v1/ (committed), or into DIR when given (the CI's staleness check
# generates into a temp dir and diffs); and the google.rpc error details (status.proto,
# error_details.proto: copies in protos/google/rpc) into arbiter_client/rpc/, or into
# RPC_DIR when given:
#   generate.sh [DIR [RPC_DIR]]
#
# Runs grpcio-tools 1.71.2 (protoc 29.0; locks/generate.txt) from the environment
# envs.sh makes (clients/python/.venvs/generate), or GEN_PYTHON, a Python that has it.
# Its messages need a protobuf runtime >= 5.29 and its stubs grpcio >= 1.71.2
# (pyproject.toml's floors). The version is checked: another protoc writes other
# (equivalent) code, and the CI's staleness check would fail.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
proto="$here/../../proto"
out="${1:-$here/arbiter_client/v1}"
rpc_out="${2:-$here/arbiter_client/rpc}"
gen_python="${GEN_PYTHON:-$here/.venvs/generate/bin/python}"
[ -x "$gen_python" ] || "$here/envs.sh" generate >&2

want="libprotoc 29.0"
have="$("$gen_python" -m grpc_tools.protoc --version)"
if [ "$have" != "$want" ]; then
  echo "generate.sh: grpc_tools.protoc is '$have', want '$want' (grpcio-tools 1.71.2: locks/generate.txt)" >&2
  exit 1
fi
# The well-known types (google/protobuf/struct.proto, ...) grpcio-tools ships.
wkt="$("$gen_python" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"
protoc() { "$gen_python" -m grpc_tools.protoc "$@"; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
protoc -I "$proto" -I "$wkt" \
  --python_out="$tmp" --pyi_out="$tmp" --grpc_python_out="$tmp" \
  arbiter/v1/arbiter.proto
# The stubs import the messages as top-level `arbiter.v1`; make that package-relative.
sed -i 's/^from arbiter\.v1 import arbiter_pb2 as /from . import arbiter_pb2 as /' "$tmp/arbiter/v1/arbiter_pb2_grpc.py"
mkdir -p "$out"
cp "$tmp"/arbiter/v1/arbiter_pb2.py "$tmp"/arbiter/v1/arbiter_pb2.pyi "$tmp"/arbiter/v1/arbiter_pb2_grpc.py "$out/"

# google.rpc: messages only (no services). Their descriptors keep googleapis' file names
# (google/rpc/status.proto), so arbiter_client.rpc loads them only when
# googleapis-common-protos is not installed (see arbiter_client/rpc/__init__.py).
protoc -I "$here/protos" -I "$wkt" --python_out="$tmp" --pyi_out="$tmp" \
  google/rpc/status.proto google/rpc/error_details.proto
mkdir -p "$rpc_out"
cp "$tmp"/google/rpc/status_pb2.py "$tmp"/google/rpc/status_pb2.pyi \
  "$tmp"/google/rpc/error_details_pb2.py "$tmp"/google/rpc/error_details_pb2.pyi "$rpc_out/"
