package arbiter

import (
	"fmt"
	"sort"
	"testing"
	"time"
)

// The effect log (Watch): every effect handed out for the first time gets the next
// seq and a place in the log; repeats keep their seq and are not logged again.

// logEntriesOf returns every effect of out as a log entry, ordered by seq.
func logEntriesOf(out Output) []LogEntry {
	var es []LogEntry
	for i := range out.Effects.Responses {
		r := out.Effects.Responses[i]
		es = append(es, LogEntry{Seq: r.Seq, Response: &r})
	}
	for i := range out.Effects.Skips {
		k := out.Effects.Skips[i]
		es = append(es, LogEntry{Seq: k.Seq, Skip: &k})
	}
	for i := range out.Effects.Notes {
		n := out.Effects.Notes[i]
		es = append(es, LogEntry{Seq: n.Seq, Note: &n})
	}
	for i := range out.Effects.Runs {
		u := out.Effects.Runs[i]
		es = append(es, LogEntry{Seq: u.Seq, Run: &u})
	}
	sort.SliceStable(es, func(a, b int) bool { return es[a].Seq < es[b].Seq })
	return es
}

// entryJSON is a log entry without its time, for comparison.
func entryJSON(e LogEntry) string {
	e.At = time.Time{}
	s, err := jsonOf(e)
	if err != nil {
		return "error: " + err.Error()
	}
	return s
}

// logChecker checks, step by step, that the log is the outputs' new effects in order.
type logChecker struct {
	prev   uint64
	byseq  map[uint64]string // every effect handed out, by seq
	counts int
}

func newLogChecker() *logChecker { return &logChecker{byseq: map[uint64]string{}} }

// check returns a description of what is wrong, or "".
func (lc *logChecker) check(s *Session, out Output) string {
	entries := logEntriesOf(out)
	var fresh []LogEntry
	for _, e := range entries {
		if e.Seq == 0 {
			return fmt.Sprintf("effect without a seq: %s", entryJSON(e))
		}
		if e.Seq <= lc.prev {
			// A repeat: the very effect handed out before.
			if prev, ok := lc.byseq[e.Seq]; !ok || prev != entryJSON(e) {
				return fmt.Sprintf("repeat with seq %d is %s, but that seq was %s", e.Seq, entryJSON(e), prev)
			}
			continue
		}
		fresh = append(fresh, e)
	}
	if uint64(len(fresh)) != s.LogSeq-lc.prev {
		return fmt.Sprintf("%d new effects, but the log seq moved from %d to %d", len(fresh), lc.prev, s.LogSeq)
	}
	for i, e := range fresh {
		if want := lc.prev + uint64(i) + 1; e.Seq != want {
			return fmt.Sprintf("new effect %d has seq %d, want %d", i, e.Seq, want)
		}
	}
	if len(fresh) > 0 {
		logged, err := s.LogAfter(lc.prev)
		if err != nil {
			return fmt.Sprintf("LogAfter(%d): %v", lc.prev, err)
		}
		if len(logged) != len(fresh) {
			return fmt.Sprintf("LogAfter(%d) has %d entries, the output %d new effects", lc.prev, len(logged), len(fresh))
		}
		for i := range fresh {
			if !logged[i].At.Equal(s.Now) && logged[i].At.After(s.Now) {
				return fmt.Sprintf("log entry %d at %v, after the session's clock %v", logged[i].Seq, logged[i].At, s.Now)
			}
			if g, w := entryJSON(logged[i]), entryJSON(fresh[i]); g != w {
				return fmt.Sprintf("log entry %d is %s, the output's effect %s", fresh[i].Seq, g, w)
			}
			lc.byseq[fresh[i].Seq] = entryJSON(fresh[i])
		}
	}
	lc.prev = s.LogSeq
	lc.counts += len(fresh)
	return ""
}

// TestLogMatchesOutputs: a session going through calls, runs, notes, skips, deadlines,
// unknown outcomes and retries: the log is exactly the new effects of the outputs, in
// order, numbered from 1 without gaps; repeats keep their seq.
func TestLogMatchesOutputs(t *testing.T) {
	e := &Engine{Policy: runPolicy(func(p *Policy) { p.Defaults.MaxPending = 20 * time.Second })}
	s := NewSession(SessionKey{ID: "log"}, t0)
	lc := newLogChecker()
	do := func(at int, ev Event) Output {
		t.Helper()
		out, err := e.Step(s, ms(at), ev)
		if err != nil {
			t.Fatalf("t=%d %T: %v", at, ev, err)
		}
		if msg := lc.check(s, out); msg != "" {
			t.Fatalf("t=%d %T: %s", at, ev, msg)
		}
		return out
	}
	do(0, Configure{ResponseScheduling: true})
	do(0, Connect{ConnectionID: "A"})
	j := do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
	do(1100, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}) // repeat, pending
	w := do(1200, RegisterCall{CallID: "w1", Tool: "get_weather"}).Call.JobID
	do(1300, Progress{JobID: w, Result: map[string]any{"p": 1.0}})
	do(1400, Complete{JobID: w, Outcome: Result, Result: map[string]any{"t": 1.0}})
	do(1500, Complete{JobID: w, Outcome: Result, Result: map[string]any{"t": 1.0}}) // retry
	do(1600, RegisterCall{CallID: "w1", Tool: "get_weather"})                       // repeat, answered
	_, run := rsOpen(t, do, 2000, photo("p1", "x"))
	do(2100, photo("p2", "x"))
	do(2200, confirmAction("k1", map[string]any{"run_id": run, "confirmed": "hmm"}))
	pj := do(2300, confirmAction("k2", map[string]any{"run_id": run, "confirmed": true})).Call.JobID
	do(2400, RegisterCall{CallID: "d1", Tool: "delete_album", Args: map[string]any{"album": "a"}})
	do(2500, confirmAction("k3", map[string]any{"run_id": "run-999", "confirmed": true}))
	do(3000, Decide{JobID: j, Prepared: true})
	do(3000, Decide{JobID: pj, Prepared: true})
	do(4500, Tick{})
	do(4500, Decide{JobID: j, Prepared: true})  // the parked Decides hand out the COMMITs
	do(4500, Decide{JobID: pj, Prepared: true}) // (a commit not handed out is not final)
	do(4600, Complete{JobID: j, Outcome: Unknown})
	do(4700, Complete{JobID: j, Outcome: Unknown})
	do(4800, RegisterCall{CallID: "c2", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
	do(4900, Connect{ConnectionID: "B"}) // k2 dies
	do(5000, Complete{JobID: j, Outcome: Committed, Result: map[string]any{"reference": "R"}})
	do(5100, Complete{JobID: j, Outcome: Committed, Result: map[string]any{"reference": "R"}})
	do(5200, RegisterCall{CallID: "k2", Tool: "confirm_action"}) // repeat of a dead id
	do(6000, Speech{Kind: UserActivityStart})
	do(6500, Transcript{Text: "Stop."}) // cancels the delete_album run
	do(6600, Speech{Kind: UserActivityEnd})
	do(7000, RegisterCall{CallID: "w2", Tool: "get_weather"})
	do(60000, Tick{}) // w2's deadline
	do(61000, Complete{JobID: pj, Outcome: Committed})
	do(62000, Close{})
	if lc.counts < 15 || s.LogSeq != uint64(lc.counts) || len(s.Log) != lc.counts || s.Log[0].Seq != 1 {
		t.Errorf("%d effects checked, log seq %d, %d kept", lc.counts, s.LogSeq, len(s.Log))
	}
	for i, e := range s.Log {
		if e.Seq != uint64(i+1) {
			t.Fatalf("log[%d] has seq %d", i, e.Seq)
		}
		n := 0
		for _, set := range []bool{e.Response != nil, e.Skip != nil, e.Note != nil, e.Run != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			t.Errorf("log entry %d has %d effects", e.Seq, n)
		}
	}
	// The log survives the store.
	b, _ := EncodeSession(s)
	s2, _ := DecodeSession(b)
	a1, _ := s.LogAfter(0)
	a2, _ := s2.LogAfter(0)
	if x, _ := jsonOf(a1); x != func() string { y, _ := jsonOf(a2); return y }() {
		t.Errorf("the decoded log differs")
	}
}

func rsOpen(t *testing.T, do func(int, Event) Output, at int, ev RegisterCall) (Output, string) {
	t.Helper()
	out := do(at, ev)
	if out.Call.Disposition != RunStep {
		t.Fatalf("%+v", out.Call)
	}
	return out, out.Call.RunID
}

// TestLogAfter: resuming after any seq, and the errors: beyond the last effect, and
// older than the log keeps once more than LogKeep effects were handed out.
func TestLogAfter(t *testing.T) {
	e := &Engine{Policy: bookingPolicy()}
	s := NewSession(SessionKey{ID: "log"}, t0)
	if got, err := s.LogAfter(0); err != nil || len(got) != 0 {
		t.Errorf("empty log: %v %v", got, err)
	}
	if _, err := s.LogAfter(1); KindOf(err) != FailedPrecondition || MessageOf(err) == "" {
		t.Errorf("after 1 of an empty log: %v", err)
	}
	n := LogKeep + 50
	for i := 0; i < n; i++ {
		// A rejected call is answered at once: one effect per call.
		if _, err := e.Step(s, ms(i), RegisterCall{CallID: fmt.Sprintf("x%d", i), Tool: "get_weather", ToolChoiceNone: true}); err != nil {
			t.Fatal(err)
		}
	}
	if s.LogSeq != uint64(n) || len(s.Log) != LogKeep || s.Log[0].Seq != uint64(n-LogKeep+1) {
		t.Fatalf("log seq %d, %d kept from %d", s.LogSeq, len(s.Log), s.Log[0].Seq)
	}
	for _, after := range []uint64{uint64(n - LogKeep), uint64(n - 1), uint64(n - 100)} {
		got, err := s.LogAfter(after)
		if err != nil || len(got) != n-int(after) || got[0].Seq != after+1 || got[len(got)-1].Seq != uint64(n) {
			t.Errorf("LogAfter(%d): %d entries, %v", after, len(got), err)
		}
	}
	if got, err := s.LogAfter(uint64(n)); err != nil || len(got) != 0 {
		t.Errorf("LogAfter(last): %v %v", got, err)
	}
	for _, after := range []uint64{0, uint64(n - LogKeep - 1)} {
		if _, err := s.LogAfter(after); KindOf(err) != FailedPrecondition {
			t.Errorf("LogAfter(%d) older than kept: %v", after, err)
		}
	}
	if _, err := s.LogAfter(uint64(n + 1)); KindOf(err) != FailedPrecondition {
		t.Errorf("LogAfter beyond the last: %v", err)
	}
	// A repeat of an early id whose entry was dropped keeps its seq and logs nothing.
	out, err := e.Step(s, ms(n), RegisterCall{CallID: "x0", Tool: "get_weather"})
	if err != nil || !out.Call.Repeat || len(out.Effects.Responses) != 1 || out.Effects.Responses[0].Seq != 1 || s.LogSeq != uint64(n) {
		t.Errorf("repeat of x0: %+v %+v %v, log seq %d", out.Call, out.Effects, err, s.LogSeq)
	}
}
