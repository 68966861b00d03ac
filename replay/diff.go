package replay

import (
	"reflect"
	"strconv"
)

// Outcomes is what one run of a session decided and handed out, keyed so two runs
// compare by content, not by time: by call id (a job by the call that opened it, so
// job numbering does not matter), a note by the call that opened its job (or its run).
type Outcomes struct {
	// Calls are the dispositions (execute, duplicate, reject, run).
	Calls map[string]string
	// Decisions are the decisions of side-effecting jobs (the latest of a job whose
	// commit was withdrawn and decided again).
	Decisions map[string]DecisionOutcome
	// Responses are the final function responses' payloads.
	Responses map[string]map[string]any
	// Skips are the reasons of the ids that must not be answered.
	Skips map[string]string
	// Notes are the notes' texts and deliveries, in order.
	Notes map[string][]NoteOutcome
	// order is every key in the order first seen, for a stable report.
	order []string
}

// DecisionOutcome is one decision; TMs is shown, not compared.
type DecisionOutcome struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	TMs      int64  `json:"t_ms"`
}

// NoteOutcome is one note; TMs is shown, not compared.
type NoteOutcome struct {
	Text    string `json:"text"`
	Deliver string `json:"deliver"`
	TMs     int64  `json:"t_ms"`
}

func newOutcomes() *Outcomes {
	return &Outcomes{Calls: map[string]string{}, Decisions: map[string]DecisionOutcome{},
		Responses: map[string]map[string]any{}, Skips: map[string]string{}, Notes: map[string][]NoteOutcome{}}
}

func (o *Outcomes) seen(key string) {
	for _, k := range o.order {
		if k == key {
			return
		}
	}
	o.order = append(o.order, key)
}

// OutcomesOf collects a replay's outcomes from its output lines.
func OutcomesOf(res *Result) *Outcomes {
	o := newOutcomes()
	opener := map[string]string{}
	for _, l := range res.Lines {
		t := int64(0)
		if l.TMs != nil {
			t = *l.TMs
		}
		switch l.Out {
		case "call":
			o.seen(l.CallID)
			o.Calls[l.CallID] = l.Disposition
			if l.Disposition == "execute" && opener[l.JobID] == "" {
				opener[l.JobID] = l.CallID
			}
		case "decision":
			o.Decisions[l.CallID] = DecisionOutcome{Decision: l.Decision, Reason: l.Reason, TMs: t}
		case "response":
			if l.Final == nil {
				o.seen(l.CallID)
				o.Responses[l.CallID] = l.Payload
			}
		case "skip":
			o.seen(l.CallID)
			o.Skips[l.CallID] = l.Reason
		case "note":
			key := noteKey(opener[l.JobID], l.RunID)
			o.seen(key)
			o.Notes[key] = append(o.Notes[key], NoteOutcome{Text: l.Text, Deliver: l.Deliver, TMs: t})
		}
	}
	return o
}

// RecordedOutcomes collects the outcomes a trace recorded (an exported session's
// ref_call, ref_decision, ref_response, ref_skip and ref_note lines).
func RecordedOutcomes(events []TraceEvent) *Outcomes {
	o := newOutcomes()
	opener := map[string]string{}
	for _, ev := range events {
		switch ev.Event {
		case "ref_call":
			o.seen(ev.CallID)
			o.Calls[ev.CallID] = ev.Disposition
			if ev.Disposition == "execute" && opener[ev.JobID] == "" {
				opener[ev.JobID] = ev.CallID
			}
		case "ref_decision":
			o.Decisions[ev.CallID] = DecisionOutcome{Decision: ev.Decision, Reason: ev.Reason, TMs: ev.TMs}
		case "ref_response":
			if ev.Final == nil || *ev.Final {
				o.seen(ev.CallID)
				o.Responses[ev.CallID] = ev.Payload
			}
		case "ref_skip":
			o.seen(ev.CallID)
			o.Skips[ev.CallID] = ev.Reason
		case "ref_note":
			key := noteKey(opener[ev.JobID], ev.RunID)
			o.seen(key)
			o.Notes[key] = append(o.Notes[key], NoteOutcome{Text: ev.Text, Deliver: ev.Deliver, TMs: ev.TMs})
		}
	}
	return o
}

// HasRecordedOutcomes reports whether a trace carries an exported session's own
// outcomes (ref_call lines).
func HasRecordedOutcomes(events []TraceEvent) bool {
	for _, ev := range events {
		if ev.Event == "ref_call" {
			return true
		}
	}
	return false
}

func noteKey(callID, runID string) string {
	if callID != "" {
		return callID
	}
	return runID
}

// DiffLine is one difference between two runs: what (call, decision, response,
// skip, note), about which call (or run), and each side's value (nil where that run
// has none).
type DiffLine struct {
	Diff  string `json:"diff"`
	About string `json:"about"`
	Old   any    `json:"old"`
	New   any    `json:"new"`
}

// Diff returns where two runs' outcomes differ in content (dispositions, decisions
// and their reasons, response payloads, skip reasons, note texts and deliveries),
// in the order the keys were first seen, old's first. Times are not compared.
func Diff(old, new *Outcomes) []DiffLine {
	var out []DiffLine
	keys := append(append([]string(nil), old.order...), new.order...)
	done := map[string]bool{}
	for _, k := range keys {
		if done[k] {
			continue
		}
		done[k] = true
		if a, b := get(old.Calls, k), get(new.Calls, k); !reflect.DeepEqual(a, b) {
			out = append(out, DiffLine{"call", k, a, b})
		}
		da, oka := old.Decisions[k]
		db, okb := new.Decisions[k]
		if oka != okb || da.Decision != db.Decision || da.Reason != db.Reason {
			out = append(out, DiffLine{"decision", k, orNil(da, oka), orNil(db, okb)})
		}
		if a, b := get(old.Responses, k), get(new.Responses, k); !reflect.DeepEqual(a, b) {
			out = append(out, DiffLine{"response", k, a, b})
		}
		if a, b := get(old.Skips, k), get(new.Skips, k); !reflect.DeepEqual(a, b) {
			out = append(out, DiffLine{"skip", k, a, b})
		}
		na, nb := old.Notes[k], new.Notes[k]
		if !sameNotes(na, nb) {
			out = append(out, DiffLine{"note", k, orNil(na, na != nil), orNil(nb, nb != nil)})
		}
	}
	return out
}

func get[V any](m map[string]V, k string) any {
	if v, ok := m[k]; ok {
		return v
	}
	return nil
}

func orNil(v any, ok bool) any {
	if !ok {
		return nil
	}
	return v
}

func sameNotes(a, b []NoteOutcome) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Text != b[i].Text || a[i].Deliver != b[i].Deliver {
			return false
		}
	}
	return true
}

// Count returns how many lines of each kind, "2 decisions, 1 note" style, for a
// summary.
func Count(lines []DiffLine) string {
	n := map[string]int{}
	var kinds []string
	for _, l := range lines {
		if n[l.Diff] == 0 {
			kinds = append(kinds, l.Diff)
		}
		n[l.Diff]++
	}
	if len(kinds) == 0 {
		return "no difference"
	}
	s := ""
	for i, k := range kinds {
		if i > 0 {
			s += ", "
		}
		s += strconv.Itoa(n[k]) + " " + k
		if n[k] > 1 {
			s += "s"
		}
	}
	return s + " differ"
}
