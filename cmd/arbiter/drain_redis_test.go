package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/voicearbiter/arbiter/internal/redistest"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
)

// drainHangGuard bounds how long a SIGTERMed replica may take to exit before the test
// calls it hung. The drain should take well under a second; the replica runs with
// --drain-timeout 20s, so a drain held open by a waiting Decide or a Watch (as before
// they were ended at once) fails here.
const drainHangGuard = 10 * time.Second

// TestRollingRestartDoesNotWaitForLongPolls: two replicas on one durable redis-server
// and a client on both (pick_first over [A, B], the clients' service config) with
// three Decides waiting on A (two jobs preparing, one prepared in its grace window)
// and a Watch on A. A gets SIGTERM: it exits at once (its drain ends the waiting
// Decides and the Watch with UNAVAILABLE, reason SERVER_DRAINING, instead of waiting
// out --drain-timeout), the channel retries the Decides on B, which answers them (the
// prepared job commits at the end of its grace window, the others cancel on a stop),
// and the Watch resumes on B with after_seq: every effect of the session arrives once,
// in order, and the decisions are the store's.
func TestRollingRestartDoesNotWaitForLongPolls(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	bin := buildArbiter(t, true)
	args := []string{"--redis-url", srv.URL(), "--tools", bookingPolicy, "--drain-timeout", "20s"}
	a, b := startReplica(t, bin, args...), startReplica(t, bin, args...)
	cfg, err := os.ReadFile("../../clients/service-config.json")
	if err != nil {
		t.Fatal(err)
	}
	res := manual.NewBuilderWithScheme("replicas")
	res.InitialState(resolver.State{Addresses: []resolver.Address{{Addr: a.addr}, {Addr: b.addr}}})
	conn, err := grpc.NewClient(res.Scheme()+":///arbiter", grpc.WithResolvers(res),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultServiceConfig(string(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := arbiterv1.NewArbiterServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const sid = "rollout"
	var on peer.Peer

	// A rejected call: one effect (#1) the Watch hands out before the drain.
	rej, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: sid, CallId: "x", Tool: "book_slot", ToolChoice: arbiterv1.ToolChoice_TOOL_CHOICE_NONE}, grpc.Peer(&on))
	if err != nil {
		t.Fatal(err)
	}
	if on.Addr.String() != a.addr {
		t.Fatalf("the channel picked %s, want replica A %s first", on.Addr, a.addr)
	}
	var jobs []string
	for i, slot := range []string{"tomorrow 3pm", "tomorrow 4pm", "tomorrow 5pm"} {
		st, _ := structpb.NewStruct(map[string]any{"slot": slot})
		reg, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: sid, CallId: fmt.Sprintf("c%d", i+1), Tool: "book_slot", Args: st})
		if err != nil || reg.Disposition != arbiterv1.Disposition_DISPOSITION_EXECUTE {
			t.Fatalf("RegisterCall %s: %v %v", slot, reg, err)
		}
		jobs = append(jobs, reg.JobId)
	}

	w := watchAcross(ctx, t, c, sid)

	// The Decides, as the adapters keep them during a prepare: ask until an answer.
	type answer struct {
		job      string
		decision arbiterv1.Decision
		peer     string
		err      error
	}
	answers := make(chan answer, len(jobs))
	for i, job := range jobs {
		prepared := i == 2 // in its 1.5 s grace window; the others are preparing
		go func() {
			for {
				var p peer.Peer
				d, err := c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: sid, JobId: job, Prepared: prepared, Wait: durationpb.New(30 * time.Second)}, grpc.Peer(&p))
				if err != nil || d.Decision != arbiterv1.Decision_DECISION_PENDING {
					answers <- answer{job, d.GetDecision(), fmt.Sprint(p.Addr), err}
					return
				}
			}
		}()
	}
	w.waitFor(t, rej.Effects.Responses[0].Seq)
	time.Sleep(300 * time.Millisecond) // the three Decides are waiting on A

	sent := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.done:
	case <-time.After(drainHangGuard):
		t.Fatalf("replica A did not exit within %v of SIGTERM: its drain waited for the long-polls\n%s", drainHangGuard, a.log.String())
	}
	took := time.Since(sent)
	t.Logf("replica A exited %v after SIGTERM (its own log: %s)", took.Round(time.Millisecond), drainedLine(a.log.String()))
	if code := a.cmd.ProcessState.ExitCode(); code != 0 || strings.Contains(a.log.String(), "drain timeout") {
		t.Fatalf("replica A exited with %d:\n%s", code, a.log.String())
	}

	// The prepared job commits on B at the end of its grace window.
	got := map[string]answer{}
	select {
	case ans := <-answers:
		got[ans.job] = ans
	case <-time.After(15 * time.Second):
		t.Fatal("no Decide was answered within 15 s of the drain")
	}
	// Then a stop cancels the two still preparing.
	for _, ev := range []struct {
		speech arbiterv1.SpeechEvent
		text   string
	}{{speech: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START}, {text: "Stop, don't book the others."}, {speech: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END}} {
		if ev.text != "" {
			_, err = c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: sid, Text: ev.text, EventId: "t1"})
		} else {
			_, err = c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: sid, Event: ev.speech, EventId: ev.speech.String()})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for len(got) < len(jobs) {
		select {
		case ans := <-answers:
			got[ans.job] = ans
		case <-time.After(15 * time.Second):
			t.Fatalf("Decides answered: %v; want all %d", got, len(jobs))
		}
	}
	want := map[string]arbiterv1.Decision{jobs[0]: arbiterv1.Decision_DECISION_CANCEL, jobs[1]: arbiterv1.Decision_DECISION_CANCEL, jobs[2]: arbiterv1.Decision_DECISION_COMMIT}
	for _, job := range jobs {
		ans := got[job]
		if ans.err != nil || ans.decision != want[job] || ans.peer != b.addr {
			t.Errorf("Decide %s: %v from %s (%v), want %v from replica B %s", job, ans.decision, ans.peer, ans.err, want[job], b.addr)
		}
	}
	// The store says the same.
	gs, err := b.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range gs.Jobs {
		if j.Decision != want[j.JobId] {
			t.Errorf("job %s in the store: %v, want %v", j.JobId, j.Decision, want[j.JobId])
		}
	}

	// Every outcome reported, the session closed: the Watch, resumed on B, has handed
	// out every effect once and in order, then ends.
	for i, job := range jobs {
		o := arbiterv1.Outcome_OUTCOME_CANCELLED
		if i == 2 {
			o = arbiterv1.Outcome_OUTCOME_COMMITTED
		}
		if _, err := c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: sid, JobId: job, Outcome: o}); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := c.CloseSession(ctx, &arbiterv1.CloseSessionRequest{SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	final, err := b.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	seqs, ends := w.wait(t)
	if len(ends) == 0 || !drainingErr(ends[0]) {
		t.Errorf("the Watch on A ended with %v, want UNAVAILABLE with reason SERVER_DRAINING", ends)
	}
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("the Watch handed out seqs %v, want 1..%d once each in order", seqs, final.LastSeq)
		}
	}
	if uint64(len(seqs)) != final.LastSeq || final.LastSeq == 0 || !final.Closed {
		t.Fatalf("the Watch handed out %d effects, the session has %d (closed %v, close effects %v)", len(seqs), final.LastSeq, final.Closed, cl.Effects)
	}
}

// drainingErr reports whether err is the UNAVAILABLE of a draining replica.
func drainingErr(err error) bool {
	st := status.Convert(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Reason == server.ReasonServerDraining {
			return st.Code() == codes.Unavailable
		}
	}
	return false
}

// drainedLine is the replica's "drained" log line, or a note that there is none.
func drainedLine(log string) string {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, `msg=drained`) {
			return l
		}
	}
	return "(no drained line)"
}

// crossWatch is a Watch a client keeps open across replicas: it resumes after the
// last seq it received whenever the stream ends with an error, as the adapters do.
type crossWatch struct {
	mu   sync.Mutex
	seqs []uint64
	ends []error // how each stream ended before the last
	done chan struct{}
}

func watchAcross(ctx context.Context, t *testing.T, c arbiterv1.ArbiterServiceClient, sid string) *crossWatch {
	w := &crossWatch{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		var after uint64
		for attempt := 0; attempt < 20; attempt++ {
			st, err := c.Watch(ctx, &arbiterv1.WatchRequest{SessionId: sid, AfterSeq: after})
			for err == nil {
				var m *arbiterv1.WatchResponse
				if m, err = st.Recv(); err == nil {
					w.mu.Lock()
					w.seqs = append(w.seqs, m.Seq)
					w.mu.Unlock()
					after = m.Seq
				}
			}
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return // the session closed (or the test ended)
			}
			w.mu.Lock()
			w.ends = append(w.ends, err)
			w.mu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return w
}

// waitFor waits until seq has arrived.
func (w *crossWatch) waitFor(t *testing.T, seq uint64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		w.mu.Lock()
		n := len(w.seqs)
		last := uint64(0)
		if n > 0 {
			last = w.seqs[n-1]
		}
		w.mu.Unlock()
		if last >= seq {
			return
		}
	}
	t.Fatalf("the Watch did not hand out seq %d within 10 s", seq)
}

// wait waits for the Watch to end (the session closed) and returns the seqs it
// handed out and how each stream before the last ended.
func (w *crossWatch) wait(t *testing.T) ([]uint64, []error) {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(15 * time.Second):
		t.Fatal("the Watch did not end within 15 s of CloseSession")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]uint64(nil), w.seqs...), append([]error(nil), w.ends...)
}
