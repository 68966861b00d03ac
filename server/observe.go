package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/buildinfo"
)

// Metrics are the arbiter's Prometheus metrics: the gRPC server metrics of
// go-grpc-middleware's Prometheus provider plus the arbiter's own. Safe for concurrent
// use. Serve them with Handler on a port of their own.
type Metrics struct {
	Registry *prometheus.Registry
	grpc     *grpcprom.ServerMetrics

	decisions  *prometheus.CounterVec
	outcomes   *prometheus.CounterVec
	calls      *prometheus.CounterVec
	skips      *prometheus.CounterVec
	notes      *prometheus.CounterVec
	answerAge  prometheus.Histogram
	decideWait prometheus.Histogram
	storeErrs  *prometheus.CounterVec
	panics     prometheus.Counter
}

// NewMetrics registers every metric on a new registry (plus Go and process metrics).
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		grpc: grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
			grpcprom.WithHistogramBuckets([]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5, 30}))),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_decisions_total", Help: "Decisions made, by decision (commit, cancel) and cause (stop, transcript_timeout, abandoned, withdrawn, session_closed, failed; empty for a commit).",
		}, []string{"decision", "cause"}),
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
	}
	reg.MustRegister(m.grpc, m.decisions, m.outcomes, m.calls, m.skips, m.notes, m.answerAge, m.decideWait, m.storeErrs, m.panics,
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

// observe records what one RPC's engine output says. Nil-safe.
func (m *Metrics) observe(out arbiter.Output, now time.Time, calls func(id string) time.Time) {
	if m == nil {
		return
	}
	for _, d := range out.Decisions {
		m.decisions.WithLabelValues(string(d.Decision), string(d.Cause)).Inc()
	}
	for _, o := range out.Outcomes {
		m.outcomes.WithLabelValues(string(o.Outcome)).Inc()
	}
	if out.Call != nil && !out.Call.Repeat {
		m.calls.WithLabelValues(string(out.Call.Disposition)).Inc()
	}
	for _, s := range out.Effects.Skips {
		m.skips.WithLabelValues(string(s.Reason)).Inc()
	}
	for _, n := range out.Effects.Notes {
		m.notes.WithLabelValues(string(n.Deliver)).Inc()
	}
	if calls != nil {
		for _, r := range out.Effects.Responses {
			if at := calls(r.CallID); !at.IsZero() {
				m.answerAge.Observe(now.Sub(at).Seconds())
			}
		}
	}
}

// requestFields is a unary interceptor that puts the request's session, call and job
// ids into the context's logging fields, so the logging interceptor's line and every
// line the handler logs carry them (the auth interceptor adds the tenant).
func requestFields(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
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
	return h(ctx, req)
}

// ctxHandler adds the context's logging fields (tenant, session, call and job ids) to
// every record.
type ctxHandler struct{ slog.Handler }

func (h ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	f := logging.ExtractFields(ctx)
	for i := 0; i+1 < len(f); i += 2 {
		if k, ok := f[i].(string); ok {
			r.AddAttrs(slog.Any(k, f[i+1]))
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h ctxHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return ctxHandler{h.Handler.WithAttrs(as)}
}
func (h ctxHandler) WithGroup(g string) slog.Handler { return ctxHandler{h.Handler.WithGroup(g)} }
