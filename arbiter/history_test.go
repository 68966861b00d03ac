package arbiter

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// historyLines renders a session's history one entry a line: "MS[/obsMS] #SEQ KIND
// fields", for comparing against an expected timeline.
func historyLines(s *Session) string {
	var b strings.Builder
	if s.History == nil {
		return "(no history)\n"
	}
	for _, e := range s.History.Entries {
		fmt.Fprintf(&b, "%d", e.MS)
		if e.ObservedMS != nil {
			fmt.Fprintf(&b, "/%d", *e.ObservedMS)
		}
		fmt.Fprintf(&b, " #%d ", e.Seq)
		switch {
		case e.Call != nil:
			c := e.Call
			fmt.Fprintf(&b, "call %s %s %s", c.ID, c.Tool, c.Disposition)
			if c.Job != "" {
				fmt.Fprintf(&b, " job=%s", c.Job)
			}
			if c.SideEffect {
				b.WriteString(" side_effect")
			}
		case e.Speech != nil:
			fmt.Fprintf(&b, "speech %s utt=%d", e.Speech.Kind, e.Speech.Utterance)
		case e.Transcript != nil:
			fmt.Fprintf(&b, "transcript utt=%d %q intent=%s", e.Transcript.Utterance, e.Transcript.Text, e.Transcript.Intent)
			if e.Transcript.Discarded != "" {
				fmt.Fprintf(&b, " discarded=%q", e.Transcript.Discarded)
			}
		case e.Withdraw != nil:
			fmt.Fprintf(&b, "withdraw %v", e.Withdraw.CallIDs)
		case e.Prepared != nil:
			fmt.Fprintf(&b, "prepared %s", e.Prepared.Job)
		case e.Complete != nil:
			fmt.Fprintf(&b, "complete %s %s", e.Complete.Job, e.Complete.Outcome)
		case e.Configure != nil:
			fmt.Fprintf(&b, "configure record=%v", e.Configure.Record)
		case e.Connect != nil:
			fmt.Fprintf(&b, "connect %s %s", e.Connect.ID, e.Connect.State)
		case e.Progress != nil:
			fmt.Fprintf(&b, "progress %s", e.Progress.Job)
		case e.Close != nil:
			b.WriteString("close")
		case e.Decision != nil:
			fmt.Fprintf(&b, "decision %s %s cause=%s: %s", e.Decision.Job, e.Decision.Decision, e.Decision.Cause, e.Decision.Reason)
		case e.Revoked != nil:
			fmt.Fprintf(&b, "revoked %s", e.Revoked.Job)
		case e.Hold != nil:
			verb := "hold"
			if e.Hold.End {
				verb = "unhold"
			}
			fmt.Fprintf(&b, "%s %s utt=%d", verb, e.Hold.Job, e.Hold.Utterance)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func wantHistory(t *testing.T, s *Session, want string) {
	t.Helper()
	got := historyLines(s)
	want = strings.TrimLeft(want, "\n")
	if got != want {
		t.Errorf("history:\n%s\nwant:\n%s", got, want)
	}
}

// TestHistoryTimeline: a stop during a held commit. The history has every input (the
// call, the prepare, the speech, the transcript, the outcome), the hold with the
// utterance that held it and when it ended, and the decision with its reason, each at
// its time and placed among the effects by seq.
func TestHistoryTimeline(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	call := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
	job := call.Call.JobID
	sp.do(4000, Decide{JobID: job, Prepared: true})
	sp.do(4010, Decide{JobID: job, Prepared: true}) // a poll: no input
	sp.do(4500, Speech{Kind: UserActivityStart})
	sp.do(4600, Tick{})
	sp.do(5200, Transcript{Text: "Wait, stop."})
	sp.do(5300, Speech{Kind: UserActivityEnd})
	sp.do(5310, Complete{JobID: job, Outcome: Cancelled})
	sp.do(5310, Complete{JobID: job, Outcome: Cancelled}) // a retry: no input
	wantHistory(t, sp.s, `
0 #0 call c1 book_slot execute job=`+job+` side_effect
4000 #0 prepared `+job+`
4500 #0 speech user_activity_start utt=1
4500 #0 hold `+job+` utt=1
5200 #0 transcript utt=1 "Wait, stop." intent=stop
5200 #0 decision `+job+` cancel cause=stop: stop intent in user speech: "Wait, stop."
5200 #0 unhold `+job+` utt=1
5300 #0 speech user_activity_end utt=1
5310 #0 complete `+job+` cancelled
`)
	// The complete's response and note come after it in the log.
	if sp.s.LogSeq != 2 || sp.s.Log[0].Response == nil || sp.s.Log[1].Note == nil {
		t.Fatalf("log: %+v", sp.s.Log)
	}
	if h := sp.s.History; h.Policy != sp.e.Policy.Digest() || h.Policy == "" || h.Dropped != 0 || !h.Complete() {
		t.Errorf("history policy %q (policy %q), dropped %d, complete %v", h.Policy, sp.e.Policy.Digest(), h.Dropped, h.Complete())
	}
	checkBytes(t, sp.s)
}

// TestHistoryHeldThenCommitted: speech that holds a due commit and then settles; the
// grace window's commit is a decision made by a timer at its own time.
func TestHistoryHeldThenCommitted(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	job := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
	sp.do(1000, Speech{Kind: UserActivityStart})
	sp.do(2000, Decide{JobID: job, Prepared: true})
	sp.do(2500, Speech{Kind: UserActivityEnd})
	sp.do(3000, Transcript{Text: "Thanks."})
	sp.do(9000, Tick{})
	sp.do(9100, Complete{JobID: job, Outcome: Committed, Result: map[string]any{"reference": "R-1"}})
	wantHistory(t, sp.s, `
0 #0 call c1 book_slot execute job=`+job+` side_effect
1000 #0 speech user_activity_start utt=1
2000 #0 prepared `+job+`
2000 #0 hold `+job+` utt=1
2500 #0 speech user_activity_end utt=1
3000 #0 transcript utt=1 "Thanks." intent=other
3000 #0 unhold `+job+` utt=1
3500 #0 decision `+job+` commit cause=: user speech "Thanks." was not a stop or a change; committed after the 1.5s grace window
9100 #0 complete `+job+` committed
`)
}

// TestHistoryAbandonedHold: `interrupted` drops a BLOCKING call and holds its job
// (utterance 0) until a re-issue revives it.
func TestHistoryAbandonedHold(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	job := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Behavior: Blocking, Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
	sp.do(500, Speech{Kind: Interrupted})
	sp.do(3500, RegisterCall{CallID: "c2", Tool: "book_slot", Behavior: Blocking, Args: map[string]any{"slot": "tomorrow at 3pm"}})
	wantHistory(t, sp.s, `
0 #0 call c1 book_slot execute job=`+job+` side_effect
500 #0 speech interrupted utt=0
500 #1 hold `+job+` utt=0
3500 #1 call c2 book_slot duplicate job=`+job+`
3500 #1 unhold `+job+` utt=0
`)
}

// TestHistoryObserved: an event reported with an age has its arrival and its
// observation time; one that arrives after the commit it should have held withdraws
// it (revoked), and the job is held again: at the session's clock, which a late event
// cannot turn back.
func TestHistoryObserved(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	job := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
	sp.do(1000, Decide{JobID: job, Prepared: true})
	sp.do(2600, Tick{}) // the grace window ended at 2500: commit
	sp.do(2700, Speech{Kind: UserActivityStart, ObservedAt: ms(2400)})
	wantHistory(t, sp.s, `
0 #0 call c1 book_slot execute job=`+job+` side_effect
1000 #0 prepared `+job+`
2500 #0 decision `+job+` commit cause=: no user speech held it after the 1.5s grace window
2600 #0 revoked `+job+`
2700/2400 #0 speech user_activity_start utt=1
2600 #0 hold `+job+` utt=1
`)
}

// TestHistoryNoOpsRecordNothing: a retried RegisterCall, Decide polls and ticks that
// fire nothing leave the session as it was (no write), history included.
func TestHistoryNoOpsRecordNothing(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	job := sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
	before, _ := EncodeSession(sp.s)
	for i, ev := range []Event{
		RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}},
		Decide{JobID: job}, Tick{}, Connect{}, ToolCallCancellation{CallIDs: []string{"nope"}},
	} {
		out, err := sp.e.Step(sp.s, ms(10), ev)
		if i == 3 {
			continue // Connect{} is invalid: refused before anything
		}
		if err != nil || out.Changed {
			t.Errorf("%T: changed %v, %v", ev, out.Changed, err)
		}
	}
	sp.s.Now = ms(0)
	if after, _ := EncodeSession(sp.s); string(after) != string(before) {
		t.Errorf("session changed:\n%s\n%s", before, after)
	}
}

// TestHistoryBound: a history never holds more than its bound; the oldest entries go
// first and are counted, an entry larger than the bound alone is clipped, and a
// session that records keeps the larger bound.
func TestHistoryBound(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
	for i := 1; i <= 40; i++ {
		sp.do(i*100, Transcript{Model: true, Text: fmt.Sprintf("piece %d of the model's long answer ", i)})
	}
	h := sp.s.History
	if h.Bytes > DefaultHistoryBytes || h.Dropped == 0 || h.Complete() {
		t.Fatalf("history of %d bytes (bound %d), %d dropped, complete %v", h.Bytes, DefaultHistoryBytes, h.Dropped, h.Complete())
	}
	if last := h.Entries[len(h.Entries)-1].Transcript; last == nil || !strings.Contains(last.Text, "piece 40") {
		t.Fatalf("the newest entry is not kept: %+v", h.Entries[len(h.Entries)-1])
	}
	if h.Dropped+len(h.Entries) != 41 {
		t.Errorf("%d dropped + %d kept, want 41 entries in all", h.Dropped, len(h.Entries))
	}
	checkBytes(t, sp.s)

	sp.do(5000, Transcript{Model: true, Text: strings.Repeat("x", 4000)})
	if e := h.Entries[len(h.Entries)-1]; !e.Clipped || len(e.Transcript.Text) > clipText || h.Bytes > DefaultHistoryBytes {
		t.Errorf("a 4 KB piece: clipped %v, %d bytes kept, history %d bytes", e.Clipped, len(e.Transcript.Text), h.Bytes)
	}
	checkBytes(t, sp.s)

	// Recording from now on: the larger bound, and the configure is an input.
	sp.do(6000, Configure{Record: true})
	for i := 1; i <= 40; i++ {
		sp.do(6000+i*100, Transcript{Model: true, Text: fmt.Sprintf("piece %d of the model's long answer ", i)})
	}
	if !h.Record || h.Bytes <= DefaultHistoryBytes || h.Bytes > DefaultRecordBytes {
		t.Errorf("recording: record %v, %d bytes", h.Record, h.Bytes)
	}
	checkBytes(t, sp.s)
	if err := sp.s.Check(); err != nil {
		t.Error(err)
	}
}

// TestHistoryOff: HistoryBytes negative keeps no history, until the session records.
func TestHistoryOff(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	sp.e.HistoryBytes = -1
	sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
	if sp.s.History != nil {
		t.Fatalf("history kept: %+v", sp.s.History)
	}
	sp.do(100, Configure{Record: true})
	sp.do(200, Speech{Kind: UserActivityStart})
	wantHistory(t, sp.s, `
100 #0 configure record=true
200 #0 speech user_activity_start utt=1
`)
}

// checkBytes: History.Bytes is what its entries take, JSON-encoded.
func checkBytes(t *testing.T, s *Session) {
	t.Helper()
	n := 0
	for _, e := range s.History.Entries {
		b, _ := json.Marshal(e)
		n += len(b) + 1
	}
	if n != s.History.Bytes {
		t.Errorf("history says %d bytes, its entries take %d", s.History.Bytes, n)
	}
}

// TestSampled: the same key gives the same answer, and about the fraction asked for
// is sampled.
func TestSampled(t *testing.T) {
	n := 0
	for i := 0; i < 10000; i++ {
		k := SessionKey{Tenant: "acme", ID: fmt.Sprintf("session-%d", i)}
		if Sampled(k, 0.1) {
			n++
		}
		if Sampled(k, 0.1) != Sampled(k, 0.1) || Sampled(k, 0) || !Sampled(k, 1) {
			t.Fatal("not deterministic, or 0 and 1 not none and all")
		}
	}
	if n < 900 || n > 1100 {
		t.Errorf("%d of 10000 sampled at 0.1", n)
	}
}

// TestPolicySubset: a subset keeps the tools named and those whose confirmation tool
// is named, and its digest differs from the whole policy's exactly when tools went.
func TestPolicySubset(t *testing.T) {
	p := bookingPolicy(func(p *Policy) {
		p.Tools["take_photo"] = &Tool{Name: "take_photo", SideEffect: true, Confirm: true}
	})
	if p.Digest() == "" || len(p.Digest()) != 16 {
		t.Fatalf("digest %q", p.Digest())
	}
	q := p.Subset([]string{"book_slot", DefaultConfirmTool})
	if len(q.Tools) != 2 || q.Tools["book_slot"] == nil || q.Tools["take_photo"] == nil {
		t.Fatalf("subset tools %v", q.Tools)
	}
	if q.Digest() == p.Digest() {
		t.Error("a subset without get_weather has the whole policy's digest")
	}
	if all := p.Subset([]string{"book_slot", "get_weather", "take_photo"}); all.Digest() != p.Digest() {
		t.Errorf("the subset of every tool: digest %q, want %q", all.Digest(), p.Digest())
	}
}
