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
import { Backend, type TraceInfo } from "./wire-common.js";

export type GuardStack = "genai" | "openai-realtime" | "openai-realtime-untranscribed" | "livekit-google" | "livekit-openai";

/** The booking tool: two phases under the arbiter by call id, or (bare) no Arbiter code. */
function bookingTool(o: StackOptions, backend: Backend, bare: boolean): (callId: string) => Promise<Record<string, unknown>> {
  if (bare) {
    let n = 0;
    return async (callId) => {
      backend.ran(callId); // books at once, as a tool with no Arbiter code would
      return { booked: true, reference: `B-${++n}` };
    };
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

let lkLogger = false;

export async function run(trace: TraceInfo, o: StackOptions, stack: GuardStack, bare: boolean): Promise<Ending> {
  const backend = new Backend(trace, o.backendLog);
  const book = bookingTool(o, backend, bare);
  const base = `${o.provider}/trace/${trace.name}`;
  const report = (what: string) => (err: unknown) => console.error(`${trace.name} ${what}: ${err instanceof Error ? err.message : err}`);
  switch (stack) {
    case "genai": {
      let session: Session | undefined;
      let closed!: () => void;
      const done = new Promise<void>((resolve) => (closed = resolve));
      const answer = async (id: string, name: string) => {
        const response = await book(id);
        session?.sendToolResponse({ functionResponses: [{ id, name, response }] });
      };
      session = await new GoogleGenAI({ apiKey: "fake-key", httpOptions: { baseUrl: base } }).live.connect({
        model: "gemini-3.8-live",
        config: {
          responseModalities: [Modality.AUDIO],
          inputAudioTranscription: {},
          outputAudioTranscription: {},
          tools: [{ functionDeclarations: [{ name: "book_slot", description: "Book an appointment slot.",
            behavior: trace.behaviors.book_slot === "BLOCKING" ? Behavior.BLOCKING : Behavior.NON_BLOCKING,
            parameters: { type: "OBJECT" as any, properties: { slot: { type: "STRING" as any } }, required: ["slot"] } }] }],
        },
        callbacks: {
          onopen: () => backend.start(),
          onmessage: (m: LiveServerMessage) => {
            for (const fc of m.toolCall?.functionCalls ?? []) void answer(fc.id!, fc.name!).catch(report("tool"));
          },
          onerror: (e) => console.error(`${trace.name}: ${e.message ?? e}`),
          onclose: () => closed(),
        },
      });
      await done;
      break;
    }
    case "openai-realtime":
    case "openai-realtime-untranscribed": {
      const rt = new OpenAIRealtimeWS({ model: "gpt-realtime" }, new OpenAI({ apiKey: "fake-key", baseURL: `${base}/v1` }));
      // untranscribed: the user's words never asked for (the guard asks for them).
      const audio = stack === "openai-realtime" ? { audio: { input: { transcription: { model: "gpt-4o-transcribe" } } } } : {};
      rt.on("event", (ev: any) => {
        if (ev.type === "session.created") {
          backend.start();
          rt.send({ type: "session.update", session: { type: "realtime", ...audio,
            tools: [{ type: "function", name: "book_slot", description: "Book an appointment slot.",
              parameters: { type: "object", properties: { slot: { type: "string" } }, required: ["slot"] } }] } } as any);
        }
        if (ev.type === "response.output_item.done" && ev.item?.type === "function_call") {
          const id: string = ev.item.call_id;
          void book(id)
            .then((out) => {
              rt.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: id, output: JSON.stringify(out) } } as any);
              rt.send({ type: "response.create" } as any);
            })
            .catch(report("tool"));
        }
      });
      rt.on("error", (err) => console.error(`${trace.name}: ${err.message}`));
      await new Promise<void>((resolve) => rt.socket.on("close", () => resolve()));
      break;
    }
    case "livekit-google":
    case "livekit-openai": {
      if (!lkLogger) {
        initializeLogger({ pretty: false, level: process.env.LK_LEVEL ?? "fatal" });
        lkLogger = true;
      }
      const bookSlot = llm.tool({
        description: "Book an appointment slot.",
        parameters: { type: "object", properties: { slot: { type: "string" } }, required: ["slot"] },
        execute: async (_args: { slot: string }, { toolCallId }) => book(toolCallId), // the helper, by LiveKit's call id
      });
      // The first seed (testdata/guard/seed_2249): a read-only tool, and a reply asked
      // for with toolChoice 'none', which Gemini ignores and agents-js enforces by
      // dropping the call it gets anyway, unanswered.
      const seed = trace.name.startsWith("seed_2249");
      const getDeal = llm.tool({
        description: "Look up this week's deal on a topic.",
        parameters: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
        execute: async (_args: { topic: string }, { toolCallId }) => (backend.ran(toolCallId), { deal: "20% off" }),
      });
      const model =
        stack === "livekit-google"
          ? new google.beta.realtime.RealtimeModel({ apiKey: "fake-key", model: "gemini-3.8-live", httpOptions: { baseUrl: base },
              toolBehavior: (trace.behaviors.book_slot ?? "NON_BLOCKING") as any, inputAudioTranscription: {}, outputAudioTranscription: {} })
          : new lkopenai.realtime.RealtimeModel({ apiKey: "fake-key", model: "gpt-realtime", baseURL: `${base}/v1` });
      const session = new voice.AgentSession({ llm: model });
      session.on("error" as any, (e: any) => console.error(`${trace.name}: ${e?.error?.message ?? e}`));
      backend.start();
      await session.start({ agent: new voice.Agent({ instructions: "You book appointment slots.", tools: seed ? { get_deal: getDeal } : { book_slot: bookSlot } }) });
      if (seed) {
        const h = session.generateReply({ instructions: "Summarize the results naturally.", toolChoice: "none" });
        void h.waitForPlayout().catch(() => undefined);
      }
      // The recorded conversation ends when the trace does (later than endMs when the
      // plugin restarts its connection: the fake resumes the trace where it stopped);
      // LiveKit reconnects after it (the check keeps each trace's first session).
      await sleep((trace.endMs ?? 0) + 6000);
      await session.close();
      break;
    }
  }
  backend.close();
  return "ended";
}
