package arbiter

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Confirm-then-act runs (issue 6; the second seed's ToolRun). A tool whose policy says
// `confirm` or lists `steps` does not execute on its first call: the call opens a run
// and is answered at once with a function response that tells the model exactly what
// to ask and to call the confirmation tool next. The confirmation call resolves the
// run: yes executes the request through the normal guarded path (hold, dedupe, notes)
// as a job answered on the confirmation call's id; no cancels it; an unclear answer
// asks again, up to the tool's MaxAsks, and then cancels. While a run is open, another
// call of its tool joins it instead of opening a second one (the seed saw the same
// tool called more than five times for one request when the loop lived in the
// prompt). A run that stays unresolved for its RunTimeout expires. Runs are session
// state, so they live in the store and survive a replica restart or a reconnect.

// RunState is where a run stands.
type RunState string

// The states of a run (replay's `run` lines).
const (
	// RunOpened: waiting for the user's answers or confirmation.
	RunOpened RunState = "opened"
	// RunConfirmed: the user said yes; the request runs as job JobID.
	RunConfirmed RunState = "confirmed"
	// RunRefused: the user said no; nothing was executed.
	RunRefused RunState = "refused"
	// RunExpired: nobody resolved it within RunTimeout; nothing was executed.
	RunExpired RunState = "expired"
	// RunCancelled: no clear answer after MaxAsks, a stop intent, or the session
	// closed; nothing was executed.
	RunCancelled RunState = "cancelled"
)

// Run is one confirm-then-act run.
type Run struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// Args are the request's args as the latest call of the tool gave them; Answers
	// are merged over them when the request runs.
	Args map[string]any `json:"args,omitempty"`
	// BusinessKey is the explicit business key of the latest call, if it had one.
	BusinessKey string `json:"business_key,omitempty"`
	// Answers are the step answers so far, by step arg.
	Answers map[string]any `json:"answers,omitempty"`
	// CallIDs are the calls of the tool that opened and joined the run, then the
	// confirmation calls, in order.
	CallIDs  []string  `json:"call_ids"`
	OpenedAt time.Time `json:"opened_at"`
	// LastAt is the latest call that opened, joined or answered the run; RunTimeout
	// counts from it.
	LastAt time.Time `json:"last_at"`
	// Asks is how many times the current question has been asked.
	Asks  int      `json:"asks"`
	State RunState `json:"state"`
	// Reason says why the run ended.
	Reason  string    `json:"reason,omitempty"`
	EndedAt time.Time `json:"ended_at,omitzero"`
	// JobID is the job a confirmed run started.
	JobID string `json:"job_id,omitempty"`
}

// RunUpdate is a change of a run's state, handed out with the effects (informational:
// nothing to send).
type RunUpdate struct {
	RunID string   `json:"run_id"`
	Tool  string   `json:"tool"`
	State RunState `json:"state"`
	// CallID is the call that caused the change (empty for an expiry).
	CallID string `json:"call_id,omitempty"`
	// JobID is the job a confirmed run started.
	JobID  string    `json:"job_id,omitempty"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
	// Seq is the effect's number in the session log (Watch).
	Seq uint64 `json:"seq,omitempty"`
}

// openRun returns the open run of tool, or nil.
func (s *Session) openRun(tool string) *Run {
	for _, r := range s.Runs {
		if r.Tool == tool && r.State == RunOpened {
			return r
		}
	}
	return nil
}

// runCall handles a call of a tool that runs: it joins the tool's open run or opens
// one, and answers the call at once with what to ask.
func (st *step) runCall(c *Call, ev RegisterCall, tp toolPolicy) {
	s := st.s
	r := s.openRun(ev.Tool)
	joined := r != nil
	if r == nil {
		r = &Run{ID: st.mintRunID(), Tool: ev.Tool, OpenedAt: s.Now, State: RunOpened, Asks: 1}
		s.Runs = append(s.Runs, r)
	}
	r.Args, r.BusinessKey, r.LastAt = ev.Args, ev.BusinessKey, s.Now
	r.CallIDs = append(r.CallIDs, c.ID)
	c.Disposition, c.RunID = RunStep, r.ID
	st.out.Call = st.callResult(c)
	p := st.prompt(r, tp)
	if joined {
		alreadyOpen(p, r, ev.Tool)
	}
	c.Outcome = &CallOutcome{At: s.Now, Response: p}
	st.emitResponse(c)
	if !joined {
		st.emitRun(RunUpdate{RunID: r.ID, Tool: r.Tool, State: RunOpened, CallID: c.ID})
	}
}

// mintRunID returns the next unused run id (see mintJobID).
func (st *step) mintRunID() string {
	for {
		st.s.RunSeq++
		id := "run-" + strconv.Itoa(st.s.RunSeq)
		if st.s.run(id) == nil {
			return id
		}
	}
}

// pendingSteps returns the questions asked next: the first step not answered yet and
// the steps asked with it, less those answered already.
func pendingSteps(t *Tool, answers map[string]any) []Step {
	var out []Step
	for _, q := range t.Steps {
		if len(out) > 0 && !q.WithPrevious {
			break
		}
		if _, ok := answers[q.Arg]; ok {
			continue
		}
		out = append(out, q)
	}
	return out
}

// prompt is the function response that tells the model what to ask next: the pending
// steps' questions, else the confirmation.
func (st *step) prompt(r *Run, tp toolPolicy) map[string]any {
	t := tp.tool
	if qs := pendingSteps(t, r.Answers); len(qs) > 0 {
		return stepsPrompt(r, t.confirmTool(), qs)
	}
	return confirmPrompt(r, t.confirmTool(), st.describe(r.Tool, st.runArgs(r)))
}

// runArgs is the request's args with the step answers merged over them.
func (st *step) runArgs(r *Run) map[string]any {
	if len(r.Answers) == 0 {
		return r.Args
	}
	out := make(map[string]any, len(r.Args)+len(r.Answers))
	for k, v := range r.Args {
		out[k] = v
	}
	for k, v := range r.Answers {
		out[k] = v
	}
	return out
}

// confirmCall handles a call of a confirmation tool: it finds the run it answers and
// advances it: no refuses it; step answers are recorded; while something is still to
// be asked the call is answered with the next question (or the same one again, up to
// MaxAsks); yes, or the last step answered, runs the request. A call that answers no
// run is rejected (answered at once with an error; nothing executes).
func (st *step) confirmCall(c *Call, ev RegisterCall) {
	s := st.s
	r, why := st.runFor(ev)
	if r == nil {
		st.answerRunCall(c, Reject, runErrorPayload(why))
		return
	}
	tp := st.e.Policy.lookup(r.Tool)
	t := tp.tool
	if ev.Behavior == BehaviorUnspecified && t.Behavior != BehaviorUnspecified {
		// The confirmation tool has no policy of its own: a call that does not say
		// takes its run's tool's behavior (a BLOCKING run's confirmation is abandoned
		// by `interrupted` like the request itself).
		c.Behavior = t.Behavior
	}
	c.RunID = r.ID
	confirmed, said := yesNo(ev.Args["confirmed"])
	if r.State != RunOpened {
		st.lateConfirmation(c, r, confirmed, said)
		return
	}
	r.CallIDs = append(r.CallIDs, c.ID)
	r.LastAt = s.Now
	if said && !confirmed {
		st.endRun(c, r, RunRefused, reasonUserSaidNo, tp)
		return
	}
	progressed := st.recordAnswers(r, t, ev.Args)
	if len(pendingSteps(t, r.Answers)) > 0 || (t.Confirm && !said) {
		st.askAgain(c, r, tp, progressed)
		return
	}
	// Confirmed (or every step answered on a tool without confirm): the request runs
	// as a job answered on this call's id.
	r.State, r.EndedAt, r.Reason = RunConfirmed, s.Now, reasonUserConfirms
	if !t.Confirm {
		r.Reason = reasonStepsDone
	}
	j := st.startJob(c, tp, st.runArgs(r), r.BusinessKey)
	r.JobID = c.JobID
	if j != nil {
		j.RunID = r.ID
	}
	st.emitRun(RunUpdate{RunID: r.ID, Tool: r.Tool, State: RunConfirmed, CallID: c.ID, JobID: c.JobID, Reason: r.Reason})
}

// answerRunCall answers a confirmation call at once with payload p (nothing
// executes), with disposition d.
func (st *step) answerRunCall(c *Call, d Disposition, p map[string]any) {
	c.Disposition = d
	c.Outcome = &CallOutcome{At: st.s.Now, Response: p}
	st.out.Call = st.callResult(c)
	st.emitResponse(c)
}

// lateConfirmation answers a confirmation of a run that already ended. A "yes" to a
// confirmed run (the confirmation re-issued, as after a reconnect) is a repeat of its
// job. A "no" to a run that executed nothing agrees with it (the user's "stop" ended
// it first); anything else is an error, and nothing (more) executes.
func (st *step) lateConfirmation(c *Call, r *Run, confirmed, said bool) {
	if j := st.s.job(r.JobID); j != nil && said && confirmed && r.State == RunConfirmed {
		st.duplicate(c, j)
		return
	}
	if said && !confirmed && r.State != RunConfirmed {
		st.answerRunCall(c, RunStep, runCancelledPayload(r, r.Reason))
		return
	}
	st.answerRunCall(c, Reject, runErrorPayload(runEndedError(r)))
}

// recordAnswers records every step answer a confirmation's args carry (a lone pending
// question also takes "answer") and reports whether any was new.
func (st *step) recordAnswers(r *Run, t *Tool, args map[string]any) bool {
	qs := pendingSteps(t, r.Answers)
	progressed := false
	for _, q := range t.Steps {
		if _, done := r.Answers[q.Arg]; done {
			continue
		}
		v, ok := args[q.Arg]
		if !ok && len(qs) == 1 && q.Arg == qs[0].Arg {
			v, ok = args["answer"]
		}
		if !ok || blank(v) {
			continue
		}
		if r.Answers == nil {
			r.Answers = map[string]any{}
		}
		r.Answers[q.Arg] = v
		progressed = true
	}
	return progressed
}

// askAgain answers a confirmation call with what is still to be asked: the next
// question after progress, or the same one again while it has been asked fewer than
// MaxAsks times; past that the run is cancelled.
func (st *step) askAgain(c *Call, r *Run, tp toolPolicy, progressed bool) {
	if progressed {
		r.Asks = 1
	} else {
		if r.Asks >= tp.tool.maxAsks() {
			st.endRun(c, r, RunCancelled, reasonNoClearAnswer(r.Asks), tp)
			return
		}
		r.Asks++
	}
	p := st.prompt(r, tp)
	if !progressed {
		unclear(p)
	}
	st.answerRunCall(c, RunStep, p)
}

// runFor finds the run a confirmation call answers: by its run_id, or the one open
// run that uses this confirmation tool, or, with none open, the run that ended last
// within its run_timeout (a late "no" after the user's "stop", a "yes" re-issued
// after `interrupted`). It returns nil and why not.
func (st *step) runFor(ev RegisterCall) (*Run, string) {
	s := st.s
	open := st.openRunsOf(ev.Tool)
	if v, ok := ev.Args["run_id"]; ok && !blank(v) {
		id := fmt.Sprint(v)
		r := s.run(id)
		switch {
		case r == nil:
			return nil, noSuchRunError(id, ev.Tool, open)
		case st.e.Policy.lookup(r.Tool).tool.confirmTool() != ev.Tool:
			return nil, wrongConfirmToolError(r, ev.Tool)
		}
		return r, ""
	}
	switch len(open) {
	case 0:
		if r := st.lastEndedRun(ev.Tool); r != nil {
			return r, ""
		}
		return nil, noOpenRunError(ev.Tool)
	case 1:
		return s.run(open[0]), ""
	}
	sort.Strings(open)
	return nil, severalOpenRunsError(open, ev.Tool)
}

// openRunsOf returns the ids of the open runs confirmed with confirmation tool ct, in
// opening order.
func (st *step) openRunsOf(ct string) []string {
	var open []string
	for _, r := range st.s.Runs {
		if r.State == RunOpened && st.e.Policy.lookup(r.Tool).tool.confirmTool() == ct {
			open = append(open, r.ID)
		}
	}
	return open
}

// lastEndedRun returns the run confirmed with ct that ended last, if it ended within
// its run_timeout; else nil.
func (st *step) lastEndedRun(ct string) *Run {
	s := st.s
	for i := len(s.Runs) - 1; i >= 0; i-- {
		r := s.Runs[i]
		tp := st.e.Policy.lookup(r.Tool)
		if tp.tool.confirmTool() != ct {
			continue
		}
		if s.Now.Sub(r.EndedAt) < tp.timings.RunTimeout {
			return r
		}
		return nil
	}
	return nil
}

// endRun ends an open run without executing it. c, when not nil, is the confirmation
// call that ended it: it is answered with the outcome. A note tells the model what
// happened (on c's response, when it is NON_BLOCKING and the provider honours
// scheduling).
func (st *step) endRun(c *Call, r *Run, state RunState, reason string, tp toolPolicy) {
	s := st.s
	r.State, r.Reason, r.EndedAt = state, reason, s.Now
	text := runEndNote(state, st.describe(r.Tool, st.runArgs(r)), reason, tp.timings.RunTimeout)
	rider := ""
	if c != nil {
		st.answerRunCall(c, RunStep, runCancelledPayload(r, reason))
		rider = c.ID
	}
	// Any call of the run still without an outcome is answered now, so none is left
	// pending (every run call is answered when it arrives; this is the safety net).
	for _, id := range r.CallIDs {
		if pc := s.call(id); pc != nil && pc.Outcome == nil {
			pc.Outcome = &CallOutcome{At: s.Now, Response: runCancelledPayload(r, reason)}
			st.emitResponse(pc)
		}
	}
	st.emitRun(RunUpdate{RunID: r.ID, Tool: r.Tool, State: state, CallID: callID(c), Reason: reason})
	if !s.Closed {
		st.issueNoteAbout(nil, r, text, rider)
	}
}

func callID(c *Call) string {
	if c == nil {
		return ""
	}
	return c.ID
}

// expireRun ends a run nobody resolved within its RunTimeout.
func (st *step) expireRun(r *Run, tp toolPolicy) {
	st.endRun(nil, r, RunExpired, reasonRunTimeout(tp.timings.RunTimeout), tp)
}

// yesNo reads a confirmation: a JSON bool, or a yes/no word. said is false when the
// value is missing or unclear.
func yesNo(v any) (confirmed, said bool) {
	switch v := v.(type) {
	case bool:
		return v, true
	case string:
		switch strings.ToLower(strings.Trim(v, " \t\n.!,;")) {
		case "true", "yes", "y", "confirmed", "confirm", "ok", "okay", "sure":
			return true, true
		case "false", "no", "n", "cancel", "refused", "declined":
			return false, true
		}
	}
	return false, false
}

func blank(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(v) == ""
	}
	return false
}
