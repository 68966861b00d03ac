/**
 * The Node wire agents: one process plays every recorded session of a directory through
 * the fake provider (`arbiter fake-provider`), concurrently, one model session per trace
 * (each under its `/trace/NAME` base URL), with a real client stack and Arbiter in its
 * receive loop, every tool the policy names (and every tool a trace calls) declared and
 * wrapped, and a fake backend that does what each trace's `backend` says and writes the
 * backend log. A session reconnects when the provider closes before the trace's end
 * (Gemini with its resumption handle), and ends at the end; one the fake refuses (its
 * trace's protocol cannot carry it) is reported skipped. It exits once every session has
 * ended or been refused (0), or 1 if one failed.
 *
 *     node build/examples/wire-agent.js --stack genai|openai-realtime|livekit-google|livekit-openai \
 *       --provider http://127.0.0.1:PORT --arbiter 127.0.0.1:50051[,ADDR...] \
 *       --traces ../../testdata/traces --tools policy.json --backend-log /tmp/backend.jsonl
 *
 * `--tools`: the arbiter's tool policy as JSON (wire.sh converts the YAML). `--arbiter`
 * with several addresses (replicas on one Redis): one channel, RPCs round-robin over
 * them. `--response-scheduling` (genai): notes may ride on NON_BLOCKING function
 * responses in every session (else only where the trace says the provider honours
 * scheduling). `--only NAME,...` plays only those traces. WIRE_DEBUG=1 (LiveKit stacks)
 * logs each session's arbiter session id and every action to stderr.
 */
import { parseArgs } from "node:util";
import type { ArbiterClient } from "../src/index.js";
import type { FunctionCallLike, pb } from "../src/index.js";
import { arbiterClient, Backend, BackendLog, closeKind, readPolicy, readTraces, readTranscript, resolveCall, type TraceInfo } from "./wire-common.js";

/** How a session ended: at its trace's end, or refused by the fake provider (its protocol cannot carry the trace). */
export type Ending = "ended" | "refused";

export interface StackOptions {
  provider: string;
  client: ArbiterClient;
  backendLog: BackendLog;
  responseScheduling: boolean;
  sessionId: (t: TraceInfo) => string;
  /** The trace's backend for one session (it writes the backend log). */
  backend: (t: TraceInfo) => Backend;
  /** The call as the recorded app registered it (its tool choice, its business key). */
  resolveCall: (t: TraceInfo) => (call: FunctionCallLike) => FunctionCallLike;
  /** The recorded app's own readings of the user's words (its trace's `transcript` lines with a `reading`). */
  readTranscript: (t: TraceInfo) => (text: string) => pb.AgentReading | undefined;
  /** What the fake provider's close of a connection means: the end, a refusal, or a reconnect. */
  closeKind: (code: number, reason: string) => "end" | "refused" | "reconnect";
  /**
   * The trace shares a call id with another trace of the set (the fake provider plays
   * the recorded ids, short ones like "c1", and every session at once): behind the wire
   * guard its tools cannot be found by call id alone (the guard's call index answers
   * such an id FAILED_PRECONDITION, ambiguous), so the stack names its arbiter session.
   */
  sharesCallIds: (t: TraceInfo) => boolean;
}

const STACKS: Record<string, () => Promise<{ run: (t: TraceInfo, o: StackOptions) => Promise<Ending> }>> = {
  genai: () => import("./stack-genai.js"),
  "openai-realtime": () => import("./stack-openai-realtime.js"),
  "livekit-google": () => import("./stack-livekit.js").then((m) => ({ run: (t: TraceInfo, o: StackOptions) => m.run(t, o, "google") })),
  "livekit-openai": () => import("./stack-livekit.js").then((m) => ({ run: (t: TraceInfo, o: StackOptions) => m.run(t, o, "openai") })),
};
// Behind the wire guard (--provider is the guard): no adapter, the tool helper only;
// bare-*: no Arbiter code at all (the no-integration run).
for (const s of ["genai", "openai-realtime", "openai-realtime-untranscribed", "livekit-google", "livekit-openai"] as const) {
  STACKS[`guard-${s}`] = () => import("./guard-stacks.js").then((m) => ({ run: (t: TraceInfo, o: StackOptions) => m.run(t, o, s, false) }));
  STACKS[`bare-${s}`] = () => import("./guard-stacks.js").then((m) => ({ run: (t: TraceInfo, o: StackOptions) => m.run(t, o, s, true) }));
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      stack: { type: "string" },
      provider: { type: "string" },
      arbiter: { type: "string", default: "127.0.0.1:50051" },
      traces: { type: "string" },
      tools: { type: "string" },
      "backend-log": { type: "string" },
      "response-scheduling": { type: "boolean", default: false },
      only: { type: "string" },
    },
  });
  const load = STACKS[values.stack ?? ""];
  if (!load || !values.provider || !values.traces || !values["backend-log"]) {
    console.error(`usage: wire-agent --stack ${Object.keys(STACKS).join("|")} --provider URL --arbiter ADDR[,ADDR...] --traces DIR [--tools POLICY.json] --backend-log FILE`);
    return 2;
  }
  const stack = await load();
  const only = values.only ? new Set(values.only.split(",")) : undefined;
  const traces = readTraces(values.traces, readPolicy(values.tools)).filter((t) => !only || only.has(t.name));
  const owners = new Map<string, number>(); // call id -> how many traces of the set call it
  for (const t of traces) for (const id of Object.keys(t.calls)) owners.set(id, (owners.get(id) ?? 0) + 1);
  const client = arbiterClient(values.arbiter!);
  const backendLog = new BackendLog(values["backend-log"]);
  const run = `${process.pid}-${Date.now().toString(36)}`;
  const opts: StackOptions = {
    provider: values.provider.replace(/\/+$/, ""),
    client,
    backendLog,
    responseScheduling: values["response-scheduling"]!,
    sessionId: (t) => `node-${values.stack}-${t.name}-${run}`,
    backend: (t) => new Backend(t, backendLog),
    resolveCall,
    readTranscript,
    closeKind,
    sharesCallIds: (t) => Object.keys(t.calls).some((id) => (owners.get(id) ?? 0) > 1),
  };
  const results = await Promise.allSettled(traces.map((t) => stack.run(t, opts)));
  let failed = 0;
  const refused: string[] = [];
  results.forEach((r, i) => {
    if (r.status === "rejected") {
      failed++;
      console.error(`${traces[i].name}: ${r.reason?.stack ?? r.reason}`);
    } else if (r.value === "refused") refused.push(traces[i].name);
  });
  await backendLog.close();
  client.close();
  console.error(`wire-agent ${values.stack}: ${traces.length - failed - refused.length} of ${traces.length} sessions ended, ${refused.length} refused by the provider${refused.length ? ` (${refused.join(", ")})` : ""}`);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
