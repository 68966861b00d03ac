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
  the one after it.
"""

from __future__ import annotations

from typing import Any, List, Optional

from google import genai
from google.genai import errors, types
from wire_stacks import StackSession

from arbiter_client import Action, LiveAdapter, SendFunctionResponse, SendNote, live_wire


def declarations(s: StackSession) -> List[types.FunctionDeclaration]:
    """The tools, each with the behavior the recorded app declared (Gemini's function
    calls do not carry it: the adapter is told the same)."""
    return [
        types.FunctionDeclaration(name=t.name, parameters=types.Schema.model_validate(live_wire.gemini_schema(t.parameters())),
                                  behavior=types.Behavior(s.behavior(t.name)))
        for t in s.tools.values()
    ]


async def run(s: StackSession) -> bool:
    session: Optional[Any] = None  # google.genai.live.AsyncSession, once connected
    pending: List[Action] = []  # actions due before connect() returned
    idle_notes: List[SendNote] = []  # "when_idle" notes held while the model speaks
    speaking = False

    async def deliver(a: Action) -> None:
        assert session is not None
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

    async def on_action(a: Action) -> None:
        if s.backend_action(a):  # execute / commit / cancel / abort the prepare
            return
        if session is None:
            pending.append(a)
            return
        await deliver(a)

    # --- the snippet README.md shows ---
    arbiter = LiveAdapter(s.client, s.session_id, on_action,
                          behaviors={t: s.behavior(t) for t in s.tools},  # as declared: Gemini's calls do not carry it
                          response_scheduling=not s.args.no_response_scheduling)  # a note may ride on a NON_BLOCKING response
    client = genai.Client(api_key="fake-key", http_options=types.HttpOptions(base_url=s.base_url))
    config = types.LiveConnectConfig(
        response_modalities=[types.Modality.AUDIO],
        input_audio_transcription=types.AudioTranscriptionConfig(),  # the user's words: without them no stop is read
        output_audio_transcription=types.AudioTranscriptionConfig(),
        tools=[types.Tool(function_declarations=declarations(s))],
    )
    code = 0
    async with client.aio.live.connect(model="gemini-3.8-live", config=config) as live:
        session = live
        arbiter.connection_opened(f"{s.session_id}-c1")  # Connect, before the first message is read
        s.attach(arbiter)
        s.clock.start()
        for a in pending:
            await deliver(a)
        pending.clear()
        while code == 0:
            try:
                async for msg in session.receive():  # ends at every turn_complete: call it again
                    arbiter.feed(msg)  # stamped and queued now; never awaited here
                    # ...
                    sc = msg.server_content
                    if sc and (sc.model_turn or sc.output_transcription):
                        speaking = True
                    if sc and (sc.turn_complete or sc.interrupted):
                        speaking = False
                        for n in idle_notes:
                            await deliver(n)
                        idle_notes.clear()
            except errors.APIError as e:  # every close raises, 1000 included
                code = e.code or 1006
    # --- end of snippet ---
    await s.finish(arbiter)
    return code == 1000
