"""Python client of Arbiter (API ``arbiter.v1``): one authoritative decision about each
function call a realtime voice agent's model issues.

- :class:`LiveAdapter` sits in a Gemini Live (google-genai) receive loop: feed it every
  server message, handle the plain actions it hands back.
- :class:`ArbiterClient` is the API over grpc.aio, with typed errors and retries.
- :mod:`arbiter_client.v1` holds the generated messages and stubs.
"""

from ._version import __version__
from .actions import (
    AbortPrepare,
    Action,
    Call,
    Cancel,
    Commit,
    Execute,
    RunUpdate,
    SendFunctionResponse,
    SendNote,
    Skip,
)
from .client import USER_AGENT, ArbiterClient, RetryPolicy
from .errors import (
    AbortedError,
    ArbiterError,
    DeadlineExceededError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    ResourceExhaustedError,
    UnavailableError,
)
from .live import LiveAdapter
from .v1 import API_VERSION

__all__ = [
    "API_VERSION",
    "USER_AGENT",
    "AbortPrepare",
    "AbortedError",
    "Action",
    "ArbiterClient",
    "ArbiterError",
    "Call",
    "Cancel",
    "Commit",
    "DeadlineExceededError",
    "Execute",
    "FailedPreconditionError",
    "InvalidArgumentError",
    "LiveAdapter",
    "NotFoundError",
    "ResourceExhaustedError",
    "RetryPolicy",
    "RunUpdate",
    "SendFunctionResponse",
    "SendNote",
    "Skip",
    "UnavailableError",
    "__version__",
]
