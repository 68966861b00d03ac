"""Raw python3-websockets (Debian 10.4) clients of the fake provider: a Gemini session
(snake_case setup, as protobuf JSON allows) and an OpenAI GA session, each printing
what arrives; both play the trace to its end."""
import asyncio, json, sys

import websockets

PORT = sys.argv[1]

async def gemini():
    url = f"ws://127.0.0.1:{PORT}/trace/C_on_run2/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=x"
    async with websockets.connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"setup": {"model": "models/gemini-3.8-live", "input_audio_transcription": {},
                                            "tools": [{"function_declarations": [{"name": "book_slot", "behavior": "BLOCKING"}]}]}}))
        async for raw in ws:  # binary frames: bytes, which json.loads takes
            m = json.loads(raw)
            print("gemini", type(raw).__name__, list(m), flush=True)
            for fc in m.get("toolCall", {}).get("functionCalls", []):
                if fc["id"] == "fc_7334104368860656461":
                    await ws.send(json.dumps({"tool_response": {"function_responses": [
                        {"id": fc["id"], "name": fc["name"], "response": {"status": "cancelled"}}]}}))
        print("gemini closed", ws.close_code, ws.close_reason)

async def openai():
    url = f"ws://127.0.0.1:{PORT}/trace/A_on_run1/v1/realtime?model=gpt-realtime"
    async with websockets.connect(url, subprotocols=["realtime", "openai-insecure-api-key.x"], max_size=None) as ws:
        print("openai subprotocol", ws.subprotocol)
        async for raw in ws:
            m = json.loads(raw)
            if m["type"] == "session.created":
                await ws.send(json.dumps({"type": "session.update", "session": {"type": "realtime",
                    "audio": {"input": {"transcription": {"model": "gpt-4o-transcribe"}}}, "tools": [{"type": "function", "name": "book_slot"}]}}))
            if not m["type"].endswith(".delta"):
                print("openai", m["type"], m.get("transcript", ""), m.get("item", {}).get("call_id", ""), flush=True)
        print("openai closed", ws.close_code, ws.close_reason)

async def main():
    await asyncio.gather(gemini(), openai())

asyncio.run(main())
