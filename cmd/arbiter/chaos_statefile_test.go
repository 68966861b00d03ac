package main

// The chaos test of --state-file: real `arbiter serve` processes, SIGKILLed at random
// points under load, restarted on the same file; nothing an RPC answered may be lost.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// chaosPolicy books with a short grace, so a call goes from registration to commit in
// tens of milliseconds, and no deadline or abandonment fires during the test.
const chaosPolicy = `defaults:
  grace: 20ms
  max_pending: 10m
  abandon_wait: 10m
tools:
  - name: book_slot
    side_effect: true
    key:
      - arg: slot
        as: exact
`

const (
	chaosWorkers         = 16
	chaosKills           = 5
	chaosCallsPerSession = 8 // then the worker goes on in a new session: sessions stay small
)

// chaosAgent is one worker: a voice agent booking in one session after another,
// register, Decide (prepared), Complete, and the ledger of every answer it received.
type chaosAgent struct {
	worker   int
	sessions []string // every session it used, the current one last
	n        int      // calls made in the current session
	step     int      // of the current call: 0 register, 1 decide, 2 complete
	job      string

	// What the server answered, by session.
	calls     map[string]map[string]*arbiterv1.RegisterCallResponse // call id -> answer
	decisions map[string]map[string]*arbiterv1.DecideResponse       // job -> COMMIT answer
	completes map[string]map[string]*arbiterv1.CompleteResponse     // job -> answer
	answered  int                                                   // RPCs answered
}

func newChaosAgent(worker int) *chaosAgent {
	a := &chaosAgent{worker: worker, calls: map[string]map[string]*arbiterv1.RegisterCallResponse{},
		decisions: map[string]map[string]*arbiterv1.DecideResponse{}, completes: map[string]map[string]*arbiterv1.CompleteResponse{}}
	a.nextSession()
	return a
}

func (a *chaosAgent) nextSession() {
	sid := fmt.Sprintf("chaos-w%02d-s%02d", a.worker, len(a.sessions))
	a.sessions = append(a.sessions, sid)
	a.calls[sid] = map[string]*arbiterv1.RegisterCallResponse{}
	a.decisions[sid] = map[string]*arbiterv1.DecideResponse{}
	a.completes[sid] = map[string]*arbiterv1.CompleteResponse{}
	a.n, a.step = 0, 0
}

func (a *chaosAgent) sid() string { return a.sessions[len(a.sessions)-1] }

func (a *chaosAgent) callID() string { return fmt.Sprintf("call-%d", a.n) }

func chaosArgs(callID string) *structpb.Struct {
	s, _ := structpb.NewStruct(map[string]any{"slot": "slot of " + callID})
	return s
}

func chaosResult(job string) *structpb.Struct {
	s, _ := structpb.NewStruct(map[string]any{"status": "committed", "reference": "R-" + job})
	return s
}

// run makes RPCs on c until one fails (the server was killed). An RPC that failed
// is made again in the next round: whether the server stored it is for the retry to
// find out. Errors other than the kill's fail the test.
func (a *chaosAgent) run(t *testing.T, c arbiterv1.ArbiterServiceClient) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := a.once(ctx, c)
		cancel()
		if err == nil {
			continue
		}
		if code := status.Code(err); code != codes.Unavailable && code != codes.Canceled {
			t.Errorf("%s: %v", a.sid(), err)
		}
		return
	}
}

// once makes the current call's next RPC and records its answer.
func (a *chaosAgent) once(ctx context.Context, c arbiterv1.ArbiterServiceClient) error {
	sid, call := a.sid(), a.callID()
	switch a.step {
	case 0:
		r, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: sid, CallId: call, Tool: "book_slot", Args: chaosArgs(call)})
		if err != nil {
			return err
		}
		a.answered++
		if r.Disposition != arbiterv1.Disposition_DISPOSITION_EXECUTE || r.JobId == "" {
			return fmt.Errorf("RegisterCall %s: %v, want a job to execute", call, r)
		}
		a.calls[sid][call], a.job, a.step = r, r.JobId, 1
	case 1:
		d, err := c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: sid, JobId: a.job, Prepared: true, Wait: durationpb.New(5 * time.Second)})
		if err != nil {
			return err
		}
		a.answered++
		switch d.Decision {
		case arbiterv1.Decision_DECISION_PENDING: // the wait ran out: ask again
		case arbiterv1.Decision_DECISION_COMMIT:
			a.decisions[sid][a.job], a.step = d, 2
		default:
			return fmt.Errorf("Decide %s: %v, want COMMIT", a.job, d)
		}
	case 2:
		r, err := c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: sid, JobId: a.job, Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED, Result: chaosResult(a.job)})
		if err != nil {
			return err
		}
		a.answered++
		if len(r.Effects.GetResponses()) != 1 || r.Effects.Responses[0].CallId != call {
			return fmt.Errorf("Complete %s: effects %v, want the response to %s", a.job, r.Effects, call)
		}
		a.completes[sid][a.job] = r
		a.n++
		a.step = 0
		if a.n == chaosCallsPerSession {
			a.nextSession()
		}
	}
	return nil
}

// verify asks again for everything the agent was answered and counts what the
// server no longer answers the same. First, before anything could be stored anew,
// GetSession must show every job, committed where it was completed, decided COMMIT
// where Decide said so. Then a registered call must get the same disposition and job
// (and, once completed, its function response again); a decision the same decision,
// reason and decided_at; a completion the same effects. It returns how many answers
// it checked and how many were lost (each also a test error, the first five shown).
func (a *chaosAgent) verify(t *testing.T, c arbiterv1.ArbiterServiceClient) (checked, lost int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	loss := func(format string, args ...any) {
		lost++
		if lost <= 5 {
			t.Errorf("lost: "+format, args...)
		}
	}
	for _, sid := range a.sessions {
		if len(a.calls[sid]) == 0 {
			continue // never answered anything
		}
		// First what GetSession shows, before any RPC below could store anything.
		checked++
		gs, err := c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: sid})
		if err != nil {
			loss("%s: GetSession: %v", sid, err)
			continue
		}
		jobs := map[string]*arbiterv1.Job{}
		for _, j := range gs.Jobs {
			jobs[j.JobId] = j
		}
		for call, want := range a.calls[sid] {
			j := jobs[want.JobId]
			switch {
			case j == nil:
				loss("%s: GetSession lacks job %s of %s", sid, want.JobId, call)
			case a.completes[sid][want.JobId] != nil && j.Outcome != arbiterv1.Outcome_OUTCOME_COMMITTED:
				loss("%s: GetSession shows job %s %v, completed as committed", sid, j.JobId, j.Outcome)
			case a.decisions[sid][want.JobId] != nil && j.Decision != arbiterv1.Decision_DECISION_COMMIT:
				loss("%s: GetSession shows job %s %v, decided COMMIT", sid, j.JobId, j.Decision)
			}
		}
		for call, want := range a.calls[sid] {
			checked++
			r, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: sid, CallId: call, Tool: "book_slot", Args: chaosArgs(call)})
			if err != nil || r.Disposition != want.Disposition || r.JobId != want.JobId {
				loss("%s %s registered as %v %s, now %v (%v)", sid, call, want.Disposition, want.JobId, r, err)
				continue
			}
			if done := a.completes[sid][want.JobId]; done != nil {
				if len(r.Effects.GetResponses()) != 1 || !proto.Equal(r.Effects.Responses[0], done.Effects.Responses[0]) {
					loss("%s %s: response %v, now %v", sid, call, done.Effects.Responses[0], r.Effects)
				}
			}
		}
		for job, want := range a.decisions[sid] {
			checked++
			d, err := c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: sid, JobId: job, Prepared: true})
			if err != nil || d.Decision != want.Decision || d.Reason != want.Reason || !d.DecidedAt.AsTime().Equal(want.DecidedAt.AsTime()) {
				loss("%s %s decided %v %q at %v, now %v (%v)", sid, job, want.Decision, want.Reason, want.DecidedAt.AsTime(), d, err)
			}
		}
		for job, want := range a.completes[sid] {
			checked++
			r, err := c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: sid, JobId: job, Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED, Result: chaosResult(job)})
			if err != nil || !proto.Equal(r.Effects, want.Effects) {
				loss("%s %s completed with %v, now %v (%v)", sid, job, want.Effects, r, err)
			}
		}
	}
	return checked, lost
}

// TestStateFileChaos: agents book in many sessions at once on `arbiter serve
// --state-file`, which is SIGKILLed at a random moment, chaosKills times, and started
// again on the same file each time. After each restart, every answer an agent had
// received must still be what the server answers: no decision, function response,
// registered call or job lost. The kill points are random; the check is not.
func TestStateFileChaos(t *testing.T) {
	// Without the race detector: it would slow the server down several times on two
	// cores, and store/memory's tests run the same code under it.
	bin := buildArbiter(t, false)
	dir := t.TempDir()
	policy := filepath.Join(dir, "tools.yaml")
	if err := os.WriteFile(policy, []byte(chaosPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--tools", policy, "--state-file", filepath.Join(dir, "state.db")}
	agents := make([]*chaosAgent, chaosWorkers)
	for i := range agents {
		agents[i] = newChaosAgent(i)
	}
	start := time.Now()
	var checks, losses int
	for round := 0; ; round++ {
		r := startReplica(t, bin, args...)
		if round > 0 {
			c, l := verifyAll(t, r, agents)
			checks += c
			losses += l
			t.Logf("restart %d: %d answers checked, %d lost", round, c, l)
		}
		if round == chaosKills {
			break
		}
		var wg sync.WaitGroup
		for _, a := range agents {
			wg.Add(1)
			go func() { defer wg.Done(); a.run(t, r.c) }()
		}
		time.Sleep(time.Duration(200+rand.IntN(800)) * time.Millisecond)
		r.kill()
		wg.Wait()
	}
	sessions, answered := 0, 0
	for _, a := range agents {
		sessions += len(a.sessions)
		answered += a.answered
	}
	t.Logf("%d sessions, %d RPCs answered, %d SIGKILLs, %d answers checked after restarts, %d lost, in %v",
		sessions, answered, chaosKills, checks, losses, time.Since(start).Round(time.Millisecond))
	if losses != 0 {
		t.Fatalf("%d answers lost", losses)
	}
}

// verifyAll runs every agent's verify on r at once and sums the counts.
func verifyAll(t *testing.T, r *replica, agents []*chaosAgent) (checked, lost int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, l := a.verify(t, r.c)
			mu.Lock()
			checked, lost = checked+c, lost+l
			mu.Unlock()
		}()
	}
	wg.Wait()
	return checked, lost
}
