/**
 * node-livekit-google / node-livekit-openai: a LiveKit Agents (agents-js 1.9) AgentSession
 * with a realtime model (@livekit/agents-plugin-google or -openai 1.9.0), run headless:
 * no room, no audio I/O (the fake provider sends events, never user audio), every tool
 * of the trace wrapped by Arbiter's LiveKit integration (two phases for a side effect,
 * the tool's own execute for a read-only one), for one recorded session played by the
 * fake provider. The plugins reconnect on their own when the provider closes before the
 * trace's end (Google with its resumption handle); the session ends at the end.
 */
import { initializeLogger, llm, voice } from "@livekit/agents";
import * as google from "@livekit/agents-plugin-google";
import * as openai from "@livekit/agents-plugin-openai";
import { CommitOutcomeUnknown, LiveKitArbiter, type TwoPhase } from "../src/livekit.js";
import type { Ending, StackOptions } from "./wire-agent.js";
import { Backend, closeKind, resolveCall, UnknownOutcome, type ToolDecl, type TraceInfo } from "./wire-common.js";

let logger = false;

export async function run(trace: TraceInfo, o: StackOptions, provider: "google" | "openai"): Promise<Ending> {
  if (!logger) {
    initializeLogger({ pretty: false, level: process.env.LK_LEVEL ?? "fatal" });
    logger = true;
  }
  const backend = new Backend(trace, o.backendLog);
  const base = `${o.provider}/trace/${trace.name}`;
  // The Google plugin declares one behavior for every tool (toolBehavior): that of the
  // first tool the trace calls (its recorded calls', else the policy's).
  const first = Object.values(trace.calls)[0]?.tool ?? trace.tools[0]?.name;
  const behavior = trace.behaviors[first] ?? "NON_BLOCKING";
  if (process.env.WIRE_DEBUG) console.error(`${trace.name} session ${o.sessionId(trace)}`);
  let session!: voice.AgentSession;
  let ending: Ending = "ended";
  let ended!: () => void;
  const done = new Promise<void>((resolve) => (ended = resolve));
  const jobs = new Map<string, string>(); // call id -> the job its execute opened (read-only tools' progress)
  // --- the snippet clients/node/README.md shows ---
  const arbiter = await LiveKitArbiter.create(o.client, o.sessionId(trace), {
    provider,
    behaviors: provider === "google" ? Object.fromEntries(trace.tools.map((t) => [t.name, behavior])) : {}, // OpenAI: the policy's
    language: trace.language,
    resolveCall: resolveCall(trace), // the app's tool choice and business key for each call
    // The recorded conversation is over when the provider closes at the trace's end (or
    // refuses the trace): end the realtime session before the plugin reconnects. Any
    // other close is a reconnect, which the plugins make themselves.
    onProviderClose: ({ code, reason }) => {
      const kind = closeKind(code, reason);
      if (kind === "reconnect") return;
      ending = kind === "end" ? "ended" : "refused";
      arbiter.endRealtime();
      void session.close().finally(ended);
    },
    onAction: (a) => {
      if (a.type === "execute") jobs.set(a.call.id, a.jobId);
      if (process.env.WIRE_DEBUG) console.error(`${trace.name} ${backend.tMs()} action ${JSON.stringify(a)}`);
    },
  });
  const twoPhase = (tool: string): TwoPhase => ({
    prepare: (_args, job) => {
      backend.job(job.jobId, tool, job.callId, true);
      return backend.prepare(job.jobId, job.signal); // hold the slot
    },
    commit: (jobId) =>
      backend // book it, only when Arbiter says so
        .commit(jobId, (outcome, r) => void (outcome === "committed" ? arbiter.core.committed(jobId, r) : arbiter.core.failed(jobId, "the backend reports the commit did not happen")))
        .catch((err) => Promise.reject(err instanceof UnknownOutcome ? new CommitOutcomeUnknown(err.message) : err)),
    release: (jobId, how) => backend.release(jobId, how),
  });
  const wrap = (t: ToolDecl) =>
    arbiter.tool(
      t.name,
      llm.tool({
        description: t.description,
        parameters: t.parameters as any, // JSON schema, not zod
        execute: async (_args, opts) => {
          // A read-only call, when Arbiter says run it (a side-effecting one runs its two phases).
          const jobId = jobs.get(opts.toolCallId) ?? opts.toolCallId;
          backend.job(jobId, t.name, opts.toolCallId, false);
          return backend.run(jobId, (p) => arbiter.core.progress(jobId, p));
        },
      }),
      twoPhase(t.name),
    );
  const tools = Object.fromEntries(trace.tools.map((t) => [t.name, wrap(t)]));
  const model = arbiter.model(
    provider === "google"
      ? new google.beta.realtime.RealtimeModel({ apiKey: "fake-key", model: "gemini-3.8-live", httpOptions: { baseUrl: base },
          toolBehavior: behavior as any, inputAudioTranscription: {}, outputAudioTranscription: {}, ...(trace.language ? { language: trace.language } : {}) })
      : new openai.realtime.RealtimeModel({ apiKey: "fake-key", model: "gpt-realtime", baseURL: `${base}/v1`,
          ...(trace.language ? { inputAudioTranscription: { model: "gpt-4o-transcribe", language: trace.language } } : {}) }),
  );
  session = new voice.AgentSession({ llm: model });
  arbiter.attach(session); // answers and notes go through its agent's chat context; its close closes the arbiter session
  backend.start();
  await session.start({ agent: new voice.Agent({ instructions: "You help the user with their requests.", tools }) });
  // --- end of snippet ---
  await done;
  await arbiter.close();
  backend.close();
  return ending;
}
