/**
 * node-livekit-google / node-livekit-openai: a LiveKit Agents (agents-js 1.9) AgentSession
 * with a realtime model (@livekit/agents-plugin-google or -openai 1.9.0), run headless:
 * no room, no audio I/O (the fake provider sends events, never user audio), the
 * booking tool wrapped by Arbiter's LiveKit integration, for one recorded session
 * played by the fake provider.
 */
import { initializeLogger, llm, voice } from "@livekit/agents";
import * as google from "@livekit/agents-plugin-google";
import * as openai from "@livekit/agents-plugin-openai";
import { LiveKitArbiter } from "../src/livekit.js";
import type { StackOptions } from "./wire-agent.js";
import { Backend, type TraceInfo } from "./wire-common.js";

let logger = false;

export async function run(trace: TraceInfo, o: StackOptions, provider: "google" | "openai"): Promise<void> {
  if (!logger) {
    initializeLogger({ pretty: false, level: process.env.LK_LEVEL ?? "fatal" });
    logger = true;
  }
  const backend = new Backend(trace, o.backendLog);
  const base = `${o.provider}/trace/${trace.name}`;
  let session!: voice.AgentSession;
  let ended!: () => void;
  const done = new Promise<void>((resolve) => (ended = resolve));
  // --- the snippet clients/node/README.md shows ---
  const arbiter = await LiveKitArbiter.create(o.client, o.sessionId(trace), {
    provider,
    behaviors: provider === "google" ? { book_slot: trace.behavior } : {}, // OpenAI: NON_BLOCKING
    // The recorded conversation is over when the provider closes: end the realtime
    // session before the plugin reconnects (it would replay the trace on a new session).
    onProviderClose: () => {
      arbiter.endRealtime();
      void session.close().finally(ended);
    },
  });
  const bookSlot = arbiter.tool(
    "book_slot",
    llm.tool({
      description: "Book an appointment slot.",
      parameters: { type: "object", properties: { slot: { type: "string" } }, required: ["slot"] }, // JSON schema, not zod
      execute: async () => undefined, // not used: the two phases below run instead
    }),
    {
      prepare: (_args, job) => backend.prepare(job.jobId, job.callId, job.signal), // hold the slot
      commit: (jobId) => backend.commit(jobId), // book it, only when Arbiter says so
      release: (jobId, how) => backend.release(jobId, how),
    },
  );
  const model = arbiter.model(
    provider === "google"
      ? new google.beta.realtime.RealtimeModel({ apiKey: "fake-key", model: "gemini-3.8-live", httpOptions: { baseUrl: base },
          toolBehavior: trace.behavior as any, inputAudioTranscription: {}, outputAudioTranscription: {} })
      : new openai.realtime.RealtimeModel({ apiKey: "fake-key", model: "gpt-realtime", baseURL: `${base}/v1` }),
  );
  session = new voice.AgentSession({ llm: model });
  arbiter.attach(session); // answers and notes go through its agent's chat context; its close closes the arbiter session
  backend.start();
  await session.start({ agent: new voice.Agent({ instructions: "You book appointment slots.", tools: { book_slot: bookSlot } }) });
  // --- end of snippet ---
  await done;
  await arbiter.close();
  backend.close();
}
