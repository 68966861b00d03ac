package arbiter

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// Utterances: what the user and the model say. Voice activity opens and ends user
// utterances (an open one holds due commits: timers.go); a final user transcript is
// read for intent (package speech), for each job it bears on in that job's context
// (the model's last question, the tool's words, the call's own arguments, the
// arbiter's question): stop cancels the undecided jobs, amend cancels the jobs from
// before it, unclear asks (questions.go); words that repeat what the model just said
// are its echo, not the user's; `interrupted` abandons unanswered BLOCKING calls; the
// model's output transcription goes to the claim check (claimcheck.go) and is kept as
// what the model said last (ModelSaid).

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
	if err := checkEpochShape(ev.Epoch); err != nil {
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
		st.modelEnded()
		st.checkClaims(s.ModelTurns.End(now, false))
	case ModelTurnComplete:
		s.ModelSpeaking = false
		st.modelEnded()
		st.checkClaims(s.ModelTurns.End(now, false))
	case Interrupted:
		s.ModelSpeaking = false
		st.modelEnded()
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
	// Reading, when not nil, is the agent's own reading of the utterance as of this
	// final user piece (its NLU or LLM; issue 25): fused with the built-in reading as
	// Policy.AgentIntent says (speech.Fuse). Invalid naming reading.intent,
	// reading.confidence or reading.source when malformed, and naming reading on an
	// interim or model piece (only a final user transcript is read).
	Reading *speech.AgentReading
}

func (ev Transcript) observedAt() (time.Time, time.Time) { return ev.ObservedAt, ev.Arrived }

// checkReading checks an agent's reading of a transcript piece (Transcript.Reading).
func (ev Transcript) checkReading() error {
	r := ev.Reading
	switch {
	case r == nil:
		return nil
	case ev.Model || ev.Interim:
		return Fieldf(Invalid, "reading", "only a final user transcript is read: leave it out on an interim or model piece")
	case !speech.AgentReadingIntent(r.Intent):
		return Fieldf(Invalid, "reading.intent", "%q is not stop, go_ahead, amend, other or unclear", Clip(string(r.Intent)))
	case !(r.Confidence >= 0 && r.Confidence <= 1):
		return Fieldf(Invalid, "reading.confidence", "%v is not between 0 and 1", r.Confidence)
	case r.Source != "" && !validName(r.Source):
		return Fieldf(Invalid, "reading.source", "%q must be 1-128 characters from [A-Za-z0-9_.:-]", Clip(r.Source))
	}
	return nil
}

func (ev Transcript) validate() error {
	if err := checkEventID(ev.EventID); err != nil {
		return err
	}
	if err := checkEpochShape(ev.Epoch); err != nil {
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
	if err := checkText("text", ev.Text, true); err != nil {
		return err
	}
	if err := ev.checkReading(); err != nil {
		return err
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
			st.modelPiece(ev.Text)
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
	if ev.Reading != nil {
		u.Reading = ev.Reading // the agent's reading as of this piece (fuse)
	}
	st.hear(u, alt, late)
	return nil
}

// EchoWindow is how long after the model last said something (a piece of its output
// transcription, or the end of its turn) a user transcript that repeats its words is
// read as its echo: the model's own voice, played on a speakerphone without echo
// cancellation, coming back as input transcription (issue 25, pattern 2). The model's
// transcription arrives as it generates, ahead of its audio, and the echo's transcript
// comes about 1.3 s after the audio that made it: 10 s covers a turn's audio playing on
// after its text and the transcription's delay.
const EchoWindow = 10 * time.Second

// MaxModelSaidBytes bounds the text of what the model said last (ModelSaid): 512 bytes,
// about 85 words, 25 s of speech: its last question, and more than EchoWindow of its
// words (what can still come back as echo), while the session record stays small.
const MaxModelSaidBytes = 512

// modelPiece keeps a final piece of the model's output transcription in ModelSaid: it
// continues the turn the model is in, or one that ended within EchoWindow; otherwise
// it starts ModelSaid again.
func (st *step) modelPiece(text string) {
	m := &st.s.ModelSaid
	newTurn := !st.s.ModelTurns.Open
	if newTurn && st.s.Now.Sub(m.At) > EchoWindow {
		m.Text = ""
	}
	if newTurn && m.Text != "" && text != "" && !isSpace(m.Text[len(m.Text)-1]) && !isSpace(text[0]) {
		m.Text += " "
	}
	m.Text = speech.KeepTail(m.Text+text, MaxModelSaidBytes)
	m.At = st.s.Now
}

// modelEnded records that the model's turn (or its generation) ended now: the echo
// window runs from here.
func (st *step) modelEnded() {
	if st.s.ModelSaid.Text != "" {
		st.s.ModelSaid.At = st.s.Now
	}
}

// EchoTail is how long after the model's last output (a transcription piece, the end
// of its turn) an utterance that begins may still be its echo: the client plays the
// turn's last audio after the turn's end reaches it. A reply begins after the user has
// heard the model out, so one that repeats the model's words ("Cancel the booking."
// after "Do you want me to cancel the booking?") is the user's.
const EchoTail = 500 * time.Millisecond

// speechContext is what user utterance u is read against now: what the model said last
// (the question a reply answers); when u may be its echo, the same words as the echo
// (u began while the model was speaking, or within EchoTail of its last output, and
// that output is within EchoWindow: echo is the model's own audio, so it overlaps the
// model's speech, where a reply follows it); and the request's own words.
func (st *step) speechContext(u *Utterance) speech.Context {
	m := st.s.ModelSaid
	ctx := speech.Context{Said: m.Text}
	overlaps := st.s.ModelSpeaking || !u.Start.After(m.At.Add(EchoTail))
	if m.Text != "" && overlaps && st.s.Now.Sub(m.At) <= EchoWindow {
		ctx.Echo = m.Text
	}
	// The argument texts of every call u triggered (issue 25, pattern 4: "two tickets
	// for Stop Making Sense" names the show: it stops nothing, neither that booking nor
	// another).
	for _, k := range st.s.Jobs {
		if containsInt(k.Triggers, u.ID) {
			ctx.Carried = argTexts(k.Args, ctx.Carried)
		}
	}
	return ctx
}

// hear reads utterance u's final text (alt: the other reading of a join of its pieces,
// joinPiece) and applies what it says to the open runs and to every job it bears on.
// Each job reads it in its own context (intentOf): the model's last question, the
// job's tool's words, the arbiter's question about it, and, for the utterance that
// triggered its call, the call's own arguments. u.Intent is the strongest of the
// jobs' readings (stop, amend, unclear, go-ahead), else the reading with no job.
// late is set when the text came in a late piece (see LatePieceWindow).
func (st *step) hear(u *Utterance, alt string, late bool) {
	s := st.s
	phrases := st.e.Policy.Phrases(s.Language)
	ctx := st.speechContext(u)
	r := speech.Read(u.Text, phrases, ctx)
	if alt != "" && r.Intent != speech.IntentStop {
		// The other reading of the join: a stop in either is a stop (fail closed).
		if ra := speech.Read(alt, phrases, ctx); ra.Intent == speech.IntentStop {
			u.Text, r = speech.KeepTail(alt, MaxUtteranceBytes), ra
		}
	}
	u.Echo, u.Intent, u.Stop = r.Echo(), r.Intent, r.Phrase
	u.ReadBy = ""
	st.echoed = r.Echoed
	if u.Echo {
		st.out.Intent = u.Intent
		return // the model's own words: neither a hold nor a stop, whatever the agent read
	}
	read := false
	if slices.ContainsFunc(s.Runs, func(run *Run) bool { return run.State == RunOpened }) {
		// A run waits for its own answer (the confirmation call): only a stop by the
		// words alone cancels it, not a reply to its question ("No, not right now."
		// is the user's answer, which the model gives with confirmed false).
		if r := speech.Read(u.Text, phrases, speech.Context{Echo: ctx.Echo, Carried: ctx.Carried}); r.Intent == speech.IntentStop {
			u.Intent, u.Stop, read = r.Intent, r.Phrase, true
			for _, run := range s.Runs {
				if run.State == RunOpened {
					st.endRun(nil, run, RunCancelled, stopReason(u), st.e.Policy.lookup(run.Tool))
				}
			}
		}
	}
	for _, j := range s.Jobs {
		if !st.mayHear(j, u, late) {
			continue
		}
		in, phrase := st.intentOf(u, j, ctx)
		in = st.fuse(u, in) // the agent's own reading, as the policy says
		if !read || intentRank[in] > intentRank[u.Intent] {
			u.Intent, u.Stop, read = in, phrase, true
		}
		switch in {
		case speech.IntentStop:
			st.stopJob(j, u)
		case speech.IntentAmend:
			st.amendJob(j, u)
		case speech.IntentUnclear:
			st.unclear(j, u)
		case speech.IntentGoAhead:
			st.answered(j, u)
		}
	}
	if !read {
		u.Intent = st.fuse(u, u.Intent) // no job bears on it: what it says, for the answer
	}
	st.out.Intent = u.Intent
}

// intentRank orders the intents by how much they do to a job: a stop over an
// amendment over an unclear reply over a go-ahead over the rest.
var intentRank = map[speech.Intent]int{speech.IntentStop: 5, speech.IntentAmend: 4, speech.IntentUnclear: 3,
	speech.IntentGoAhead: 2, speech.IntentOther: 1}

// mayHear reports whether utterance u can change job j: a side-effecting job it bears
// on (relevant, or any when its words came in a late piece) that is undecided, or whose
// commit is still running, or completed after u began with no note given yet
// (afterCommit).
func (st *step) mayHear(j *Job, u *Utterance, late bool) bool {
	if !j.SideEffect || !(late || relevant(j, u)) {
		return false
	}
	switch {
	case j.Decision == Undecided:
		return true
	case j.Decision == DecisionCommit:
		return j.Outcome == NotCompleted || (j.Outcome == Committed && !j.NoteIssued && u.Start.Before(j.CompletedAt))
	}
	return false
}

// intentOf reads utterance u's text for job j in ctx (speechContext: what the model
// said, the request's own words) with j's context added: its tool's vocabulary, and
// whether the arbiter's question about j is open and u came after it. What the model
// said is the question u answers only if it said it once j existed, or u is j's
// request: a question from before j is about something else ("Shall I book it?" of an
// earlier booking does not make a "No." refuse this one).
func (st *step) intentOf(u *Utterance, j *Job, ctx speech.Context) (speech.Intent, string) {
	ctx.Action = st.e.Policy.lookup(j.Tool).tool.Vocabulary()
	ctx.Asked = j.QuestionOpen && u.ID > j.QuestionBy
	if !containsInt(j.Triggers, u.ID) && st.s.ModelSaid.At.Before(j.CreatedAt) {
		ctx.Said = ""
	}
	r := speech.Read(u.Text, st.e.Policy.Phrases(st.s.Language), ctx)
	return r.Intent, r.Phrase
}

// argTexts appends the string values in args (nested objects and lists too) to out.
func argTexts(v any, out []string) []string {
	switch v := v.(type) {
	case string:
		out = append(out, v)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = argTexts(v[k], out)
		}
	case []any:
		for _, x := range v {
			out = argTexts(x, out)
		}
	}
	return out
}

// fuse returns the intent of utterance u for a job from the built-in reading for it
// (builtin) and the agent's reading of u (Utterance.Reading: the latest one a final
// piece carried), as Policy.AgentIntent says (speech.Fuse; issue 25, item 8), and
// records in u.ReadBy which reader decided when the agent's did, for the reason of
// what the caller does next ("" when the built-in reading stands).
func (st *step) fuse(u *Utterance, builtin speech.Intent) speech.Intent {
	in := speech.Fuse(builtin, u.Reading, st.e.Policy.AgentIntent)
	u.ReadBy = ""
	if in != builtin {
		u.ReadBy = cmp.Or(u.Reading.Source, "agent")
	}
	return in
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
// triggering utterances, or it started once the job existed; never when it was the
// model's echo.
func relevant(j *Job, u *Utterance) bool {
	if u.Echo {
		return false
	}
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

// stopJob applies a stop heard in utterance u to job j (one the utterance bears on:
// mayHear): an undecided job is cancelled (nothing has executed, so failing closed costs
// a question); a committed one is flagged so its note says the user asked to stop.
func (st *step) stopJob(j *Job, u *Utterance) {
	switch {
	case j.Decision == Undecided || st.withdrawUnanswered(j):
		st.decideJob(j, DecisionCancel, CauseStop, stopReason(u))
	case j.Decision == DecisionCommit:
		st.afterCommit(j, u, func() { j.StopAfterCommit = true })
	}
}

// amendJob applies an amendment heard in utterance u to job j when j existed before
// the amending utterance began (its arguments are no longer what the user wants): an
// undecided job is cancelled, a committed one gets a note offering to change it. A job
// the utterance itself triggered already carries the new details and is left alone.
func (st *step) amendJob(j *Job, u *Utterance) {
	if !j.CreatedAt.Before(u.Start) || !relevant(j, u) {
		return
	}
	switch {
	case j.Decision == Undecided || st.withdrawUnanswered(j):
		j.AmendText = u.Text
		st.decideJob(j, DecisionCancel, CauseAmend, amendReason(u))
	case j.Decision == DecisionCommit:
		st.afterCommit(j, u, func() { j.AmendAfterCommit, j.AmendText = true, u.Text })
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
