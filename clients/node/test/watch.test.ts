// Unit test (scripted in-process server) of ArbiterClient.watch's resume: a stream lost
// to UNAVAILABLE is reopened after the last seq yielded, and nothing is yielded twice.
import { Server, ServerCredentials, status, type ServerWritableStream } from "@grpc/grpc-js";
import assert from "node:assert/strict";
import { it } from "node:test";
import { ArbiterClient, pb } from "../src/index.js";

it("watch resumes after the last seq on UNAVAILABLE, yielding each effect once", async () => {
  const plans: (number | "UNAVAILABLE")[][] = [[1, 2, "UNAVAILABLE"], [2, 3]]; // the second replica resends 2
  const afterSeqs: number[] = [];
  const server = new Server();
  server.addService(pb.ArbiterServiceService, {
    watch: (call: ServerWritableStream<pb.WatchRequest, pb.WatchResponse>) => {
      afterSeqs.push(call.request.afterSeq);
      for (const item of plans.shift() ?? []) {
        if (item === "UNAVAILABLE") return void call.emit("error", { code: status.UNAVAILABLE, details: "replica going away" });
        call.write(pb.WatchResponse.fromPartial({ seq: item, skip: { callId: `c${item}`, reason: "abandoned", seq: item } }));
      }
      call.end();
    },
  } as any);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const client = new ArbiterClient(`127.0.0.1:${port}`, { retry: { initialBackoffMs: 10, maxBackoffMs: 20, maxElapsedMs: 2000 }, logger: { warn() {} } });
  try {
    const seqs: number[] = [];
    for await (const w of client.watch("s1")) seqs.push(w.seq);
    assert.deepEqual(seqs, [1, 2, 3]);
    assert.deepEqual(afterSeqs, [0, 2]);
  } finally {
    client.close();
    server.forceShutdown();
  }
});
