// @openai/agents-realtime's OpenAIRealtimeWebSocket transport against the fake
// provider (ws://, url option), acting as an agent for C_on_run2 as an OpenAI session.
import { OpenAIRealtimeWebSocket } from "@openai/agents-realtime";
const port = process.argv[2];
const t0 = Date.now();
const log = (o) => console.log(JSON.stringify({ t: Date.now() - t0, ...o }));
const note = "System note: the booking for tomorrow at 3pm was cancelled before it was committed. Nothing is scheduled.";
const tr = new OpenAIRealtimeWebSocket({ url: `ws://127.0.0.1:${port}/v1/realtime?model=gpt-realtime` });
let stopped = false;
const calls = [];
tr.on("*", (e) => { if (!e.type.endsWith(".delta")) log({ raw: e.type }); });
tr.on("error", (e) => log({ error: String(e.error?.message ?? e.error?.error?.message ?? JSON.stringify(e)) }));
tr.on("turn_started", () => log({ turn_started: true }));
tr.on("turn_done", (e) => log({ turn_done: e.response.id, output: e.response.output.length }));
tr.on("item_update", (i) => log({ item_update: i.itemId, role: i.role, type: i.type, status: i.status, content: JSON.stringify(i.content ?? null).slice(0, 80) }));
tr.on("audio", (a) => log({ audio: a.data.byteLength }));
tr.on("function_call", (fc) => {
  log({ function_call: fc.callId, name: fc.name, arguments: fc.arguments });
  calls.push(fc);
  if (stopped) tr.sendFunctionCallOutput(fc, JSON.stringify({ status: "cancelled", executed: false }), false);
});
tr.on("conversation.item.input_audio_transcription.completed", (e) => {
  if (e.transcript.startsWith("Actually, stop")) {
    stopped = true;
    for (const fc of calls) tr.sendFunctionCallOutput(fc, JSON.stringify({ status: "cancelled", executed: false }), false);
    tr.sendMessage(note, {}, { triggerResponse: false });
  }
});
const closed = new Promise((resolve) => tr.on("disconnected", resolve));
await tr.connect({ apiKey: "fake-key", model: "gpt-realtime", initialSessionConfig: {
  audio: { input: { transcription: { model: "gpt-4o-transcribe" } } },
  tools: [{ type: "function", name: "book_slot", description: "book", parameters: { type: "object", properties: { slot: { type: "string" } }, required: ["slot"], additionalProperties: false }, strict: false }] } });
log({ connected: tr.status });
await closed;
log({ disconnected: true });
