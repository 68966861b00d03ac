// A scripted in-process arbiter for the adapters' unit tests (stacks.test.ts,
// livekit.test.ts): it records every request, and RegisterCall answers per call id.
import type { sendUnaryData, ServerUnaryCall } from "@grpc/grpc-js";
import { setTimeout as sleep } from "node:timers/promises";
import { pb } from "../src/index.js";

/** A scripted arbiter: records every request; RegisterCall answers per call id. */
export class Script {
  requests: [string, any][] = [];
  register: (r: any) => pb.RegisterCallResponse = (r) =>
    pb.RegisterCallResponse.fromPartial({ callId: r.callId, disposition: pb.Disposition.DISPOSITION_EXECUTE, jobId: "job-1", sideEffect: true });
  speech: pb.Effects = pb.Effects.fromPartial({});
  sent(name: string): any[] {
    return this.requests.filter(([n]) => n === name).map(([, r]) => r);
  }
  private h(name: string, respond: (r: any) => any) {
    return (call: ServerUnaryCall<any, any>, cb: sendUnaryData<any>) => {
      this.requests.push([name, call.request]);
      Promise.resolve(respond(call.request)).then((r) => cb(null, r));
    };
  }
  impl() {
    const pending = () => sleep(200).then(() => pb.DecideResponse.fromPartial({ decision: pb.Decision.DECISION_PENDING }));
    return {
      registerCall: this.h("RegisterCall", (r) => this.register(r)),
      reportSpeech: this.h("ReportSpeech", () => ({ effects: this.speech })),
      reportTranscript: this.h("ReportTranscript", () => pb.ReportTranscriptResponse.fromPartial({ intent: "other" })),
      reportToolCallCancellation: this.h("ReportToolCallCancellation", () => pb.ReportToolCallCancellationResponse.fromPartial({})),
      decide: this.h("Decide", pending),
      complete: this.h("Complete", () => ({ effects: pb.Effects.fromPartial({}) })),
      connect: this.h("Connect", () => pb.ConnectResponse.fromPartial({})),
      closeSession: this.h("CloseSession", () => pb.CloseSessionResponse.fromPartial({})),
      getSession: this.h("GetSession", (r) => pb.GetSessionResponse.fromPartial({ sessionId: r.sessionId })),
      poll: this.h("Poll", () => ({ effects: pb.Effects.fromPartial({}) })),
      configureSession: this.h("ConfigureSession", () => pb.ConfigureSessionResponse.fromPartial({})),
    };
  }
}

