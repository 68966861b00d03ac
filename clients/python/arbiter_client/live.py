"""LiveAdapter: puts the arbiter in a Gemini Live (google-genai) receive loop.

A thin translator on :class:`~arbiter_client.core.SessionCore`: the application feeds
the adapter every server message (a google-genai ``LiveServerMessage``, or a dict with
the same snake_case or wire camelCase field names), and :meth:`LiveAdapter.feed` maps
its fields to the core's methods:

- ``voice_activity`` ACTIVITY_START / ACTIVITY_END: ``voice_activity_start`` /
  ``voice_activity_end`` (google-genai's ``voice_activity_type``; in a wire dict the
  kind is ``voiceActivity.type``, which google-genai's converters map to it, and
  ``voiceActivityType`` is read too);
- ``server_content``: ``interim_input_transcription`` and ``input_transcription``
  (``input_transcript``, interim and final pieces), the first audio ``model_turn`` part
  of a turn (``model_output_start``), ``output_transcription``, ``interrupted``
  (barge-in), ``generation_complete``, ``turn_complete``;
- ``tool_call.function_calls``: ``function_call`` (the behavior from ``behaviors``:
  Gemini's function calls do not carry their declaration's);
- ``tool_call_cancellation.ids``: ``tool_call_cancellation``.

Everything else (the outbox that stamps each event and delivers it in order with its
``age``, the commit rule, the Decide/Complete choreography of each job, the Watch, the
actions handed to ``on_action``, each effect once per ``seq``) is the core's: see
:mod:`arbiter_client.core`. The rest of the API (``prepared``, ``committed``,
``result``, ``failed``, ``unknown``, ``progress``, ``reconnect``, ``poll``, ``flush``,
``close``) is the core's too.
"""

from __future__ import annotations

import asyncio
from typing import Any, Mapping, Optional

from .core import ActionHandler, SessionCore, _Seqs, together  # noqa: F401  (_Seqs: kept importable here)

__all__ = ["ActionHandler", "LiveAdapter"]


class LiveAdapter(SessionCore):
    """Drives one arbiter session from one Gemini Live session's server messages.

    Takes the arguments of :class:`~arbiter_client.core.SessionCore` (``client``,
    ``session_id``, ``on_action``, and ``behaviors``, ``decide_wait``, ``language``,
    ``response_scheduling``, ``watch``); ``behaviors`` gives each tool's
    ``FunctionDeclaration.behavior`` (``"BLOCKING"`` or ``"NON_BLOCKING"``).
    """

    def feed(self, message: Any) -> "asyncio.Future[None]":
        """Reports one Live server message: each event in it is stamped now and queued
        for delivery, in order (see :mod:`arbiter_client.core`). Returns a future that
        resolves once they were delivered and what they made due was handed out; it
        raises :class:`~arbiter_client.errors.ArbiterError` if the arbiter refused one
        of them (the others are still delivered). Retryable failures (UNAVAILABLE, a
        lost connection) are retried, not raised.

        Call it for each message as it arrives, from the receive loop, without waiting
        for the future there (``arbiter.feed(msg)``): awaiting it would hold the next
        messages back while the arbiter is unreachable, and they would be stamped late.
        ``await arbiter.feed(msg)`` where waiting is wanted (tests, a replay).
        """
        futs = []
        va = _get(message, "voice_activity")
        if va is not None:
            kind = _enum(_get(va, "voice_activity_type")) or _enum(_get(va, "type"))
            if kind == "ACTIVITY_START":
                futs.append(self.voice_activity_start())
            elif kind == "ACTIVITY_END":
                futs.append(self.voice_activity_end())
        sc = _get(message, "server_content")
        if sc is not None:
            # Gemini's input transcription arrives as pieces the arbiter appends to the
            # utterance: each is final (checked for stop intent); interim ones are not.
            futs.append(self.input_transcript(_text(_get(sc, "interim_input_transcription")), final=False))
            futs.append(self.input_transcript(_text(_get(sc, "input_transcription")), final=True))
            if _has_audio(_get(sc, "model_turn")):
                futs.append(self.model_output_start())
            futs.append(self.output_transcript(_text(_get(sc, "output_transcription"))))
            if _get(sc, "interrupted"):
                futs.append(self.interrupted())
            if _get(sc, "generation_complete"):
                futs.append(self.generation_complete())
            if _get(sc, "turn_complete"):
                futs.append(self.turn_complete())
        tc = _get(message, "tool_call")
        if tc is not None:
            for fc in _get(tc, "function_calls") or []:
                futs.append(self.function_call(_get(fc, "id") or "", _get(fc, "name") or "", _get(fc, "args") or {}))
        tcc = _get(message, "tool_call_cancellation")
        if tcc is not None:
            futs.append(self.tool_call_cancellation(_get(tcc, "ids") or []))
        return together(futs)


def _text(transcription: Any) -> str:
    return _get(transcription, "text") or ""


def _get(obj: Any, name: str) -> Any:
    """Field ``name`` of a google-genai object or a dict (snake_case, or camelCase as in
    the wire JSON)."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        if name in obj:
            return obj[name]
        head, *rest = name.split("_")
        return obj.get(head + "".join(w.title() for w in rest))
    return getattr(obj, name, None)


def _enum(v: Any) -> Optional[str]:
    """An enum's name, whether given as a str, a str Enum or an Enum."""
    if v is None:
        return None
    return str(getattr(v, "value", v))


def _has_audio(model_turn: Any) -> bool:
    for part in _get(model_turn, "parts") or []:
        data = _get(part, "inline_data")
        if data is not None and str(_get(data, "mime_type") or "audio").startswith("audio"):
            return True
    return False
