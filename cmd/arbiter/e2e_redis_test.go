package main

// End-to-end tests on real processes: the arbiter binary built once per test, real
// redis-server processes on free ports (internal/redistest), replicas that share them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/voicearbiter/arbiter/internal/redistest"
	"github.com/voicearbiter/arbiter/policyfile"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/replay"
)

const bookingPolicy = "../../testdata/tools/booking.yaml"

// buildArbiter builds the arbiter binary into a temp dir and returns its path. With
// race set it has the race detector when the tests have it; the timing-sensitive
// multi-replica replay builds without (a race binary is several times slower, and
// nine of them on two cores delay real-time decisions past the test's bound; the same
// code runs under the race detector in-process in store/redisstore and here).
func buildArbiter(t *testing.T, race bool) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "arbiter")
	args := []string{"build", "-o", bin}
	if race && raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// replica is one `arbiter serve` process.
type replica struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	log  *syncBuffer
	done chan struct{}
	conn *grpc.ClientConn
	c    arbiterv1.ArbiterServiceClient
}

var servingAddr = regexp.MustCompile(`msg="arbiter serving" addr=(\S+)`)

// startReplica starts `arbiter serve --listen 127.0.0.1:0 ARGS...`, waits for its
// "arbiter serving" log line and connects to it. It is killed when the test ends.
func startReplica(t *testing.T, bin string, args ...string) *replica {
	t.Helper()
	r := &replica{t: t, log: &syncBuffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.cmd.Stdout = r.log
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			r.log.Write([]byte(line + "\n"))
			if m := servingAddr.FindStringSubmatch(line); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
	}()
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		r.kill()
		if t.Failed() {
			t.Logf("replica %s log:\n%s", r.addr, r.log.String())
		}
	})
	select {
	case r.addr = <-addrc:
	case <-r.done:
		t.Fatalf("arbiter serve exited at start:\n%s", r.log.String())
	case <-time.After(15 * time.Second):
		t.Fatalf("arbiter serve did not log its address within 15 s:\n%s", r.log.String())
	}
	r.conn, err = grpc.NewClient(r.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.conn.Close() })
	r.c = arbiterv1.NewArbiterServiceClient(r.conn)
	return r
}

// kill sends SIGKILL and waits for the process to exit.
func (r *replica) kill() {
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.done
}

// health returns the replica's health status for the arbiter service.
func (r *replica) health() healthpb.HealthCheckResponse_ServingStatus {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	hr, err := healthpb.NewHealthClient(r.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "arbiter.v1.ArbiterService"})
	if err != nil {
		return healthpb.HealthCheckResponse_UNKNOWN
	}
	return hr.Status
}

// waitHealth waits up to 5 s for the replica's health to become want.
func (r *replica) waitHealth(want healthpb.HealthCheckResponse_ServingStatus) time.Duration {
	r.t.Helper()
	start := time.Now()
	for {
		got := r.health()
		if got == want {
			return time.Since(start)
		}
		if time.Since(start) > 5*time.Second {
			r.t.Fatalf("health %v after 5 s, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// traceOutput is what `arbiter replay` printed for one trace.
type traceOutput struct {
	lines   []replay.Line
	summary replay.Summary
}

// parseReplayOutput splits `arbiter replay` stdout into traces (each ends with its
// summary line).
func parseReplayOutput(t *testing.T, out []byte) []traceOutput {
	t.Helper()
	var runs []traceOutput
	var cur traceOutput
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"out":"summary"`) {
			if err := json.Unmarshal(sc.Bytes(), &cur.summary); err != nil {
				t.Fatal(err)
			}
			runs = append(runs, cur)
			cur = traceOutput{}
			continue
		}
		var l replay.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("output line %q: %v", sc.Text(), err)
		}
		cur.lines = append(cur.lines, l)
	}
	return runs
}

// digest is what must not differ between a replay on one in-memory process on a
// virtual clock and one on replicas in real time: everything but the times.
func digest(lines []replay.Line) map[string][]string {
	d := map[string][]string{}
	for _, l := range lines {
		// A job id carries its session's epoch, made from the session's creation time:
		// the real-time replicas and the virtual clock differ there, and only there.
		l.JobID, _, _ = strings.Cut(l.JobID, ".")
		var s string
		switch l.Out {
		case "call":
			s = fmt.Sprintf("%s %s %s", l.CallID, l.Disposition, l.JobID)
		case "decision":
			s = fmt.Sprintf("%s %s %s %q", l.CallID, l.JobID, l.Decision, l.Reason)
		case "commit", "cancel":
			s = l.JobID
		case "response":
			s = fmt.Sprintf("%s %v", l.CallID, l.Payload["status"])
		case "skip":
			s = fmt.Sprintf("%s %q", l.CallID, l.Reason)
		case "note":
			s = fmt.Sprintf("%s %s %q", l.JobID, l.Deliver, l.Text)
		default:
			s = fmt.Sprintf("%+v", l)
		}
		d[l.Out] = append(d[l.Out], s)
	}
	return d
}

// TestReplicasGiveTheSameDecisions replays every recorded trace (testdata/traces,
// booking policy) and every engine scenario on the default scenario policy
// (testdata/scenarios) through `arbiter serve` processes on one redis-server, three
// per policy, and the recorded traces again through three replicas on a three-master
// Redis Cluster; each RPC goes to the next replica in turn, all traces at once in real time
// (`arbiter replay --target`). What came out must be what the virtual-clock replay on
// one in-memory process gives: the same calls and dispositions, decisions and their
// reasons, commits and cancels, responses, skips, notes and summaries. How far each
// decision's time is from the virtual clock's is logged, not judged: real time on a
// loaded machine shifts it (timings belong in benchmarks).
func TestReplicasGiveTheSameDecisions(t *testing.T) {
	srv := redistest.Start(t)
	bin := buildArbiter(t, false)
	traces, _ := filepath.Glob("../../testdata/traces/*.jsonl")
	if len(traces) < 12 {
		t.Fatalf("found %d traces, want the 12 recorded sessions", len(traces))
	}
	var scenarios []string
	all, _ := filepath.Glob("../../testdata/scenarios/*.jsonl")
	for _, path := range all {
		events := parseTraceFile(t, path)
		if len(events) > 0 && events[0].Policy == "" {
			scenarios = append(scenarios, path)
		}
	}
	if len(scenarios) < 10 {
		t.Fatalf("found %d scenarios on the default policy", len(scenarios))
	}
	cluster := redistest.StartCluster(t, 3)
	groups := []struct {
		redisURL string
		policy   string
		paths    []string
	}{
		{srv.URL(), bookingPolicy, traces},
		{srv.URL(), "../../testdata/scenarios/policy.yaml", scenarios},
		{cluster.URL(), bookingPolicy, traces},
	}
	var wg sync.WaitGroup
	for _, g := range groups {
		var targets []string
		var reps []*replica
		for i := 0; i < 3; i++ {
			r := startReplica(t, bin, "--redis-url", g.redisURL, "--tools", g.policy, "--allow-volatile-store", "--metrics-listen", "127.0.0.1:0")
			targets = append(targets, r.addr)
			reps = append(reps, r)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			replayAndCompare(t, bin, g.policy, g.paths, targets, g.redisURL)
			logCache(t, filepath.Base(g.policy)+" on "+g.redisURL, reps)
		}()
	}
	wg.Wait()
}

var (
	metricsAddr = regexp.MustCompile(`msg="metrics serving" addr=(\S+)`)
	storeSeries = regexp.MustCompile(`(?m)^arbiter_store_requests_total\{op="(\w+)",result="(\w+)"\} (\d+)$`)
)

// logCache logs what the replicas' local caches did (--redis-cache-sessions, from
// arbiter_store_requests_total): transition reads answered from the cache
// (load_cached), reads of Redis (load: misses and read-only requests), lost
// compare-and-sets (save conflict: a stale copy, or a race) and saves. Logged, not
// judged: this test sends each RPC to the next replica in turn, the worst case for a
// cache (store/redisstore's TestTwoReplicasCache judges the steady state).
func logCache(t *testing.T, name string, reps []*replica) {
	counts := map[string]int64{}
	for _, r := range reps {
		m := metricsAddr.FindStringSubmatch(r.log.String())
		if m == nil {
			t.Errorf("replica %s logged no metrics address", r.addr)
			return
		}
		resp, err := http.Get("http://" + m[1] + "/metrics")
		if err != nil {
			t.Error(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, s := range storeSeries.FindAllStringSubmatch(string(body), -1) {
			n, _ := strconv.ParseInt(s[3], 10, 64)
			counts[s[1]+" "+s[2]] += n
		}
	}
	hits, loads := counts["load_cached ok"], counts["load ok"]+counts["load not_found"]
	t.Logf("%s, local caches of 3 replicas, RPCs round-robin: %d transition reads from the cache, %d reads of Redis, %d saves, %d lost compare-and-sets (hit rate %.1f %% of reads)",
		name, hits, loads, counts["save ok"], counts["save conflict"], 100*float64(hits)/float64(max(hits+loads, 1)))
}

// replayAndCompare runs `arbiter replay --target` for paths and compares each trace's
// output with replay.RunLocal's.
func replayAndCompare(t *testing.T, bin, policyPath string, paths, targets []string, redisURL string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"replay", "--tools", policyPath, "--target", strings.Join(targets, ",")}, paths...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); err != nil && code != 1 {
		// Exit 1 is a trace that ended with an unanswered call or a double commit:
		// compared below with what the in-memory run says.
		t.Errorf("arbiter replay --target: %v\n%s\n%s", err, stdout.String(), stderr.String())
		return
	}
	t.Logf("%d traces under %s replayed over 3 replicas on %s in %v\n%s", len(paths), filepath.Base(policyPath), redisURL, time.Since(start).Round(time.Millisecond), stderr.String())
	got := parseReplayOutput(t, stdout.Bytes())
	if len(got) != len(paths) {
		t.Errorf("%d traces in the output, want %d\n%s", len(got), len(paths), stderr.String())
		return
	}
	policy, err := policyfile.Load(policyPath)
	if err != nil {
		t.Error(err)
		return
	}
	for i, path := range paths {
		base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		name := base + " on " + redisURL
		want, err := replay.RunLocal(context.Background(), policy, parseTraceFile(t, path), replay.Options{SessionID: "mem-" + base}, nil)
		if err != nil {
			t.Errorf("%s: in-memory replay: %v", name, err)
			continue
		}
		g := got[i]
		if !sameSummary(g.summary, want.Summary) {
			t.Errorf("%s: summary %+v, in-memory %+v", name, g.summary, want.Summary)
		}
		dg, dw := digest(g.lines), digest(want.Lines)
		for _, kind := range []string{"call", "decision", "commit", "cancel", "response", "skip", "note"} {
			if strings.Join(dg[kind], "\n") != strings.Join(dw[kind], "\n") {
				t.Errorf("%s: %s lines differ\n--- replicas\n%s\n--- in-memory\n%s", name, kind, strings.Join(dg[kind], "\n"), strings.Join(dw[kind], "\n"))
			}
		}
		var gd []int64
		for _, l := range g.lines {
			if l.Out == "decision" {
				gd = append(gd, *l.TMs)
			}
		}
		var offsets []string
		for j, d := range want.Decisions {
			if j < len(gd) {
				offsets = append(offsets, fmt.Sprintf("%+d ms", gd[j]-d.TMs))
			}
		}
		t.Logf("%s: decision times on the replicas vs the virtual clock: %s", name, strings.Join(offsets, ", "))
	}
}

func parseTraceFile(t *testing.T, path string) []replay.TraceEvent {
	t.Helper()
	events, err := replay.ReadTraceFile(path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// sameSummary reports whether two summaries agree in every count and unanswered id.
func sameSummary(got, want replay.Summary) bool {
	return got.Commits == want.Commits && got.Cancels == want.Cancels && got.DoubleCommits == want.DoubleCommits &&
		got.Calls == want.Calls && got.Answered == want.Answered && got.Skipped == want.Skipped &&
		strings.Join(got.Unanswered, ",") == strings.Join(want.Unanswered, ",")
}

// agent is the test's voice agent: one session, RPCs to whichever replica it picks.
type agent struct {
	t   *testing.T
	sid string
}

func (a *agent) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

func (a *agent) speech(r *replica, e arbiterv1.SpeechEvent) error {
	ctx, cancel := a.ctx()
	defer cancel()
	_, err := r.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: a.sid, Event: e})
	return err
}

func (a *agent) transcript(r *replica, text string) error {
	ctx, cancel := a.ctx()
	defer cancel()
	_, err := r.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: a.sid, Role: arbiterv1.Role_ROLE_USER, Text: text})
	return err
}

func (a *agent) book(r *replica, callID string) (*arbiterv1.RegisterCallResponse, error) {
	ctx, cancel := a.ctx()
	defer cancel()
	args, _ := structpb.NewStruct(map[string]any{"slot": "tomorrow 3pm"})
	return r.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: a.sid, CallId: callID, Tool: "book_slot", Args: args})
}

func (a *agent) decide(r *replica, job string, wait time.Duration) (*arbiterv1.DecideResponse, error) {
	ctx, cancel := a.ctx()
	defer cancel()
	return r.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: a.sid, JobId: job, Prepared: true, Wait: durationpb.New(wait)})
}

func (a *agent) complete(r *replica, job string) (*arbiterv1.CompleteResponse, error) {
	ctx, cancel := a.ctx()
	defer cancel()
	res, _ := structpb.NewStruct(map[string]any{"status": "committed", "reference": "R-1"})
	return r.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: a.sid, JobId: job, Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED, Result: res})
}

func (a *agent) session(r *replica) *arbiterv1.GetSessionResponse {
	a.t.Helper()
	ctx, cancel := a.ctx()
	defer cancel()
	gs, err := r.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: a.sid})
	if err != nil {
		a.t.Fatalf("GetSession: %v", err)
	}
	return gs
}

// must returns a function that returns its value, failing t on a non-nil error:
// must[T](t)(f()).
func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func mustCode(t *testing.T, what string, err error, want codes.Code) {
	t.Helper()
	if status.Code(err) != want {
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
}

// finish checks the end of a chaos session: the job committed exactly once, a
// re-issued call for the same booking is a duplicate, and after close every call is
// answered or dead.
func (a *agent) finish(r, other *replica, job, callID string) {
	t := a.t
	t.Helper()
	c1 := must[*arbiterv1.CompleteResponse](t)(a.complete(r, job))
	if len(c1.Effects.GetResponses()) != 1 || c1.Effects.Responses[0].CallId != callID {
		t.Fatalf("Complete effects %v, want the response to %s", c1.Effects, callID)
	}
	// A retried Complete (say its answer was lost) returns the same, commits nothing.
	c2 := must[*arbiterv1.CompleteResponse](t)(a.complete(other, job))
	if len(c2.Effects.GetResponses()) != 1 || c2.Effects.Responses[0].CallId != callID {
		t.Fatalf("repeated Complete effects %v", c2.Effects)
	}
	dup := must[*arbiterv1.RegisterCallResponse](t)(a.book(other, callID+"-again"))
	if dup.Disposition != arbiterv1.Disposition_DISPOSITION_DUPLICATE || dup.JobId != job {
		t.Fatalf("re-issued booking: %v, want a duplicate of %s", dup, job)
	}
	gs := a.session(other)
	commits := 0
	for _, j := range gs.Jobs {
		if j.Outcome == arbiterv1.Outcome_OUTCOME_COMMITTED {
			commits++
		}
	}
	if len(gs.Jobs) != 1 || commits != 1 {
		t.Fatalf("jobs %v: want one job, committed once", gs.Jobs)
	}
	ctx, cancel := a.ctx()
	defer cancel()
	must[*arbiterv1.CloseSessionResponse](t)(r.c.CloseSession(ctx, &arbiterv1.CloseSessionRequest{SessionId: a.sid}))
	if p := a.session(r).PendingCalls; len(p) != 0 {
		t.Fatalf("calls neither answered nor dead after close: %v", p)
	}
}

// TestRedisRestartMidSession stops Redis (SIGKILL) while a session has a held job and
// a Decide long-polling, then starts it again on the same port. Meanwhile RPCs answer
// UNAVAILABLE, health is NOT_SERVING and no Decide says COMMIT; afterwards health is
// SERVING again without restarting arbiter and the session goes on from where it was
// (Redis keeps it: appendonly with fsync always) to exactly one commit.
func TestRedisRestartMidSession(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	bin := buildArbiter(t, true)
	a := startReplica(t, bin, "--redis-url", srv.URL(), "--tools", bookingPolicy, "--health-interval", "200ms")
	b := startReplica(t, bin, "--redis-url", srv.URL(), "--tools", bookingPolicy, "--health-interval", "200ms")
	a.waitHealth(healthpb.HealthCheckResponse_SERVING)
	ag := &agent{t: t, sid: "chaos-restart"}

	call := must[*arbiterv1.RegisterCallResponse](t)(ag.book(a, "call_1"))
	job := call.JobId
	// The user starts speaking after the call: the commit is held until the
	// utterance settles.
	if err := ag.speech(a, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START); err != nil {
		t.Fatal(err)
	}
	d := must[*arbiterv1.DecideResponse](t)(ag.decide(b, job, 0)) // prepare finished
	if d.Decision != arbiterv1.Decision_DECISION_PENDING {
		t.Fatalf("decision %v while the user speaks, want PENDING", d.Decision)
	}
	type result struct {
		d   *arbiterv1.DecideResponse
		err error
	}
	poll := make(chan result, 1)
	go func() { d, err := ag.decide(b, job, 20*time.Second); poll <- result{d, err} }()
	time.Sleep(300 * time.Millisecond) // the long-poll is waiting on b

	srv.Kill()
	select {
	case r := <-poll:
		if r.err == nil && r.d.Decision == arbiterv1.Decision_DECISION_COMMIT {
			t.Fatal("a Decide returned COMMIT while Redis was down")
		}
		mustCode(t, "long-polling Decide when Redis went away", r.err, codes.Unavailable)
	case <-time.After(10 * time.Second):
		t.Fatal("the long-polling Decide did not return when Redis went away")
	}
	took := a.waitHealth(healthpb.HealthCheckResponse_NOT_SERVING)
	t.Logf("health NOT_SERVING %v after the kill was seen", took)
	mustCode(t, "ReportSpeech with Redis down", ag.speech(a, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END), codes.Unavailable)
	_, err := ag.decide(b, job, 0)
	mustCode(t, "Decide with Redis down", err, codes.Unavailable)
	_, err = ag.decide(a, job, 5*time.Second)
	mustCode(t, "long-poll Decide with Redis down", err, codes.Unavailable)
	_, err = ag.book(b, "call_2")
	mustCode(t, "RegisterCall with Redis down", err, codes.Unavailable)

	srv.Restart()
	took = a.waitHealth(healthpb.HealthCheckResponse_SERVING)
	b.waitHealth(healthpb.HealthCheckResponse_SERVING)
	t.Logf("health SERVING %v after Redis came back", took)

	// The session is still there, the job still held.
	gs := ag.session(b)
	if len(gs.Jobs) != 1 || gs.Jobs[0].JobId != job || gs.Jobs[0].Decision != arbiterv1.Decision_DECISION_PENDING {
		t.Fatalf("after the restart: jobs %v, want %s pending", gs.Jobs, job)
	}
	// A long-poll on b, woken by a's writes.
	go func() { d, err := ag.decide(b, job, 20*time.Second); poll <- result{d, err} }()
	time.Sleep(100 * time.Millisecond)
	if err := ag.speech(a, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END); err != nil {
		t.Fatal(err)
	}
	if err := ag.transcript(a, "Yes, that's the one."); err != nil {
		t.Fatal(err)
	}
	var commit *arbiterv1.DecideResponse
	select {
	case r := <-poll:
		commit = must[*arbiterv1.DecideResponse](t)(r.d, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("no decision after the utterance settled")
	}
	if commit.Decision != arbiterv1.Decision_DECISION_COMMIT {
		t.Fatalf("decision %v (%s), want COMMIT", commit.Decision, commit.Reason)
	}
	again := must[*arbiterv1.DecideResponse](t)(ag.decide(a, job, 0))
	if again.Decision != commit.Decision || again.Reason != commit.Reason || !again.DecidedAt.AsTime().Equal(commit.DecidedAt.AsTime()) {
		t.Fatalf("decision on a %v, on b %v", again, commit)
	}
	ag.finish(a, b, job, "call_1")
}

// TestReplicaKilledMidDecide SIGKILLs the replica a Decide is long-polling on. The
// agent retries Decide on a second replica, the user's speech arrives on a third, the
// retry wakes with the decision, and Complete on the third commits exactly once.
func TestReplicaKilledMidDecide(t *testing.T) {
	srv := redistest.Start(t)
	bin := buildArbiter(t, true)
	var rs []*replica
	for i := 0; i < 3; i++ {
		rs = append(rs, startReplica(t, bin, "--redis-url", srv.URL(), "--tools", bookingPolicy, "--allow-volatile-store"))
	}
	a, b, c := rs[0], rs[1], rs[2]
	ag := &agent{t: t, sid: "chaos-kill"}

	job := must[*arbiterv1.RegisterCallResponse](t)(ag.book(a, "call_1")).JobId
	if err := ag.speech(a, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START); err != nil {
		t.Fatal(err)
	}
	type result struct {
		d   *arbiterv1.DecideResponse
		err error
	}
	polls := make(chan result, 2)
	prepared := time.Now() // this Decide records that prepare finished
	go func() { d, err := ag.decide(b, job, 20*time.Second); polls <- result{d, err} }()
	time.Sleep(500 * time.Millisecond) // b is long-polling
	b.kill()
	select {
	case r := <-polls:
		if r.err == nil {
			t.Fatalf("Decide on the killed replica returned %v", r.d)
		}
		mustCode(t, "Decide on the killed replica", r.err, codes.Unavailable)
	case <-time.After(10 * time.Second):
		t.Fatal("Decide on the killed replica did not fail")
	}
	// The agent retries on c; the user finishes speaking, reported to a.
	go func() { d, err := ag.decide(c, job, 20*time.Second); polls <- result{d, err} }()
	// Past the grace window (1.5 s from prepare), only the user's speech holds the
	// commit: the transcript that settles it decides, and c must hear of it at once.
	time.Sleep(time.Until(prepared.Add(2 * time.Second)))
	if err := ag.speech(a, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END); err != nil {
		t.Fatal(err)
	}
	settled := time.Now()
	if err := ag.transcript(a, "Great, thanks."); err != nil {
		t.Fatal(err)
	}
	var commit *arbiterv1.DecideResponse
	select {
	case r := <-polls:
		commit = must[*arbiterv1.DecideResponse](t)(r.d, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the retried Decide did not wake after the utterance settled")
	}
	wake := time.Since(settled)
	t.Logf("Decide long-polling on replica c returned %v after the transcript was sent to replica a (its RPC included)", wake)
	if commit.Decision != arbiterv1.Decision_DECISION_COMMIT {
		t.Fatalf("decision %v (%s), want COMMIT", commit.Decision, commit.Reason)
	}
	// A missed wake-up would have waited for the 20 s long-poll to run out and answered
	// PENDING: the COMMIT above is the check. How long the wake took is a benchmark's
	// business (bench/), so it is only logged.
	again := must[*arbiterv1.DecideResponse](t)(ag.decide(a, job, 0))
	if again.Decision != commit.Decision || again.Reason != commit.Reason || !again.DecidedAt.AsTime().Equal(commit.DecidedAt.AsTime()) {
		t.Fatalf("decision on a %v, on c %v", again, commit)
	}
	ag.finish(a, c, job, "call_1")
}
