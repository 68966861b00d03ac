// Issue 12 end to end: a network cut turns a stop into a commit, unless the adapter
// delivers what it observed with its age, asks Decide only once it is delivered, and
// aborts a waiting Decide when an event's delivery fails (the Decide contract).
//
// Real processes, real timings: the LiveAdapter talks to a real `arbiter serve` (the
// booking policy: 1.5 s grace, 3 s transcript timeout) through clients/e2e/proxy.py, a
// TCP proxy the test cuts. The timeline of the issue:
//
//     t=0     the booking's prepare is done: Decide(prepared=true) starts the grace window
//     t=0.3   the proxy cuts every connection and refuses new ones
//     t=0.8   the user starts speaking (voice activity START): its ReportSpeech fails and
//             is retried
//     t=3.5   the proxy is back
//     t=3.6   the transcript "Stop, don't book it.", then (3.7) the end of voice activity
//
// The START's first failed attempt aborts the parked Decide, and no Decide is asked
// until the START has landed: whenever the proxy comes back, the arbiter has the START
// (and then the stop) before any Decide could hand out a COMMIT, which would stand. The
// adapter must end with the job cancelled: a cancel action and the cancel note, never a
// commit.
//
// clients/test.sh runs it with ARBITER_OUTAGE_TARGET set to its booking arbiter (and
// ARBITER_PROXY_PYTHON to the python3 that runs the proxy); skipped otherwise:
//
//     ARBITER_OUTAGE_TARGET=127.0.0.1:50051 node --test build/test/outage.test.js
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { ArbiterClient, LiveAdapter, type Action } from "../src/index.js";

const TARGET = process.env.ARBITER_OUTAGE_TARGET;
// build/test/outage.test.js -> clients/e2e/proxy.py
const PROXY = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "e2e", "proxy.py");

describe("issue 12 through a proxy that cuts the connection", { skip: !TARGET && "set ARBITER_OUTAGE_TARGET to an arbiter serving testdata/tools/booking.yaml" }, () => {
  it("outage: a stop during a network cut cancels the booking, never commits", async () => {
    const proxy = spawn(process.env.ARBITER_PROXY_PYTHON ?? "python3", [PROXY, TARGET!], { stdio: ["pipe", "pipe", "inherit"] });
    const lines = createInterface({ input: proxy.stdout! })[Symbol.asyncIterator]();
    const next = async () => {
      const timeout = new Promise<{ value: string }>((resolve) => setTimeout(() => resolve({ value: "(timed out)" }), 10_000).unref());
      const r = await Promise.race([lines.next(), timeout]);
      return String(r.value);
    };
    const command = async (cmd: "cut" | "restore") => {
      proxy.stdin!.write(`${cmd}\n`);
      assert.equal(await next(), cmd === "cut" ? "cut" : "restored");
    };
    const log: string[] = [];
    const logger = { warn: (m: string) => void log.push(m), error: (m: string) => void log.push(m) };
    let client: ArbiterClient | undefined;
    let adapter: LiveAdapter | undefined;
    try {
      const listening = await next();
      assert.match(listening, /^listening \d+$/);
      client = new ArbiterClient(`127.0.0.1:${listening.split(" ")[1]}`, { logger });
      const actions: [number, Action][] = [];
      let t0 = performance.now();
      const session = `node-outage-${process.pid}-${Date.now() % 1e8}`;
      const ad: LiveAdapter = new LiveAdapter(client, session, (a) => {
        actions.push([(performance.now() - t0) / 1000, a]);
        if (a.type === "commit") void ad.committed(a.jobId, { reference: "R-1" }); // what the booking agent would do: book it
      }, { logger });
      adapter = ad;
      const of = <T extends Action["type"]>(type: T) => actions.map(([, a]) => a).filter((a) => a.type === type) as Extract<Action, { type: T }>[];
      await ad.feed({ toolCall: { functionCalls: [{ id: "fc_1", name: "book_slot", args: { slot: "tomorrow 3pm" } }] } });
      const [execute] = of("execute");
      assert.ok(execute, "no execute");

      const at = (t: number) => sleep(Math.max(0, t0 + t * 1000 - performance.now()));
      t0 = performance.now();
      await ad.prepared(execute.jobId); // Decide(prepared=true): the grace window runs to 1.5 s
      await at(0.3);
      await command("cut");
      await at(0.8);
      void ad.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } }); // fails, retried
      await at(3.5);
      await command("restore");
      await at(3.6);
      void ad.feed({ serverContent: { inputTranscription: { text: "Stop, don't book it." } } });
      await at(3.7);
      void ad.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_END" } });

      const deadline = performance.now() + 25_000;
      while (!(of("commit").length || (of("cancel").length && of("sendNote").length)) && performance.now() < deadline) await sleep(50);
      const timeline = actions.map(([t, a]) => `  ${t.toFixed(2)}s ${JSON.stringify(a)}`).join("\n");
      const why = `\n${timeline}\nlog:\n  ${log.join("\n  ")}`;
      assert.equal(of("commit").length, 0, `committed through the cut:${why}`);
      assert.equal(of("cancel").length, 1, `no cancel:${why}`);
      assert.match(of("cancel")[0].reason, /stop intent/);
      const notes = of("sendNote");
      assert.equal(notes.length, 1, why);
      assert.match(notes[0].text, /cancelled before it was committed/);
      const retried = log.filter((m) => m.includes("USER_ACTIVITY_START") && m.includes("retrying"));
      assert.ok(retried.length > 0, `the START was never retried (no cut?):${why}`);
      const aborted = log.filter((m) => m.includes("Decide aborted")).length;
      console.error(`  Decides aborted for an undelivered event: ${aborted}; START attempts: ${retried.length + 1}\n${timeline}`);
    } finally {
      await adapter?.close();
      client?.close();
      proxy.stdin!.end();
      if (proxy.exitCode === null) {
        const kill = setTimeout(() => proxy.kill(), 5000);
        await once(proxy, "exit");
        clearTimeout(kill);
      }
    }
  });
});
