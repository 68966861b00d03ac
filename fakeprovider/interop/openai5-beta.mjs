// openai 5.x beta OpenAIRealtimeWS (OpenAI-Beta: realtime=v1, beta event names) over wss.
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/beta/realtime/ws";
const rt = new OpenAIRealtimeWS({ model: "gpt-4o-realtime-preview" }, new OpenAI({ apiKey: "k", baseURL: `https://127.0.0.1:${process.argv[2]}/v1` }));
const seen = {};
rt.on("error", (e) => console.log("error", e.message));
rt.on("session.created", () => rt.send({ type: "session.update", session: { input_audio_transcription: { model: "whisper-1" }, tools: [{ type: "function", name: "book_slot" }] } }));
rt.on("event", (e) => { seen[e.type] = (seen[e.type] ?? 0) + 1; });
rt.on("response.function_call_arguments.done", (e) => console.log("call", e.call_id, e.arguments));
rt.on("conversation.item.input_audio_transcription.completed", (e) => console.log("transcript", e.transcript));
rt.on("response.audio_transcript.done", (e) => console.log("model said", e.transcript));
await new Promise((r) => rt.socket.on("close", (code, reason) => { console.log("close", code, String(reason)); r(); }));
console.log(JSON.stringify(seen));
