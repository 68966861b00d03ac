package arbiter

import (
	"flag"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// The property tests play random sessions through the engine: the model and the user
// act at random, and an agent runs every executed job like a real one would (prepare,
// Decide, commit or cancel as decided, sometimes fail). After every step the outcomes
// handed out so far must be consistent; at the end every call id must have one.

// A failing property prints its seed; it does not write fail files into the source
// tree (pass -rapid.nofailfile=false to get them).
func init() { _ = flag.Set("rapid.nofailfile", "true") }

var (
	propCallIDs = []string{"c1", "c2", "c3", "c4", "c5", "c6", ""} // "" mints an id
	propTools   = []string{"book_slot", "book_slot", "book_slot", "book_slot", "get_weather", "send_sms"}
	propSlots   = []string{"tomorrow 3pm", "tomorrow at 3pm", "3:00 p.m. tomorrow", "tomorrow 4pm", "friday 10am"}
	propBehav   = []Behavior{BehaviorUnspecified, Blocking, NonBlocking}
	propSaid    = []string{
		"Actually, stop. Don't book it.", "No wait, stop.", "Cancel that.",
		"What's the weather like there?", "OK, book it after all", "Sounds good.", "Hmm.",
		"No.", "Yes, go ahead.", "I'm not sure.",
	}
)

// sim is one random session: the engine, the session, the agent's view of its jobs
// and everything the invariants remember.
type sim struct {
	t   *rapid.T
	e   *Engine
	s   *Session
	now int // ms after t0

	// The agent.
	agent map[string]*agentJob
	tasks []agentTask
	seq   int

	// What the invariants remember.
	emitted    map[string]emittedOutcome // call id -> first response or skip handed out
	outcomes   map[string]string         // call id -> first Call.Outcome in the session (JSON)
	decided    map[string]DecisionResult // job id -> its decision
	answers    map[string]Decision       // job id -> what the arbiter answered: COMMIT or CANCEL
	rogue      map[string]bool           // jobs a rogue Complete committed after their commit was withdrawn
	events     []string                  // what happened, for the failure message
	stepCount  int
	seen       map[string]int   // what the session went through (coverage of the generator)
	abandoned  map[string]bool  // jobs seen abandoned
	utts       map[int]*uttSeen // every user utterance, as the session recorded it
	triggers   map[string]int   // job id -> its triggering utterance by the spec (0: none)
	jobStep    map[string]int   // job id -> the step that created it
	decideStep map[string]int   // job id -> the step that decided it

	// strictOnce: an outcome may be handed out again only by an idempotent repeat
	// (RegisterCall of a known id, Complete of a completed job); otherwise an identical
	// copy is tolerated.
	strictOnce bool
	repeat     bool // the current step is an idempotent repeat

	// aged: the agent reports the events it observes with random ages (ObservedAt):
	// late ones, ones placed before commits already handed out (a client bug, a replica
	// whose clock runs behind), and now and then none.
	aged bool

	// The extended model (ext): the model also opens and answers runs, the agent
	// reports unknown outcomes and resolves them (or never), reconnects, reports
	// progress, and forgets to send things at random.
	ext       bool
	dropped   bool        // the agent dropped every task it had left (deadline property)
	lc        *logChecker // the log is the outputs' new effects, in order
	runStates map[string]RunState
	conn      int // connections made
}

// uttSeen is one user utterance: when it started and ended, and when the session first
// held it settled (final transcript and activity ended) and first heard a stop in it.
type uttSeen struct {
	start, end, stop            time.Time
	step, settledStep, stopStep int    // the steps that first showed it, settled, with a stop
	classified                  string // the text last read for a stop
}

type emittedOutcome struct {
	kind string // "response" or "skip"
	body string // payload JSON, or skip reason
	at   int
}

type agentJob struct {
	id         string
	sideEffect bool
	failPrep   bool // the backend's prepare fails
	failCommit bool // the backend's commit fails
	prepared   bool
	pollAt     int  // when its long-poll next wakes (ms)
	scheduled  bool // a Complete is scheduled
	completed  bool

	// ext: what the agent fails to send, and unknown outcomes.
	forgetPrep     bool    // never reports prepare (or a read-only result)
	forgetComplete bool    // never reports the outcome of its decision
	unknown        bool    // reports a commit's outcome as unknown first
	resolveTo      Outcome // then the real outcome (Committed or Failed), or never ("")
}

type agentTask struct {
	at, seq int
	job     string
	do      string // "prepared", "poll" or "complete"
	outcome Outcome
}

func newSim(t *rapid.T, p *Policy) *sim {
	return &sim{
		t: t, e: &Engine{Policy: p}, s: NewSession(SessionKey{ID: "prop"}, t0),
		agent: map[string]*agentJob{}, emitted: map[string]emittedOutcome{},
		outcomes: map[string]string{}, decided: map[string]DecisionResult{}, answers: map[string]Decision{}, rogue: map[string]bool{}, seen: map[string]int{},
		abandoned: map[string]bool{}, utts: map[int]*uttSeen{}, triggers: map[string]int{},
		jobStep: map[string]int{}, decideStep: map[string]int{},
		lc: newLogChecker(), runStates: map[string]RunState{},
	}
}

func (m *sim) fatalf(format string, args ...any) {
	m.t.Helper()
	tail := m.events
	if len(tail) > 60 {
		tail = tail[len(tail)-60:]
	}
	m.t.Fatalf("%s\nevents (last %d):\n  %s", fmt.Sprintf(format, args...), len(tail), strings.Join(tail, "\n  "))
}

func describeEvent(e Event) string {
	switch e := e.(type) {
	case RegisterCall:
		return fmt.Sprintf("RegisterCall{%s %s %v %s none=%v}", e.CallID, e.Tool, e.Args, e.Behavior, e.ToolChoiceNone)
	case Speech:
		return string(e.Kind)
	case Transcript:
		return fmt.Sprintf("Transcript{%q interim=%v}", e.Text, e.Interim)
	default:
		return fmt.Sprintf("%T%+v", e, e)
	}
}

// step applies e at the sim's time, checks the invariants, and lets the agent react.
func (m *sim) step(e Event) (Output, error) {
	m.t.Helper()
	m.stepCount++
	// An idempotent repeat: a Complete of a job already completed, or (below) a
	// RegisterCall of an id already registered. Only these may hand an outcome out again.
	m.repeat = false
	if rc, ok := e.(RegisterCall); ok {
		// The model re-sends an id with its own function: a call id names one call
		// (another function under a known id is refused, tested elsewhere).
		if c := m.s.Call(rc.CallID); rc.CallID != "" && c != nil && c.Tool != rc.Tool {
			rc.Tool = c.Tool
			e = rc
		}
	}
	if c, ok := e.(Complete); ok {
		if j := m.s.Job(c.JobID); j != nil && j.Outcome != NotCompleted {
			m.repeat = true
		}
	}
	if o, ok := e.(observation); ok && !unaged(e) {
		observed, _ := o.observedAt()
		for _, j := range m.s.Jobs {
			if !j.AnsweredAt.IsZero() && j.DecidedAt.After(observed) && j.Outcome == NotCompleted {
				m.seen["late event after an answered commit"]++
				break
			}
		}
	}
	out, err := m.e.Step(m.s, ms(m.now), e)
	if out.Call != nil && out.Call.Repeat {
		m.repeat = true
	}
	line := fmt.Sprintf("t=%d %s", m.now, describeEvent(e))
	if o, ok := e.(observation); ok {
		if obs, _ := o.observedAt(); !obs.IsZero() {
			line += fmt.Sprintf(" (observed %d)", msOf(obs))
		}
	}
	if err != nil {
		line += " -> error: " + err.Error()
	}
	if out.Call != nil {
		line += fmt.Sprintf(" -> %s %s job=%s repeat=%v", out.Call.CallID, out.Call.Disposition, out.Call.JobID, out.Call.Repeat)
	}
	for _, d := range out.Decisions {
		line += fmt.Sprintf(" [%s %s at %d]", d.JobID, d.Decision, msOf(d.DecidedAt))
	}
	for _, id := range out.Revoked {
		line += fmt.Sprintf(" [%s withdrawn]", id)
	}
	if d := out.Decision; d != nil {
		line += fmt.Sprintf(" -> %s", orPending(d.Decision))
	}
	for _, r := range out.Effects.Responses {
		line += fmt.Sprintf(" [response %s %v]", r.CallID, r.Payload["status"])
	}
	for _, s := range out.Effects.Skips {
		line += fmt.Sprintf(" [skip %s %s]", s.CallID, s.Reason)
	}
	m.events = append(m.events, line)
	m.cover(out, err)
	m.checkStep(out)
	m.react(out)
	return out, err
}

// cover counts what a step did, to show the generator reaches the interesting states.
func (m *sim) cover(out Output, err error) {
	if err != nil {
		m.seen["error "+KindOf(err).String()]++
	}
	if c := out.Call; c != nil {
		key := "call " + string(c.Disposition)
		if c.Repeat {
			key += " repeat"
		}
		m.seen[key]++
	}
	for _, d := range out.Decisions {
		cause := ""
		if j := m.s.Job(d.JobID); j != nil {
			cause = string(j.Cause)
		}
		m.seen["decision "+string(d.Decision)+" "+cause]++
	}
	for _, s := range out.Effects.Skips {
		m.seen["skip "+string(s.Reason)]++
	}
	for _, n := range out.Effects.Notes {
		m.seen["note "+string(n.Deliver)]++
	}
	for _, j := range m.s.Jobs {
		if j.Abandoned && j.Decision == Undecided && !m.abandoned[j.ID] {
			m.abandoned[j.ID] = true
			m.seen["abandoned job"]++
		}
		if (j.AbandonLifted || j.Cause == CauseAbandoned) && !m.abandoned[j.ID+" expired"] {
			m.abandoned[j.ID+" expired"] = true
			m.seen["abandon wait ran out"]++
		}
	}
}

// must applies an event that cannot fail.
func (m *sim) must(e Event) Output {
	m.t.Helper()
	out, err := m.step(e)
	if err != nil {
		m.fatalf("t=%d %s: unexpected error %v", m.now, describeEvent(e), err)
	}
	return out
}

// checkStep checks the invariants after one step.
// checkLoopGuard: a side-effecting call never executes as a new job while an earlier
// job of its business key committed or was cancelled and the user has not spoken since
// that job began (issue 13: a model in a loop, whatever the dedupe window).
func (m *sim) checkLoopGuard(out Output) {
	c := out.Call
	if c == nil || c.Disposition != Execute || !c.SideEffect || c.Repeat {
		return
	}
	// And no side-effecting job is made from a call missing a required key argument.
	if j := m.s.Job(c.JobID); j != nil {
		for _, k := range m.e.Policy.lookup(j.Tool).tool.Key {
			if !k.Optional && absentValue(j.Args[k.Arg]) {
				m.fatalf("job %s executes with its key argument %s missing (%v)", j.ID, k.Arg, j.Args[k.Arg])
			}
		}
	}
	for _, j := range m.s.Jobs {
		if j.ID == c.JobID || j.Key != c.BusinessKey || (j.Outcome != Committed && j.Outcome != Cancelled) {
			continue
		}
		spoke := false
		for _, u := range m.utts {
			spoke = spoke || !u.start.Before(j.CreatedAt)
		}
		if !spoke && !m.e.Policy.lookup(j.Tool).tool.DedupeWindowOnly {
			m.fatalf("call %s executed as job %s, repeating %s job %s with no user speech since it began", c.CallID, c.JobID, j.Outcome, j.ID)
		}
	}
}

// checkHoldBound: no hold outlasts max_hold after the commit came due: a prepared,
// undecided, not abandoned job is never found past its grace window plus max_hold
// (issue 13: a lost end of voice activity).
func (m *sim) checkHoldBound() {
	for _, j := range m.s.Jobs {
		if !j.SideEffect || j.Decision != Undecided || j.Abandoned {
			continue
		}
		tp := m.e.Policy.lookup(j.Tool)
		if j.QuestionOpen {
			// Issue 25: the question an unclear reply raised holds it, up to max_hold
			// after the ask, the model's last output and the user's last words since,
			// except while the model speaks (asking it).
			bound := j.QuestionAt
			if m.s.ModelSaid.At.After(bound) {
				bound = m.s.ModelSaid.At
			}
			for _, u := range m.s.Utterances {
				if u.ID > j.QuestionBy && u.Start.After(bound) {
					bound = u.Start
				}
				if u.ID > j.QuestionBy && u.End.After(bound) {
					bound = u.End
				}
			}
			if bound = bound.Add(tp.timings.MaxHold); !m.s.ModelSpeaking && m.s.Now.After(bound) {
				m.fatalf("job %s still asked about at %d, past max_hold (%d)", j.ID, msOf(m.s.Now), msOf(bound))
			}
			continue
		}
		if j.PreparedAt.IsZero() {
			continue
		}
		if bound := j.PreparedAt.Add(tp.timings.Grace + tp.timings.MaxHold); m.s.Now.After(bound) {
			m.fatalf("job %s still held at %d, past its grace window and max_hold (%d)", j.ID, msOf(m.s.Now), msOf(bound))
		}
	}
}

func (m *sim) checkStep(out Output) {
	m.t.Helper()
	// Every session the engine makes holds together (what a store checks at load).
	if err := m.s.Check(); err != nil {
		m.fatalf("the session fails its own invariants: %v", err)
	}
	m.checkLoopGuard(out)
	m.checkHoldBound()
	// At most one outcome per call id across every output: a later copy (an idempotent
	// repeat) must be identical, and no id gets both a response and a skip.
	see := func(id, kind, body string) {
		first, ok := m.emitted[id]
		if !ok {
			m.emitted[id] = emittedOutcome{kind, body, m.now}
			return
		}
		if first.kind != kind || first.body != body {
			m.fatalf("call %s: %s %s at t=%d, but it already had %s %s at t=%d", id, kind, body, m.now, first.kind, first.body, first.at)
		}
		if m.strictOnce && !m.repeat {
			m.fatalf("call %s: %s %s handed out again at t=%d (first at t=%d) by a step that is no idempotent repeat", id, kind, body, m.now, first.at)
		}
	}
	for _, r := range out.Effects.Responses {
		body, err := jsonOf(r.Payload)
		if err != nil {
			m.fatalf("response for %s does not encode: %v", r.CallID, err)
		}
		c := m.s.Call(r.CallID)
		if r.Interim {
			// A non-final response: only on a live NON_BLOCKING call, only when the
			// provider takes them, and it answers nothing.
			if c == nil || c.Outcome != nil || c.Behavior != NonBlocking || !m.s.ResponseScheduling || r.Payload["status"] != "in_progress" {
				m.fatalf("interim response %v for %s (call %+v, scheduling %v)", r.Payload, r.CallID, c, m.s.ResponseScheduling)
			}
			m.seen["interim"]++
			continue
		}
		see(r.CallID, "response", body)
		if c == nil || c.Outcome == nil || c.Outcome.Dead {
			m.fatalf("response for %s, whose recorded outcome is %+v", r.CallID, c)
		}
		// The model is told "committed" only for a job decided commit and completed so;
		// a timeout says nothing was executed only when no commit started; a job
		// completed committed is otherwise answered committed, or "unknown" by a
		// deadline or an unknown outcome that came first (a repeat returns that
		// recorded answer; a deadline may fire in the step that completes the job).
		if j := m.s.Job(c.JobID); j != nil && j.SideEffect {
			status := r.Payload["status"]
			switch {
			case status == "committed" && (j.Outcome != Committed || j.Decision != DecisionCommit),
				status == "timeout" && j.Decision == DecisionCommit,
				j.Outcome == Committed && status != "committed" && status != "unknown",
				status == "unknown" && j.Decision != DecisionCommit:
				m.fatalf("response %v for %s of job %s (decision %q, outcome %q)", r.Payload, r.CallID, j.ID, j.Decision, j.Outcome)
			}
		}
	}
	for _, s := range out.Effects.Skips {
		see(s.CallID, "skip", string(s.Reason))
		if c := m.s.Call(s.CallID); c == nil || c.Outcome == nil || !c.Outcome.Dead {
			m.fatalf("skip for %s, whose recorded outcome is %+v", s.CallID, c)
		}
	}
	// Remember the user's utterances (the session keeps only the recent ones).
	for _, u := range m.s.Utterances {
		seen := m.utts[u.ID]
		if seen == nil {
			seen = &uttSeen{start: u.Start, step: m.stepCount}
			m.utts[u.ID] = seen
		}
		if seen.end.IsZero() && !u.End.IsZero() {
			seen.end = u.End
		}
		if seen.settledStep == 0 && u.settled() {
			seen.settledStep = m.stepCount
		}
		// A stop by its words alone is a stop for every job it bears on; a refusal
		// ("No.") is one only for a job whose question it answers (issue 25), which
		// checkHolds checks through the question's state.
		if seen.stopStep == 0 && u.Final && !u.Echo && seen.classified != u.Text {
			seen.classified = u.Text
			if in, _ := speech.Classify(u.Text, m.e.Policy.Phrases(m.s.Language)); in != speech.IntentStop {
				continue
			}
			seen.stop, seen.stopStep = m.s.Now, m.stepCount
		}
	}
	// A new job's triggering utterance, by the spec: the latest one, if it was still
	// going on when the call came or ended at most trigger_lookback before it.
	for _, j := range m.s.Jobs {
		if _, ok := m.triggers[j.ID]; ok {
			continue
		}
		m.triggers[j.ID] = 0
		m.jobStep[j.ID] = m.stepCount
		latestID := 0
		for id := range m.utts {
			latestID = max(latestID, id)
		}
		if u := m.utts[latestID]; u != nil {
			lookback := m.e.Policy.lookup(j.Tool).timings.TriggerLookback
			if u.end.IsZero() || !u.end.Before(j.CreatedAt.Add(-lookback)) {
				m.triggers[j.ID] = latestID
			}
		}
	}
	// A call whose job is completed has its outcome: a repeat within the dedupe window
	// gets the job's result at once.
	for _, c := range m.s.Calls {
		if j := m.s.Job(c.JobID); j != nil && j.Outcome != NotCompleted && c.Outcome == nil {
			m.fatalf("call %s of completed job %s (%s) has no outcome", c.ID, j.ID, j.Outcome)
		}
		if c.Disposition == Reject && (c.Outcome == nil || c.Outcome.Dead) {
			m.fatalf("rejected call %s not answered: %+v", c.ID, c.Outcome)
		}
	}
	// A call's recorded outcome, once set, never changes.
	for _, c := range m.s.Calls {
		prev, ok := m.outcomes[c.ID]
		if c.Outcome == nil {
			if ok {
				m.fatalf("call %s lost its outcome %s", c.ID, prev)
			}
			continue
		}
		now, _ := jsonOf(c.Outcome)
		if !ok {
			m.outcomes[c.ID] = now
		} else if now != prev {
			m.fatalf("call %s outcome changed from %s to %s", c.ID, prev, now)
		}
	}
	// A job's decision is made once and never changes, except a commit no Decide has
	// handed out, which an event observed before it withdraws (Output.Revoked); the job
	// may then be decided anew.
	revoked := map[string]bool{}
	for _, id := range out.Revoked {
		revoked[id] = true
		m.seen["commit withdrawn"]++
		if m.answers[id] == DecisionCommit {
			m.fatalf("job %s was answered COMMIT, then its commit was withdrawn", id)
		}
	}
	for _, d := range out.Decisions {
		if prev, ok := m.decided[d.JobID]; ok && !revoked[d.JobID] {
			m.fatalf("job %s decided %s at t=%d after %s at t=%d", d.JobID, d.Decision, msOf(d.DecidedAt), prev.Decision, msOf(prev.DecidedAt))
		}
		if d.Decision != DecisionCommit && d.Decision != DecisionCancel {
			m.fatalf("job %s: decision %q", d.JobID, d.Decision)
		}
		m.decided[d.JobID] = d
		m.decideStep[d.JobID] = m.stepCount
	}
	for id := range revoked {
		if j := m.s.Job(id); j != nil && j.Decision == Undecided {
			delete(m.decided, id) // withdrawn, not decided again within the step
		}
	}
	// No job is answered both COMMIT and CANCEL: what a Decide answers and the jobs an
	// RPC reports cancelled (cancelled_job_ids) tell one story per job.
	answer := func(id string, d Decision, how string) {
		if prev, ok := m.answers[id]; ok && prev != d {
			m.fatalf("job %s answered %s (%s) after %s", id, d, how, prev)
		}
		m.answers[id] = d
	}
	if d := out.Decision; d != nil && d.Decision != Undecided {
		answer(d.JobID, d.Decision, "Decide")
	}
	for _, id := range out.Cancelled {
		answer(id, DecisionCancel, "cancelled_job_ids")
	}
	for _, j := range m.s.Jobs {
		prev, ok := m.decided[j.ID]
		switch {
		case j.Decision == Undecided && ok:
			m.fatalf("job %s lost its decision %s", j.ID, prev.Decision)
		case j.Decision != Undecided && !ok:
			m.fatalf("job %s has decision %s that no output reported", j.ID, j.Decision)
		case ok && (j.Decision != prev.Decision || !j.DecidedAt.Equal(prev.DecidedAt)):
			m.fatalf("job %s decision changed from %s at %d to %s at %d", j.ID, prev.Decision, msOf(prev.DecidedAt), j.Decision, msOf(j.DecidedAt))
		}
		if !j.SideEffect && j.Decision != Undecided {
			m.fatalf("read-only job %s has decision %s", j.ID, j.Decision)
		}
		if j.Decision == DecisionCommit && j.PreparedAt.IsZero() {
			m.fatalf("job %s decided commit before prepare finished", j.ID)
		}
		if j.Outcome == Committed && j.Decision != DecisionCommit {
			m.fatalf("job %s completed committed with decision %q", j.ID, j.Decision)
		}
		if j.Outcome == Cancelled && j.Decision != DecisionCancel {
			m.fatalf("job %s completed cancelled with decision %q", j.ID, j.Decision)
		}
		if j.Outcome == Unknown && j.Decision != DecisionCommit {
			m.fatalf("job %s has an unknown outcome with decision %q", j.ID, j.Decision)
		}
	}
	// The log is exactly the new effects of the outputs, numbered without gaps; a
	// repeat hands out the very effect with its seq.
	if msg := m.lc.check(m.s, out); msg != "" {
		m.fatalf("log: %s", msg)
	}
	m.checkRuns(out)
}

// checkRuns: a run goes from opened to one ending and stays there; only a confirmed
// run has a job, and every job of a run is its confirmed run's.
func (m *sim) checkRuns(out Output) {
	m.t.Helper()
	for _, u := range out.Effects.Runs {
		m.seen["run "+string(u.State)]++
	}
	for _, r := range m.s.Runs {
		prev, ok := m.runStates[r.ID]
		switch {
		case !ok && r.State != RunOpened:
			found := false
			for _, u := range out.Effects.Runs {
				found = found || (u.RunID == r.ID && u.State == RunOpened)
			}
			if !found {
				m.fatalf("run %s appeared as %s", r.ID, r.State)
			}
		case ok && prev != RunOpened && prev != r.State:
			m.fatalf("run %s went from %s to %s", r.ID, prev, r.State)
		}
		m.runStates[r.ID] = r.State
		if r.State != RunConfirmed && r.JobID != "" {
			m.fatalf("run %s is %s but has job %s", r.ID, r.State, r.JobID)
		}
		if r.State == RunConfirmed && m.s.Job(r.JobID) == nil {
			m.fatalf("confirmed run %s has no job (%q)", r.ID, r.JobID)
		}
	}
	for _, j := range m.s.Jobs {
		if j.RunID == "" {
			continue
		}
		if r := m.s.Run(j.RunID); r == nil || r.State != RunConfirmed || r.JobID != j.ID {
			m.fatalf("job %s was created for run %s: %+v", j.ID, j.RunID, r)
		}
	}
	for _, c := range m.s.Calls {
		if c.RunID != "" && c.Disposition == Execute {
			if r := m.s.Run(c.RunID); r == nil || r.State != RunConfirmed || r.JobID != c.JobID {
				m.fatalf("call %s executes job %s for run %+v", c.ID, c.JobID, r)
			}
		}
	}
}

// react is the agent: it runs what RegisterCall said to execute and acts on decisions.
func (m *sim) react(out Output) {
	if c := out.Call; c != nil && c.Disposition == Execute && !c.Repeat {
		if m.agent[c.JobID] != nil {
			m.fatalf("job %s executed twice", c.JobID)
		}
		j := &agentJob{id: c.JobID, sideEffect: c.SideEffect}
		m.agent[c.JobID] = j
		if m.ext {
			j.forgetPrep = rapid.IntRange(0, 7).Draw(m.t, "forgetPrep") == 0
			j.forgetComplete = rapid.IntRange(0, 7).Draw(m.t, "forgetComplete") == 0
			j.unknown = rapid.IntRange(0, 2).Draw(m.t, "unknownOutcome") == 0
			j.resolveTo = rapid.SampledFrom([]Outcome{Committed, Committed, Failed, ""}).Draw(m.t, "resolveTo")
		}
		if c.SideEffect {
			j.failPrep = rapid.IntRange(0, 9).Draw(m.t, "failPrep") == 0
			j.failCommit = rapid.IntRange(0, 7).Draw(m.t, "failCommit") == 0
			if !j.forgetPrep {
				m.schedule(rapid.IntRange(0, 6000).Draw(m.t, "prepareMs"), j.id, "prepared", "")
			}
		} else {
			o := Result
			if rapid.IntRange(0, 9).Draw(m.t, "readFails") == 0 {
				o = Failed
			}
			j.scheduled = true
			if !j.forgetPrep {
				m.schedule(rapid.IntRange(0, 3000).Draw(m.t, "resultMs"), j.id, "complete", o)
			}
		}
	}
	var ds []DecisionResult
	if out.Decision != nil && out.Decision.Decision != Undecided {
		ds = append(ds, *out.Decision) // what this step's Decide answered
	}
	for _, d := range out.Decisions {
		// A commit another step decided reaches the agent through its Decide
		// long-poll, parked since the prepare: it wakes now and hands it out (its step
		// acts on the answer). A cancel is acted on at once.
		j := m.agent[d.JobID]
		switch {
		case out.Decision != nil && out.Decision.JobID == d.JobID:
		case d.Decision == DecisionCommit && j != nil && j.prepared && !j.scheduled && !j.completed && m.aged:
			// Aged: the wake-up takes a while, and events may land first.
			m.schedule(rapid.IntRange(0, 400).Draw(m.t, "wakeMs"), j.id, "poll", "")
		case d.Decision == DecisionCommit && j != nil && j.prepared && !j.scheduled && !j.completed:
			m.must(Decide{JobID: j.id, Prepared: true, Live: true})
		default:
			ds = append(ds, d)
		}
	}
	for _, d := range ds {
		j := m.agent[d.JobID]
		if j == nil || j.scheduled || j.completed {
			continue
		}
		// A cancel is acted on at once; a commit only once prepare finished (it cannot
		// be decided before), and only as its Decide hands it out.
		o := Cancelled
		if d.Decision == DecisionCommit {
			if !j.prepared || !m.answered(d.JobID) {
				continue
			}
			o = Committed
			if j.failCommit {
				o = Failed
			} else if j.unknown {
				o = Unknown // the backend timed out: the commit's outcome is unknown
			}
		}
		j.scheduled = true
		if j.forgetComplete {
			continue // the agent never reports it
		}
		completeMs := 2000
		if m.aged {
			completeMs = 6000 // commits in flight longer: more events land meanwhile
		}
		m.schedule(rapid.IntRange(0, completeMs).Draw(m.t, "completeMs"), j.id, "complete", o)
	}
	m.wake()
}

// wake is the Service's long-poll: a parked Decide wakes whenever the session is
// stored and at its next timer. After a step, each job the agent waits on gets a poll
// at the session's next timer, unless one is due sooner.
func (m *sim) wake() {
	due, ok := m.e.NextTimer(m.s)
	if !ok {
		return
	}
	at := max(msOf(due), m.now)
	for _, sj := range m.s.Jobs {
		j := m.agent[sj.ID]
		if j == nil || !j.prepared || j.scheduled || j.completed || (j.pollAt > m.now && j.pollAt <= at) {
			continue
		}
		j.pollAt = at
		m.schedule(at-m.now, j.id, "poll", "")
	}
}

// observed is the observation time of an event the agent reports now: none, unless
// the sim is aged; then mostly a random age up to 4 s (placing it before decisions
// already made, answered or not), sometimes none.
func (m *sim) observed() time.Time {
	if !m.aged || rapid.IntRange(0, 3).Draw(m.t, "noAge") == 0 {
		return time.Time{}
	}
	return ms(max(0, m.now-rapid.IntRange(0, 4000).Draw(m.t, "ageMs")))
}

// answered reports whether a Decide handed out the job's COMMIT.
func (m *sim) answered(job string) bool {
	j := m.s.Job(job)
	return j != nil && j.Decision == DecisionCommit && !j.AnsweredAt.IsZero()
}

func (m *sim) schedule(delay int, job, do string, o Outcome) {
	m.seq++
	m.tasks = append(m.tasks, agentTask{at: m.now + delay, seq: m.seq, job: job, do: do, outcome: o})
}

// runAgent runs the agent's tasks due by time until, each at its own time.
func (m *sim) runAgent(until int) {
	for {
		sort.Slice(m.tasks, func(a, b int) bool {
			if m.tasks[a].at != m.tasks[b].at {
				return m.tasks[a].at < m.tasks[b].at
			}
			return m.tasks[a].seq < m.tasks[b].seq
		})
		if len(m.tasks) == 0 || m.tasks[0].at > until {
			break
		}
		task := m.tasks[0]
		m.tasks = m.tasks[1:]
		if task.at > m.now {
			m.now = task.at
		}
		m.runTask(task)
	}
	if until > m.now {
		m.now = until
	}
}

func (m *sim) runTask(task agentTask) {
	j := m.agent[task.job]
	if task.do == "resolve" {
		m.resolve(j, task.outcome)
		return
	}
	if j.completed {
		return
	}
	switch task.do {
	case "prepared":
		if j.failPrep {
			j.scheduled = true
			m.complete(j, Failed)
			return
		}
		j.prepared = true
		m.must(Decide{JobID: j.id, Prepared: true, Live: true})
		// Like the Service's long-poll: wake again when the next timer is due.
		if due, ok := m.e.NextTimer(m.s); ok && !j.scheduled {
			m.schedule(max(0, msOf(due)-m.now), j.id, "poll", "")
		}
	case "poll":
		if !j.scheduled {
			m.must(Decide{JobID: j.id, Prepared: true, Live: true})
			if due, ok := m.e.NextTimer(m.s); ok && !j.scheduled && msOf(due) > m.now {
				m.schedule(msOf(due)-m.now, j.id, "poll", "")
			}
		}
	case "complete":
		m.complete(j, task.outcome)
		// Sometimes the agent reports the same outcome again (a retry).
		if rapid.IntRange(0, 5).Draw(m.t, "recomplete") == 0 {
			m.complete(j, task.outcome)
		}
		// The real outcome of an unknown commit comes later, or never.
		if task.outcome == Unknown && j.resolveTo != "" {
			m.schedule(rapid.IntRange(0, 30000).Draw(m.t, "resolveMs"), j.id, "resolve", j.resolveTo)
		}
	}
}

// resolve reports the real outcome of a commit first reported unknown.
func (m *sim) resolve(j *agentJob, o Outcome) {
	m.t.Helper()
	job := m.s.Job(j.id)
	prev := job.Outcome
	result, errText := map[string]any{"reference": "R-" + j.id}, "backend failed"
	// A retry must say what the first Complete said: one that got there first with the
	// same outcome but another result or error makes this one a conflict.
	sameAsFirst := sameResult(job.Result, result) && job.Error == errText
	_, err := m.step(Complete{JobID: j.id, Outcome: o, Result: result, Error: errText})
	switch {
	case prev == Unknown:
		if err != nil {
			m.fatalf("resolving unknown job %s as %s: %v", j.id, o, err)
		}
		if job.Outcome != o || !job.WasUnknown {
			m.fatalf("job %s resolved as %s: %+v", j.id, o, job)
		}
		m.seen["resolved "+string(o)]++
		// Sometimes the agent reports the real outcome again (a retry).
		if rapid.IntRange(0, 3).Draw(m.t, "reresolve") == 0 {
			if _, err := m.step(Complete{JobID: j.id, Outcome: o, Result: map[string]any{"reference": "R-" + j.id}, Error: "backend failed"}); err != nil {
				m.fatalf("retried resolution of job %s: %v", j.id, err)
			}
		}
	case prev == o && sameAsFirst:
		if err != nil {
			m.fatalf("Complete(%s) again for job %s: %v", o, j.id, err)
		}
	case prev == o:
		if KindOf(err) != FailedPrecondition {
			m.fatalf("Complete(%s) of job %s already %s with another result or error: %v, want failed precondition", o, j.id, prev, err)
		}
	default: // a rogue Complete got there first with another outcome
		if KindOf(err) != FailedPrecondition {
			m.fatalf("Complete(%s) of job %s already %s: %v, want failed precondition", o, j.id, prev, err)
		}
	}
}

// complete reports a job's outcome and checks the answer.
func (m *sim) complete(j *agentJob, o Outcome) {
	m.t.Helper()
	job := m.s.Job(j.id)
	prev := job.Outcome
	result, errText := map[string]any{"reference": "R-" + j.id}, "backend failed"
	// A retry must say what the first Complete said: one that got there first with the
	// same outcome but another result or error makes this one a conflict.
	sameAsFirst := sameResult(job.Result, result) && job.Error == errText
	_, err := m.step(Complete{JobID: j.id, Outcome: o, Result: result, Error: errText})
	switch {
	case prev == Unknown && (o == Committed || o == Failed):
		if err != nil {
			m.fatalf("Complete(%s) of unknown job %s: %v", o, j.id, err)
		}
	case prev != NotCompleted && (prev != o || !sameAsFirst):
		if KindOf(err) != FailedPrecondition {
			m.fatalf("Complete(%s) of job %s already %s (result %v, error %q): %v, want failed precondition", o, j.id, prev, job.Result, job.Error, err)
		}
	case err != nil:
		m.fatalf("Complete(%s) of job %s (decision %q): %v", o, j.id, job.Decision, err)
	default:
		j.completed = true
		if (o == Committed || o == Unknown) && job.Decision != DecisionCommit {
			m.fatalf("Complete(%s) of job %s succeeded with decision %q", o, j.id, job.Decision)
		}
		if o == Unknown {
			m.seen["unknown"]++
		}
	}
}

// rogueComplete is an agent bug: it reports an outcome for a random job regardless of
// the decision. The engine must refuse what does not fit the decision.
func (m *sim) rogueComplete() {
	if len(m.s.Jobs) == 0 {
		return
	}
	job := rapid.SampledFrom(m.s.Jobs).Draw(m.t, "rogueJob")
	o := rapid.SampledFrom([]Outcome{Committed, Cancelled}).Draw(m.t, "rogueOutcome")
	prevOutcome, prevDecision := job.Outcome, job.Decision
	_, err := m.step(Complete{JobID: job.ID, Outcome: o, Result: map[string]any{"reference": "rogue"}})
	if err == nil {
		if a := m.agent[job.ID]; a != nil {
			a.completed, a.scheduled = true, true
		}
		if prevDecision == Undecided && job.CommitsRevoked > 0 {
			// A commit no Decide handed out, withdrawn, then reported done anyway: a
			// fact the arbiter records (committedAfterRevoke), not its decision.
			m.rogue[job.ID] = true
			m.seen["committed after a withdrawal"]++
		}
		want := map[Outcome]Decision{Committed: DecisionCommit, Cancelled: DecisionCancel}[o]
		if !job.SideEffect || job.Decision != want || job.Outcome != o {
			m.fatalf("rogue Complete(%s) of job %s accepted: side effect %v, decision %q, outcome %q (was %q)", o, job.ID, job.SideEffect, job.Decision, job.Outcome, prevOutcome)
		}
		return
	}
	if k := KindOf(err); k != FailedPrecondition {
		m.fatalf("rogue Complete(%s) of job %s: %v (kind %v), want failed precondition", o, job.ID, err, k)
	}
}

// randomEvent draws one event of the model, the user or the server.
func (m *sim) randomEvent() {
	switch k := rapid.IntRange(0, 15).Draw(m.t, "kind"); k {
	case 0, 1, 2:
		tool := rapid.SampledFrom(propTools).Draw(m.t, "tool")
		args := map[string]any{"slot": rapid.SampledFrom(propSlots).Draw(m.t, "slot")}
		raw := ""
		// Now and then the arguments are malformed (issue 13): the key argument
		// missing, blank, NaN or a placeholder, or text the agent could not parse.
		switch rapid.IntRange(0, 11).Draw(m.t, "malformed") {
		case 0:
			delete(args, "slot")
		case 1:
			args["slot"] = " "
		case 2:
			args["slot"] = math.NaN()
		case 3:
			args["slot"] = "undefined"
		case 4:
			raw = `{"slot": "tomorrow`
		}
		if tool != "book_slot" {
			args = map[string]any{"city": "Paris"}
		}
		out := m.register(RegisterCall{
			ObservedAt:     m.observed(),
			CallID:         rapid.SampledFrom(propCallIDs).Draw(m.t, "callID"),
			Tool:           tool,
			Args:           args,
			RawArgs:        raw,
			Behavior:       rapid.SampledFrom(propBehav).Draw(m.t, "behavior"),
			ToolChoiceNone: rapid.IntRange(0, 7).Draw(m.t, "none") == 0,
		})
		if raw != "" && out.Call != nil && !out.Call.Repeat && out.Call.Disposition != Reject {
			m.fatalf("a call whose arguments could not be read was %s, want reject", out.Call.Disposition)
		}
	case 3, 4:
		m.must(Speech{Kind: UserActivityStart, ObservedAt: m.observed()})
	case 5, 6:
		m.must(Speech{Kind: UserActivityEnd, ObservedAt: m.observed()})
	case 7, 8:
		m.must(Transcript{
			Text:       rapid.SampledFrom(propSaid).Draw(m.t, "said"),
			Interim:    rapid.IntRange(0, 4).Draw(m.t, "interim") == 0,
			ObservedAt: m.observed(),
		})
	case 9:
		m.must(Speech{Kind: Interrupted, ObservedAt: m.observed()})
	case 10:
		ids := []string{rapid.SampledFrom(propCallIDs[:6]).Draw(m.t, "withdrawn")}
		if n := len(m.s.Calls); n > 0 {
			ids = append(ids, m.s.Calls[rapid.IntRange(0, n-1).Draw(m.t, "withdrawnIdx")].ID)
		}
		m.must(ToolCallCancellation{CallIDs: ids, ObservedAt: m.observed()})
	case 11:
		m.must(Speech{Kind: ModelOutputStart, ObservedAt: m.observed()})
	case 12:
		m.must(Speech{Kind: ModelTurnComplete})
	case 13:
		m.must(Transcript{Model: true, Text: "Sure, booking that now."})
	case 14:
		m.must(Tick{})
	case 15:
		m.rogueComplete()
	}
}

// finish closes the session, lets the agent finish its backend work, and checks the
// end-of-session invariants.
func (m *sim) finish() {
	m.t.Helper()
	m.must(Close{})
	// Every registered call id has an outcome, recorded and handed out.
	for _, c := range m.s.Calls {
		if c.Outcome == nil {
			m.fatalf("call %s has no outcome at close", c.ID)
		}
		if _, ok := m.emitted[c.ID]; !ok {
			m.fatalf("call %s (outcome %+v) was never answered or skipped", c.ID, c.Outcome)
		}
	}
	// The agent finishes what the backend was doing; then nothing is left undecided.
	m.runAgent(m.now + 60000)
	for _, j := range m.s.Jobs {
		if j.SideEffect && j.Decision == Undecided {
			m.fatalf("job %s undecided after close", j.ID)
		}
		if a := m.agent[j.ID]; a != nil && !a.completed && !a.forgetPrep && !a.forgetComplete && !m.dropped {
			m.fatalf("job %s (decision %q) never completed by the agent", j.ID, j.Decision)
		}
	}
	// No two commits (committed outcomes, an unknown one counting as possibly
	// committed) for one business key within its dedupe window.
	for i, a := range m.s.Jobs {
		if !a.SideEffect || (a.Outcome != Committed && a.Outcome != Unknown) {
			continue
		}
		window := m.e.Policy.lookup(a.Tool).timings.DedupeWindow
		for _, b := range m.s.Jobs[i+1:] {
			if b.Key != a.Key || (b.Outcome != Committed && b.Outcome != Unknown) {
				continue
			}
			if a.Outcome == Unknown || b.CreatedAt.Sub(a.CompletedAt) < window {
				m.fatalf("jobs %s (%s, completed %d) and %s (%s, created %d) share key %s and both (possibly) committed",
					a.ID, a.Outcome, msOf(a.CompletedAt), b.ID, b.Outcome, msOf(b.CreatedAt), a.Key)
			}
		}
	}
	m.checkHolds()
	// No two jobs with one business key both decided commit within the dedupe window.
	window := m.e.Policy.Defaults.DedupeWindow
	for i, a := range m.s.Jobs {
		for _, b := range m.s.Jobs[i+1:] {
			if !a.SideEffect || a.Key != b.Key || a.Decision != DecisionCommit || b.Decision != DecisionCommit {
				continue
			}
			if a.Outcome == Failed && !a.CompletedAt.After(b.CreatedAt) {
				continue // a failed job absorbs no repeat
			}
			if a.CompletedAt.IsZero() || a.CompletedAt.After(b.CreatedAt) || b.CreatedAt.Sub(a.CompletedAt) < window {
				m.fatalf("jobs %s and %s share key %s and both committed (a completed %v, b created %d ms in)",
					a.ID, b.ID, a.Key, a.CompletedAt, msOf(b.CreatedAt))
			}
		}
	}
}

// checkHolds checks every commit decision against what the user said: a job commits
// only after its grace window, never once a stop was heard in its triggering utterance
// or in an utterance that began while it was pending, and never while such an
// utterance is unsettled, unless its transcript timed out, or the hold reached
// max_hold, under on_transcript_timeout: commit. "Before" and "while" go by the order of the steps:
// several events may share one millisecond.
func (m *sim) checkHolds() {
	m.t.Helper()
	for _, j := range m.s.Jobs {
		if j.Decision != DecisionCommit || m.rogue[j.ID] {
			continue
		}
		tp := m.e.Policy.lookup(j.Tool)
		d, ds := j.DecidedAt, m.decideStep[j.ID]
		graceEnd := j.PreparedAt.Add(tp.timings.Grace)
		if d.Before(graceEnd) {
			m.fatalf("job %s committed at %d, before its grace window ended at %d", j.ID, msOf(d), msOf(graceEnd))
		}
		// Issue 25: a job whose unclear reply raised a question commits only once the
		// user said yes, or, under on_transcript_timeout: commit, when it went unanswered.
		if !j.QuestionAt.IsZero() && j.AnsweredBy == 0 && tp.timings.OnTranscriptTimeout != Commit {
			m.fatalf("job %s committed at %d: asked at %d and never answered", j.ID, msOf(d), msOf(j.QuestionAt))
		}
		for id, u := range m.utts {
			trigger := id == m.triggers[j.ID]
			if !trigger && (u.step <= m.jobStep[j.ID] || u.step >= ds) {
				continue // neither the trigger nor begun while the job was pending
			}
			if u.stopStep != 0 && u.stopStep < ds {
				m.fatalf("job %s committed at %d after a stop was heard at %d in utterance %d (trigger %v)", j.ID, msOf(d), msOf(u.stop), id, trigger)
			}
			if trigger || (u.settledStep != 0 && u.settledStep <= ds) {
				continue
			}
			// Under on_transcript_timeout: commit, a hold ends at its transcript timeout,
			// and any hold at max_hold after the commit came due.
			timedOut := tp.timings.OnTranscriptTimeout == Commit &&
				((!u.end.IsZero() && !d.Before(latest(graceEnd, u.end).Add(tp.timings.TranscriptTimeout))) ||
					!d.Before(graceEnd.Add(tp.timings.MaxHold)))
			if !timedOut {
				m.fatalf("job %s committed at %d while utterance %d (started %d, ended %d) was unsettled", j.ID, msOf(d), id, msOf(u.start), msOf(u.end))
			}
		}
	}
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func randomPolicy(t *rapid.T) *Policy {
	return bookingPolicy(
		onTranscriptTimeout(rapid.SampledFrom([]OnTimeout{Cancel, Commit}).Draw(t, "onTranscriptTimeout")),
		onAbandon(rapid.SampledFrom([]OnTimeout{Cancel, Commit}).Draw(t, "onAbandon")),
		func(p *Policy) {
			p.Tools["book_slot"].Behavior = rapid.SampledFrom([]Behavior{NonBlocking, Blocking}).Draw(t, "bookSlotBehavior")
		},
	)
}

// coverage adds up what the runs of one property went through and, at the end,
// fails when the generator never reached a state the invariants are about.
type coverage struct {
	runs, steps int
	seen        map[string]int
}

func (c *coverage) add(m *sim) {
	c.runs++
	c.steps += m.stepCount
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	for k, v := range m.seen {
		c.seen[k] += v
	}
}

// checkCovering runs the property body with rapid.Check (every run judges the
// invariants) and, while a key of keys has not been reached, up to 3 more rounds of
// it: a path seen a few times per 100 runs (an unknown outcome later resolved as
// failed, about 2 per round) is missed by one round now and then, and a coverage
// requirement that fails by chance is a flaky test, not a finding. Then it requires
// every key.
func checkCovering(t *testing.T, keys []string, body func(rt *rapid.T, cov *coverage)) {
	t.Helper()
	var cov coverage
	for round := 0; round < 4 && !t.Failed(); round++ {
		rapid.Check(t, func(rt *rapid.T) { body(rt, &cov) })
		if len(cov.missing(keys)) == 0 {
			break
		}
	}
	cov.require(t, keys...)
}

// missing lists the keys no run has reached.
func (c *coverage) missing(keys []string) []string {
	var out []string
	for _, k := range keys {
		if c.seen[k] == 0 {
			out = append(out, k)
		}
	}
	return out
}

func (c *coverage) require(t *testing.T, keys ...string) {
	t.Helper()
	if t.Failed() || c.runs == 0 {
		return
	}
	var all []string
	for k, v := range c.seen {
		all = append(all, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(all)
	t.Logf("%d runs, %d steps: %s", c.runs, c.steps, strings.Join(all, ", "))
	if c.steps < 30*c.runs {
		t.Errorf("%d steps in %d runs: too few events per run to matter", c.steps, c.runs)
	}
	for _, k := range c.missing(keys) {
		t.Errorf("no run reached %q", k)
	}
}

func TestPropertyOneOutcomePerCall(t *testing.T) {
	checkCovering(t, []string{"call execute", "call duplicate", "call reject", "call execute repeat",
		"decision commit ", "decision cancel stop", "decision cancel withdrawn", "decision cancel session_closed",
		"skip withdrawn", "skip abandoned", "error failed precondition", "call id reused with other args"}, func(rt *rapid.T, cov *coverage) {
		m := newSim(rt, randomPolicy(rt))
		n := rapid.IntRange(30, 90).Draw(rt, "events")
		for i := 0; i < n; i++ {
			m.runAgent(m.now + rapid.IntRange(0, 2500).Draw(rt, "dtMs"))
			m.randomEvent()
		}
		m.finish()
		cov.add(m)
	})
}

// The same sessions, the user mostly speaking while calls are pending: more stops,
// holds and abandoned BLOCKING calls.
func TestPropertyTalkativeUser(t *testing.T) {
	checkCovering(t, []string{"decision commit ", "decision cancel stop", "decision cancel transcript_timeout",
		"abandoned job", "abandon wait ran out", "call duplicate"}, func(rt *rapid.T, cov *coverage) {
		m := newSim(rt, randomPolicy(rt))
		said := propSaid
		if rapid.Bool().Draw(rt, "calmUser") {
			said = propSaid[3:] // never says stop: holds end in commits, timeouts, abandons
		}
		n := rapid.IntRange(30, 90).Draw(rt, "events")
		for i := 0; i < n; i++ {
			m.runAgent(m.now + rapid.IntRange(0, 1500).Draw(rt, "dtMs"))
			if rapid.Bool().Draw(rt, "utterance") {
				m.must(Speech{Kind: UserActivityStart})
				if rapid.Bool().Draw(rt, "barge") {
					m.must(Speech{Kind: Interrupted})
				}
				m.runAgent(m.now + rapid.IntRange(0, 2500).Draw(rt, "talkMs"))
				m.must(Speech{Kind: UserActivityEnd})
				if rapid.IntRange(0, 4).Draw(rt, "noTranscript") > 0 {
					m.runAgent(m.now + rapid.IntRange(0, 1500).Draw(rt, "transcriptMs"))
					m.must(Transcript{Text: rapid.SampledFrom(said).Draw(rt, "said")})
				}
				continue
			}
			m.randomEvent()
		}
		m.finish()
		cov.add(m)
	})
}

// TestPropertyAnsweredCommitStands: issue 26. The agent reports the events it
// observes with random ages, so they arrive late, out of the order they happened, and
// placed before decisions already made (a client whose ages are wrong, an agent that
// acts on a COMMIT with an earlier event undelivered, a replica whose clock runs
// behind another's), or with no age at all; it acts on a COMMIT only as its Decide
// hands it out. Every step's invariants hold, and: no job is answered both COMMIT and
// CANCEL (a Decide's answers, the jobs a step reports cancelled), a COMMIT handed out
// is never withdrawn, no commit follows a cancel, and no two jobs of one business key
// commit (finish). Before issue 26 a late event withdrew an answered COMMIT.
func TestPropertyAnsweredCommitStands(t *testing.T) {
	checkCovering(t, []string{"decision commit ", "decision cancel stop", "commit withdrawn", "late event after an answered commit", "call duplicate"}, func(rt *rapid.T, cov *coverage) {
		m := newSim(rt, randomPolicy(rt))
		m.aged = true
		said := propSaid
		if rapid.Bool().Draw(rt, "calmUser") {
			said = propSaid[3:] // never says stop: more commits for late events to follow
		}
		n := rapid.IntRange(30, 90).Draw(rt, "events")
		for i := 0; i < n; i++ {
			m.runAgent(m.now + rapid.IntRange(0, 1500).Draw(rt, "dtMs"))
			switch rapid.IntRange(0, 5).Draw(rt, "agedKind") {
			case 0: // a booking (keys repeat: re-issues)
				m.register(RegisterCall{CallID: rapid.SampledFrom(propCallIDs).Draw(rt, "callID"), Tool: "book_slot",
					Args: map[string]any{"slot": rapid.SampledFrom(propSlots).Draw(rt, "slot")}, ObservedAt: m.observed()})
			case 1, 2: // the user speaks: a stop or something else, each event with its own age
				m.must(Speech{Kind: UserActivityStart, ObservedAt: m.observed()})
				m.runAgent(m.now + rapid.IntRange(0, 1500).Draw(rt, "talkMs"))
				m.must(Transcript{Text: rapid.SampledFrom(said).Draw(rt, "said"), ObservedAt: m.observed()})
				m.must(Speech{Kind: UserActivityEnd, ObservedAt: m.observed()})
			default:
				m.randomEvent()
			}
		}
		m.finish()
		cov.add(m)
	})
}

// Each outcome is handed out once: only an idempotent repeat (the same call id
// registered again, the same Complete again) may hand it out a second time. The two
// properties above tolerate an identical copy from any step so that they keep checking
// everything else; this one does not.
func TestPropertyOutcomeHandedOutOnce(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newSim(rt, randomPolicy(rt))
		m.strictOnce = true
		n := rapid.IntRange(30, 90).Draw(rt, "events")
		for i := 0; i < n; i++ {
			m.runAgent(m.now + rapid.IntRange(0, 2500).Draw(rt, "dtMs"))
			m.randomEvent()
		}
		m.finish()
	})
}

// ---- the extended model: runs, unknown outcomes, reconnects, progress --------------

// extPolicy is randomPolicy plus the run tools of runPolicy, with random deadlines and
// run timeouts short enough to fire within a session.
func extPolicy(t *rapid.T) *Policy {
	return runPolicy(
		onTranscriptTimeout(rapid.SampledFrom([]OnTimeout{Cancel, Commit}).Draw(t, "onTranscriptTimeout")),
		onAbandon(rapid.SampledFrom([]OnTimeout{Cancel, Commit}).Draw(t, "onAbandon")),
		func(p *Policy) {
			p.Tools["book_slot"].Behavior = rapid.SampledFrom([]Behavior{NonBlocking, Blocking}).Draw(t, "bookSlotBehavior")
			p.Defaults.MaxPending = time.Duration(rapid.IntRange(5, 60).Draw(t, "maxPendingS")) * time.Second
			p.Defaults.RunTimeout = time.Duration(rapid.IntRange(3, 40).Draw(t, "runTimeoutS")) * time.Second
			p.Tools["order_photo"].MaxAsks = rapid.IntRange(0, 3).Draw(t, "maxAsks")
			p.Tools["order_photo"].Timings.MaxPending = time.Duration(rapid.IntRange(0, 90).Draw(t, "photoMaxPendingS")) * time.Second
		},
	)
}

// extCallID is mostly a minted id (so confirmations execute), sometimes a known one
// (an idempotent repeat, possibly of another tool).
func (m *sim) extCallID() string {
	if rapid.IntRange(0, 2).Draw(m.t, "extKnownID") == 0 {
		return rapid.SampledFrom(propCallIDs).Draw(m.t, "callID")
	}
	return ""
}

// register steps a RegisterCall the model makes. Its call id may be one the session
// holds: the same arguments (or none) are a retry, answered from the record; other
// arguments must be refused (FailedPrecondition naming call_id) and change nothing,
// and the output is then empty.
func (m *sim) register(ev RegisterCall) Output {
	m.t.Helper()
	c := m.s.call(ev.CallID)
	if ev.CallID != "" && c != nil {
		ev.Tool = c.Tool // as step does: a known id keeps its function
	}
	if ev.CallID == "" || c == nil || c.ArgsDigest == "" || (len(ev.Args) == 0 && ev.RawArgs == "") || c.ArgsDigest == argsDigest(ev) {
		return m.must(ev)
	}
	version := m.s.Version
	if _, err := m.step(ev); KindOf(err) != FailedPrecondition || FieldOf(err) != "call_id" {
		m.fatalf("%v: call id %s registered with other arguments: %v, want failed precondition naming call_id", ev, ev.CallID, err)
	}
	if m.s.Version != version {
		m.fatalf("%v: refused, but the session changed", ev)
	}
	m.seen["call id reused with other args"]++
	return Output{}
}

// randomExtEvent draws one event of the extended model.
func (m *sim) randomExtEvent() {
	switch rapid.IntRange(0, 11).Draw(m.t, "extKind") {
	case 0, 1, 2: // the model calls a tool that runs: opens or joins a run
		tool := rapid.SampledFrom([]string{"order_photo", "order_photo", "print_photos", "send_card"}).Draw(m.t, "runTool")
		args := map[string]any{"photo": rapid.SampledFrom([]string{"beach", "dog"}).Draw(m.t, "photo")}
		if tool == "send_card" {
			args = map[string]any{"to": rapid.SampledFrom([]string{"Ann", "Bob"}).Draw(m.t, "to")}
		}
		m.register(RegisterCall{CallID: m.extCallID(), Tool: tool, Args: args, Behavior: rapid.SampledFrom(propBehav).Draw(m.t, "behavior")})
	case 3, 4, 5, 6: // the model answers a run: yes, no, unclear, with or without run_id
		tool := rapid.SampledFrom([]string{"confirm_action", "confirm_action", "answer_question"}).Draw(m.t, "confirmTool")
		args := map[string]any{}
		switch rapid.IntRange(0, 4).Draw(m.t, "runIDChoice") {
		case 0, 1: // none: the one open run, if there is exactly one
		case 2: // the latest open run
			for i := len(m.s.Runs) - 1; i >= 0; i-- {
				if m.s.Runs[i].State == RunOpened {
					args["run_id"] = m.s.Runs[i].ID
					break
				}
			}
		case 3: // any run, maybe one that ended
			if n := len(m.s.Runs); n > 0 {
				args["run_id"] = m.s.Runs[rapid.IntRange(0, n-1).Draw(m.t, "runIdx")].ID
			}
		case 4:
			args["run_id"] = "run-999"
		}
		if v := rapid.SampledFrom([]any{true, true, false, "yes", "no", "maybe", nil}).Draw(m.t, "confirmed"); v != nil {
			args["confirmed"] = v
		}
		for _, a := range []string{"answer", "size", "copies", "finish", "message"} {
			if rapid.IntRange(0, 3).Draw(m.t, "has_"+a) == 0 {
				args[a] = rapid.SampledFrom([]any{"A4", 2.0, "matte", "", "Happy birthday"}).Draw(m.t, a)
			}
		}
		m.register(RegisterCall{CallID: m.extCallID(), Tool: tool, Args: args, Behavior: rapid.SampledFrom(propBehav).Draw(m.t, "behavior")})
	case 7: // a reconnect (or the same connection again)
		if rapid.IntRange(0, 2).Draw(m.t, "sameConn") > 0 {
			m.conn++
		}
		m.must(Connect{ConnectionID: fmt.Sprintf("conn-%d", m.conn)})
	case 8: // progress of a random job
		if len(m.s.Jobs) == 0 {
			return
		}
		j := rapid.SampledFrom(m.s.Jobs).Draw(m.t, "progressJob")
		done := j.Outcome != NotCompleted
		_, err := m.step(Progress{JobID: j.ID, Result: map[string]any{"percent": 50.0}})
		if (err != nil) != (done || m.s.Closed) || (err != nil && KindOf(err) != FailedPrecondition) {
			m.fatalf("Progress of job %s (outcome %q): %v", j.ID, j.Outcome, err)
		}
	case 9:
		m.must(Configure{ResponseScheduling: rapid.Bool().Draw(m.t, "scheduling")})
	case 10:
		m.must(Tick{})
	case 11: // a silence: timers fire (run expiry, deadlines)
		m.runAgent(m.now + rapid.IntRange(0, 30000).Draw(m.t, "silenceMs"))
	}
}

// runExt plays one random session of the extended model.
func (m *sim) runExt() {
	n := rapid.IntRange(30, 90).Draw(m.t, "events")
	for i := 0; i < n; i++ {
		m.runAgent(m.now + rapid.IntRange(0, 2500).Draw(m.t, "dtMs"))
		if rapid.IntRange(0, 2).Draw(m.t, "extEvent") > 0 {
			m.randomExtEvent()
		} else {
			m.randomEvent()
		}
	}
}

// TestPropertyRunsUnknownReconnect: the invariants of every step and of the end of the
// session hold while the model opens and answers runs (yes, no, unclear, missing or
// wrong run_id), the agent reports unknown outcomes and resolves them or never does,
// reconnects, reports progress, and forgets to send things at random.
func TestPropertyRunsUnknownReconnect(t *testing.T) {
	checkCovering(t, []string{"call run", "call execute", "call duplicate", "call reject",
		"run opened", "run confirmed", "run refused", "run cancelled", "run expired",
		"skip connection_closed", "unknown", "resolved committed", "resolved failed", "interim",
		"decision cancel deadline", "call id reused with other args"}, func(rt *rapid.T, cov *coverage) {
		m := newSim(rt, extPolicy(rt))
		m.ext = true
		m.strictOnce = rapid.Bool().Draw(rt, "strictOnce")
		m.runExt()
		m.finish()
		cov.add(m)
	})
}

// TestPropertyDeadlinesExt: with deadlines on, whatever the agent fails to send (it
// forgets prepares and outcomes at random, never resolves some unknown outcomes, and
// at a random point stops sending anything at all), once time passes every registered
// call's max_pending and every run's run_timeout, every call id has an outcome (a
// final response or dead) handed out exactly once, and no run is left open.
func TestPropertyDeadlinesExt(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := extPolicy(rt)
		m := newSim(rt, p)
		m.ext = true
		m.runExt()
		// The agent stops sending anything.
		m.tasks, m.dropped = nil, true
		horizon := time.Duration(0)
		for _, tool := range p.Tools {
			tm := p.lookup(tool.Name).timings
			horizon = max(horizon, tm.MaxPending, tm.RunTimeout)
		}
		horizon = max(horizon, p.lookup("confirm_action").timings.MaxPending)
		m.now += int(horizon/time.Millisecond) + 1
		m.must(Tick{})
		for _, c := range m.s.Calls {
			if c.Outcome == nil {
				m.fatalf("call %s (%s, job %s) has no outcome after every deadline passed", c.ID, c.Tool, c.JobID)
			}
			if _, ok := m.emitted[c.ID]; !ok {
				m.fatalf("call %s (outcome %+v) was never answered or skipped", c.ID, c.Outcome)
			}
		}
		for _, r := range m.s.Runs {
			if r.State == RunOpened {
				m.fatalf("run %s still open after run_timeout", r.ID)
			}
		}
		m.finish()
	})
}
