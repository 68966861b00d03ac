"""The google.rpc messages of the error model (``Status``, ``ErrorInfo``,
``BadRequest``, ``RetryInfo``), which the arbiter sends in the
``grpc-status-details-bin`` trailer of every error it answers.

``status_pb2`` and ``error_details_pb2`` here are written by ``clients/python/generate.sh``
from copies of googleapis' protos (``clients/python/protos/google/rpc``); do not edit them.
When googleapis-common-protos is installed (``google.rpc``), its modules are used
instead: both describe the same files (``google/rpc/status.proto``), and a process must
register a file name once.
"""

try:  # googleapis-common-protos, when the application has it
    from google.rpc import error_details_pb2, status_pb2
except ImportError:  # the copies generated here
    from . import error_details_pb2, status_pb2  # the same modules

__all__ = ["error_details_pb2", "status_pb2"]
