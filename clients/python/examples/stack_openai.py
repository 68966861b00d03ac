"""py-openai-sdk: openai's Realtime client (``client.realtime.connect``, the real SDK)
with Arbiter's RealtimeAdapter in its event loop, for one recorded session played by
the fake provider (``wire_stacks.py --stack openai-sdk`` runs it).

What the SDK does on its own, and what this file does about it:

- it dials ``wss://`` for an ``https://`` base URL (``.../v1`` + ``/realtime``), with
  websockets' default SSL context, which trusts ``SSL_CERT_FILE``: the wire checks run
  the fake provider with ``--tls-self-signed CERT`` and set ``SSL_CERT_FILE=CERT``;
- it reconnects only when given ``on_reconnecting`` (not here: OpenAI Realtime has no
  session resumption, a new socket is a new conversation); iterating the connection
  ends on a normal close (1000, 1001) and raises on any other;
- it sends only what it is told: the function outputs, notes and ``response.create``
  below are the adapter's. The server refuses a ``response.create`` while a response is
  in progress, so one asked for then waits for the ``response.done``.
"""

from __future__ import annotations

from typing import Any, Dict, List

from openai import AsyncOpenAI
from wire_stacks import StackSession

from arbiter_client import Action, RealtimeAdapter, SendFunctionResponse, SendNote, realtime


async def run(s: StackSession) -> bool:
    idle_notes: List[SendNote] = []  # "when_idle" notes held while a response is in progress
    want_response = False
    conn: Any = None  # openai's AsyncRealtimeConnection, once connected

    async def respond() -> None:
        """response.create now, or once the response in progress is done."""
        nonlocal want_response
        want_response = rt.response_active
        if not want_response:
            await conn.response.create()

    async def on_action(a: Action) -> None:
        if s.backend_action(a):  # execute / commit / cancel / abort the prepare
            return
        if isinstance(a, SendFunctionResponse):
            await conn.conversation.item.create(item=realtime.function_call_output(a.id, a.payload)["item"])
            s.sent["responses"] += 1
            await respond()
        elif isinstance(a, SendNote):
            if a.when == "when_idle" and rt.response_active:
                idle_notes.append(a)  # after the model's response: a user turn now would cut it
                return
            await conn.conversation.item.create(item=realtime.user_message(a.text)["item"])
            s.sent["notes"] += 1
            await respond()

    tools: List[Dict[str, Any]] = [{"name": t.name, "parameters": t.parameters()} for t in s.tools.values()]
    # --- the snippet README.md shows ---
    rt = RealtimeAdapter(s.client, s.session_id, on_action)  # OpenAI calls carry no behavior: see RealtimeAdapter
    openai = AsyncOpenAI(api_key="fake-key", base_url=f"{s.base_url}/v1")
    async with openai.realtime.connect(model="gpt-realtime") as connection:
        conn = connection
        rt.connection_opened(f"{s.session_id}-c1")  # Connect, before the first event is read
        s.attach(rt)
        async for event in conn:  # ends when the server closes normally
            rt.feed(event)  # stamped and queued now; never awaited here
            if event.type == "session.created":
                s.clock.start()
                # tools, and input transcription on: without the user's words no stop is read
                await conn.session.update(session=realtime.session_update(tools)["session"])
            elif event.type == "response.done":
                for n in idle_notes:
                    await on_action(n)
                idle_notes.clear()
                if want_response:
                    await respond()
    # --- end of snippet ---
    await s.finish(rt)
    return True
