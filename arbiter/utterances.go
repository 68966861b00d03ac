package arbiter

import (
	"strings"
	"time"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// Utterances: what the user and the model say. Voice activity opens and ends user
// utterances (an open one holds due commits: timers.go); a final user transcript is
// read for intent (package speech): stop cancels the undecided jobs it bears on, amend
// cancels the jobs from before it; `interrupted` abandons unanswered BLOCKING calls;
// the model's output transcription goes to the claim check (claimcheck.go).

// InterruptAfterNote: an `interrupted` that follows the arbiter's own `now` note by
// less than this is caused by the note (a user turn with turn_complete=true
// "unconditionally interrupts generation", third seed: 12 to 78 ms after the note),
// not by user barge-in, so it abandons nothing.
const InterruptAfterNote = time.Second

// SpeechKind is a voice-activity or model-output event.
type SpeechKind string

// The speech events (see proto SpeechEvent).
const (
	UserActivityStart       SpeechKind = "user_activity_start"
	UserActivityEnd         SpeechKind = "user_activity_end"
	ModelOutputStart        SpeechKind = "model_output_start"
	ModelGenerationComplete SpeechKind = "model_generation_complete"
	ModelTurnComplete       SpeechKind = "model_turn_complete"
	Interrupted             SpeechKind = "interrupted"
)

// Speech reports one speech event.
type Speech struct {
	Kind SpeechKind
	// UtteranceID is the model server's id for the user utterance a voice-activity
	// start or end belongs to (OpenAI Realtime's item_id), when it gives one; at most
	// 128 characters from [A-Za-z0-9_.:-]. Transcripts naming it are attributed to it.
	UtteranceID string
	// ObservedAt is when the agent observed it (voice activity, `interrupted`, model
	// output); zero: it did not say (see Engine.Step).
	ObservedAt time.Time
	// Arrived, for an event without ObservedAt (the agent sent no age), is when the
	// request carrying it reached the server: it happened then at the latest, though
	// its step may run later, after a slow store read. Zero: at its step's time.
	Arrived time.Time
	// Epoch, when not empty, is the session lifetime the agent knows (from Connect):
	// another one is refused (DataLoss), so a lost session is never started again
	// silently by this event.
	Epoch string
	// EventID, when not empty, is the agent's id for this event (eventids.go): a
	// repeat of a speech event whose id the session keeps changes nothing.
	EventID string
}

func (ev Speech) observedAt() (time.Time, time.Time) { return ev.ObservedAt, ev.Arrived }

func (ev Speech) validate() error {
	if err := checkEventID(ev.EventID); err != nil {
		return err
	}
	if ev.UtteranceID != "" {
		if err := CheckName("utterance_id", ev.UtteranceID); err != nil {
			return err
		}
	}
	switch ev.Kind {
	case UserActivityStart, UserActivityEnd, ModelOutputStart, ModelGenerationComplete, ModelTurnComplete, Interrupted:
		return nil
	}
	return Fieldf(Invalid, "event", "%q is not a speech event", ev.Kind)
}

func (ev Speech) check(st *step) error {
	if err := checkEpoch(st.s, ev.Epoch); err != nil {
		return err
	}
	return notClosed(st.s)
}

func (ev Speech) apply(st *step) error {
	s := st.s
	now := s.Now
	st.out.Changed = true
	switch ev.Kind {
	case UserActivityStart:
		if n := len(s.Utterances); n > 0 && s.Utterances[n-1].End.IsZero() {
			if s.Utterances[n-1].ProviderID == "" {
				s.Utterances[n-1].ProviderID = ev.UtteranceID
			}
			st.utt = s.Utterances[n-1].ID
			return nil // already open
		}
		u := st.openUtterance(now, time.Time{})
		u.ProviderID, st.utt = ev.UtteranceID, u.ID
	case UserActivityEnd:
		if u := st.utteranceNamed(ev.UtteranceID); u != nil && u.End.IsZero() {
			u.End, st.utt = now, u.ID
		} else if n := len(s.Utterances); n > 0 && s.Utterances[n-1].End.IsZero() {
			s.Utterances[n-1].End, st.utt = now, s.Utterances[n-1].ID
		}
	case ModelOutputStart:
		s.ModelSpeaking = true
	case ModelGenerationComplete:
		// Audio may still be playing (the model is idle at turn complete), but the
		// turn's text is final: read its claims now.
		st.checkClaims(s.ModelTurns.End(now, false))
	case ModelTurnComplete:
		s.ModelSpeaking = false
		st.checkClaims(s.ModelTurns.End(now, false))
	case Interrupted:
		s.ModelSpeaking = false
		st.checkClaims(s.ModelTurns.End(now, true))
		if !s.LastNowNoteAt.IsZero() && now.Sub(s.LastNowNoteAt) < InterruptAfterNote {
			return nil // our own note interrupted the model: not barge-in
		}
		st.abandonBlocking()
	}
	return nil
}

// openUtterance starts a user utterance at start (end: zero while voice activity goes
// on) and drops the oldest settled ones past keepUtterances.
func (st *step) openUtterance(start, end time.Time) *Utterance {
	s := st.s
	s.Seq++
	u := &Utterance{ID: s.Seq, Start: start, End: end}
	s.Utterances = append(s.Utterances, u)
	us := s.Utterances
	for len(us) > keepUtterances && us[0].settled() {
		us = us[1:]
	}
	s.Utterances = us
	return u
}

// abandonBlocking marks every unanswered BLOCKING call dead (the server dropped it on
// barge-in: never answer it) and holds the side-effecting jobs left without a live id
// until a re-issue revives them or the abandon wait runs out (timers.go).
func (st *step) abandonBlocking() {
	s := st.s
	for _, c := range s.Calls {
		if c.Outcome != nil || c.Behavior != Blocking {
			continue
		}
		st.kill(c, SkipAbandoned)
		if j := s.job(c.JobID); j != nil {
			st.abandon(j)
		}
	}
}

// abandon holds an undecided side-effecting job left without a live call id (the
// provider dropped them: `interrupted`, its own timeout) until a re-issue revives it
// or the abandon wait runs out (timers.go).
func (st *step) abandon(j *Job) {
	if !j.SideEffect || j.Decision != Undecided || j.Abandoned || j.AbandonLifted || st.hasLiveCall(j) {
		return
	}
	j.Abandoned, j.AbandonedAt = true, st.s.Now
}

// Transcript reports a piece of transcription.
type Transcript struct {
	// Model is set for the model's output transcription (marks it speaking).
	Model bool
	// Text is the piece, at most MaxTextBytes; required for the user.
	Text string
	// Interim marks a partial piece; only final user text decides.
	Interim bool
	// UtteranceID names the user utterance the piece transcribes, when the model
	// server says (OpenAI Realtime's item_id, as reported on its voice-activity start);
	// at most 128 characters from [A-Za-z0-9_.:-]. Empty: the oldest utterance whose
	// voice activity ended and that waits for its transcript, else the open one.
	UtteranceID string
	// ObservedAt is when the agent received the piece; zero: it did not say (see
	// Engine.Step).
	ObservedAt time.Time
	// Arrived, for an event without ObservedAt (the agent sent no age), is when the
	// request carrying it reached the server: it happened then at the latest, though
	// its step may run later, after a slow store read. Zero: at its step's time.
	Arrived time.Time
	// Epoch, when not empty, is the session lifetime the agent knows (from Connect):
	// another one is refused (DataLoss), so a lost session is never started again
	// silently by this event.
	Epoch string
	// EventID, when not empty, is the agent's id for this piece (eventids.go): a
	// repeat of a piece whose id the session keeps changes nothing.
	EventID string
}

func (ev Transcript) observedAt() (time.Time, time.Time) { return ev.ObservedAt, ev.Arrived }

func (ev Transcript) validate() error {
	if err := checkEventID(ev.EventID); err != nil {
		return err
	}
	if ev.UtteranceID != "" {
		if err := CheckName("utterance_id", ev.UtteranceID); err != nil {
			return err
		}
	}
	if len(ev.Text) > MaxTextBytes {
		return Fieldf(Invalid, "text", "%d bytes, at most %d", len(ev.Text), MaxTextBytes)
	}
	if !ev.Model && strings.TrimSpace(ev.Text) == "" {
		return Fieldf(Invalid, "text", "required for a user transcript")
	}
	return nil
}

func (ev Transcript) check(st *step) error {
	if err := checkEpoch(st.s, ev.Epoch); err != nil {
		return err
	}
	return notClosed(st.s)
}

func (ev Transcript) apply(st *step) error {
	s := st.s
	now := s.Now
	st.out.Changed = true
	if ev.Model {
		if strings.TrimSpace(ev.Text) != "" {
			s.ModelSpeaking = true
		}
		if !ev.Interim {
			st.checkClaims(s.ModelTurns.Piece(now, ev.Text))
		}
		return nil
	}
	u := st.utteranceNamed(ev.UtteranceID)
	if u == nil {
		u = st.awaitingTranscript()
	}
	late := false
	if u == nil && !ev.Interim {
		u = st.latePieceOf()
		late = u != nil
	}
	if u == nil {
		u = st.openUtterance(now, now)
		u.ProviderID = ev.UtteranceID
	}
	st.utt = u.ID
	if ev.Interim {
		u.Interim = ev.Text
		return nil
	}
	u.Interim = ""
	joined, alt := joinPiece(u.Text, ev.Text)
	u.Text = speech.KeepTail(joined, MaxUtteranceBytes)
	u.Final = true
	phrases := st.e.Policy.Phrases(s.Language)
	u.Intent, u.Stop = speech.Classify(u.Text, phrases)
	if alt != "" && u.Intent != speech.IntentStop {
		// The other reading of the join: a stop in either is a stop (fail closed).
		if in, stop := speech.Classify(alt, phrases); in == speech.IntentStop {
			u.Text, u.Intent, u.Stop = speech.KeepTail(alt, MaxUtteranceBytes), in, stop
		}
	}
	st.out.Intent = u.Intent
	switch u.Intent {
	case speech.IntentStop:
		st.applyStop(u, late)
	case speech.IntentAmend:
		st.applyAmend(u)
	}
	return nil
}

// awaitingTranscript is the utterance a user transcript that names none belongs to:
// the oldest one whose voice activity ended and that has no final transcript yet
// (Gemini delivers input transcription late, often after the next voice activity
// began: the piece is the older utterance's), else the open one; nil when there is
// neither (the piece is an utterance of its own).
func (st *step) awaitingTranscript() *Utterance {
	for _, u := range st.s.Utterances {
		if !u.End.IsZero() && !u.Final {
			return u
		}
	}
	if n := len(st.s.Utterances); n > 0 && st.s.Utterances[n-1].End.IsZero() {
		return st.s.Utterances[n-1]
	}
	return nil
}

// LatePieceWindow is how long after an utterance's voice activity ended (for one with
// no voice-activity events: after its first piece) a final user transcript piece that
// names no utterance still belongs to it, when it is the latest utterance and already
// has final text. Gemini Live delivers input transcription in pieces ("No," " no,"
// " no."), the first of them up to about 1.3 s after the end of voice activity (the
// seed's measurement); judged one by one, "no." alone is no stop. 5 s covers that delay
// and the spread of the pieces; a new utterance with voice activity reported starts
// its own (ReportSpeech START), so only a transcript-only agent's next sentence within
// 5 s is joined, as one turn.
const LatePieceWindow = 5 * time.Second

// latePieceOf is the utterance a late final piece belongs to (see LatePieceWindow), or
// nil.
func (st *step) latePieceOf() *Utterance {
	n := len(st.s.Utterances)
	if n == 0 {
		return nil
	}
	u := st.s.Utterances[n-1]
	if !u.settled() || st.s.Now.Sub(u.End) > LatePieceWindow {
		return nil
	}
	return u
}

// joinPiece appends a final transcript piece to an utterance's text, and returns the
// other reading when the join is ambiguous (alt; else ""). Providers send pieces of two
// kinds: deltas of one text, with the spaces where words break (Gemini Live: " no,",
// or "Sto" then "p."), to append as they are, and segments, whole words without the
// space between them (a speech-to-text's finals: "Book it for tomorrow" then "at
// three"), to join with a space. Where either side has the space, the piece is
// appended as it is; after a clause's punctuation a space is put in ("Stop." then
// "Don't book it."); otherwise the text is joined with a space (words stay apart: "please"
// + "stop" is never "pleasestop") and alt is the join without one ("Sto" + "p."): the
// caller reads both, and a stop in either counts. Surrounding space is trimmed.
func joinPiece(text, piece string) (joined, alt string) {
	if text == "" {
		return strings.TrimSpace(piece), ""
	}
	if piece == "" {
		return text, ""
	}
	last, first := text[len(text)-1], piece[0]
	switch {
	case isSpace(last) || isSpace(first):
		return strings.TrimSpace(text + piece), ""
	case strings.IndexByte(".,;:!?", last) >= 0:
		return strings.TrimSpace(text + " " + piece), ""
	}
	return strings.TrimSpace(text + " " + piece), strings.TrimSpace(text + piece)
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// utteranceNamed is the latest utterance with the model server's id id, or nil (for
// "" too).
func (st *step) utteranceNamed(id string) *Utterance {
	if id == "" {
		return nil
	}
	for i := len(st.s.Utterances) - 1; i >= 0; i-- {
		if u := st.s.Utterances[i]; u.ProviderID == id {
			return u
		}
	}
	return nil
}

// relevant reports whether utterance u bears on job j: it is one of the job's
// triggering utterances, or it started once the job existed.
func relevant(j *Job, u *Utterance) bool {
	if containsInt(j.Triggers, u.ID) {
		return true
	}
	return !u.Start.Before(j.CreatedAt)
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// applyStop cancels every open run (nothing has executed, so failing closed costs a
// question) and every undecided side-effecting job the utterance bears on, and flags
// committed ones so their note says the user asked to stop.
//
// late is set when the stop was read in a late piece of the utterance (see
// LatePieceWindow): its words came after every job that exists now was created, so each
// is relevant, also one created while the utterance's earlier pieces were said.
func (st *step) applyStop(u *Utterance, late bool) {
	for _, r := range st.s.Runs {
		if r.State == RunOpened {
			st.endRun(nil, r, RunCancelled, stopReason(u), st.e.Policy.lookup(r.Tool))
		}
	}
	for _, j := range st.s.Jobs {
		if !j.SideEffect || !(late || relevant(j, u)) {
			continue
		}
		switch {
		case j.Decision == Undecided || st.withdrawUnanswered(j):
			st.decideJob(j, DecisionCancel, CauseStop, stopReason(u))
		case j.Decision == DecisionCommit:
			st.afterCommit(j, u, func() { j.StopAfterCommit = true })
		}
	}
}

// applyAmend cancels every undecided side-effecting job that existed before the
// amending utterance began (its arguments are no longer what the user wants). A job
// the utterance itself triggered already carries the new details and is left alone; a
// job already committed gets a note offering to change it.
func (st *step) applyAmend(u *Utterance) {
	for _, j := range st.s.Jobs {
		if !j.SideEffect || !j.CreatedAt.Before(u.Start) || !relevant(j, u) {
			continue
		}
		switch {
		case j.Decision == Undecided || st.withdrawUnanswered(j):
			j.AmendText = u.Text
			st.decideJob(j, DecisionCancel, CauseAmend, amendReason(u))
		case j.Decision == DecisionCommit:
			st.afterCommit(j, u, func() { j.AmendAfterCommit, j.AmendText = true, u.Text })
		}
	}
}

// afterCommit records, with flag, a stop or amendment heard about job j after its
// commit was decided: a commit still running carries it into its completion note; one
// already completed gets its note now, once, if the user spoke before it completed.
func (st *step) afterCommit(j *Job, u *Utterance, flag func()) {
	switch {
	case j.Outcome == NotCompleted:
		flag()
	case j.Outcome == Committed && !j.NoteIssued && u.Start.Before(j.CompletedAt):
		flag()
		j.NoteIssued = true
		st.issueNote(j, st.commitNote(j), "")
	}
}
