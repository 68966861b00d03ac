package main

// End-to-end tests of --state-file on real `arbiter serve` processes (the embedded
// store on a bbolt file): a graceful restart and a SIGKILL keep the sessions, an old
// JSON state file is converted, bad files and flags stop the start.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/policyfile"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/store/memory"
)

// term sends SIGTERM and waits (at most 20 s) for a graceful exit, which must be 0.
func (r *replica) term() {
	r.t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		r.t.Fatal(err)
	}
	select {
	case <-r.done:
	case <-time.After(20 * time.Second):
		r.t.Fatalf("arbiter serve did not exit within 20 s of SIGTERM:\n%s", r.log.String())
	}
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		r.t.Fatalf("arbiter serve exited with %d after SIGTERM:\n%s", code, r.log.String())
	}
}

// sameSession reports whether two GetSession answers are equal but for the pending
// calls' ages, which grow with the time of asking.
func sameSession(a, b *arbiterv1.GetSessionResponse) bool {
	a, b = proto.Clone(a).(*arbiterv1.GetSessionResponse), proto.Clone(b).(*arbiterv1.GetSessionResponse)
	for _, s := range []*arbiterv1.GetSessionResponse{a, b} {
		for _, p := range s.PendingCalls {
			p.Age = nil
		}
	}
	return proto.Equal(a, b)
}

// TestStateFileKeepsSessionsAcrossRestart: `arbiter serve --state-file F` holds a
// session with effects, a pending side-effecting call and a Watch; it is stopped with
// SIGTERM and started again on F. GetSession answers exactly as before (same pending
// call, same version); a re-issued booking is deduplicated against the job; the Watch
// resumes after the last seq it got with nothing repeated and no gap; the job is
// decided, completed and the session closed.
func TestStateFileKeepsSessionsAcrossRestart(t *testing.T) {
	bin := buildArbiter(t, true)
	state := filepath.Join(t.TempDir(), "state.json")
	args := []string{"--tools", bookingPolicy, "--state-file", state}
	a := startReplica(t, bin, args...)
	const sid = "restart"
	unary := effectLedger{}
	add := func(e *arbiterv1.Effects) { t.Helper(); unary.add(t, e) }
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	reg := func(r *replica, req *arbiterv1.RegisterCallRequest) *arbiterv1.RegisterCallResponse {
		t.Helper()
		req.SessionId = sid
		resp := must[*arbiterv1.RegisterCallResponse](t)(r.c.RegisterCall(ctx, req))
		add(resp.Effects)
		return resp
	}
	slot, _ := structpb.NewStruct(map[string]any{"slot": "tomorrow 3pm"})

	must[*arbiterv1.ConfigureSessionResponse](t)(a.c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: sid, ResponseScheduling: true}))
	wa := startE2EWatch(t, a.c, sid, 0)
	add(must[*arbiterv1.ConnectResponse](t)(a.c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: sid, ConnectionId: "conn-1"})).Effects)
	reg(a, &arbiterv1.RegisterCallRequest{CallId: "r1", Tool: "get_weather", ToolChoice: arbiterv1.ToolChoice_TOOL_CHOICE_NONE})
	w1 := reg(a, &arbiterv1.RegisterCallRequest{CallId: "w1", Tool: "get_weather", Behavior: arbiterv1.Behavior_BEHAVIOR_NON_BLOCKING})
	pct, _ := structpb.NewStruct(map[string]any{"percent": 30})
	add(must[*arbiterv1.ReportProgressResponse](t)(a.c.ReportProgress(ctx, &arbiterv1.ReportProgressRequest{SessionId: sid, JobId: w1.JobId, Result: pct})).Effects)
	book := reg(a, &arbiterv1.RegisterCallRequest{CallId: "c1", Tool: "book_slot", Args: slot})
	if !book.SideEffect || book.JobId == "" {
		t.Fatalf("book_slot: %v, want a side-effecting job", book)
	}
	if len(unary) < 2 {
		t.Fatalf("only %d effects before the restart: %v", len(unary), unary)
	}
	wa.waitFor(t, uint64(len(unary)))
	lastSeq := wa.last()
	before := must[*arbiterv1.GetSessionResponse](t)(a.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: sid}))
	pendingC1 := false
	for _, p := range before.PendingCalls {
		pendingC1 = pendingC1 || p.CallId == "c1"
	}
	if !pendingC1 {
		t.Fatalf("c1 not pending before the restart: %v", before.PendingCalls)
	}

	a.term()
	if err := wa.end(t); status.Code(err) != codes.Unavailable {
		t.Fatalf("Watch on the stopped server ended with %v, want UNAVAILABLE", err)
	}
	b := startReplica(t, bin, args...)
	if !strings.Contains(b.log.String(), `msg="sessions restored"`) || !strings.Contains(b.log.String(), "sessions=1") {
		t.Fatalf("the restart did not log one restored session:\n%s", b.log.String())
	}

	after := must[*arbiterv1.GetSessionResponse](t)(b.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: sid}))
	if !sameSession(before, after) {
		t.Fatalf("GetSession after the restart differs\nbefore %v\nafter  %v", before, after)
	}
	if after.Version != before.Version || after.Version == 0 {
		t.Fatalf("version %d after the restart, want %d", after.Version, before.Version)
	}

	wb := startE2EWatch(t, b.c, sid, lastSeq)
	// The same request again (its answer was lost): the same answer. And the same
	// booking under a new call id: a duplicate of the job.
	again := reg(b, &arbiterv1.RegisterCallRequest{CallId: "c1", Tool: "book_slot", Args: slot})
	if again.JobId != book.JobId || again.Disposition != book.Disposition {
		t.Fatalf("c1 re-issued after the restart: %v, want job %s %v", again, book.JobId, book.Disposition)
	}
	dup := reg(b, &arbiterv1.RegisterCallRequest{CallId: "c1-again", Tool: "book_slot", Args: slot})
	if dup.Disposition != arbiterv1.Disposition_DISPOSITION_DUPLICATE || dup.JobId != book.JobId {
		t.Fatalf("the same booking after the restart: %v, want a duplicate of %s", dup, book.JobId)
	}
	d := must[*arbiterv1.DecideResponse](t)(b.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: sid, JobId: book.JobId, Prepared: true, Wait: durationpb.New(20 * time.Second)}))
	if d.Decision != arbiterv1.Decision_DECISION_COMMIT {
		t.Fatalf("decision %v (%s) after the restart, want COMMIT", d.Decision, d.Reason)
	}
	res, _ := structpb.NewStruct(map[string]any{"status": "committed", "reference": "R-1"})
	done := must[*arbiterv1.CompleteResponse](t)(b.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: sid, JobId: book.JobId, Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED, Result: res}))
	add(done.Effects)
	answered := false
	for _, r := range done.Effects.GetResponses() {
		answered = answered || r.CallId == "c1"
	}
	if !answered {
		t.Fatalf("Complete effects %v, want the response to c1", done.Effects)
	}
	temp, _ := structpb.NewStruct(map[string]any{"temp_c": 19})
	add(must[*arbiterv1.CompleteResponse](t)(b.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: sid, JobId: w1.JobId, Outcome: arbiterv1.Outcome_OUTCOME_RESULT, Result: temp})).Effects)
	add(must[*arbiterv1.CloseSessionResponse](t)(b.c.CloseSession(ctx, &arbiterv1.CloseSessionRequest{SessionId: sid})).Effects)
	if err := wb.end(t); err != nil {
		t.Fatalf("resumed Watch ended with %v, want OK at close", err)
	}
	gs := must[*arbiterv1.GetSessionResponse](t)(b.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: sid}))
	if len(gs.PendingCalls) != 0 || len(gs.Jobs) != 2 {
		t.Fatalf("at the end: pending %v, jobs %v; want none pending, two jobs", gs.PendingCalls, gs.Jobs)
	}

	// Joined, the stream before the stop and the resumed one are exactly the effects
	// the unary RPCs handed out: nothing twice, no gap.
	want := unary.ordered(t)
	if len(wb.seqs) == 0 || wb.seqs[0] != lastSeq+1 {
		t.Fatalf("resumed Watch started at %v, want seq %d", wb.seqs, lastSeq+1)
	}
	got := append(append([]string(nil), wa.got...), wb.got...)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("streams before and after the restart differ from the unary RPCs\n--- watch\n%s\n--- unary\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b.term()
	t.Logf("%d effects before the restart, %d after the resume; version %d kept", len(wa.got), len(wb.got), after.Version)
}

// TestStateFileSurvivesSIGKILL: a SIGKILL right after RegisterCall answered loses
// nothing (the call was on disk before the answer), and the session goes on to one
// commit. TestStateFileChaos does this many times under load.
func TestStateFileSurvivesSIGKILL(t *testing.T) {
	bin := buildArbiter(t, true)
	state := filepath.Join(t.TempDir(), "state.db")
	args := []string{"--tools", bookingPolicy, "--state-file", state}
	a := startReplica(t, bin, args...)
	ag := &agent{t: t, sid: "crash"}
	call := must[*arbiterv1.RegisterCallResponse](t)(ag.book(a, "call_1"))
	before := ag.session(a)
	a.kill()

	b := startReplica(t, bin, args...)
	if after := ag.session(b); !sameSession(before, after) {
		t.Fatalf("GetSession after the SIGKILL differs\nbefore %v\nafter  %v", before, after)
	}
	again := must[*arbiterv1.RegisterCallResponse](t)(ag.book(b, "call_1"))
	if again.JobId != call.JobId || again.Disposition != call.Disposition {
		t.Fatalf("call_1 re-issued after the SIGKILL: %v, want job %s %v", again, call.JobId, call.Disposition)
	}
	d := must[*arbiterv1.DecideResponse](t)(ag.decide(b, call.JobId, 20*time.Second))
	if d.Decision != arbiterv1.Decision_DECISION_COMMIT {
		t.Fatalf("decision %v (%s), want COMMIT", d.Decision, d.Reason)
	}
	ag.finish(b, b, call.JobId, "call_1")
}

// TestStateFileConvertsSnapshot: a JSON state file of an earlier version at
// --state-file is converted to the database at start (the snapshot kept as .bak), and
// its session answers as before; --state-interval still parses, with a warning that
// it is ignored.
func TestStateFileConvertsSnapshot(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	policy, err := policyfile.Load(bookingPolicy)
	if err != nil {
		t.Fatal(err)
	}
	old := memory.New(nil)
	defer old.Close()
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: old, Clock: arbiter.SystemClock{}}
	key := arbiter.SessionKey{ID: "old"}
	out, _, err := svc.Apply(context.Background(), key, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	var snap bytes.Buffer
	if _, err := old.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, snap.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	p := startServe(t, "--tools", bookingPolicy, "--state-file", state, "--state-interval", "5s")
	for _, want := range []string{
		`msg="--state-interval is deprecated and ignored: --state-file is written at every change"`,
		`msg="state file converted from a JSON snapshot to a database" state_file=` + state + " sessions=1",
		`msg="sessions restored" state_file=` + state + " sessions=1",
	} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, p.stderr.String())
		}
	}
	if b, _ := os.ReadFile(state + ".bak"); !bytes.Equal(b, snap.Bytes()) {
		t.Errorf("%s.bak is not the snapshot", state)
	}
	c := arbiterv1.NewArbiterServiceClient(p.conn)
	ctx := context.Background()
	args, _ := structpb.NewStruct(map[string]any{"slot": "tomorrow 3pm"})
	again := must[*arbiterv1.RegisterCallResponse](t)(c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: key.ID, CallId: "c1", Tool: "book_slot", Args: args}))
	if again.JobId != out.Call.JobID || again.Disposition != arbiterv1.Disposition_DISPOSITION_EXECUTE {
		t.Fatalf("c1 after the conversion: %v, want job %s EXECUTE", again, out.Call.JobID)
	}
	p.drain(t, 15*time.Second)
}

// TestStateFileErrors: --state-file with --redis-url, a corrupt JSON state file, a
// file that is neither a database nor a state file, an empty file (an empty store used
// to start on it silently), and an unwritable path each stop
// serve at start with exit 1 and a message naming the flag or the file; the corrupt
// file is left as it was.
func TestStateFileErrors(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	os.WriteFile(corrupt, []byte(`{"format":"arbiter-memory-store/v1","sessions":[{"key":{"id":"x"},`), 0o600)
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, bytes.Repeat([]byte("garbage!"), 1024), 0o600)
	empty := filepath.Join(dir, "empty.db") // a write that never reached the disk
	os.WriteFile(empty, nil, 0o600)
	cases := []struct {
		args []string
		code int // 2: flags that do not go together (a usage error); 1: the file
		want []string
	}{
		{[]string{"--state-file", filepath.Join(dir, "s.json"), "--redis-url", "redis://127.0.0.1:1"}, 2, []string{"--state-file", "--redis-url"}},
		{[]string{"--state-file", garbage}, 1, []string{"--state-file", garbage, "neither a session database nor a JSON session snapshot"}},
		{[]string{"--state-file", corrupt}, 1, []string{"--state-file", corrupt, "not a session snapshot"}},
		{[]string{"--state-file", empty}, 1, []string{"--state-file", empty, "the file is empty"}},
		{[]string{"--state-file", filepath.Join(dir, "missing", "s.json")}, 1, []string{"--state-file", filepath.Join(dir, "missing", "s.json")}},
	}
	for _, tc := range cases {
		code, _, errOut := runCLI(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, code, tc.code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr does not mention %q:\n%s", tc.args, w, errOut)
			}
		}
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("the empty state file was changed: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(corrupt); !strings.HasSuffix(string(b), `{"key":{"id":"x"},`) {
		t.Errorf("the corrupt state file was changed: %q", b)
	}
}
