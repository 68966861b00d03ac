package arbiter

import (
	"strings"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// The claim check: what the model told the user about a job, read from its output
// transcription turn by turn (speech.ReadClaimsIn, speech.Verdict), against what
// really happened. A turn that contradicts the job's state gets a short corrective
// note at once (the note texts are in notes.go).

// checkClaims reads each finished model turn and, where its claim contradicts the
// state of the latest side-effecting job created by the turn's end (or claims a side
// effect when there is no job at all), hands out a corrective note. A job still being
// committed is not corrected: the claim may be about to come true.
func (st *step) checkClaims(turns []speech.ModelTurn) {
	for _, t := range turns {
		claim := speech.Verdict(speech.ReadClaimsIn(st.s.Language, t.Text))
		if claim == speech.ClaimNone {
			continue
		}
		said := strings.TrimSpace(t.Text)
		j := st.latestJobBy(t)
		if j == nil {
			if claim == speech.ClaimDone {
				st.issueNote(nil, correctNothingDone(said), "")
			}
			continue
		}
		if text := st.correction(j, claim, said); text != "" {
			st.issueNote(j, text, "")
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
// or "" when the claim is right (or may be about to come true).
func (st *step) correction(j *Job, claim speech.ClaimKind, said string) string {
	desc := st.describe(j.Tool, j.Args)
	switch {
	case claim == speech.ClaimDone && (j.Decision == DecisionCancel || j.Outcome == Cancelled || j.Outcome == Failed):
		return correctNotMade(desc, said)
	case claim == speech.ClaimDone && j.Decision == Undecided:
		return correctStillPending(desc, said)
	case j.Outcome == Unknown:
		return correctUnknown(desc, said)
	case claim == speech.ClaimNotDone && j.Outcome == Committed:
		return correctConfirmed(desc, reference(j), said)
	}
	return ""
}
