package speech

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Grouping the model's output transcription into the turns the claim reader reads.

// SplitJoinWindow is how long a model turn cut by `interrupted` waits for the next
// model turn: if the next turn's first transcript piece arrives within this window,
// the two are read as one statement (JoinSplit, TurnJoiner). Third seed, C run 3: "I
// have not " was cut and "booked that slot for you." followed 0.7 s later; read
// alone, the second half claims the opposite of the whole.
const SplitJoinWindow = 1500 * time.Millisecond

// JoinSplit joins the text of a model turn cut by `interrupted` (prev) with the next
// model turn (next) into the statement the model was making: "I have not " +
// "booked that slot for you." -> "I have not booked that slot for you.". The halves
// are trimmed and joined with one space (a cut falls between words: the model
// restarts generation). If the next turn restarts by repeating the cut words, it is
// returned alone. Use it only when the next turn starts within SplitJoinWindow of the
// interruption; TurnJoiner does the bookkeeping.
func JoinSplit(prev, next string) string {
	p := strings.TrimRightFunc(prev, unicode.IsSpace)
	n := strings.TrimLeftFunc(next, unicode.IsSpace)
	switch {
	case p == "":
		return n
	case n == "":
		return p
	case strings.HasPrefix(strings.ToLower(n), strings.ToLower(p)):
		return n
	}
	return p + " " + n
}

// ModelTurn is one model turn as the claim reader should see it.
type ModelTurn struct {
	// Start is when the turn's first piece arrived (the cut turn's, when joined);
	// End is when it ended (turn_complete, interrupted, or the window ran out).
	Start, End time.Time
	// Text is the turn's output transcription, joined with a cut predecessor.
	Text string
	// Joined: Text includes a turn cut by `interrupted` (JoinSplit).
	Joined bool
	// Cut: the turn was cut by `interrupted` and nothing followed within the window.
	// The client may have dropped its audio, so the user may not have heard it.
	Cut bool
}

// TurnJoiner groups the model's output transcription into turns for the claim
// reader, joining a turn cut by `interrupted` with the next one when that starts
// within Window (SplitJoinWindow if zero).
//
// Guidance for the engine: call Piece for each model transcript piece, End(at, true)
// on `interrupted`, End(at, false) on `turn_complete`, and Expire on every other
// event or timer tick. Read each ModelTurn they return with ReadClaims and Verdict
// and compare with the job's state. A cut turn is held, not read, until the next
// turn starts or the window passes: read alone, "booked that slot for you." says
// done where the model said "I have not booked that slot for you.". A caller that
// wants to correct sooner may read Pending() but should act only on clauses that
// the final read keeps. The zero value is ready to use; a TurnJoiner is not safe for
// concurrent use.
type TurnJoiner struct {
	// Window is the join window; zero means SplitJoinWindow.
	Window time.Duration `json:"window,omitempty"`

	// The fields below are the joiner's state, exported only so that a Session
	// holding a TurnJoiner can be stored (JSON); do not set them.
	Open       bool       `json:"open,omitempty"`
	Start      time.Time  `json:"start,omitzero"`
	Text       string     `json:"text,omitempty"`
	Joined     bool       `json:"joined,omitempty"`
	JoinOnNext bool       `json:"join_on_next,omitempty"`
	Held       *ModelTurn `json:"held,omitempty"`
}

func (j *TurnJoiner) window() time.Duration {
	if j.Window > 0 {
		return j.Window
	}
	return SplitJoinWindow
}

// Piece adds a piece of the model's output transcription received at at. Pieces of
// one turn are concatenated as received (they carry their own spaces). It returns a
// held cut turn whose window ran out before this piece, if any.
func (j *TurnJoiner) Piece(at time.Time, text string) []ModelTurn {
	out := j.Expire(at)
	if !j.Open {
		j.Open, j.Start, j.Text, j.Joined, j.JoinOnNext = true, at, "", false, false
		if j.Held != nil {
			j.Start, j.Text, j.Joined, j.JoinOnNext = j.Held.Start, j.Held.Text, true, true
			j.Held = nil
		}
	}
	if j.JoinOnNext {
		if strings.TrimSpace(text) == "" {
			return out
		}
		j.Text, j.JoinOnNext = JoinSplit(j.Text, text), false
	} else {
		j.Text += text
	}
	j.Text = KeepTail(j.Text, MaxTurnBytes)
	return out
}

// MaxTurnBytes bounds the text a TurnJoiner keeps of one model turn (8 KiB, about 1,300
// words: minutes of speech). Past it the turn keeps its tail (KeepTail): the verdict
// is the turn's last explicit claim, so the tail is what the claim check reads. The
// bound keeps a session's stored state, and the cost of reading a turn, small whatever
// the model says (a chaos run grew one session to 4 MiB).
const MaxTurnBytes = 8 << 10

// KeepTail returns s, or, when s is longer than max bytes, its last words that fit in
// max: it is cut at the first white space after len(s)-max, so no word is split (a
// single word longer than that is cut at a UTF-8 boundary), and leading white space is
// dropped. Pure; linear in len(s).
func KeepTail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := len(s) - max
	if i := strings.IndexFunc(s[cut:], unicode.IsSpace); i >= 0 {
		return strings.TrimLeftFunc(s[cut+i:], unicode.IsSpace)
	}
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return s[cut:]
}

// End ends the current turn at at: interrupted for an `interrupted` event (the turn
// is held for joining), false for `turn_complete` (the turn is returned). An End with
// no open turn (the turn_complete that follows an interrupted) only expires.
func (j *TurnJoiner) End(at time.Time, interrupted bool) []ModelTurn {
	out := j.Expire(at)
	if !j.Open {
		return out
	}
	j.Open = false
	if strings.TrimSpace(j.Text) == "" {
		return out
	}
	t := ModelTurn{Start: j.Start, End: at, Text: j.Text, Joined: j.Joined}
	if interrupted {
		t.Cut = true
		j.Held = &t
		return out
	}
	return append(out, t)
}

// Expire returns the held cut turn if its window has passed at now.
func (j *TurnJoiner) Expire(now time.Time) []ModelTurn {
	if j.Held == nil || now.Sub(j.Held.End) <= j.window() {
		return nil
	}
	t := *j.Held
	j.Held = nil
	return []ModelTurn{t}
}

// Flush returns whatever is left at session end: a held cut turn and the open turn
// (ended at at as if by turn_complete).
func (j *TurnJoiner) Flush(at time.Time) []ModelTurn {
	var out []ModelTurn
	if j.Held != nil {
		out = append(out, *j.Held)
		j.Held = nil
	}
	if j.Open {
		j.Open = false
		if strings.TrimSpace(j.Text) != "" {
			out = append(out, ModelTurn{Start: j.Start, End: at, Text: j.Text, Joined: j.Joined})
		}
	}
	return out
}

// Pending returns the text the next returned turn would start with: the held cut
// turn or the open turn so far.
func (j *TurnJoiner) Pending() string {
	if j.Open {
		return j.Text
	}
	if j.Held != nil {
		return j.Held.Text
	}
	return ""
}
