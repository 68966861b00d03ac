package server

import (
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/guard"
)

// value is the value of the sample of metric name with labels (name=value pairs, in
// the metric's label order, comma-separated; "" none), from m's registry; -1 when
// there is no such sample. n is how many samples name has.
func value(t *testing.T, m *Metrics, name, labels string) (v float64, n int) {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	v = -1
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			n++
			var ls []string
			for _, l := range s.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			if strings.Join(ls, ",") == labels {
				v = s.GetCounter().GetValue() + s.GetGauge().GetValue()
			}
		}
	}
	return v, n
}

// TestGuardMetrics: the wire guard's observer on Prometheus: a connection counts as
// open until Closed (once, however often it is called), its frames and bytes by side,
// the rule's words become snake-case label values, and a nil Metrics gives the guard
// none.
func TestGuardMetrics(t *testing.T) {
	if (*Metrics)(nil).Guard() != nil {
		t.Fatal("a nil Metrics gives the guard an observer")
	}
	m := NewMetrics()
	if _, n := value(t, m, "arbiter_guard_connections", ""); n != 0 {
		t.Errorf("guard series before Guard is called (no --proxy-listen): %d", n)
	}
	g := m.Guard()
	if m.Guard() != g {
		t.Error("Guard returns another observer on a second call")
	}
	if v, _ := value(t, m, "arbiter_guard_connections", "proto=openai"); v != 0 {
		t.Errorf("openai connections open at the start: %v, want a 0 sample", v)
	}
	c := g.Opened("gemini")
	if v, _ := value(t, m, "arbiter_guard_connections", "proto=gemini"); v != 1 {
		t.Errorf("gemini connections open: %v, want 1", v)
	}
	c.Sent(guard.Agent, 100)
	c.Sent(guard.Agent, 50)
	c.Sent(guard.Server, 7)
	c.Counted("dropped agent answer", "dead id: abandoned")
	c.Counted("injected note", "")
	c.ReportLost("speech", guard.ReportQueueFull)
	c.Closed(guard.EndProviderClosed, "1011")
	c.Closed(guard.EndError, "")
	g.DialFailed("openai", guard.DialTLS)
	for _, x := range []struct {
		name, labels string
		want         float64
	}{
		{"arbiter_guard_connections", "proto=gemini", 0},
		{"arbiter_guard_frames_total", "proto=gemini,to=agent", 2},
		{"arbiter_guard_bytes_total", "proto=gemini,to=agent", 150},
		{"arbiter_guard_frames_total", "proto=gemini,to=provider", 1},
		{"arbiter_guard_bytes_total", "proto=gemini,to=provider", 7},
		{"arbiter_guard_actions_total", "action=dropped_agent_answer,proto=gemini,reason=dead_id_abandoned", 1},
		{"arbiter_guard_actions_total", "action=injected_note,proto=gemini,reason=", 1},
		{"arbiter_guard_reports_lost_total", "event=speech,reason=queue_full", 1},
		{"arbiter_guard_connections_closed_total", "code=1011,end=provider_closed,proto=gemini", 1},
		{"arbiter_guard_dial_failures_total", "class=tls,proto=openai", 1},
	} {
		if v, _ := value(t, m, x.name, x.labels); v != x.want {
			t.Errorf("%s{%s} = %v, want %v", x.name, x.labels, v, x.want)
		}
	}
	if _, n := value(t, m, "arbiter_guard_connections_closed_total", ""); n != 1 {
		t.Errorf("%d end series; Closed counts once", n)
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{
		"dead id: abandoned":                   "dead_id_abandoned",
		"the arbiter answers this call itself": "the_arbiter_answers_this_call_itself",
		"kept answer from agent delete":        "kept_answer_from_agent_delete",
		"":                                     "",
		"  Failed Closed! ":                    "failed_closed",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}
