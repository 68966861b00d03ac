"""Quickstart: an OpenAI Realtime booking agent (openai's ``client.realtime``) with Arbiter
in its event loop.

    pip install './clients/python[openai]'             # from a checkout; once published: 'voicearbiter-client[openai]'
    arbiter serve --tools booking.yaml &          # the tool policy: book_slot, side-effecting
    OPENAI_API_KEY=... python openai_realtime.py "Book me tomorrow at 3 pm."

One model session: the text is sent as the user's message (a real agent streams the
microphone instead), the model calls ``book_slot``, and the arbiter decides: the booking
is held (prepared) and committed only when the user did not say stop meanwhile; every
function call gets exactly one ``function_call_output``, a dead one none, and a status
note tells the model what really happened. Input transcription is on
(``audio.input.transcription``): without the user's words the arbiter cannot read a
stop (and cancels every booking the user talks over once ``transcript_timeout``
passes; the adapter warns once if speech comes without them).

Environment: ``OPENAI_API_KEY``; ``ARBITER_TARGET`` (default ``127.0.0.1:50051``);
``OPENAI_BASE_URL`` to reach another server (a test's fake provider, ``https://HOST/v1``;
trust its certificate with ``SSL_CERT_FILE``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import uuid
from typing import Any, Dict, List, Set

from openai import AsyncOpenAI

from arbiter_client import (
    AbortPrepare,
    Action,
    ArbiterClient,
    Cancel,
    Commit,
    Execute,
    RealtimeAdapter,
    SendFunctionResponse,
    SendNote,
    realtime,
)

BOOK_SLOT = {
    "name": "book_slot",
    "description": "Book an appointment slot.",
    "parameters": {"type": "object", "properties": {"slot": {"type": "string"}}, "required": ["slot"]},
}


class Bookings:
    """A toy two-phase backend: hold a slot (reversible), then confirm or release it."""

    def __init__(self) -> None:
        self.held: Dict[str, str] = {}

    async def hold(self, job_id: str, slot: str) -> None:
        await asyncio.sleep(4)  # the slow, reversible part (the recorded sessions' backend took 4 s)
        self.held[job_id] = slot

    async def confirm(self, job_id: str) -> Dict[str, Any]:
        slot = self.held.pop(job_id, "?")
        print(f"booked {slot}", flush=True)
        return {"reference": f"R-{job_id}", "slot": slot}

    async def release(self, job_id: str) -> None:
        print(f"released {self.held.pop(job_id, '(nothing held yet)')}", flush=True)


async def main(say: str) -> int:
    backend = Bookings()
    tasks: Set["asyncio.Task[None]"] = set()
    conn: Any = None  # the Realtime connection, once open
    held: List[SendNote] = []  # notes to send once the model's response is done
    want_response = False

    def spawn(coro: Any) -> None:
        t = asyncio.ensure_future(coro)
        tasks.add(t)
        t.add_done_callback(tasks.discard)

    async def prepare(a: Execute) -> None:
        await backend.hold(a.job_id, str(a.args.get("slot", "")))
        await arbiter.prepared(a.job_id)  # the arbiter decides now: commit or cancel

    async def commit(a: Commit) -> None:
        await arbiter.committed(a.job_id, await backend.confirm(a.job_id))

    async def respond() -> None:
        """response.create, once no response is in progress (the server refuses a second)."""
        nonlocal want_response
        want_response = arbiter.response_active
        if not want_response:
            await conn.response.create()

    async def act(a: Action) -> None:  # every action, in order; long work goes to tasks
        if isinstance(a, Execute):
            spawn(prepare(a))
        elif isinstance(a, Commit):
            spawn(commit(a))
        elif isinstance(a, (AbortPrepare, Cancel)):
            await backend.release(a.job_id)
        elif isinstance(a, SendFunctionResponse):  # exactly one per live call id
            await conn.conversation.item.create(item=realtime.function_call_output(a.id, a.payload)["item"])
            await respond()
        elif isinstance(a, SendNote):  # what really happened, as a user message
            if a.when == "when_idle" and arbiter.response_active:
                held.append(a)  # a user turn now would cut the model's reply
                return
            await conn.conversation.item.create(item=realtime.user_message(a.text)["item"])
            await respond()

    client = ArbiterClient(os.environ.get("ARBITER_TARGET", "127.0.0.1:50051"))
    arbiter = RealtimeAdapter(client, f"quickstart-{uuid.uuid4().hex[:8]}", act)  # feed() reads every server event
    openai = AsyncOpenAI()  # OPENAI_API_KEY, OPENAI_BASE_URL
    async with client, openai.realtime.connect(model="gpt-realtime") as connection:
        conn = connection
        arbiter.connection_opened("connection-1")  # before the first event is read
        async for event in conn:  # ends when the server closes the session normally
            arbiter.feed(event)  # stamped and queued now; never awaited here
            if event.type == "session.created":
                # the tool, and input transcription on: the user's words are how a stop is read
                await conn.session.update(session=realtime.session_update([BOOK_SLOT])["session"])
                await conn.conversation.item.create(item=realtime.user_message(say)["item"])
                await respond()
            elif event.type == "response.done":
                for n in held:
                    await act(n)
                held.clear()
                if want_response:
                    await respond()
        await arbiter.close()  # undecided bookings are cancelled, unanswered ids die
        await asyncio.gather(*tasks, return_exceptions=True)
    print("session closed", flush=True)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)  # the adapter's warnings (no input transcript, ...) are shown
    sys.exit(asyncio.run(main(" ".join(sys.argv[1:]) or "Book me tomorrow at 3 pm.")))
