package arbiter

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter/speech"
	"pgregory.net/rapid"
)

func TestPolicyPhrases(t *testing.T) {
	p := bookingPolicy(func(p *Policy) {
		p.StopPhrases = []string{"halt"}
		p.Languages = map[string]speech.Phrases{"it": {Stop: []string{"fermati"}}}
	})
	if got, _ := speech.Classify("halt now", p.Phrases("en-GB")); got != speech.IntentStop {
		t.Errorf("policy English stop phrase: %s", got)
	}
	if got, _ := speech.Classify("stop", p.Phrases("en")); got == speech.IntentStop {
		t.Errorf("replaced English stop phrases still match 'stop'")
	}
	if got, _ := speech.Classify("Fermati!", p.Phrases("it")); got != speech.IntentStop {
		t.Errorf("policy language: %s", got)
	}
	if got, _ := speech.Classify("Stopp!", p.Phrases("de-AT")); got != speech.IntentStop {
		t.Errorf("built-in German by region tag: %s", got)
	}
	if got, _ := speech.Classify("Detente", p.Phrases("xx")); got == speech.IntentStop {
		t.Errorf("an unknown language must fall back to English, not match Spanish")
	}
}

// stepper drives one session on a fake clock and collects every output.
type stepper struct {
	t   *testing.T
	e   *Engine
	s   *Session
	out []Output
}

func newStepper(t *testing.T, p *Policy) *stepper {
	return &stepper{t: t, e: &Engine{Policy: p}, s: NewSession(SessionKey{ID: "s"}, ms(0))}
}

func (sp *stepper) do(at int, ev Event) Output {
	sp.t.Helper()
	out, err := sp.e.Step(sp.s, ms(at), ev)
	if err != nil {
		sp.t.Fatalf("t=%d %T: %v", at, ev, err)
	}
	sp.out = append(sp.out, out)
	return out
}

// say is one user utterance: activity start, final transcript, activity end.
func (sp *stepper) say(start, end int, text string) Output {
	sp.do(start, Speech{Kind: UserActivityStart})
	out := sp.do(end, Transcript{Text: text})
	sp.do(end, Speech{Kind: UserActivityEnd})
	return out
}

// agent plays the backend for a job: prepared at prep, then Complete as decided at
// each later time until decided. It returns the decision and its time.
func (sp *stepper) agent(job string, prep, until int) (Decision, int) {
	sp.t.Helper()
	sp.do(prep, Decide{JobID: job, Prepared: true})
	for at := prep; at <= until; at += 10 {
		d := sp.do(at, Decide{JobID: job, Prepared: true}).Decision
		if d.Decision == Undecided {
			continue
		}
		oc := Cancelled
		if d.Decision == DecisionCommit {
			oc = Committed
		}
		sp.do(at, Complete{JobID: job, Outcome: oc, Result: map[string]any{"reference": "R-1"}})
		return d.Decision, msOf(d.DecidedAt)
	}
	return Undecided, -1
}

func (sp *stepper) notes() []Note {
	var ns []Note
	for _, o := range sp.out {
		ns = append(ns, o.Effects.Notes...)
	}
	return ns
}

// TestAmendIsNotStop: each amend phrase cancels the pending job with a note asking to
// call again, and the next call carrying the new details is a new job that commits.
func TestAmendIsNotStop(t *testing.T) {
	for _, tc := range []struct{ text, newSlot string }{
		{"Wait, make it 4pm.", "tomorrow 4pm"},
		{"Actually, Lyon.", "Lyon"}, // keyed as text: another city is another request
		{"Change it to Monday.", "Monday 3pm"},
		{"No, the five o'clock one.", "tomorrow 5pm"},
		// Issue 13 follow-ups, round 2: these were other, and the old slot committed.
		{"No, Saturday.", "Saturday 3pm"},
		{"Make that Saturday.", "Saturday 3pm"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			sp := newStepper(t, bookingPolicy())
			j1 := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
			out := sp.say(2000, 3200, tc.text)
			if out.Intent != speech.IntentAmend || len(out.Cancelled) != 1 || out.Cancelled[0] != j1 {
				t.Fatalf("intent %s, cancelled %v; want amend cancelling %s", out.Intent, out.Cancelled, j1)
			}
			if d, _ := sp.agent(j1, 5000, 5000); d != DecisionCancel {
				t.Fatalf("amended job: %s", d)
			}
			ns := sp.notes()
			if len(ns) != 1 || !contains(ns[0].Text, "changed the request") || !contains(ns[0].Text, "Call book_slot again") {
				t.Fatalf("notes %+v", ns)
			}
			// The model calls again with the new details, 0.4 s after the amendment
			// ended: the amending utterance triggers it but does not cancel it.
			reg := sp.do(3600, RegisterCall{CallID: "c2", Tool: "book_slot", Args: map[string]any{"slot": tc.newSlot}}).Call
			if reg.Disposition != Execute || reg.JobID == j1 {
				t.Fatalf("new details: %+v, want a new job", reg)
			}
			if d, at := sp.agent(reg.JobID, 7600, 12000); d != DecisionCommit || at != 9100 {
				t.Fatalf("new job: %s at %d, want commit at 9100", d, at)
			}
		})
	}
}

// TestAmendHeardBeforeTheNewCall: the audio model hears the change and calls again
// before the amendment's transcript arrives; the transcript then cancels only the old
// job, never the one it triggered.
func TestAmendHeardBeforeTheNewCall(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	j1 := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
	sp.do(2000, Speech{Kind: UserActivityStart})
	sp.do(3000, Speech{Kind: UserActivityEnd})
	j2 := sp.do(3100, RegisterCall{CallID: "c2", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 4pm"}}).Call.JobID
	out := sp.do(4300, Transcript{Text: "Wait, make it 4pm."})
	if len(out.Cancelled) != 1 || out.Cancelled[0] != j1 {
		t.Fatalf("cancelled %v, want only %s", out.Cancelled, j1)
	}
	if d, _ := sp.agent(j2, 7100, 12000); d != DecisionCommit {
		t.Fatalf("the amended request: %s, want commit", d)
	}
}

// TestStopPhrasesNeverCommit: each stop phrase, said while the job is pending, leaves
// nothing committed.
func TestStopPhrasesNeverCommit(t *testing.T) {
	for _, text := range []string{"Stop.", "Don't.", "Never mind.", "Cancel it.", "Wait.", "Forget it.", "Dont book it"} {
		t.Run(text, func(t *testing.T) {
			sp := newStepper(t, bookingPolicy())
			j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
			if out := sp.say(2000, 3000, text); out.Intent != speech.IntentStop {
				t.Fatalf("intent %s", out.Intent)
			}
			if d, _ := sp.agent(j, 5000, 20000); d != DecisionCancel {
				t.Fatalf("decision %s, want cancel", d)
			}
		})
	}
}

// TestStopInSpanishSession: the session's language picks the phrases.
func TestStopInSpanishSession(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	sp.do(0, Configure{Language: "es-MX"})
	j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
	if out := sp.say(2000, 3000, "¡Cancélalo, por favor!"); out.Intent != speech.IntentStop {
		t.Fatalf("intent %s", out.Intent)
	}
	if d, _ := sp.agent(j, 5000, 5000); d != DecisionCancel {
		t.Fatalf("decision %s", d)
	}
}

// TestNoteRidesOnFunctionResponse: with response scheduling, a note due with a
// NON_BLOCKING call's response rides on it (WHEN_IDLE while the model speaks,
// INTERRUPT when idle); without it, or for a dead id, it is a user turn.
func TestNoteRidesOnFunctionResponse(t *testing.T) {
	for _, speaking := range []bool{false, true} {
		t.Run(fmt.Sprintf("speaking=%v", speaking), func(t *testing.T) {
			sp := newStepper(t, bookingPolicy())
			sp.do(0, Configure{ResponseScheduling: true})
			j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
			sp.say(2000, 3000, "Stop.")
			if speaking {
				sp.do(3100, Speech{Kind: ModelOutputStart})
			}
			sp.do(3200, Decide{JobID: j})
			out := sp.do(3200, Complete{JobID: j, Outcome: Cancelled})
			if len(out.Effects.Notes) != 1 || len(out.Effects.Responses) != 1 {
				t.Fatalf("effects %+v", out.Effects)
			}
			n := out.Effects.Notes[0]
			want := "INTERRUPT"
			if speaking {
				want = "WHEN_IDLE"
			}
			if n.Via != ViaFunctionResponse || n.CallID != "c1" || string(n.Scheduling) != want || n.Why == "" {
				t.Fatalf("note %+v, want via function_response on c1 with %s", n, want)
			}
			if out.Effects.Responses[0].Payload["status_note"] != n.Text {
				t.Fatalf("the response does not carry the note: %v", out.Effects.Responses[0].Payload)
			}
		})
	}
	t.Run("no scheduling", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
		sp.say(2000, 3000, "Stop.")
		sp.do(3100, Speech{Kind: ModelOutputStart})
		sp.do(3200, Decide{JobID: j})
		n := sp.do(3200, Complete{JobID: j, Outcome: Cancelled}).Effects.Notes[0]
		if n.Via != ViaUserTurn || n.Deliver != DeliverWhenIdle {
			t.Fatalf("note %+v, want a user turn when idle", n)
		}
	})
}

// TestPropertyNoUserTurnIntoSpeech: over random speech sequences, a note is never
// recommended as a user turn to send now while the model is speaking, and never rides
// with INTERRUPT while it speaks.
func TestPropertyNoUserTurnIntoSpeech(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := &Engine{Policy: bookingPolicy()}
		s := NewSession(SessionKey{ID: "p"}, ms(0))
		now := 0
		step := func(ev Event) Output {
			out, _ := e.Step(s, ms(now), ev)
			for _, n := range out.Effects.Notes {
				if s.ModelSpeaking && n.Via == ViaUserTurn && n.Deliver == DeliverNow {
					rt.Fatalf("t=%d: note as a user turn now while the model speaks: %+v", now, n)
				}
				if s.ModelSpeaking && n.Scheduling == "INTERRUPT" {
					rt.Fatalf("t=%d: INTERRUPT while the model speaks: %+v", now, n)
				}
				if !s.ModelSpeaking && n.Deliver == DeliverWhenIdle {
					rt.Fatalf("t=%d: held a note for an idle model: %+v", now, n)
				}
			}
			return out
		}
		step(Configure{ResponseScheduling: rapid.Bool().Draw(rt, "scheduling")})
		texts := []string{"Stop.", "Wait, make it 4pm.", "What time is it?", "Don't.", "OK"}
		slots := []string{"tomorrow 3pm", "tomorrow 4pm"}
		n := rapid.IntRange(10, 60).Draw(rt, "events")
		for i := 0; i < n; i++ {
			now += rapid.IntRange(0, 1500).Draw(rt, "dt")
			switch rapid.IntRange(0, 8).Draw(rt, "kind") {
			case 0:
				b := NonBlocking
				if rapid.Bool().Draw(rt, "blocking") {
					b = Blocking
				}
				step(RegisterCall{Tool: "book_slot", Behavior: b, Args: map[string]any{"slot": rapid.SampledFrom(slots).Draw(rt, "slot")}})
			case 1:
				step(Speech{Kind: UserActivityStart})
			case 2:
				step(Speech{Kind: UserActivityEnd})
			case 3:
				step(Transcript{Text: rapid.SampledFrom(texts).Draw(rt, "text")})
			case 4:
				step(Speech{Kind: ModelOutputStart})
			case 5:
				step(Speech{Kind: ModelTurnComplete})
			case 6:
				step(Speech{Kind: Interrupted})
			case 7:
				step(Transcript{Model: true, Text: "Sure, one moment."})
			case 8:
				// The agent: prepare every job, complete every decided one.
				for _, j := range s.Jobs {
					if j.Outcome != NotCompleted {
						continue
					}
					d := step(Decide{JobID: j.ID, Prepared: true}).Decision
					switch d.Decision {
					case DecisionCommit:
						step(Complete{JobID: j.ID, Outcome: Committed, Result: map[string]any{"reference": "R"}})
					case DecisionCancel:
						step(Complete{JobID: j.ID, Outcome: Cancelled})
					}
				}
			}
		}
	})
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestClaimCheck: what the model tells the user is read per turn and corrected at once
// when it contradicts the job's real state; a turn split by an interruption is read
// joined; offers are no claims.
func TestClaimCheck(t *testing.T) {
	corrections := func(sp *stepper) []string {
		var out []string
		for _, n := range sp.notes() {
			if strings.HasPrefix(n.Text, "System note: correction:") {
				out = append(out, n.Text)
			}
		}
		return out
	}
	modelSays := func(sp *stepper, at int, pieces ...string) {
		sp.do(at, Speech{Kind: ModelOutputStart})
		for i, p := range pieces {
			sp.do(at+10*i, Transcript{Model: true, Text: p})
		}
		sp.do(at+10*len(pieces), Speech{Kind: ModelGenerationComplete})
		sp.do(at+10*len(pieces)+500, Speech{Kind: ModelTurnComplete})
	}
	cancelled := func(t *testing.T) *stepper {
		sp := newStepper(t, bookingPolicy())
		j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
		sp.say(2000, 3000, "Stop, don't book it.")
		sp.agent(j, 3000, 3000)
		return sp
	}
	t.Run("false done after a cancel is corrected", func(t *testing.T) {
		sp := cancelled(t)
		modelSays(sp, 4000, "The booking was already ", "made before your request to stop.")
		c := corrections(sp)
		if len(c) != 1 || !strings.Contains(c[0], "was NOT made") {
			t.Fatalf("corrections %q", c)
		}
		n := sp.notes()[len(sp.notes())-1]
		if n.Deliver != DeliverWhenIdle {
			t.Fatalf("a correction while the model's audio plays must wait: %+v", n)
		}
	})
	t.Run("true statement is left alone", func(t *testing.T) {
		sp := cancelled(t)
		modelSays(sp, 4000, "The booking was not made, so nothing is scheduled.")
		if c := corrections(sp); len(c) != 0 {
			t.Fatalf("corrections %q", c)
		}
	})
	t.Run("split turn is read joined", func(t *testing.T) {
		sp := cancelled(t)
		sp.do(4000, Speech{Kind: ModelOutputStart})
		sp.do(4000, Transcript{Model: true, Text: "I have not "})
		sp.do(4010, Speech{Kind: Interrupted})
		sp.do(4700, Speech{Kind: ModelOutputStart})
		sp.do(4700, Transcript{Model: true, Text: "booked that slot for you."})
		sp.do(4900, Speech{Kind: ModelGenerationComplete})
		sp.do(6000, Speech{Kind: ModelTurnComplete})
		if c := corrections(sp); len(c) != 0 {
			t.Fatalf("the joined turn says not booked; corrections %q", c)
		}
	})
	t.Run("offer is no claim", func(t *testing.T) {
		sp := cancelled(t)
		modelSays(sp, 4000, "Would you like me to book it again?")
		if c := corrections(sp); len(c) != 0 {
			t.Fatalf("corrections %q", c)
		}
	})
	t.Run("done claimed while still pending", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
		modelSays(sp, 1200, "Done, your slot is booked.")
		c := corrections(sp)
		if len(c) != 1 || !strings.Contains(c[0], "still pending") {
			t.Fatalf("corrections %q", c)
		}
	})
	t.Run("not done claimed after a commit", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		j := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
		if d, _ := sp.agent(j, 2000, 5000); d != DecisionCommit {
			t.Fatalf("decision %s", d)
		}
		modelSays(sp, 6000, "I'm sorry, the booking was not made.")
		c := corrections(sp)
		if len(c) != 1 || !strings.Contains(c[0], "IS confirmed (reference R-1)") {
			t.Fatalf("corrections %q", c)
		}
	})
	t.Run("action claimed with no call at all", func(t *testing.T) {
		sp := newStepper(t, bookingPolicy())
		modelSays(sp, 1000, "I've booked that slot for you.")
		c := corrections(sp)
		if len(c) != 1 || !strings.Contains(c[0], "nothing has been booked. No book_slot request was made") {
			t.Fatalf("corrections %q", c)
		}
	})

	// Rule 7: each tool's own verbs (issue 13).
	tools := func(p *Policy) {
		p.Tools["send_sms"] = &Tool{Name: "send_sms", SideEffect: true, Claims: []string{"sent", "delivered"}, Describe: "the SMS to {to}"}
		p.Tools["cancel_order"] = &Tool{Name: "cancel_order", SideEffect: true, Describe: "the cancellation of order {order}"}
	}
	for _, c := range []struct {
		name, said string
		want       string // a part of the one correction; "" for none
	}{
		{"sent claimed with no call at all", "Okay, I've sent it.", "nothing has been sent. No send_sms request was made."},
		{"done and sent claimed with no call at all", "Done, I've sent it.", "nothing has been sent. No send_sms request was made."},
		{"a cancellation claimed with no call at all", "Your order has been cancelled.", "nothing has been cancelled. No cancel_order request was made."},
		{"generic done with no call at all", "Done.", "nothing has been done. No request for it was made."},
		{"an offer with no call at all", "Shall I send it?", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := newStepper(t, bookingPolicy(tools))
			modelSays(sp, 1000, c.said)
			got := corrections(sp)
			if c.want == "" && len(got) == 0 {
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], c.want) {
				t.Fatalf("corrections %q, want one with %q", got, c.want)
			}
		})
	}
	job := func(t *testing.T, tool string, args map[string]any, stop bool) *stepper {
		sp := newStepper(t, bookingPolicy(tools))
		j := sp.do(1000, RegisterCall{CallID: "c1", Tool: tool, Args: args}).Call.JobID
		if stop {
			sp.say(2000, 3000, "Stop, don't do it.")
			sp.agent(j, 3000, 3000)
		} else if d, _ := sp.agent(j, 2000, 5000); d != DecisionCommit {
			t.Fatalf("decision %s", d)
		}
		return sp
	}
	for _, c := range []struct {
		name, tool string
		stop       bool
		said, want string
	}{
		{"sent claimed after a cancel", "send_sms", true, "Done, I've sent it.",
			`the SMS to Ana was NOT carried out: nothing has been sent. You said: "Done, I've sent it.". Tell the user it has not been sent.`},
		{"not sent claimed after a commit", "send_sms", false, "I couldn't send the message.",
			`the SMS to Ana IS confirmed (reference R-1). You said: "I couldn't send the message.". Tell the user it has been sent.`},
		{"booking words about an SMS are not its claims", "send_sms", true, "It's booked.", ""},
		{"cancelled is done for a cancellation that committed", "cancel_order", false, "Your order has been cancelled.", ""},
		{"canceled (US) is done too", "cancel_order", false, "I've canceled your order.", ""},
		{"not cancelled after a committed cancellation", "cancel_order", false, "I couldn't cancel your order.",
			"the cancellation of order 42 IS confirmed (reference R-1). You said: \"I couldn't cancel your order.\". Tell the user it has been cancelled."},
		{"cancelled claimed after the cancellation was stopped", "cancel_order", true, "Your order was cancelled.",
			"the cancellation of order 42 was NOT carried out: nothing has been cancelled."},
		{"withdrawing a request is not the cancellation", "cancel_order", true, "I have cancelled the request.", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := job(t, c.tool, map[string]any{"to": "Ana", "order": "42"}, c.stop)
			modelSays(sp, 6000, c.said)
			got := corrections(sp)
			if c.want == "" && len(got) == 0 {
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], c.want) {
				t.Fatalf("corrections %q, want one with %q", got, c.want)
			}
		})
	}
}

// TestDateMemo: the memo gives exactly what a fresh parse gives, per minute, and is
// safe under concurrent use.
func TestDateMemo(t *testing.T) {
	tool := &Tool{Name: "book_slot", Key: []KeyArg{{Arg: "slot", As: KeyDatetime}}}
	at := time.Date(2026, 10, 1, 23, 59, 30, 0, time.UTC)
	first := BusinessKey(tool, map[string]any{"slot": "tomorrow 3pm"}, "", "", at)
	done := make(chan string, 8)
	for i := 0; i < 8; i++ {
		go func() { done <- BusinessKey(tool, map[string]any{"slot": "tomorrow 3pm"}, "", "", at) }()
	}
	for i := 0; i < 8; i++ {
		if k := <-done; k != first {
			t.Fatalf("memoised key %q, first %q", k, first)
		}
	}
	// A minute later it is another day: "tomorrow" moves on.
	if next := BusinessKey(tool, map[string]any{"slot": "tomorrow 3pm"}, "", "", at.Add(time.Minute)); next == first {
		t.Fatalf("the memo ignored the call's time: %q both days", next)
	}
}

// TestCommitReasonNamesSpeech (issue 13 follow-up): a commit released after the user
// spoke while the job was pending, and said neither a stop nor a change, says so and
// names the words; with no such speech (none, or only the request, which ended before
// the call) the reason is the grace window's.
func TestCommitReasonNamesSpeech(t *testing.T) {
	const grace = "no user speech held it after the 1.5s grace window"
	// The call comes at 1000, prepare ends at 1500, the grace window at 3000.
	for _, tc := range []struct {
		name                  string
		before, during, after func(sp *stepper) // before the call, while preparing, after prepare
		want                  string
	}{
		{"no speech", nil, nil, nil, grace},
		{"the request itself, ended before the call", func(sp *stepper) { sp.say(0, 800, "Book me tomorrow at 3pm.") }, nil, nil, grace},
		{"speech while preparing", nil, func(sp *stepper) { sp.say(1100, 1400, "Thanks, that's great.") }, nil,
			`user speech "Thanks, that's great." was not a stop or a change; committed after the 1.5s grace window`},
		// Speech that began within trigger_lookback (2 s) of the call, or went on past it,
		// may be the rest of the request (issue 25, continuation.go): the commit waits
		// continuation_wait (2 s) after its end for a call of the whole request.
		{"speech that holds the commit past the grace window", nil, nil, func(sp *stepper) { sp.say(2000, 4000, "Is parking included?") },
			`held 2s after the user's speech ended for a call completing the request, and none came: user speech "Is parking included?" was not a stop or a change`},
		{"a false stop", nil, func(sp *stepper) { sp.say(1100, 1400, "Don't stop, book it.") }, nil,
			`held 2s after the user's speech ended for a call completing the request, and none came: user speech "Don't stop, book it." was not a stop or a change`},
		{"a request still spoken when the call came", func(sp *stepper) { sp.do(0, Speech{Kind: UserActivityStart}) },
			func(sp *stepper) {
				sp.do(1200, Transcript{Text: "Book it, thanks."})
				sp.do(1200, Speech{Kind: UserActivityEnd})
			}, nil,
			`held 2s after the user's speech ended for a call completing the request, and none came: user speech "Book it, thanks." was not a stop or a change`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := newStepper(t, bookingPolicy())
			run := func(f func(sp *stepper)) {
				if f != nil {
					f(sp)
				}
			}
			run(tc.before)
			job := sp.do(1000, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}).Call.JobID
			run(tc.during)
			sp.do(1500, Decide{JobID: job, Prepared: true})
			run(tc.after)
			if d, _ := sp.agent(job, 5000, 10000); d != DecisionCommit {
				t.Fatalf("decision %s, want commit", d)
			}
			if got := sp.s.job(job).Reason; got != tc.want {
				t.Errorf("reason %q, want %q", got, tc.want)
			}
		})
	}
}
