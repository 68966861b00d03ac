package server

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voicearbiter/arbiter/guard"
)

// guardMetrics are the wire guard's series (arbiter_guard_*), registered on the
// arbiter's registry by NewMetrics (Metrics.Guard hands them to the guard).
type guardMetrics struct {
	open    *prometheus.GaugeVec
	closed  *prometheus.CounterVec
	actions *prometheus.CounterVec
	lost    *prometheus.CounterVec
	dials   *prometheus.CounterVec
	frames  *prometheus.CounterVec
	bytes   *prometheus.CounterVec
}

// newGuardMetrics makes the wire guard's series (registered by NewMetrics; they
// have samples once Guard is called and connections are guarded).
func newGuardMetrics() *guardMetrics {
	return &guardMetrics{
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "arbiter_guard_connections", Help: "Wire guard connections open now, by proto (gemini: Gemini Live and Vertex; openai: OpenAI Realtime).",
		}, []string{"proto"}),
		closed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_guard_connections_closed_total", Help: "Wire guard connections ended, by proto (gemini, openai), end (agent_closed, provider_closed, guard_restarting, write_timeout: a peer did not read, error: a connection broke or a write failed) and code (the close code of agent_closed and provider_closed: 1000-1015 as themselves, 4xxx, other; empty for the other ends).",
		}, []string{"proto", "end", "code"}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_guard_actions_total", Help: "What the wire guard's rule dropped, kept back and injected, by proto (gemini, openai), action (dropped_agent_answer, injected_response, injected_note, kept_call_from_agent, dropped_server_call, kept_answer_from_agent_delete) and reason (e.g. dead_id_abandoned, already_answered, duplicate, deadline, agent_did_not_answer, failed_closed; empty for injected_note): the words of the connection's closing log line in snake case, never an id.",
		}, []string{"proto", "action", "reason"}),
		lost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_guard_reports_lost_total", Help: "Reports of the wire guard to the arbiter not applied, by event (speech, call, answer, transcript, cancellation, connect, configure, close) and reason (queue_full: dropped unsent, the store far behind; unavailable: the store refused it until the retry bound ran out; refused: invalid or too late, e.g. a closed session; error).",
		}, []string{"event", "reason"}),
		dials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_guard_dial_failures_total", Help: "Agent connections refused because the wire guard could not dial the model server, by proto (gemini, openai) and class (refused_4xx: the upstream refused the handshake, e.g. a wrong API key, passed back; refused_other: another status; timeout; tls; network).",
		}, []string{"proto", "class"}),
		frames: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_guard_frames_total", Help: "WebSocket messages the wire guard wrote, by proto (gemini, openai) and to (agent, provider): everything forwarded plus what the guard injected.",
		}, []string{"proto", "to"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_guard_bytes_total", Help: "Payload bytes of the WebSocket messages the wire guard wrote, by proto (gemini, openai) and to (agent, provider).",
		}, []string{"proto", "to"}),
	}
}

// Guard returns the wire guard's guard.Metrics on m's registry (arbiter serve
// --proxy-listen passes it as guard.Options.Metrics): the arbiter_guard_* series
// (docs/operations.md), arbiter_guard_connections at 0 for each protocol from the
// first call on. Safe for concurrent use. Nil-safe: a nil m returns nil (no metrics).
func (m *Metrics) Guard() guard.Metrics {
	if m == nil {
		return nil
	}
	m.guardOnce.Do(func() {
		for _, p := range []string{"gemini", "openai"} {
			m.guard.open.WithLabelValues(p) // 0 from the start: a dashboard sees the guard up and idle
		}
	})
	return m.guard
}

// register registers the guard's series on reg.
func (g *guardMetrics) register(reg *prometheus.Registry) {
	reg.MustRegister(g.open, g.closed, g.actions, g.lost, g.dials, g.frames, g.bytes)
}

// Opened resolves the connection's series once: per frame, Sent is two atomic adds.
func (g *guardMetrics) Opened(proto string) guard.ConnMetrics {
	g.open.WithLabelValues(proto).Inc()
	return &guardConn{g: g, proto: proto,
		frames: [2]prometheus.Counter{g.frames.WithLabelValues(proto, "agent"), g.frames.WithLabelValues(proto, "provider")},
		bytes:  [2]prometheus.Counter{g.bytes.WithLabelValues(proto, "agent"), g.bytes.WithLabelValues(proto, "provider")},
	}
}

func (g *guardMetrics) DialFailed(proto, class string) { g.dials.WithLabelValues(proto, class).Inc() }

// guardConn counts one guarded connection.
type guardConn struct {
	g             *guardMetrics
	proto         string
	frames, bytes [2]prometheus.Counter // indexed by guard.Side: Agent, Server
	closeOnce     sync.Once
}

func (c *guardConn) Sent(to guard.Side, n int) {
	i := 0
	if to != guard.Agent {
		i = 1
	}
	c.frames[i].Inc()
	c.bytes[i].Add(float64(n))
}

func (c *guardConn) Counted(what, why string) {
	c.g.actions.WithLabelValues(c.proto, snake(what), snake(why)).Inc()
}

func (c *guardConn) ReportLost(event, why string) { c.g.lost.WithLabelValues(event, why).Inc() }

func (c *guardConn) Closed(how, code string) {
	c.closeOnce.Do(func() {
		c.g.open.WithLabelValues(c.proto).Dec()
		c.g.closed.WithLabelValues(c.proto, how, code).Inc()
	})
}

// snake writes the rule's words as a label value: lower case, each run of anything
// but letters and digits one underscore ("dead id: abandoned" -> dead_id_abandoned).
func snake(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(r)
			continue
		}
		under = true
	}
	return b.String()
}
