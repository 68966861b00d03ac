package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/buildinfo"
)

// Metrics are the arbiter's Prometheus metrics: the gRPC server metrics of
// go-grpc-middleware's Prometheus provider plus the arbiter's own. Safe for concurrent
// use. Serve them with Handler on a port of their own.
type Metrics struct {
	Registry *prometheus.Registry
	grpc     *grpcprom.ServerMetrics

	decisions   *prometheus.CounterVec
	outcomes    *prometheus.CounterVec
	calls       *prometheus.CounterVec
	skips       *prometheus.CounterVec
	notes       *prometheus.CounterVec
	answerAge   prometheus.Histogram
	decideWait  prometheus.Histogram
	storeErrs   *prometheus.CounterVec
	panics      prometheus.Counter
	holds       *prometheus.CounterVec
	holdTime    *prometheus.HistogramVec
	toDecision  *prometheus.HistogramVec
	corrections *prometheus.CounterVec
	runs        *prometheus.CounterVec
	revoked     prometheus.Counter
	storeOps    *prometheus.CounterVec
	storeTime   *prometheus.HistogramVec
	sessions    prometheus.Gauge

	guardOnce sync.Once
	guard     *guardMetrics // the wire guard's (Guard)
}

// NewMetrics registers every metric on a new registry (plus Go and process metrics).
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		grpc: grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
			grpcprom.WithHistogramBuckets([]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5, 30}))),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_decisions_total", Help: "Decisions made, by decision (commit, cancel), cause (stop, amend, transcript_timeout, abandoned, withdrawn, session_closed, failed, deadline; empty for a commit) and tool (a tool of the policy; other for any other name).",
		}, []string{"decision", "cause", "tool"}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_outcomes_total", Help: "Job outcomes reported with Complete, by outcome: committed, cancelled, failed (a commit the backend refused counts here, never as committed), result (read-only), unknown (later resolved to committed or failed, counted again then).",
		}, []string{"outcome"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_calls_total", Help: "Function calls registered, by disposition: execute, duplicate (suppressed by business-key dedupe), reject (tool choice none, disallowed or unknown tool).",
		}, []string{"disposition"}),
		skips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_dead_calls_total", Help: "Call ids marked dead (never answered), by reason: abandoned (interrupted BLOCKING call), withdrawn (tool-call cancellation), session_closed.",
		}, []string{"reason"}),
		notes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_notes_total", Help: "Status notes issued, by delivery (now, when_idle).",
		}, []string{"deliver"}),
		answerAge: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "arbiter_call_pending_seconds", Help: "How long call ids were pending: registration to function response.",
			Buckets: []float64{.01, .1, .5, 1, 2, 4, 6, 8, 10, 15, 30, 60},
		}),
		decideWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "arbiter_decide_wait_seconds", Help: "How long Decide calls waited before answering.",
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 2, 5, 10, 30},
		}),
		storeErrs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_store_errors_total", Help: "RPCs failed because the store was unavailable, by method.",
		}, []string{"method"}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_panics_total", Help: "Handler panics recovered into INTERNAL.",
		}),
		holds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_holds_total", Help: "Holds begun on a job's commit, by kind: utterance (a relevant user utterance open while the job was prepared), abandoned (every call id of the job dead after interrupted). Only sessions that keep a history track holds.",
		}, []string{"kind"}),
		holdTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "arbiter_hold_seconds", Help: "How long holds on a job's commit lasted, by kind (utterance, abandoned), observed when they end.",
			Buckets: []float64{.1, .25, .5, 1, 2, 3, 4, 6, 8, 10, 15, 30, 60},
		}, []string{"kind"}),
		toDecision: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "arbiter_prepared_to_decision_seconds", Help: "Time from a job's prepare finishing (Decide prepared) to its decision, by decision (commit, cancel); jobs decided before they were prepared are not observed.",
			Buckets: []float64{.1, .25, .5, 1, 1.5, 2, 3, 4, 6, 8, 10, 15, 30, 60},
		}, []string{"decision"}),
		corrections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_claim_corrections_total", Help: "Corrective notes handed out because what the model said about a job contradicted its state, by the job's tool (other for a name outside the policy; none when the session had no job).",
		}, []string{"tool"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_runs_total", Help: "Confirm-then-act runs by state reached: opened, then one outcome each: confirmed, refused, expired, cancelled.",
		}, []string{"state"}),
		revoked: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_commits_revoked_total", Help: "Commit decisions withdrawn because an event the agent had observed before the commit came due arrived after it.",
		}),
		storeOps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_store_requests_total", Help: "Store requests, by op (load, save, watch: round trips; load_cached: a transition's read answered from the replica's local cache, no round trip) and result (ok, not_found, conflict: a compare-and-set lost to another writer, unavailable, error).",
		}, []string{"op", "result"}),
		storeTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "arbiter_store_request_seconds", Help: "Store request latency, by op (load, save, watch, load_cached).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}, []string{"op"}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "arbiter_sessions", Help: "Sessions in the store (closed ones too, until their idle TTL runs out), sampled every 15 s: exact for the embedded store; for Redis the keys of the arbiter's database (INFO keyspace, summed over a Cluster's primaries), i.e. sessions plus one rate-limit key per active tenant, the same on every replica. -1 until the first sample.",
		}),
	}
	m.sessions.Set(-1)
	m.guard = newGuardMetrics()
	m.guard.register(reg)
	reg.MustRegister(m.grpc, m.decisions, m.outcomes, m.calls, m.skips, m.notes, m.answerAge, m.decideWait, m.storeErrs, m.panics,
		m.holds, m.holdTime, m.toDecision, m.corrections, m.runs, m.revoked, m.storeOps, m.storeTime, m.sessions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildInfoGauge())
	return m
}

// buildInfoGauge is arbiter_build_info{version,commit,go_version} 1: which build runs
// (join on it to break other metrics down by version).
func buildInfoGauge() prometheus.Gauge {
	bi := buildinfo.Get()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "arbiter_build_info",
		Help:        "Always 1; the labels say which build of arbiter runs: version, git commit and Go version.",
		ConstLabels: prometheus.Labels{"version": bi.Version, "commit": bi.Commit, "go_version": bi.GoVersion},
	})
	g.Set(1)
	return g
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// observe records what one step's engine output says: only what the step did for the
// first time (a repeat's effects were counted when they were handed out). sess is the
// session after the step; tool bounds a tool name for the tool label. Nil-safe.
func (m *Metrics) observe(out arbiter.Output, sess *arbiter.Session, tool func(string) string) {
	if m == nil {
		return
	}
	for _, d := range out.Decisions {
		m.decisions.WithLabelValues(string(d.Decision), string(d.Cause), tool(d.Tool)).Inc()
		if j := sess.Job(d.JobID); j != nil && !j.PreparedAt.IsZero() && !d.DecidedAt.Before(j.PreparedAt) {
			m.toDecision.WithLabelValues(string(d.Decision)).Observe(d.DecidedAt.Sub(j.PreparedAt).Seconds())
		}
	}
	for _, o := range out.Outcomes {
		m.outcomes.WithLabelValues(string(o.Outcome)).Inc()
	}
	if out.Call != nil && !out.Call.Repeat {
		m.calls.WithLabelValues(string(out.Call.Disposition)).Inc()
	}
	for _, s := range out.Effects.Skips {
		if s.Seq > out.LogStart {
			m.skips.WithLabelValues(string(s.Reason)).Inc()
		}
	}
	for _, n := range out.Effects.Notes {
		if n.Seq > out.LogStart {
			m.notes.WithLabelValues(string(n.Deliver)).Inc()
		}
	}
	for _, r := range out.Effects.Responses {
		if r.Seq <= out.LogStart || r.Interim {
			continue
		}
		if c := sess.Call(r.CallID); c != nil && c.Outcome != nil {
			m.answerAge.Observe(c.Outcome.At.Sub(c.RegisteredAt).Seconds())
		}
	}
	for _, u := range out.Effects.Runs {
		if u.Seq > out.LogStart {
			m.runs.WithLabelValues(string(u.State)).Inc()
		}
	}
	for _, h := range out.Holds {
		kind := holdKind(h)
		if !h.End {
			m.holds.WithLabelValues(kind).Inc()
		} else if h.Held > 0 {
			m.holdTime.WithLabelValues(kind).Observe(h.Held.Seconds())
		}
	}
	for _, c := range out.Corrections {
		name := "none"
		if c.JobID != "" {
			name = tool(c.Tool)
		}
		m.corrections.WithLabelValues(name).Inc()
	}
	if len(out.Revoked) > 0 {
		m.revoked.Add(float64(len(out.Revoked)))
	}
}

// holdKind names what holds a commit: an utterance, or abandonment.
func holdKind(h arbiter.HoldChange) string {
	if h.Utterance == 0 {
		return "abandoned"
	}
	return "utterance"
}

// CountSessions sets arbiter_sessions from count every interval (zero: 15 s) until
// ctx ends; a count that fails leaves the last value. Run it in a goroutine; nil-safe.
func (m *Metrics) CountSessions(ctx context.Context, count func(context.Context) (int64, error), every time.Duration) {
	if m == nil || count == nil {
		return
	}
	if every <= 0 {
		every = 15 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, every)
		n, err := count(cctx)
		cancel()
		if err == nil {
			m.sessions.Set(float64(n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// requestFields puts the request's session, call and job ids into the context's
// logging fields, so the access line and every line the handler logs carry them (the
// auth interceptor adds the tenant), and onto the RPC's span. It runs first in the
// unary chain, in the same call as the access log (NewGRPCServer).
func requestFields(ctx context.Context, req any) context.Context {
	traceRequest(ctx, req)
	var f logging.Fields
	if r, ok := req.(interface{ GetSessionId() string }); ok && r.GetSessionId() != "" {
		f = append(f, "session_id", arbiter.Clip(r.GetSessionId()))
	}
	if r, ok := req.(interface{ GetCallId() string }); ok && r.GetCallId() != "" {
		f = append(f, "call_id", arbiter.Clip(r.GetCallId()))
	}
	if r, ok := req.(interface{ GetJobId() string }); ok && r.GetJobId() != "" {
		f = append(f, "job_id", arbiter.Clip(r.GetJobId()))
	}
	if len(f) > 0 {
		ctx = logging.InjectFields(ctx, f)
	}
	return ctx
}

// ctxHandler adds the context's logging fields (the RPC: appendCallFields; tenant,
// session, call and job ids) to every record.
type ctxHandler struct{ slog.Handler }

// Handle adds the context's fields to r but those r already has: a line about
// another call or job than the request's names its own, once. The fields are gathered
// first and added in one AddAttrs (one growth of the record, on the stack up to 12).
func (h ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	var buf [12]slog.Attr
	var call [6]slog.Attr
	add := buf[:0]
	for _, a := range appendCallFields(call[:0], ctx) {
		if !hasAttr(r, add, a.Key) {
			add = append(add, a)
		}
	}
	f := logging.ExtractFields(ctx)
	for i := 0; i+1 < len(f); i += 2 {
		if k, ok := f[i].(string); ok && !hasAttr(r, add, k) {
			add = append(add, slog.Any(k, f[i+1]))
		}
	}
	r.AddAttrs(add...)
	return h.Handler.Handle(ctx, r)
}

// hasAttr reports whether r, or the attributes about to be added to it, have one
// named key.
func hasAttr(r slog.Record, adding []slog.Attr, key string) bool {
	for _, a := range adding {
		if a.Key == key {
			return true
		}
	}
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == key
		return !found
	})
	return found
}

func (h ctxHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return ctxHandler{h.Handler.WithAttrs(as)}
}
func (h ctxHandler) WithGroup(g string) slog.Handler { return ctxHandler{h.Handler.WithGroup(g)} }
