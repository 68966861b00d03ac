/**
 * node-openai-realtime: the openai SDK's OpenAIRealtimeWS (GA events, wss) with Arbiter's
 * RealtimeAdapter in its event loop, for one recorded session played by the fake
 * provider: every tool of the trace declared, transcription in the session's language,
 * and a new connection (a new Realtime session) when the server closes before the
 * trace's end.
 */
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { RealtimeAdapter, type Action } from "../src/index.js";
import type { Ending, StackOptions } from "./wire-agent.js";
import { Backend, closeKind, MAX_RECONNECTS, openaiTool, resolveCall, type TraceInfo } from "./wire-common.js";

export async function run(trace: TraceInfo, o: StackOptions): Promise<Ending> {
  const backend = new Backend(trace, o.backendLog);
  let rt: OpenAIRealtimeWS | undefined; // the connection whose session is set up
  const pending: Action[] = []; // actions due while none is
  // --- the snippet clients/node/README.md shows ---
  const openai = new OpenAI({ apiKey: "fake-key", baseURL: `${o.provider}/trace/${trace.name}/v1` }); // always wss
  const arbiter = new RealtimeAdapter(o.client, o.sessionId(trace), async (a: Action) => {
    if (backend.handle(a)) return; // execute / commit / cancel / abortPrepare
    if (!rt) return void pending.push(a);
    await arbiter.deliver(a, (ev) => rt!.send(ev as any)); // function_call_output or a user message, then response.create
  }, { language: trace.language, resolveCall: resolveCall(trace) }); // no behavior: the tool policy's decides what a barge-in does to a call
  const connect = () => {
    const ws = new OpenAIRealtimeWS({ model: "gpt-realtime" }, openai);
    ws.on("event", (ev) => {
      if (ev.type === "session.created") {
        backend.start();
        ws.send({ type: "session.update", session: { type: "realtime",
          audio: { input: { transcription: { model: "gpt-4o-transcribe", ...(trace.language ? { language: trace.language } : {}) } } },
          tools: trace.tools.map(openaiTool) } });
      }
      void arbiter.feed(ev); // stamped now; never awaited here (session.created: Connect)
      if (ev.type === "session.created") {
        rt = ws;
        for (const a of pending.splice(0)) void arbiter.deliver(a, (e) => ws.send(e as any));
      }
    });
    ws.on("error", (err) => console.error(`${trace.name}: ${err.message}`));
    return ws;
  };
  // --- end of snippet ---
  backend.core = arbiter;
  for (let conn = 1; ; conn++) {
    const ws = connect();
    const e = await new Promise<{ code: number; reason: string }>((resolve) =>
      ws.socket.on("close", (code: number, reason: Buffer) => resolve({ code, reason: String(reason ?? "") })),
    );
    rt = undefined;
    const kind = closeKind(e.code, e.reason);
    if (kind === "reconnect" && conn <= MAX_RECONNECTS) continue; // OpenAI has no resumption: a new session
    await arbiter.close();
    backend.close();
    if (kind === "reconnect") throw new Error(`${trace.name}: closed ${e.code} ${e.reason} after ${conn} connections`);
    return kind === "end" ? "ended" : "refused";
  }
}
