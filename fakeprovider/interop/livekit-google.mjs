// @livekit/agents-plugin-google 1.9 RealtimeModel, headless (no room), against the fake
// provider: tools set after connect (the plugin restarts its session), and an agent for
// C_on_run2 as a Gemini session: answer the live re-issue only, send the note once.
import { initializeLogger, llm } from "@livekit/agents";
import * as google from "@livekit/agents-plugin-google";
initializeLogger({ pretty: false, level: process.env.LK_LEVEL ?? "warn" });
const port = process.argv[2];
const t0 = Date.now();
const log = (o) => console.log(JSON.stringify({ t: Date.now() - t0, ...o }));
const note = "System note: the booking for tomorrow at 3pm was cancelled before it was committed. Nothing is scheduled.";
const model = new google.beta.realtime.RealtimeModel({ apiKey: "fake-key", model: "gemini-3.8-live",
  httpOptions: { baseUrl: `http://127.0.0.1:${port}` }, toolBehavior: "BLOCKING" });
const session = model.session();
const calls = new Map();
let stopped = false;
const answer = async (fc) => {
  const ctx = session.chatCtx.copy();
  ctx.insert(llm.FunctionCallOutput.create({ callId: fc.callId, name: fc.name, isError: false,
    output: JSON.stringify({ status: "cancelled", executed: false, duplicate_of: "fc_1792165045038015411" }) }));
  await session.updateChatCtx(ctx);
  log({ answered: fc.callId });
};
session.on("error", (e) => log({ error: String(e.error?.message ?? e.error ?? e) }));
session.on("input_speech_started", () => log({ input_speech_started: true }));
session.on("input_audio_transcription_completed", async (e) => {
  log({ transcript: e.transcript, final: e.isFinal });
  if (!stopped && e.transcript.includes("stop")) {
    stopped = true;
    const ctx = session.chatCtx.copy();
    ctx.addMessage({ role: "user", content: note });
    await session.updateChatCtx(ctx);
    log({ note: true });
  }
});
session.on("generation_created", async (ev) => {
  log({ generation_created: true });
  for await (const fc of ev.functionStream) {
    log({ function_call: fc.callId, name: fc.name, args: fc.args });
    calls.set(fc.callId, fc);
    if (fc.callId === "fc_7334104368860656461") await answer(fc);
  }
});
await session.updateTools(new llm.ToolContext({ book_slot: llm.tool({ description: "Book a slot", parameters: { type: "object", properties: { slot: { type: "string" } }, required: ["slot"] },
  execute: async () => "unused" }) }));
await new Promise((r) => setTimeout(r, Number(process.env.LK_RUN_MS ?? 16500)));
log({ calls: [...calls.keys()] });
await session.close();
process.exit(0);
