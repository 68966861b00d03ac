"""Generated messages and gRPC stubs of the Arbiter API, protobuf package ``arbiter.v1``.

``arbiter_pb2`` and ``arbiter_pb2_grpc`` are written by ``clients/python/generate.sh``
from ``proto/arbiter/v1/arbiter.proto``; do not edit them.
"""

from . import arbiter_pb2, arbiter_pb2_grpc

#: The API version these stubs speak.
API_VERSION = "arbiter.v1"

__all__ = ["API_VERSION", "arbiter_pb2", "arbiter_pb2_grpc"]
