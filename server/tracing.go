package server

import (
	"context"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/voicearbiter/arbiter/arbiter"
)

// Tracing: one span per RPC, made by go.opentelemetry.io/contrib's otelgrpc stats
// handler (not an interceptor: it sees the whole RPC, and it extracts the caller's W3C
// trace context, so an agent's span is the parent of the arbiter's). The handler's
// record path (Server.record, after the engine answered) adds what the arbiter did to
// the RPC's span: the ids as attributes, and one event per decision, hold start and
// end, withdrawn commit, response, skip, note, run update, outcome and claim
// correction. With no tracer provider (Options.TracerProvider nil) there is no stats
// handler at all and the span in every context is the no-op one: the record path
// checks IsRecording and does nothing more.

// Span attributes (on the RPC's span) and event attributes. The arbiter's ids keep the
// names of the log keys, under "arbiter.".
const (
	attrSession     = attribute.Key("arbiter.session_id")
	attrTenant      = attribute.Key("arbiter.tenant")
	attrCall        = attribute.Key("arbiter.call_id")
	attrJob         = attribute.Key("arbiter.job_id")
	attrRun         = attribute.Key("arbiter.run_id")
	attrTool        = attribute.Key("arbiter.tool")
	attrDisposition = attribute.Key("arbiter.disposition")
	attrDuplicateOf = attribute.Key("arbiter.duplicate_of")
	attrRepeat      = attribute.Key("arbiter.repeat")
	attrDecision    = attribute.Key("arbiter.decision")
	attrCause       = attribute.Key("arbiter.cause")
	attrReason      = attribute.Key("arbiter.reason")
	attrIntent      = attribute.Key("arbiter.intent")
	attrOutcome     = attribute.Key("arbiter.outcome")
	attrUtterance   = attribute.Key("arbiter.utterance")
	attrHoldKind    = attribute.Key("arbiter.hold.kind")
	attrHeld        = attribute.Key("arbiter.hold.seconds")
	attrDeliver     = attribute.Key("arbiter.deliver")
	attrVia         = attribute.Key("arbiter.via")
	attrText        = attribute.Key("arbiter.text")
	attrInterim     = attribute.Key("arbiter.interim")
	attrSeq         = attribute.Key("arbiter.seq")
	attrState       = attribute.Key("arbiter.state")
	attrStatus      = attribute.Key("arbiter.status")
)

// Span event names.
const (
	eventDecision   = "arbiter.decision"
	eventHoldStart  = "arbiter.hold.start"
	eventHoldEnd    = "arbiter.hold.end"
	eventRevoked    = "arbiter.commit.revoked"
	eventResponse   = "arbiter.response"
	eventSkip       = "arbiter.skip"
	eventNote       = "arbiter.note"
	eventRun        = "arbiter.run"
	eventOutcome    = "arbiter.outcome"
	eventCorrection = "arbiter.claim.corrected"
)

// Propagator is what the server accepts from callers: W3C trace context (traceparent,
// tracestate) and W3C baggage.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// tracingOption is the stats handler that makes each RPC's span on tp: health checks
// and reflection make none; no gRPC metrics are recorded through OpenTelemetry (the
// Prometheus ones are).
func tracingOption(tp trace.TracerProvider) grpc.ServerOption {
	return grpc.StatsHandler(otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(tp),
		otelgrpc.WithPropagators(Propagator),
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelgrpc.WithFilter(filters.None(filters.HealthCheck(),
			filters.ServiceName("grpc.reflection.v1.ServerReflection"),
			filters.ServiceName("grpc.reflection.v1alpha.ServerReflection"))),
	))
}

// traceRequest puts a request's ids on the RPC's span, if it records: before the
// handler runs, so a span of a failed RPC carries them too.
func traceRequest(ctx context.Context, req any) {
	sp := trace.SpanFromContext(ctx)
	if !sp.IsRecording() {
		return
	}
	if r, ok := req.(interface{ GetSessionId() string }); ok && r.GetSessionId() != "" {
		sp.SetAttributes(attrSession.String(arbiter.Clip(r.GetSessionId())))
	}
	if r, ok := req.(interface{ GetCallId() string }); ok && r.GetCallId() != "" {
		sp.SetAttributes(attrCall.String(arbiter.Clip(r.GetCallId())))
	}
	if r, ok := req.(interface{ GetJobId() string }); ok && r.GetJobId() != "" {
		sp.SetAttributes(attrJob.String(arbiter.Clip(r.GetJobId())))
	}
	if r, ok := req.(interface{ GetTool() string }); ok && r.GetTool() != "" {
		sp.SetAttributes(attrTool.String(arbiter.Clip(r.GetTool())))
	}
}

// traceStep adds what one step did to the span in ctx, if it records: the call's
// answer as attributes, everything else as events in the order the engine made it
// (decisions, holds, withdrawn commits; then the effects it handed out for the first
// time, by kind; then outcomes and corrections). sess is the session after the step.
func traceStep(ctx context.Context, out arbiter.Output, sess *arbiter.Session) {
	sp := trace.SpanFromContext(ctx)
	if !sp.IsRecording() {
		return
	}
	sp.SetAttributes(attrSession.String(sess.Key.ID))
	if sess.Key.Tenant != "" {
		sp.SetAttributes(attrTenant.String(sess.Key.Tenant))
	}
	if c := out.Call; c != nil {
		sp.SetAttributes(attrCall.String(c.CallID), attrDisposition.String(string(c.Disposition)))
		if c.JobID != "" {
			sp.SetAttributes(attrJob.String(c.JobID))
		}
		if c.Tool != "" {
			sp.SetAttributes(attrTool.String(c.Tool))
		}
		if c.RunID != "" {
			sp.SetAttributes(attrRun.String(c.RunID))
		}
		if c.DuplicateOf != "" {
			sp.SetAttributes(attrDuplicateOf.String(c.DuplicateOf))
		}
		if c.Repeat {
			sp.SetAttributes(attrRepeat.Bool(true))
		}
	}
	if out.Intent != "" {
		sp.SetAttributes(attrIntent.String(string(out.Intent)))
	}
	for _, d := range out.Decisions {
		sp.AddEvent(eventDecision, trace.WithAttributes(attrJob.String(d.JobID), attrCall.String(opener(sess, d.JobID)),
			attrTool.String(d.Tool), attrDecision.String(string(d.Decision)), attrCause.String(string(d.Cause)), attrReason.String(d.Reason)))
	}
	for _, h := range out.Holds {
		attrs := []attribute.KeyValue{attrJob.String(h.JobID), attrTool.String(h.Tool), attrHoldKind.String(holdKind(h))}
		if h.Utterance != 0 {
			attrs = append(attrs, attrUtterance.Int(h.Utterance))
		}
		name := eventHoldStart
		if h.End {
			name = eventHoldEnd
			attrs = append(attrs, attrHeld.Float64(h.Held.Seconds()))
		}
		sp.AddEvent(name, trace.WithAttributes(attrs...))
	}
	for _, id := range out.Revoked {
		sp.AddEvent(eventRevoked, trace.WithAttributes(attrJob.String(id)))
	}
	e := out.Effects
	for _, r := range e.Responses {
		if r.Seq > out.LogStart {
			sp.AddEvent(eventResponse, trace.WithAttributes(attrCall.String(r.CallID), attrJob.String(r.JobID), attrTool.String(r.Name),
				attrInterim.Bool(r.Interim), attrStatus.String(payloadStatus(r.Payload)), attrSeq.Int64(int64(r.Seq))))
		}
	}
	for _, sk := range e.Skips {
		if sk.Seq > out.LogStart {
			sp.AddEvent(eventSkip, trace.WithAttributes(attrCall.String(sk.CallID), attrJob.String(sk.JobID), attrTool.String(sk.Name),
				attrReason.String(string(sk.Reason)), attrSeq.Int64(int64(sk.Seq))))
		}
	}
	for _, n := range e.Notes {
		if n.Seq > out.LogStart {
			sp.AddEvent(eventNote, trace.WithAttributes(attrJob.String(n.JobID), attrRun.String(n.RunID), attrCall.String(n.CallID),
				attrDeliver.String(string(n.Deliver)), attrVia.String(string(n.Via)), attrText.String(n.Text), attrSeq.Int64(int64(n.Seq))))
		}
	}
	for _, u := range e.Runs {
		if u.Seq > out.LogStart {
			sp.AddEvent(eventRun, trace.WithAttributes(attrRun.String(u.RunID), attrTool.String(u.Tool), attrState.String(string(u.State)),
				attrCall.String(u.CallID), attrJob.String(u.JobID), attrReason.String(u.Reason), attrSeq.Int64(int64(u.Seq))))
		}
	}
	for _, o := range out.Outcomes {
		sp.AddEvent(eventOutcome, trace.WithAttributes(attrJob.String(o.JobID), attrTool.String(o.Tool), attrOutcome.String(string(o.Outcome))))
	}
	for _, c := range out.Corrections {
		sp.AddEvent(eventCorrection, trace.WithAttributes(attrJob.String(c.JobID), attrTool.String(c.Tool)))
	}
}

// traceDecision puts Decide's answer on the RPC's span, if it records.
func traceDecision(ctx context.Context, d arbiter.DecisionResult) {
	sp := trace.SpanFromContext(ctx)
	if !sp.IsRecording() {
		return
	}
	decision := string(d.Decision)
	if d.Decision == arbiter.Undecided {
		decision = "pending"
	}
	sp.SetAttributes(attrJob.String(d.JobID), attrDecision.String(decision), attrReason.String(d.Reason))
	if d.Tool != "" {
		sp.SetAttributes(attrTool.String(d.Tool))
	}
	if d.Cause != "" {
		sp.SetAttributes(attrCause.String(string(d.Cause)))
	}
}

// opener is the call id that opened job id ("" for none).
func opener(sess *arbiter.Session, id string) string {
	if j := sess.Job(id); j != nil && len(j.CallIDs) > 0 {
		return j.CallIDs[0]
	}
	return ""
}

// payloadStatus is a function response payload's status ("committed", "cancelled",
// ...), or "".
func payloadStatus(p map[string]any) string {
	s, _ := p["status"].(string)
	return s
}
