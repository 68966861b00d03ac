/**
 * node-openai-realtime: the openai SDK's OpenAIRealtimeWS (GA events, wss) with Arbiter's
 * RealtimeAdapter in its event loop, for one recorded session played by the fake provider.
 */
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { RealtimeAdapter, type Action } from "../src/index.js";
import type { StackOptions } from "./wire-agent.js";
import { Backend, type TraceInfo } from "./wire-common.js";

export async function run(trace: TraceInfo, o: StackOptions): Promise<void> {
  const backend = new Backend(trace, o.backendLog);
  // --- the snippet clients/node/README.md shows ---
  const openai = new OpenAI({ apiKey: "fake-key", baseURL: `${o.provider}/trace/${trace.name}/v1` }); // always wss
  const rt = new OpenAIRealtimeWS({ model: "gpt-realtime" }, openai);
  const arbiter = new RealtimeAdapter(o.client, o.sessionId(trace), async (a: Action) => {
    if (backend.handle(a)) return; // execute / commit / cancel / abortPrepare
    await arbiter.deliver(a, (ev) => rt.send(ev as any)); // function_call_output or a user message, then response.create
  }); // every call reported NON_BLOCKING: an OpenAI barge-in cancels the response, not the call
  rt.on("event", (ev) => {
    if (ev.type === "session.created") {
      backend.start();
      rt.send({ type: "session.update", session: { type: "realtime",
        audio: { input: { transcription: { model: "gpt-4o-transcribe" } } },
        tools: [{ type: "function", name: "book_slot", description: "Book an appointment slot.",
          parameters: { type: "object", properties: { slot: { type: "string" } }, required: ["slot"] } }] } });
    }
    void arbiter.feed(ev); // stamped now; never awaited here
  });
  rt.on("error", (err) => console.error(`${trace.name}: ${err.message}`));
  // --- end of snippet ---
  backend.core = arbiter;
  await new Promise<void>((resolve) => rt.socket.on("close", () => resolve()));
  await arbiter.close();
  backend.close();
}
