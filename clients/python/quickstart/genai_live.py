"""Quickstart: a Gemini Live booking agent (google-genai) with Arbiter in its receive loop.

    pip install './clients/python[genai]'             # from a checkout; once published: 'voicearbiter-client[genai]'
    arbiter serve --tools booking.yaml &          # the tool policy: book_slot, side-effecting
    GEMINI_API_KEY=... python genai_live.py "Book me tomorrow at 3 pm."

One model session: the text is sent as the user's turn (a real agent streams the
microphone instead), the model calls ``book_slot``, and the arbiter decides: the booking
is held (prepared) and committed only when the user did not say stop meanwhile; every
function call gets exactly one answer, a dead one none, and a status note tells the model
what really happened. Input transcription is on: without the user's words the arbiter
cannot read a stop (and cancels every booking the user talks over once
``transcript_timeout`` passes; the adapter warns once if speech comes without them).

Environment: ``GEMINI_API_KEY``; ``ARBITER_TARGET`` (default ``127.0.0.1:50051``);
``GEMINI_BASE_URL`` to reach another server (a test's fake provider: google-genai
always dials ``wss://``, so run ``arbiter fake-provider --tls-self-signed CERT`` and set
``SSL_CERT_FILE=CERT`` and ``GEMINI_BASE_URL=https://127.0.0.1:PORT/trace/NAME``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import uuid
from typing import Any, Dict, List, Set

from google import genai
from google.genai import errors, types

from arbiter_client import (
    AbortPrepare,
    Action,
    ArbiterClient,
    Cancel,
    Commit,
    Execute,
    LiveAdapter,
    SendFunctionResponse,
    SendNote,
)

BOOK_SLOT = types.FunctionDeclaration(
    name="book_slot",
    description="Book an appointment slot.",
    parameters=types.Schema(type=types.Type.OBJECT, properties={"slot": types.Schema(type=types.Type.STRING)},
                            required=["slot"]),
    behavior=types.Behavior.NON_BLOCKING,  # the model keeps talking while the booking is held
)


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
    session: Any = None  # the Live session, once connected
    early: List[Action] = []

    def spawn(coro: Any) -> None:
        t = asyncio.ensure_future(coro)
        tasks.add(t)
        t.add_done_callback(tasks.discard)

    async def prepare(a: Execute) -> None:
        await backend.hold(a.job_id, str(a.args.get("slot", "")))
        await arbiter.prepared(a.job_id)  # the arbiter decides now: commit or cancel

    async def commit(a: Commit) -> None:
        await arbiter.committed(a.job_id, await backend.confirm(a.job_id))

    async def send(a: Action) -> None:
        if isinstance(a, SendFunctionResponse):  # exactly one per live call id
            await session.send_tool_response(function_responses=[types.FunctionResponse(
                id=a.id, name=a.name, response=dict(a.payload),
                scheduling=types.FunctionResponseScheduling(a.scheduling) if a.scheduling else None)])
        elif isinstance(a, SendNote):  # what really happened, as a user turn
            await session.send_client_content(turns=types.Content(role="user", parts=[types.Part(text=a.text)]),
                                              turn_complete=True)

    async def act(a: Action) -> None:  # every action, in order; long work goes to tasks
        if isinstance(a, Execute):
            spawn(prepare(a))
        elif isinstance(a, Commit):
            spawn(commit(a))
        elif isinstance(a, (AbortPrepare, Cancel)):
            await backend.release(a.job_id)
        elif session is None:
            early.append(a)
        else:
            await send(a)

    client = ArbiterClient(os.environ.get("ARBITER_TARGET", "127.0.0.1:50051"))
    arbiter = LiveAdapter(client, f"quickstart-{uuid.uuid4().hex[:8]}", act,
                          behaviors={"book_slot": "NON_BLOCKING"},  # as declared: Gemini's calls do not carry it
                          response_scheduling=True)  # a note may ride on a NON_BLOCKING response
    base_url = os.environ.get("GEMINI_BASE_URL")
    ai = genai.Client(api_key=os.environ["GEMINI_API_KEY"],
                      http_options=types.HttpOptions(base_url=base_url) if base_url else None)
    config = types.LiveConnectConfig(
        response_modalities=[types.Modality.AUDIO],
        input_audio_transcription=types.AudioTranscriptionConfig(),  # the user's words: how a stop is read
        output_audio_transcription=types.AudioTranscriptionConfig(),  # the model's: how a false claim is caught
        tools=[types.Tool(function_declarations=[BOOK_SLOT])],
    )
    code = 0
    async with client, ai.aio.live.connect(model="gemini-live-2.5-flash-preview", config=config) as live:
        session = live
        arbiter.connection_opened("connection-1")  # before the first message is read
        for a in early:
            await send(a)
        await session.send_client_content(turns=types.Content(role="user", parts=[types.Part(text=say)]),
                                          turn_complete=True)
        while code == 0:
            try:
                async for msg in session.receive():  # receive() ends at every turn_complete: call it again
                    arbiter.feed(msg)  # stamped and queued now; never awaited here
            except errors.APIError as e:  # every close raises, 1000 (a normal end) included
                code = e.code or 1006
        await arbiter.close()  # undecided bookings are cancelled, unanswered ids die
        await asyncio.gather(*tasks, return_exceptions=True)
    print(f"session closed ({code})", flush=True)
    return 0 if code in (1000, 1001) else 1


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)  # the adapter's warnings (no input transcript, ...) are shown
    sys.exit(asyncio.run(main(" ".join(sys.argv[1:]) or "Book me tomorrow at 3 pm.")))
