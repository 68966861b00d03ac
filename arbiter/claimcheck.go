package arbiter

import (
	"maps"
	"slices"
	"strings"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// The claim check: what the model told the user about a job, read from its output
// transcription turn by turn (speech, with the Vocabulary of the job's tool), against
// what really happened. A turn that contradicts the job's state gets a short
// corrective note at once (the note texts are in notes.go).

// checkClaims reads each finished model turn and, where its claim contradicts the
// state of the latest side-effecting job created by the turn's end (read with the
// verbs of that job's tool), or claims a side effect when there is no job at all (read
// with every side-effecting tool's verbs), hands out a corrective note. A job still
// being committed is not corrected: the claim may be about to come true.
func (st *step) checkClaims(turns []speech.ModelTurn) {
	for _, t := range turns {
		said := strings.TrimSpace(t.Text)
		j := st.latestJobBy(t)
		if j == nil {
			if text := st.noJobCorrection(t.Text, said); text != "" {
				st.issueNote(nil, text, "")
				st.out.Corrections = append(st.out.Corrections, Correction{})
			}
			continue
		}
		v := st.e.Policy.lookup(j.Tool).tool.Vocabulary()
		claim := speech.Verdict(v.ReadClaimsIn(st.s.Language, t.Text))
		if claim == speech.ClaimNone {
			continue
		}
		if text := st.correction(j, claim, firstVerb(v), said); text != "" {
			st.issueNote(j, text, "")
			st.out.Corrections = append(st.out.Corrections, Correction{JobID: j.ID, Tool: j.Tool})
		}
	}
}

// latestJobBy returns the latest side-effecting job created by the end of turn t, or
// nil.
func (st *step) latestJobBy(t speech.ModelTurn) *Job {
	for i := len(st.s.Jobs) - 1; i >= 0; i-- {
		if j := st.s.Jobs[i]; j.SideEffect && !j.CreatedAt.After(t.End) {
			return j
		}
	}
	return nil
}

// correction is the corrective note for a claim about j that contradicts its state,
// or "" when the claim is right (or may be about to come true). past is the tool's
// claim verb ("sent"; "" for none), which the note uses.
func (st *step) correction(j *Job, claim speech.ClaimKind, past, said string) string {
	desc := st.describe(j.Tool, j.Args)
	switch {
	case claim == speech.ClaimDone && (j.Decision == DecisionCancel || j.Outcome == Cancelled || j.Outcome == Failed):
		if st.standing(j) != nil {
			return "" // another job of the same business key stands: "it's booked" may be right
		}
		return correctNotMade(desc, past, said)
	case claim == speech.ClaimDone && j.Decision == Undecided:
		return correctStillPending(desc, said)
	case j.Outcome == Unknown:
		return correctUnknown(desc, said)
	case claim == speech.ClaimNotDone && j.Outcome == Committed:
		return correctConfirmed(desc, reference(j), past, said)
	}
	return ""
}

// noJobCorrection is the corrective note for a turn read when the session has no
// side-effecting job: the turn is read with the vocabulary of each side-effecting
// tool of the policy, and one that says done is corrected, naming the tools whose own
// verbs it used ("nothing has been sent. No send_sms request was made"), or, when it
// used only generic ones ("Done."), nothing in particular. "" when no reading says
// done.
func (st *step) noJobCorrection(text, said string) string {
	var tools, verbs []string
	generic := false
	p := st.e.Policy
	for _, name := range slices.Sorted(maps.Keys(p.Tools)) {
		t := p.Tools[name]
		if !t.SideEffect {
			continue
		}
		v := t.Vocabulary()
		c := speech.Deciding(v.ReadClaimsIn(st.s.Language, text))
		switch {
		case c.Kind != speech.ClaimDone:
		case c.Own:
			tools = append(tools, name)
			if verb := firstVerb(v); !slices.Contains(verbs, verb) {
				verbs = append(verbs, verb)
			}
		default:
			generic = true
		}
	}
	switch {
	case len(tools) > 0:
		return correctNothingDoneBy(verbs, tools, said)
	case generic:
		return correctNothingDone(said)
	}
	return ""
}

// firstVerb is the first claim verb of v ("sent"), the one notes say; "" for none.
func firstVerb(v speech.Vocabulary) string {
	if len(v.Done) == 0 {
		return ""
	}
	return strings.Join(strings.Fields(strings.ToLower(v.Done[0])), " ")
}
