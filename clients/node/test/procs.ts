// Real processes for the end-to-end tests: `arbiter serve` (the binary clients/test.sh
// builds, ARBITER_BIN), redis-server, openssl. Each is started on a free port and
// stopped by the test that started it. No test here waits on a clock for its verdict:
// the waits below are bounded polls for a process to say it is up.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** The arbiter binary clients/test.sh built; unset: the end-to-end tests skip. */
export const ARBITER_BIN = process.env.ARBITER_BIN;

/** A fresh temporary directory. */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A TCP port free on 127.0.0.1 now (the OS's pick). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const port = (srv.address() as { port: number }).port;
  srv.close();
  await once(srv, "close");
  return port;
}

/** A process whose stdout and stderr go to one log file. */
export class Proc {
  readonly exited: Promise<number | null>;
  exitedAt: number | undefined; // Date.now() at the exit
  constructor(
    readonly proc: ChildProcess,
    readonly logFile: string,
  ) {
    this.exited = once(proc, "exit").then(([code]) => {
      this.exitedAt = Date.now();
      return code as number | null;
    });
  }
  log(): string {
    try {
      return readFileSync(this.logFile, "utf8");
    } catch {
      return "";
    }
  }
  /** SIGTERM (or `sig`), then waits for the exit (SIGKILL after 15 s). */
  async stop(sig: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill(sig);
    const kill = setTimeout(() => this.proc.kill("SIGKILL"), 15_000);
    await this.exited;
    clearTimeout(kill);
  }
}

function start(cmd: string, args: string[], logFile: string, env: Record<string, string> = {}): Proc {
  writeFileSync(logFile, "");
  const fd = openSync(logFile, "a");
  const proc = spawn(cmd, args, { stdio: ["ignore", fd, fd], env: { ...process.env, ...env } });
  return new Proc(proc, logFile);
}

/** An `arbiter serve` process and the address it reported. */
export interface Arbiter extends Proc {
  addr: string;
}

/**
 * Starts `ARBITER_BIN serve --listen 127.0.0.1:0 ARGS...` (with `env` over this
 * process's) and waits (at most 20 s) for its "arbiter serving" line.
 */
export async function serveArbiter(args: string[], logFile: string, env: Record<string, string> = {}): Promise<Arbiter> {
  if (!ARBITER_BIN) throw new Error("ARBITER_BIN is not set");
  const p = start(ARBITER_BIN, ["serve", "--listen", "127.0.0.1:0", ...args], logFile, env) as Arbiter;
  for (let i = 0; i < 200; i++) {
    const m = /arbiter serving.* addr=(\S+)/.exec(p.log());
    if (m) {
      p.addr = m[1];
      return p;
    }
    if (p.proc.exitCode !== null) break;
    await sleep(100);
  }
  await p.stop("SIGKILL");
  throw new Error(`arbiter serve ${args.join(" ")} did not report its address:\n${p.log()}`);
}

/**
 * Starts `redis-server` on `port` (no persistence unless `args` asks for it) and waits
 * (at most 10 s) until it answers PING.
 */
export async function startRedis(port: number, dir: string, args: string[] = ["--save", "", "--appendonly", "no"]): Promise<Proc> {
  const p = start("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, ...args], join(dir, `redis-${port}-${Date.now()}.log`));
  for (let i = 0; i < 100; i++) {
    if (spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" }).stdout.trim() === "PONG") return p;
    if (p.proc.exitCode !== null) break;
    await sleep(100);
  }
  await p.stop("SIGKILL");
  throw new Error(`redis-server on ${port} did not come up:\n${p.log()}`);
}

/** Runs openssl with `args` in `dir`; throws with its output when it fails. */
export function openssl(dir: string, ...args: string[]): void {
  const r = spawnSync("openssl", args, { cwd: dir, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.stderr}${r.stdout}`);
}

/**
 * A CA, a server certificate for 127.0.0.1 and localhost, and two client certificates
 * (one from the CA, one self-signed: not trusted), in `dir`: ca.pem, server.pem,
 * server-key.pem, client.pem, client-key.pem, rogue.pem, rogue-key.pem.
 */
export function makeCerts(dir: string): void {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(dir, "req", "-x509", ...ec, "-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "2", "-subj", "/CN=arbiter test CA");
  writeFileSync(join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  writeFileSync(join(dir, "client.ext"), "extendedKeyUsage=clientAuth\n");
  for (const [name, ext] of [["server", "server.ext"], ["client", "client.ext"]]) {
    openssl(dir, "req", ...ec, "-keyout", `${name}-key.pem`, "-out", `${name}.csr`, "-subj", `/CN=${name}`);
    openssl(dir, "x509", "-req", "-in", `${name}.csr`, "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial", "-out", `${name}.pem`, "-days", "2", "-extfile", ext);
  }
  openssl(dir, "req", "-x509", ...ec, "-keyout", "rogue-key.pem", "-out", "rogue.pem", "-days", "2", "-subj", "/CN=rogue", "-addext", "extendedKeyUsage=clientAuth");
}
