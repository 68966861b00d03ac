package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/voicearbiter/arbiter/internal/redistest"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// TestCLIServeDrainEndsWatch: `arbiter serve` with an open Watch stream drains at once
// on cancel (SIGTERM's path): the stream ends UNAVAILABLE (the client resumes
// elsewhere) instead of holding GracefulStop until the 60 s drain timeout.
func TestCLIServeDrainEndsWatch(t *testing.T) {
	p := startServe(t, "--drain-timeout", "60s")
	conn, stderr := p.conn, p.stderr
	c := arbiterv1.NewArbiterServiceClient(conn)
	if _, err := c.ConfigureSession(context.Background(), &arbiterv1.ConfigureSessionRequest{SessionId: "drain"}); err != nil {
		t.Fatal(err)
	}
	st, err := c.Watch(context.Background(), &arbiterv1.WatchRequest{SessionId: "drain"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterCall(context.Background(), &arbiterv1.RegisterCallRequest{SessionId: "drain", CallId: "x", Tool: "t", ToolChoice: arbiterv1.ToolChoice_TOOL_CHOICE_NONE}); err != nil {
		t.Fatal(err)
	}
	if m, err := st.Recv(); err != nil || m.Seq != 1 {
		t.Fatalf("first effect: %v %v", m, err)
	}
	ended := make(chan error, 1)
	go func() { _, err := st.Recv(); ended <- err }()
	p.cancel()
	select {
	case err := <-ended:
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("Watch ended with %v on drain, want UNAVAILABLE", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the Watch stream was not ended by the drain")
	}
	p.drain(t, 20*time.Second) // not held by the Watch stream
	if strings.Contains(stderr.String(), "drain timeout") {
		t.Fatalf("the drain ran into its timeout:\n%s", stderr.String())
	}
}

// effectLedger records the effects unary RPCs hand out, by seq (a retried RPC repeats
// a seq; the same seq with another effect fails the test).
type effectLedger map[uint64]string

func (l effectLedger) add(t *testing.T, e *arbiterv1.Effects) {
	t.Helper()
	for s, d := range effectsDescs(e) {
		if prev, ok := l[s]; ok && prev != d {
			t.Fatalf("seq %d twice: %s / %s", s, prev, d)
		}
		l[s] = d
	}
}

// ordered returns the effects in seq order, failing the test on a gap.
func (l effectLedger) ordered(t *testing.T) []string {
	t.Helper()
	seqs := make([]uint64, 0, len(l))
	for s := range l {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	want := make([]string, 0, len(seqs))
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("unary effects have a gap at %d: %v", i+1, seqs)
		}
		want = append(want, l[s])
	}
	return want
}

// e2eWatch reads one Watch stream of a replica process in the background.
type e2eWatch struct {
	mu   sync.Mutex
	got  []string
	seqs []uint64
	err  error
	done chan struct{}
}

func watchDesc(m *arbiterv1.WatchResponse) string {
	switch e := m.Effect.(type) {
	case *arbiterv1.WatchResponse_Response:
		return fmt.Sprintf("%d response %s %s interim=%v %v", m.Seq, e.Response.CallId, e.Response.JobId, e.Response.Interim, e.Response.Payload.AsMap())
	case *arbiterv1.WatchResponse_Skip:
		return fmt.Sprintf("%d skip %s %s", m.Seq, e.Skip.CallId, e.Skip.Reason)
	case *arbiterv1.WatchResponse_Note:
		return fmt.Sprintf("%d note %s %q", m.Seq, e.Note.JobId, e.Note.Text)
	case *arbiterv1.WatchResponse_Run:
		return fmt.Sprintf("%d run %s %v", m.Seq, e.Run.RunId, e.Run.State)
	}
	return fmt.Sprintf("%d empty", m.Seq)
}

func effectsDescs(e *arbiterv1.Effects) map[uint64]string {
	out := map[uint64]string{}
	for _, r := range e.GetResponses() {
		out[r.Seq] = watchDesc(&arbiterv1.WatchResponse{Seq: r.Seq, Effect: &arbiterv1.WatchResponse_Response{Response: r}})
	}
	for _, s := range e.GetSkips() {
		out[s.Seq] = watchDesc(&arbiterv1.WatchResponse{Seq: s.Seq, Effect: &arbiterv1.WatchResponse_Skip{Skip: s}})
	}
	for _, n := range e.GetNotes() {
		out[n.Seq] = watchDesc(&arbiterv1.WatchResponse{Seq: n.Seq, Effect: &arbiterv1.WatchResponse_Note{Note: n}})
	}
	for _, u := range e.GetRuns() {
		out[u.Seq] = watchDesc(&arbiterv1.WatchResponse{Seq: u.Seq, Effect: &arbiterv1.WatchResponse_Run{Run: u}})
	}
	return out
}

func startE2EWatch(t *testing.T, c arbiterv1.ArbiterServiceClient, sid string, after uint64) *e2eWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := c.Watch(ctx, &arbiterv1.WatchRequest{SessionId: sid, AfterSeq: after})
	if err != nil {
		t.Fatal(err)
	}
	w := &e2eWatch{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			m, err := st.Recv()
			w.mu.Lock()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					w.err = err
				}
				w.mu.Unlock()
				return
			}
			w.got = append(w.got, watchDesc(m))
			w.seqs = append(w.seqs, m.Seq)
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *e2eWatch) last() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seqs) == 0 {
		return 0
	}
	return w.seqs[len(w.seqs)-1]
}

func (w *e2eWatch) waitFor(t *testing.T, seq uint64) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); w.last() < seq; time.Sleep(5 * time.Millisecond) {
		select {
		case <-w.done:
			t.Fatalf("stream ended (%v) at seq %d, waiting for %d", w.err, w.last(), seq)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream at seq %d, waiting for %d", w.last(), seq)
		}
	}
}

func (w *e2eWatch) end(t *testing.T) error {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("stream did not end; at seq %d", w.last())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// TestWatchResumesAfterSIGKILL: two `arbiter serve` processes on one redis-server.
// A Watch on replica a streams the first effects; a is SIGKILLed (the stream fails
// UNAVAILABLE); the session goes on through replica b; the Watch resumes on b with
// after_seq = the last seq received and follows the session to its close. Joined, the
// two streams are exactly the effects the unary RPCs handed out, in seq order:
// nothing twice, no gap. (No timer comes due during the test: the booking policy's
// deadlines are 60 s.)
func TestWatchResumesAfterSIGKILL(t *testing.T) {
	srv := redistest.Start(t)
	bin := buildArbiter(t, true)
	a := startReplica(t, bin, "--redis-url", srv.URL(), "--tools", bookingPolicy, "--allow-volatile-store")
	b := startReplica(t, bin, "--redis-url", srv.URL(), "--tools", bookingPolicy, "--allow-volatile-store")
	const sid = "watch-kill"
	unary := effectLedger{}
	add := func(e *arbiterv1.Effects) { t.Helper(); unary.add(t, e) }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	reg := func(r *replica, req *arbiterv1.RegisterCallRequest) *arbiterv1.RegisterCallResponse {
		t.Helper()
		req.SessionId = sid
		resp := must[*arbiterv1.RegisterCallResponse](t)(r.c.RegisterCall(ctx, req))
		add(resp.Effects)
		return resp
	}
	must[*arbiterv1.ConfigureSessionResponse](t)(a.c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: sid, ResponseScheduling: true}))
	wa := startE2EWatch(t, a.c, sid, 0)
	add(must[*arbiterv1.ConnectResponse](t)(a.c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: sid, ConnectionId: "conn-1"})).Effects)
	reg(a, &arbiterv1.RegisterCallRequest{CallId: "r1", Tool: "get_weather", ToolChoice: arbiterv1.ToolChoice_TOOL_CHOICE_NONE})
	w1 := reg(a, &arbiterv1.RegisterCallRequest{CallId: "w1", Tool: "get_weather", Behavior: arbiterv1.Behavior_BEHAVIOR_NON_BLOCKING})
	pct, _ := structpb.NewStruct(map[string]any{"percent": 30})
	add(must[*arbiterv1.ReportProgressResponse](t)(a.c.ReportProgress(ctx, &arbiterv1.ReportProgressRequest{SessionId: sid, JobId: w1.JobId, Result: pct})).Effects)
	slot, _ := structpb.NewStruct(map[string]any{"slot": "tomorrow 3pm"})
	book := reg(a, &arbiterv1.RegisterCallRequest{CallId: "c1", Tool: "book_slot", Args: slot})
	wa.waitFor(t, uint64(len(unary)))

	a.kill()
	if err := wa.end(t); status.Code(err) != codes.Unavailable {
		t.Fatalf("Watch on the killed replica ended with %v, want UNAVAILABLE", err)
	}
	res, _ := structpb.NewStruct(map[string]any{"temp_c": 19})
	add(must[*arbiterv1.CompleteResponse](t)(b.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: sid, JobId: w1.JobId, Outcome: arbiterv1.Outcome_OUTCOME_RESULT, Result: res})).Effects)
	add(must[*arbiterv1.ReportToolCallCancellationResponse](t)(b.c.ReportToolCallCancellation(ctx, &arbiterv1.ReportToolCallCancellationRequest{SessionId: sid, CallIds: []string{"c1"}})).Effects)

	wb := startE2EWatch(t, b.c, sid, wa.last())
	add(must[*arbiterv1.CompleteResponse](t)(b.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: sid, JobId: book.JobId, Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED})).Effects)
	reg(b, &arbiterv1.RegisterCallRequest{CallId: "w2", Tool: "get_weather"})
	add(must[*arbiterv1.ConnectResponse](t)(b.c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: sid, ConnectionId: "conn-2"})).Effects)
	add(must[*arbiterv1.CloseSessionResponse](t)(b.c.CloseSession(ctx, &arbiterv1.CloseSessionRequest{SessionId: sid})).Effects)
	if err := wb.end(t); err != nil {
		t.Fatalf("resumed Watch ended with %v, want OK at close", err)
	}

	want := unary.ordered(t)
	got := append(append([]string(nil), wa.got...), wb.got...)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("streams before and after the kill differ from the unary RPCs\n--- watch\n%s\n--- unary\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	t.Logf("%d effects before the SIGKILL, %d after the resume; joined = unary", len(wa.got), len(wb.got))
}
