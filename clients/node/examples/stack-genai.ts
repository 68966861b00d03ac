/**
 * node-genai: @google/genai's Live client (the real SDK) with Arbiter's LiveAdapter in its
 * receive loop, for one recorded session played by the fake provider: every tool of the
 * trace declared with its behavior, the session's language, and a reconnect with the
 * session's resumption handle when the server sends goAway and closes.
 */
import { GoogleGenAI, Modality, type LiveServerMessage, type Session } from "@google/genai";
import { LiveAdapter, type Action } from "../src/index.js";
import type { Ending, StackOptions } from "./wire-agent.js";
import { Backend, closeKind, geminiDeclaration, MAX_RECONNECTS, resolveCall, type TraceInfo } from "./wire-common.js";

export async function run(trace: TraceInfo, o: StackOptions): Promise<Ending> {
  const backend = new Backend(trace, o.backendLog);
  let session: Session | undefined;
  const pending: Action[] = []; // actions due while no connection is up
  const onAction = async (a: Action) => {
    if (backend.handle(a)) return;
    if (!session) return void pending.push(a);
    await arbiter.deliver(a, session); // sendFunctionResponse -> toolResponse, sendNote -> a user turn
  };
  // --- the snippet clients/node/README.md shows ---
  const arbiter = new LiveAdapter(o.client, o.sessionId(trace), onAction, {
    behaviors: trace.behaviors, // as declared below: Gemini's calls do not carry it
    responseScheduling: o.responseScheduling || trace.responseScheduling, // a note may ride on a NON_BLOCKING response
    language: trace.language,
    resolveCall: resolveCall(trace), // the app's tool choice and business key for each call
  });
  backend.core = arbiter;
  const ai = new GoogleGenAI({ apiKey: "fake-key", httpOptions: { baseUrl: `${o.provider}/trace/${trace.name}` } });
  let handle: string | undefined; // the session's resumption handle (sessionResumptionUpdate)
  for (let conn = 1; ; conn++) {
    void arbiter.reconnect(`conn-${conn}`); // before the connection's first message: its calls are its own
    let closed!: (e: { code: number; reason: string }) => void;
    const done = new Promise<{ code: number; reason: string }>((resolve) => (closed = resolve));
    const connecting = ai.live.connect({
      model: "gemini-3.8-live",
      config: {
        responseModalities: [Modality.AUDIO],
        inputAudioTranscription: {},
        outputAudioTranscription: {},
        sessionResumption: handle ? { handle } : {},
        tools: [{ functionDeclarations: trace.tools.map(geminiDeclaration) }],
        ...(trace.language ? { speechConfig: { languageCode: trace.language } } : {}),
      },
      callbacks: {
        onopen: () => backend.start(),
        onmessage: (m: LiveServerMessage) => {
          if (m.sessionResumptionUpdate?.resumable && m.sessionResumptionUpdate.newHandle) handle = m.sessionResumptionUpdate.newHandle;
          void arbiter.feed(m); // stamped now; never awaited here
        },
        onerror: (e) => console.error(`${trace.name}: ${e.message ?? e}`),
        onclose: (e) => closed({ code: e.code, reason: e.reason }),
      },
    });
    // --- end of snippet ---
    // A refused setup closes before setupComplete: connect() would wait for ever.
    const first = await Promise.race([connecting.then((s) => ({ s })), done.then((e) => ({ e }))]);
    if ("s" in first) {
      session = first.s;
      for (const a of pending.splice(0)) await arbiter.deliver(a, session);
    }
    const e = "e" in first ? first.e : await done;
    session = undefined;
    const kind = closeKind(e.code, e.reason);
    if (kind === "reconnect" && conn <= MAX_RECONNECTS) continue;
    await arbiter.close();
    backend.close();
    if (kind === "reconnect") throw new Error(`${trace.name}: closed ${e.code} ${e.reason} after ${conn} connections`);
    return kind === "end" ? "ended" : "refused";
  }
}
