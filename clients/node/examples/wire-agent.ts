/**
 * The Node wire agents: one process plays every recorded session of a directory through
 * the fake provider (`arbiter fake-provider`), concurrently, one model session per trace
 * (each under its `/trace/NAME` base URL), with a real client stack and Arbiter in its
 * receive loop, and a fake two-phase booking backend that writes the backend log. It
 * exits once every session has ended (0), or 1 if one failed.
 *
 *     node build/examples/wire-agent.js --stack genai|openai-realtime|livekit-google|livekit-openai \
 *       --provider http://127.0.0.1:PORT --arbiter 127.0.0.1:50051[,ADDR...] \
 *       --traces ../../testdata/traces --backend-log /tmp/backend.jsonl
 *
 * `--arbiter` with several addresses (replicas on one Redis): one channel, RPCs
 * round-robin over them. `--response-scheduling` (genai): notes may ride on NON_BLOCKING
 * function responses. `--only NAME,...` plays only those traces.
 */
import { parseArgs } from "node:util";
import type { ArbiterClient } from "../src/index.js";
import { arbiterClient, BackendLog, readTraces, type TraceInfo } from "./wire-common.js";

export interface StackOptions {
  provider: string;
  client: ArbiterClient;
  backendLog: BackendLog;
  responseScheduling: boolean;
  sessionId: (t: TraceInfo) => string;
}

const STACKS: Record<string, () => Promise<{ run: (t: TraceInfo, o: StackOptions) => Promise<void> }>> = {
  genai: () => import("./stack-genai.js"),
  "openai-realtime": () => import("./stack-openai-realtime.js"),
  "livekit-google": () => import("./stack-livekit.js").then((m) => ({ run: (t: TraceInfo, o: StackOptions) => m.run(t, o, "google") })),
  "livekit-openai": () => import("./stack-livekit.js").then((m) => ({ run: (t: TraceInfo, o: StackOptions) => m.run(t, o, "openai") })),
};
// Behind the wire guard (--provider is the guard): no adapter, the tool helper only;
// bare-*: no Arbiter code at all (the no-integration run).
for (const s of ["genai", "openai-realtime", "livekit-google", "livekit-openai"] as const) {
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
      "backend-log": { type: "string" },
      "response-scheduling": { type: "boolean", default: false },
      only: { type: "string" },
    },
  });
  const load = STACKS[values.stack ?? ""];
  if (!load || !values.provider || !values.traces || !values["backend-log"]) {
    console.error(`usage: wire-agent --stack ${Object.keys(STACKS).join("|")} --provider URL --arbiter ADDR[,ADDR...] --traces DIR --backend-log FILE`);
    return 2;
  }
  const stack = await load();
  const only = values.only ? new Set(values.only.split(",")) : undefined;
  const traces = readTraces(values.traces).filter((t) => !only || only.has(t.name));
  const client = arbiterClient(values.arbiter!);
  const backendLog = new BackendLog(values["backend-log"]);
  const run = `${process.pid}-${Date.now().toString(36)}`;
  const opts: StackOptions = {
    provider: values.provider.replace(/\/+$/, ""),
    client,
    backendLog,
    responseScheduling: values["response-scheduling"]!,
    sessionId: (t) => `node-${values.stack}-${t.name}-${run}`,
  };
  const results = await Promise.allSettled(traces.map((t) => stack.run(t, opts)));
  let failed = 0;
  results.forEach((r, i) => {
    if (r.status === "rejected") {
      failed++;
      console.error(`${traces[i].name}: ${r.reason?.stack ?? r.reason}`);
    }
  });
  await backendLog.close();
  client.close();
  console.error(`wire-agent ${values.stack}: ${traces.length - failed} of ${traces.length} sessions ended`);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
