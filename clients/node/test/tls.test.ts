// Issue 15, TLS and tokens, end to end: a real `arbiter serve` with --tls-cert/--tls-key,
// --tls-client-ca (mutual TLS) and --auth-tokens-file, certificates made here with
// openssl, and the client's `tls` and `token` options. A good token with the CA's client
// certificate works; a wrong or missing token is UNAUTHENTICATED; no client certificate,
// or one the CA did not sign, does not get through the handshake; a server certificate
// the client's CA did not sign is refused by the client. `serverName` as a host name or
// an IP address the certificate carries works, another is refused; and no process
// warning is emitted (DEP0123: the TLS ServerName is never an IP address).
//
// clients/test.sh runs it with ARBITER_BIN set; skipped otherwise:
//
//     ARBITER_BIN=/tmp/arbiter node --test build/test/tls.test.js
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ArbiterClient, UnauthenticatedError, UnavailableError, pb, type ArbiterClientOptions } from "../src/index.js";
import { ARBITER_BIN, makeCerts, serveArbiter, tempDir, type Arbiter } from "./procs.js";

const quiet = { warn() {} };
// Every process warning while these tests run: dialling 127.0.0.1 over TLS must not set
// the TLS ServerName to an IP address (DEP0123, "not permitted by RFC 6066").
const warnings: string[] = [];
process.on("warning", (w) => void warnings.push(`${(w as { code?: string }).code ?? w.name}: ${w.message}`));

describe("TLS and tokens against arbiter serve", { skip: !ARBITER_BIN && "set ARBITER_BIN to the arbiter binary" }, () => {
  let dir: string, arbiter: Arbiter;
  before(async () => {
    dir = tempDir("arbiter-tls-");
    makeCerts(dir);
    writeFileSync(join(dir, "tokens.yaml"), '"good-token-1": tenant-a\n');
    arbiter = await serveArbiter(
      [
        "--tools", join(import.meta.dirname, "..", "..", "..", "..", "testdata", "tools", "booking.yaml"),
        "--tls-cert", join(dir, "server.pem"), "--tls-key", join(dir, "server-key.pem"),
        "--tls-client-ca", join(dir, "ca.pem"), "--auth-tokens-file", join(dir, "tokens.yaml"),
      ],
      join(dir, "serve.log"),
    );
  });
  after(async () => {
    await arbiter?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const mtls = () => ({ caFile: join(dir, "ca.pem"), certFile: join(dir, "client.pem"), keyFile: join(dir, "client-key.pem") });
  /**
   * RegisterCall on a fresh session through a client with `opts`: its answer, or the
   * error. `failFast`: one attempt without waitForReady, so a channel that cannot
   * connect fails with UNAVAILABLE (and the TLS error) instead of waiting out the deadline.
   */
  async function attempt(opts: ArbiterClientOptions, failFast = false): Promise<unknown> {
    const client = new ArbiterClient(arbiter.addr, { timeoutMs: 3000, logger: quiet, ...opts });
    try {
      const sessionId = `node-tls-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
      return await client.registerCall({ sessionId, callId: "fc_1", tool: "book_slot", args: { slot: "tomorrow 3pm" } }, { retry: !failFast });
    } catch (err) {
      return err;
    } finally {
      client.close();
    }
  }

  it("a good token with the CA's client certificate works", async () => {
    const res = await attempt({ tls: mtls(), token: "good-token-1" });
    assert.ok(!(res instanceof Error), `${res}\n${arbiter.log()}`);
    assert.equal((res as pb.RegisterCallResponse).disposition, pb.Disposition.DISPOSITION_EXECUTE);
    // The same in one attempt without waitForReady, as the handshake cases below are sent:
    // a fresh channel connects for it, so their failures are the handshake's.
    const fast = await attempt({ tls: mtls(), token: "good-token-1" }, true);
    assert.ok(!(fast instanceof Error), String(fast));
  });

  it("a token given as a function is asked for each RPC", async () => {
    let asked = 0;
    const res = await attempt({ tls: mtls(), token: () => (asked++, Promise.resolve("good-token-1")) });
    assert.ok(!(res instanceof Error), String(res));
    assert.ok(asked >= 1);
  });

  it("a wrong token gets UNAUTHENTICATED", async () => {
    const res = await attempt({ tls: mtls(), token: "wrong-token" });
    assert.ok(res instanceof UnauthenticatedError, String(res));
    assert.equal(res.reason, "UNAUTHENTICATED");
  });

  it("no token gets UNAUTHENTICATED", async () => {
    const res = await attempt({ tls: mtls() });
    assert.ok(res instanceof UnauthenticatedError, String(res));
  });

  it("no client certificate does not get through the handshake", async () => {
    const res = await attempt({ tls: { caFile: join(dir, "ca.pem") }, token: "good-token-1" }, true);
    assert.ok(res instanceof UnavailableError, String(res));
    assert.equal(res.reason, ""); // the arbiter never saw the request: no details
  });

  it("a client certificate the CA did not sign does not get through", async () => {
    const res = await attempt({ tls: { caFile: join(dir, "ca.pem"), certFile: join(dir, "rogue.pem"), keyFile: join(dir, "rogue-key.pem") }, token: "good-token-1" }, true);
    assert.ok(res instanceof UnavailableError, String(res));
  });

  it("the client refuses a server its CA did not sign", async () => {
    const res = await attempt({ tls: { caFile: join(dir, "rogue.pem"), certFile: join(dir, "client.pem"), keyFile: join(dir, "client-key.pem") }, token: "good-token-1" }, true);
    assert.ok(res instanceof UnavailableError, String(res));
  });

  it("serverName: a host name the certificate carries works, an IP address it carries works, another name is refused", async () => {
    for (const serverName of ["localhost", "127.0.0.1"]) {
      const res = await attempt({ tls: { ...mtls(), serverName }, token: "good-token-1" });
      assert.ok(!(res instanceof Error), `${serverName}: ${res}`);
    }
    const wrong = await attempt({ tls: { ...mtls(), serverName: "arbiter.wrong.example" }, token: "good-token-1" }, true);
    assert.ok(wrong instanceof UnavailableError, String(wrong));
    const wrongIp = await attempt({ tls: { ...mtls(), serverName: "127.0.0.2" }, token: "good-token-1" }, true);
    assert.ok(wrongIp instanceof UnavailableError, String(wrongIp));
  });

  it("no process warning was emitted (no TLS ServerName that is an IP address: DEP0123)", async () => {
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
    assert.deepEqual(warnings, []);
  });

  it("a token without TLS is refused by the constructor", () => {
    assert.throws(() => new ArbiterClient(arbiter.addr, { token: "good-token-1" }), /needs TLS/);
  });
});
