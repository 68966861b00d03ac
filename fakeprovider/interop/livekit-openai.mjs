// @livekit/agents-plugin-openai 2.0.0 RealtimeModel (beta events, OpenAI-Beta header),
// headless, against the fake provider; an agent for C_on_run2 as an OpenAI session:
// both calls are live, answered cancelled after the stop, one note.
import { initializeLogger, llm } from "@livekit/agents";
import * as openai from "@livekit/agents-plugin-openai";
initializeLogger({ pretty: false, level: process.env.LK_LEVEL ?? "warn" });
const port = process.argv[2];
const t0 = Date.now();
const log = (o) => console.log(JSON.stringify({ t: Date.now() - t0, ...o }));
const note = "System note: the booking for tomorrow at 3pm was cancelled before it was committed. Nothing is scheduled.";
const model = new openai.realtime.RealtimeModel({ apiKey: "fake-key", baseURL: `http://127.0.0.1:${port}/v1`, model: "gpt-realtime" });
const session = model.session();
const calls = [];
let stopped = false;
const answered = new Set();
const answer = async (fc) => {
  if (answered.has(fc.callId)) return;
  answered.add(fc.callId);
  const ctx = session.chatCtx.copy();
  ctx.insert(llm.FunctionCallOutput.create({ callId: fc.callId, name: fc.name, isError: false, output: JSON.stringify({ status: "cancelled", executed: false }) }));
  await session.updateChatCtx(ctx);
  log({ answered: fc.callId });
};
session.on("error", (e) => log({ error: String(e.error?.message ?? e.error ?? e) }));
session.on("input_speech_started", () => log({ input_speech_started: true }));
session.on("input_audio_transcription_completed", async (e) => {
  log({ transcript: e.transcript, final: e.isFinal });
  if (!stopped && e.transcript.includes("stop")) {
    stopped = true;
    for (const fc of calls) await answer(fc);
    const ctx = session.chatCtx.copy();
    ctx.addMessage({ role: "user", content: note });
    await session.updateChatCtx(ctx);
    log({ note: true });
  }
});
session.on("generation_created", async (ev) => {
  log({ generation_created: true });
  (async () => { for await (const m of ev.messageStream) { log({ message: m.messageId }); (async () => { let n = 0; for await (const f of m.audioStream) n += f.samplesPerChannel; log({ audio_samples: n }); })(); (async () => { let s = ""; for await (const x of m.textStream) s += x; log({ text: s }); })(); } })();
  for await (const fc of ev.functionStream) {
    log({ function_call: fc.callId, name: fc.name, args: fc.args });
    calls.push(fc);
    if (stopped) await answer(fc);
  }
  log({ generation_done: true });
});
await session.updateTools({ book_slot: llm.tool({ description: "Book a slot", parameters: { type: "object", properties: { slot: { type: "string" } }, required: ["slot"] }, execute: async () => "unused" }) });
await new Promise((r) => setTimeout(r, Number(process.env.LK_RUN_MS ?? 16500)));
await session.close();
process.exit(0);
