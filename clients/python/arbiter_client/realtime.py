"""RealtimeAdapter: puts the arbiter in an OpenAI Realtime receive loop.

A thin translator on :class:`~arbiter_client.core.SessionCore`, as
:class:`~arbiter_client.live.LiveAdapter` is for Gemini: the application feeds it every
Realtime server event (the JSON object off the WebSocket as a dict, or an openai SDK
event object with the same field names), and :meth:`RealtimeAdapter.feed` maps it to
the core's methods. GA and beta event names are both read:

- ``input_audio_buffer.speech_started`` / ``speech_stopped``: ``voice_activity_start`` /
  ``voice_activity_end`` with the event's ``item_id`` as the utterance id;
- ``conversation.item.input_audio_transcription.completed``: a final
  ``input_transcript`` naming its ``item_id`` (so it belongs to that utterance, however
  late it comes); ``.delta``: an interim one;
- the first ``response.output_audio.delta`` (beta ``response.audio.delta``) of a
  response: ``model_output_start``; ``response.output_audio_transcript.delta`` (beta
  ``response.audio_transcript.delta``) and ``response.output_text.delta`` (beta
  ``response.text.delta``): ``output_transcript``; their ``.done`` only for an item whose
  deltas were not seen;
- a ``function_call`` item, on ``response.function_call_arguments.done`` or
  ``response.output_item.done``, whichever comes first (once per ``call_id``):
  ``function_call``, its ``arguments`` text parsed as JSON; text that is not a JSON
  object goes as ``raw_args`` (the arbiter rejects the call with an error response, so
  the id is answered and nothing runs); an item that ended ``incomplete`` (its response
  was cut while the arguments streamed) is not a call;
- ``response.done`` of a response cut off by barge-in (below) is ``interrupted``; any
  other (``completed``, ``incomplete``, ``failed``, a client cancel with no speech) is
  ``turn_complete``;
- ``conversation.item.deleted`` of a ``function_call`` item the client did not delete
  itself: ``tool_call_cancellation`` (the call left the conversation: a
  function_call_output for it has nothing to answer);
- ``session.created`` / ``session.updated``: the session's ``tool_choice`` (``"none"``:
  calls that come anyway are rejected).

**Behavior and barge-in.** An OpenAI function call has no BLOCKING/NON_BLOCKING: the
adapter reports the behavior ``behaviors`` gives the tool, else none, and the arbiter's
tool policy decides (``default_behavior`` sets one for every other tool). A response is
cut off by barge-in when its ``response.done`` says ``cancelled`` with reason
``turn_detected`` (the server's voice activity detection), or ``client_cancelled`` after
``input_audio_buffer.speech_started`` came while it was in progress (the client's
``response.cancel`` for the user's speech). That is reported as ``interrupted``, exactly
as Gemini Live's: its unanswered calls whose behavior is BLOCKING (or "abandon on
barge-in") are dead, never answered and never run unless the model issues them again;
NON_BLOCKING ones stay live and are answered. The ``function_call`` item stays in the
conversation, but the response that issued it was cut off and the user spoke over it:
a side effect asked for there (an ``end_call``) must not run on its own. The rule is
the fake provider's and its checker's too (``fakeprovider.OpenAIBargeIn``,
docs/fake-provider.md).

**The client's own deletes.** Tell the adapter about each client event sent on the
socket with :meth:`RealtimeAdapter.sent`: a ``conversation.item.delete`` the client sent
is not the server withdrawing a call, so the ``conversation.item.deleted`` that echoes
it is ignored (a framework that moves items deletes and re-creates them).

**What to send.** The actions are the core's (see :mod:`arbiter_client.actions`):
:func:`function_call_output` for a :class:`~arbiter_client.actions.SendFunctionResponse`
(``output`` is the payload as JSON text), :func:`user_message` for a
:class:`~arbiter_client.actions.SendNote`, each followed by :func:`response_create` so
that the model speaks about it; the server refuses a ``response.create`` while a
response is in progress (``conversation_already_has_active_response``), so send it once
:attr:`RealtimeAdapter.response_active` is false (after the ``response.done``), and a
``"when_idle"`` note only then. Interim responses (``will_continue``) have no OpenAI
equivalent: a ``function_call_output`` is final, so the session is not configured for
response scheduling, and the arbiter hands none out.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from .core import SessionCore, _done
from .live import _get

__all__ = [
    "RealtimeAdapter",
    "barge_in",
    "function_call_output",
    "parse_arguments",
    "response_create",
    "session_update",
    "user_message",
]

log = logging.getLogger("arbiter_client")

_AUDIO_DELTA = frozenset({"response.output_audio.delta", "response.audio.delta"})
_TRANSCRIPT_DELTA = frozenset({
    "response.output_audio_transcript.delta", "response.audio_transcript.delta",
    "response.output_text.delta", "response.text.delta",
})
_TRANSCRIPT_DONE = {
    "response.output_audio_transcript.done": "transcript", "response.audio_transcript.done": "transcript",
    "response.output_text.done": "text", "response.text.done": "text",
}


class RealtimeAdapter(SessionCore):
    """Drives one arbiter session from one OpenAI Realtime session's server events.

    Takes the arguments of :class:`~arbiter_client.core.SessionCore` (``client``,
    ``session_id``, ``on_action``, and ``behaviors``, ``decide_wait``, ``language``,
    ``response_scheduling``, ``watch``), plus ``default_behavior``: what a call of a tool
    ``behaviors`` does not name reports (``None``, the default: nothing, the tool
    policy decides; see the module doc).
    """

    def __init__(self, *args: Any, default_behavior: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.default_behavior = default_behavior
        #: True between ``response.created`` and its ``response.done``: the model is
        #: generating, and a ``response.create`` would be refused.
        self.response_active = False
        self._speech_during_response = False  # speech_started while a response was in progress
        self._client_deletes: Set[str] = set()  # item ids the client asked to delete
        self._calls: Set[str] = set()  # call ids registered
        self._call_items: Dict[str, str] = {}  # function_call item id -> call id
        self._names: Dict[str, str] = {}  # function_call item id -> function name
        self._streamed: Set[str] = set()  # item ids whose output transcript came as deltas

    def feed(self, event: Any) -> "asyncio.Future[None]":
        """Reports one Realtime server event: what it says happened is stamped now and
        queued for delivery, in order (see :mod:`arbiter_client.core`). Returns a future
        that resolves once delivered and what it made due was handed out; it raises
        :class:`~arbiter_client.errors.ArbiterError` if the arbiter refused the event.

        Call it for each event as it arrives, without waiting for the future there (a
        receive loop that waited would stamp the next events late)."""
        typ = str(_get(event, "type") or "")
        if typ == "input_audio_buffer.speech_started":
            if self.response_active:
                self._speech_during_response = True
            return self.voice_activity_start(utterance_id=_str(event, "item_id"))
        if typ == "input_audio_buffer.speech_stopped":
            return self.voice_activity_end(utterance_id=_str(event, "item_id"))
        if typ == "conversation.item.input_audio_transcription.completed":
            return self.input_transcript(_str(event, "transcript"), utterance_id=_str(event, "item_id"))
        if typ == "conversation.item.input_audio_transcription.delta":
            return self.input_transcript(_str(event, "delta"), final=False, utterance_id=_str(event, "item_id"))
        if typ in _AUDIO_DELTA:
            return self.model_output_start()  # only the first of a turn is reported
        if typ in _TRANSCRIPT_DELTA:
            self._streamed.add(_str(event, "item_id"))
            return self.output_transcript(_str(event, "delta"))
        if typ in _TRANSCRIPT_DONE:
            if _str(event, "item_id") in self._streamed:
                return _done()
            return self.output_transcript(_str(event, _TRANSCRIPT_DONE[typ]))
        if typ == "response.created":
            self.response_active = True
            self._speech_during_response = False
            return _done()
        if typ == "response.output_item.added":
            self._remember(_get(event, "item"))
            return _done()
        if typ == "response.function_call_arguments.done":
            item_id = _str(event, "item_id")
            name = _str(event, "name") or self._names.get(item_id, "")
            if not name:  # beta events carry no name: the item's done event will
                return _done()
            return self._call(_str(event, "call_id"), name, _get(event, "arguments"), item_id)
        if typ == "response.output_item.done":
            item = _get(event, "item")
            self._remember(item)
            if _get(item, "type") != "function_call":
                return _done()
            call_id = _str(item, "call_id")
            if _get(item, "status") == "incomplete":
                if call_id not in self._calls:
                    log.warning("arbiter: %s: function call %s ended incomplete (its response was cut while its "
                                "arguments streamed): not a call", self.session_id, call_id)
                return _done()
            return self._call(call_id, _str(item, "name"), _get(item, "arguments"), _str(item, "id"))
        if typ == "response.done":
            speech = self._speech_during_response
            self.response_active = False
            self._speech_during_response = False
            resp = _get(event, "response")
            status = _get(resp, "status")
            reason = _get(_get(resp, "status_details"), "reason")
            if barge_in(status, reason, speech):
                return self.interrupted()
            return self.turn_complete()
        if typ == "conversation.item.deleted":
            item_id = _str(event, "item_id")
            if item_id in self._client_deletes:
                self._client_deletes.discard(item_id)  # the client's own delete (a move): not a withdrawal
                return _done()
            call_id = self._call_items.pop(item_id, "")
            if call_id and call_id in self._calls:
                return self.tool_call_cancellation([call_id])
            return _done()
        if typ in ("session.created", "session.updated"):
            choice = _get(_get(event, "session"), "tool_choice")
            self.tool_choice = "none" if choice == "none" else "auto"
            return _done()
        if typ == "error":
            log.warning("arbiter: %s: Realtime error event: %s", self.session_id, _get(event, "error"))
        return _done()

    def sent(self, event: Any) -> None:
        """Tells the adapter about a client event sent on the socket (the application's
        own, or its framework's), before it goes out: a ``conversation.item.delete`` is
        the client's, so the server's ``conversation.item.deleted`` that echoes it is not
        a withdrawal. Other events are ignored."""
        if _get(event, "type") == "conversation.item.delete":
            item_id = _str(event, "item_id")
            if item_id:
                self._client_deletes.add(item_id)

    def _remember(self, item: Any) -> None:
        if _get(item, "type") == "function_call":
            item_id = _str(item, "id")
            if item_id:
                self._names[item_id] = _str(item, "name")
                if _str(item, "call_id"):
                    self._call_items[item_id] = _str(item, "call_id")

    def _call(self, call_id: str, name: str, arguments: Any, item_id: str) -> "asyncio.Future[None]":
        if not call_id or call_id in self._calls:
            return _done()  # reported already (arguments.done, then output_item.done)
        self._calls.add(call_id)
        if item_id:
            self._call_items[item_id] = call_id
        behavior = self.behaviors.get(name, self.default_behavior)
        args, raw = parse_arguments(arguments)
        if raw is not None:
            return self.function_call(call_id, name, behavior=behavior, raw_args=raw)
        return self.function_call(call_id, name, args, behavior=behavior)


def barge_in(status: Any, reason: Any, speech_during: bool) -> bool:
    """Whether a ``response.done`` ends a response cut off by barge-in: ``cancelled``
    with reason ``turn_detected``, or ``client_cancelled`` when ``speech_during``
    (``input_audio_buffer.speech_started`` came while it was in progress). The same
    rule as the fake provider's (``fakeprovider.OpenAIBargeIn``)."""
    if status != "cancelled":
        return False
    if reason == "turn_detected":
        return True
    return reason == "client_cancelled" and speech_during


def parse_arguments(arguments: Any) -> Tuple[Dict[str, Any], Optional[str]]:
    """A function call's ``arguments`` as (args, raw_args): the JSON object it is, or,
    when it is not one, ``({}, the text)`` for ``raw_args``. Blank text is ``{}`` (a
    function without parameters)."""
    if isinstance(arguments, Mapping):
        return dict(arguments), None
    text = "" if arguments is None else str(arguments)
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except ValueError:
        return {}, text
    if not isinstance(value, dict):
        return {}, text
    return value, None


def _str(obj: Any, name: str) -> str:
    v = _get(obj, name)
    return "" if v is None else str(v)


# --- client events (what the agent sends) ----------------------------------------------


def function_call_output(call_id: str, payload: Mapping[str, Any]) -> Dict[str, Any]:
    """The ``conversation.item.create`` that answers ``call_id`` with ``payload`` (a
    :class:`~arbiter_client.actions.SendFunctionResponse`'s), as JSON text."""
    return {
        "type": "conversation.item.create",
        "item": {"type": "function_call_output", "call_id": call_id, "output": json.dumps(dict(payload))},
    }


def user_message(text: str) -> Dict[str, Any]:
    """The ``conversation.item.create`` of a user message: how a note
    (:class:`~arbiter_client.actions.SendNote`) reaches the model."""
    return {
        "type": "conversation.item.create",
        "item": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
    }


def response_create() -> Dict[str, Any]:
    """``response.create``: the model answers what was added (once no response is in
    progress)."""
    return {"type": "response.create"}


def session_update(
    tools: Iterable[Mapping[str, Any]],
    *,
    transcription_model: str = "gpt-4o-transcribe",
    beta: bool = False,
    instructions: Optional[str] = None,
    language: Optional[str] = None,
) -> Dict[str, Any]:
    """The ``session.update`` that declares ``tools`` (each ``{"name", "description",
    "parameters"}``) as functions and turns input audio transcription on (the arbiter
    reads the user's words from it), in ``language`` when given (ISO 639-1, as the
    transcription model takes it): GA shape (``session.type: realtime``,
    ``audio.input.transcription``), or beta (``input_audio_transcription``)."""
    funcs: List[Dict[str, Any]] = []
    for t in tools:
        f: Dict[str, Any] = {"type": "function", "name": t["name"]}
        if t.get("description"):
            f["description"] = t["description"]
        f["parameters"] = t.get("parameters") or {"type": "object", "properties": {}}
        funcs.append(f)
    session: Dict[str, Any]
    transcription: Dict[str, Any] = {"model": transcription_model}
    if language:
        transcription["language"] = language
    if beta:
        session = {"input_audio_transcription": transcription, "tools": funcs, "tool_choice": "auto"}
    else:
        session = {"type": "realtime", "audio": {"input": {"transcription": transcription}},
                   "tools": funcs, "tool_choice": "auto"}
    if instructions is not None:
        session["instructions"] = instructions
    return {"type": "session.update", "session": session}

