/**
 * The stacks behind the wire guard (`arbiter serve --proxy-listen`): the same SDKs and
 * frameworks as the other stacks, pointed at the guard instead of the provider (one
 * base URL), at their defaults, with no Arbiter adapter, tap or session hook: the
 * guard reports what the model server says and lets one answer per live call id
 * through. The booking tool uses only the tool helper (`twoPhase`: Decide and
 * Complete by its call id); with `--bare` it has no Arbiter code at all (the
 * no-integration run: it books at once and says so).
 *
 *   guard-genai            @google/genai Live; the app answers each toolCall with sendToolResponse
 *   guard-openai-realtime  openai OpenAIRealtimeWS (GA, wss): function_call_output + response.create
 *   guard-openai-realtime-untranscribed  the same, its session.update asking for no input
 *                          transcription (the guard asks for it: --proxy-add-transcription)
 *   guard-livekit-google   LiveKit Agents AgentSession, agents-plugin-google, the tool an llm.tool
 *   guard-livekit-openai   the same with agents-plugin-openai
 */
import { Behavior, GoogleGenAI, Modality, type LiveServerMessage, type Session } from "@google/genai";
import { initializeLogger, llm, voice } from "@livekit/agents";
import * as google from "@livekit/agents-plugin-google";
import * as lkopenai from "@livekit/agents-plugin-openai";
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { setTimeout as sleep } from "node:timers/promises";
import { twoPhase } from "../src/index.js";
import type { Ending, StackOptions } from "./wire-agent.js";
import { Backend, geminiDeclaration, MAX_RECONNECTS, openaiTool, type TraceInfo } from "./wire-common.js";

export type GuardStack = "genai" | "openai-realtime" | "openai-realtime-untranscribed" | "livekit-google" | "livekit-openai";

/** A side-effecting tool: two phases under the arbiter by call id, or (bare) no Arbiter code. */
function bookingTool(o: StackOptions, backend: Backend, bare: boolean, sessionId?: string): (callId: string) => Promise<Record<string, unknown>> {
  if (bare) {
    let n = 0;
    return async (callId) => {
      backend.ran(callId); // books at once, as a tool with no Arbiter code would
      return { booked: true, reference: `B-${++n}` };
    };
  }
  if (sessionId) {
    // The set's call ids repeat across its traces (StackOptions.sharesCallIds): the
    // helper is told the session the stack named, as docs/wire-guard.md says for short ids.
    return twoPhase(o.client, {
      sessionId,
      callId: (callId: string) => callId,
      prepare: (job) => backend.prepare(job.jobId, job.signal, job.callId),
      commit: (_hold, job) => backend.commit(job.jobId),
      release: (_hold, how, job) => backend.release(job.jobId, how),
    });
  }
  // --- the snippet README.md shows: the tool helper, by call id alone ---
  return twoPhase(o.client, {
    callId: (callId: string) => callId,
    prepare: (job) => backend.prepare(job.jobId, job.signal, job.callId), // hold the slot
    commit: (_hold, job) => backend.commit(job.jobId), // book it, only when Arbiter says so
    release: (_hold, how, job) => backend.release(job.jobId, how),
  });
  // --- end of snippet ---
}

/**
 * A read-only tool: no Arbiter code at all (the guard takes its answer as its result).
 * It answers when the trace's backend says (`result_ms`; null: never, and the guard
 * answers the call at its `max_pending`).
 */
function readOnlyTool(backend: Backend, tool: string, ended: AbortSignal): (callId: string) => Promise<Record<string, unknown>> {
  const end = new Promise<never>((_, reject) => ended.addEventListener("abort", () => reject(new Error("the session ended")), { once: true }));
  end.catch(() => undefined);
  return async (callId) => {
    const jobId = `read-${callId}`;
    backend.job(jobId, tool, callId, false);
    return Promise.race([backend.run(jobId), end]); // a result that never comes ends with the session (LiveKit's close waits for its tools)
  };
}

/**
 * Every tool the set's policy names and every tool the trace calls (`trace.tools`), by
 * name: the policy's side-effecting ones through the tool helper (one helper for all:
 * the backend finds each call's tool and spec by its call id), the others read-only.
 */
function toolBodies(trace: TraceInfo, o: StackOptions, backend: Backend, bare: boolean, ended: AbortSignal, sessionId?: string): Record<string, (callId: string) => Promise<Record<string, unknown>>> {
  const book = bookingTool(o, backend, bare, sessionId);
  return Object.fromEntries(trace.tools.map((t) => [t.name, t.sideEffect ? book : readOnlyTool(backend, t.name, ended)]));
}

let lkLogger = false;

/**
 * Plays one trace behind the guard. A connection the fake provider closes before the
 * trace's end (`closeKind` "reconnect") is connected again, as the app would: Gemini
 * with the last resumption handle the guard gave it (the guard maps it to the same
 * arbiter session), OpenAI as a new Realtime session (no resumption: a new arbiter
 * session, the closed connection's calls dead); LiveKit's plugins reconnect by
 * themselves. A trace the fake refuses ends "refused".
 */
export async function run(trace: TraceInfo, o: StackOptions, stack: GuardStack, bare: boolean): Promise<Ending> {
  const backend = new Backend(trace, o.backendLog);
  // The arbiter session the stack names (X-Arbiter-Session; the arbiter_session query
  // parameter where a plugin takes no headers), only where the set's call ids are not
  // unique and the tools ask the arbiter (StackOptions.sharesCallIds); else the guard
  // makes one (wg-...).
  const named = !bare && o.sharesCallIds(trace) ? o.sessionId(trace) : undefined;
  const headers = named ? { "X-Arbiter-Session": named } : undefined;
  const ending = new AbortController(); // the session is over: a read-only result still awaited gives up
  const tools = toolBodies(trace, o, backend, bare, ending.signal, named);
  const base = `${o.provider}/trace/${trace.name}`;
  // What the recorded app configured, as each SDK says it (the guard reads it off the
  // wire): the language (Gemini speechConfig.languageCode, OpenAI the input
  // transcription's), and tool choice none where the app ran every call of the trace
  // under it (OpenAI's session tool_choice; Gemini's SDKs cannot say it: wire.sh
  // narrows those traces for the Gemini stacks).
  const calls = Object.values(trace.calls);
  const choiceNone = calls.length > 0 && calls.every((c) => c.toolChoice === "none");
  const report = (what: string) => (err: unknown) => console.error(`${trace.name} ${what}: ${err instanceof Error ? err.message : err}`);
  let ended: Ending = "ended";
  /** The fake's close: true to connect again. */
  const again = (code: number, reason: string, conn: number): boolean => {
    const kind = o.closeKind(code, reason);
    if (kind === "refused") ended = "refused";
    if (kind === "reconnect" && conn > MAX_RECONNECTS) throw new Error(`${trace.name}: closed ${code} ${reason} before the trace's end, ${conn} times`);
    return kind === "reconnect";
  };
  switch (stack) {
    case "genai": {
      const ai = new GoogleGenAI({ apiKey: "fake-key", httpOptions: { baseUrl: base, ...(headers ? { headers } : {}) } });
      let handle: string | undefined; // the last resumption handle (the guard's)
      for (let conn = 1; ; conn++) {
        let session: Session | undefined;
        let closed!: (e: { code: number; reason: string }) => void;
        const done = new Promise<{ code: number; reason: string }>((resolve) => (closed = resolve));
        const answer = async (id: string, name: string) => {
          const response = await (tools[name] ?? tools[trace.calls[id]?.tool ?? ""])(id);
          session?.sendToolResponse({ functionResponses: [{ id, name, response }] });
        };
        const connecting = ai.live.connect({
          model: "gemini-3.8-live",
          config: {
            responseModalities: [Modality.AUDIO],
            inputAudioTranscription: {},
            outputAudioTranscription: {},
            sessionResumption: handle ? { handle } : {},
            tools: [{ functionDeclarations: trace.tools.map((t) => ({ ...geminiDeclaration(t), behavior: t.behavior === "BLOCKING" ? Behavior.BLOCKING : Behavior.NON_BLOCKING })) }],
            ...(trace.language ? { speechConfig: { languageCode: trace.language } } : {}),
          },
          callbacks: {
            onopen: () => backend.start(),
            onmessage: (m: LiveServerMessage) => {
              if (m.sessionResumptionUpdate?.resumable && m.sessionResumptionUpdate.newHandle) handle = m.sessionResumptionUpdate.newHandle;
              for (const fc of m.toolCall?.functionCalls ?? []) void answer(fc.id!, fc.name!).catch(report("tool"));
            },
            onerror: (e) => console.error(`${trace.name}: ${e.message ?? e}`),
            onclose: (e) => closed({ code: e.code, reason: e.reason }),
          },
        });
        // A setup the server refuses closes before the session opens: connect() would wait for ever.
        const first = await Promise.race([connecting.then((s) => ({ s })), done.then(() => ({}))]);
        if ("s" in first) session = first.s;
        const e = await done;
        session = undefined;
        if (!again(e.code, e.reason, conn)) break;
      }
      break;
    }
    case "openai-realtime":
    case "openai-realtime-untranscribed": {
      // untranscribed: the user's words never asked for (the guard asks for them).
      const transcription = { model: "gpt-4o-transcribe", ...(trace.language ? { language: trace.language.split("-")[0] } : {}) };
      const audio = stack === "openai-realtime" ? { audio: { input: { transcription } } } : {};
      for (let conn = 1; ; conn++) {
        const rt = new OpenAIRealtimeWS({ model: "gpt-realtime", ...(headers ? { options: { headers } } : {}) }, new OpenAI({ apiKey: "fake-key", baseURL: `${base}/v1` }));
        let open = true;
        rt.on("event", (ev: any) => {
          if (ev.type === "session.created") {
            backend.start();
            rt.send({ type: "session.update", session: { type: "realtime", ...audio,
              tools: trace.tools.map(openaiTool), ...(choiceNone ? { tool_choice: "none" } : {}) } } as any);
          }
          if (ev.type === "response.output_item.done" && ev.item?.type === "function_call") {
            const id: string = ev.item.call_id;
            void (tools[ev.item.name] ?? tools[trace.calls[id]?.tool ?? ""])(id)
              .then((out) => {
                if (!open) return; // the connection closed: the model lost the call with it
                rt.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: id, output: JSON.stringify(out) } } as any);
                rt.send({ type: "response.create" } as any);
              })
              .catch(report("tool"));
          }
        });
        rt.on("error", (err) => console.error(`${trace.name}: ${err.message}`));
        const e = await new Promise<{ code: number; reason: string }>((resolve) =>
          rt.socket.on("close", (code: number, reason: Buffer) => resolve({ code, reason: String(reason ?? "") })),
        );
        open = false;
        if (!again(e.code, e.reason, conn)) break;
      }
      break;
    }
    case "livekit-google":
    case "livekit-openai": {
      if (!lkLogger) {
        initializeLogger({ pretty: false, level: process.env.LK_LEVEL ?? "fatal" });
        lkLogger = true;
      }
      // Every tool as an llm.tool; the helper (or a read-only body) by LiveKit's call id.
      const lkTools = Object.fromEntries(
        trace.tools.map((t) => [
          t.name,
          llm.tool({
            description: t.description,
            parameters: t.parameters as any, // JSON schema, not zod
            execute: async (_args: unknown, { toolCallId }) => tools[t.name](toolCallId), // the helper, by LiveKit's call id
          }),
        ]),
      );
      // The first seed (testdata/guard/seed_2249): a read-only tool, and a reply asked
      // for with toolChoice 'none', which Gemini ignores and agents-js enforces by
      // dropping the call it gets anyway, unanswered.
      const seed = trace.name.startsWith("seed_2249");
      // The Google plugin declares one behavior for every tool (toolBehavior): that of the
      // first tool the trace calls (its recorded calls', else the policy's).
      const first = Object.values(trace.calls)[0]?.tool ?? trace.tools[0]?.name;
      const model =
        stack === "livekit-google"
          ? new google.beta.realtime.RealtimeModel({ apiKey: "fake-key", model: "gemini-3.8-live", httpOptions: { baseUrl: base, ...(headers ? { headers } : {}) },
              toolBehavior: (trace.behaviors[first] ?? "NON_BLOCKING") as any, inputAudioTranscription: {}, outputAudioTranscription: {},
              ...(trace.language ? { language: trace.language } : {}) })
          : new lkopenai.realtime.RealtimeModel({ apiKey: "fake-key", model: "gpt-realtime",
              ...(trace.language ? { inputAudioTranscription: { model: "gpt-4o-mini-transcribe", language: trace.language.split("-")[0] } } : {}),
              ...(choiceNone ? { toolChoice: "none" as const } : {}),
              // The plugin takes no headers, and joins "/realtime" to its base URL: the
              // whole path, then the query parameter (the joined "/realtime" becomes an
              // empty query parameter of its own, which the fake ignores).
              baseURL: named ? `${base}/v1/realtime?arbiter_session=${encodeURIComponent(named)}&` : `${base}/v1` });
      const session = new voice.AgentSession({ llm: model });
      session.on("error" as any, (e: any) => console.error(`${trace.name}: ${e?.error?.message ?? e}`));
      backend.start();
      await session.start({ agent: new voice.Agent({ instructions: "You book appointment slots.", tools: lkTools }) });
      if (seed) {
        const h = session.generateReply({ instructions: "Summarize the results naturally.", toolChoice: "none" });
        void h.waitForPlayout().catch(() => undefined);
      }
      // The recorded conversation ends when the trace does (later than endMs when the
      // plugin restarts its connection: the fake resumes the trace where it stopped);
      // LiveKit reconnects after it (the check keeps each trace's first session).
      await sleep((trace.endMs ?? 0) + 6000);
      ending.abort();
      await session.close();
      break;
    }
  }
  ending.abort();
  backend.close();
  return ended;
}
