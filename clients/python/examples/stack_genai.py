"""py-genai: google-genai's Live client (the real SDK) with Arbiter's LiveAdapter in
``session.receive()``'s loop, for one recorded session played by the fake provider
(``wire_stacks.py --stack genai`` runs it).

google-genai's traps, and what this file does about them:

- ``session.receive()`` ends at every ``turn_complete``: the loop calls it again until
  the connection closes.
- every close raises: ``receive()`` turns the server's close into ``errors.APIError``
  with the close code as ``code``, 1000 (the session's normal end) included; 1000 ends
  the loop, anything else is an error.
- with an API key, ``connect`` dials ``wss://`` whatever the base URL's scheme, with an
  SSL context that trusts ``SSL_CERT_FILE`` (else certifi's roots): the wire checks run
  the fake provider with ``--tls-self-signed CERT`` and set ``SSL_CERT_FILE=CERT``.
- ``connect`` reads ``setupComplete`` itself: the first message ``receive()`` yields is
  the one after it; a setup the server refuses raises from ``connect``.
- a ``goAway`` is followed by a close: the loop connects again with the last
  ``sessionResumptionUpdate`` handle (the same arbiter session, a new Connect); a call of
  the closed connection is never answered on the new one.
"""

from __future__ import annotations

import logging
from typing import Any, List, Optional

from google import genai
from google.genai import errors, types
from websockets.exceptions import ConnectionClosed
from wire_stacks import StackSession

from arbiter_client import Action, SendFunctionResponse, SendNote, live_wire

log = logging.getLogger("stack_genai")


def declarations(s: StackSession) -> List[types.FunctionDeclaration]:
    """The tools, each with the behavior the recorded app declared (Gemini's function
    calls do not carry it: the adapter is told the same)."""
    return [
        types.FunctionDeclaration(name=t.name, parameters=types.Schema.model_validate(live_wire.gemini_schema(t.parameters())),
                                  behavior=types.Behavior(s.behavior(t.name)))
        for t in s.tools.values()
    ]


async def run(s: StackSession) -> bool:
    session: Optional[Any] = None  # google.genai.live.AsyncSession, while a connection is up
    waiting: List[SendNote] = []  # notes due while no connection was up
    idle_notes: List[SendNote] = []  # "when_idle" notes held while the model speaks
    speaking = False

    async def deliver(a: Action) -> None:
        if session is None:
            if isinstance(a, SendNote):
                waiting.append(a)  # sent once the next connection is set up
            else:  # the call was the closed connection's: the next Connect declares it dead
                log.warning("%s: a response for %s while no connection is up: not sent", s.trace.name, a.id)
            return
        try:
            if isinstance(a, SendFunctionResponse):
                await session.send_tool_response(function_responses=[types.FunctionResponse(
                    id=a.id, name=a.name, response=dict(a.payload),
                    scheduling=types.FunctionResponseScheduling(a.scheduling) if a.scheduling else None,
                    will_continue=True if a.will_continue else None)])
                s.sent["interim" if a.will_continue else "responses"] += 1
            elif isinstance(a, SendNote):
                if a.when == "when_idle" and speaking:
                    idle_notes.append(a)  # after the model's turn: a user turn now would cut it
                    return
                await session.send_client_content(turns=types.Content(role="user", parts=[types.Part(text=a.text)]),
                                                  turn_complete=True)
                s.sent["notes"] += 1
        except ConnectionClosed:  # closed under us: the close is read by the receive loop
            log.warning("%s: not sent, the connection closed: %s", s.trace.name, type(a).__name__)

    async def on_action(a: Action) -> None:
        if s.backend_action(a):  # execute / commit / cancel / abort the prepare
            return
        if isinstance(a, (SendFunctionResponse, SendNote)):
            await deliver(a)

    def config(handle: Optional[str]) -> types.LiveConnectConfig:
        return types.LiveConnectConfig(
            response_modalities=[types.Modality.AUDIO],
            input_audio_transcription=types.AudioTranscriptionConfig(),  # the user's words: without them no stop is read
            output_audio_transcription=types.AudioTranscriptionConfig(),
            tools=[types.Tool(function_declarations=declarations(s))],
            session_resumption=types.SessionResumptionConfig(handle=handle),  # handles come in sessionResumptionUpdate
        )

    # --- the snippet README.md shows ---
    arbiter = s.live_adapter(on_action,  # LiveAdapter, each call with the recorded app's tool choice and business key
                             behaviors={t: s.behavior(t) for t in s.tools},  # as declared: Gemini's calls do not carry it
                             response_scheduling=not s.args.no_response_scheduling,  # a note may ride on a NON_BLOCKING response
                             language=s.trace.language)  # how the user's words are read (stop, confirmations)
    client = genai.Client(api_key="fake-key", http_options=types.HttpOptions(base_url=s.base_url))
    s.attach(arbiter)
    handle: Optional[str] = None
    while True:
        s.conn += 1
        code, reason = 1006, ""
        try:
            async with client.aio.live.connect(model="gemini-3.8-live", config=config(handle)) as live:
                arbiter.connection_opened(f"{s.session_id}-c{s.conn}")  # Connect, before the first message is read
                session = live
                s.clock.start()
                notes, waiting[:] = list(waiting), []
                for n in notes:
                    await deliver(n)
                while True:
                    async for msg in live.receive():  # ends at every turn_complete: call it again
                        arbiter.feed(msg)  # stamped and queued now; never awaited here
                        # ...
                        sru = msg.session_resumption_update
                        if sru and sru.resumable and sru.new_handle:
                            handle = sru.new_handle  # resume with it after a goAway
                        sc = msg.server_content
                        if sc and (sc.model_turn or sc.output_transcription):
                            speaking = True
                        if sc and (sc.turn_complete or sc.interrupted):
                            speaking = False
                            held, idle_notes[:] = list(idle_notes), []
                            for n in held:
                                await deliver(n)
        except errors.APIError as e:  # every close raises, 1000 included; connect() raises a refused setup's
            code, reason = e.code or 1006, e.details if isinstance(e.details, str) else ""
        session, speaking = None, False
        if not s.closed(code, reason):  # the trace's end, a refusal; else a goAway: resume with the handle
            break
    # --- end of snippet ---
    await s.finish(arbiter)
    return s.ending != ""
