// The openai SDK's OpenAIRealtimeWS (GA events) against the fake provider over wss,
// acting as an agent for C_on_run2 as an OpenAI session (no behaviors: both calls live).
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
const port = process.argv[2];
const client = new OpenAI({ apiKey: "fake-key", baseURL: `https://127.0.0.1:${port}/v1` });
const rt = new OpenAIRealtimeWS({ model: "gpt-realtime" }, client);
const t0 = Date.now();
const log = (o) => console.log(JSON.stringify({ t: Date.now() - t0, ...o }));
const note = "System note: the booking for tomorrow at 3pm was cancelled before it was committed. Nothing is scheduled.";
let stopped = false;
rt.on("error", (e) => log({ error: e.message }));
rt.socket.on("open", () => log({ open: rt.socket.protocol }));
rt.on("session.created", () => rt.send({ type: "session.update", session: { type: "realtime",
  audio: { input: { transcription: { model: "gpt-4o-transcribe" } } },
  tools: [{ type: "function", name: "book_slot", parameters: { type: "object", properties: { slot: { type: "string" } } } }] } }));
rt.on("event", (e) => log({ type: e.type, ...(e.transcript ? { transcript: e.transcript } : {}), ...(e.item?.call_id ? { call_id: e.item.call_id, status: e.item.status } : {}), ...(e.response ? { response: e.response.status } : {}) }));
const output = (call_id, status) => rt.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id, output: JSON.stringify({ status, executed: false }) } });
rt.on("conversation.item.input_audio_transcription.completed", (e) => {
  if (e.transcript.startsWith("Actually, stop")) {
    stopped = true;
    output("fc_1792165045038015411", "cancelled");
    rt.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: note }] } });
  }
});
rt.on("response.output_item.done", (e) => { if (e.item.type === "function_call" && stopped) output(e.item.call_id, "cancelled"); });
await new Promise((resolve) => rt.socket.on("close", (code, reason) => { log({ close: code, reason: String(reason) }); resolve(); }));
