/**
 * node-genai: @google/genai's Live client (the real SDK) with Arbiter's LiveAdapter in its
 * receive loop, for one recorded session played by the fake provider.
 */
import { Behavior, GoogleGenAI, Modality, type LiveServerMessage, type Session } from "@google/genai";
import { LiveAdapter, type Action } from "../src/index.js";
import type { StackOptions } from "./wire-agent.js";
import { Backend, type TraceInfo } from "./wire-common.js";

export async function run(trace: TraceInfo, o: StackOptions): Promise<void> {
  const backend = new Backend(trace, o.backendLog);
  let session: Session | undefined;
  const pending: Action[] = []; // actions due before connect() resolved
  const onAction = async (a: Action) => {
    if (backend.handle(a)) return;
    if (!session) return void pending.push(a);
    await arbiter.deliver(a, session); // sendFunctionResponse -> toolResponse, sendNote -> a user turn
  };
  // --- the snippet clients/node/README.md shows ---
  const arbiter = new LiveAdapter(o.client, o.sessionId(trace), onAction, {
    behaviors: { book_slot: trace.behavior }, // as declared below: Gemini's calls do not carry it
    responseScheduling: o.responseScheduling, // a note may ride on a NON_BLOCKING response
  });
  backend.core = arbiter;
  void arbiter.reconnect("conn-1");
  const ai = new GoogleGenAI({ apiKey: "fake-key", httpOptions: { baseUrl: `${o.provider}/trace/${trace.name}` } });
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  session = await ai.live.connect({
    model: "gemini-3.8-live",
    config: {
      responseModalities: [Modality.AUDIO],
      inputAudioTranscription: {},
      outputAudioTranscription: {},
      tools: [{ functionDeclarations: [{ name: "book_slot", description: "Book an appointment slot.",
        behavior: trace.behavior === "BLOCKING" ? Behavior.BLOCKING : Behavior.NON_BLOCKING,
        parameters: { type: "OBJECT" as any, properties: { slot: { type: "STRING" as any } }, required: ["slot"] } }] }],
    },
    callbacks: {
      onopen: () => backend.start(),
      onmessage: (m: LiveServerMessage) => void arbiter.feed(m), // stamped now; never awaited here
      onerror: (e) => console.error(`${trace.name}: ${e.message ?? e}`),
      onclose: () => closed(),
    },
  });
  // --- end of snippet ---
  for (const a of pending.splice(0)) await arbiter.deliver(a, session);
  await done;
  await arbiter.close();
  backend.close();
}
