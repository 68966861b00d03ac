"""py-openai-sdk: openai's Realtime client (``client.realtime.connect``, the real SDK)
with Arbiter's RealtimeAdapter in its event loop, for one recorded session played by
the fake provider (``wire_stacks.py --stack openai-sdk`` runs it).

What the SDK does on its own, and what this file does about it:

- it dials ``wss://`` for an ``https://`` base URL (``.../v1`` + ``/realtime``), with
  websockets' default SSL context, which trusts ``SSL_CERT_FILE``: the wire checks run
  the fake provider with ``--tls-self-signed CERT`` and set ``SSL_CERT_FILE=CERT``;
- it reconnects only when given ``on_reconnecting`` (not here: OpenAI Realtime has no
  session resumption, a new socket is a new conversation, so this loop connects again
  itself, a new Connect of the same arbiter session, when the server closes before the
  trace's end); iterating the connection ends on a normal close (1000, 1001) without
  saying its reason, so the loop calls ``recv()``, which raises websockets'
  ``ConnectionClosed`` with the close code and reason (the trace's end, a refusal, a
  reconnect);
- it sends only what it is told: the function outputs, notes and ``response.create``
  below are the adapter's. The server refuses a ``response.create`` while a response is
  in progress, so one asked for then waits for the ``response.done``.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable, Dict, List

from openai import AsyncOpenAI
from websockets.exceptions import ConnectionClosed
from wire_stacks import StackSession

from arbiter_client import Action, SendFunctionResponse, SendNote, realtime

log = logging.getLogger("stack_openai")


async def run(s: StackSession) -> bool:
    idle_notes: List[SendNote] = []  # "when_idle" notes held while a response is in progress
    waiting: List[SendNote] = []  # notes due while no connection was up
    want_response = False
    conn: Any = None  # openai's AsyncRealtimeConnection, while one is up

    async def send(what: str, make: Callable[[], Awaitable[None]]) -> bool:
        """One client event on the open connection; False (logged) once it closed."""
        if conn is None:
            log.warning("%s: not sent, no connection: %s", s.trace.name, what)
            return False
        try:
            await make()
            return True
        except ConnectionClosed:  # closed under us: the close is read by the receive loop
            log.warning("%s: not sent, the connection closed: %s", s.trace.name, what)
            return False

    async def respond() -> None:
        """response.create now, or once the response in progress is done."""
        nonlocal want_response
        want_response = rt.response_active
        if not want_response:
            await send("response.create", lambda: conn.response.create())

    async def on_action(a: Action) -> None:
        if s.backend_action(a):  # execute / commit / cancel / abort the prepare
            return
        if isinstance(a, SendFunctionResponse):
            # A call of a closed connection is dead (the next Connect says so): never sent.
            if await send(f"output of {a.id}", lambda: conn.conversation.item.create(
                    item=realtime.function_call_output(a.id, a.payload)["item"])):
                s.sent["responses"] += 1
                await respond()
        elif isinstance(a, SendNote):
            if conn is None:
                waiting.append(a)  # sent once the next connection is set up
                return
            if a.when == "when_idle" and rt.response_active:
                idle_notes.append(a)  # after the model's response: a user turn now would cut it
                return
            if await send("note", lambda: conn.conversation.item.create(item=realtime.user_message(a.text)["item"])):
                s.sent["notes"] += 1
                await respond()

    tools: List[Dict[str, Any]] = [{"name": t.name, "parameters": t.parameters()} for t in s.tools.values()]
    # --- the snippet README.md shows ---
    rt = s.realtime_adapter(on_action,  # RealtimeAdapter, each call with the recorded app's tool choice and business key
                            language=s.trace.language)  # no behavior: the tool policy's decides what a barge-in does to a call
    s.attach(rt)
    openai = AsyncOpenAI(api_key="fake-key", base_url=f"{s.base_url}/v1")
    while True:
        s.conn += 1
        code, reason = 1006, ""
        async with openai.realtime.connect(model="gpt-realtime") as connection:
            rt.connection_opened(f"{s.session_id}-c{s.conn}")  # Connect, before the first event is read
            try:
                while True:
                    event = await connection.recv()  # raises at the close, with its code and reason
                    rt.feed(event)  # stamped and queued now; never awaited here
                    if event.type == "session.created":
                        s.clock.start()
                        conn, want_response = connection, False
                        # tools, and input transcription on (in the session's language): without the user's words no stop is read
                        await connection.session.update(session=realtime.session_update(tools, language=s.trace.language)["session"])
                        notes, waiting[:] = list(waiting), []
                        for n in notes:
                            await on_action(n)
                    elif event.type == "response.done":
                        held, idle_notes[:] = list(idle_notes), []
                        for n in held:
                            await on_action(n)
                        if want_response:
                            await respond()
            except ConnectionClosed as e:
                if e.rcvd is not None:
                    code, reason = e.rcvd.code, e.rcvd.reason
            conn = None
        if not s.closed(code, reason):  # the trace's end, a refusal; else a new Realtime session (no resumption)
            break
    # --- end of snippet ---
    await s.finish(rt)
    return s.ending != ""
