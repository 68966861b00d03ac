"""The plain actions :class:`~arbiter_client.live.LiveAdapter` hands the application.

Each is a frozen dataclass; dispatch on its type (``match action: case Execute(): ...``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Literal, Optional, Tuple, Union

from .errors import ArbiterError


@dataclass(frozen=True)
class Call:
    """A function call as the model issued it (``FunctionCall``: id, name, args)."""

    id: str
    name: str
    args: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Execute:
    """Start the job: run ``tool`` with ``args`` (pick the handler by ``tool``, not by
    ``call.name``). ``side_effect=True``: start the backend's prepare (the slow,
    reversible phase) and report it with ``LiveAdapter.prepared(job_id)`` (or
    ``failed``); never commit until a :class:`Commit` says so. ``side_effect=False``:
    run the read-only tool and report ``LiveAdapter.result(job_id, result)``. Never send
    a function response yourself: it comes as :class:`SendFunctionResponse`.
    ``business_key`` is what the arbiter deduplicated the call on (tool plus canonical
    arguments): a good idempotency key for the backend.

    ``tool`` and ``args`` are the call's own name and arguments, except for a
    confirmation call that confirmed a confirm-then-act run (``run_id``): then they are
    the run's tool and its request (the opening call's arguments with the answers
    merged in), and ``call`` is the confirmation call, which is answered with the job's
    outcome."""

    call: Call
    job_id: str
    side_effect: bool
    business_key: str = ""
    tool: str = ""
    args: Dict[str, Any] = None  # type: ignore[assignment]  # the call's, set in __post_init__
    run_id: str = ""

    def __post_init__(self) -> None:
        if not self.tool:
            object.__setattr__(self, "tool", self.call.name)
        if self.args is None:
            object.__setattr__(self, "args", dict(self.call.args))


@dataclass(frozen=True)
class AbortPrepare:
    """Stop the prepare still running for this job and release what it holds; do not
    commit. The adapter reports the cancel itself. ``error`` is set when the arbiter
    could not be reached (fail closed)."""

    job_id: str
    reason: str
    error: Optional[ArbiterError] = None


@dataclass(frozen=True)
class Commit:
    """Perform the job's irreversible side effect now, then report
    ``LiveAdapter.committed(job_id, result)`` (or ``failed(job_id, error)``)."""

    job_id: str
    reason: str


@dataclass(frozen=True)
class Cancel:
    """Release the prepared job without its side effect. The adapter reports the cancel
    itself. ``error`` is set when the arbiter could not be reached (fail closed)."""

    job_id: str
    reason: str
    error: Optional[ArbiterError] = None


#: A function response's scheduling (Gemini Live ``FunctionResponseScheduling``).
Scheduling = Literal["WHEN_IDLE", "INTERRUPT", "SILENT"]


@dataclass(frozen=True)
class SendFunctionResponse:
    """Send this function response to the model (Gemini ``FunctionResponse(id, name,
    response=payload, scheduling=scheduling)``). The adapter hands out at most one per
    call id, and none for an id it reported as :class:`Skip`.

    ``scheduling`` is set when a status note rides on this response (the session was
    configured with ``response_scheduling=True`` and the call is NON_BLOCKING): the
    note's text is already in ``payload["status_note"]`` and no :class:`SendNote` comes
    for it. Send the response with that scheduling (``"WHEN_IDLE"``: the model speaks
    about it once its turn is over; ``"INTERRUPT"``: now; ``"SILENT"``: not at all).
    ``None``: no scheduling.

    ``will_continue=True`` marks an interim response (a progress report of a job still
    running, ReportProgress): send it with Gemini's ``will_continue=True``; the call's
    final response is still to come. Interim responses may come several times per id.

    ``seq`` is the effect's place in the session's log (0 from servers without one):
    the adapter hands out each ``seq`` once, whether it came in a reply, on the Watch
    or from a Poll."""

    id: str
    name: str
    payload: Dict[str, Any]
    job_id: str = ""
    scheduling: Optional[Scheduling] = None
    will_continue: bool = False
    seq: int = 0


@dataclass(frozen=True)
class SendNote:
    """Send this status note to the model as a user turn (Gemini
    ``send_client_content(turns=..., turn_complete=True)``): ``when="now"``, or
    ``"when_idle"``: after the model's turn is over (``turn_complete``). ``why`` is the
    arbiter's reason for that delivery, in words (for logs). A note that rides on a
    function response is never handed out as a ``SendNote``: see
    :attr:`SendFunctionResponse.scheduling`. ``seq``: see
    :attr:`SendFunctionResponse.seq`."""

    text: str
    when: Literal["now", "when_idle"]
    job_id: str = ""
    why: str = ""
    seq: int = 0


@dataclass(frozen=True)
class Skip:
    """Informational: this call id is dead (``reason``: abandoned, withdrawn,
    connection_closed, session_closed). Never send a function response for it. For
    ``connection_closed`` (the call was made on an earlier connection, see
    ``LiveAdapter.reconnect``) its job goes on, and its outcome comes as a
    :class:`SendNote`. ``seq``: see :attr:`SendFunctionResponse.seq`."""

    id: str
    name: str
    reason: str
    job_id: str = ""
    seq: int = 0


@dataclass(frozen=True)
class RunUpdate:
    """Informational: a confirm-then-act run changed ``state`` (``"opened"``,
    ``"confirmed"``, ``"refused"``, ``"expired"``, ``"cancelled"``). Nothing to send:
    the model hears about it through the function responses and notes. ``job_id`` is
    the job a confirmed run started; ``call_id`` the call that caused the change.
    ``seq``: see :attr:`SendFunctionResponse.seq`."""

    run_id: str
    tool: str
    state: str
    call_id: str = ""
    job_id: str = ""
    reason: str = ""
    seq: int = 0


@dataclass(frozen=True)
class SessionLost:
    """The arbiter's store lost this session (DATA_LOSS, reason SESSION_LOST: a Redis
    restarted without persistence): ``epoch`` is the lifetime that is gone. The
    session was not started again silently, and nothing of it is known any more:

    - ``call_ids``: the calls registered in the lost epoch and not answered yet. Their
      outcome is unknown: never tell the model they were not done; answer them (or tell
      the user) from what your backend knows.
    - ``job_ids``: their jobs. The adapter has already released the undecided ones (an
      :class:`AbortPrepare` or :class:`Cancel` each, never a :class:`Commit`); a job
      you were told to commit may or may not have been performed by your backend, and
      its outcome can no longer be reported to the arbiter.

    Events observed from now on are refused the same way (their futures raise
    :class:`~arbiter_client.errors.SessionLostError`) until you report the connection
    again (``reconnect`` / ``connection_opened``): Connect with the lost epoch answers
    SESSION_STATE_LOST and the adapter goes on in the session's new epoch.
    ``cause`` is the refused RPC's error (None when Connect found the loss)."""

    epoch: str
    call_ids: Tuple[str, ...] = ()
    job_ids: Tuple[str, ...] = ()
    cause: Optional[ArbiterError] = None


Action = Union[Execute, AbortPrepare, Commit, Cancel, SendFunctionResponse, SendNote, Skip, RunUpdate, SessionLost]
