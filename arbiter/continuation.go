package arbiter

import (
	"strings"
	"time"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// Continuation: a request told in two halves (issue 25, item 7). The user pauses
// mid-sentence ("Book me a table for tomorrow..."), the model submits the half-told
// request, the user finishes ("...at seven, for four"), and the model submits the whole
// request: both committed. Now the whole request replaces the half one when all of
// these hold (Tool.Continues):
//
//   - the tool continues (Tool.Continuation): side-effecting, and `replace`, or left
//     out on a tool whose policy lists key args;
//   - the half request's job is undecided (a job decided commit may be running: it is
//     never replaced), and was made while the user was still speaking (continuing): an
//     utterance was open when the call came and went on past it, or began within
//     trigger_lookback after it (the user only paused: a new turn starts later);
//   - that utterance has ended, and the new call arrives within trigger_lookback of its
//     end (it is one of the new call's triggering utterances): the call the model made
//     once the user finished;
//   - the new call's key extends the half request's (extends): neither comes from an
//     explicit business key, they differ, and for every key argument the new value is
//     the old one, or adds to it: a value where there was none (an optional arg), the
//     minute of a day that was all the old value said (`as: datetime`: "tomorrow" then
//     "tomorrow at 7pm", the minute read in the session's zone), or the old words
//     followed by more (`as: text`, or a datetime read as text: "two tickets" then
//     "two tickets for Hamilton"). A number or an `exact` argument extends only by
//     being added. A tool without key args compares its whole args: every old argument
//     kept or extended as text, at least one added or extended.
//
// The half request's job is then cancelled (CauseSuperseded) and its live calls are
// answered, when it completes, with status "superseded" naming the call that
// replaced it (payload: {"status": "superseded", "executed": false,
// "superseded_by": CALL_ID, "reason": ...}); no note, the new call's answer says what
// happened. The new call is a new job.
//
// So that the whole request can still find the half one undecided, a job of a tool
// that continues is not committed before ContinuationWait has passed since the end of
// a continuing utterance that can be the rest of a request (continuationUntil: not a
// stop, a change, a go-ahead, an unclear reply or an acknowledgement such as "thanks"),
// and never past max_hold
// after its commit came due: after the user finished speaking, the model's call for
// the whole request comes within about a second.

// ContinuationMode says whether a tool's later call may replace an earlier one it
// continues.
type ContinuationMode string

// The continuation modes. The zero value is the default: ContinuationReplace for a
// side-effecting tool whose policy lists key args, ContinuationOff otherwise.
const (
	ContinuationReplace ContinuationMode = "replace"
	ContinuationOff     ContinuationMode = "off"
)

// Continues reports whether a call of the tool may replace an earlier one it continues
// (see Continuation). Read-only tools never do.
func (t *Tool) Continues() bool {
	switch t.Continuation {
	case ContinuationReplace:
		return t.SideEffect
	case ContinuationOff:
		return false
	}
	return t.SideEffect && len(t.Key) > 0
}

// continued returns the undecided job that a new call of tp's tool with args and key
// continues, latest first, or nil. triggers are the new call's triggering utterances.
func (st *step) continued(tp toolPolicy, args map[string]any, key, explicitKey string, triggers []int) *Job {
	if !tp.tool.Continues() || explicitKey != "" {
		return nil
	}
	for i := len(st.s.Jobs) - 1; i >= 0; i-- {
		j := st.s.Jobs[i]
		if j.Tool != tp.tool.Name || !j.SideEffect || j.Decision != Undecided || j.Key == key ||
			strings.HasPrefix(j.Key, j.Tool+"#") {
			continue
		}
		if st.finishedSince(j, triggers, tp) && extends(tp.tool, j.Args, args, st.s.Language, st.keyRef()) {
			return j
		}
	}
	return nil
}

// finishedSince reports whether one of the utterances ids (a new call's triggers) is
// continuing for j and has ended: the user was still speaking when j was made, and
// has finished since.
func (st *step) finishedSince(j *Job, ids []int, tp toolPolicy) bool {
	for _, id := range ids {
		if u := st.s.utterance(id); u != nil && !u.End.IsZero() && continuing(j, u, tp) {
			return true
		}
	}
	return false
}

// continuing reports whether utterance u shows that job j was made while the user was
// still speaking: u was open when j's call came and went on past it, or began within
// trigger_lookback after it.
func continuing(j *Job, u *Utterance, tp toolPolicy) bool {
	if !u.End.IsZero() && !u.End.After(j.CreatedAt) {
		return false // over before the call: the request itself
	}
	return !u.Start.After(j.CreatedAt.Add(tp.timings.TriggerLookback))
}

// supersede cancels job old, replaced by the call c (the whole request).
func (st *step) supersede(old *Job, c *Call) {
	old.SupersededBy = c.ID
	st.decideJob(old, DecisionCancel, CauseSuperseded, reasonSuperseded(c.ID))
}

// extends reports whether args b extend args a for tool t (see Continuation): lang and
// ref are the session's language and key reference (its start, in its zone).
func extends(t *Tool, a, b map[string]any, lang string, ref time.Time) bool {
	if len(t.Key) == 0 {
		return argsExtend(a, b)
	}
	grew := false
	for _, k := range t.Key {
		x, y := a[k.Arg], b[k.Arg]
		px, py := canonical(x, k.As, lang, ref), canonical(y, k.As, lang, ref)
		switch {
		case px == py:
		case absentValue(x) && !absentValue(y):
			grew = true
		case k.As == KeyDatetime && dayHolds(px, py, ref.Location()):
			grew = true
		case (k.As == "" || k.As == KeyText || k.As == KeyDatetime) && wordsExtend(x, y):
			grew = true
		default:
			return false
		}
	}
	return grew
}

// argsExtend is extends for a tool without key args: every argument of a is in b, the
// same or extended as text, and b adds an argument or extends one.
func argsExtend(a, b map[string]any) bool {
	grew := len(b) > len(a)
	for k, x := range a {
		y, ok := b[k]
		switch {
		case !ok:
			return false
		case canonicalJSON(x) == canonicalJSON(y):
		case wordsExtend(x, y):
			grew = true
		default:
			return false
		}
	}
	return grew
}

// dayHolds reports whether the day key day ("2006-01-02") holds the minute key minute
// (an instant, UTC: instantKey) in loc.
func dayHolds(day, minute string, loc *time.Location) bool {
	if len(day) != len("2006-01-02") || len(minute) < len("2006-01-02T15:04") {
		return false
	}
	t, err := time.Parse("2006-01-02T15:04", minute[:len("2006-01-02T15:04")])
	return err == nil && t.In(loc).Format("2006-01-02") == day
}

// wordsExtend reports whether x and y are strings and y's words (normText) begin with
// all of x's and go on: "two tickets" is extended by "two tickets for Hamilton".
func wordsExtend(x, y any) bool {
	a, ok1 := x.(string)
	b, ok2 := y.(string)
	if !ok1 || !ok2 {
		return false
	}
	wa, wb := strings.Fields(normText(a)), strings.Fields(normText(b))
	if len(wa) == 0 || len(wb) <= len(wa) {
		return false
	}
	for i, w := range wa {
		if wb[i] != w {
			return false
		}
	}
	return true
}

// continuationUntil is when the continuation wait of job j ends: ContinuationWait
// after the end of the latest continuing utterance that has ended and can be the rest
// of a request (its intent, once read, is not a stop, a change, a go-ahead or unclear,
// and its text is not only an acknowledgement), or zero when there is none or the tool
// does not continue.
func (st *step) continuationUntil(j *Job, tp toolPolicy) time.Time {
	if !tp.tool.Continues() || tp.timings.ContinuationWait <= 0 {
		return time.Time{}
	}
	var until time.Time
	for _, u := range st.s.Utterances {
		if u.End.IsZero() || !continuing(j, u, tp) || !relevant(j, u) {
			continue
		}
		switch {
		case u.Intent == speech.IntentStop, u.Intent == speech.IntentAmend, u.Intent == speech.IntentGoAhead,
			u.Intent == speech.IntentUnclear:
			continue // decided, a yes, or a reply whose question (on_unclear) decides: no request is coming
		case u.Final && speech.IsAcknowledgement(u.Text):
			continue
		}
		if t := u.End.Add(tp.timings.ContinuationWait); t.After(until) {
			until = t
		}
	}
	return until
}
