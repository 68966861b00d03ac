package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/policyfile"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/replay"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// traced is an in-process arbiter (memory store, virtual clock, bufconn) whose RPCs are
// traced into an in-memory span recorder.
type traced struct {
	c     arbiterv1.ArbiterServiceClient
	clock *replay.VirtualClock
	rec   *tracetest.SpanRecorder
}

// spans are the spans of every RPC made so far, in the order they began (the tests
// make one RPC at a time). A server span ends after the client has its answer: spans
// waits for every span begun to end.
func (f *traced) spans() []sdktrace.ReadOnlySpan {
	for i := 0; i < 500 && len(f.rec.Ended()) < len(f.rec.Started()); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return slices.SortedStableFunc(slices.Values(f.rec.Ended()), func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
}

func startTraced(t *testing.T, policy *arbiter.Policy, o server.Options) *traced {
	t.Helper()
	clock := replay.NewVirtualClock(replay.Epoch)
	store := memory.New(clock.Now)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: store, Clock: clock}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	o.TracerProvider = tp
	// Registered first, so it runs after the connection is closed and the server stopped.
	t.Cleanup(func() { store.Close(); _ = tp.Shutdown(context.Background()) })
	conn, _ := serveBufconn(t, server.New(svc, o.Logger), o)
	return &traced{c: arbiterv1.NewArbiterServiceClient(conn), clock: clock, rec: rec}
}

// TestTraceTellsTheReplaysStory replays recorded sessions (testdata/traces, C_on_run2
// among them, and the confirm-then-act workflows) through a traced in-process server
// and reads the story back from the spans alone: a `call` line from each RegisterCall
// span's attributes, and the decision, skip, response, note, run and outcome lines from
// the span events. It must be the replay's own output, line for line within each kind
// (the same call ids, dispositions, job ids, decisions and reasons, skip reasons, note
// texts, run states, outcomes; the order of lines of different kinds made by one RPC
// is the replay's own), times and payloads aside.
func TestTraceTellsTheReplaysStory(t *testing.T) {
	for dir, policyPath := range map[string]string{"traces": "../testdata/tools/booking.yaml", "workflows": "../testdata/workflows/tools.yaml"} {
		paths, err := filepath.Glob(filepath.Join("..", "testdata", dir, "*.jsonl"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no traces in testdata/%s: %v", dir, err)
		}
		for _, path := range paths {
			name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
			t.Run(dir+"/"+name, func(t *testing.T) {
				events, err := replay.ReadTraceFile(path, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				pp := policyPath
				if len(events) > 0 && events[0].Policy != "" {
					pp = filepath.Join(filepath.Dir(path), events[0].Policy)
				}
				policy, err := policyfile.Load(pp)
				if err != nil {
					t.Fatal(err)
				}
				f := startTraced(t, policy, server.Options{})
				start := replay.StartOf(events)
				f.clock.AdvanceTo(start)
				sid := "traced-" + name
				res, err := replay.Run(context.Background(), f.c, f.clock, events, replay.Options{SessionID: sid, Start: start}, nil)
				if err != nil {
					t.Fatalf("replay: %v", err)
				}
				spans := f.spans()
				for _, sp := range spans {
					if got := attr(sp.Attributes(), "arbiter.session_id"); got != sid {
						t.Errorf("span %s: arbiter.session_id %q, want %q", sp.Name(), got, sid)
					}
				}
				got, want := byKind(storyOf(spans)), byKind(replayStory(res.Lines))
				if len(want) == 0 {
					t.Fatal("the replay said nothing")
				}
				for _, kind := range slices.Sorted(mapsKeys(want, got)) {
					if !slices.Equal(got[kind], want[kind]) {
						t.Errorf("%s lines differ\n--- from the spans\n%s\n--- from the replay\n%s", kind, strings.Join(got[kind], "\n"), strings.Join(want[kind], "\n"))
					}
				}
			})
		}
	}
}

// storyOf reads replay-like lines from the spans (in the order the RPCs began).
func storyOf(spans []sdktrace.ReadOnlySpan) []string {
	var lines []string
	unknown := map[string]bool{}
	for _, sp := range spans {
		a := sp.Attributes()
		if strings.HasSuffix(sp.Name(), "/RegisterCall") {
			lines = append(lines, line("call", "call_id", attr(a, "arbiter.call_id"), "disposition", attr(a, "arbiter.disposition"),
				"job_id", attr(a, "arbiter.job_id"), "run_id", attr(a, "arbiter.run_id")))
		}
		for _, ev := range sp.Events() {
			e := ev.Attributes
			switch ev.Name {
			case "arbiter.decision":
				lines = append(lines, line("decision", "call_id", attr(e, "arbiter.call_id"), "job_id", attr(e, "arbiter.job_id"),
					"decision", attr(e, "arbiter.decision"), "reason", attr(e, "arbiter.reason")))
			case "arbiter.skip":
				lines = append(lines, line("skip", "call_id", attr(e, "arbiter.call_id"), "reason", attr(e, "arbiter.reason")))
			case "arbiter.response":
				final := ""
				if attr(e, "arbiter.interim") == "true" {
					final = "false"
				}
				lines = append(lines, line("response", "call_id", attr(e, "arbiter.call_id"), "final", final))
			case "arbiter.note":
				lines = append(lines, line("note", "job_id", attr(e, "arbiter.job_id"), "run_id", attr(e, "arbiter.run_id"),
					"text", attr(e, "arbiter.text"), "deliver", attr(e, "arbiter.deliver")))
			case "arbiter.run":
				lines = append(lines, line("run", "run_id", attr(e, "arbiter.run_id"), "call_id", attr(e, "arbiter.call_id"),
					"state", attr(e, "arbiter.state"), "job_id", attr(e, "arbiter.job_id"), "reason", attr(e, "arbiter.reason")))
			case "arbiter.outcome":
				job, outcome := attr(e, "arbiter.job_id"), attr(e, "arbiter.outcome")
				switch {
				case unknown[job]:
					lines = append(lines, line("resolved", "job_id", job, "outcome", outcome))
				case outcome == "cancelled":
					lines = append(lines, line("cancel", "job_id", job))
				case outcome == "committed":
					lines = append(lines, line("commit", "job_id", job))
				case outcome == "failed" || outcome == "unknown":
					lines = append(lines, line("commit", "job_id", job, "outcome", outcome))
				}
				unknown[job] = outcome == "unknown"
			}
		}
	}
	return lines
}

// replayStory is the replay's output in storyOf's form.
func replayStory(ls []replay.Line) []string {
	var lines []string
	for _, l := range ls {
		final := ""
		if l.Final != nil && !*l.Final {
			final = "false"
		}
		switch l.Out {
		case "call":
			lines = append(lines, line("call", "call_id", l.CallID, "disposition", l.Disposition, "job_id", l.JobID, "run_id", l.RunID))
		case "decision":
			lines = append(lines, line("decision", "call_id", l.CallID, "job_id", l.JobID, "decision", l.Decision, "reason", l.Reason))
		case "skip":
			lines = append(lines, line("skip", "call_id", l.CallID, "reason", l.Reason))
		case "response":
			lines = append(lines, line("response", "call_id", l.CallID, "final", final))
		case "note":
			lines = append(lines, line("note", "job_id", l.JobID, "run_id", l.RunID, "text", l.Text, "deliver", l.Deliver))
		case "run":
			lines = append(lines, line("run", "run_id", l.RunID, "call_id", l.CallID, "state", l.State, "job_id", l.JobID, "reason", l.Reason))
		case "cancel", "commit", "resolved":
			lines = append(lines, line(l.Out, "job_id", l.JobID, "outcome", l.Outcome))
		}
	}
	return lines
}

// line is "kind k=v k=v" with the empty values left out.
func line(kind string, kv ...string) string {
	var b strings.Builder
	b.WriteString(kind)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			fmt.Fprintf(&b, " %s=%q", kv[i], kv[i+1])
		}
	}
	return b.String()
}

func byKind(lines []string) map[string][]string {
	m := map[string][]string{}
	for _, l := range lines {
		kind, _, _ := strings.Cut(l, " ")
		m[kind] = append(m[kind], l)
	}
	return m
}

func mapsKeys(ms ...map[string][]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// attr is the value of the attribute named key, as text ("" when absent).
func attr(as []attribute.KeyValue, key string) string {
	for _, a := range as {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}

// TestTraceparentAccepted: a request carrying W3C trace context (traceparent, and
// baggage) gets a server span in the caller's trace, the child of the caller's span,
// so an agent's own spans nest the arbiter's; one without gets a new trace. Health
// checks make no span.
func TestTraceparentAccepted(t *testing.T) {
	policy := &arbiter.Policy{Tools: map[string]*arbiter.Tool{"book_slot": {Name: "book_slot", SideEffect: true}}}
	if err := policy.Validate(); err != nil {
		t.Fatal(err)
	}
	f := startTraced(t, policy, server.Options{})
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	ctx := metadata.AppendToOutgoingContext(context.Background(),
		"traceparent", "00-"+traceID+"-"+parentID+"-01", "baggage", "agent.turn=7")
	if _, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "tp", CallId: "c1", Tool: "book_slot"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.GetSession(context.Background(), &arbiterv1.GetSessionRequest{SessionId: "tp"}); err != nil {
		t.Fatal(err)
	}
	spans := f.spans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	reg, get := spans[0], spans[1]
	if reg.Name() != "arbiter.v1.ArbiterService/RegisterCall" || reg.SpanKind() != trace.SpanKindServer {
		t.Fatalf("span %q kind %v", reg.Name(), reg.SpanKind())
	}
	if got := reg.SpanContext().TraceID().String(); got != traceID {
		t.Errorf("trace id %s, want the caller's %s", got, traceID)
	}
	if got := reg.Parent().SpanID().String(); got != parentID || !reg.Parent().IsRemote() {
		t.Errorf("parent %s (remote %v), want the caller's span %s", got, reg.Parent().IsRemote(), parentID)
	}
	for key, want := range map[string]string{"arbiter.session_id": "tp", "arbiter.call_id": "c1", "arbiter.tool": "book_slot", "arbiter.disposition": "execute"} {
		if got := attr(reg.Attributes(), key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if !strings.HasPrefix(attr(reg.Attributes(), "arbiter.job_id"), "job-1") {
		t.Errorf("arbiter.job_id = %q", attr(reg.Attributes(), "arbiter.job_id"))
	}
	if get.SpanContext().TraceID().String() == traceID || get.Parent().IsValid() {
		t.Errorf("a request without trace context joined a trace: %v parent %v", get.SpanContext().TraceID(), get.Parent())
	}
}

// TestTracingDecideAndHolds: a Decide span says the decision it answered; the span of
// the RPC that held a prepared job's commit has the hold's start, the one that released
// it the end (with how long it lasted, on the session clock) and the commit decision
// with its reason.
func TestTracingDecideAndHolds(t *testing.T) {
	policy, err := policyfile.Load("../testdata/tools/booking.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	f := startTraced(t, policy, server.Options{Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{ReplaceAttr: server.LogDurations}))})
	ctx := context.Background()
	reg, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "h", CallId: "c1", Tool: "book_slot", Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "h", JobId: reg.JobId, Prepared: true}); err != nil {
		t.Fatal(err)
	}
	speech := func(e arbiterv1.SpeechEvent) {
		if _, err := f.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "h", Event: e}); err != nil {
			t.Fatal(err)
		}
	}
	speech(arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START) // holds the prepared job
	f.clock.AdvanceTo(replay.Epoch.Add(2500e6))
	speech(arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END)
	if _, err := f.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "h", Text: "Thanks."}); err != nil {
		t.Fatal(err)
	}
	d, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "h", JobId: reg.JobId, Prepared: true})
	if err != nil || d.Decision != arbiterv1.Decision_DECISION_COMMIT {
		t.Fatalf("decide: %v %v", d, err)
	}
	spans := f.spans()
	find := func(event string) (sdktrace.ReadOnlySpan, sdktrace.Event) {
		t.Helper()
		for _, sp := range spans {
			for _, ev := range sp.Events() {
				if ev.Name == event {
					return sp, ev
				}
			}
		}
		t.Fatalf("no span has a %s event", event)
		return nil, sdktrace.Event{}
	}
	sp, ev := find("arbiter.hold.start")
	if !strings.HasSuffix(sp.Name(), "/ReportSpeech") || attr(ev.Attributes, "arbiter.job_id") != reg.JobId || attr(ev.Attributes, "arbiter.hold.kind") != "utterance" {
		t.Errorf("hold start on %s: %v", sp.Name(), ev.Attributes)
	}
	sp, ev = find("arbiter.hold.end")
	if !strings.HasSuffix(sp.Name(), "/ReportTranscript") || attr(ev.Attributes, "arbiter.hold.seconds") != "2.5" {
		t.Errorf("hold end on %s: %v", sp.Name(), ev.Attributes)
	}
	sp, ev = find("arbiter.decision")
	if attr(ev.Attributes, "arbiter.decision") != "commit" || attr(ev.Attributes, "arbiter.reason") == "" || attr(ev.Attributes, "arbiter.tool") != "book_slot" {
		t.Errorf("decision on %s: %v", sp.Name(), ev.Attributes)
	}
	last := spans[len(spans)-1]
	if !strings.HasSuffix(last.Name(), "/Decide") || attr(last.Attributes(), "arbiter.decision") != "commit" || attr(last.Attributes(), "arbiter.reason") != d.Reason {
		t.Errorf("Decide span %s: %v", last.Name(), last.Attributes())
	}
	if testing.Verbose() {
		os.Stderr.Write(logs.Bytes())
	}
}
