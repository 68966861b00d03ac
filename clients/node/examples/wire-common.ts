/**
 * What every wire agent stack shares (examples/wire-agent.ts): the recorded sessions it
 * plays through the fake provider, the arbiter client, and a fake two-phase booking
 * backend that writes the backend log docs/fake-provider.md defines.
 */
import { createWriteStream, readdirSync, readFileSync, type WriteStream } from "node:fs";
import { basename, join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterClient, type Action, type SessionCore } from "../src/index.js";

/** One recorded session of testdata/traces/, as much of it as an agent may know up front. */
export interface TraceInfo {
  name: string;
  /** How long the backend's prepare takes (`session_start.prepare_ms`, default 4000). */
  prepareMs: number;
  /**
   * The behavior the recorded model's tool was declared with (its calls' `behavior`):
   * a Gemini agent declares book_slot so, as the recorded agent did.
   */
  behavior: "BLOCKING" | "NON_BLOCKING";
  /** When the recorded session ends (its `end` line, else its last event), ms. */
  endMs?: number;
}

/** The traces of DIR (`*.jsonl`, sorted). */
export function readTraces(dir: string): TraceInfo[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .map((f) => {
      const events = readFileSync(join(dir, f), "utf8")
        .split("\n")
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l));
      const start = events.find((e) => e.event === "session_start");
      const call = events.find((e) => e.event === "tool_call" && e.behavior);
      const endMs = Math.max(0, ...events.map((e) => Number(e.t_ms) || 0));
      return { name: basename(f, ".jsonl"), prepareMs: start?.prepare_ms ?? 4000, behavior: call?.behavior === "BLOCKING" ? "BLOCKING" : "NON_BLOCKING", endMs };
    });
}

/**
 * An arbiter client for ADDR, or for ADDR,ADDR,... (replicas on one Redis): one channel
 * whose RPCs go round-robin over them (grpc-js `round_robin`), so one session's
 * RegisterCall, Decide, Report* and Watch land on different replicas.
 */
export function arbiterClient(addrs: string): ArbiterClient {
  const list = addrs.split(",").filter(Boolean);
  if (list.length === 1) return new ArbiterClient(list[0]);
  return new ArbiterClient(`ipv4:${list.join(",")}`, {
    channelOptions: { "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }) },
  });
}

/** The backend log: one JSON line per thing the backend did. */
export class BackendLog {
  private readonly out: WriteStream;
  constructor(file: string) {
    this.out = createWriteStream(file, { flags: "a" });
  }
  write(line: Record<string, unknown>): void {
    this.out.write(JSON.stringify(line) + "\n");
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.out.end(resolve));
  }
}

/**
 * A fake two-phase booking backend for one session: `prepare` takes `prepareMs`, `commit`
 * books (a reference), `release` lets go. Each step is a backend log line (`execute`,
 * `commit`, `cancel` / `abort_prepare`) with the session's trace and `t_ms` since the
 * model session started (`start()`). `handle` drives it from a core's actions.
 */
export class Backend {
  private t0 = performance.now();
  private readonly prepares = new Map<string, AbortController>();
  private refs = 0;
  core!: SessionCore;

  constructor(
    readonly trace: TraceInfo,
    private readonly log: BackendLog,
  ) {}

  /** The model session started now (its greeting arrived): t_ms counts from here. */
  start(): void {
    this.t0 = performance.now();
  }

  tMs(): number {
    return Math.round(performance.now() - this.t0);
  }

  private line(out: string, fields: Record<string, unknown>): void {
    this.log.write({ out, t_ms: this.tMs(), trace: this.trace.name, ...fields });
  }

  /** A tool with no two phases ran for callId (the no-integration run's log). */
  ran(callId: string): void {
    this.line("execute", { job_id: "", call_id: callId });
  }

  /** Phase one: holds the slot (`prepareMs`); rejects if `signal` aborts first. */
  async prepare(jobId: string, callId: string, signal?: AbortSignal): Promise<void> {
    this.line("execute", { job_id: jobId, call_id: callId });
    await sleep(this.trace.prepareMs, undefined, { signal });
  }

  /** Phase two: books it. */
  async commit(jobId: string): Promise<Record<string, unknown>> {
    this.line("commit", { job_id: jobId });
    return { reference: `R-${++this.refs}` };
  }

  /** Lets go of a prepare that will not be committed. */
  release(jobId: string, how: "cancel" | "abortPrepare"): void {
    this.prepares.get(jobId)?.abort();
    this.prepares.delete(jobId);
    this.line(how === "cancel" ? "cancel" : "abort_prepare", { job_id: jobId });
  }

  /** Handles the backend's actions of `core` (true), or says it is not one (false). */
  handle(a: Action): boolean {
    const report = (p: Promise<unknown>) => void p.catch((err) => console.error(`${this.trace.name} ${a.type}: ${err}`));
    switch (a.type) {
      case "execute": {
        if (!a.sideEffect) {
          report(this.core.result(a.jobId, { ok: true }));
          return true;
        }
        const abort = new AbortController();
        this.prepares.set(a.jobId, abort);
        report(
          this.prepare(a.jobId, a.call.id, abort.signal).then(
            () => this.core.prepared(a.jobId),
            () => undefined, // aborted: the core already handed out abortPrepare
          ),
        );
        return true;
      }
      case "abortPrepare":
      case "cancel":
        this.release(a.jobId, a.type);
        return true;
      case "commit":
        report(this.commit(a.jobId).then((r) => this.core.committed(a.jobId, r)));
        return true;
    }
    return false;
  }

  close(): void {
    for (const c of this.prepares.values()) c.abort();
    this.prepares.clear();
  }
}
