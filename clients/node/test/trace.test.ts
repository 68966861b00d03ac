// Issue 14, traces, the Node client's half, end to end: a real `arbiter serve` exporting
// its spans as JSON on stdout (OTEL_TRACES_EXPORTER=console), and the client sending W3C
// `traceparent`. With the OpenTelemetry SDK (sdk-trace-base, the async-hooks context
// manager: devDependencies) an agent's span is active while it feeds a function call to
// the LiveAdapter: the arbiter's RegisterCall span, and the Decide the adapter then
// keeps open, must be children of it (same trace id, parent = the agent's span id), though
// the adapter delivers them later from its outbox. Without an SDK, the `traceparent`
// option supplies the context.
//
// clients/test.sh runs it with ARBITER_BIN set; skipped otherwise.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterClient, LiveAdapter, type Action } from "../src/index.js";
import { ARBITER_BIN, serveArbiter, tempDir, type Arbiter } from "./procs.js";

interface ServerSpan {
  Name: string;
  SpanContext: { TraceID: string; SpanID: string };
  Parent: { TraceID: string; SpanID: string };
}

describe("trace context reaches the arbiter's spans", { skip: !ARBITER_BIN && "set ARBITER_BIN to the arbiter binary" }, () => {
  let dir: string, arbiter: Arbiter;
  before(async () => {
    dir = tempDir("arbiter-trace-");
    arbiter = await serveArbiter(
      ["--tools", join(import.meta.dirname, "..", "..", "..", "..", "testdata", "tools", "booking.yaml")],
      join(dir, "serve.log"),
      { OTEL_TRACES_EXPORTER: "console", OTEL_BSP_SCHEDULE_DELAY: "50" },
    );
  });
  after(async () => {
    await arbiter?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The spans the arbiter exported so far (one JSON object per stdout line). */
  const spans = (): ServerSpan[] =>
    arbiter
      .log()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as ServerSpan];
        } catch {
          return [];
        }
      });
  /** Waits (bounded) for the arbiter to export a span of `rpc` in `traceId`. */
  async function spanOf(rpc: string, traceId: string): Promise<ServerSpan> {
    for (let i = 0; i < 200; i++) {
      const s = spans().find((s) => s.Name.endsWith(`/${rpc}`) && s.SpanContext.TraceID === traceId);
      if (s) return s;
      await sleep(50);
    }
    assert.fail(`no ${rpc} span in trace ${traceId}; the arbiter exported: ${spans().map((s) => `${s.Name} ${s.SpanContext.TraceID}`).join(", ")}`);
  }

  it("with the OpenTelemetry SDK: the agent's active span is the parent, also for what the outbox delivers later", async () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    const provider = new BasicTracerProvider();
    const client = new ArbiterClient(arbiter.addr, { logger: { warn() {} } });
    const actions: Action[] = [];
    const adapter = new LiveAdapter(client, `node-trace-${process.pid}-${Date.now() % 1e8}`, (a) => void actions.push(a), {
      logger: { warn() {}, error() {} },
      decideWaitMs: 300, // each long-poll ends (PENDING) and is asked again: its span is exported
    });
    try {
      const tracer = provider.getTracer("agent");
      const span = tracer.startSpan("agent turn");
      const { traceId, spanId } = span.spanContext();
      await context.with(trace.setSpan(context.active(), span), async () => {
        await adapter.feed({ toolCall: { functionCalls: [{ id: "fc_1", name: "book_slot", args: { slot: "tomorrow 3pm" } }] } });
      });
      span.end();
      // Outside the span now: a span-less RPC carries no traceparent (a trace of its own).
      const other = await client.getSession({ sessionId: adapter.sessionId });
      assert.equal(other.sessionId, adapter.sessionId);
      const reg = await spanOf("RegisterCall", traceId);
      assert.equal(reg.Parent.SpanID, spanId);
      const decide = await spanOf("Decide", traceId); // the adapter's Decide loop, started from the reply
      assert.equal(decide.Parent.SpanID, spanId);
      const getSession = spans().filter((s) => s.Name.endsWith("/GetSession"));
      assert.ok(getSession.every((s) => s.SpanContext.TraceID !== traceId));
    } finally {
      await adapter.close(3000).catch(() => undefined);
      client.close();
      context.disable();
      await provider.shutdown();
    }
  });

  it("without an SDK: the traceparent option supplies the context", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const spanId = "00f067aa0ba902b7";
    const client = new ArbiterClient(arbiter.addr, { traceparent: () => `00-${traceId}-${spanId}-01`, logger: { warn() {} } });
    try {
      await client.registerCall({ sessionId: `node-trace-opt-${process.pid}`, callId: "fc_1", tool: "book_slot", args: { slot: "tomorrow 3pm" } });
      const reg = await spanOf("RegisterCall", traceId);
      assert.equal(reg.Parent.SpanID, spanId);
    } finally {
      client.close();
    }
  });
});

