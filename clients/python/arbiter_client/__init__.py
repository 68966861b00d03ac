"""Python client of Arbiter (API ``arbiter.v1``): one authoritative decision about each
function call a realtime voice agent's model issues.

- :class:`LiveAdapter` sits in a Gemini Live (google-genai) receive loop: feed it every
  server message, handle the plain actions it hands back.
- :class:`RealtimeAdapter` does the same in an OpenAI Realtime receive loop (server
  events in, the same actions out); :mod:`arbiter_client.realtime` builds the client
  events, :mod:`arbiter_client.live_wire` the raw Gemini Live messages.
- :class:`SessionCore` is the provider-neutral core under both (an outbox that delivers
  what the model session did, in order, with its age; the commit rule; Decide/Complete;
  the Watch): an adapter for another provider calls its methods.
- :mod:`arbiter_client.tool` (:class:`ToolJob`, :func:`two_phase`) is all a tool needs
  behind the wire guard (``arbiter serve --proxy-listen``): a side-effecting tool runs
  its two phases by its call id alone; read-only tools need nothing.
- :class:`ArbiterClient` is the API over grpc.aio, with typed errors (the standard
  error details), the service config's retries, TLS, tokens and trace context.
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
    SessionLost,
    Skip,
)
from .client import USER_AGENT, ArbiterClient, RetryPolicy, service_config
from .core import DELIVERY_STUCK, SessionCore, UndeliveredEventsError
from .errors import (
    AbortedError,
    ArbiterError,
    DeadlineExceededError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    ResourceExhaustedError,
    SessionLostError,
    UnauthenticatedError,
    UnavailableError,
)
from .live import LiveAdapter
from .realtime import RealtimeAdapter
from .tool import ToolJob, two_phase
from .v1 import API_VERSION

__all__ = [
    "API_VERSION",
    "DELIVERY_STUCK",
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
    "RealtimeAdapter",
    "ResourceExhaustedError",
    "RetryPolicy",
    "RunUpdate",
    "SendFunctionResponse",
    "SendNote",
    "SessionCore",
    "SessionLost",
    "SessionLostError",
    "Skip",
    "ToolJob",
    "UnauthenticatedError",
    "UnavailableError",
    "UndeliveredEventsError",
    "__version__",
    "service_config",
    "two_phase",
]
