package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/redistest"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
	"github.com/voicearbiter/arbiter/store/redisstore"
)

// fakeClock is a manual arbiter.Clock: time moves only on Advance, which fires the
// After channels that came due. Safe for concurrent use.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2030, 5, 6, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{at: c.now.Add(d), ch: ch})
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
		} else {
			w.ch <- c.now
		}
	}
	c.waiters = kept
}

// pending returns how many After channels wait to fire.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// watchPolicy: a held booking (BLOCKING), a read-only weather tool, a slow NON_BLOCKING
// report whose calls time out after 5 s (a timer-made effect), and a transfer that is
// confirm-then-act.
func watchPolicy(t testing.TB) *arbiter.Policy {
	t.Helper()
	p := &arbiter.Policy{Tools: map[string]*arbiter.Tool{
		"book_slot": {Name: "book_slot", SideEffect: true, Behavior: arbiter.Blocking,
			Key: []arbiter.KeyArg{{Arg: "slot", As: arbiter.KeyDatetime}}, Describe: "the booking for {slot}"},
		"get_weather": {Name: "get_weather"},
		"report":      {Name: "report", Behavior: arbiter.NonBlocking, Timings: arbiter.Timings{MaxPending: 5 * time.Second}},
		"transfer":    {Name: "transfer", SideEffect: true, Confirm: true, Describe: "the transfer of {amount}"},
	}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

// node is one in-process replica: a Service on a store and a clock, served by its own
// gRPC server on a bufconn listener.
type node struct {
	c   arbiterv1.ArbiterServiceClient
	gs  *grpc.Server
	srv *server.Server
}

func newNode(t testing.TB, store arbiter.Store, clock arbiter.Clock, o server.Options) *node {
	t.Helper()
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: watchPolicy(t)}, Store: store, Clock: clock}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if o.Logger == nil {
		o.Logger = quiet
	}
	srv := server.New(svc, o.Logger)
	conn, gs := serveBufconn(t, srv, o)
	return &node{c: arbiterv1.NewArbiterServiceClient(conn), gs: gs, srv: srv}
}

// effect is one effect reduced to what must match between the unary RPCs and Watch.
type effect struct {
	seq  uint64
	desc string
}

func (e effect) String() string { return fmt.Sprintf("%d %s", e.seq, e.desc) }

func payloadJSON(m interface{ AsMap() map[string]any }) string {
	b, _ := json.Marshal(m.AsMap())
	return string(b)
}

func responseDesc(r *arbiterv1.FunctionResponse) string {
	return fmt.Sprintf("response call=%s name=%s job=%s interim=%v payload=%s", r.CallId, r.Name, r.JobId, r.Interim, payloadJSON(r.Payload))
}

func skipDesc(s *arbiterv1.Skip) string {
	return fmt.Sprintf("skip call=%s name=%s job=%s reason=%s", s.CallId, s.Name, s.JobId, s.Reason)
}

func noteDesc(n *arbiterv1.Note) string {
	return fmt.Sprintf("note job=%s run=%s deliver=%v via=%v call=%s text=%q", n.JobId, n.RunId, n.Deliver, n.Via, n.CallId, n.Text)
}

func runDesc(u *arbiterv1.RunUpdate) string {
	return fmt.Sprintf("run %s tool=%s state=%v call=%s job=%s reason=%q", u.RunId, u.Tool, u.State, u.CallId, u.JobId, u.Reason)
}

func effectsOf(e *arbiterv1.Effects) []effect {
	var out []effect
	for _, r := range e.GetResponses() {
		out = append(out, effect{r.Seq, responseDesc(r)})
	}
	for _, s := range e.GetSkips() {
		out = append(out, effect{s.Seq, skipDesc(s)})
	}
	for _, n := range e.GetNotes() {
		out = append(out, effect{n.Seq, noteDesc(n)})
	}
	for _, u := range e.GetRuns() {
		out = append(out, effect{u.Seq, runDesc(u)})
	}
	return out
}

func watchEffect(m *arbiterv1.WatchResponse) effect {
	switch e := m.Effect.(type) {
	case *arbiterv1.WatchResponse_Response:
		return effect{m.Seq, responseDesc(e.Response)}
	case *arbiterv1.WatchResponse_Skip:
		return effect{m.Seq, skipDesc(e.Skip)}
	case *arbiterv1.WatchResponse_Note:
		return effect{m.Seq, noteDesc(e.Note)}
	case *arbiterv1.WatchResponse_Run:
		return effect{m.Seq, runDesc(e.Run)}
	}
	return effect{m.Seq, "empty"}
}

// unary collects the effects the unary RPCs hand out, each once by seq: a retried
// request repeats an effect with its seq, and must repeat it exactly.
type unary struct {
	t     *testing.T
	bySeq map[uint64]string
}

func (u *unary) add(e *arbiterv1.Effects) {
	u.t.Helper()
	for _, ef := range effectsOf(e) {
		if ef.seq == 0 {
			u.t.Fatalf("effect without a seq: %s", ef.desc)
		}
		if prev, ok := u.bySeq[ef.seq]; ok && prev != ef.desc {
			u.t.Fatalf("seq %d handed out twice with different effects:\n%s\n%s", ef.seq, prev, ef.desc)
		}
		u.bySeq[ef.seq] = ef.desc
	}
}

// ordered returns the effects by seq, failing unless the seqs are 1..N without gaps.
func (u *unary) ordered() []effect {
	u.t.Helper()
	var out []effect
	for s, d := range u.bySeq {
		out = append(out, effect{s, d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	for i, e := range out {
		if e.seq != uint64(i+1) {
			u.t.Fatalf("unary effects have a gap: position %d has seq %d", i, e.seq)
		}
	}
	return out
}

// watcher reads one Watch stream in the background.
type watcher struct {
	mu   sync.Mutex
	got  []effect
	err  error // nil: the stream ended OK (io.EOF)
	done chan struct{}
}

func openWatch(t *testing.T, c arbiterv1.ArbiterServiceClient, sid string, after uint64) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := c.Watch(ctx, &arbiterv1.WatchRequest{SessionId: sid, AfterSeq: after})
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{done: make(chan struct{})}
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
			w.got = append(w.got, watchEffect(m))
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *watcher) effects() []effect {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]effect(nil), w.got...)
}

func (w *watcher) last() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.got) == 0 {
		return 0
	}
	return w.got[len(w.got)-1].seq
}

// waitFor waits until the stream delivered seq (a generous bound for a loaded
// machine: it only fails on a missed wake-up).
func (w *watcher) waitFor(t *testing.T, seq uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for w.last() < seq {
		select {
		case <-w.done:
			t.Fatalf("stream ended (%v) at seq %d, waiting for %d", w.err, w.last(), seq)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream at seq %d after 10 s, waiting for %d", w.last(), seq)
		}
	}
}

// end waits for the stream to end and returns its error (nil: OK).
func (w *watcher) end(t *testing.T) error {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("stream did not end; at seq %d", w.last())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// script drives one session through every kind of effect with unary RPCs. Each step
// runs on the client it is given; steps marked clock advance the fake clock.
type script struct {
	t   *testing.T
	sid string
	clk *fakeClock
	u   *unary

	jobBook, jobWeather, jobReport, jobTransfer, runID string
}

type scriptStep struct {
	name  string
	clock bool // advances the clock (a timer fires)
	run   func(c arbiterv1.ArbiterServiceClient)
}

func (s *script) must(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

func (s *script) steps() []scriptStep {
	t, ctx, sid := s.t, context.Background(), s.sid
	reg := func(c arbiterv1.ArbiterServiceClient, req *arbiterv1.RegisterCallRequest) *arbiterv1.RegisterCallResponse {
		t.Helper()
		req.SessionId = sid
		r, err := c.RegisterCall(ctx, req)
		s.must(err)
		s.u.add(r.Effects)
		return r
	}
	complete := func(c arbiterv1.ArbiterServiceClient, job string, oc arbiterv1.Outcome, res map[string]any) *arbiterv1.CompleteResponse {
		t.Helper()
		req := &arbiterv1.CompleteRequest{SessionId: sid, JobId: job, Outcome: oc}
		if res != nil {
			req.Result = args(t, res)
		}
		r, err := c.Complete(ctx, req)
		s.must(err)
		s.u.add(r.Effects)
		return r
	}
	speech := func(c arbiterv1.ArbiterServiceClient, e arbiterv1.SpeechEvent) {
		t.Helper()
		r, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: sid, Event: e})
		s.must(err)
		s.u.add(r.Effects)
	}
	return []scriptStep{
		{name: "configure", run: func(c arbiterv1.ArbiterServiceClient) {
			_, err := c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: sid, ResponseScheduling: true})
			s.must(err)
		}},
		{name: "connect", run: func(c arbiterv1.ArbiterServiceClient) {
			r, err := c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: sid, ConnectionId: "conn-1"})
			s.must(err)
			s.u.add(r.Effects)
		}},
		{name: "book", run: func(c arbiterv1.ArbiterServiceClient) {
			r := reg(c, &arbiterv1.RegisterCallRequest{CallId: "c1", Tool: "book_slot", Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
			if r.Disposition != arbiterv1.Disposition_DISPOSITION_EXECUTE || r.JobTool != "book_slot" || r.JobArgs.AsMap()["slot"] != "tomorrow 3pm" {
				t.Fatalf("book: %v", r)
			}
			s.jobBook = r.JobId
			again := reg(c, &arbiterv1.RegisterCallRequest{CallId: "c1", Tool: "book_slot", Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
			if again.JobId != s.jobBook || len(effectsOf(again.Effects)) != 0 {
				t.Fatalf("retried RegisterCall: %v", again)
			}
		}},
		{name: "weather with progress", run: func(c arbiterv1.ArbiterServiceClient) {
			r := reg(c, &arbiterv1.RegisterCallRequest{CallId: "c2", Tool: "get_weather", Behavior: arbiterv1.Behavior_BEHAVIOR_NON_BLOCKING})
			s.jobWeather = r.JobId
			p, err := c.ReportProgress(ctx, &arbiterv1.ReportProgressRequest{SessionId: sid, JobId: s.jobWeather, Result: args(t, map[string]any{"percent": 40})})
			s.must(err)
			if len(p.Effects.GetResponses()) != 1 || !p.Effects.Responses[0].Interim || p.Effects.Responses[0].Payload.AsMap()["status"] != "in_progress" {
				t.Fatalf("progress: %v", p.Effects)
			}
			s.u.add(p.Effects)
			complete(c, s.jobWeather, arbiterv1.Outcome_OUTCOME_RESULT, map[string]any{"temp_c": 21})
		}},
		{name: "report", run: func(c arbiterv1.ArbiterServiceClient) {
			s.jobReport = reg(c, &arbiterv1.RegisterCallRequest{CallId: "c3", Tool: "report"}).JobId
		}},
		{name: "transfer run", run: func(c arbiterv1.ArbiterServiceClient) {
			r := reg(c, &arbiterv1.RegisterCallRequest{CallId: "c4", Tool: "transfer", Args: args(t, map[string]any{"amount": "100 euros"})})
			if r.Disposition != arbiterv1.Disposition_DISPOSITION_RUN || r.RunId == "" || len(r.Effects.Runs) != 1 ||
				r.Effects.Runs[0].State != arbiterv1.RunState_RUN_STATE_OPENED || r.JobId != "" {
				t.Fatalf("transfer: %v", r)
			}
			s.runID = r.RunId
			cf := reg(c, &arbiterv1.RegisterCallRequest{CallId: "c5", Tool: "confirm_action", Args: args(t, map[string]any{"run_id": s.runID, "confirmed": true})})
			if cf.Disposition != arbiterv1.Disposition_DISPOSITION_EXECUTE || cf.JobTool != "transfer" || cf.JobArgs.AsMap()["amount"] != "100 euros" ||
				cf.RunId != s.runID || len(cf.Effects.Runs) != 1 || cf.Effects.Runs[0].State != arbiterv1.RunState_RUN_STATE_CONFIRMED {
				t.Fatalf("confirmation: %v", cf)
			}
			s.jobTransfer = cf.JobId
		}},
		{name: "transfer commits after the grace window", clock: true, run: func(c arbiterv1.ArbiterServiceClient) {
			d, err := c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: sid, JobId: s.jobTransfer, Prepared: true, Wait: durationpb.New(0)})
			s.must(err)
			if d.Decision != arbiterv1.Decision_DECISION_PENDING {
				t.Fatalf("decide in the grace window: %v", d)
			}
			s.clk.Advance(1500 * time.Millisecond) // the grace window's end: the commit is decided in time
			d, err = c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: sid, JobId: s.jobTransfer, Prepared: true})
			s.must(err)
			if d.Decision != arbiterv1.Decision_DECISION_COMMIT {
				t.Fatalf("decide after the grace window: %v", d)
			}
			first := complete(c, s.jobTransfer, arbiterv1.Outcome_OUTCOME_COMMITTED, map[string]any{"reference": "R-7"})
			again := complete(c, s.jobTransfer, arbiterv1.Outcome_OUTCOME_COMMITTED, map[string]any{"reference": "R-7"})
			if fmt.Sprint(effectsOf(first.Effects)) != fmt.Sprint(effectsOf(again.Effects)) || len(first.Effects.Responses) != 1 {
				t.Fatalf("retried Complete: %v then %v", first.Effects, again.Effects)
			}
		}},
		{name: "barge-in and stop", run: func(c arbiterv1.ArbiterServiceClient) {
			speech(c, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START)
			r, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: sid, Event: arbiterv1.SpeechEvent_SPEECH_EVENT_INTERRUPTED})
			s.must(err)
			if len(r.Effects.Skips) != 1 || r.Effects.Skips[0].CallId != "c1" || r.Effects.Skips[0].Reason != "abandoned" {
				t.Fatalf("interrupted: %v", r.Effects)
			}
			s.u.add(r.Effects)
			tr, err := c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: sid, Text: "Actually, stop. Don't book it."})
			s.must(err)
			s.u.add(tr.Effects)
			if tr.Intent != "stop" || strings.Join(tr.CancelledJobIds, ",") != s.jobBook {
				t.Fatalf("stop: %v", tr)
			}
			speech(c, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END)
			cp := complete(c, s.jobBook, arbiterv1.Outcome_OUTCOME_CANCELLED, nil)
			if len(cp.Effects.Notes) != 1 {
				t.Fatalf("cancel of an abandoned call: %v", cp.Effects)
			}
		}},
		{name: "report deadline via Poll", clock: true, run: func(c arbiterv1.ArbiterServiceClient) {
			s.clk.Advance(4 * time.Second)
			p, err := c.Poll(ctx, &arbiterv1.PollRequest{SessionId: sid})
			s.must(err)
			if len(p.Effects.GetResponses()) != 1 || p.Effects.Responses[0].CallId != "c3" || p.Effects.Responses[0].Payload.AsMap()["status"] != "timeout" {
				t.Fatalf("deadline: %v", p.Effects)
			}
			s.u.add(p.Effects)
		}},
		{name: "late result, reconnect, close", run: func(c arbiterv1.ArbiterServiceClient) {
			cp := complete(c, s.jobReport, arbiterv1.Outcome_OUTCOME_RESULT, map[string]any{"rows": 3})
			if len(cp.Effects.Responses) != 0 || len(cp.Effects.Notes) != 1 {
				t.Fatalf("a result after the deadline must be a note: %v", cp.Effects)
			}
			reg(c, &arbiterv1.RegisterCallRequest{CallId: "c6", Tool: "get_weather"})
			r, err := c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: sid, ConnectionId: "conn-2"})
			s.must(err)
			if len(r.Effects.Skips) != 1 || r.Effects.Skips[0].CallId != "c6" || r.Effects.Skips[0].Reason != "connection_closed" {
				t.Fatalf("reconnect: %v", r.Effects)
			}
			s.u.add(r.Effects)
			cl, err := c.CloseSession(ctx, &arbiterv1.CloseSessionRequest{SessionId: sid})
			s.must(err)
			s.u.add(cl.Effects)
		}},
	}
}

// storePair returns two stores over one shared state for two replicas: the same
// memory store, or two clients of one real redis-server.
func storePairs(t *testing.T) map[string]func(t *testing.T) (arbiter.Store, arbiter.Store) {
	return map[string]func(t *testing.T) (arbiter.Store, arbiter.Store){
		"memory": func(t *testing.T) (arbiter.Store, arbiter.Store) {
			s := memory.New(nil)
			t.Cleanup(func() { s.Close() })
			return s, s
		},
		"redis": func(t *testing.T) (arbiter.Store, arbiter.Store) {
			srv := redistest.Start(t)
			var out [2]arbiter.Store
			for i := range out {
				s, err := redisstore.Open(srv.URL(), redisstore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				out[i] = s
			}
			return out[0], out[1]
		},
	}
}

func sameEffects(t *testing.T, what string, got, want []effect) {
	t.Helper()
	g, w := fmt.Sprint(got), fmt.Sprint(want)
	if g != w {
		var gl, wl []string
		for _, e := range got {
			gl = append(gl, e.String())
		}
		for _, e := range want {
			wl = append(wl, e.String())
		}
		t.Fatalf("%s differs from the unary RPCs\n--- %s\n%s\n--- unary\n%s", what, what, strings.Join(gl, "\n"), strings.Join(wl, "\n"))
	}
}

// TestWatchEquivalence drives one session through responses (final, interim, run
// prompts, a deadline answer a timer made), skips, notes and run updates with unary
// RPCs, while a Watch opened at the start streams the session: the stream must carry
// exactly the unary RPCs' effects (each once by seq; retried requests repeat theirs),
// in seq order, and end when the session closes. On the memory store and on Redis.
//
// The unary RPCs run on one replica whose fake clock the script advances; the Watch
// runs on a second replica over the same store whose clock stays put. A Watch steps
// due timers itself (that is its job: no polling), so on an advancing clock it could
// make the deadline answer before the script's Poll does and the unary RPCs would
// never see it; on a clock that stays put it never fires a timer (the engine clamps
// time to the session's), which makes the comparison exact.
// TestWatchDeliversTimerEffects covers the other half.
func TestWatchEquivalence(t *testing.T) {
	for name, stores := range storePairs(t) {
		t.Run(name, func(t *testing.T) {
			s1, s2 := stores(t)
			clk := newFakeClock()
			u := newNode(t, s1, clk, server.Options{})
			w := newNode(t, s2, newFakeClock(), server.Options{})
			sc := &script{t: t, sid: "watch-eq", clk: clk, u: &unary{t: t, bySeq: map[uint64]string{}}}
			steps := sc.steps()
			steps[0].run(u.c) // the session exists from here on
			watch := openWatch(t, w.c, sc.sid, 0)
			for _, st := range steps[1:] {
				st.run(u.c)
			}
			if err := watch.end(t); err != nil {
				t.Fatalf("stream ended with %v, want OK after the session closed", err)
			}
			want := sc.u.ordered()
			sameEffects(t, "Watch", watch.effects(), want)
			t.Logf("%d effects, the same on Watch and on the unary RPCs", len(want))
			gs, err := u.c.GetSession(context.Background(), &arbiterv1.GetSessionRequest{SessionId: sc.sid})
			if err != nil || gs.LastSeq != uint64(len(want)) || gs.ConnectionId != "conn-2" {
				t.Fatalf("GetSession: last_seq %d connection %q (%v), want %d conn-2", gs.GetLastSeq(), gs.GetConnectionId(), err, len(want))
			}
			if len(gs.Runs) != 1 || gs.Runs[0].RunId != sc.runID || gs.Runs[0].State != arbiterv1.RunState_RUN_STATE_CONFIRMED ||
				gs.Runs[0].JobId != sc.jobTransfer || strings.Join(gs.Runs[0].CallIds, ",") != "c4,c5" {
				t.Fatalf("runs: %v", gs.Runs)
			}
		})
	}
}

// TestWatchResumesOnAnotherReplica: Watch on replica 1, which is stopped hard
// mid-session (the stream fails UNAVAILABLE); the session goes on through replica 2,
// timers included, while nobody watches; then Watch resumes on replica 2 with
// after_seq = the last seq received and follows the session to its close. What the
// two streams delivered, joined, must be the unary sequence exactly: nothing twice,
// no gap. On a shared memory store and on Redis.
func TestWatchResumesOnAnotherReplica(t *testing.T) {
	for name, stores := range storePairs(t) {
		t.Run(name, func(t *testing.T) {
			s1, s2 := stores(t)
			clk := newFakeClock()
			r1 := newNode(t, s1, clk, server.Options{})
			r2 := newNode(t, s2, clk, server.Options{})
			sc := &script{t: t, sid: "watch-resume", clk: clk, u: &unary{t: t, bySeq: map[uint64]string{}}}
			steps := sc.steps()
			// Phase 1 on replica 1, watched there, until the first clock step. The clock
			// stays put while a Watch is open (see TestWatchEquivalence).
			steps[0].run(r1.c)
			w1 := openWatch(t, r1.c, sc.sid, 0)
			i := 1
			for ; !steps[i].clock; i++ {
				steps[i].run(r1.c)
			}
			w1.waitFor(t, uint64(len(sc.u.bySeq)))
			r1.gs.Stop()
			if err := w1.end(t); status.Code(err) != codes.Unavailable {
				t.Fatalf("stream on the stopped replica ended with %v, want UNAVAILABLE", err)
			}
			// Phase 2 on replica 2, unwatched: up to the last step that moves the clock.
			lastClock := 0
			for j, st := range steps {
				if st.clock {
					lastClock = j
				}
			}
			for ; i <= lastClock; i++ {
				steps[i].run(r2.c)
			}
			// Phase 3: resume on replica 2, then the rest of the session.
			last := w1.last()
			if last == 0 {
				t.Fatal("replica 1's stream delivered nothing before it stopped")
			}
			w2 := openWatch(t, r2.c, sc.sid, last)
			for ; i < len(steps); i++ {
				if steps[i].clock {
					t.Fatalf("step %q moves the clock while a Watch is open", steps[i].name)
				}
				steps[i].run(r2.c)
			}
			if err := w2.end(t); err != nil {
				t.Fatalf("resumed stream ended with %v, want OK", err)
			}
			joined := append(w1.effects(), w2.effects()...)
			sameEffects(t, "Watch on replica 1 then replica 2", joined, sc.u.ordered())
			t.Logf("%d effects before the stop, %d after the resume; joined = unary", len(w1.effects()), len(w2.effects()))
		})
	}
}

// TestWatchDeliversTimerEffects: with nobody polling, the Watch itself steps a due
// timer and streams the deadline answer it made, once: a Poll afterwards returns
// nothing, and GetSession's last_seq is the streamed seq.
func TestWatchDeliversTimerEffects(t *testing.T) {
	clk := newFakeClock()
	n := newNode(t, memory.New(nil), clk, server.Options{})
	ctx := context.Background()
	if _, err := n.c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: "timer"}); err != nil {
		t.Fatal(err)
	}
	w := openWatch(t, n.c, "timer", 0)
	if _, err := n.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "timer", CallId: "r1", Tool: "report"}); err != nil {
		t.Fatal(err)
	}
	// The Watch wakes on the save and sets a timer for r1's deadline.
	for deadline := time.Now().Add(10 * time.Second); clk.pending() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the Watch set no timer for the call's deadline")
		}
	}
	clk.Advance(6 * time.Second)
	w.waitFor(t, 1)
	got := w.effects()
	if len(got) != 1 || !strings.Contains(got[0].desc, "response call=r1") || !strings.Contains(got[0].desc, `"status":"timeout"`) {
		t.Fatalf("streamed %v, want r1's deadline answer", got)
	}
	p, err := n.c.Poll(ctx, &arbiterv1.PollRequest{SessionId: "timer"})
	if err != nil || len(effectsOf(p.Effects)) != 0 {
		t.Fatalf("Poll after the Watch delivered the deadline: %v %v", p, err)
	}
	// An agent that polls with its cursor still gets it: nothing is lost to whoever
	// fired the timer first.
	zero := uint64(0)
	p, err = n.c.Poll(ctx, &arbiterv1.PollRequest{SessionId: "timer", AfterSeq: &zero})
	if err != nil || len(p.Effects.GetResponses()) != 1 || p.Effects.Responses[0].CallId != "r1" || p.Effects.Responses[0].Seq != 1 {
		t.Fatalf("Poll(after_seq 0): %v %v, want r1's deadline answer with seq 1", p, err)
	}
	one := uint64(1)
	if p, err = n.c.Poll(ctx, &arbiterv1.PollRequest{SessionId: "timer", AfterSeq: &one}); err != nil || len(effectsOf(p.Effects)) != 0 {
		t.Fatalf("Poll(after_seq 1): %v %v, want nothing", p, err)
	}
	two := uint64(2)
	if _, err = n.c.Poll(ctx, &arbiterv1.PollRequest{SessionId: "timer", AfterSeq: &two}); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "after_seq") {
		t.Fatalf("Poll(after_seq beyond): %v, want FAILED_PRECONDITION naming after_seq", err)
	}
	gs, err := n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "timer"})
	if err != nil || gs.LastSeq != 1 || len(gs.PendingCalls) != 0 {
		t.Fatalf("GetSession: %v %v", gs, err)
	}
}

// TestNewRPCsBadInput: Connect, ReportProgress and Watch refuse bad input with the
// right code naming the field or the session, and change nothing.
func TestNewRPCsBadInput(t *testing.T) {
	n := newNode(t, memory.New(nil), newFakeClock(), server.Options{})
	ctx := context.Background()
	reg, err := n.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c1", Tool: "get_weather"})
	if err != nil {
		t.Fatal(err)
	}
	done, err := n.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c2", Tool: "get_weather", Args: args(t, map[string]any{"city": "Lyon"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "s1", JobId: done.JobId, Outcome: arbiterv1.Outcome_OUTCOME_RESULT}); err != nil {
		t.Fatal(err)
	}
	before, err := n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	watchErr := func(req *arbiterv1.WatchRequest) error {
		st, err := n.c.Watch(ctx, req)
		if err != nil {
			return err
		}
		_, err = st.Recv()
		return err
	}
	big := map[string]any{"x": strings.Repeat("x", 70<<10)}
	cases := []struct {
		name  string
		call  func() error
		code  codes.Code
		field string
	}{
		{"connect bad session id", func() error {
			_, err := n.c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: "a b", ConnectionId: "k1"})
			return err
		}, codes.InvalidArgument, "session_id"},
		{"connect empty connection id", func() error {
			_, err := n.c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: "s1"})
			return err
		}, codes.InvalidArgument, "connection_id"},
		{"connect malformed connection id", func() error {
			_, err := n.c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: "s1", ConnectionId: strings.Repeat("k", 129)})
			return err
		}, codes.InvalidArgument, "connection_id"},
		{"connect bad connection id on a new session", func() error {
			_, err := n.c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: "nope", ConnectionId: "a/b"})
			return err
		}, codes.InvalidArgument, "connection_id"},
		{"progress empty job", func() error {
			_, err := n.c.ReportProgress(ctx, &arbiterv1.ReportProgressRequest{SessionId: "s1"})
			return err
		}, codes.InvalidArgument, "job_id"},
		{"progress unknown job", func() error {
			_, err := n.c.ReportProgress(ctx, &arbiterv1.ReportProgressRequest{SessionId: "s1", JobId: "job-99"})
			return err
		}, codes.NotFound, "job_id"},
		{"progress unknown session", func() error {
			_, err := n.c.ReportProgress(ctx, &arbiterv1.ReportProgressRequest{SessionId: "nope", JobId: reg.JobId})
			return err
		}, codes.NotFound, "nope"},
		{"progress on a completed job", func() error {
			_, err := n.c.ReportProgress(ctx, &arbiterv1.ReportProgressRequest{SessionId: "s1", JobId: done.JobId})
			return err
		}, codes.FailedPrecondition, "job_id"},
		{"progress result over 64 KiB", func() error {
			_, err := n.c.ReportProgress(ctx, &arbiterv1.ReportProgressRequest{SessionId: "s1", JobId: reg.JobId, Result: args(t, big)})
			return err
		}, codes.InvalidArgument, "result"},
		{"watch empty session id", func() error { return watchErr(&arbiterv1.WatchRequest{}) }, codes.InvalidArgument, "session_id"},
		{"watch unknown session", func() error { return watchErr(&arbiterv1.WatchRequest{SessionId: "nope"}) }, codes.NotFound, "nope"},
		{"watch after_seq beyond the log", func() error {
			return watchErr(&arbiterv1.WatchRequest{SessionId: "s1", AfterSeq: before.LastSeq + 1})
		}, codes.FailedPrecondition, "after_seq"},
		{"complete unknown on a read-only job", func() error {
			_, err := n.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "s1", JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_UNKNOWN})
			return err
		}, codes.FailedPrecondition, "outcome"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, tc.call(), tc.code, tc.field) })
	}
	after, err := n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if after.Version != before.Version || after.LastSeq != before.LastSeq {
		t.Fatalf("bad input changed the session: version %d -> %d, last_seq %d -> %d", before.Version, after.Version, before.LastSeq, after.LastSeq)
	}
	if _, err := n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "nope"}); status.Code(err) != codes.NotFound {
		t.Fatalf("a bad request created session %q: %v", "nope", err)
	}
	// A closed session refuses Connect; Watch on it ends at once after its log.
	if _, err := n.c.CloseSession(ctx, &arbiterv1.CloseSessionRequest{SessionId: "s1"}); err != nil {
		t.Fatal(err)
	}
	_, err = n.c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: "s1", ConnectionId: "k2"})
	wantCode(t, err, codes.FailedPrecondition, "closed")
	w := openWatch(t, n.c, "s1", 0)
	if err := w.end(t); err != nil {
		t.Fatalf("Watch on a closed session: %v", err)
	}
	closed, _ := n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "s1"})
	if got := w.effects(); len(got) == 0 || got[len(got)-1].seq != closed.LastSeq {
		t.Fatalf("Watch on a closed session streamed %v, want its whole log up to %d", got, closed.LastSeq)
	}
}

// TestConnectAndProgress: Connect with the current id changes nothing; a new id turns
// the calls still pending from the earlier connection into connection_closed skips
// while their jobs go on. ReportProgress is dropped without response scheduling and
// comes back interim on NON_BLOCKING calls with it.
func TestConnectAndProgress(t *testing.T) {
	n := newNode(t, memory.New(nil), newFakeClock(), server.Options{})
	ctx := context.Background()
	c, err := n.c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: "k", ConnectionId: "conn-1"})
	if err != nil || len(effectsOf(c.Effects)) != 0 {
		t.Fatalf("first Connect: %v %v", c, err)
	}
	reg, err := n.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "k", CallId: "c1", Tool: "report"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := n.c.ReportProgress(ctx, &arbiterv1.ReportProgressRequest{SessionId: "k", JobId: reg.JobId, Result: args(t, map[string]any{"percent": 10})})
	if err != nil || len(effectsOf(p.Effects)) != 0 {
		t.Fatalf("progress without response scheduling: %v %v", p, err)
	}
	if gs, err := n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "k"}); err != nil || gs.Language != "en" || gs.ResponseScheduling {
		t.Fatalf("GetSession before ConfigureSession: %v %v, want language en, no response scheduling", gs, err)
	}
	if _, err := n.c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: "k", Language: "es-MX", ResponseScheduling: true}); err != nil {
		t.Fatal(err)
	}
	if gs, err := n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "k"}); err != nil || gs.Language != "es-MX" || !gs.ResponseScheduling {
		t.Fatalf("GetSession after ConfigureSession: %v %v, want es-MX with response scheduling", gs, err)
	}
	p, err = n.c.ReportProgress(ctx, &arbiterv1.ReportProgressRequest{SessionId: "k", JobId: reg.JobId, Result: args(t, map[string]any{"percent": 50})})
	if err != nil || len(p.Effects.GetResponses()) != 1 {
		t.Fatalf("progress: %v %v", p, err)
	}
	r := p.Effects.Responses[0]
	if !r.Interim || r.CallId != "c1" || r.Seq == 0 || r.Payload.AsMap()["result"].(map[string]any)["percent"] != 50.0 || r.Payload.AsMap()["status"] != "in_progress" {
		t.Fatalf("interim response: %v", r)
	}
	before, _ := n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "k"})
	if len(before.PendingCalls) != 1 {
		t.Fatalf("an interim response answered the call: %v", before.PendingCalls)
	}
	c, err = n.c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: "k", ConnectionId: "conn-1"})
	same, _ := n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "k"})
	if err != nil || len(effectsOf(c.Effects)) != 0 || same.Version != before.Version {
		t.Fatalf("Connect with the current id changed something: %v %v (version %d -> %d)", c, err, before.Version, same.Version)
	}
	c, err = n.c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: "k", ConnectionId: "conn-2"})
	if err != nil || len(c.Effects.GetSkips()) != 1 || c.Effects.Skips[0].CallId != "c1" || c.Effects.Skips[0].Reason != "connection_closed" || c.Effects.Skips[0].Seq != r.Seq+1 {
		t.Fatalf("reconnect: %v %v", c, err)
	}
	gs, _ := n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "k"})
	if gs.ConnectionId != "conn-2" || len(gs.PendingCalls) != 0 || gs.Jobs[0].State != arbiterv1.JobState_JOB_STATE_RUNNING || gs.LastSeq != c.Effects.Skips[0].Seq {
		t.Fatalf("after reconnect: %v", gs)
	}
}

// TestUnknownOutcome: OUTCOME_UNKNOWN after a commit answers the call "unknown" and
// leaves the job DECIDED (not done) with outcome UNKNOWN; the later COMMITTED makes it
// DONE with the authoritative note.
func TestUnknownOutcome(t *testing.T) {
	clk := newFakeClock()
	n := newNode(t, memory.New(nil), clk, server.Options{})
	ctx := context.Background()
	reg, err := n.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "u", CallId: "c1", Tool: "book_slot", Args: args(t, map[string]any{"slot": "friday 5pm"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "u", JobId: reg.JobId, Prepared: true}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(1500 * time.Millisecond) // the grace window's end: the commit is decided in time
	d, err := n.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "u", JobId: reg.JobId, Prepared: true})
	if err != nil || d.Decision != arbiterv1.Decision_DECISION_COMMIT {
		t.Fatalf("decide: %v %v", d, err)
	}
	cp, err := n.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "u", JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_UNKNOWN})
	if err != nil || len(cp.Effects.GetResponses()) != 1 || cp.Effects.Responses[0].Payload.AsMap()["status"] != "unknown" {
		t.Fatalf("complete unknown: %v %v", cp, err)
	}
	gs, _ := n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "u"})
	if j := gs.Jobs[0]; j.Outcome != arbiterv1.Outcome_OUTCOME_UNKNOWN || j.State != arbiterv1.JobState_JOB_STATE_DECIDED {
		t.Fatalf("job after unknown: %v", j)
	}
	cp, err = n.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "u", JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED, Result: args(t, map[string]any{"reference": "R-9"})})
	if err != nil || len(cp.Effects.GetNotes()) != 1 || len(cp.Effects.GetResponses()) != 0 {
		t.Fatalf("complete committed after unknown: %v %v", cp, err)
	}
	gs, _ = n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "u"})
	if j := gs.Jobs[0]; j.Outcome != arbiterv1.Outcome_OUTCOME_COMMITTED || j.State != arbiterv1.JobState_JOB_STATE_DONE {
		t.Fatalf("job after the real outcome: %v", j)
	}
}

// TestWatchShutdown: Server.Shutdown ends an open Watch and a waiting Decide at once
// with UNAVAILABLE (SERVER_DRAINING, RetryInfo 0) and refuses new Watches; a new
// Decide answers without waiting, other unary RPCs still work, and GracefulStop is
// held up by neither.
func TestWatchShutdown(t *testing.T) {
	n := newNode(t, memory.New(nil), newFakeClock(), server.Options{})
	ctx := context.Background()
	if _, err := n.c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: "sd"}); err != nil {
		t.Fatal(err)
	}
	w := openWatch(t, n.c, "sd", 0)
	r, err := n.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "sd", CallId: "x", Tool: "t", ToolChoice: arbiterv1.ToolChoice_TOOL_CHOICE_NONE})
	if err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, r.Effects.Responses[0].Seq) // the stream is open and serving
	book, err := n.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "sd", CallId: "b", Tool: "book_slot", Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
	if err != nil {
		t.Fatal(err)
	}
	decided := make(chan error, 1)
	go func() {
		// Preparing: it waits (the fake clock never runs its 30 s out) until Shutdown.
		_, err := n.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "sd", JobId: book.JobId, Wait: durationpb.New(30 * time.Second)})
		decided <- err
	}()
	time.Sleep(50 * time.Millisecond) // the Decide is waiting
	select {
	case err := <-decided:
		t.Fatalf("the Decide ended before Shutdown: %v", err)
	default:
	}
	n.srv.Shutdown()
	err = w.end(t)
	wantCode(t, err, codes.Unavailable, "after_seq")
	wantDetails(t, err, server.ReasonServerDraining, "", 0)
	select {
	case err := <-decided:
		wantCode(t, err, codes.Unavailable, "another replica")
		wantDetails(t, err, server.ReasonServerDraining, "", 0)
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not end the waiting Decide")
	}
	st, err := n.c.Watch(ctx, &arbiterv1.WatchRequest{SessionId: "sd", AfterSeq: 1})
	if err == nil {
		_, err = st.Recv()
	}
	wantCode(t, err, codes.Unavailable, "shutting down")
	wantDetails(t, err, server.ReasonServerDraining, "", 0)
	d, err := n.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "sd", JobId: book.JobId, Prepared: true, Wait: durationpb.New(30 * time.Second)})
	if err != nil || d.Decision != arbiterv1.Decision_DECISION_PENDING {
		t.Fatalf("Decide after Shutdown: %v %v, want PENDING at once", d, err)
	}
	if _, err := n.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "sd"}); err != nil {
		t.Fatalf("unary RPC after Shutdown: %v", err)
	}
	// A stream left open (none here) would keep GracefulStop waiting; it returns.
	openWatchAgain := make(chan struct{})
	go func() { n.gs.GracefulStop(); close(openWatchAgain) }()
	select {
	case <-openWatchAgain:
	case <-time.After(10 * time.Second):
		t.Fatal("GracefulStop did not return after Shutdown")
	}
}

// TestWatchThroughTheChain: the Watch stream goes through auth (no token:
// UNAUTHENTICATED; another tenant: NOT_FOUND) and is not cut by the per-RPC deadline;
// its access-log line carries the session id.
func TestWatchThroughTheChain(t *testing.T) {
	toks, err := server.NewTokens(map[string]string{"token-for-acme": "acme", "token-for-globex": "globex"})
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	c := arbiterv1.NewArbiterServiceClient(dial(t, serve(t, server.Options{Tokens: toks, RPCTimeout: 50 * time.Millisecond}, &logs), nil))
	a, b := bearer("token-for-acme"), bearer("token-for-globex")
	if _, err := c.ConfigureSession(a, &arbiterv1.ConfigureSessionRequest{SessionId: "chain"}); err != nil {
		t.Fatal(err)
	}
	for name, ctx := range map[string]context.Context{"no token": context.Background(), "other tenant": b} {
		st, err := c.Watch(ctx, &arbiterv1.WatchRequest{SessionId: "chain"})
		if err == nil {
			_, err = st.Recv()
		}
		want := codes.NotFound
		if name == "no token" {
			want = codes.Unauthenticated
		}
		if status.Code(err) != want {
			t.Fatalf("Watch with %s: %v, want %v", name, err, want)
		}
		reason := server.ReasonSessionNotFound
		if want == codes.Unauthenticated {
			reason = "UNAUTHENTICATED"
		}
		wantDetails(t, err, reason, "", -1)
	}
	wctx, cancel := context.WithCancel(a)
	defer cancel()
	st, err := c.Watch(wctx, &arbiterv1.WatchRequest{SessionId: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // well past the 50 ms unary deadline
	if _, err := c.RegisterCall(a, &arbiterv1.RegisterCallRequest{SessionId: "chain", CallId: "x", Tool: "t", ToolChoice: arbiterv1.ToolChoice_TOOL_CHOICE_NONE}); err != nil {
		t.Fatal(err)
	}
	m, err := st.Recv()
	if err != nil || m.GetResponse().GetCallId() != "x" || m.Seq != 1 {
		t.Fatalf("Watch after the unary deadline: %v %v", m, err)
	}
	cancel()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), `"grpc.method":"Watch"`); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no access-log line for Watch:\n%s", logs.String())
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(line, `"grpc.method":"Watch"`) && !strings.Contains(line, `"session_id":"chain"`) {
			t.Errorf("Watch log line without session_id: %s", line)
		}
	}
}
